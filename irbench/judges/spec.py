"""A model judge as the config declares it (``judges:``), checked."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .nugget_tasks import BATCH, MAX_NUGGETS, WINDOW
from .prompts import BUILT_IN, Prompt, PromptError, check_label_pattern
from .tasks import DEFAULT_TASK, NUGGET_TASKS, TASKS, Task, unknown_task
from .votes import DEFAULT_VOTE, MAX_SAMPLES, VOTES

KEYS = ("base_url", "model", "api_key_env", "task", "prompt", "system", "labels",
        "label_pattern", "temperature", "max_tokens", "concurrency", "retries", "timeout",
        "backoff", "max_calls", "max_total_tokens", "max_document_chars",
        "reuse_answers_from", "samples", "vote", "window", "batch", "max_nuggets")
NUGGET_KEYS = {"window": WINDOW, "batch": BATCH, "max_nuggets": MAX_NUGGETS}  # and defaults
JUDGE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")  # as the config's names


@dataclass(frozen=True, kw_only=True)
class JudgeSpec:
    """One model judge speaking the OpenAI-compatible chat-completions protocol.

    ``api_key_env`` names the environment variable holding the key (read when judging,
    never stored or printed). ``prompt``: the user message template (UMBRELA's by default),
    ``prompt_name`` where it came from. ``retries`` more attempts after a 429, a 5xx, a
    timeout, a dropped connection or a malformed answer, waiting ``backoff`` x 2^attempt
    seconds (a 429's Retry-After when it gives one, at most a minute). ``timeout``: seconds
    for a whole attempt (connecting, headers and body), however slowly a server sends them.
    ``base_url`` holds no credentials, query or fragment (the config check refuses them), so it
    is safe to store and print. ``max_tokens``: the task's unless the config says (100 for a
    label; 2048 for nugget_create, whose answer is a list of up to 30 nuggets: tasks.Task).
    ``max_calls`` / ``max_total_tokens``: the budget; judging stops cleanly when it is
    spent. ``task``: what it labels, a judge task's name (:mod:`.tasks`; relevance unless the
    config says otherwise).

    A stored answer is reused when it came from the same model at the same endpoint (this
    ``base_url``); ``reuse_answers_from`` names what else may answer for this judge: other
    base_urls (answers their servers gave to a model of this name) and judge names (answers
    those judges were the first to get, whatever their server, also when the store does not
    know it: answers stored before endpoints were kept).
    """

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    prompt: Prompt = field(default_factory=lambda: Prompt(user=BUILT_IN["umbrela"]))
    prompt_name: str = "umbrela"
    temperature: float = 0.0
    max_tokens: int | None = 100
    concurrency: int = 8
    retries: int = 5
    timeout: float = 60.0
    backoff: float = 1.0
    max_calls: int | None = None
    max_total_tokens: int | None = None
    task: str = DEFAULT_TASK
    reuse_answers_from: tuple[str, ...] = ()
    samples: int = 1  # each request asked this many times, its label their vote (votes.py)
    vote: str = DEFAULT_VOTE
    # a nugget judge's segments per creation request, nuggets per importance or assignment
    # request, nuggets kept of a creation answer (AutoNuggetizer's defaults: nugget_tasks)
    window: int = WINDOW
    batch: int = BATCH
    max_nuggets: int = MAX_NUGGETS

    def settings(self) -> str:
        """What the judge is, as canonical JSON for the store: no key, only its variable's
        name; the task only when it is not relevance, ``reuse_answers_from`` only when given
        (the settings stored before either stay the same)."""
        data = asdict(self)
        if self.samples == 1:  # the settings of a judge without samples stay the same
            del data["samples"], data["vote"]
        data["prompt"] = {**data["prompt"], "source": self.prompt_name}
        if self.task == DEFAULT_TASK:
            del data["task"]
        for key, default in NUGGET_KEYS.items():  # other judges' settings stay the same
            if data[key] == default:
                del data[key]
        if not self.reuse_answers_from:
            del data["reuse_answers_from"]
        else:
            data["reuse_answers_from"] = list(self.reuse_answers_from)
        return json.dumps(data, sort_keys=True)

    @property
    def reuse_endpoints(self) -> tuple[str, ...]:
        """The base_urls of ``reuse_answers_from``."""
        return tuple(x for x in self.reuse_answers_from if _is_url(x))

    @property
    def reuse_judges(self) -> tuple[str, ...]:
        """The judge names of ``reuse_answers_from``."""
        return tuple(x for x in self.reuse_answers_from if not _is_url(x))

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None


def build_judge(name: str, value: Any, problem: Callable[[tuple, str], None],
                read_template: Callable[[tuple, str], str | None]) -> JudgeSpec | None:
    """A :class:`JudgeSpec` from the config's mapping ``value`` (at ``judges.NAME``), or None
    with every problem reported through ``problem(path, reason)``; ``read_template(path,
    value)`` reads a template file the config names (or reports why it cannot)."""
    where = ("judges", name)
    if not isinstance(value, dict):
        problem(where, "a mapping with base_url and model (and prompt, labels, ...)")
        return None
    before = _Counter(problem)
    for key in value:
        if key not in KEYS:
            before.report(where + (key,), f"unknown key ({', '.join(KEYS)})")
    for key in ("base_url", "model"):
        if not isinstance(value.get(key), str) or not value.get(key, "").strip():
            before.report(where + (key,), "required: a non-empty string")
    url = value.get("base_url")
    if isinstance(url, str) and url.strip():
        wrong = base_url_problem(url)
        if wrong:
            before.report(where + ("base_url",), wrong)
    env = value.get("api_key_env")
    if env is not None and not (isinstance(env, str) and re.fullmatch(r"[A-Za-z_]\w*", env)):
        before.report(where + ("api_key_env",), "the name of an environment variable (the "
                                                "key itself never goes in a config)")
    numbers = {key: _number(value, key, where, before, kind) for key, kind in (
        ("temperature", float), ("max_tokens", int), ("concurrency", int), ("retries", int),
        ("timeout", float), ("backoff", float), ("max_calls", int),
        ("max_total_tokens", int), ("max_document_chars", int))}
    task = _task(value, where, before)
    if task is None:
        return None
    reuse = _reuse(name, value, where, before)
    samples = _samples(value, where, before, task)
    for key in NUGGET_KEYS:
        if key in value and task.name not in NUGGET_TASKS:
            before.report(where + (key,), f"a nugget judge's setting (task: one of "
                          f"{', '.join(NUGGET_TASKS)}), not task '{task.name}''s")
        elif (got := _number(value, key, where, before, int)) is not None:
            numbers[key] = got
    prompt = _prompt(value, where, before, read_template, numbers.get("max_document_chars"),
                     task)
    if before.count or prompt is None:
        return None
    given = {k: v for k, v in numbers.items() if v is not None and k != "max_document_chars"}
    given.setdefault("max_tokens", task.max_tokens)  # the task's (tasks.Task.max_tokens)
    return JudgeSpec(name=name, base_url=str(url).rstrip("/"), model=value["model"],
                     api_key_env=env, prompt=prompt[0], prompt_name=prompt[1],
                     task=task.name, reuse_answers_from=reuse, **samples, **given)


def _is_url(entry: str) -> bool:
    return "://" in entry


def _reuse(name: str, value: dict, where: tuple, out: _Counter) -> tuple[str, ...]:
    """``reuse_answers_from``: a list of judge names and base_urls (each base_url as the store
    keeps it: no trailing /), or () with the problems reported."""
    given = value.get("reuse_answers_from", [])
    where = where + ("reuse_answers_from",)
    example = ("a list of judge names and base_urls whose answers this judge may reuse "
               "(e.g. [llama-a, http://10.0.0.5:8000/v1])")
    if not isinstance(given, list):
        out.report(where, example)
        return ()
    own = str(value.get("base_url", "")).rstrip("/")
    kept: list[str] = []
    for i, entry in enumerate(given):
        at = where + (i,)
        if not isinstance(entry, str) or not entry.strip():
            out.report(at, example)
        elif _is_url(entry):
            wrong = base_url_problem(entry)
            if wrong:
                out.report(at, f"a base_url: {wrong}")
            elif entry.rstrip("/") == own:
                out.report(at, "this judge's own base_url: its own answers are always reused")
            else:
                kept.append(entry.rstrip("/"))
        elif not JUDGE_NAME.fullmatch(entry):
            out.report(at, f"not a judge's name (letters, digits, '.', '_' and '-') nor a "
                           f"base_url (http:// or https://): {example}")
        elif entry == name:
            out.report(at, "this judge itself: its own answers are always reused")
        else:
            kept.append(entry)
    return tuple(dict.fromkeys(kept))


def base_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a judge's base_url, or None. Never quotes the URL (it
    may hold a secret): credentials, a query or a fragment are refused, pointing to
    api_key_env, so that a base_url is safe to store, print and embed in a report."""
    example = "an http:// or https:// URL (e.g. http://127.0.0.1:8000/v1)"
    if not url.isprintable() or any(c.isspace() for c in url):
        return f"{example}, without spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port  # a port that is not a number in 0-65535 raises
    except ValueError as exc:  # an unclosed [IPv6 address, a port '80:80'
        return f"{example}: it does not parse ({str(exc).split(' as ')[0]})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return example
    if "@" in parts.netloc:
        return ("holds a user name or password (user:password@): a judge's URL is stored and "
                "printed, so put the key in an environment variable and name it in "
                "api_key_env")
    if "?" in url or "#" in url:
        return ("holds a query or fragment (?... or #...): a judge's URL is stored and "
                "printed, and the query may hold a key: name the key's environment variable "
                "in api_key_env instead, and give the URL up to /v1")
    if port == 0:
        return f"{example}: port 0 is no server's"
    try:
        import httpx  # the judge extra; without it judging says so, not the config
    except ModuleNotFoundError:
        return None
    try:
        httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        return f"{example}: it does not parse as one"
    return None


