"""A local stand-in for a remote LLM speaking the OpenAI-compatible chat-completions protocol
(vLLM, Ollama, llama.cpp and hosted APIs all speak it), for irbench's tests and benchmarks.

The real model cannot be had here, so the server answers by a *rule*: a function from the
request's parsed JSON body to the assistant's text. It speaks the real protocol over real HTTP/1.1
(keep-alive connections, ``Authorization: Bearer``, errors in the OpenAI shape) and fails on
demand, deterministically: each queued fault is applied to the next matching completion request.

    with ChatServer(rule_by_marker(), api_key="sk-test") as server:
        server.base_url                                   # http://127.0.0.1:<port>/v1
        server.fail(Fault.RATE_LIMIT, times=2, retry_after=0)
        ...
        assert server.calls == 3 and server.count(lambda body: "doc-7" in str(body)) == 1

By hand: ``python -m tests.chat_server --port 8011 --rule marker`` prints the base URL and serves
until Ctrl-C. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import enum
import itertools
import json
import math
import re
import signal
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]
Rule = Callable[[Body], str]
Predicate = Callable[[Body], bool]

COMPLETIONS = "/v1/chat/completions"
MODELS = "/v1/models"
MAX_BODY = 64 << 20  # a request body above this is refused (413)
CLOSE_WAIT = 5.0  # seconds close() and release() wait at most for the server's threads


class Fault(enum.Enum):
    """What the server does to a completion request instead of answering it."""

    RATE_LIMIT = "rate_limit"  # 429 with Retry-After (and retry-after-ms, as OpenAI sends)
    SERVER_ERROR = "server_error"  # 500
    UNAVAILABLE = "unavailable"  # 503
    MALFORMED_JSON = "malformed_json"  # 200, Content-Type application/json, a body not JSON
    NO_CHOICES = "no_choices"  # 200 with a valid completion object lacking "choices"
    HANG = "hang"  # no answer until release() or close(), then 503
    DISCONNECT = "disconnect"  # the connection closed without a byte of answer
    TRUNCATED = "truncated"  # 200 headers and half the body, then the connection closed
    # hostile servers (issue 35): each ends when its client goes away or the server closes
    DRIP_HEADERS = "drip_headers"  # the status line and headers one byte per ``every`` s, endless
    DRIP_BODY = "drip_body"  # 200 headers at once, then the body one byte per ``every`` s
    HUGE_BODY = "huge_body"  # 200 with Content-Length 3 GiB, zeros sent as fast as read
    ENDLESS_CHUNKED = "endless_chunked"  # 200, Transfer-Encoding chunked, chunks without end
    GZIP_BOMB = "gzip_bomb"  # 200, Content-Encoding gzip: a 3 GiB run of spaces, made as read
    RAW = "raw"  # ``status`` with ``body`` (bytes) as given, ``headers`` and ``reason`` added
    ECHO_AUTH = "echo_auth"  # ``status`` (401 by default) whose error message quotes the
    #                          request's Authorization header and key, with terminal escapes


BOMB_BYTES = 3 << 30  # what Fault.GZIP_BOMB, HUGE_BODY and ENDLESS_CHUNKED stand for


@dataclass
class _Pending:
    fault: Fault
    times: int
    retry_after: float
    when: Predicate | None
    status: int | None = None
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    reason: str | None = None
    every: float = 0.05


@dataclass
class _Hold:
    """A request held by Fault.HANG: woken by ``wake``, sets ``done`` once answered."""

    wake: threading.Event
    done: threading.Event


# ---- ready rules ------------------------------------------------------------------------------

MARKER = re.compile(r"\[\[\s*grade\s*:\s*([^\[\]]*?)\s*\]\]")


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts ({"type": "text", ...})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content
                        if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def last_user_text(body: Body) -> str:
    """The text of the request's last user message ("" when there is none)."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def rule_echo_label(fmt: str, default: str = "0") -> Rule:
    """A rule answering ``fmt`` with ``{grade}`` replaced by the grade of the first marker such
    as ``[[grade:2]]`` in the last user message (``default`` when there is none). A template
    without ``{grade}`` gives the same answer to all, e.g. an unparseable one. Other braces are
    left alone, so a JSON template works: ``'{"score": {grade}}'``."""

    def rule(body: Body) -> str:
        found = MARKER.search(last_user_text(body))
        return fmt.replace("{grade}", found.group(1) if found else default)

    return rule


