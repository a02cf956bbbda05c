"""Answer judgments prepared for scoring answer runs: support labels (NIST's citation
judgments) and nugget assignments (nuggetizer's), as the judgment kinds ``support``,
``support_shared`` and ``nuggets`` of :data:`irbench.judgments.KINDS`.

``rank(answers)`` joins an :class:`~irbench.answers.AnswerRun` with the judgments over the
set's topics (every topic a label or an assignment names, in byte order) and gives the
:class:`~irbench.answers.scored.ScoredAnswers` the answer measures compute from. A run is
found in the judgments by its run id (the answers' ``run_id``), else by its system name.
``has_run(answers)`` says whether the judgments know the run at all (NIST judged some runs
only: the others get no value on the set rather than zeros).

``adhoc`` (what campaign checks, counts and pools read of any set): for support labels, each
cited segment of a topic at its best support label (2, 1, 0; -1 not judged); for nuggets, each
nugget of a topic (docno ``nugget-N``, its position) at 2 when vital and 1 when okay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..answers.records import AnswerRun
from ..answers.scored import AnswerNuggets, ScoredAnswers, over_topics
from ..ranked import EvalOptions, PreparedQrels
from ..trec import Qrels
from .nuggets import NuggetAssignments, PreparedNuggets, read_assignments
from .support import PreparedSupport, SupportLabels, read_support


def _best_per_pair(name: str, path: str | None, topic: np.ndarray, doc_code: np.ndarray,
                   doc_of: Callable[[np.ndarray], np.ndarray], level: np.ndarray,
                   line: np.ndarray) -> Qrels:
    """One row per (topic, doc): its highest level, at the line of its first row. Documents
    come as integer codes (sorted on whole integer columns); ``doc_of(codes)`` gives the
    docnos (bytes) of the rows kept only."""
    if len(doc_code) == 0:
        return Qrels(name=name, query_id=topic, doc_id=np.zeros(0, dtype="S1"),
                     relevance=level.astype(np.int64), line=line, path=path)
    topic_code = np.unique(topic, return_inverse=True)[1].ravel().astype(np.int64)
    key = topic_code * (int(doc_code.max()) + 1) + doc_code
    order = np.lexsort((line, key))
    k = key[order]
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    best = np.maximum.reduceat(level[order].astype(np.int64), starts)
    kept = order[starts]
    return Qrels(name=name, query_id=topic[kept], doc_id=doc_of(doc_code[kept]),
                 relevance=best, line=line[kept], path=path)


def _encoded(values: list[str]) -> Callable[[np.ndarray], np.ndarray]:
    """The docnos (bytes) of codes into ``values``."""
    def doc_of(codes: np.ndarray) -> np.ndarray:
        return np.array([values[c].encode("utf-8", "surrogatepass") for c in codes.tolist()],
                        dtype=np.bytes_)

    return doc_of


def _nugget_docnos(positions: np.ndarray) -> np.ndarray:
    """``nugget-N``: a nugget by its position in its topic's list."""
    return np.char.add(b"nugget-", positions.astype("S20"))


def _unique_topics(topic_id: np.ndarray) -> np.ndarray:
    return np.unique(topic_id) if len(topic_id) else np.zeros(0, dtype="S1")


class AnswerJudgments:
    """What the answer kinds' prepared sets share: ``rank`` takes an answer run."""

    topics: np.ndarray
    adhoc: PreparedQrels
    qrels: Qrels
    warnings: tuple[str, ...] = ()  # the reader's ``FILE:LINE: ...`` oddities that still read

    _runs: frozenset[str] = frozenset()  # the run ids the judgments name

    def run_key(self, answers: AnswerRun) -> str | None:
        """The run id under which the judgments know ``answers`` (its run id, else its
        system name), or None."""
        for key in (answers.run_id, answers.name):
            if key in self._runs:
                return key
        return None

    def has_run(self, answers: AnswerRun) -> bool:
        """Whether the judgments know ``answers`` (by run id, or by system name)."""
        return self.run_key(answers) is not None

    def rank(self, answers: AnswerRun, options: EvalOptions = EvalOptions()) -> ScoredAnswers:
        raise NotImplementedError


