"""One chat-completions call, with retries: the only part of a model irbench sees.

Speaks the OpenAI-compatible protocol (``POST {base_url}/chat/completions``) that vLLM,
Ollama, llama.cpp's server and the hosted APIs share, through httpx (the ``judge`` extra):
one connection pool per judge, keep-alive, timeouts. A 429 (waiting what its Retry-After
says, else the backoff), a 5xx, a timeout, a dropped connection, an answer that is not JSON
or has no choices: tried again up to the judge's ``retries``, waiting ``backoff`` x 2^attempt
seconds. A 401, 403, 404 or 405 is the judge's configuration (a key, a model name, a URL) and
stops judging (:class:`~irbench.errors.JudgeError`); another 4xx is that request's own fault
(a document too long for the model, say): it fails alone, not retried.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import JudgeError
from .spec import JudgeSpec

FATAL = (401, 403, 404, 405)  # the judge's key, model or URL: no request can succeed
RETRY_AFTER_CAP = 300.0  # seconds: a server asking for longer is waited on this long


@dataclass(frozen=True)
class Reply:
    """A model's answer and what it cost."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class CallFailed(Exception):
    """One request that failed after every retry (why in the message); others may go on."""


class Caller:
    """Asks one judge's model; thread-safe (httpx's client is), for the judge's
    concurrency. ``sleep`` is how it waits between attempts (tests pass their own)."""

    def __init__(self, spec: JudgeSpec, sleep: Callable[[float], None] = time.sleep):
        try:
            import httpx  # the judge extra: only judging needs it
        except ModuleNotFoundError:
            raise JudgeError("model judges need the judge extra: pip install "
                             "'irbench[judge]' (httpx)") from None

        self.spec, self.sleep, self.httpx = spec, sleep, httpx
        key = spec.api_key()
        if spec.api_key_env and not key:
            raise JudgeError(f"judge '{spec.name}': the environment variable "
                             f"{spec.api_key_env} (its API key) is not set")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limits = httpx.Limits(max_connections=spec.concurrency,
                              max_keepalive_connections=spec.concurrency)
        self.client = httpx.Client(base_url=spec.base_url + "/", headers=headers,
                                   timeout=spec.timeout, limits=limits)

    def close(self) -> None:
        self.client.close()

    def ask(self, messages: list[dict[str, str]]) -> Reply:
        body: dict[str, Any] = {"model": self.spec.model, "messages": messages,
                                "temperature": self.spec.temperature}
        if self.spec.max_tokens is not None:
            body["max_tokens"] = self.spec.max_tokens
        why = ""
        for attempt in range(self.spec.retries + 1):
            if attempt:
                self.sleep(self._wait(attempt, why))
            start = time.perf_counter()
            try:
                response = self.client.post("chat/completions", json=body)
            except self.httpx.TimeoutException:
                why = f"no answer within {self.spec.timeout:g} s"
                continue
            except self.httpx.TransportError as exc:
                why = f"connection failed ({type(exc).__name__}: {exc})"
                continue
            reply, why = self._read(response, time.perf_counter() - start)
            if reply is not None:
                return reply
        raise CallFailed(f"{why} (after {self.spec.retries + 1} attempts)")

    def _wait(self, attempt: int, why: str) -> float:
        if why.startswith("429 retry-after "):
            return min(float(why.split()[2]), RETRY_AFTER_CAP)
        return self.spec.backoff * 2 ** (attempt - 1)

    def _read(self, response: Any, seconds: float) -> tuple[Reply | None, str]:
        status = response.status_code
        if status == 429:
            after = _retry_after(response.headers.get("retry-after"))
            return None, (f"429 retry-after {after}" if after is not None else "429 rate limit")
        if status >= 500 or status == 408:
            return None, f"server error {status}"
        if status in FATAL:
            raise JudgeError(f"judge '{self.spec.name}': {self.spec.base_url} answered "
                             f"{status} ({_message(response)}); check its base_url, model"
                             + (f" and the key in {self.spec.api_key_env}"
                                if self.spec.api_key_env else " and whether it needs a key "
                                "(api_key_env)"))
        if status >= 400:  # this request's own fault (too long for the model, say)
            raise CallFailed(f"refused with {status} ({_message(response)})")
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"]
            usage = data.get("usage") or {}
            if not isinstance(content, str):
                raise TypeError("content is not text")
            return Reply(content, int(usage.get("prompt_tokens") or 0),
                         int(usage.get("completion_tokens") or 0), seconds), ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return None, f"malformed answer ({type(exc).__name__}: {str(exc)[:80]})"


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])[:200]
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase
