"""The organiser's nugget list editor (``nugget_edit.html`` at ``/nuggets/edit/``, served by
``irbench assess CONFIG --pool NAME --nuggets JUDGE``): a topic's nuggets as the store holds
them (the model judge JUDGE's, with every edit since), to change (text, vital or okay), merge,
split, add and delete. Organisers only (add a lead assessor with ``--add-assessor NAME
--organiser``).

Every edit is one call (``POST /nuggets/edit/api/edit``, the CSRF token, a JSON body naming
the operation, :data:`EDITS`) and one transaction of the store's writers
(:meth:`irbench.store.Store.change_nugget` ...), made under the desk's lock and committed
before the answer; the store keeps every version with who made it and what it came from. An
edit naming a nugget someone else changed meanwhile is refused (the page says so and shows
the list as it stands). The list the assessors assign from is the one at the server's start
(:mod:`.nuggets`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from ..report.fields import documented as _f
from ..store import Assessor, Store
from .app import CALL, ORGANISER_ONLY, Guarded, call, render
from .contexts import PAGES
from .desk import Desk
from .failures import MALFORMED, BadRequest
from .screens import TEMPLATES
from .security import Gate, nonce_of

EDIT_PATH = "/nuggets/edit"
MAX_PARTS = 50  # of one split


@dataclass(frozen=True, kw_only=True)
class EditNugget:
    """A live nugget on the editor."""

    nugget_id: str = _f("its id in the store (a new one after every edit)")
    text: str = _f("its text")
    importance: str = _f("'vital' or 'okay'")
    origin: str = _f("'model' or 'person': who made this version")
    made_by: str = _f("the model judge's or the person's name")


@dataclass(frozen=True, kw_only=True)
class NuggetListView:
    """What the editor's calls answer, as JSON: one topic's list as it stands."""

    query_id: str = _f("the topic's id")
    topic: dict[str, str] = _f("the topic's statement: query_id, title, description, "
                               "narrative")
    nuggets: tuple[EditNugget, ...] = _f("its live nuggets, in the list's order")
    done: str = _f("what the call did, in a sentence ('' for a read)")


@dataclass(frozen=True, kw_only=True)
class NuggetEditPage:
    """``nugget_edit.html``: the editor (the lists arrive by the calls)."""

    title: str = _f("the campaign's name")
    nonce: str = _f("the CSP nonce of the page's script and style")
    csrf: str = _f("the CSRF token the page's calls send")
    who: str = _f("the organiser's name")
    judge: str = _f("the list edited: the nugget judge that made it")
    config: dict[str, Any] = _f("the page script's settings as JSON: api (the calls' "
                                "address), topics (the topic ids, in the topics file's order)")


PAGES["nugget_edit.html"] = NuggetEditPage


def _text(body: dict, name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise BadRequest(MALFORMED)
    return value


def _ids(body: dict) -> list[str]:
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise BadRequest(MALFORMED)
    return ids


def _parts(body: dict) -> list[tuple[str, str]]:
    parts = body.get("parts")
    if not isinstance(parts, list) or not 2 <= len(parts) <= MAX_PARTS:
        raise BadRequest(MALFORMED)
    out = []
    for part in parts:
        if not isinstance(part, dict):
            raise BadRequest(MALFORMED)
        out.append((_text(part, "text"), _text(part, "importance")))
    return out


def _change(store: Store, judge: str, by: str, body: dict) -> str:
    text, importance = body.get("text"), body.get("importance")
    if (text is not None and not isinstance(text, str)) or \
            (importance is not None and not isinstance(importance, str)):
        raise BadRequest(MALFORMED)
    (nid,) = _ids(body)[:1]
    store.change_nugget(judge, nid, by, text=text, importance=importance)
    return "changed"


def _add(store: Store, judge: str, by: str, body: dict) -> str:
    store.add_nugget(judge, _text(body, "query_id"), _text(body, "text"),
                     _text(body, "importance"), by)
    return "added"


def _merge(store: Store, judge: str, by: str, body: dict) -> str:
    ids = _ids(body)
    store.merge_nuggets(judge, ids, _text(body, "text"), _text(body, "importance"), by)
    return f"{len(ids)} nuggets merged into one"


def _split(store: Store, judge: str, by: str, body: dict) -> str:
    parts = _parts(body)
    store.split_nugget(judge, _ids(body)[0], parts, by)
    return f"split into {len(parts)}"


def _delete(store: Store, judge: str, by: str, body: dict) -> str:
    store.delete_nugget(judge, _ids(body)[0], by)
    return "deleted"


#: The edits a call may ask (``body["op"]``): each makes one and says what it did.
EDITS: dict[str, Callable[[Store, str, str, dict], str]] = {
    "change": _change, "add": _add, "merge": _merge, "split": _split, "delete": _delete}


def edit_routes(config: Any, desk: Desk, store: Store, judge: str, topics: Any
                ) -> Callable[[Gate], list[BaseRoute]]:
    """The editor's page and calls (organisers only), for the app's ``gate``."""
    ids = [str(q) for q in topics.query_id]

    def view(query_id: str, done: str = "") -> NuggetListView:
        if query_id not in ids:
            raise BadRequest(MALFORMED)
        with desk.lock:
            live = store.live_nuggets(judge).get(query_id, [])
        return NuggetListView(
            query_id=query_id, topic=topics.statement(query_id), done=done,
            nuggets=tuple(EditNugget(nugget_id=n.nugget_id, text=n.text,
                                     importance=n.importance, origin=n.origin,
                                     made_by=n.made_by) for n in live))

    def read(who: Assessor, body: dict) -> NuggetListView:
        return view(_text(body, "query_id"))

    def edit(who: Assessor, body: dict) -> NuggetListView:
        query_id, op = _text(body, "query_id"), body.get("op")
        if op not in EDITS or query_id not in ids:
            raise BadRequest(MALFORMED)
        with desk.lock:  # one connection: every use under the desk's lock
            done = EDITS[op](store, judge, who.name, body)
        return view(query_id, done)

    def routes(gate: Gate) -> list[BaseRoute]:
        @requires("organiser")
        async def page(request: Request) -> Response:
            who: Assessor = request.user.assessor
            return render(TEMPLATES, "nugget_edit.html", NuggetEditPage(
                title=config.name, nonce=nonce_of(request), csrf=gate.csrf(request),
                who=who.name, judge=judge,
                config={"api": EDIT_PATH + "/api/", "topics": ids}))

        return [Guarded(EDIT_PATH + "/", page, refusal=ORGANISER_ONLY),
                Guarded(EDIT_PATH + "/api/list", call(gate, read, role="organiser", post=True),
                        refusal=CALL, methods=["POST"]),
                Guarded(EDIT_PATH + "/api/edit", call(gate, edit, role="organiser", post=True),
                        refusal=CALL, methods=["POST"])]
    return routes