class PreparedSupportSet(AnswerJudgments):
    """Support labels prepared for many answer runs (``by_text``: one judgment of a sentence's
    text citing a segment serves every run that wrote it)."""

    def __init__(self, labels: SupportLabels, *, by_text: bool = False):
        self.labels = labels
        self.warnings = labels.warnings
        self.support = PreparedSupport(labels, by_text=by_text)
        self.topics = (labels.judged_topics if labels.judged_topics is not None
                       else _unique_topics(labels.topic_id))
        self.qrels = _best_per_pair(labels.name, labels.path, labels.topic_id,
                                    self.support.ref_code, _encoded(list(self.support.codes)),
                                    labels.label, labels.line)
        self.adhoc = PreparedQrels(self.qrels)
        self._runs = frozenset(labels.run_id.tolist())

    def run_key(self, answers: AnswerRun) -> str | None:
        """Labels keyed by text know every run; else as every answer judgment set does."""
        return answers.run_id if self.support.by_text else super().run_key(answers)

    def rank(self, answers: AnswerRun, options: EvalOptions = EvalOptions()) -> ScoredAnswers:
        scored = over_topics(answers, self.topics)
        key = self.run_key(answers) or answers.run_id
        view = _Keyed(scored, key)
        return replace(scored, label=self.support.labels_for(view))


class _Keyed:
    """A scored run's columns under the run id the labels use."""

    def __init__(self, scored: ScoredAnswers, run_id: str):
        self.run_id = run_id
        self.topics = scored.topics
        self.sentence_topic = scored.sentence_topic
        self.citation_offsets = scored.citation_offsets
        self.citation_ref = scored.citation_ref
        self.sentence_text = scored.sentence_text


class PreparedNuggetSet(AnswerJudgments):
    """Nugget assignments prepared for many answer runs."""

    def __init__(self, assignments: NuggetAssignments):
        self.assignments = assignments
        self.warnings = assignments.warnings
        self.nuggets = PreparedNuggets(assignments)
        self.topics = _unique_topics(assignments.topic_id)
        level = np.where(assignments.vital, 2, 1).astype(np.int64)
        self.qrels = _best_per_pair(assignments.name, assignments.path, assignments.topic_id,
                                    assignments.nugget, _nugget_docnos, level,
                                    assignments.line)
        self.adhoc = PreparedQrels(self.qrels)
        self._runs = frozenset(assignments.run_id.tolist())

    def rank(self, answers: AnswerRun, options: EvalOptions = EvalOptions()) -> ScoredAnswers:
        scored = over_topics(answers, self.topics)
        columns = self.nuggets.columns_for(self.run_key(answers) or answers.run_id,
                                           self.topics)
        return replace(scored, nuggets=AnswerNuggets(columns.offsets, columns.vital,
                                                   columns.score))


def read_support_labels(source, name: str | None = None) -> SupportLabels:
    return read_support(source, name=name)


def prepare_support(labels: SupportLabels, intent_weights=None) -> PreparedSupportSet:
    return PreparedSupportSet(labels)


def prepare_shared_support(labels: SupportLabels, intent_weights=None) -> PreparedSupportSet:
    return PreparedSupportSet(labels, by_text=True)


def support_adhoc(source, name: str | None = None) -> Qrels:
    return PreparedSupportSet(read_support(source, name=name)).qrels


def prepare_nuggets(assignments: NuggetAssignments, intent_weights=None) -> PreparedNuggetSet:
    return PreparedNuggetSet(assignments)


def nuggets_adhoc(source, name: str | None = None) -> Qrels:
    return PreparedNuggetSet(read_assignments(source, name=name)).qrels
