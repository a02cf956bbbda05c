"""Measure kernels over a whole :class:`RunTable` at once, for re-scoring many qrels variants.

Judgments are given per candidate (``cand_rel``: the level, -1 when unjudged) plus, for
judgments of documents no run retrieved, ``extra`` (topic index, level) pairs, which only count
towards a topic's relevant documents and ideal gains. The values equal trec_eval's (and
:func:`irbench.evaluate`'s) for AP, P@k, RR and nDCG@k (``ndcg_cut``) on the qrels topics; a
qrels topic a run misses scores 0 (trec_eval ``-c``). Everything is vectorised over all runs,
topics and documents: one pass per measure, no loop over runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import PoolingError
from ..measures import measure_list, parse_measure
from .table import RunTable

_NAME = re.compile(r"^(AP|RR|P@(\d+)|nDCG@(\d+))$")


@dataclass(frozen=True)
class Judged:
    """Judgments in the table's candidate space (see the module docstring)."""

    cand_rel: np.ndarray
    extra_topic: np.ndarray
    extra_level: np.ndarray


class TableScorer:
    """Scores every run of ``table`` under any number of judgment sets, quickly."""

    def __init__(self, table: RunTable, topics: np.ndarray, relevance_level: int = 1):
        self.table = table
        self.level = relevance_level
        self.seg = table.run.astype(np.int64) * table.num_topics + table.topic
        self.num_seg = table.num_runs * table.num_topics
        counted = np.isin(table.topics, topics)
        self.topic_weight = counted / max(len(topics), 1)  # mean over the qrels topics
        self.rank = table.rank.astype(np.float64)

    @staticmethod
    def check(measures) -> list[str]:
        """Canonical names of ``measures``; only AP, P@k, RR and nDCG@k have table kernels."""
        out = []
        for m in measure_list(measures):
            text = str(m)
            if not _NAME.match(text):
                raise PoolingError(f"measure {text!r} has no pooling kernel; use AP, P@k, RR "
                                   "or nDCG@k")
            out.append(str(parse_measure(text)))
        return out

    def means(self, judged: Judged, measures: list[str]) -> np.ndarray:
        """(M, R) mean over the qrels topics of each measure for each run."""
        per = self.per_topic(judged, measures)
        return per @ self.topic_weight

    def per_topic(self, judged: Judged, measures: list[str]) -> np.ndarray:
        """(M, R, T) per-topic values."""
        t = self.table
        level = judged.cand_rel[t.cand]
        out = np.empty((len(measures), t.num_runs, t.num_topics))
        for i, name in enumerate(measures):
            kind, k = _parse(name)
            out[i] = _KERNELS[kind](self, judged, level, k).reshape(t.num_runs, t.num_topics)
        return out

    # -- helpers ----------------------------------------------------------------------------

    def num_rel(self, judged: Judged) -> np.ndarray:
        t = self.table
        rel = judged.cand_rel >= self.level
        n = np.bincount(t.cand_topic[rel], minlength=t.num_topics)
        return n + np.bincount(judged.extra_topic[judged.extra_level >= self.level],
                               minlength=t.num_topics)

    def seg_sum(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.seg, weights=weights, minlength=self.num_seg)


def _parse(name: str) -> tuple[str, int]:
    m = _NAME.match(name)
    if m is None:  # names come through TableScorer.check
        raise PoolingError(f"measure {name!r} has no pooling kernel; use AP, P@k, RR or nDCG@k")
    if m.group(2):
        return "P", int(m.group(2))
    if m.group(3):
        return "nDCG", int(m.group(3))
    return m.group(1), 0


def _ap(s: TableScorer, judged: Judged, level: np.ndarray, k: int) -> np.ndarray:
    rel = (level >= s.level).astype(np.float64)
    cum = np.cumsum(rel)
    base = np.concatenate(([0.0], cum))[s.table.segments[:-1]]
    within = cum - np.repeat(base, np.diff(s.table.segments))
    total = s.seg_sum(rel * within / s.rank)
    num_rel = np.tile(s.num_rel(judged), s.table.num_runs)
    return np.where(num_rel > 0, total / np.maximum(num_rel, 1), 0.0)


def _p(s: TableScorer, judged: Judged, level: np.ndarray, k: int) -> np.ndarray:
    return s.seg_sum(((level >= s.level) & (s.rank <= k)).astype(np.float64)) / k


def _rr(s: TableScorer, judged: Judged, level: np.ndarray, k: int) -> np.ndarray:
    rel = level >= s.level
    best = np.full(s.num_seg, np.inf)
    np.minimum.at(best, s.seg[rel], s.rank[rel])
    return np.where(np.isfinite(best), 1.0 / best, 0.0)


def _ndcg(s: TableScorer, judged: Judged, level: np.ndarray, k: int) -> np.ndarray:
    t = s.table
    gain = np.maximum(level, 0).astype(np.float64)
    top = s.rank <= k
    dcg = s.seg_sum(np.where(top, gain / np.log2(s.rank + 1.0), 0.0))
    topics = np.concatenate((t.cand_topic[judged.cand_rel > 0], judged.extra_topic[
        judged.extra_level > 0]))
    gains = np.concatenate((judged.cand_rel[judged.cand_rel > 0],
                            judged.extra_level[judged.extra_level > 0])).astype(np.float64)
    o = np.lexsort((-gains, topics))
    topics, gains = topics[o], gains[o]
    starts = np.searchsorted(topics, topics)
    pos = np.arange(len(topics)) - starts + 1
    keep = pos <= k
    ideal = np.bincount(topics[keep], weights=gains[keep] / np.log2(pos[keep] + 1.0),
                        minlength=t.num_topics)
    ideal = np.tile(ideal, t.num_runs)
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


_KERNELS: dict[str, Callable] = {"AP": _ap, "P": _p, "RR": _rr, "nDCG": _ndcg}


def judged_from_qrels(table: RunTable, qrels) -> Judged:
    """All of ``qrels`` in the table's candidate space (negative values count as unjudged)."""
    topic = table.topic_lookup(qrels.query_id)
    cand = table.lookup(topic, qrels.doc_id)
    ok = qrels.relevance >= 0
    cand_rel = np.full(table.num_candidates, -1, dtype=np.int64)
    cand_rel[cand[ok & (cand >= 0)]] = qrels.relevance[ok & (cand >= 0)]
    extra = ok & (cand < 0) & (topic >= 0)
    return Judged(cand_rel, topic[extra], qrels.relevance[extra])
