"""Qrels prepared once, and runs ranked once into flat columns, in trec_eval's order.

Ranking (trec_eval ``form_res_rels.c``): within a topic, documents are sorted by score
descending (as float64), ties broken by docno descending comparing raw bytes, so ``d9`` comes
before ``d10``. The rank column and the file order play no part. Then, in this order:

1. ``max_docs`` (``-M``) keeps the first N documents of each topic;
2. a docno retrieved twice for one topic is an error (or, with ``duplicates="first"``, every
   copy after the first in file order is dropped before ranking);
3. each document gets its relevance value: the qrels level if >= 0, ``-1`` when the docno is
   not in the qrels for this topic, ``-2`` when its qrels value is negative;
4. ``judged_only`` (``-J``) drops documents whose value is negative and closes up the ranks.

Which topics are evaluated: the qrels topics, in byte order. Run topics absent from the qrels are
ignored. A qrels topic absent from the run is an error unless ``complete`` (``-c``), in which case
it is ranked as trec_eval does: one document ``ceci_nest_pas_un_docno`` with score 1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable

import numpy as np

from .errors import EvaluationError, FormatError, UsageError
from .trec import Qrels, Run, _display

FAKE_DOCNO = b"ceci_nest_pas_un_docno"
NOT_IN_QRELS = -1
UNJUDGED = -2


@dataclass(frozen=True)
class EvalOptions:
    """How a run is evaluated; every field is recorded with stored scores.

    relevance_level: a document is relevant iff its level >= this (trec_eval ``-l``).
    max_docs: keep only the top N documents per topic (``-M``); None keeps all.
    judged_only: drop retrieved documents without a non-negative judgment (``-J``).
    complete: score qrels topics missing from the run as trec_eval ``-c`` does; otherwise
        a missing topic is an error (trec_eval 10.0's behaviour).
    collection_size: number of documents in the collection (``-N``), used by ``utility``.
    duplicates: ``"error"`` (trec_eval's behaviour) or ``"first"`` to keep the first copy
        in file order of a docno retrieved twice for one topic.
    """

    relevance_level: int = 1
    max_docs: int | None = None
    judged_only: bool = False
    complete: bool = False
    collection_size: int = 0
    duplicates: str = "error"

    def __post_init__(self) -> None:
        if self.relevance_level < 0:
            raise UsageError("relevance level must be >= 0")
        if self.max_docs is not None and self.max_docs < 0:
            raise UsageError("max_docs must be >= 0")
        if self.duplicates not in ("error", "first"):
            raise UsageError(f"duplicates must be 'error' or 'first', not {self.duplicates!r}")


class PreparedQrels:
    """Qrels sorted by (topic, docno) with lookup keys; built once, shared by every run."""

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        order = np.lexsort((qrels.doc_id, qrels.query_id))
        query_id = qrels.query_id[order]
        self.doc_id = qrels.doc_id[order]
        self.relevance = qrels.relevance[order]
        first = np.concatenate(([True], query_id[1:] != query_id[:-1]))
        self.topics = query_id[first]
        self.row_topic = np.cumsum(first) - 1
        self.unique_docs = np.unique(self.doc_id)
        code = np.searchsorted(self.unique_docs, self.doc_id)
        self._stride = np.int64(len(self.unique_docs) + 1)
        self.keys = self.row_topic.astype(np.int64) * self._stride + code
        judged = self.relevance >= 0
        max_level = int(self.relevance.max()) if judged.any() else 0
        max_level = max(max_level, 0)
        width = max_level + 1
        flat = self.row_topic[judged] * width + self.relevance[judged]
        counts = np.bincount(flat, minlength=len(self.topics) * width)
        self.level_counts = counts.reshape(len(self.topics), width)
        self.num_lines_rel_positive = np.bincount(
            self.row_topic, weights=self.relevance > 0, minlength=len(self.topics)
        ).astype(np.int64)

    def lookup(self, topic: np.ndarray, doc_id: np.ndarray) -> np.ndarray:
        """Relevance value of each (topic index, docno): level, -1 absent, -2 negative."""
        out = np.full(len(topic), NOT_IN_QRELS, dtype=np.int64)
        if len(topic) == 0 or len(self.unique_docs) == 0:
            return out
        code = np.searchsorted(self.unique_docs, doc_id)
        code_c = np.minimum(code, len(self.unique_docs) - 1)
        known = self.unique_docs[code_c] == doc_id
        keys = topic.astype(np.int64) * self._stride + code_c
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        hit = known & (self.keys[pos] == keys)
        rel = self.relevance[pos[hit]]
        out[hit] = np.where(rel >= 0, rel, UNJUDGED)
        return out


def _doc_hash(doc_id: np.ndarray) -> np.ndarray:
    """64-bit FNV-1a hash of each docno, computed column by column over the bytes."""
    n = len(doc_id)
    width = doc_id.dtype.itemsize
    h = np.full(n, np.uint64(14695981039346656037), dtype=np.uint64)
    if n == 0:
        return h
    matrix = np.ascontiguousarray(doc_id).view(np.uint8).reshape(n, width)
    prime = np.uint64(1099511628211)
    for j in range(width):
        h ^= matrix[:, j]
        h *= prime
    return h


def _duplicate_rows(topic: np.ndarray, doc_id: np.ndarray, order_key: np.ndarray) -> tuple:
    """Rows repeating an earlier (by ``order_key``) row's (topic, docno): (dups, their firsts)."""
    h = _doc_hash(doc_id)
    o = np.lexsort((order_key, h, topic))
    same = (topic[o][1:] == topic[o][:-1]) & (h[o][1:] == h[o][:-1])
    if not same.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    same &= doc_id[o][1:] == doc_id[o][:-1]
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    dup_pos = np.flatnonzero(same) + 1
    first_pos = starts[np.searchsorted(starts, dup_pos, side="right") - 1]
    return o[dup_pos], o[first_pos]


def _rank_order(topic: np.ndarray, score: np.ndarray, doc_id: np.ndarray) -> np.ndarray:
    """Permutation sorting by topic, score descending, docno descending (bytes)."""
    o = np.lexsort((-score, topic))
    ts, ss = topic[o], score[o]
    tie = (ts[1:] == ts[:-1]) & (ss[1:] == ss[:-1])
    if not tie.any():
        return o
    in_tie = np.zeros(len(o), dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    tied_rows = o[in_tie]
    code = np.zeros(len(o), dtype=np.int64)
    code[tied_rows] = np.unique(doc_id[tied_rows], return_inverse=True)[1] + 1
    return np.lexsort((-code, -score, topic))


class Ranked:
    """One run ranked against prepared qrels: flat per-document columns for all topics.

    Kernels read ``offsets`` (T+1 positions), ``level`` (per document) and the per-topic
    arrays; shared intermediates are cached properties, computed once per run.
    """

    def __init__(
        self,
        topics: np.ndarray,
        offsets: np.ndarray,
        level: np.ndarray,
        missing: np.ndarray,
        level_counts: np.ndarray,
        options: EvalOptions,
        runid: str,
        name: str,
        num_lines_rel_positive: np.ndarray | None = None,
    ):
        self.topics = topics
        self.offsets = offsets
        self.level = level
        self.missing = missing
        self.level_counts = level_counts
        self.options = options
        self.runid = runid
        self.name = name
        self.num_lines_rel_positive = num_lines_rel_positive
        self._cache: dict = {}

    @property
    def num_topics(self) -> int:
        return len(self.topics)

    def cached(self, key, compute: Callable):
        """Memoise a derived column under ``key`` for this run."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def at_level(self, level: int | None) -> "Ranked":
        """The same ranking with relevant meaning level >= ``level`` (None: as it is)."""
        if level is None or level == self.options.relevance_level:
            return self

        def compute() -> Ranked:
            other = Ranked(self.topics, self.offsets, self.level, self.missing,
                           self.level_counts, replace(self.options, relevance_level=level),
                           self.runid, self.name, self.num_lines_rel_positive)
            for name in ("num_ret", "topic_index", "rank", "judged"):  # level-independent
                if name in self.__dict__:
                    other.__dict__[name] = self.__dict__[name]
            return other

        return self.cached(("at_level", level), compute)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def topic_index(self) -> np.ndarray:
        return np.repeat(np.arange(self.num_topics), self.num_ret)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of each document within its topic."""
        return np.arange(len(self.level), dtype=np.int64) - self.offsets[self.topic_index] + 1

    @cached_property
    def rel(self) -> np.ndarray:
        return self.level >= self.options.relevance_level

    @cached_property
    def judged(self) -> np.ndarray:
        return self.level >= 0

    @cached_property
    def num_rel(self) -> np.ndarray:
        return self.level_counts[:, self.options.relevance_level :].sum(axis=1)

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Judged non-relevant documents in the qrels (0 <= level < relevance level)."""
        return self.level_counts[:, : self.options.relevance_level].sum(axis=1)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Relevant documents at or above each rank, within its topic."""
        return segment_cumsum(self.rel.astype(np.int64), self.offsets)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.per_topic_sum(self.rel)

    def per_topic_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum ``values`` (per document) within each topic, optionally only where ``mask``."""
        weights = values.astype(np.float64) if values.dtype != np.float64 else values
        if mask is None:
            return np.bincount(self.topic_index, weights=weights, minlength=self.num_topics)
        return np.bincount(
            self.topic_index[mask], weights=weights[mask], minlength=self.num_topics
        )

    def per_topic_count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.topic_index[mask], minlength=self.num_topics)

    def per_topic_max(self, values: np.ndarray, initial: float = 0.0) -> np.ndarray:
        out = np.full(self.num_topics, initial, dtype=np.float64)
        np.maximum.at(out, self.topic_index, values)
        return out


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum restarting at every segment start."""
    cs = np.cumsum(values)
    if len(cs) == 0:
        return cs
    counts = np.diff(offsets)
    base = np.concatenate(([0], cs))[offsets[:-1]]
    return cs - np.repeat(base, counts)


def segment_reverse_cummax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each position, the maximum of ``values`` from there to its segment's end.

    Exact for any floats: values are replaced by their order codes, and earlier segments are
    lifted above later ones, so one running maximum over the reversed integer codes never
    carries a value across a segment boundary.
    """
    n = len(values)
    if n == 0:
        return values.astype(np.float64)
    distinct, code = np.unique(values, return_inverse=True)
    counts = np.diff(offsets)
    width = np.int64(len(distinct))
    lift = np.repeat(np.arange(len(counts), 0, -1, dtype=np.int64), counts) * width
    best = np.maximum.accumulate((code + lift)[::-1])[::-1] - lift
    return distinct[best]


def rank_run(run: Run, prepared: PreparedQrels, options: EvalOptions = EvalOptions()) -> Ranked:
    """Rank ``run`` against ``prepared`` qrels under ``options`` (see the module docstring)."""
    topics = prepared.topics
    num_topics = len(topics)
    pos = np.minimum(np.searchsorted(topics, run.query_id), num_topics - 1)
    keep = topics[pos] == run.query_id
    topic = pos[keep]
    doc_id = run.doc_id[keep]
    score = run.score[keep]
    line = run.line[keep]

    if options.duplicates == "first" and len(topic):
        dups, _ = _duplicate_rows(topic, doc_id, line)
        if len(dups):
            mask = np.ones(len(topic), dtype=bool)
            mask[dups] = False
            topic, doc_id, score, line = topic[mask], doc_id[mask], score[mask], line[mask]

    missing = np.bincount(topic, minlength=num_topics) == 0
    if missing.any():
        if not options.complete:
            names = [_display(t) for t in topics[missing]]
            shown = ", ".join(f"'{n}'" for n in names[:10])
            more = f" and {len(names) - 10} more" if len(names) > 10 else ""
            raise EvaluationError(
                f"{run.path or run.name}: run has no results for {len(names)} qrels "
                f"topic{'s' if len(names) != 1 else ''}: {shown}{more} "
                "(use -c / complete=True to score missing topics as trec_eval -c does)"
            )
        fake = np.flatnonzero(missing)
        topic = np.concatenate((topic, fake))
        width = max(doc_id.dtype.itemsize if len(doc_id) else 1, len(FAKE_DOCNO))
        doc_id = np.concatenate((doc_id.astype(f"S{width}"), np.full(len(fake), FAKE_DOCNO)))
        score = np.concatenate((score, np.ones(len(fake))))
        line = np.concatenate((line, np.zeros(len(fake), dtype=line.dtype)))

    order = _rank_order(topic, score, doc_id)
    topic, doc_id, line = topic[order], doc_id[order], line[order]
    counts = np.bincount(topic, minlength=num_topics)
    offsets = np.concatenate(([0], np.cumsum(counts)))

    if options.max_docs is not None:
        rank = np.arange(len(topic)) - offsets[topic] + 1
        cut = rank <= options.max_docs
        topic, doc_id, line = topic[cut], doc_id[cut], line[cut]

    if options.duplicates == "error" and len(topic):
        dups, firsts = _duplicate_rows(topic, doc_id, line)
        if len(dups):
            path = run.path or run.name
            order_d = np.argsort(line[dups], kind="stable")
            problems = [
                f"{path}:{int(line[d])}: docno '{_display(doc_id[d])}' retrieved twice for "
                f"topic '{_display(topics[topic[d]])}' (first at line {int(line[f])}); "
                "use --duplicates first to keep the first occurrence"
                for d, f in zip(dups[order_d], firsts[order_d])
            ]
            raise FormatError(problems)

    level = prepared.lookup(topic, doc_id)
    if options.judged_only:
        judged = level >= 0
        topic, level = topic[judged], level[judged]
    counts = np.bincount(topic, minlength=num_topics)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Ranked(
        topics=topics,
        offsets=offsets,
        level=level,
        missing=missing,
        level_counts=prepared.level_counts,
        options=options,
        runid=run.runid,
        name=run.name,
        num_lines_rel_positive=prepared.num_lines_rel_positive,
    )
