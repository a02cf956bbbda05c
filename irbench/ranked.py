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

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .arrays import (
    KeyTable,
    block_order,
    doc_hash,
    duplicate_rows,
    index_type,
    lookup_topics,
    may_repeat,
    pair_order,
    segment_cumsum,
    sort_ties,
    topic_keys,
)
from .errors import DuplicateError, EvaluationError, FormatError, OptionError
from .trec import Qrels, Run, display

FAKE_DOCNO = b"ceci_nest_pas_un_docno"
MAX_LEVEL_CELLS = 1 << 26  # judgments are counted per topic and level 0..max: 512 MB at most
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
            raise OptionError("relevance level must be >= 0")
        if self.max_docs is not None and self.max_docs < 0:
            raise OptionError("max_docs must be >= 0")
        if self.duplicates not in ("error", "first"):
            raise OptionError(f"duplicates must be 'error' or 'first', not {self.duplicates!r}")


class PreparedQrels:
    """Qrels sorted by (topic, docno) with lookup keys; built once, shared by every run.

    Lookups go through 64-bit keys (topic index in the high bits, a docno hash below), sorted
    once here; every key match is confirmed by comparing the docno bytes, so a hash collision
    can never change a result (if two qrels docnos of a topic share a key, lookups fall back to
    comparing strings).
    """

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        order = pair_order(qrels.query_id, qrels.doc_id)
        self._order = order.astype(index_type(len(order)), copy=False)
        query_id = qrels.query_id[order]
        first = np.concatenate(([True], query_id[1:] != query_id[:-1])) if len(query_id) \
            else np.zeros(0, dtype=bool)
        starts = np.flatnonzero(first)
        self.topics = query_id[starts]
        del query_id
        self._sizes = np.diff(np.append(starts, len(first)))  # judgments per topic
        relevance, row_topic = self.relevance, self.row_topic
        judged = relevance >= 0
        max_level = int(relevance.max()) if judged.any() else 0
        max_level = max(max_level, 0)
        width = max_level + 1
        if len(self.topics) * width > MAX_LEVEL_CELLS:
            _raise_level_too_high(qrels, len(self.topics))
        flat = row_topic[judged] * width + relevance[judged]
        counts = np.bincount(flat, minlength=len(self.topics) * width)
        self.level_counts = counts.reshape(len(self.topics), width)
        self.num_lines_rel_positive = np.bincount(
            row_topic, weights=relevance > 0, minlength=len(self.topics)).astype(np.int64)
        del self.relevance, self.row_topic  # made again when a lookup needs them

    # The rows sorted by (topic, docno), made from the qrels when first read: qrels that only
    # give their topics and counts (a campaign of runs scored in topic shards) never hold them.
    @cached_property
    def doc_id(self) -> np.ndarray:
        return self.qrels.doc_id[self._order]

    @cached_property
    def relevance(self) -> np.ndarray:
        return self.qrels.relevance[self._order]

    @cached_property
    def row_topic(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.topics), dtype=np.int64), self._sizes)

    @cached_property
    def _table(self) -> KeyTable | None:
        """The lookup table, built on the first lookup (or by :meth:`ready`); None when two
        docnos of a topic share a key: lookups compare strings then."""
        table = KeyTable(topic_keys(self.row_topic, doc_hash(self.doc_id), len(self.topics)))
        return None if np.any(table.sorted_keys[1:] == table.sorted_keys[:-1]) else table

    def ready(self) -> PreparedQrels:
        """Build the lookup table now: before forking workers that share it (else each
        builds its own on its first lookup). Qrels that only give their rows (topic shards,
        counts) never build it: for 5,000,000 judgments it holds 220 MB."""
        _ = self._table
        return self

    @property
    def adhoc(self) -> PreparedQrels:
        """Itself: ad hoc qrels are their own ad hoc judgments (see irbench.judgments)."""
        return self

    def rank(self, run: Run, options: EvalOptions = EvalOptions()) -> Ranked:
        """:func:`rank_run` of ``run`` against these qrels (the method every prepared qrels has:
        ``irbench.judgments.diversity.PreparedDiversity`` and ``PreparedKnown`` rank with extra
        columns)."""
        return rank_run(run, self, options)

    def lookup(self, topic: np.ndarray, doc_id: np.ndarray,
               hashes: np.ndarray | None = None) -> np.ndarray:
        """Relevance value of each (topic index, docno): level, -1 absent, -2 negative.

        ``hashes`` may pass :func:`doc_hash` of ``doc_id`` when the caller already has it.
        """
        if hashes is None and self.ready()._table is not None and len(topic):
            hashes = doc_hash(doc_id)
        return self.lookup_rows(topic, hashes, doc_id.__getitem__)

    def lookup_rows(self, topic: np.ndarray, hashes: np.ndarray | None,
                    take: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """:meth:`lookup` of rows whose docnos are read through ``take(rows)`` (only the
        rows whose key matches a judgment are read: a wide docno column is never copied
        whole) with their :func:`doc_hash` ``hashes`` (None only when there are no rows)."""
        out = np.full(len(topic), NOT_IN_QRELS, dtype=np.int64)
        if len(topic) == 0 or len(self.doc_id) == 0:
            return out
        table = self.ready()._table
        if table is None:
            return self._lookup_strings(topic, take(np.arange(len(topic))), out)
        assert hashes is not None
        row = table.find(topic_keys(topic, hashes, len(self.topics)))
        cand = np.flatnonzero(row >= 0)
        row = row[cand]
        same = self.doc_id[row] == take(cand)  # the topic bits are exact
        rel = self.relevance[row[same]]
        out[cand[same]] = np.where(rel >= 0, rel, UNJUDGED)
        return out

    def _lookup_strings(self, topic: np.ndarray, doc_id: np.ndarray,
                        out: np.ndarray) -> np.ndarray:
        """:meth:`lookup` by binary search on the docno strings (no hashing)."""
        unique_docs = np.unique(self.doc_id)
        stride = np.int64(len(unique_docs) + 1)
        keys = self.row_topic.astype(np.int64) * stride + np.searchsorted(unique_docs, self.doc_id)
        code = np.minimum(np.searchsorted(unique_docs, doc_id), len(unique_docs) - 1)
        known = unique_docs[code] == doc_id
        wanted = topic.astype(np.int64) * stride + code
        pos = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        hit = known & (keys[pos] == wanted)
        rel = self.relevance[pos[hit]]
        out[hit] = np.where(rel >= 0, rel, UNJUDGED)
        return out


def rank_order(topic: np.ndarray, score: np.ndarray,
                take: Callable[[np.ndarray], np.ndarray],
                ties: Callable[[np.ndarray, np.ndarray], None] | None = None
                ) -> np.ndarray | None:
    """Permutation sorting by topic, score descending, docno descending (bytes); None when
    the rows are in that order already. ``take(rows)``: the docnos of those rows (read only
    for tied rows); or ``ties(order, tie)`` sorts the tied rows of ``order`` in place by
    docno descending (``tie[i]``: ``order[i]`` and ``order[i + 1]`` are tied), e.g. by
    integer codes in the docnos' byte order.

    Runs usually list each topic once with scores already descending: then only blocks move
    and only tied rows are sorted. Otherwise one stable (topic, -score) sort comes first.
    """
    order = block_order(topic)
    same_topic = topic[1:] == topic[:-1]
    if order is False or np.any(same_topic & (score[1:] > score[:-1])):
        order = np.lexsort((-score, topic))
        t, s = topic[order], score[order]
        tie = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    else:
        tie = same_topic & (score[1:] == score[:-1])  # in file order
        if not tie.any():
            return order
        if order is None:
            order = np.arange(len(topic))
        else:  # blocks moved whole: a tie stays inside its block
            tie = np.append(tie, False)[order[:-1]]
    if tie.any():
        if ties is None:
            sort_ties(order, tie, take)
        else:
            ties(order, tie)
    return order


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
        self.topics, self.offsets, self.level, self.missing = topics, offsets, level, missing
        self.level_counts, self.options, self.runid, self.name = level_counts, options, runid, name
        self.num_lines_rel_positive = num_lines_rel_positive
        self._cache: dict = {}

    def topics_between(self, start: int, end: int) -> Ranked:
        """The ranking of topics ``start`` to ``end - 1`` alone, its rows views of this one's:
        each topic's values on it are those of the whole ranking (a huge shard is scored a
        slice of topics at a time)."""
        lo, hi = int(self.offsets[start]), int(self.offsets[end])
        lines = self.num_lines_rel_positive
        return Ranked(topics=self.topics[start:end], offsets=self.offsets[start:end + 1] - lo,
                      level=self.level[lo:hi], missing=self.missing[start:end],
                      level_counts=self.level_counts[start:end], options=self.options,
                      runid=self.runid, name=self.name,
                      num_lines_rel_positive=None if lines is None else lines[start:end])

    @property
    def num_topics(self) -> int:
        return len(self.topics)

    def cached(self, key, compute: Callable):
        """Memoise a derived column under ``key`` for this run."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def at_level(self, level: int | None) -> Ranked:
        """The same ranking with relevant meaning level >= ``level`` (None: as it is)."""
        if level is None or level == self.options.relevance_level:
            return self

        def compute() -> Ranked:
            other = Ranked(topics=self.topics, offsets=self.offsets, level=self.level,
                           missing=self.missing, level_counts=self.level_counts,
                           options=replace(self.options, relevance_level=level),
                           runid=self.runid, name=self.name,
                           num_lines_rel_positive=self.num_lines_rel_positive)
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
        """Topic of each document (int32 when that fits: half the memory of int64)."""
        return np.repeat(np.arange(self.num_topics, dtype=index_type(self.num_topics)),
                         self.num_ret)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of each document within its topic (int32 when that fits)."""
        kind = index_type(len(self.level) + 1)
        starts = self.offsets[:-1].astype(kind)
        return np.arange(len(self.level), dtype=kind) - starts[self.topic_index] + kind(1)

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
    def rel_starts(self) -> tuple[np.ndarray, np.ndarray]:
        """(where the relevant documents are, in order; where each topic's first of them is
        in that array, and the end: T+1)."""
        where = np.flatnonzero(self.rel)
        return where, np.searchsorted(where, self.offsets)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:  # counted by where the relevant ones are: 3x faster
        return np.diff(self.rel_starts[1]).astype(np.float64)

    def per_topic_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum ``values`` (per document) within each topic, optionally only where ``mask``.
        Integers and booleans: exact int64 running sums read at the topics' ends (25x faster
        than a weighted bincount); floats: a bincount, adding each topic's values in order."""
        if values.dtype.kind in "biu":
            kept = values if mask is None else np.where(mask, values, 0)
            running = np.concatenate(([0], np.cumsum(kept, dtype=np.int64)))
            return (running[self.offsets[1:]] - running[self.offsets[:-1]]).astype(np.float64)
        weights = values.astype(np.float64) if values.dtype != np.float64 else values
        if mask is None:
            out = np.bincount(self.topic_index, weights=weights, minlength=self.num_topics)
        else:
            out = np.bincount(self.topic_index[mask], weights=weights[mask],
                              minlength=self.num_topics)
        return out.astype(np.float64, copy=False)  # bincount of nothing is int64

    def at_rank(self, cumulative: np.ndarray, k) -> np.ndarray:
        """Per topic, a within-topic ``cumulative`` column read at rank min(k, num_ret): its
        value over the top k; 0 where that is no document (k < 1 or nothing retrieved).
        ``k`` is a scalar or one value per topic; fractional k count as floor(k)."""
        k = np.floor(np.broadcast_to(np.asarray(k, dtype=np.float64), (self.num_topics,)))
        upto = np.minimum(np.maximum(k, 0), self.num_ret).astype(np.int64)
        out = np.zeros(self.num_topics, dtype=cumulative.dtype)
        has = upto > 0
        out[has] = cumulative[self.offsets[:-1][has] + upto[has] - 1]
        return out

    def count_at(self, mask: np.ndarray, where: np.ndarray) -> np.ndarray:
        """For the documents at positions ``where``: how many documents at or above each, in
        its topic, have ``mask`` set. One int32 running count, read only where needed."""
        running = np.cumsum(mask, dtype=np.int32 if len(mask) < 2**31 - 1 else np.int64)
        before = np.concatenate(([0], running))[self.offsets[:-1]]
        return running[where] - before[self.topic_index[where]]

    def per_topic_count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.topic_index[mask], minlength=self.num_topics)

    def per_topic_max(self, values: np.ndarray, initial: float = 0.0) -> np.ndarray:
        out = np.full(self.num_topics, initial, dtype=np.float64)
        np.maximum.at(out, self.topic_index, values)
        return out


