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
(``docno``, ``doc_title``, ``text``, cut to the judge's ``max_document_chars``); nothing is
escaped (this is not HTML) and a name the template uses but the context lacks is an error.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

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
# the grade UMBRELA's prompt asks for: "##final score: 2" (the last one given counts)
DEFAULT_LABEL_PATTERN = r"final\s*score\s*(?:is|[:=-])?\s*\**\s*(-?\d+)"
CONTEXT_NAMES = ("query_id", "query", "title", "description", "narrative", "docno",
                 "doc_title", "text")


@dataclass(frozen=True)
class Prompt:
    """A judge's prompt: the user message template and an optional system message
    (both Jinja2), and how a grade is read from the answer."""

    user: str
    system: str = ""
    label_pattern: str = DEFAULT_LABEL_PATTERN
    labels: tuple[int, ...] = (0, 1, 2, 3)
    max_document_chars: int = 8000

    def compile(self) -> Rendering:
        return Rendering(self)


class PromptError(ValueError):
    """A template that cannot be compiled or rendered (the message says why)."""


class Rendering:
    """A compiled :class:`Prompt`: ``messages(topic, document)`` and ``grade(answer)``."""

    def __init__(self, prompt: Prompt):
        import jinja2  # 15 ms: only a config with judges compiles prompts
        from jinja2.sandbox import SandboxedEnvironment

        self.jinja2 = jinja2
        env = SandboxedEnvironment(autoescape=False, undefined=jinja2.StrictUndefined,
                                   keep_trailing_newline=True)
        try:
            self.user = env.from_string(prompt.user)
            self.system = env.from_string(prompt.system) if prompt.system else None
        except jinja2.TemplateSyntaxError as exc:
            raise PromptError(f"line {exc.lineno}: {exc.message}") from None
        self.pattern = re.compile(prompt.label_pattern, re.I)
        self.labels = frozenset(prompt.labels)
        self.limit = prompt.max_document_chars

    def messages(self, topic: dict[str, str], docno: str, doc_title: str, text: str
                 ) -> list[dict[str, str]]:
        """The chat messages for one (topic, document)."""
        context = {"query_id": topic["query_id"], "query": topic.get("title", ""),
                   "title": topic.get("title", ""),
                   "description": topic.get("description", ""),
                   "narrative": topic.get("narrative", ""), "docno": docno,
                   "doc_title": doc_title, "text": text[:self.limit]}
        try:
            out = [{"role": "user", "content": self.user.render(context)}]
            if self.system is not None:
                out.insert(0, {"role": "system", "content": self.system.render(context)})
        except self.jinja2.TemplateError as exc:  # an undefined name is one too
            raise PromptError(str(exc)) from None
        return out

    def grade(self, answer: str) -> int | None:
        """The grade the answer gives (the last one matched), or None if there is none or it
        is not one of the judge's labels."""
        found = self.pattern.findall(answer)
        if not found:
            return None
        try:
            value = int(found[-1] if isinstance(found[-1], str) else found[-1][0])
        except ValueError:
            return None
        return value if value in self.labels else None


def request_sha256(messages: list[dict[str, str]], temperature: float,
                   max_tokens: int | None) -> str:
    """The sha256 of a request as the model sees it (messages and sampling settings, as
    canonical JSON; the model is keyed beside it): the cache key of its answer."""
    payload = {"messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
