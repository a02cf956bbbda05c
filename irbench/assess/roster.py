"""The people of a pool while its server runs, and how ``irbench assess --add-assessor``,
``--revoke`` and ``--set-topics`` change them whether it runs or not.

* **Live sign-ins.** The server looks each request's token up in a :class:`Roster`: the
  pool's token hashes, loaded from the store at start and again after every change made
  through it (the server holds the store: nobody else changes it meanwhile). Adding someone
  gives a new personal link (shown once); revoking takes their token away at once (their next
  request is refused, the document they held goes back to the pool); new topics take effect
  at their next document (one they held of a topic no longer theirs goes back). The changes
  are the organiser's calls (``/api/people/...``, their page's people section) and the
  command line's.
* **The command line while the server runs.** The server writes ``STORE.assess.json`` beside
  the store (mode 0600: its URL, pool, process id and a secret made at start) and removes it
  at a clean stop. A change on the command line that finds it, its process alive and of the
  same pool, is sent to that server (``Authorization: Bearer SECRET``: the organiser's calls,
  as :data:`~irbench.assess.security.COMMAND_LINE`); without a running server (no file, its
  process gone after a kill, or no answer) the store is written directly, as before.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from ..cache import alive
from ..escaping import terminal
from ..ids import id_text
from ..store import Assessor, Store
from .contexts import PeopleView, Person
from .desk import Desk
from .failures import MALFORMED, BadRequest
from .people import AssessorError, check_name, check_topics, split_topics
from .security import ROLES, token_sha256

RUNTIME = ".assess.json"  # beside the store: STORE.assess.json
RUNTIME_BYTES = 4096  # a runtime file longer than this is not the server's
ANSWER_BYTES = 1 << 20  # of the server's answer to the command line
SECONDS = 30.0  # the command line waits this long for the server's answer


def enrol(store: Store, pool: str, name: str, topics: tuple[str, ...], role: str,
          known: Sequence[str]) -> str:
    """Add ``name`` to ``pool`` (or give them a new token, revoked or not); their token
    (stored as its sha256 only). ``known``: the pool's topic ids. Refused (AssessorError):
    a name :func:`~.people.check_name` refuses, topics not the pool's or for an organiser,
    a name of another pool or of the other role."""
    check_name(name)
    if role not in ROLES:
        raise BadRequest(MALFORMED)
    if topics and role != "assessor":
        raise AssessorError("--topics is for assessors: an organiser sees every topic")
    check_topics(topics, known, pool)
    other = store.assessor_pool(name)
    if other is not None and other != pool:
        raise AssessorError(f"'{terminal(name)}' assesses pool '{terminal(other)}' already: "
                            "choose another name for this pool")
    found = _person(store, pool, name)
    if found is not None and found.role != role:
        flag = "without --organiser" if found.role == "organiser" else "with --organiser"
        raise AssessorError(f"'{terminal(name)}' is an {found.role} of pool "
                            f"'{terminal(pool)}' already: run --add-assessor "
                            f"{terminal(name)} {flag} for a new link, or choose another "
                            f"name for the {role}")
    token = secrets.token_urlsafe(24)
    store.add_assessor(Assessor(name=name, role=role, topics=topics, pool=pool),
                       token_sha256(token))
    return token


def revoke(store: Store, pool: str, name: str) -> str:
    """Take ``name``'s link away ('': no token made); AssessorError when ``pool`` has nobody
    of that name with a working link."""
    if not store.revoke_assessor(pool, name):
        found = _person(store, pool, name)
        why = "was revoked already" if found is not None else "is not one of its people"
        raise AssessorError(f"'{terminal(name)}' {why} (pool '{terminal(pool)}')")
    return ""


def assign(store: Store, pool: str, name: str, topics: tuple[str, ...],
           known: Sequence[str]) -> str:
    """Give the assessor ``name`` the ``topics`` of ``pool`` (all when empty); '' (no token
    made)."""
    check_topics(topics, known, pool)
    found = _person(store, pool, name)
    if found is None:
        raise AssessorError(f"'{terminal(name)}' is not one of the people of pool "
                            f"'{terminal(pool)}' (--add-assessor {terminal(name)} first)")
    if found.role != "assessor":
        raise AssessorError(f"'{terminal(name)}' is an {found.role}: an organiser sees every "
                            "topic")
    store.set_assessor_topics(pool, name, topics)
    return ""


def _person(store: Store, pool: str, name: str) -> Assessor | None:
    return next((a for a in store.assessors(pool) if a.name == name), None)


def _topics_text(topics: Sequence[str]) -> str:
    return ", ".join(topics) or "all"


# -- the server's side


class Roster:
    """The sign-ins of ``pool`` while the server runs (see the module docstring): ``lookup``
    for the gate, and the organiser's calls (``who``, JSON body) -> :class:`PeopleView`, each
    a store write under the desk's lock (the one connection's rule). ``url``: the server's,
    for the links it makes."""

    def __init__(self, store: Store, pool: str, desk: Desk, url: str):
        self.store, self.pool, self.desk, self.url = store, pool, desk, url
        with desk.lock:
            self._tokens = store.assessor_tokens(pool)

    def lookup(self, sha: str) -> Assessor | None:
        return self._tokens.get(sha)  # one dict read: replaced whole, never changed

    def view(self, who: Assessor | None = None, body: dict | None = None, *, link: str = "",
             done: str = "") -> PeopleView:
        with self.desk.lock:
            people = self.store.assessors(self.pool)
        return PeopleView(csrf="", people=tuple(Person(
            name=a.name, role=a.role, topics=_topics_text(a.topics), revoked=a.revoked)
            for a in people), topics=tuple(self.desk.topics), link=link, done=done)

    def add(self, who: Assessor, body: dict) -> PeopleView:
        name, role = _text(body, "name"), _text(body, "role") or "assessor"
        topics = split_topics(_optional(body, "topics"))
        with self.desk.lock:
            token = enrol(self.store, self.pool, name, topics, role, self.desk.topics)
            self._reload()
        what = f"topics {_topics_text(topics)}" if role == "assessor" else "every topic"
        return self.view(link=f"{self.url}?token={token}",
                         done=f"{name} is an {role} ({what}): send them the link below; it "
                              "is shown once (adding them again makes a new one)")

    def revoke(self, who: Assessor, body: dict) -> PeopleView:
        name = _text(body, "name")
        if name == who.name:
            raise AssessorError("you cannot revoke your own link here (irbench assess "
                                f"--revoke {terminal(name)} on the command line)")
        with self.desk.lock:
            revoke(self.store, self.pool, name)
            self.desk.let_go(name, keep=lambda topic: False)
            self._reload()
        return self.view(done=f"{name}'s link no longer works; their judgments stay")

    def topics(self, who: Assessor, body: dict) -> PeopleView:
        name = _text(body, "name")
        topics = split_topics(_optional(body, "topics"))
        with self.desk.lock:
            assign(self.store, self.pool, name, topics, self.desk.topics)
            chosen = set(topics)
            self.desk.let_go(name, keep=lambda topic: not chosen or topic in chosen)
            self._reload()
        return self.view(done=f"{name} judges topics {_topics_text(topics)} from their next "
                              "document")

    def _reload(self) -> None:
        self._tokens = self.store.assessor_tokens(self.pool)


#: The organiser's calls on people: their path under /api/people/ and the Roster's method.
CHANGES: dict[str, Callable[[Roster], Callable[[Assessor, dict], PeopleView]]] = {
    "add": lambda roster: roster.add, "revoke": lambda roster: roster.revoke,
    "topics": lambda roster: roster.topics}


def _text(body: dict, key: str) -> str:
    """A text field of a call's body ('' when absent); BadRequest for another type."""
    value = body.get(key, "")
    if not isinstance(value, str):
        raise BadRequest(MALFORMED)
    return value


