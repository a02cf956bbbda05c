"""Pool statistics: sizes, who contributed what, unique contributions, overlap, bias flags,
and judged@k for every run (pooled or not)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..trec import Qrels
from .bias import unique_documents
from .pool import Pool, judgment_values
from .table import RunTable

#: A topic whose judged pool is more than this share relevant is flagged: the pool was probably
#: too shallow to find most relevant documents (a warning sign of pool bias; cf. Buckley,
#: Dimmick, Soboroff & Voorhees 2007, "Bias and the limits of pooling for large collections").
BIAS_SHARE = 0.5


@dataclass(frozen=True, eq=False)
class PoolStats:
    """Statistics of one pool. Per topic: ``size`` (pooled), ``to_judge`` (sampled),
    ``judged``, ``relevant``, ``relevant_share`` (relevant / judged, NaN before any judgment)
    and ``flagged`` (share above ``threshold``). Per run (R,) and per group (G,):
    ``*_contributed`` documents it put in the pool, ``*_unique`` documents only it contributed,
    ``*_unique_relevant`` those judged relevant. ``overlap[i, j]``: documents runs i and j both
    contributed. ``judged_at[k]``: (R,) mean over topics of the share of each run's top k that
    is judged (in the judgments, or in the pool when no judgments are given)."""

    topics: tuple[str, ...]
    runs: tuple[str, ...]
    groups: tuple[str, ...]
    size: np.ndarray
    to_judge: np.ndarray
    judged: np.ndarray
    relevant: np.ndarray
    relevant_share: np.ndarray
    flagged: np.ndarray
    threshold: float
    run_contributed: np.ndarray
    run_unique: np.ndarray
    run_unique_relevant: np.ndarray
    group_contributed: np.ndarray
    group_unique: np.ndarray
    group_unique_relevant: np.ndarray
    overlap: np.ndarray
    judged_at: dict

    @property
    def total(self) -> int:
        return int(self.size.sum())


def pool_stats(table: RunTable, pool: Pool, judgments: Qrels | None = None, *,
               ks=(10, 100), relevance_level: int = 1,
               threshold: float = BIAS_SHARE) -> PoolStats:
    """Statistics of ``pool`` (built from ``table``), using ``judgments`` once there are any."""
    T, R, G = len(pool.topics), len(pool.runs), len(pool.groups)
    n = len(pool)
    if judgments is not None:
        rel = judgment_values(pool.topics, pool.topic, pool.doc_id, judgments)
    else:
        rel = np.full(n, -1, dtype=np.int64)
    is_rel = rel >= relevance_level
    judged = np.bincount(pool.topic[rel >= 0], minlength=T)
    relevant = np.bincount(pool.topic[is_rel], minlength=T)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(judged > 0, relevant / np.maximum(judged, 1), np.nan)
    p = pool.provenance
    run_contrib = np.bincount(p.run, minlength=R)
    g_pairs = np.unique(p.doc.astype(np.int64) * G + p.group)
    group_contrib = np.bincount(g_pairs % G, minlength=G)
    alone_run = unique_documents(pool, "run")
    alone_group = unique_documents(pool, "group")
    run_unique = np.bincount(alone_run[alone_run >= 0], minlength=R)
    run_unique_rel = np.bincount(alone_run[(alone_run >= 0) & is_rel], minlength=R)
    group_unique = np.bincount(alone_group[alone_group >= 0], minlength=G)
    group_unique_rel = np.bincount(alone_group[(alone_group >= 0) & is_rel], minlength=G)
    incidence = np.zeros((n, R), dtype=np.float32)
    incidence[p.doc, p.run] = 1.0
    overlap = (incidence.T @ incidence).astype(np.int64)
    # judged@k over the table: a row is judged if its candidate is judged (or pooled)
    known = np.zeros(table.num_candidates, dtype=bool)
    known[pool.candidate[rel >= 0] if judgments is not None else pool.candidate[pool.sampled]] \
        = True
    if judgments is not None:  # judgments of documents outside this pool count too
        topic = table.topic_lookup(judgments.query_id)
        cand = table.lookup(topic, judgments.doc_id)
        known[cand[(cand >= 0) & (judgments.relevance >= 0)]] = True
    row_known = known[table.cand]
    seg = table.run.astype(np.int64) * table.num_topics + table.topic
    judged_at = {}
    for k in ks:
        top = row_known & (table.rank <= k)
        per = np.bincount(seg[top], minlength=R * table.num_topics).reshape(R, table.num_topics)
        judged_at[int(k)] = per.mean(axis=1) / k
    return PoolStats(
        topics=tuple(table.topic_ids()), runs=pool.runs, groups=pool.groups, size=pool.size(),
        to_judge=pool.to_judge(), judged=judged, relevant=relevant, relevant_share=share,
        flagged=np.nan_to_num(share, nan=0.0) > threshold, threshold=threshold,
        run_contributed=run_contrib, run_unique=run_unique, run_unique_relevant=run_unique_rel,
        group_contributed=group_contrib, group_unique=group_unique,
        group_unique_relevant=group_unique_rel, overlap=overlap, judged_at=judged_at,
    )
