"""Depth-k pooling (TREC) and budgeted depth pooling (round-robin deepening).

depth-k (Spärck Jones & van Rijsbergen 1975; TREC since 1992, Harman 1993): the pool of a topic
is the union of every contributing run's top ``k`` documents. Which runs contribute is the
campaign's choice (:func:`~irbench.pooling.contributing_runs`: runs marked pooled, or the first
N runs of each group in priority order, as TREC does).

budgeted depth: the same pool, deepened one rank at a time, round-robin over the runs in their
priority order (rank 1 of every run, then rank 2 ...), until the per-topic budget (or, with a
total budget, every topic one rank at a time) is spent. Without a budget it pools every document
the contributing runs retrieved (down to ``max_depth``).
"""

from __future__ import annotations

import numpy as np

from .strategy import Param, StaticPlan, Strategy, register
from .table import RunTable


def contributing_rows(table: RunTable, contributing: np.ndarray,
                      max_depth: int | None = None) -> np.ndarray:
    """Bool mask of the rows of contributing runs at rank <= ``max_depth``."""
    rows = contributing[table.run]
    if max_depth is not None:
        rows &= table.rank <= max_depth
    return rows


def first_reach(table: RunTable, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate: the best rank any selected row gives it (0 if none) and the first run (in
    priority order) to give it that rank (-1 if none)."""
    num_runs = np.int64(table.num_runs)
    key = table.rank[rows].astype(np.int64) * num_runs + table.run[rows]
    best = np.full(table.num_candidates, np.iinfo(np.int64).max, dtype=np.int64)
    cand = table.cand[rows]
    order = np.argsort(key, kind="stable")
    # the first occurrence of each candidate in key order holds its minimum
    uniq, first = np.unique(cand[order], return_index=True)
    best[uniq] = key[order][first]
    reached = best != np.iinfo(np.int64).max
    rank = np.where(reached, best // num_runs, 0)
    run = np.where(reached, best % num_runs, -1)
    return rank, run


def _depth_plan(table: RunTable, contributing: np.ndarray, params: dict, rng) -> StaticPlan:
    limit = params.get("k")
    if params.get("max_depth") is not None:
        limit = params["max_depth"] if limit is None else min(limit, params["max_depth"])
    rank, run = first_reach(table, contributing_rows(table, contributing, limit))
    pooled = rank > 0
    priority = (rank * table.num_runs + run).astype(np.float64)
    return StaticPlan(pooled=pooled, priority=priority, level=rank.astype(np.float64),
                      depth=limit)


register(Strategy(
    name="depth",
    summary="the union of each contributing run's top k documents (TREC depth-k pooling)",
    reference="Spärck Jones & van Rijsbergen 1975; Harman, TREC-1 overview, 1993",
    params={"k": Param(int, 100, "pool depth: documents taken from the top of each run",
                       minimum=1)},
    adaptive=False, scope="topic", plan=_depth_plan,
))

register(Strategy(
    name="budgeted",
    summary="depth pooling deepened rank by rank, round-robin over the runs in priority "
            "order, until the budget is spent",
    reference="round-robin pooling as in Losada, Parapar & Barreiro 2017 (baseline 'DocId/"
              "Rank'); TREC depth-k is its special case at budget = pool size",
    params={"k": Param(int, None, "never deeper than this rank (None: no limit)", minimum=1)},
    adaptive=False, scope="topic", plan=_depth_plan,
))
