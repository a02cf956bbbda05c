"""The assessment web app (Starlette, served by uvicorn): the assessor's page, the organiser's
page and their JSON calls, over a :class:`~irbench.assess.desk.Desk`.

Security, as the pages are reachable by whoever has the address:

* every page and call needs a token (``irbench assess --add-assessor``); the link
  ``/?token=...`` sets it as an HttpOnly, SameSite=Strict cookie named by the port and
  refreshes to ``/`` (the token leaves the address bar); a link opened from another site, or
  for someone else than the browser is signed in as, asks for a click first; the store keeps
  only the token's sha256;
* every call that changes anything (all are POST, ``/api/next`` too: it holds a document and
  may advance the strategy) needs the page's CSRF token in the ``X-CSRF-Token`` header (an
  HMAC of the assessor's token under a secret made at start) and, when the browser sends one,
  an ``Origin`` that is this server;
* an assessor sees and judges only the topics assigned; the organiser's page and the qrels
  export are the organiser's;
* document text and topic fields travel as JSON and are put on the page with ``textContent``
  only (a hostile document cannot run script); the pages' Content-Security-Policy allows only
  the page's own script, by nonce;
* request bodies over :data:`MAX_BODY` bytes are refused; no part of a request names a file.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from ..errors import IrbenchError
from ..store import Assessor
from .desk import Desk, Item
from .writer import WriteFailed

COOKIE = "irbench_assess"
MAX_BODY = 16 * 1024
TEMPLATES = Path(__file__).parent / "templates"


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Gate:
    """Who a request is (by its token) and whether its CSRF token is right. The cookie is
    named by the server's port: cookies ignore ports, and two servers (two pools) on one
    machine must not overwrite each other's."""

    def __init__(self, lookup: Callable[[str], Assessor | None], port: int = 0):
        self.lookup = lookup
        self.cookie = f"{COOKIE}_{port}"
        self.secret = secrets.token_bytes(32)

    def token(self, request: Request) -> str:
        return request.cookies.get(self.cookie, "")

    def who(self, request: Request) -> Assessor | None:
        token = self.token(request)
        return self.lookup(token_sha256(token)) if token else None

    def csrf(self, request: Request) -> str:
        return hmac.new(self.secret, self.token(request).encode(), hashlib.sha256).hexdigest()

    def allows(self, request: Request) -> bool:
        sent = request.headers.get("x-csrf-token", "")
        origin = request.headers.get("origin")
        same = origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"
        return same and hmac.compare_digest(sent, self.csrf(request))


def item_json(item: Item | None, progress: dict) -> dict:
    if item is None:
        return {"item": None, "progress": progress}
    return {"item": {"query_id": item.query_id, "doc_id": item.doc_id, "topic": item.topic,
                     "title": item.title, "text": item.text, "suggestion": item.suggestion,
                     "again": item.again, "previous": item.previous,
                     "skipped": item.skipped}, "progress": progress}