def rule_by_marker(default: str = "0") -> Rule:
    """UMBRELA's answer style: ``##final score: 2`` for a ``[[grade:2]]`` marker in the last user
    message, ``##final score: <default>`` without one."""
    return rule_echo_label("##final score: {grade}", default)


SIMULATED = re.compile(r"Query: (\S+) (\S+) (\S+)\nPassage: (.*?)\n\nSplit this problem", re.S)


def rule_simulated(body: Body) -> str:
    """A stand-in judge of ``irbench simulate``'s documents under UMBRELA's prompt: a
    grade-g document speaks of the topic's subject and aspect (its title's 2nd and 3rd words) in
    g + 1 sentences when relevant, so the grade is that count less one (0 to 3)."""
    found = SIMULATED.search(last_user_text(body))
    if found is None:
        return "I cannot tell."
    _, subject, aspect, passage = found.groups()
    said = sum(1 for sentence in passage.split(".") if subject in sentence and aspect in sentence)
    return f"##final score: {min(3, max(0, said - 1))}"


SUPPORT_PROMPT = re.compile(r"Statement: (.*?)\n\nCitation: (.*?)\n\nResponse:", re.S)
SUPPORT_MARKER = re.compile(r"\[\[\s*support\s*:\s*(full|partial|no)\s*\]\]", re.I)
SUPPORT_WORDS = {2: "Full Support", 1: "Partial Support", 0: "No Support"}
_WORD = re.compile(r"[a-z0-9]+")


def support_of(statement: str, citation: str) -> int:
    """The stand-in's support label (2, 1, 0) of a statement by a citation: a marker such as
    ``[[support:partial]]`` in the citation says it; otherwise the share of the statement's
    words (lower case, letters and digits) the citation holds: 0.8 or more full, 0.4 or more
    partial, else none."""
    marked = SUPPORT_MARKER.search(citation)
    if marked:
        return {"full": 2, "partial": 1, "no": 0}[marked.group(1).lower()]
    said = set(_WORD.findall(statement.lower()))
    held = set(_WORD.findall(citation.lower()))
    share = len(said & held) / len(said) if said else 0.0
    return 2 if share >= 0.8 else 1 if share >= 0.4 else 0


def rule_support(body: Body) -> str:
    """A stand-in support judge under the TREC RAG 2024 support prompt (``Statement: ...
    Citation: ... Response:``): its answer is the track's words for :func:`support_of`'s label
    ("I cannot tell." for a prompt without a statement and a citation)."""
    found = SUPPORT_PROMPT.search(last_user_text(body))
    if found is None:
        return "I cannot tell."
    return SUPPORT_WORDS[support_of(found.group(1), found.group(2))]


@dataclass
class NuggetTruth:
    """What a stand-in nugget judge knows of a campaign: each query's nuggets (in order), each
    (query, nugget)'s importance and each (query, passage, nugget)'s assignment."""

    nuggets: dict[str, list[str]]
    importance: dict[tuple[str, str], str]
    assignment: dict[tuple[str, str, str], str]


_SEARCH_QUERY = re.compile(r"^Search Query: (.*)$", re.M)
_NUGGET_LIST = re.compile(r"^(?:Initial )?Nugget List: (.*)$", re.M)
_PASSAGE = re.compile(r"^Passage: (.*?)\nNugget List: ", re.M | re.S)
_SEGMENT = re.compile(r"^\[\d+\] ", re.M)
_FLIP = {"vital": "okay", "okay": "vital", "support": "not_support",
         "partial_support": "support", "not_support": "partial_support"}


