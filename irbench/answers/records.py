"""An answer run as typed records: a topic's answer (its sentences, each with its text and
citations, and its references list) and the run around it (run id, team, format, per-topic
metadata, the reader's warnings).

The run keeps its answers as :class:`~.columns.AnswerColumns` (what measures read); a topic's
:class:`TopicAnswer` is made from the columns when asked (an answer page, a test).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..ids import id_text
from .columns import AnswerColumns


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: its text, the ids it cites (resolved, in the order the run
    gave them) and, for a ``{docid: confidence}`` map, each citation's confidence."""

    text: str
    citations: tuple[str, ...]
    confidences: tuple[float, ...] | None = None
    words: int = 0


@dataclass(frozen=True)
class TopicMeta:
    """What a format says about one topic's answer beside its sentences: the line it is on,
    the topic's text as the run repeats it (RAG 2024's ``topic``, RAG 2025's
    ``metadata.narrative``), the team, the run type (RAG 2025: automatic or manual) and the
    other metadata fields the format keeps (``prompt``, ``collection_ids`` ...) as text."""

    line: int
    topic_text: str | None = None
    team: str | None = None
    run_type: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicAnswer:
    """One topic's answer."""

    topic_id: str
    sentences: tuple[Sentence, ...]
    references: tuple[str, ...]
    meta: TopicMeta


@dataclass(frozen=True, eq=False)
class AnswerRun:
    """An answer run read from one file. ``meta`` is aligned with ``columns.topics``;
    ``sentence_words`` with the sentences and ``citation_confidence`` (NaN where the format
    gives none) with ``columns.citation_ref``. ``warnings``: ``FILE:LINE: reason`` of what
    the reader accepted but a participant may want to know (a declared length that differs,
    a repeated citation dropped), the first :data:`~irbench.errors.FormatError.MAX_SHOWN`
    kept and ``warnings_more`` counting the rest."""

    path: str
    format: str
    team: str | None
    columns: AnswerColumns
    meta: tuple[TopicMeta, ...]
    sentence_words: np.ndarray
    citation_confidence: np.ndarray
    warnings: tuple[str, ...] = ()
    warnings_more: int = 0
    name: str = ""  # the system's name (the file's name when none is given)

    @property
    def run_id(self) -> str:
        return self.columns.run_id

    @property
    def runid(self) -> str:  # as a ranked run's (irbench.trec.Run.runid)
        return self.columns.run_id

    @property
    def topic_ids(self) -> list[str]:
        return [id_text(t) for t in self.columns.topics.tolist()]

    def answer(self, topic_id: str) -> TopicAnswer:
        """The answer to ``topic_id``; KeyError when the run has none."""
        key = id_text(topic_id).encode("utf-8")
        topics = self.columns.topics
        at = int(np.searchsorted(topics, key))
        if at >= len(topics) or topics[at] != key:
            raise KeyError(topic_id)
        return self._answer(at)

    def answers(self) -> Iterator[TopicAnswer]:
        """Every topic's answer, topics in sorted order."""
        for at in range(self.columns.num_topics):
            yield self._answer(at)

    def _answer(self, at: int) -> TopicAnswer:
        c = self.columns
        first, last = np.searchsorted(c.sentence_topic, [at, at + 1])
        sentences = []
        for i in range(int(first), int(last)):
            lo, hi = int(c.citation_offsets[i]), int(c.citation_offsets[i + 1])
            confidence = self.citation_confidence[lo:hi].tolist()
            given = [v for v in confidence if not math.isnan(v)]
            sentences.append(Sentence(
                text=c.sentence_text[i], citations=tuple(c.citation_ref[lo:hi].tolist()),
                confidences=tuple(confidence) if given else None,
                words=int(self.sentence_words[i])))
        lo, hi = int(c.reference_offsets[at]), int(c.reference_offsets[at + 1])
        return TopicAnswer(topic_id=id_text(c.topics[at]), sentences=tuple(sentences),
                           references=tuple(c.reference_ids[lo:hi].tolist()),
                           meta=self.meta[at])