def build_app(desk: Desk, gate: Gate, *, title: str, levels: tuple[int, ...],
              preselect: bool, organiser_view: Callable[[], dict],
              export: Callable[[], str]) -> Starlette:
    """The Starlette app (see the module docstring)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)

    def page(template: str, request: Request, **values: Any) -> HTMLResponse:
        nonce = secrets.token_urlsafe(16)
        body = env.get_template(template).render(nonce=nonce, csrf=gate.csrf(request),
                                             title=title, **values)
        return HTMLResponse(body, headers=_headers(nonce))

    async def home(request: Request):
        token = request.query_params.get("token")
        if token is not None:
            return sign_in(request, token)
        who = gate.who(request)
        if who is None:
            return _text("open the personal link irbench assess printed for you", 401)
        if who.role == "organiser":
            return page("organiser.html", request, who=who.name,
                        view=await run_in_threadpool(organiser_view))
        return page("assess.html", request, who=who.name, levels=levels,
                    config={"levels": list(levels), "preselect": preselect})

    def sign_in(request: Request, token: str):
        """A personal link: the token goes into the cookie (and out of the address bar) when
        the link was opened here (typed, bookmarked, or clicked on this server's page) and
        does not switch a browser signed in as someone else without asking; opened from
        another site, the page asks for one click first (no link can sign a browser in, or
        out, behind its back)."""
        found = gate.lookup(token_sha256(token)) if token else None
        if found is None:
            return _text("this link is not valid (any more): ask for a new one", 401)
        here = request.headers.get("sec-fetch-site", "none") in ("none", "same-origin")
        current = gate.who(request)
        if here and (current is None or current.name == found.name
                     or request.query_params.get("switch") == "1"):
            response = page("signin.html", request, refresh=True, name=found.name,
                            current="", token="")
            response.set_cookie(gate.cookie, token, httponly=True, samesite="strict")
            return response
        return page("signin.html", request, refresh=False, name=found.name,
                    current=current.name if current and here else "", token=token)

    calls = Calls(desk, levels)

    def progress(who: Assessor, body: dict) -> dict:
        return organiser_view()

    async def qrels(request: Request):
        who = gate.who(request)
        if who is None or who.role != "organiser":
            return _text("organiser only", 403)
        return _text(await run_in_threadpool(export), 200)

    return Starlette(routes=[
        Route("/", home),
        Route("/api/next", guarded(gate, calls.next_item, post=True), methods=["POST"]),
        Route("/api/judge", guarded(gate, calls.judge, post=True), methods=["POST"]),
        Route("/api/undo", guarded(gate, calls.undo, post=True), methods=["POST"]),
        Route("/api/skip", guarded(gate, calls.skip, post=True), methods=["POST"]),
        Route("/api/progress", guarded(gate, progress, post=False, organiser=True)),
        Route("/qrels", qrels),
    ])


class Calls:
    """The assessor's JSON calls: each takes (assessor, JSON body), returns JSON."""

    def __init__(self, desk: Desk, levels: tuple[int, ...]):
        self.desk, self.levels = desk, levels

    def next_item(self, who: Assessor, body: dict) -> dict:
        return item_json(self.desk.next_for(who), self.desk.progress(who))

    async def judge(self, who: Assessor, body: dict) -> dict:
        relevance = body["relevance"]
        if type(relevance) is not int or relevance not in self.levels:  # not a bool either
            raise ValueError(f"relevance must be one of {list(self.levels)}")
        seconds = float(body.get("seconds") or 0.0)
        await asyncio.wrap_future(self.desk.record(
            who, str(body["query_id"]), str(body["doc_id"]), relevance,
            max(0.0, min(seconds, 86400.0))))  # answered once committed
        return self.next_item(who, body)

    def undo(self, who: Assessor, body: dict) -> dict:
        item = self.desk.undo(who)
        return item_json(item, self.desk.progress(who)) if item else self.next_item(who, body)

    def skip(self, who: Assessor, body: dict) -> dict:
        return item_json(self.desk.skip(who, str(body["query_id"]), str(body["doc_id"])),
                         self.desk.progress(who))


def guarded(gate: Gate, handler: Callable[[Assessor, dict], Any], *, post: bool,
            organiser: bool = False) -> Callable:
    """An endpoint calling ``handler`` for a request with a valid token of the right role
    (and, for ``post``, the CSRF token and a body within MAX_BODY that is JSON); a bad
    request is a 4xx with a JSON error. The assessor's calls run on the event loop (the
    desk's work is in memory and short; a judgment is awaited until committed, other
    requests going on meanwhile); the organiser's, which read the store, in a thread."""
    async def endpoint(request: Request):
        who = gate.who(request)
        if who is None:
            return _error("no valid token", 401)
        if (who.role == "organiser") != organiser:
            return _error("not yours", 403)
        body: dict = {}
        if post:
            if not gate.allows(request):
                return _error("CSRF check failed", 403)
            raw = await _body(request)
            if raw is None:
                return _error("request too large", 413)
            try:
                body = json.loads(raw or b"{}")
            except (ValueError, RecursionError):
                return _error("not JSON", 400)
            if not isinstance(body, dict):
                return _error("a JSON object, please", 400)
        try:
            if inspect.iscoroutinefunction(handler):
                answer = await handler(who, body)
            elif organiser:  # reads the store: off the event loop
                answer = await run_in_threadpool(handler, who, body)
            else:  # the desk's work in memory: short
                answer = handler(who, body)
            return JSONResponse(answer, headers=_headers(""))
        except WriteFailed as exc:  # the disk: nothing more can be saved
            return _error(str(exc)[:300], 503)
        except IrbenchError as exc:  # a judgment the pool refuses: the message says why
            return _error(str(exc)[:300], 400)
        except (KeyError, TypeError, ValueError, UnicodeError):
            return _error("malformed request (query_id, doc_id, relevance)", 400)
    return endpoint


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status, headers=_headers(""))


def _text(message: str, status: int) -> PlainTextResponse:
    return PlainTextResponse(message, status, headers=_headers(""))


async def _body(request: Request) -> bytes | None:
    """The body, or None when it is over MAX_BODY (read no further than that)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        return None
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return None
    return raw


def _headers(nonce: str) -> dict[str, str]:
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    return {"Content-Security-Policy": f"default-src 'none'; script-src {script}; "
                                       f"style-src {script}; connect-src 'self'; "
                                       "img-src 'none'; form-action 'none'; "
                                       "frame-ancestors 'none'; base-uri 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
