"""What a model judge is asked and how its answer becomes a grade.

The default prompt is UMBRELA's zero-shot four-level prompt (Upadhyay, Pradeep, Thakur,
Craswell and Lin, "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing RELevance
Assessor", 2024; https://github.com/castorini/umbrela, file
src/umbrela/prompts/prompt_templates/qrel_zeroshot_bing.yaml, Apache License 2.0), itself an
adaptation of the prompt of Thomas, Spielman, Craswell and Mitra, "Large language models can
accurately predict searcher preferences" (SIGIR 2024). It was used to judge the pools of TREC
RAG 2024. Its text is kept word for word (its typos too) so that labels are comparable with
UMBRELA's; its placeholders ``{query}`` and ``{passage}`` are written here as Jinja2's.

A prompt of one's own is a Jinja2 template file rendered in a sandbox over the topic's fields
(``query_id``, ``query`` and ``title``, ``description``, ``narrative``) and the document's
(``docno``, ``doc_title``, ``text``, cut to the judge's ``max_document_chars``): the fields of
:class:`PromptContext`. Nothing is escaped (this is not HTML), a name the template uses but the
context lacks is an error, and the render is bounded in time and size (:mod:`.sandbox`); the
config check renders each template once over :data:`SAMPLE` so that its errors show there.

A grade is read from the answer by the judge's ``label_pattern`` (its first group), matched
over the answer's last :data:`MAX_ANSWER_CHARS` characters; the last label counts. A label the
model only echoes from its prompt is not its own: a match that lies inside a copy of at least
:data:`ECHO_CONTEXT` more characters of the prompt's messages (a document saying ``##final
score: 3``, quoted back) is passed over, so the document's text cannot grade itself whatever
the model echoes, and the prompt is sent as UMBRELA wrote it. A pattern of one's own is checked
against answers built to make it backtrack (:func:`check_label_pattern`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

from ..errors import IrbenchError
from .sandbox import Sandbox, SandboxError, within_time

try:
    from re import _parser as _regex_parser  # type: ignore[attr-defined,unused-ignore]  # 3.11+
except ImportError:  # Python 3.10
    import sre_parse as _regex_parser  # type: ignore[no-redef,unused-ignore]

UMBRELA = """\
Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the \
following meanings:
0 = represent that the passage has nothing to do with the query,\x20
1 = represents that the passage seems related to the query but does not answer it,\x20
2 = represents that the passage has some answer for the query, but the answer may be a bit \
unclear, or hidden amongst extraneous information and\x20
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but \
not completely, category 2 if passage presents something very important related to the entire \
topic but also has some extra information and category 3 if the passage only and entirely \
refers to the topic. If none of the above satisfies give it category 0.

Query: {{ query }}
Passage: {{ text }}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score \
(O). Final score must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score \
without providing any reasoning."""

BUILT_IN = {"umbrela": UMBRELA}
# the grade UMBRELA's prompt asks for: "##final score: 2" (the last one given counts); each
# stretch of spaces can be matched in one way only, so the match takes linear time
DEFAULT_LABEL_PATTERN = r"final\s*score\s*(?:(?:is|[:=-])\s*)?(?:\*+\s*)?(-?\d+)"
MAX_ANSWER_CHARS = 10_000  # the tail of an answer a label is looked for in
ECHO_CONTEXT = 12  # characters of the prompt around a label that make it an echo
PROBE_SECONDS = 0.1  # the longest a label pattern may take over one probe answer
# the lengths of the probe answers, slowly at first (a pattern exponential in the length)
PROBE_LENGTHS = (*range(4, 33, 4), *(int(48 * 1.5 ** k) for k in range(13)), MAX_ANSWER_CHARS)


class Context(Protocol):
    """What a prompt is rendered over: a judge task's context (:mod:`.tasks`), whose
    ``names()`` are the names its templates see."""

    def names(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class PromptContext:
    """The names a prompt template sees: the topic's fields and the document's."""

    query_id: str
    query: str  # the topic's title (UMBRELA's {query})
    title: str
    description: str
    narrative: str
    docno: str
    doc_title: str
    text: str  # the document's text, cut to the judge's max_document_chars

    @classmethod
    def of(cls, topic: Mapping[str, str], docno: str, doc_title: str, text: str,
           limit: int) -> PromptContext:
        title = topic.get("title", "")
        return cls(query_id=topic["query_id"], query=title, title=title,
                   description=topic.get("description", ""),
                   narrative=topic.get("narrative", ""), docno=docno, doc_title=doc_title,
                   text=text[:limit])

    def names(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


CONTEXT_NAMES = tuple(f.name for f in fields(PromptContext))
# what the config check renders each template over (its text as long as the judge allows)
SAMPLE = PromptContext(query_id="1", query="a sample topic", title="a sample topic",
                       description="A sample description.", narrative="A sample narrative.",
                       docno="DOC-1", doc_title="A sample document", text="")


@dataclass(frozen=True)
class Prompt:
    """A judge's prompt: the user message template and an optional system message
    (both Jinja2), and how a grade is read from the answer. ``source``: where the user
    template came from (a built-in's name or the file), named in errors."""

    user: str
    system: str = ""
    label_pattern: str = DEFAULT_LABEL_PATTERN
    labels: tuple[int, ...] = (0, 1, 2, 3)
    max_document_chars: int = 8000
    source: str = ""

    def compile(self) -> Rendering:
        return Rendering(self)


class PromptError(IrbenchError, ValueError):
    """A prompt template that cannot be compiled or rendered within the limits, or a label
    pattern that cannot be used (the message names which and says why; ``key``: the judge's
    setting at fault, ``prompt``, ``system`` or ``label_pattern``)."""

    exit_code = 2

    def __init__(self, message: str, key: str = "prompt"):
        super().__init__(message)
        self.key = key

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.key))


