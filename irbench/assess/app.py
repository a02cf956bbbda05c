"""The assessment web app (Starlette, served by uvicorn): the assessor's screens
(:mod:`.screens`), the organiser's page and their JSON calls, over a
:class:`~irbench.assess.desk.Desk`.

Security, as the pages are reachable by whoever has the address:

* every page and call needs a token (``irbench assess --add-assessor``); the link
  ``/?token=...`` sets it as an HttpOnly, SameSite=Strict cookie named by the port and
  refreshes to ``/`` (the token leaves the address bar); a link opened from another site, or
  for someone else than the browser is signed in as, asks for a click first; the store keeps
  only the token's sha256. An authentication backend resolves the cookie to the assessor,
  their role the request's scope (:mod:`.security`); each route says the role it needs
  (``requires``), and what a request without it is answered (:class:`Refusal`);
* every call that changes anything (all are POST, ``/api/next`` too: it holds a document and
  may advance the strategy) needs the page's CSRF token in the ``X-CSRF-Token`` header (an
  HMAC of the assessor's token under the pool's secret, kept in the store: a page open
  across a restart keeps working) and, when the browser sends one, an ``Origin`` that is
  this server;
* people are added, revoked and given topics while the server runs (the organiser's calls,
  :mod:`.roster`): a revoked token is refused from the next request on;
* an assessor sees and judges only the topics assigned; the organiser's page and the qrels
  export are the organiser's;
* document text and topic fields travel as JSON and are put on the page with ``textContent``
  only (a hostile document cannot run script); every response carries the security headers
  (one middleware), a page's Content-Security-Policy allowing only its own script, by nonce;
* request bodies over :data:`~irbench.assess.calls.MAX_BODY` bytes are refused; no part of a
  request names a file.

What is refused is a named exception (:mod:`.failures`) answered by a registered handler;
anything else raised is a bug: a 500 and a line in the server's log.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.authentication import requires
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from ..errors import IrbenchError
from ..escaping import terminal
from ..store import Assessor
from .calls import MAX_BODY, Calls, json_body
from .contexts import OrganiserPage, OrganiserView, PeopleView, SignInPage
from .desk import Desk
from .failures import BadRequest
from .roster import CHANGES, Roster
from .screens import TEMPLATES, Screen, Visit, screens_of
from .security import (
    COOKIE,
    Gate,
    SecurityHeaders,
    TokenBackend,
    assessor_of,
    nonce_of,
    token_sha256,
)
from .writer import WriteFailed

__all__ = ["COOKIE", "MAX_BODY", "Gate", "build_app", "token_sha256"]

log = logging.getLogger("irbench.assess")


@dataclass(frozen=True)
class Refusal:
    """What a request without the role a route requires is answered: ``anonymous`` (status,
    message) without a valid token, ``other`` with the other role's; as JSON
    ``{"error": message}`` for a call, as text for a page."""

    json: bool
    anonymous: tuple[int, str]
    other: tuple[int, str]


CALL = Refusal(True, (401, "no valid token"), (403, "not yours"))
PAGE = Refusal(False, (401, "open the personal link irbench assess printed for you"),
               (403, "not yours"))
ORGANISER_ONLY = Refusal(False, (403, "organiser only"), (403, "organiser only"))


class Guarded(Route):
    """A route whose endpoint ``requires`` a role, with its :class:`Refusal`."""

    def __init__(self, path: str, endpoint: Callable, *, refusal: Refusal,
                 methods: list[str] | None = None):
        super().__init__(path, endpoint, methods=methods)
        self.refusal = refusal


class AssessApp(Starlette):
    """Starlette with :class:`~irbench.assess.security.SecurityHeaders` outermost: around
    Starlette's own error middleware, so that its 500 carries them too."""

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


@functools.cache
def environment(folder: Path) -> jinja2.Environment:
    """The Jinja2 environment of a template folder: autoescaped, an undefined name an error."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True,
                              undefined=jinja2.StrictUndefined)


def render(folder: Path, template: str, context: Any) -> HTMLResponse:
    """``template`` rendered from ``context``, a documented dataclass: its fields are the
    template's names (:mod:`.contexts`)."""
    values = {f.name: getattr(context, f.name) for f in fields(context)}
    return HTMLResponse(environment(folder).get_template(template).render(values))