class _Counter:
    def __init__(self, problem: Callable[[tuple, str], None]):
        self.problem, self.count = problem, 0

    def report(self, where: tuple, reason: str) -> None:
        self.count += 1
        self.problem(where, reason)


def _number(value: dict, key: str, where: tuple, out: _Counter, kind: type) -> Any:
    if key not in value:
        return None
    got = value[key]
    ok = isinstance(got, (int, float)) and not isinstance(got, bool)
    if kind is int:
        ok = ok and float(got).is_integer() and got >= (0 if key in ("retries",) else 1)
    else:
        ok = ok and got >= 0 and (key != "timeout" or got > 0)
    if not ok:
        out.report(where + (key,), "a whole number >= 1" if kind is int and key != "retries"
                   else "a whole number >= 0" if kind is int else "a number >= 0")
        return None
    return kind(got)


def _task(value: dict, where: tuple, out: _Counter) -> Task | None:
    """The judge's task (``task:``, default relevance), or None with the problem reported."""
    name = value.get("task", DEFAULT_TASK)
    if not isinstance(name, str) or name not in TASKS:
        out.report(where + ("task",), unknown_task(str(name)) if isinstance(name, str)
                   else f"a judge task's name ({', '.join(TASKS)})")
        return None
    return TASKS[name]


