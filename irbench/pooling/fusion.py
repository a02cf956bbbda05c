"""Fusion-ranked pools: documents ordered by a fused score across runs, judged from the top.

rrf: reciprocal rank fusion, score(d) = sum over runs retrieving d of 1 / (k + rank)
     (Cormack, Clarke & Büttcher, SIGIR 2009), k = 60.
rbp: RBP-weighted pooling, score(d) = sum (or max) over runs of (1 - p) p^(rank - 1), the
     weight rank-biased precision gives the position (Moffat, Webber & Zobel, SIGIR 2007,
     "Strategic system comparisons via targeted relevance judgments"); p = 0.8.

Ties are broken by docno (byte order). Under a total budget every topic gets the same number of
judgments (round-robin); scores are not compared across topics.
"""

from __future__ import annotations

import numpy as np

from .depth import contributing_rows
from .strategy import Param, StaticPlan, Strategy, register
from .table import RunTable


def _fused(table: RunTable, contributing: np.ndarray, weights: np.ndarray, rows: np.ndarray,
           aggregate: str) -> np.ndarray:
    cand = table.cand[rows]
    if aggregate == "sum":
        return np.bincount(cand, weights=weights, minlength=table.num_candidates)
    out = np.zeros(table.num_candidates, dtype=np.float64)
    np.maximum.at(out, cand, weights)
    return out


def _plan(table: RunTable, rows: np.ndarray, score: np.ndarray) -> StaticPlan:
    pooled = np.zeros(table.num_candidates, dtype=bool)
    pooled[table.cand[rows]] = True
    priority = np.where(pooled, -score, np.inf)
    order = np.lexsort((np.arange(table.num_candidates), priority, table.cand_topic))
    position = np.empty(table.num_candidates, dtype=np.float64)
    starts = np.searchsorted(table.cand_topic[order], np.arange(table.num_topics))
    position[order] = np.arange(table.num_candidates) - np.repeat(
        starts, np.diff(np.append(starts, table.num_candidates)))
    return StaticPlan(pooled=pooled, priority=priority, level=position)  # depth: max_depth


def _rrf_plan(table: RunTable, contributing: np.ndarray, params: dict, rng) -> StaticPlan:
    rows = contributing_rows(table, contributing, params.get("max_depth"))
    weights = 1.0 / (params["k"] + table.rank[rows].astype(np.float64))
    return _plan(table, rows, _fused(table, contributing, weights, rows, "sum"))


def _rbp_plan(table: RunTable, contributing: np.ndarray, params: dict, rng) -> StaticPlan:
    rows = contributing_rows(table, contributing, params.get("max_depth"))
    p = params["p"]
    weights = (1.0 - p) * p ** (table.rank[rows].astype(np.float64) - 1.0)
    return _plan(table, rows, _fused(table, contributing, weights, rows, params["aggregate"]))


register(Strategy(
    name="rrf",
    summary="documents ordered by reciprocal rank fusion of the contributing runs, judged from "
            "the top until the budget",
    reference="Cormack, Clarke & Büttcher, SIGIR 2009 (RRF); as a pooling order: trectools "
              "TrecPoolMaker strategy 'rrf'",
    params={"k": Param(float, 60.0, "RRF constant: score = sum 1 / (k + rank)", minimum=0)},
    adaptive=False, scope="topic", plan=_rrf_plan,
))

register(Strategy(
    name="rbp",
    summary="documents ordered by their RBP weight summed (or maxed) over the contributing "
            "runs, judged from the top until the budget",
    reference="Moffat, Webber & Zobel, SIGIR 2007",
    params={"p": Param(float, 0.8, "RBP persistence: weight (1 - p) p^(rank - 1)",
                       minimum=0.0, maximum=0.999999),
            "aggregate": Param(str, "sum", "how run weights combine", choices=("sum", "max"))},
    adaptive=False, scope="topic", plan=_rbp_plan,
))