def build_app(desk: Desk, gate: Gate, *, title: str, levels: tuple[int, ...],
              preselect: bool, organiser_view: Callable[[], OrganiserView],
              export: Callable[[], str], screens: Iterable[Screen] | None = None,
              names: tuple[str, ...] = (), people: Roster | None = None,
              routes: Iterable[BaseRoute] = ()) -> Starlette:
    """The Starlette app (see the module docstring), with ``screens`` (default: the
    registered ones of kind 'pool', :func:`~.screens.screens_of`) mounted; an assessor
    opening ``/`` gets the first; with ``people``, the organiser's calls that add, revoke and
    re-assign them (:func:`people_routes`); ``routes``: more (each a :class:`Guarded`
    route)."""
    mounted = list(screens_of("pool") if screens is None else screens)

    def screen_page(screen: Screen) -> Callable:
        @requires("assessor")
        async def page(request: Request) -> Response:
            who: Assessor = request.user.assessor
            visit = Visit(title=title, who=who.name, nonce=nonce_of(request),
                          csrf=gate.csrf(request), levels=levels, preselect=preselect,
                          names=names)
            return render(screen.folder, screen.template, screen.page(visit))
        return page

    @requires("organiser")
    async def organiser_page(request: Request) -> Response:
        view = await run_in_threadpool(organiser_view)
        return render(TEMPLATES, "organiser.html",
                      OrganiserPage(title=title, nonce=nonce_of(request), view=view))

    first = screen_page(mounted[0])

    async def home(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            return sign_in(request, token, gate, title)
        who = assessor_of(request)
        if who is not None and who.role == "organiser":
            return await organiser_page(request)
        return await first(request)

    @requires("organiser")
    async def qrels(request: Request) -> Response:
        return PlainTextResponse(await run_in_threadpool(export))

    def progress(who: Assessor, body: dict) -> OrganiserView:
        return organiser_view()

    extra, routes = list(routes), [Guarded("/", home, refusal=PAGE)]
    for screen in mounted:
        if screen.path:
            routes.append(Guarded(f"{screen.path}/", screen_page(screen), refusal=PAGE))
        calls = Calls(desk, screen, levels)
        for name, handler in (("next", calls.next_item), ("judge", calls.judge),
                              ("undo", calls.undo), ("skip", calls.skip)):
            routes.append(Guarded(f"{screen.path}/api/{name}",
                                  call(gate, handler, role="assessor", post=True),
                                  refusal=CALL, methods=["POST"]))
    routes += [Guarded("/api/progress", call(gate, progress, role="organiser", post=False),
                       refusal=CALL),
               Guarded("/qrels", qrels, refusal=ORGANISER_ONLY)]
    routes += people_routes(gate, people) if people is not None else []
    routes += extra
    return AssessApp(
        routes=routes,
        middleware=[Middleware(AuthenticationMiddleware, backend=TokenBackend(gate))],
        exception_handlers={403: refused, BadRequest: bad_request, WriteFailed: write_failed,
                            IrbenchError: refused_by_the_pool, Exception: crashed})


def sign_in(request: Request, token: str, gate: Gate, title: str) -> Response:
    """A personal link: the token goes into the cookie (and out of the address bar) when
    the link was opened here (typed, bookmarked, or clicked on this server's page) and
    does not switch a browser signed in as someone else without asking; opened from
    another site, the page asks for one click first (no link can sign a browser in, or
    out, behind its back)."""
    found = gate.lookup(token_sha256(token)) if token else None
    if found is None:
        return PlainTextResponse("this link is not valid (any more): ask for a new one",
                                 401)
    here = request.headers.get("sec-fetch-site", "none") in ("none", "same-origin")
    current = assessor_of(request)
    if here and (current is None or current.name == found.name
                 or request.query_params.get("switch") == "1"):
        response = render(TEMPLATES, "signin.html", SignInPage(
            title=title, nonce=nonce_of(request), refresh=True, name=found.name,
            current="", token=""))
        response.set_cookie(gate.cookie, token, httponly=True, samesite="strict")
        return response
    return render(TEMPLATES, "signin.html", SignInPage(
        title=title, nonce=nonce_of(request), refresh=False, name=found.name,
        current=current.name if current and here else "", token=token))


def call(gate: Gate, handler: Callable[[Assessor, dict], Any], *, role: str,
         post: bool) -> Callable:
    """An endpoint answering ``handler(assessor, body)`` as JSON, for a request with a valid
    token of ``role`` (and, for ``post``, the CSRF token and a JSON object within MAX_BODY:
    :func:`~irbench.assess.calls.json_body`). The assessor's calls run on the event loop (the
    desk's work is in memory and short; a judgment is awaited until committed, other requests
    going on meanwhile); the organiser's, which read the store, in a thread."""
    @requires(role)
    async def endpoint(request: Request) -> Response:
        who: Assessor = request.user.assessor
        body = await json_body(gate, request) if post else {}
        if inspect.iscoroutinefunction(handler):
            answer = await handler(who, body)
        elif role == "organiser":  # reads the store: off the event loop
            answer = await run_in_threadpool(handler, who, body)
        else:  # the desk's work in memory: short
            answer = handler(who, body)
        return JSONResponse(asdict(answer))
    return endpoint


def people_routes(gate: Gate, roster: Roster) -> list[BaseRoute]:
    """The organiser's calls on the pool's people (:mod:`.roster`): ``GET /api/people`` and
    ``POST /api/people/{add,revoke,topics}``, each answering a
    :class:`~irbench.assess.contexts.PeopleView` with the caller's CSRF token; the command
    line's requests (the runtime file's secret) are the organiser's too."""
    def endpoint(handler: Callable[[Assessor, dict], PeopleView], post: bool) -> Callable:
        @requires("organiser")
        async def answer(request: Request) -> Response:
            who: Assessor = request.user.assessor
            body = await json_body(gate, request) if post else {}
            view = await run_in_threadpool(handler, who, body)  # the store: off the loop
            csrf = "" if gate.from_command_line(request) else gate.csrf(request)
            return JSONResponse(asdict(replace(view, csrf=csrf)))
        return answer

    routes: list[BaseRoute] = [Guarded("/api/people", endpoint(roster.view, post=False),
                                       refusal=CALL)]
    for name, method in CHANGES.items():
        routes.append(Guarded(f"/api/people/{name}", endpoint(method(roster), post=True),
                              refusal=CALL, methods=["POST"]))
    return routes


# -- the registered exception handlers


async def refused(request: Request, exc: Exception) -> Response:
    """403 from ``requires``: the route's :class:`Refusal` (any other 403 as Starlette says)."""
    route = request.scope.get("route")
    if not isinstance(route, Guarded) or not isinstance(exc, HTTPException):
        detail = exc.detail if isinstance(exc, HTTPException) else "Forbidden"
        return PlainTextResponse(detail, 403)
    refusal = route.refusal
    status, message = refusal.other if assessor_of(request) else refusal.anonymous
    return _error(message, status) if refusal.json else PlainTextResponse(message, status)


async def bad_request(request: Request, exc: Exception) -> Response:
    status = exc.status if isinstance(exc, BadRequest) else 400
    return _error(str(exc)[:300], status)


async def write_failed(request: Request, exc: Exception) -> Response:
    """The disk: nothing more can be saved."""
    return _error(str(exc)[:300], 503)


async def refused_by_the_pool(request: Request, exc: Exception) -> Response:
    """A judgment the pool refuses (JudgmentError): the message says why."""
    return _error(str(exc)[:300], 400)


async def crashed(request: Request, exc: Exception) -> Response:
    """A bug: a line in the log, a 500 (JSON for a call); the server logs the traceback."""
    log.error("irbench assess: %s %s failed: %s: %s (a bug in irbench; answered 500)",
              request.method, terminal(request.url.path), type(exc).__name__,
              terminal(str(exc)))
    route = request.scope.get("route")
    if isinstance(route, Guarded) and route.refusal.json:
        return _error("internal error (a bug): the server's log says more", 500)
    return PlainTextResponse("Internal Server Error", 500)


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status)