def _samples(value: dict, where: tuple, out: _Counter, task: Task) -> dict[str, Any]:
    """``samples`` (a whole number from 1 to MAX_SAMPLES; more than 1 for a task whose
    judging votes) and ``vote`` (a vote's name) as JudgeSpec's keywords; {} with the problems
    reported."""
    got: dict[str, Any] = {}
    if "samples" in value:
        n = value["samples"]
        if not (isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_SAMPLES):
            out.report(where + ("samples",), f"a whole number from 1 to {MAX_SAMPLES} (how "
                                             "many times each request is asked)")
        elif n > 1 and not task.voted:
            out.report(where + ("samples",), f"task '{task.name}' asks each request once for "
                       "now (samples with a vote: the nugget tasks)")
        else:
            got["samples"] = n
    if "vote" in value:
        how = value["vote"]
        if not isinstance(how, str) or how not in VOTES:
            out.report(where + ("vote",), "how the samples' labels make one: "
                       + "; ".join(f"{v.name} ({v.summary})" for v in VOTES.values()))
        else:
            got["vote"] = how
    return got


def _prompt(value: dict, where: tuple, out: _Counter,
            read_template: Callable[[tuple, str], str | None],
            limit: int | None, task: Task) -> tuple[Prompt, str] | None:
    source = value.get("prompt", task.prompt)
    built_in = {**BUILT_IN, **task.prompts}
    if not isinstance(source, str) or not source.strip():
        out.report(where + ("prompt",), f"a built-in prompt ({', '.join(built_in)}) or a "
                                        "template file")
        return None
    text = built_in.get(source) or read_template(where + ("prompt",), source)
    if text is None:
        return None
    system = value.get("system", task.system)
    if not isinstance(system, str):
        out.report(where + ("system",), "a string (a Jinja2 template)")
    labels = value.get("labels", list(task.labels))
    if "labels" in value and not (isinstance(labels, list) and labels and all(
            isinstance(x, int) and not isinstance(x, bool) for x in labels)
            and len(set(labels)) == len(labels)):
        out.report(where + ("labels",), "a list of distinct whole numbers (the grades)")
        labels = [0]
    pattern = value.get("label_pattern", task.label_pattern)
    if not isinstance(pattern, str):
        out.report(where + ("label_pattern",), "a regular expression whose first group "
                                               "is the grade")
        return None
    try:  # a bad pattern, then templates that fail over a sample topic and document
        check_label_pattern(pattern)
        prompt = Prompt(user=text, system=system if isinstance(system, str) else "",
                        label_pattern=pattern, labels=tuple(labels),
                        max_document_chars=limit or 8000, source=source)
        prompt.compile().try_sample(task.sample)
    except PromptError as exc:
        out.report(where + (exc.key,), str(exc))
        return None
    return prompt, source
