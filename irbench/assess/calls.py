"""The assessor's JSON calls over the desk, and how a call's body is read: the CSRF token
first, then at most :data:`MAX_BODY` bytes, then a JSON object. Whatever a page never sends is
a named :class:`~irbench.assess.failures.BadRequest` (a missing field, one of the wrong type, a
label the screen does not take), raised where it is found; nothing else is turned into one,
so a bug stays a bug (a 500 and a line in the log)."""

from __future__ import annotations

import asyncio
import json

from starlette.requests import Request

from ..store import Assessor
from .contexts import ItemAnswer
from .desk import Desk
from .failures import MALFORMED, BadRequest, CsrfFailed, TooLarge
from .screens import Screen
from .security import Gate

MAX_BODY = 16 * 1024
MAX_SECONDS = 86400.0  # a judgment's time is kept within [0, a day]


class Calls:
    """A screen's calls: each takes (assessor, JSON body) and answers an
    :class:`~irbench.assess.contexts.ItemAnswer`."""

    def __init__(self, desk: Desk, screen: Screen, levels: tuple[int, ...]):
        self.desk, self.screen, self.levels = desk, screen, levels

    def next_item(self, who: Assessor, body: dict) -> ItemAnswer:
        return ItemAnswer(item=self.desk.next_for(who), progress=self.desk.progress(who))

    async def judge(self, who: Assessor, body: dict) -> ItemAnswer:
        label = self.screen.parse_label(body, self.levels)
        seconds = _seconds(body)
        query_id, doc_id = _ids(body)
        ticket = body.get("ticket", "")
        if not isinstance(ticket, str):
            raise BadRequest(MALFORMED)
        await asyncio.wrap_future(self.desk.record(who, query_id, doc_id, label, seconds,
                                                   ticket[:128]))
        return self.next_item(who, body)  # answered once committed

    def undo(self, who: Assessor, body: dict) -> ItemAnswer:
        item = self.desk.undo(who)
        if item is None:
            return self.next_item(who, body)
        return ItemAnswer(item=item, progress=self.desk.progress(who))

    def skip(self, who: Assessor, body: dict) -> ItemAnswer:
        query_id, doc_id = _ids(body)
        return ItemAnswer(item=self.desk.skip(who, query_id, doc_id),
                          progress=self.desk.progress(who))


def _ids(body: dict) -> tuple[str, str]:
    """(query_id, doc_id) of a body, as text (the desk looks them up, and refuses ids that
    are not the pool's)."""
    if "query_id" not in body or "doc_id" not in body:
        raise BadRequest(MALFORMED)
    return str(body["query_id"]), str(body["doc_id"])


def _seconds(body: dict) -> float:
    """The time the assessor took, within [0, a day] (0 when not sent)."""
    try:
        seconds = float(body.get("seconds") or 0.0)
    except (TypeError, ValueError, OverflowError):  # a list, a word, a 400-digit integer
        raise BadRequest(MALFORMED) from None
    return max(0.0, min(seconds, MAX_SECONDS))


async def json_body(gate: Gate, request: Request) -> dict:
    """The body of a call that changes something: CsrfFailed, TooLarge or BadRequest unless
    it carries the page's CSRF token and is a JSON object within :data:`MAX_BODY` bytes."""
    if not gate.allows(request):
        raise CsrfFailed("CSRF check failed")
    raw = await _body(request)
    if raw is None:
        raise TooLarge("request too large")
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, RecursionError):  # json's own errors (bytes, depth): not JSON
        raise BadRequest("not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("a JSON object, please")
    return body


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