def rule_nuggets(truth: NuggetTruth, noisy: bool = False) -> Rule:
    """A stand-in of AutoNuggetizer's model under its prompts (told apart by their system
    messages). Creation: the initial list, then the query's next nuggets not in it, one per
    segment of the window, in a ```python fence (``max_nuggets`` not obeyed: the judge cuts).
    Importance: the known labels as JSON with prose after. Assignment: the known labels as a
    Python list (not_support when unknown). ``noisy``: the second time a request is asked,
    a wrong answer (a made-up nugget added; every label changed), so that a majority of
    three samples gives the rule's answer whichever sample came second."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def rule(body: Body) -> str:
        messages = body.get("messages") or []
        system = " ".join(text_of(m.get("content")) for m in messages
                          if isinstance(m, dict) and m.get("role") == "system")
        user = last_user_text(body)
        with lock:
            key = json.dumps(messages, sort_keys=True)
            seen[key] = seen.get(key, 0) + 1
            wrong = noisy and seen[key] == 2
        query_found = _SEARCH_QUERY.search(user)
        listed = _NUGGET_LIST.search(user)
        if query_found is None or listed is None:
            return "I cannot tell."
        query, nuggets = query_found.group(1), ast.literal_eval(listed.group(1))
        if "NuggetizeLLM," in system:
            count = len(_SEGMENT.findall(user))
            new = [t for t in truth.nuggets.get(query, []) if t not in nuggets][:count]
            made = nuggets + new + (["a nugget nobody wrote"] if wrong else [])
            return "```python\n" + repr(made) + "\n```"
        if "NuggetizeScoreLLM" in system:
            labels = [truth.importance.get((query, t), "okay") for t in nuggets]
            labels = [_FLIP[x] for x in labels] if wrong else labels
            return json.dumps(labels) + "\nVital ones are essential; okay ones are [not]."
        passage_found = _PASSAGE.search(user)
        passage = passage_found.group(1) if passage_found else ""
        labels = [truth.assignment.get((query, passage, t), "not_support") for t in nuggets]
        return repr([_FLIP[x] for x in labels] if wrong else labels)

    return rule


def words(body: Body) -> int:
    """The prompt's tokens as the server counts them: whitespace-split words of all messages."""
    return sum(len(text_of(m.get("content")).split()) for m in body.get("messages") or []
               if isinstance(m, dict))


# ---- the server -------------------------------------------------------------------------------

