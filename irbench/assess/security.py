"""The assessment server's shared checks, as Starlette has them: who a request is
(:class:`TokenBackend`, an authentication backend: the token cookie resolved to the assessor,
their role as the request's scope, so that a route says ``@requires("assessor")``), its CSRF
token (:class:`Gate`), and the security headers of every response (:class:`SecurityHeaders`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable

from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..store import Assessor

COOKIE = "irbench_assess"
ROLES = ("assessor", "organiser")  # the scopes a signed-in request has one of


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Gate:
    """Who a request is (by its token) and whether its CSRF token is right. The cookie is
    named by the server's port: cookies ignore ports, and two servers (two pools) on one
    machine must not overwrite each other's.

    ``secret`` makes the CSRF tokens (an HMAC of the assessor's token): the pool's, kept in
    the store (:meth:`Store.csrf_secret`), so that a page opened before a restart keeps
    working after it (a new one per process when not given). ``lookup`` is asked at every
    request (people are added and revoked while the server runs). ``admin``: the secret of
    the server's runtime file (:mod:`.roster`); a request carrying it as ``Authorization:
    Bearer`` is :data:`COMMAND_LINE`, an organiser, without a cookie or a CSRF token (a
    browser sends no such header to another site's server without its consent, which this
    server never gives)."""

    def __init__(self, lookup: Callable[[str], Assessor | None], port: int = 0,
                 secret: bytes | None = None, admin: str | None = None):
        self.lookup = lookup
        self.cookie = f"{COOKIE}_{port}"
        self.secret = secret if secret is not None else secrets.token_bytes(32)
        self.admin = admin

    def __repr__(self) -> str:  # never the secrets
        return f"Gate(cookie={self.cookie!r})"

    def token(self, request: HTTPConnection) -> str:
        return request.cookies.get(self.cookie, "")

    def from_command_line(self, request: HTTPConnection) -> bool:
        """Whether the request carries the runtime file's secret."""
        sent = request.headers.get("authorization", "")
        if self.admin is None or not sent:
            return False
        return hmac.compare_digest(sent.encode("utf-8", "replace"),
                                   f"Bearer {self.admin}".encode())

    def who(self, request: HTTPConnection) -> Assessor | None:
        if self.from_command_line(request):
            return COMMAND_LINE
        token = self.token(request)
        return self.lookup(token_sha256(token)) if token else None

    def csrf(self, request: HTTPConnection) -> str:
        return hmac.new(self.secret, self.token(request).encode(), hashlib.sha256).hexdigest()

    def allows(self, request: HTTPConnection) -> bool:
        if self.from_command_line(request):
            return True
        sent = request.headers.get("x-csrf-token", "")
        origin = request.headers.get("origin")
        same = origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"
        return same and hmac.compare_digest(sent.encode("utf-8", "replace"),
                                            self.csrf(request).encode())


#: Who a request from ``irbench assess --add-assessor/--revoke/--set-topics`` is, while the
#: server runs: an organiser no person can be (a name check_name refuses).
COMMAND_LINE = Assessor(name="\0command line", role="organiser", topics=(), pool="")


class SignedIn(BaseUser):
    """``request.user`` of a request with a valid token: ``assessor`` is who it is."""

    def __init__(self, assessor: Assessor):
        self.assessor = assessor

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.assessor.name


class TokenBackend(AuthenticationBackend):
    """The token cookie (:class:`Gate`) resolved to its assessor: ``request.user`` a
    :class:`SignedIn`, ``request.auth.scopes`` ``["authenticated", role]``; without a valid
    token, no scope (Starlette's ``UnauthenticatedUser``)."""

    def __init__(self, gate: Gate):
        self.gate = gate

    async def authenticate(self, conn: HTTPConnection
                           ) -> tuple[AuthCredentials, BaseUser] | None:
        who = self.gate.who(conn)
        if who is None:
            return None
        return AuthCredentials(["authenticated", who.role]), SignedIn(who)


def assessor_of(request: HTTPConnection) -> Assessor | None:
    """Who a request is (set by :class:`TokenBackend`), or None."""
    user = request.user
    return user.assessor if isinstance(user, SignedIn) else None


def headers(nonce: str) -> dict[str, str]:
    """The security headers of a response; ``nonce``: the one a page's own script and style
    carry ('': nothing may run)."""
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    return {"Content-Security-Policy": f"default-src 'none'; script-src {script}; "
                                       f"style-src {script}; connect-src 'self'; "
                                       "img-src 'none'; form-action 'none'; "
                                       "frame-ancestors 'none'; base-uri 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


NONCE = "csp_nonce"  # the request's nonce: request.state.csp_nonce


class SecurityHeaders:
    """ASGI middleware: the security headers (:func:`headers`) on every response, whoever
    made it (a page, a call, a registered exception handler, the router's own 404 and 405,
    the 500 of a bug). Each request gets a nonce (``request.state.csp_nonce``, for the page's
    script and style); an HTML response's policy allows what carries it, any other response's
    allows no script or style at all. Headers of these names an endpoint set are replaced."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})[NONCE] = nonce

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                found = MutableHeaders(scope=message)
                page = found.get("content-type", "").startswith("text/html")
                for name, value in headers(nonce if page else "").items():
                    found[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def nonce_of(request: HTTPConnection) -> str:
    """The request's nonce (:class:`SecurityHeaders`)."""
    return str(request.scope["state"][NONCE])

