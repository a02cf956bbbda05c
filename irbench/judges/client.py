"""One chat-completions call, with retries: the only part of a model irbench sees.

Speaks the OpenAI-compatible protocol (``POST {base_url}/chat/completions``) that vLLM,
Ollama, llama.cpp's server and the hosted APIs share, through httpx's asynchronous client
(the ``judge`` extra): one connection pool per judging run, keep-alive. A 429 (waiting what
its Retry-After says, at most :data:`RETRY_AFTER_CAP`, else the backoff), a 5xx, a timeout, a
dropped connection, an answer that is not JSON or has no choices: tried again up to the
judge's ``retries``, waiting ``backoff`` x 2^attempt seconds. A 401, 403, 404 or 405 is the
judge's configuration (a key, a model name, a URL) and stops judging
(:class:`~irbench.errors.JudgeError`); another 4xx is that request's own fault (a document too
long for the model, say): it fails alone, not retried.

Bounded whatever the server does: the judge's ``timeout`` is each attempt's whole limit
(headers and body, however slowly they drip), an answer's bytes are capped before and after
decompression (:data:`MAX_RESPONSE_BYTES`), JSON nesting too deep for the parser is a
malformed answer, token counts outside [0, 2^31) count as 0 with a note. Every wait is an
``await``: cancelling a request (Ctrl-C does, see :mod:`.judging`) ends it at once. Server
text reaches a message only through :func:`server_text`: the key and any Authorization echo
removed, cut short, terminal escapes made inert.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from ..errors import JudgeError, install
from ..escaping import terminal
from ..store.judging import token_count
from .spec import JudgeSpec

FATAL = (401, 403, 404, 405)  # the judge's key, model or URL: no request can succeed
RETRY_AFTER_CAP = 60.0  # seconds: a server asking for longer is waited on this long
MAX_RESPONSE_BYTES = 8 << 20  # an answer's bytes, as sent and as decompressed: more fails it
MAX_ERROR_BYTES = 64 << 10  # what is read of an error's body, for its message
MAX_SHOWN = 200  # characters of a server's text in a message
ACCEPT_ENCODING = "gzip, deflate"  # the encodings _Inflater undoes within the cap

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class Reply:
    """A model's answer and what it cost (``note``: why a token count was taken as 0;
    ``requests``: the HTTP requests it took, retries included)."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    note: str = ""
    requests: int = 1


class CallFailed(Exception):
    """One request that failed after every retry (why in the message); others may go on.
    ``requests``: the HTTP requests it took, retries included (set by :meth:`Caller.ask`)."""

    requests: int = 1


@dataclass(frozen=True)
class _Again:
    """An attempt that may be tried again: why it failed, and the wait its server asked for."""

    why: str
    asked: float | None = None