class ChatServer:
    """An OpenAI-compatible chat-completions server on a local port, answering by ``rule``.

    ``api_key``: when given, every request must carry ``Authorization: Bearer <api_key>``
    (401 otherwise). ``faults``: faults queued at start, each a Fault (once), a (Fault, times)
    pair or a mapping of fail()'s keyword arguments. ``port=0``: a free port chosen by the OS.
    The server runs from construction to close() (or the end of a ``with`` block)."""

    def __init__(self, rule: Rule, api_key: str | None = None,
                 faults: Iterable[Fault | tuple[Fault, int] | Mapping[str, Any]] | None = None,
                 *, host: str = "127.0.0.1", port: int = 0, model: str = "stand-in") -> None:
        self.rule = rule
        self.api_key = api_key
        self.model = model
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when a connection ends
        self._requests: list[Body] = []
        self._errors: list[BaseException] = []
        self._pending: list[_Pending] = []
        self._holds: list[_Hold] = []
        self._live: set[socket.socket] = set()
        self._calls = 0
        self._connections = 0
        self._ids = itertools.count(1)
        self._closing = threading.Event()
        for item in faults or ():
            if isinstance(item, Fault):
                self.fail(item)
            elif isinstance(item, tuple):
                self.fail(item[0], times=item[1])
            else:
                self.fail(**item)
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.chat = self
        self.host, self.port = self._httpd.server_address[:2]
        self._thread = threading.Thread(target=self._accept, name=f"chat-server:{self.port}",
                                        daemon=True)
        self._thread.start()

    # -- what a test reads --

    @property
    def base_url(self) -> str:
        return f"http://{self._reachable_host}:{self.port}/v1"

    @property
    def _reachable_host(self) -> str:
        return "127.0.0.1" if self.host in ("0.0.0.0", "") else str(self.host)

    @property
    def requests(self) -> list[Body]:
        """The parsed bodies of every completion request received, in order of arrival (faulted,
        refused and answered alike; a body that is not a JSON object is not recorded). A copy."""
        with self._lock:
            return list(self._requests)

    @property
    def calls(self) -> int:
        """Completions answered with 200 by the rule (a fault's answer is not one)."""
        with self._lock:
            return self._calls

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (keep-alive: one for many requests)."""
        with self._lock:
            return self._connections

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the rule or a ``when`` predicate raised (the request got a 500). A copy."""
        with self._lock:
            return list(self._errors)

    @property
    def faults_left(self) -> int:
        """Fault applications still queued."""
        with self._lock:
            return sum(p.times for p in self._pending)

    @property
    def held(self) -> int:
        """Requests held by Fault.HANG right now."""
        with self._lock:
            return len(self._holds)

    def count(self, predicate: Predicate) -> int:
        """How many recorded requests' bodies match ``predicate``."""
        return sum(1 for body in self.requests if predicate(body))

    # -- what a test does --

    def fail(self, fault: Fault | str, times: int = 1, retry_after: float = 0,
             when: Predicate | None = None, *, status: int | None = None, body: bytes = b"",
             headers: Iterable[tuple[str, str]] = (), reason: str | None = None,
             every: float = 0.05) -> None:
        """Queue ``fault`` for the next ``times`` completion requests that pass the key check,
        are valid and match ``when`` (all when None). Faults apply in the order queued: a request
        gets the first queued fault it matches. ``retry_after``: seconds, for RATE_LIMIT.
        ``status``, ``body``, ``headers``, ``reason``: the answer of RAW (``status`` also of
        ECHO_AUTH); ``every``: seconds between two bytes of DRIP_HEADERS and DRIP_BODY.
        ``fault`` may be given by value ("rate_limit"), or as the Fault of this module imported
        under another name (tests.chat_server and chat_server)."""
        if times < 1:
            raise ValueError(f"times must be at least 1, not {times}")
        kind = Fault(getattr(fault, "value", fault))
        with self._lock:
            self._pending.append(_Pending(kind, times, retry_after, when, status, body,
                                          tuple(headers), reason, every))

    def wait_held(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Wait until ``count`` requests are held by Fault.HANG; False if ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while len(self._holds) < count:
                left = deadline - time.monotonic()
                if left <= 0 or not self._idle.wait(left):
                    return len(self._holds) >= count
        return True

    def release(self) -> None:
        """Let every held request end: each is answered 503 (if its client still listens) before
        release() returns."""
        with self._lock:
            holds, self._holds = self._holds, []
            self._idle.notify_all()
        for hold in holds:
            hold.wake.set()
        for hold in holds:
            hold.done.wait(CLOSE_WAIT)

    def close(self) -> None:
        """Stop: held requests are answered 503, open connections closed, the port freed."""
        if self._closing.is_set():
            return
        self._closing.set()
        self.release()
        try:  # wake the accept loop
            socket.create_connection((self._reachable_host, self.port), timeout=CLOSE_WAIT).close()
        except OSError:
            pass
        self._thread.join(CLOSE_WAIT)
        self._httpd.server_close()
        with self._idle:
            for sock in self._live:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            deadline = time.monotonic() + CLOSE_WAIT
            while self._live and (left := deadline - time.monotonic()) > 0:
                self._idle.wait(left)

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the handler calls --

    def _accept(self) -> None:
        while True:
            try:
                conn, address = self._httpd.socket.accept()
            except OSError:
                return
            if self._closing.is_set():
                conn.close()
                return
            with self._lock:
                self._connections += 1
            self._httpd.process_request(conn, address)

    def _record(self, body: Body) -> None:
        with self._lock:
            self._requests.append(body)

    def _error(self, error: BaseException) -> None:
        with self._lock:
            self._errors.append(error)

    def _next_fault(self, body: Body) -> _Pending | None:
        with self._lock:
            for pending in self._pending:
                try:
                    matches = pending.when is None or pending.when(body)
                except Exception as error:  # a broken predicate: recorded, matches nothing
                    self._errors.append(error)
                    continue
                if matches:
                    pending.times -= 1
                    if not pending.times:
                        self._pending.remove(pending)
                    return pending
        return None

    def _hold(self) -> _Hold | None:
        """Hold the calling request until release() or close(); None when closing already."""
        hold = _Hold(threading.Event(), threading.Event())
        with self._lock:
            if self._closing.is_set():
                return None
            self._holds.append(hold)
            self._idle.notify_all()
        hold.wake.wait()
        return hold

    def _answered(self) -> int:
        with self._lock:
            self._calls += 1
            return next(self._ids)

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._live.add(sock)

    def _ended(self, sock: socket.socket) -> None:
        with self._idle:
            self._live.discard(sock)
            self._idle.notify_all()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a thread per connection, never joined: close() ends them
    block_on_close = False  # server_close() must not wait for idle keep-alive connections
    request_queue_size = 256  # 32 clients connecting at once must not overflow the backlog
    chat: ChatServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, OSError):  # a client gone is normal
            self.chat._error(error)