def _optional(body: dict, key: str) -> str | None:
    """A text field of a call's body that may be null or absent (None)."""
    return None if body.get(key) is None else _text(body, key)


# -- the runtime file


@dataclass(frozen=True)
class Runtime:
    """What a running server tells the command line (``STORE.assess.json``)."""

    url: str  # where the command line reaches it (a loopback address for a wildcard host)
    pool: str
    pid: int
    secret: str


def runtime_path(store_path: str) -> str:
    return store_path + RUNTIME


def local_url(host: str, port: int) -> str:
    """The server's address from this machine (a wildcard host is reached at loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


def publish(store_path: str, url: str, pool: str) -> Runtime:
    """A fresh secret, written with the server's address to the runtime file (mode 0600,
    replacing a stale one); OSError when it cannot be written."""
    runtime = Runtime(url=url, pool=pool, pid=os.getpid(), secret=secrets.token_urlsafe(32))
    path = runtime_path(store_path)
    new = f"{path}.new-{os.getpid()}"
    try:
        os.unlink(new)
    except FileNotFoundError:
        pass
    fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(runtime), fh)
    os.replace(new, path)
    return runtime


def withdraw(store_path: str, runtime: Runtime) -> None:
    """Remove the runtime file at a clean stop (only the one this server wrote)."""
    if read_runtime(store_path) == runtime:
        try:
            os.unlink(runtime_path(store_path))
        except OSError:
            pass


def read_runtime(store_path: str) -> Runtime | None:
    """The runtime file's content, or None (no file, or not one a server wrote)."""
    try:
        with open(runtime_path(store_path), "rb") as fh:
            raw = fh.read(RUNTIME_BYTES + 1)
        if len(raw) > RUNTIME_BYTES:
            return None
        data = json.loads(raw)
        return Runtime(url=str(data["url"]), pool=str(data["pool"]), pid=int(data["pid"]),
                       secret=str(data["secret"]))
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None


def running(store_path: str) -> Runtime | None:
    """The server holding the store, as its runtime file says, when its process is alive."""
    found = read_runtime(store_path)
    return found if found is not None and alive(found.pid) else None


