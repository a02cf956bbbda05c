"""The judge task ``support``: does a cited segment support a sentence of a generated answer.

Its unit is (topic, sentence text, cited segment), its labels 2 / 1 / 0 (full / partial / no
support), as NIST's support labels of TREC RAG 2024 (:mod:`irbench.judgments.support`).

The default prompt, :data:`SUPPORT`, is the support-assessment prompt of the TREC 2024 RAG
track's organisers (Thakur, Pradeep, Upadhyay, Campos, Craswell and Lin, "Support Evaluation
for the TREC 2024 RAG Track: Comparing Human versus LLM Judges", SIGIR 2025,
arXiv:2504.15205), the GPT-4o judge whose labels the paper compares with NIST's assessors.
Its text is kept word for word (trailing spaces and the blank first line too) from the
organisers' script ``support_eval/code/support_evaluation_individual_gpt4o.py`` of
``lintool/trec2024-rag`` at commit 89ce8cc5082d38377395d5b1f67cda64540fdcad (a private
repository), as published byte for byte at
https://github.com/kaisergrimlock/RAGDoll/blob/28786cd40ebd650e8ac08721b31e613bd475d9c7/tests/fixtures/upstream/trec2024-rag/support_evaluation_individual_gpt4o.py
(constant ``SUPPORT_EVAL_PROMPT``); its ``str.format`` fields ``{statement}`` and
``{citation}`` are written here as Jinja2's. As that script does, the prompt is one user
message, the statement is the sentence's text and the citation is the segment's title, ``: ``
and its text (its text alone when the collection gives it no title). The script sampled at
temperature 0.1; a judge's ``temperature`` says what irbench sends (0 unless the config says).

A template of one's own sees the fields of :class:`SupportContext`: the topic's, the
sentence (``statement``), the segment's (``docno``, ``doc_title``, ``text``, ``citation``)
and ``answer``, the whole answer the sentence belongs to. A template that uses ``answer``
(:func:`uses_answer`) is asked once per (topic, answer, sentence, segment) and its labels are
kept for each run's sentence; any other once per (topic, sentence, segment), its label
serving every run that wrote that sentence citing that segment.

An answer gives its label as the script reads it (``Full Support``, ``Partial Support``,
``No Support``, in any case, with ``_`` or ``-`` between the words), or as a lone 2, 1 or 0;
as for relevance the last label not echoed from the prompt counts (:func:`parse`), and a
judge's ``label_pattern`` may say otherwise (its first group a number or one of the words).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from .prompts import Rendering, last_label

NAME = "support"
PROMPT_NAME = "trec-rag24-support"
LABELS = (0, 1, 2)

SUPPORT = """\

In this task, you will evaluate whether each statement is supported by its corresponding \
citations.\x20
Note that the system responses may appear very fluent and well-formed, but contain slight \
inaccuracies that are not easy to discern at first glance.\x20
Pay close attention to the text. Read it carefully as you would when proofreading.

You will be provided with a statement and its corresponding citation. It may be helpful to \
ask yourself whether it is accurate to say "according to the citation" with a
statement following this phrase. Be sure to check all of the information in the statement. \
You will be given three options:

- "Full Support": All of the information in the statement is supported in the citation.
- "Partial Support": Only some of the information is supported in the citation, but other \
parts of the information are missing from the citation.
- "No Support": This citation does not support any part of the statement.

Please provide your response based on the information in the citation. If you are unsure, \
use your best judgment.\x20
Respond as either "Full Support", "Partial Support", or "No Support" with no additional \
information.

Statement: {{ statement }}

Citation: {{ citation }}

Response:
"""
PROMPTS = {PROMPT_NAME: SUPPORT}

# the script's words for the three labels (its parser looks for them, in lower case)
WORDS = {"full": 2, "partial": 1, "no": 0}
LABEL_PATTERN = r"\b(full|partial|no)[\s_-]*support\b"
_LONE = re.compile(r"[\W_]*([012])[\W_]*")


@dataclass(frozen=True)
class SupportContext:
    """The names a support prompt sees."""

    query_id: str
    query: str  # the topic's title
    title: str
    description: str
    narrative: str
    statement: str  # the sentence
    docno: str  # the cited segment's id
    doc_title: str
    text: str  # the segment's text, cut to the judge's max_document_chars
    citation: str  # "doc_title: text" as the track's script builds it (text alone untitled)
    answer: str = ""  # the whole answer the sentence belongs to (sentences joined by spaces)

    @classmethod
    def of(cls, topic: Mapping[str, str], statement: str, docno: str, doc_title: str,
           text: str, limit: int, answer: str = "") -> SupportContext:
        title = topic.get("title", "")
        text = text[:limit]
        return cls(query_id=topic["query_id"], query=title, title=title,
                   description=topic.get("description", ""),
                   narrative=topic.get("narrative", ""), statement=statement, docno=docno,
                   doc_title=doc_title, text=text, citation=citation(doc_title, text),
                   answer=answer)

    @classmethod
    def for_pair(cls, topic: Mapping[str, str], docno: str, doc_title: str, text: str,
                 limit: int) -> SupportContext:
        """The context of a (topic, document) pair, without a sentence (the registry's
        signature; support units are built by :mod:`.support_units`)."""
        return cls.of(topic, "", docno, doc_title, text, limit)

    def names(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def citation(doc_title: str, text: str) -> str:
    """The citation the track's script shows: the segment's title, ``: `` and its text."""
    return f"{doc_title}: {text}" if doc_title else text


SAMPLE = SupportContext(query_id="1", query="a sample topic", title="a sample topic",
                        description="A sample description.", narrative="A sample narrative.",
                        statement="A sample sentence of an answer.", docno="DOC-1",
                        doc_title="A sample document", text="", citation="",
                        answer="A sample answer. A sample sentence of an answer.")


def uses_answer(rendering: Rendering) -> bool:
    """Whether the prompt shows the whole answer (renders differently for two answers)."""
    one, two = (rendering.render(replace(SAMPLE, answer=a)) for a in ("one answer", "another"))
    return one != two


def parse(rendering: Rendering, answer: str, messages: Sequence[Mapping[str, Any]]
          ) -> int | None:
    """The label ``answer`` gives (see the module docstring), or None."""
    found = last_label(rendering.pattern, answer, messages)
    value: int | None
    if found is not None:
        value = label_value(found.group(1))
    else:
        lone = _LONE.fullmatch(answer.strip()[:32])
        value = int(lone.group(1)) if lone else None
    return value if value in rendering.labels else None


def label_value(text: str | None) -> int | None:
    """The label of a matched group: a whole number, or full / partial / no."""
    if text is None:
        return None
    word = text.strip().casefold()
    if re.fullmatch(r"-?\d{1,9}", word):
        return int(word)
    return WORDS.get(word)