def rank_run(run: Run, prepared: PreparedQrels, options: EvalOptions = EvalOptions()) -> Ranked:
    """Rank ``run`` against ``prepared`` qrels under ``options`` (see the module docstring)."""
    return ranked_of([rank_rows(run, prepared, options)], run, prepared, options)


def rank_rows(run: Run, prepared: PreparedQrels,
              options: EvalOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run's rows of judged topics in rank order, as (topic index, level), and whether
    each topic has a row (before ``max_docs`` and ``judged_only`` drop any): :func:`rank_run`
    without its missing topics. Parts of one run whose topics do not straddle parts are ranked
    alone and joined by :func:`ranked_of`.

    The docno column stays as the run holds it: rows are followed through ``src`` (each
    ranked row's row in ``run.doc_id``; -1 for a missing topic's FAKE_DOCNO) and only the
    docnos a step needs are read (tied rows, rows matching a judgment), so a column made wide
    by one long docno is never copied whole."""
    num_topics = len(prepared.topics)
    topic = lookup_topics(run.query_id, prepared.topics, run.topic_starts)
    docs = _Docnos(run.doc_id)
    src = np.arange(len(topic), dtype=np.int64)
    score, line = run.score, run.line
    keep = topic >= 0
    if not keep.all():
        topic, src, score, line = topic[keep], src[keep], score[keep], line[keep]
    if options.duplicates == "first" and may_repeat(topic, docs.hashes(src), num_topics):
        dups, _ = duplicate_rows(topic, docs.take(src), line)
        if len(dups):
            mask = np.ones(len(topic), dtype=bool)
            mask[dups] = False
            topic, src, score, line = topic[mask], src[mask], score[mask], line[mask]
    present = np.bincount(topic, minlength=num_topics) > 0
    order = rank_order(topic, score, docs.reader(src))
    if order is not None:
        topic, src, line = topic[order], src[order], line[order]
    del order, score
    return (*_cut(run, prepared, topic, src, line, options, docs), present)


def _cut(run: Run, prepared: PreparedQrels, topic: np.ndarray, src: np.ndarray,
         line: np.ndarray, options: EvalOptions,
         docs: _Docnos) -> tuple[np.ndarray, np.ndarray]:
    """(topic, level) of ranked rows: ``max_docs`` per topic, levels, ``judged_only``."""
    if options.max_docs is not None:
        offsets = np.concatenate(([0], np.cumsum(np.bincount(topic))))
        cut = np.arange(len(topic)) - offsets[topic] + 1 <= options.max_docs
        if not cut.all():
            topic, src, line = topic[cut], src[cut], line[cut]
    level = _levels(run, prepared, topic, src, line, options, docs)
    if options.judged_only:
        judged = level >= 0
        topic, level = topic[judged], level[judged]
    return topic, level


def ranked_of(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], run: Run,
              prepared: PreparedQrels, options: EvalOptions) -> Ranked:
    """The :class:`Ranked` run made of :func:`rank_rows` parts of ``run`` (no topic in two
    parts; ``run`` names it and gives its runid): each topic's rows joined in topic order,
    a missing topic an error, or (``complete``) one FAKE_DOCNO row as trec_eval -c adds."""
    num_topics = len(prepared.topics)
    missing = ~np.logical_or.reduce([present for _, _, present in parts])
    if missing.any():
        if not options.complete:
            _raise_missing(run, prepared.topics[missing])
        fake = np.flatnonzero(missing)
        rows = np.full(len(fake), -1, dtype=np.int64)
        parts = [*parts, (*_cut(run, prepared, fake, rows, np.zeros(len(fake), np.int64),
                                options, _Docnos(run.doc_id[:0])), missing)]
    counts = [np.bincount(topic, minlength=num_topics) for topic, _, _ in parts]
    offsets = np.concatenate(([0], np.cumsum(np.sum(counts, axis=0)))).astype(np.int64)
    if len(parts) == 1:
        level = parts[0][1].astype(np.int64, copy=False)
    else:  # each part's topic blocks moved to their places (its levels may be narrower)
        level = np.empty(int(offsets[-1]), dtype=np.int64)
        kind = index_type(len(level))
        for (topic, part_level, _), count in zip(parts, counts):
            begin = np.concatenate(([0], np.cumsum(count)[:-1]))
            to = np.repeat((offsets[:-1] - begin).astype(kind), count)
            to += np.arange(len(topic), dtype=kind)
            level[to] = part_level
    return Ranked(topics=prepared.topics, offsets=offsets, level=level, missing=missing,
                  level_counts=prepared.level_counts, options=options, runid=run.runid,
                  name=run.name, num_lines_rel_positive=prepared.num_lines_rel_positive)


def ranked_alone(topic: np.ndarray, level: np.ndarray, present: np.ndarray, run: Run,
                 prepared: PreparedQrels, options: EvalOptions) -> Ranked:
    """The :class:`Ranked` of only the topics a :func:`rank_rows` part holds (none missing):
    each topic's values on it are those of the whole run, computed on its own rows."""
    keep = np.flatnonzero(present)
    counts = np.bincount(topic, minlength=len(prepared.topics))[keep]
    lines = prepared.num_lines_rel_positive
    return Ranked(topics=prepared.topics[keep],
                  offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                  level=level.astype(np.int64, copy=False),
                  missing=np.zeros(len(keep), dtype=bool),
                  level_counts=prepared.level_counts[keep], options=options,
                  runid=run.runid, name=run.name,
                  num_lines_rel_positive=None if lines is None else lines[keep])


_SLICE = 1 << 20  # rows hashed and looked up at a time: bounds the temporaries on big runs


def _levels(run: Run, prepared: PreparedQrels, topic: np.ndarray, src: np.ndarray,
            line: np.ndarray, options: EvalOptions, docs: _Docnos) -> np.ndarray:
    """The qrels value of each ranked row, after checking no docno repeats within a topic
    (``duplicates="error"``). Works on slices of whole topics of about ``_SLICE`` rows."""
    num_topics = len(prepared.topics)
    level = np.empty(len(topic), dtype=np.int64)
    maybe_repeats = False
    for start, end in _topic_slices(topic, _SLICE):
        t, rows = topic[start:end], src[start:end]
        hashes = docs.hashes(rows)
        if options.duplicates == "error" and not maybe_repeats:
            maybe_repeats = may_repeat(t, hashes, num_topics)
        level[start:end] = prepared.lookup_rows(t, hashes, docs.reader(rows))
    if maybe_repeats:
        doc_id = docs.take(src)
        dups, firsts = duplicate_rows(topic, doc_id, line)
        if len(dups):
            _raise_duplicates(run, prepared.topics, topic, doc_id, line, dups, firsts)
    return level


_NARROW = 32  # docno widths (bytes) whose rows are read to hash them: a wider column is
#              hashed once, in slices, and its hashes read by row


class _Docnos:
    """A run's docno column read through row indices (-1: FAKE_DOCNO), never copied whole;
    a wide column's hashes computed once, in slices."""

    def __init__(self, column: np.ndarray):
        self.column = column
        self._hashes: np.ndarray | None = None
        self.fake_hash = doc_hash(np.array([FAKE_DOCNO]))[0]

    def take(self, rows: np.ndarray) -> np.ndarray:
        if not len(self.column):
            return np.full(len(rows), FAKE_DOCNO)
        out = self.column[np.maximum(rows, 0)]
        fake = rows < 0
        if fake.any():
            width = max(out.dtype.itemsize, len(FAKE_DOCNO))
            out = out.astype(f"S{width}")
            out[fake] = FAKE_DOCNO
        return out

    def reader(self, rows: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """``take`` of a subset: ``reader(rows)(i)`` are the docnos of ``rows[i]``."""
        return lambda i: self.take(rows[i])

    def hashes(self, rows: np.ndarray) -> np.ndarray:
        if self.column.dtype.itemsize <= _NARROW:  # reading the rows costs no more
            return doc_hash(self.take(rows))
        if self._hashes is None:
            n = len(self.column)
            self._hashes = (np.concatenate([doc_hash(self.column[i:i + _SLICE])
                                            for i in range(0, n, _SLICE)])
                            if n else np.zeros(0, dtype=np.uint64))
        if not len(self._hashes):
            return np.full(len(rows), self.fake_hash, dtype=np.uint64)
        return np.where(rows >= 0, self._hashes[np.maximum(rows, 0)], self.fake_hash)


def _topic_slices(topic: np.ndarray, size: int) -> list[tuple[int, int]]:
    """(start, end) ranges covering sorted ``topic`` rows, about ``size`` rows each, never
    splitting a topic."""
    n = len(topic)
    if n <= size:
        return [(0, n)]
    edges = [0]
    while edges[-1] < n:
        end = min(edges[-1] + size, n)
        if end < n:  # move the cut forward to the end of that row's topic
            end = int(np.searchsorted(topic, topic[end - 1], side="right"))
        edges.append(end)
    return list(zip(edges[:-1], edges[1:]))


def _raise_missing(run: Run, absent: np.ndarray) -> None:
    names = [display(t) for t in absent]
    shown = ", ".join(f"'{n}'" for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    raise EvaluationError(
        f"{run.path or run.name}: run has no results for {len(names)} qrels "
        f"topic{'s' if len(names) != 1 else ''}: {shown}{more} "
        "(use -c / complete=True to score missing topics as trec_eval -c does)"
    )


def _raise_duplicates(run, topics, topic, doc_id, line, dups, firsts) -> None:
    path = run.path or run.name
    order_d = np.argsort(line[dups], kind="stable")
    problems = [
        f"{path}:{int(line[d])}: docno '{display(doc_id[d])}' retrieved twice for "
        f"topic '{display(topics[topic[d]])}' (first at line {int(line[f])}); "
        "use --duplicates first to keep the first occurrence"
        for d, f in zip(dups[order_d], firsts[order_d])
    ]
    raise DuplicateError(problems)


def _raise_level_too_high(qrels: Qrels, num_topics: int) -> None:
    """Relevance levels so high that counting judgments per topic and level would not fit."""
    top = int(np.argmax(qrels.relevance))
    fits = MAX_LEVEL_CELLS // max(num_topics, 1) - 1
    raise FormatError([f"{qrels.path}:{int(qrels.line[top])}: relevance {qrels.relevance[top]} "
                       f"is too high: irbench counts judgments per topic and level, and with "
                       f"{num_topics:,} topics levels up to {fits:,} fit"])