class Caller:
    """Asks one judge's model. ``async with caller:`` opens its connection pool on the running
    event loop (one per judging run) and ``await caller.ask(messages)`` asks, as often and as
    concurrently as the judge allows; :meth:`ask_one` does both for one request, blocking.
    ``sleep`` is how it waits between attempts (tests pass their own coroutine function);
    ``transport`` an httpx transport in place of the network (``httpx.MockTransport``)."""

    def __init__(self, spec: JudgeSpec, sleep: Sleep | None = None, *,
                 transport: Any = None):
        try:
            import httpx  # the judge extra: only judging needs it
        except ModuleNotFoundError:
            raise JudgeError(f"model judges need the judge extra (httpx): {install('judge')}"
                             ) from None

        self.spec, self.httpx, self.transport = spec, httpx, transport
        self.sleep: Sleep = sleep or asyncio.sleep
        key = spec.api_key()
        if spec.api_key_env and not key:
            raise JudgeError(f"judge '{spec.name}': the environment variable "
                             f"{spec.api_key_env} (its API key) is not set")
        self.secrets = (key,) if key else ()
        self.headers = {"Accept-Encoding": ACCEPT_ENCODING}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        try:
            self.url = httpx.URL(spec.base_url + "/").join("chat/completions")
        except (httpx.InvalidURL, ValueError) as exc:
            raise JudgeError(f"judge '{spec.name}': its base_url is not a usable URL "
                             f"({self.shown(str(exc))})") from None
        self.clients: list[Any] = []

    def shown(self, text: str) -> str:
        return server_text(text, self.secrets)

    # -- opening and closing --

    def __enter__(self) -> Caller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing stays open between runs (``async with`` closes its pool); kept for
        symmetry with the context manager."""

    async def __aenter__(self) -> Caller:
        # one client of one keep-alive connection per request in flight, taken from a queue
        # of free ones: httpcore's pool looks over all of its connections for every request
        # (at 32 connections 4 ms a call on 2 cores, against 1.3 ms so; bench_judging.py),
        # and the clients share one TLS context (loading the CA bundle takes 60 ms)
        httpx, n = self.httpx, self.spec.concurrency
        verify = httpx.create_ssl_context() if self.transport is None else True
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.clients = [httpx.AsyncClient(headers=self.headers, timeout=self.spec.timeout,
                                          transport=self.transport, verify=verify, limits=one)
                        for _ in range(n)]
        self.free: asyncio.Queue = asyncio.Queue()
        for client in self.clients:
            self.free.put_nowait(client)
        return self

    async def __aexit__(self, *exc: object) -> None:
        clients, self.clients = self.clients, []
        await asyncio.gather(*(client.aclose() for client in clients))

    def ask_one(self, messages: list[dict[str, str]]) -> Reply:
        """One request, retries and all, on an event loop of its own."""
        async def one() -> Reply:
            async with self:
                return await self.ask(messages)

        return asyncio.run(one())

    # -- asking --

    async def ask(self, messages: list[dict[str, str]]) -> Reply:
        body: dict[str, Any] = {"model": self.spec.model, "messages": messages,
                                "temperature": self.spec.temperature}
        if self.spec.max_tokens is not None:
            body["max_tokens"] = self.spec.max_tokens
        last = _Again("")
        for attempt in range(self.spec.retries + 1):
            if attempt:
                await self.sleep(self._wait(attempt, last))
            try:
                got = await asyncio.wait_for(self._attempt(body), self.spec.timeout)
            except asyncio.TimeoutError:
                got = _Again(f"no complete answer within {self.spec.timeout:g} s")
            except CallFailed as exc:  # this request's own fault: not tried again
                exc.requests = attempt + 1
                raise
            if isinstance(got, Reply):
                return replace(got, requests=attempt + 1)
            last = got
        why = last.why
        if last.asked is not None:
            why += (f" (Retry-After {last.asked:g} s" + (
                f"; irbench waits at most {RETRY_AFTER_CAP:g} s, RETRY_AFTER_CAP)"
                if last.asked > RETRY_AFTER_CAP else ")"))
        failed = CallFailed(f"{why} (after {self.spec.retries + 1} attempts)")
        failed.requests = self.spec.retries + 1
        raise failed

    def _wait(self, attempt: int, last: _Again) -> float:
        if last.asked is not None:
            return min(last.asked, RETRY_AFTER_CAP)
        return self.spec.backoff * 2 ** (attempt - 1)

    async def _attempt(self, body: dict[str, Any]) -> Reply | _Again:
        start = time.perf_counter()
        httpx = self.httpx
        client = await self.free.get()
        try:
            async with client.stream("POST", self.url, json=body) as response:
                status = response.status_code
                if status < 400:
                    raw = await self._body(response, MAX_RESPONSE_BYTES, strict=True)
                    return self._answer(raw, time.perf_counter() - start)
                return self._refused(response, await self._body(response, MAX_ERROR_BYTES))
        except httpx.TimeoutException:
            return _Again(f"no answer within {self.spec.timeout:g} s")
        except httpx.HTTPError as exc:  # a connection refused, dropped, a broken protocol
            return _Again(f"connection failed ({type(exc).__name__}: {self.shown(str(exc))})")
        finally:
            self.free.put_nowait(client)

    async def _body(self, response: Any, cap: int, strict: bool = False) -> bytes:
        """The body, decompressed, each of its sizes within ``cap``; ``strict``: more fails
        the request (CallFailed), else what is past the cap is dropped."""
        try:
            declared = int(response.headers.get("content-length", ""))
        except ValueError:
            declared = -1
        if strict and declared > cap:
            raise CallFailed(f"the answer is {declared:,} bytes, over irbench's cap of "
                             f"{cap:,} (MAX_RESPONSE_BYTES)")
        if response.is_stream_consumed:  # read (and decoded) by the transport: a mock's
            if strict and len(response.content) > cap:
                raise CallFailed(f"the answer is over irbench's cap of {cap:,} bytes "
                                 "(MAX_RESPONSE_BYTES)")
            return bytes(response.content[:cap])
        try:
            inflater = _Inflater(response.headers.get("content-encoding", ""), self.shown)
        except CallFailed:
            if strict:
                raise
            return b""  # an error's body irbench cannot read: its status speaks
        parts: list[bytes] = []
        sent = kept = 0
        async for chunk in response.aiter_raw():
            sent += len(chunk)
            part = inflater.feed(chunk, cap - kept + 1)
            kept += len(part)
            parts.append(part)
            if sent > cap or kept > cap:
                if strict:
                    raise CallFailed(f"the answer is over irbench's cap of {cap:,} bytes "
                                     f"({'as sent' if sent > cap else 'decompressed'}; "
                                     "MAX_RESPONSE_BYTES): reading stopped")
                break
        return b"".join(parts)[:cap]

    def _refused(self, response: Any, raw: bytes) -> _Again:
        status = response.status_code
        if status == 429:
            asked = _retry_after(response.headers.get("retry-after"))
            return _Again("429 rate limit", asked)
        if status >= 500 or status == 408:
            return _Again(f"server error {status}")
        said = self.shown(_message(raw, response.reason_phrase))
        if status in FATAL:
            raise JudgeError(f"judge '{self.spec.name}': {self.spec.base_url} answered "
                             f"{status} ({said}); check its base_url, model"
                             + (f" and the key in {self.spec.api_key_env}"
                                if self.spec.api_key_env else " and whether it needs a key "
                                "(api_key_env)"))
        # this request's own fault (too long for the model, say)
        raise CallFailed(f"refused with {status} ({said})")

    def _answer(self, raw: bytes, seconds: float) -> Reply | _Again:
        try:
            data = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("content is not text")
            usage = data.get("usage") or {}
            if not isinstance(usage, dict):
                raise TypeError("usage is not an object")
        except RecursionError:
            return _Again("malformed answer (JSON nested too deeply)")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return _Again(f"malformed answer ({type(exc).__name__}: "
                          f"{self.shown(str(exc)[:80])})")
        counts, notes = [], []
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name)
            count = token_count(value)
            if count is None:
                notes.append(f"usage {name} {self.shown(repr(value)[:40])} is not a whole "
                             f"number from 0 to 2^31: counted as 0")
            counts.append(count or 0)
        return Reply(content, counts[0], counts[1], seconds, "; ".join(notes))


class _Inflater:
    """Undoes one Content-Encoding (gzip, deflate or none), never making more than asked."""

    def __init__(self, encoding: str, shown: Callable[[str], str]):
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [e for e in names if e != "identity"]
        self.zlib: Any = None
        if not names:
            return
        if len(names) > 1 or names[0] not in ("gzip", "x-gzip", "deflate"):
            raise CallFailed(f"the answer's Content-Encoding is {shown(encoding[:60])!s}: "
                             f"irbench asks for {ACCEPT_ENCODING} only")
        self.retry_raw = names[0] == "deflate"  # deflate may come without its zlib header
        self.zlib = zlib.decompressobj(zlib.MAX_WBITS | (0 if self.retry_raw else 16))

    def feed(self, data: bytes, most: int) -> bytes:
        if self.zlib is None or not data:
            return data
        try:
            out = self.zlib.decompress(data, most)
        except zlib.error:
            if self.retry_raw:
                self.retry_raw, self.zlib = False, zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, most)
            raise CallFailed("the answer's compressed body is damaged") from None
        self.retry_raw = False
        return out


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds == seconds else None  # nan: no wait asked


def _message(raw: bytes, reason: str) -> str:
    """An error's own message: the OpenAI shape's error.message, else the body, else the
    reason phrase (unsanitised: see server_text)."""
    text = raw.decode("utf-8", "replace")
    try:
        return str(json.loads(text)["error"]["message"])
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        return text.strip() or reason


# an Authorization header, a bearer or basic credential, or a key-like field echoed back
_ECHOES = re.compile(
    r"(?i)\b(bearer|basic)(\s+)[^\s\"',;}\]]+"
    r"|\b((?:proxy-)?authorization|x-api-key|api[-_ ]?key|access[-_]token|key|token|password)"
    r"(['\"]?\s*[:=]\s*['\"]?)(?!\s*(?:bearer|basic)\b)[^\s\"',;}\]&]+")
REMOVED = "[removed]"


def server_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """A server's text made fit for a message: every occurrence of a secret (as given, and
    JSON-escaped) and every echoed credential removed, then cut to :data:`MAX_SHOWN`
    characters, then terminal escapes made inert (irbench.escaping.terminal)."""
    for secret in secrets:
        for form in {secret, json.dumps(secret)[1:-1]}:
            text = text.replace(form, REMOVED)
    text = _ECHOES.sub(lambda m: (f"{m[1]}{m[2]}" if m[1] else f"{m[3]}{m[4]}") + REMOVED,
                       text)
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + " ..."
    return terminal(text)