def _error_body(message: str, kind: str, code: str | None) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "param": None,
                                 "code": code}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "irbench-chat-stand-in/1"
    wbufsize = 1 << 16  # headers and body leave in one send (flushed after each request)
    disable_nagle_algorithm = True  # TCP_NODELAY
    server: _HTTPServer

    @property
    def chat(self) -> ChatServer:
        return self.server.chat

    def setup(self) -> None:
        super().setup()
        self.chat._opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.chat._ended(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # no line per request
        pass

    # -- sending --

    def _send(self, status: int, payload: bytes, headers: Iterable[tuple[str, str]] = (),
              *, content_length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload) if content_length is None
                                               else content_length))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _fail(self, status: int, message: str, kind: str = "invalid_request_error",
              code: str | None = None, headers: Iterable[tuple[str, str]] = ()) -> None:
        self._send(status, _error_body(message, kind, code), headers)

    # -- receiving --

    def _read_body(self) -> bytes | None:
        """The request's body; None when it cannot be read (answered, connection to close)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._fail(411, "chunked request bodies are not supported: send Content-Length")
            return None
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            self._fail(413 if length > MAX_BODY else 400, "bad Content-Length")
            return None
        return self.rfile.read(length) if length else b""

    def _authorized(self) -> bool:
        key = self.chat.api_key
        if key is None:
            return True
        given = self.headers.get("Authorization", "")
        if not given.startswith("Bearer ") or not given[7:].strip():
            self._fail(401, "You didn't provide an API key. Send it as 'Authorization: Bearer "
                            "<key>'.", code="missing_api_key")
            return False
        if given[7:].strip() != key:
            self._fail(401, "Incorrect API key provided.", code="invalid_api_key")
            return False
        return True

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:
        path = self._path()
        if path == COMPLETIONS:
            self._fail(405, f"Method GET not allowed for {path}: use POST")
        elif path != MODELS:
            self._fail(404, f"Unknown request URL: GET {path}", code="unknown_url")
        elif self._authorized():
            model = self.chat.model
            self._send(200, json.dumps({"object": "list", "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": "irbench"}]}).encode())

    def do_POST(self) -> None:
        raw = self._read_body()
        if raw is None:
            return
        path = self._path()
        if path != COMPLETIONS:
            self._fail(405 if path == MODELS else 404, f"Unknown request URL: POST {path}",
                       code="unknown_url")
            return
        body, problem = _parse(raw)
        if body is not None:
            self.chat._record(body)
        if not self._authorized():
            return
        if body is None or problem:
            self._fail(400, problem or "bad request")
            return
        pending = self.chat._next_fault(body)
        if pending is not None:
            self._apply(pending, body)
        else:
            self._complete(body)

    def _complete(self, body: Body) -> None:
        try:
            answer = self.chat.rule(body)
            if not isinstance(answer, str):
                raise TypeError(f"the rule answered {type(answer).__name__}, not str")
        except Exception as error:
            self.chat._error(error)
            self._fail(500, f"the rule failed: {error!r}", kind="server_error")
            return
        prompt, completion = words(body), len(answer.split())
        self._send(200, json.dumps({
            "id": f"chatcmpl-{self.chat._answered()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.chat.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }).encode())

    def _apply(self, pending: _Pending, body: Body) -> None:
        fault = pending.fault
        if fault is Fault.RATE_LIMIT:
            wait = pending.retry_after
            self._fail(429, "Rate limit reached for requests. Please try again later.",
                       kind="requests", code="rate_limit_exceeded",
                       headers=[("Retry-After", str(math.ceil(wait))),
                                ("retry-after-ms", str(round(wait * 1000)))])
        elif fault is Fault.SERVER_ERROR:
            self._fail(500, "The server had an error while processing your request.",
                       kind="server_error")
        elif fault is Fault.UNAVAILABLE:
            self._fail(503, "The server is overloaded or not ready yet.", kind="server_error",
                       code="service_unavailable")
        elif fault is Fault.MALFORMED_JSON:
            self._send(200, b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"')
        elif fault is Fault.NO_CHOICES:
            self._send(200, json.dumps({
                "id": f"chatcmpl-{self.chat._next_id()}", "object": "chat.completion",
                "created": int(time.time()), "model": body.get("model") or self.chat.model,
                "usage": {"prompt_tokens": words(body), "completion_tokens": 0,
                          "total_tokens": words(body)}}).encode())
        elif fault is Fault.HANG:
            hold = self.chat._hold()
            try:
                self._fail(503, "The request was held and released (Fault.HANG).",
                           kind="server_error", code="service_unavailable")
                self.wfile.flush()
            except OSError:  # its client is gone: timed out, or the server closing
                self.close_connection = True
            finally:
                if hold is not None:
                    hold.done.set()
        elif fault is Fault.DISCONNECT:
            self.close_connection = True
        elif fault is Fault.TRUNCATED:
            payload = b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": []}'
            self._send(200, payload[: len(payload) // 2], content_length=len(payload))
            self.close_connection = True
        else:
            self._hostile(pending)

    # -- hostile servers: each ends when its client goes away or the server closes --

    def _hostile(self, pending: _Pending) -> None:
        fault = pending.fault
        if fault is Fault.RAW:
            status = pending.status or 200
            reason = self.responses.get(status, ("",))[0] if pending.reason is None \
                else pending.reason  # any text, sent as UTF-8 (escapes and all)
            head = [f"HTTP/1.1 {status} ".encode() + reason.encode("utf-8", "surrogateescape"),
                    f"Content-Length: {len(pending.body)}".encode()]
            head += [f"{name}: {value}".encode() for name, value in pending.headers]
            self.wfile.write(b"\r\n".join(head) + b"\r\n\r\n" + pending.body)
            return
        if fault is Fault.ECHO_AUTH:
            given = self.headers.get("Authorization", "")
            key = given[7:] if given.startswith("Bearer ") else given
            message = (f"\x1b]0;pwned\x07\x1b[2J\u202eInvalid request. You sent "
                       f"'Authorization: {given}' (key={key}, api_key: {key}); headers: "
                       f"{dict(self.headers)}")
            self._fail(pending.status or 401, message, code="echo")
            return
        self.close_connection = True
        try:
            self.wfile.flush()
            for block in _HOSTILE[fault](pending):
                if self.chat._closing.is_set():
                    return
                self.connection.sendall(block)
                if fault in (Fault.DRIP_HEADERS, Fault.DRIP_BODY):
                    time.sleep(pending.every)
        except OSError:  # the client gave up: what these faults wait for
            pass


def _drip_headers(pending: _Pending) -> Iterable[bytes]:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Drip: "
    yield from (head[i:i + 1] for i in range(len(head)))
    while True:
        yield b"a"


def _drip_body(pending: _Pending) -> Iterable[bytes]:
    yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Content-Length: 1000000\r\n\r\n")
    head = b'{"choices": [{"message": {"role": "assistant", "content": "'
    yield from (head[i:i + 1] for i in range(len(head)))
    while True:
        yield b" "


_BLOCK = 1 << 16


def _huge_body(pending: _Pending) -> Iterable[bytes]:
    yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % BOMB_BYTES)
    zeros = b"0" * _BLOCK
    for _ in range(BOMB_BYTES // _BLOCK):
        yield zeros


def _endless_chunked(pending: _Pending) -> Iterable[bytes]:
    yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n" % _BLOCK + b" " * _BLOCK + b"\r\n"
    while True:
        yield chunk


def _gzip_bomb(pending: _Pending) -> Iterable[bytes]:
    """A gzip stream of 3 GiB of spaces (about 3 MB compressed), compressed as it is sent."""
    yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    spaces = b" " * (1 << 20)
    for n in range(BOMB_BYTES >> 20):
        out = packer.compress(spaces) if n else packer.compress(b"{" + spaces[1:])
        if out:
            yield b"%x\r\n" % len(out) + out + b"\r\n"
    out = packer.flush()
    yield b"%x\r\n" % len(out) + out + b"\r\n0\r\n\r\n"


_HOSTILE: dict[Fault, Callable[[_Pending], Iterable[bytes]]] = {
    Fault.DRIP_HEADERS: _drip_headers, Fault.DRIP_BODY: _drip_body,
    Fault.HUGE_BODY: _huge_body, Fault.ENDLESS_CHUNKED: _endless_chunked,
    Fault.GZIP_BOMB: _gzip_bomb}


def _parse(raw: bytes) -> tuple[Body | None, str | None]:
    """The body as a JSON object and what is wrong with it as a chat-completions request."""
    try:
        body = json.loads(raw)
    except ValueError as error:
        return None, f"We could not parse the JSON body of your request: {error}"
    if not isinstance(body, dict):
        return None, "The body of your request must be a JSON object."
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return body, "'messages' is required: a non-empty list of messages."
    for n, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                or not isinstance(message.get("content"), (str, list)):
            return body, f"messages[{n}] must be an object with a 'role' and a 'content'."
    if body.get("stream"):
        return body, "'stream': true is not supported by this stand-in."
    return body, None


# ---- by hand ----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chat_server", description=(
        "A local OpenAI-compatible chat-completions server answering by a rule."))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011, help="0: any free port")
    parser.add_argument("--rule", choices=["marker", "simulated", "support"], default="marker",
                        help="marker: '##final score: G' for a [[grade:G]] marker in the last "
                             "user message; simulated: the grade irbench simulate's documents "
                             "say under UMBRELA's prompt; support: Full/Partial/No Support by "
                             "a [[support:full|partial|no]] marker in the citation, else by the "
                             "share of the statement's words the citation holds")
    parser.add_argument("--default", default="0", help="the grade answered without a marker")
    parser.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY'")
    parser.add_argument("--model", default="stand-in", help="the model id /v1/models lists")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops as Ctrl-C does
    rule = {"simulated": rule_simulated, "support": rule_support}.get(
        args.rule, rule_by_marker(args.default))
    with ChatServer(rule, api_key=args.api_key, host=args.host,
                    port=args.port, model=args.model) as server:
        try:  # printed inside: a Ctrl-C sent once the URL is read lands in this try
            print(server.base_url, flush=True)
            threading.Event().wait()
        except KeyboardInterrupt:
            print(f"stopped after {server.calls} completions", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
