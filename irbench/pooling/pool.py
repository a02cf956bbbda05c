"""The pool: which documents to judge per topic, how they got there, and in which order.

A :class:`Pool` is a frozen result, one row per pooled (topic, document), rows sorted by topic
then docno (byte order). Its provenance lists, for every pooled document, each contributing run
that put it in the pool and at which rank: run ``r`` contributed document ``d`` of topic ``t``
when ``r`` ranked ``d`` within its *covered depth* on ``t``, the longest prefix of ``r``'s
ranking that is entirely pooled (``k`` for depth-k pooling of runs at least ``k`` long; for
adaptive strategies at least as deep as the strategy went down ``r``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..trec import Qrels, display
from .table import RunTable


@dataclass(frozen=True, eq=False)
class Provenance:
    """Rows (pooled document, contributing run, rank), sorted by document then rank."""

    doc: np.ndarray       # index into the pool's rows
    run: np.ndarray       # run index (into Pool.runs)
    group: np.ndarray     # group index (into Pool.groups)
    rank: np.ndarray      # rank of the document in that run (1-based)

    def __len__(self) -> int:
        return len(self.doc)

    def runs_per_doc(self, num_docs: int) -> np.ndarray:
        """How many contributing runs put each pooled document in the pool."""
        return np.bincount(self.doc, minlength=num_docs)

    def groups_per_doc(self, num_docs: int, num_groups: int) -> np.ndarray:
        """How many distinct groups put each pooled document in the pool."""
        key = np.unique(self.doc.astype(np.int64) * num_groups + self.group)
        return np.bincount(key // num_groups, minlength=num_docs)


@dataclass(frozen=True, eq=False)
class Pool:
    """A pool built by one strategy; every per-document column is aligned to the rows.

    strategy, params, seed: how it was built (params include the defaults); ``seed`` is the
        seed of the one generator every random draw came from.
    topics: topic ids (bytes); runs/groups: names, ``run_group`` maps runs to groups;
        ``contributing``: (R,) which runs fed the pool.
    topic, doc_id: the pooled documents. ``sampled``: to be judged (False only for sampling
        strategies: pooled, not sampled, written with relevance -1). ``inclusion``: the
        probability the document was sampled (1 when every pooled document is judged).
        ``stratum``: its sampling stratum (-1 without strata).
    order: its position in its topic's judging order (-1 if not sampled); ``step``: the global
        hand-out number; ``source``: the run an adaptive strategy pulled it from (-1 otherwise).
    covered: (R, T) each run's covered depth on each topic (see the module docstring).
    """

    strategy: str
    params: dict
    seed: int
    adaptive: bool
    topics: np.ndarray
    runs: tuple[str, ...]
    groups: tuple[str, ...]
    run_group: np.ndarray
    contributing: np.ndarray
    topic: np.ndarray
    doc_id: np.ndarray
    candidate: np.ndarray
    sampled: np.ndarray
    inclusion: np.ndarray
    stratum: np.ndarray
    order: np.ndarray
    step: np.ndarray
    source: np.ndarray
    covered: np.ndarray
    provenance: Provenance = field(repr=False)

    def __len__(self) -> int:
        return len(self.doc_id)

    @property
    def query_id(self) -> np.ndarray:
        return self.topics[self.topic]

    def size(self) -> np.ndarray:
        """(T,) pooled documents per topic."""
        return np.bincount(self.topic, minlength=len(self.topics))

    def to_judge(self) -> np.ndarray:
        """(T,) documents per topic to be judged (sampled)."""
        return np.bincount(self.topic[self.sampled], minlength=len(self.topics))

    def assessor_order(self) -> np.ndarray:
        """Row indices of the sampled documents as assessors see them: judging order for
        adaptive strategies, docno order otherwise (assessors should not see rank order)."""
        rows = np.flatnonzero(self.sampled)
        if self.adaptive:
            return rows[np.lexsort((self.order[rows], self.topic[rows]))]
        return rows  # rows are already sorted by topic, then docno

    def qrels(self, judgments: Qrels, name: str | None = None) -> Qrels:
        """The campaign's qrels: each sampled document with its judgment from ``judgments``
        (documents not judged yet are left out) and every pooled, unsampled document with
        relevance -1 (trec_eval's infAP reads -1 as pooled but not judged)."""
        rel = judgment_values(self.topics, self.topic, self.doc_id, judgments)
        keep = np.where(self.sampled, rel >= 0, True)
        value = np.where(self.sampled, rel, -1)
        return Qrels(name=name or f"{self.strategy}-pool", query_id=self.query_id[keep],
                     doc_id=self.doc_id[keep], relevance=value[keep].astype(np.int64),
                     line=np.arange(1, int(keep.sum()) + 1, dtype=np.int64))

    def contributions(self) -> list[tuple[str, str, str, int]]:
        """Provenance as (query_id, doc_id, run, rank) tuples, for storage or display."""
        p = self.provenance
        return [(display(self.topics[self.topic[d]]), display(self.doc_id[d]),
                 self.runs[r], int(k))
                for d, r, k in zip(p.doc.tolist(), p.run.tolist(), p.rank.tolist())]


def judgment_values(topics: np.ndarray, topic: np.ndarray, doc_id: np.ndarray,
                    judgments: Qrels) -> np.ndarray:
    """The relevance ``judgments`` give each (topic index, docno); -1 where none."""
    out = np.full(len(doc_id), -1, dtype=np.int64)
    if len(judgments) == 0 or len(doc_id) == 0:
        return out
    jt = np.searchsorted(topics, judgments.query_id)
    jt = np.where(topics[np.minimum(jt, len(topics) - 1)] == judgments.query_id, jt, -1)
    width = max(doc_id.dtype.itemsize, judgments.doc_id.dtype.itemsize)
    names, code = np.unique(np.concatenate((doc_id.astype(f"S{width}"),
                                            judgments.doc_id.astype(f"S{width}"))),
                            return_inverse=True)
    code = code.ravel().astype(np.int64)
    stride = np.int64(len(names))
    want = topic.astype(np.int64) * stride + code[: len(doc_id)]
    have = np.where(jt >= 0, jt * stride + code[len(doc_id):], -1)
    o = np.argsort(have, kind="stable")
    have, rel = have[o], judgments.relevance[o]
    pos = np.minimum(np.searchsorted(have, want), len(have) - 1)
    hit = have[pos] == want
    out[hit] = rel[pos[hit]]
    return out


def covered_depth(table: RunTable, in_pool: np.ndarray) -> np.ndarray:
    """(R, T) the longest prefix of each run's ranking, per topic, that is entirely in the pool
    (``in_pool`` is a bool per candidate)."""
    n = len(table.cand)
    lengths = np.diff(table.segments)
    if n == 0:
        return lengths.reshape(table.num_runs, table.num_topics)
    missing = ~in_pool[table.cand]
    first_missing = np.where(missing, table.rank.astype(np.int64), np.iinfo(np.int64).max)
    seg = np.repeat(np.arange(len(lengths)), lengths)
    best = np.full(len(lengths), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, seg[missing], first_missing[missing])
    covered = np.where(best == np.iinfo(np.int64).max, lengths, best - 1)
    return covered.reshape(table.num_runs, table.num_topics)


def make_pool(table: RunTable, *, strategy: str, params: dict, seed: int, adaptive: bool,
              contributing: np.ndarray, pooled: np.ndarray, sampled: np.ndarray,
              stratum: np.ndarray | None, order: np.ndarray, step: np.ndarray,
              source: np.ndarray, depth: int | None = None) -> Pool:
    """Assemble a :class:`Pool` from per-candidate columns of a :class:`PoolingState`."""
    rows = np.flatnonzero(pooled)
    topic = table.cand_topic[rows]
    stratum_c = stratum if stratum is not None else np.full(table.num_candidates, -1)
    # inclusion: sampled / pooled within each (topic, stratum) cell
    cell_stratum = np.maximum(stratum_c[rows], 0)
    width = int(cell_stratum.max()) + 1 if len(rows) else 1
    cell = topic * width + cell_stratum
    cells = table.num_topics * width
    pooled_n = np.bincount(cell, minlength=cells)
    sampled_n = np.bincount(cell, weights=sampled[rows], minlength=cells)
    inclusion = sampled_n[cell] / np.maximum(pooled_n[cell], 1)

    in_pool = np.zeros(table.num_candidates, dtype=bool)
    in_pool[rows] = True
    covered = covered_depth(table, in_pool)
    covered[~contributing] = 0
    if depth is not None:  # e.g. depth-k: a run contributes its top k, however deep the
        covered = np.minimum(covered, depth)  # pooled prefix happens to go
    seg = table.run.astype(np.int64) * table.num_topics + table.topic
    prov = contributing[table.run] & in_pool[table.cand] & (table.rank <= covered.ravel()[seg])
    index = np.full(table.num_candidates, -1, dtype=np.int64)
    index[rows] = np.arange(len(rows))
    p_doc = index[table.cand[prov]]
    p_run = table.run[prov].astype(np.int64)
    p_rank = table.rank[prov].astype(np.int64)
    o = np.lexsort((p_run, p_rank, p_doc))
    provenance = Provenance(doc=p_doc[o], run=p_run[o], group=table.run_group[p_run[o]],
                            rank=p_rank[o])
    return Pool(
        strategy=strategy, params=dict(params), seed=seed, adaptive=adaptive,
        topics=table.topics, runs=table.runs, groups=table.groups, run_group=table.run_group,
        contributing=contributing.copy(), topic=topic, doc_id=table.docs[table.cand_doc[rows]],
        candidate=rows, sampled=sampled[rows].copy(), inclusion=inclusion,
        stratum=stratum_c[rows].copy(), order=np.where(sampled[rows], order[rows], -1),
        step=step[rows].copy(), source=source[rows].copy(), covered=covered,
        provenance=provenance,
    )