class Rendering:
    """A compiled :class:`Prompt`: ``messages(topic, document)`` and ``grade(answer,
    messages)``."""

    def __init__(self, prompt: Prompt):
        self.sandbox = Sandbox()
        self.names = {"user": f"the prompt template {prompt.source or ''}".rstrip(),
                      "system": "the system message template"}
        self.user = self._compiled("user", prompt.user)
        self.system = self._compiled("system", prompt.system) if prompt.system else None
        check_label_pattern(prompt.label_pattern)
        self.pattern = re.compile(prompt.label_pattern, re.I)
        self.labels = frozenset(prompt.labels)
        self.limit = prompt.max_document_chars

    def _compiled(self, role: str, source: str) -> Any:
        try:
            return self.sandbox.compile(source)
        except SandboxError as exc:
            raise PromptError(f"{self.names[role]}: {exc}", role.replace("user", "prompt")
                              ) from None

    def messages(self, topic: Mapping[str, str], docno: str, doc_title: str, text: str
                 ) -> list[dict[str, str]]:
        """The chat messages for one (topic, document)."""
        return self.render(PromptContext.of(topic, docno, doc_title, text, self.limit))

    def render(self, context: Context) -> list[dict[str, str]]:
        """The chat messages over ``context``."""
        names = context.names()
        out = [{"role": "user", "content": self._rendered("user", self.user, names)}]
        if self.system is not None:
            out.insert(0, {"role": "system",
                           "content": self._rendered("system", self.system, names)})
        return out

    def _rendered(self, role: str, template: Any, names: dict[str, str]) -> str:
        try:
            return self.sandbox.render(template, names)
        except SandboxError as exc:
            raise PromptError(f"{self.names[role]}: {exc}", role.replace("user", "prompt")
                              ) from None

    def try_sample(self, sample: Context = SAMPLE) -> None:
        """Render the templates once over ``sample`` (a judge task's; :data:`SAMPLE` for
        relevance), its ``text`` as long as the judge sends: a PromptError if they cannot
        be."""
        words = "A sample passage of the document. " * (self.limit // 34 + 1)
        if "text" in sample.names():
            sample = replace(sample, text=words[:self.limit])  # type: ignore[type-var]
        self.render(sample)

    def grade(self, answer: str, messages: Sequence[Mapping[str, Any]] = ()) -> int | None:
        """The grade the answer gives (the last label in its tail that is not an echo of
        ``messages``, the request's), or None if there is none or it is not one of the
        judge's labels."""
        found = last_label(self.pattern, answer, messages)
        if found is None:
            return None
        try:
            value = int(found.group(1))
        except (ValueError, TypeError):
            return None
        return value if value in self.labels else None


def last_label(pattern: re.Pattern, answer: str, messages: Sequence[Mapping[str, Any]] = ()
               ) -> re.Match | None:
    """The last match of ``pattern`` in the answer's last :data:`MAX_ANSWER_CHARS` characters
    that is not an echo of ``messages`` (the request's), or None: how every judge task finds
    the label its answer gives."""
    tail = answer[-MAX_ANSWER_CHARS:]
    prompt = "\x00".join(_folded(m.get("content")) for m in messages
                         if isinstance(m.get("content"), str))
    for found in reversed(list(pattern.finditer(tail))):
        if prompt and _echoed(tail, found.start(), found.end(), prompt):
            continue
        return found
    return None


def _folded(text: Any) -> str:
    """Text compared for echoes: whitespace runs as one space, case folded."""
    return " ".join(str(text).split()).casefold()


def _echoed(answer: str, start: int, end: int, prompt: str) -> bool:
    """Whether ``answer[start:end]`` lies inside a copy of the (folded) ``prompt`` reaching
    at least :data:`ECHO_CONTEXT` characters beyond it (looked for within a few times that
    many characters on each side)."""
    core = len(_folded(answer[start:end]))
    if core == 0 or _folded(answer[start:end]) not in prompt:
        return False
    a, b = start, end

    def gain() -> int:
        return len(_folded(answer[a:b])) - core

    while a > max(0, start - 4 * ECHO_CONTEXT) and gain() < ECHO_CONTEXT \
            and _folded(answer[a - 1:b]) in prompt:
        a -= 1
    while b < min(len(answer), end + 4 * ECHO_CONTEXT) and gain() < ECHO_CONTEXT \
            and _folded(answer[a:b + 1]) in prompt:
        b += 1
    return gain() >= ECHO_CONTEXT


@functools.lru_cache(maxsize=64)
def check_label_pattern(pattern: str) -> None:
    """A PromptError if ``pattern`` is not a regular expression whose first group is the
    grade, or if matching it (as grading does, case-insensitively) against an answer of up to
    :data:`MAX_ANSWER_CHARS` characters built to make it backtrack (its own text and long runs
    of the characters it repeats) takes longer than :data:`PROBE_SECONDS`."""
    try:
        compiled = re.compile(pattern, re.I)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        raise PromptError(f"not a regular expression ({exc})", "label_pattern") from None
    if compiled.groups < 1:
        raise PromptError("a regular expression whose first group is the grade",
                          "label_pattern")
    if pattern == DEFAULT_LABEL_PATTERN:
        return  # linear: tested
    for probe in _probes(pattern):
        for length in PROBE_LENGTHS:
            text = probe(length)
            began = time.monotonic()
            try:
                within_time(PROBE_SECONDS * 2, functools.partial(compiled.findall, text))
            except Exception:  # OutOfTime, or an error of matching it
                pass
            else:
                if time.monotonic() - began <= PROBE_SECONDS:
                    continue
            raise PromptError(
                f"the label pattern takes over {PROBE_SECONDS:g} s to match an answer of "
                f"{len(text):,} characters ({text[:40]!r}...): it backtracks catastrophically "
                "(write it without nested or adjacent repeats that can match the same "
                "characters, e.g. \\s*(?:x\\s*)? rather than \\s*x?\\s*)", "label_pattern")


def _probes(pattern: str) -> list[Callable[[int], str]]:
    """Answers of a given length that make a backtracking pattern slow: the text that leads
    to each of its repeats followed by a long run of a character the repeat takes, and its
    own text repeated."""
    parsed = _regex_parser.parse(pattern)
    found: list[tuple[str, str]] = []
    whole = _walk(list(parsed), "", found)
    runs = {(prefix, char) for prefix, chars in found for char in chars}
    probes: list[Callable[[int], str]] = [functools.partial(_run, prefix, char)
                                          for prefix, char in sorted(runs)]
    if whole:
        probes.append(functools.partial(_repeated, whole))
    return probes


def _run(prefix: str, char: str, length: int) -> str:
    return (prefix + char * length + "\x00")[:max(length, len(prefix) + 1)]


def _repeated(whole: str, length: int) -> str:
    return (whole[:-1] * (length // max(1, len(whole) - 1) + 1))[:length]


_CATEGORIES = {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a",
               "CATEGORY_NOT_DIGIT": "a", "CATEGORY_NOT_SPACE": "a", "CATEGORY_NOT_WORD": " "}


def _chars(items: Any) -> str:
    """Characters that ``items`` (a parsed pattern) can match."""
    out = ""
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out += chr(av)
        elif name in ("NOT_LITERAL", "ANY"):
            out += " a"
        elif name == "CATEGORY":
            out += _CATEGORIES.get(str(av), "a")
        elif name == "RANGE":
            out += chr(av[0])
        elif name == "IN":
            out += _chars(av)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            out += _chars(av[2])
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            out += _chars(av[-1])
        elif name == "BRANCH":
            out += "".join(_chars(b) for b in av[1])
    return "".join(dict.fromkeys(out))


def _walk(items: Any, prefix: str, found: list[tuple[str, str]]) -> str:
    """The shortest text ``items`` match (about), noting each repeat with the text before
    it and the characters it takes in ``found``."""
    text = ""
    for op, av in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            found.append((prefix + text, _chars(av[2])))
            inner = _walk(list(av[2]), prefix + text, found)
            text += inner * min(av[0], 64)
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            text += _walk(list(av[-1]), prefix + text, found)
        elif name == "BRANCH":
            first = [_walk(list(b), prefix + text, found) for b in av[1]]
            text += first[0] if first else ""
        elif name not in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF", "GROUPREF_EXISTS"):
            text += _chars([(op, av)])[:1]
    return text


def request_sha256(messages: list[dict[str, str]], temperature: float,
                   max_tokens: int | None, task: str = "relevance", sample: int = 0) -> str:
    """The sha256 of a request as the model sees it (messages and sampling settings, as
    canonical JSON; the model is keyed beside it): the cache key of its answer. A judge task
    other than relevance is keyed too (its parser reads the answer otherwise); relevance is
    not, so that the answers cached before tasks are found again. ``sample``: which of a
    judge's ``samples`` of the request (:mod:`.votes`), keyed from the second on (the first
    is the request of a judge without samples)."""
    payload: dict[str, Any] = {"messages": messages, "temperature": temperature,
                               "max_tokens": max_tokens}
    if task != "relevance":
        payload["task"] = task
    if sample:
        payload["sample"] = sample
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vote_sha256(requests: Sequence[str], how: str) -> str:
    """The key of the vote ``how`` of samples whose request sha256s are ``requests`` (in
    sample order): the ``prompt_sha256`` of the label it gives, apart from any request's (a
    judge asking another number of samples, or voting otherwise, gives another label)."""
    text = json.dumps({"requests": list(requests), "vote": how}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
