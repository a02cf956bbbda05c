"""An answer run as columns: what the support and nugget kernels read.

Topics are sorted (as bytes) and appear once each. Sentences of all topics lie in one column,
topic by topic in that order, each topic's in answer order; ``sentence_topic`` is each
sentence's index into ``topics``. Citations are a CSR over the sentences: sentence ``i`` cites
``citation_ref[citation_offsets[i]:citation_offsets[i + 1]]``, the segment or document ids
(whole, as the run wrote them: ``msmarco_v2.1_doc_36_1381771658#3_2852387502``) already
resolved from indexes into the topic's references. ``reference_offsets``/``reference_ids`` are
a CSR over the topics of each topic's ranked references list (empty for a format without one).

:class:`ColumnsBuilder` collects the answers in file order during the reader's one pass over
the JSON objects; :meth:`ColumnsBuilder.finish` sorts the topics and moves every column with
whole-array gathers (no loop per sentence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class AnswerColumns:
    """An answer run as numpy columns (see the module's notes)."""

    run_id: str
    topics: np.ndarray  # bytes, sorted, each once
    sentence_topic: np.ndarray  # int64 index into topics, per sentence
    sentence_text: np.ndarray  # object array of str, per sentence
    citation_offsets: np.ndarray  # int64, len sentences + 1
    citation_ref: np.ndarray  # object array of str, per citation
    reference_offsets: np.ndarray  # int64, len topics + 1
    reference_ids: np.ndarray  # object array of str, per reference

    @property
    def num_topics(self) -> int:
        return len(self.topics)

    @property
    def num_sentences(self) -> int:
        return len(self.sentence_topic)

    @property
    def num_citations(self) -> int:
        return len(self.citation_ref)

    def citation_sentence(self) -> np.ndarray:
        """Each citation's sentence (int64), aligned with ``citation_ref``."""
        counts = np.diff(self.citation_offsets)
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts)

    def sentence_offsets(self) -> np.ndarray:
        """Where each topic's sentences start (int64, len topics + 1): sentences are grouped
        by topic, so this is a CSR over the topics."""
        counts = np.bincount(self.sentence_topic, minlength=self.num_topics)
        return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def csr_take(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(new offsets, item index) of the CSR ``offsets`` with its rows taken in the order
    ``rows``: the items of the new layout are ``items[item_index]``."""
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    new = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new[1:])
    index = np.repeat(starts - new[:-1], lengths) + np.arange(new[-1], dtype=np.int64)
    return new, index


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _offsets(counts: list[int]) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
    return out


class ColumnsBuilder:
    """Answers collected in file order, one :meth:`add` per topic, into flat lists; the per
    sentence and per citation extras (words, confidences) ride along in the same order."""

    def __init__(self) -> None:
        self.topic_ids: list[bytes] = []
        self.sentence_counts: list[int] = []
        self.texts: list[str] = []
        self.words: list[int] = []
        self.citation_counts: list[int] = []
        self.cited: list[str] = []
        self.confidence: list[float] = []
        self.reference_counts: list[int] = []
        self.references: list[str] = []

    def add(self, topic_id: bytes, texts: list[str], words: list[int],
            citations: list[list[str]], confidence: list[float],
            references: list[str]) -> None:
        """One topic's answer: its sentences' texts, word counts and cited ids (one list per
        sentence), each citation's confidence (NaN when the format gives none), and its
        ranked references."""
        self.topic_ids.append(topic_id)
        self.sentence_counts.append(len(texts))
        self.texts += texts
        self.words += words
        self.citation_counts += [len(c) for c in citations]
        for cited in citations:
            self.cited += cited
        self.confidence += confidence
        self.reference_counts.append(len(references))
        self.references += references

    def finish(self, run_id: str) -> tuple[AnswerColumns, BuiltExtras]:
        """The columns (topics sorted) and the extras in the same order."""
        file_topics = (np.array(self.topic_ids, dtype=np.bytes_) if self.topic_ids
                       else np.zeros(0, dtype="S1"))
        order = np.argsort(file_topics, kind="stable").astype(np.int64)
        sentence_offsets, sentence_index = csr_take(_offsets(self.sentence_counts), order)
        citation_offsets, citation_index = csr_take(_offsets(self.citation_counts),
                                                    sentence_index)
        reference_offsets, reference_index = csr_take(_offsets(self.reference_counts), order)
        counts = np.diff(sentence_offsets)
        columns = AnswerColumns(
            run_id=run_id,
            topics=file_topics[order],
            sentence_topic=np.repeat(np.arange(len(order), dtype=np.int64), counts),
            sentence_text=_objects(self.texts)[sentence_index],
            citation_offsets=citation_offsets,
            citation_ref=_objects(self.cited)[citation_index],
            reference_offsets=reference_offsets,
            reference_ids=_objects(self.references)[reference_index])
        extras = BuiltExtras(
            topic_order=order,
            sentence_words=np.asarray(self.words, dtype=np.int64)[sentence_index],
            citation_confidence=np.asarray(self.confidence, dtype=np.float64)[citation_index])
        return columns, extras


@dataclass(frozen=True, eq=False)
class BuiltExtras:
    """What :meth:`ColumnsBuilder.finish` gives beside the columns: ``topic_order`` (the file
    position of each sorted topic), each sentence's word count and each citation's
    confidence, aligned with the columns."""

    topic_order: np.ndarray
    sentence_words: np.ndarray
    citation_confidence: np.ndarray
