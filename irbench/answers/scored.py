"""An answer run joined with one set of answer judgments, over the set's topics: what the
answer measures compute from (the counterpart of :class:`~irbench.ranked.Ranked` for ranked
runs), and an answer run's references as a ranked run (the track's retrieval task).

:class:`ScoredAnswers` holds the run's sentences and citations of the evaluated topics only
(the judgment set's topics, in byte order), re-indexed to them, with whatever the set gives:
each citation's support label, or each topic's nuggets with the run's assignments. A topic the
run did not answer has no sentence (``missing``): every answer measure gives it 0, as the
tracks count it (their mean divides by the number of topics).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..trec import Run
from .columns import AnswerColumns, csr_take
from .records import AnswerRun


@dataclass(frozen=True, eq=False)
class AnswerNuggets:
    """Each evaluated topic's nuggets (a CSR: ``offsets``, len topics + 1), each nugget's
    importance (``vital``) and its assignment ``score`` in the run's answer (1, 0.5, 0)."""

    offsets: np.ndarray
    vital: np.ndarray
    score: np.ndarray


@dataclass(frozen=True, eq=False, kw_only=True)
class ScoredAnswers:
    """One answer run over the evaluated ``topics`` (bytes, sorted): its sentences of those
    topics (``sentence_topic`` indexes ``topics``), their texts and words, the citations (a
    CSR over the sentences), each citation's support ``label`` (int8; None when the set holds
    no support labels) and the topics' ``nuggets`` (None when it holds none)."""

    name: str
    runid: str
    topics: np.ndarray
    missing: np.ndarray
    sentence_topic: np.ndarray
    sentence_text: np.ndarray
    sentence_words: np.ndarray
    citation_offsets: np.ndarray
    citation_ref: np.ndarray
    label: np.ndarray | None = None
    nuggets: AnswerNuggets | None = None

    @property
    def num_topics(self) -> int:
        return len(self.topics)

    def at_level(self, level: int | None) -> ScoredAnswers:
        """Itself: answer measures take no relevance level."""
        return self

    def restrict(self, keep: np.ndarray) -> ScoredAnswers:
        """Only the topics where ``keep`` is true (those the run answers, for the
        ``intersection`` topic mode)."""
        if keep.all():
            return self
        new_index = np.cumsum(keep) - 1
        sentences = np.flatnonzero(keep[self.sentence_topic])
        offsets, items = csr_take(self.citation_offsets, sentences)
        nuggets = self.nuggets
        if nuggets is not None:
            nugget_offsets, nugget_items = csr_take(nuggets.offsets, np.flatnonzero(keep))
            nuggets = AnswerNuggets(nugget_offsets, nuggets.vital[nugget_items],
                                    nuggets.score[nugget_items])
        return replace(self, topics=self.topics[keep], missing=self.missing[keep],
                       sentence_topic=new_index[self.sentence_topic[sentences]],
                       sentence_text=self.sentence_text[sentences],
                       sentence_words=self.sentence_words[sentences],
                       citation_offsets=offsets, citation_ref=self.citation_ref[items],
                       label=None if self.label is None else self.label[items],
                       nuggets=nuggets)


def topic_index(values: np.ndarray, sorted_topics: np.ndarray) -> np.ndarray:
    """Each of ``values``' index in ``sorted_topics`` (bytes, sorted), -1 where absent."""
    if len(sorted_topics) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_topics, values), len(sorted_topics) - 1)
    return np.where(sorted_topics[at] == values, at, -1).astype(np.int64)


def over_topics(answers: AnswerRun, topics: np.ndarray, name: str | None = None
                ) -> ScoredAnswers:
    """``answers`` over the evaluated ``topics`` (bytes, sorted): sentences of other topics
    left out, the rest re-indexed; no judgments attached yet."""
    c: AnswerColumns = answers.columns
    topics = np.asarray(topics)
    where = topic_index(c.topics, topics)  # each answered topic's place among the evaluated
    sentences = np.flatnonzero(where[c.sentence_topic] >= 0)
    offsets, items = csr_take(c.citation_offsets, sentences)
    missing = np.ones(len(topics), dtype=bool)
    missing[where[where >= 0]] = False
    return ScoredAnswers(
        name=name or answers.name, runid=c.run_id, topics=topics, missing=missing,
        sentence_topic=where[c.sentence_topic[sentences]],
        sentence_text=c.sentence_text[sentences],
        sentence_words=np.asarray(answers.sentence_words)[sentences],
        citation_offsets=offsets, citation_ref=c.citation_ref[items])


def references_run(answers: AnswerRun, name: str | None = None) -> Run:
    """The answers' references as a ranked run: each topic's references in their order (the
    first ranked first; a reference repeated in a topic's list counts at its first place),
    scored so that trec_eval's order is the list's."""
    c = answers.columns
    counts = np.diff(c.reference_offsets)
    topic = np.repeat(c.topics, counts)
    position = np.arange(len(c.reference_ids)) - np.repeat(c.reference_offsets[:-1], counts)
    doc = np.array([r.encode("utf-8", "surrogatepass") for r in c.reference_ids.tolist()],
                   dtype=np.bytes_) if len(c.reference_ids) else np.zeros(0, dtype="S1")
    keep = _first_of_each(topic, doc)
    return Run(name=name or answers.name, runid=c.run_id, query_id=topic[keep],
               doc_id=doc[keep], score=-position[keep].astype(np.float64),
               line=np.repeat(np.array([m.line for m in answers.meta], dtype=np.int64),
                              counts)[keep],
               path=answers.path)


def _first_of_each(topic: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Where each (topic, doc) pair first appears (bool mask, in order)."""
    keep = np.zeros(len(doc), dtype=bool)
    if len(doc):
        pairs = np.char.add(np.char.add(topic, b"\x00"), doc) if doc.dtype.kind == "S" else doc
        keep[np.unique(pairs, return_index=True)[1]] = True
    return keep