# -- the command line's side


@dataclass(frozen=True)
class Change:
    """A change of the pool's people asked on the command line: ``action`` one of
    :data:`CHANGES`; ``topics`` as :func:`~.people.split_topics` gives them (empty: all);
    ``role`` for add."""

    action: str
    name: str
    topics: tuple[str, ...] = ()
    role: str = "assessor"


def change(config, pool: str, asked: Change, *, wait: float | None, url: str) -> PeopleView:
    """Make ``asked``: through the server of ``pool`` when one runs on the store, else in
    the store directly (links made with ``url``)."""
    server = running(config.store)
    if server is not None:
        if server.pool != pool:
            raise AssessorError(f"the store {terminal(config.store)} is held by the server of "
                                f"pool '{terminal(server.pool)}' ({terminal(server.url)}, "
                                f"PID {server.pid}): change pool '{terminal(pool)}''s people "
                                "once it stops")
        answer = ask(server, asked)
        if answer is not None:
            return answer
    return in_store(config, pool, asked, wait=wait, url=url)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The secret goes to the server's own address only: a redirect is refused."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001
        return None


#: Straight to the server: no proxy from the environment (http_proxy would otherwise get the
#: secret), no redirect.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def ask(server: Runtime, asked: Change) -> PeopleView | None:
    """``asked`` sent to the running server; None when it does not answer at all (then the
    store is not held by it)."""
    body = json.dumps({"name": asked.name, "topics": ",".join(asked.topics) or None,
                       "role": asked.role})
    request = urllib.request.Request(
        f"{server.url}api/people/{asked.action}", data=body.encode(), method="POST",
        headers={"Authorization": f"Bearer {server.secret}",
                 "Content-Type": "application/json"})
    try:
        with _DIRECT.open(request, timeout=SECONDS) as response:
            raw = response.read(ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise AssessorError(f"the server at {terminal(server.url)} refused: "
                            f"{_error(exc)}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ConnectionRefusedError):
            return None  # no server there (killed, the file stale): the store is free
        raise AssessorError(f"the server at {terminal(server.url)} did not answer "
                            f"({terminal(str(reason))}); try again, or stop it (Ctrl-C) "
                            "and run this again") from None
    return _view(raw, server.url)


def _error(exc: urllib.error.HTTPError) -> str:
    """The reason of a refusal: the server's ``{"error": ...}``, or its first words."""
    try:
        raw = exc.read(ANSWER_BYTES)
        return str(json.loads(raw)["error"])
    except (OSError, http.client.HTTPException, ValueError, TypeError, KeyError,
            RecursionError):
        return f"HTTP {exc.code}"


def _view(raw: bytes, url: str) -> PeopleView:
    try:
        if len(raw) > ANSWER_BYTES:
            raise ValueError("too long")
        data = json.loads(raw)
        return PeopleView(csrf="", people=tuple(Person(**p) for p in data["people"]),
                          topics=tuple(data["topics"]), link=str(data["link"]),
                          done=str(data["done"]))
    except (ValueError, TypeError, KeyError, RecursionError):
        raise AssessorError(f"the server at {terminal(url)} answered something else than "
                            "irbench assess does (is another program on its port?)") from None


def in_store(config, pool: str, asked: Change, *, wait: float | None,
             url: str) -> PeopleView:
    """``asked`` made in the store (no server holds it); a stale runtime file is removed."""
    topics = asked.topics
    known = [id_text(t) for t in config.run_table().topics] if topics else []
    with Store(config.store, scope=config.scope, wait=wait) as store:
        if store.load_pool(pool) is None:
            raise AssessorError(f"no pool '{terminal(pool)}' in {terminal(config.store)} "
                                f"(irbench pool start {terminal(config.path)} --name "
                                f"{terminal(pool)})")
        _remove_stale(config.store)
        token = IN_STORE[asked.action](store, pool, asked, topics, known)
        people = store.assessors(pool)
    return PeopleView(csrf="", people=tuple(Person(
        name=a.name, role=a.role, topics=_topics_text(a.topics), revoked=a.revoked)
        for a in people), topics=(), link=f"{url}?token={token}" if token else "", done="")


#: The changes made in the store directly: (store, pool, asked, topics, the pool's topic ids)
#: -> the new token ('' when none was made).
IN_STORE: dict[str, Callable[[Store, str, Change, tuple[str, ...], list[str]], str]] = {
    "add": lambda store, pool, asked, topics, known: enrol(
        store, pool, asked.name, topics, asked.role, known),
    "revoke": lambda store, pool, asked, topics, known: revoke(store, pool, asked.name),
    "topics": lambda store, pool, asked, topics, known: assign(
        store, pool, asked.name, topics, known)}


def _remove_stale(store_path: str) -> None:
    """The runtime file of a server that was killed (the store is ours: it is not running)."""
    try:
        os.unlink(runtime_path(store_path))
    except OSError:
        pass
