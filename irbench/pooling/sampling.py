"""Sampled pools for inferred measures.

uniform: a simple random sample, without replacement, of each topic's depth-k pool
    (Yilmaz & Aslam, CIKM 2006, infAP). Every pooled document of a topic has the same inclusion
    probability, n / N.
stratified: the depth-k pool split into strata by the best rank any contributing run gives a
    document (e.g. ranks 1-10, 11-100), each sampled at its own rate (Yilmaz, Kanoulas & Aslam,
    SIGIR 2008, xinfAP; Aslam, Pavlu & Yilmaz, SIGIR 2006, statAP). A document's inclusion
    probability is n_s / N_s of its stratum.

Each stratum's sample is ``round(rate * N_s)`` documents (at least one when ``rate > 0``). A
budget then takes a prefix of the sample in random order, which is again a simple random sample
within each stratum; inclusion probabilities are computed from what was finally taken
(:attr:`Pool.inclusion`). Pooled documents that were not sampled are kept in the pool with
``sampled = False`` and are written with relevance -1, the value trec_eval's infAP reads as
"pooled, not judged". The draws come from the state's seeded generator.
"""

from __future__ import annotations

import numpy as np

from ..errors import PoolingError
from .depth import contributing_rows, first_reach
from .strategy import Param, StaticPlan, Strategy, register
from .table import RunTable


def _sample(table: RunTable, rank: np.ndarray, strata: tuple, rng) -> StaticPlan:
    """Sample each (topic, stratum) cell of the pool down to the last stratum's depth."""
    bounds = np.array([s[0] for s in strata], dtype=np.float64)
    rates = np.array([s[1] for s in strata], dtype=np.float64)
    pooled = (rank > 0) & (rank <= bounds[-1])
    stratum = np.where(pooled, np.searchsorted(bounds, rank, side="left"), -1)
    u = rng.random(table.num_candidates)
    n_strata = len(bounds)
    cell = np.where(pooled, table.cand_topic * n_strata + stratum, -1)
    size = np.bincount(cell[pooled], minlength=table.num_topics * n_strata)
    rate_of = np.tile(rates, table.num_topics)
    want = np.where(size > 0, np.maximum(np.rint(rate_of * size), (rate_of > 0) * 1.0), 0)
    order = np.lexsort((u, cell))
    sorted_cell = cell[order]
    starts = np.searchsorted(sorted_cell, np.arange(table.num_topics * n_strata))
    pos = np.empty(table.num_candidates, dtype=np.int64)
    pos[order] = np.arange(table.num_candidates) - starts[np.maximum(sorted_cell, 0)]
    sampled = pooled & (pos < want[np.maximum(cell, 0)])
    return StaticPlan(pooled=pooled, priority=np.where(sampled, u, np.inf),
                      level=np.where(sampled, u, np.inf), sampled=sampled, stratum=stratum,
                      depth=int(bounds[-1]))


def _uniform_plan(table: RunTable, contributing: np.ndarray, params: dict, rng) -> StaticPlan:
    k = params["k"] if params.get("max_depth") is None else min(params["k"], params["max_depth"])
    rank, _ = first_reach(table, contributing_rows(table, contributing, k))
    return _sample(table, rank, ((k, params["rate"]),), rng)


def _stratified_plan(table: RunTable, contributing: np.ndarray, params: dict, rng) -> StaticPlan:
    strata = params["strata"]
    if not strata:
        raise PoolingError("stratified: strata must list (depth, rate) pairs")
    problems = []
    last = 0
    for i, item in enumerate(strata):
        if len(item) != 2:
            problems.append(f"strata[{i}] must be (depth, rate)")
            continue
        depth, rate = item
        if depth != int(depth) or depth <= last:
            problems.append(f"strata[{i}]: depths must be increasing whole numbers")
        if not 0.0 <= rate <= 1.0:
            problems.append(f"strata[{i}]: rate must be in [0, 1] (got {rate})")
        last = depth
    if problems:
        raise PoolingError("stratified: " + "; ".join(problems))
    rank, _ = first_reach(table, contributing_rows(table, contributing, int(strata[-1][0])))
    return _sample(table, rank, tuple(strata), rng)


register(Strategy(
    name="uniform",
    summary="a uniform random sample of each topic's depth-k pool (unsampled documents "
            "written with relevance -1 for infAP)",
    reference="Yilmaz & Aslam, CIKM 2006 (infAP)",
    params={"k": Param(int, 100, "depth of the pool the sample is drawn from", minimum=1),
            "rate": Param(float, 1.0, "share of each topic's pool sampled (a budget caps it)",
                          minimum=0.0, maximum=1.0)},
    adaptive=False, scope="topic", plan=_uniform_plan,
))

register(Strategy(
    name="stratified",
    summary="the depth-k pool split into rank strata, each sampled at its own rate, with every "
            "document's inclusion probability recorded",
    reference="Yilmaz, Kanoulas & Aslam, SIGIR 2008 (xinfAP); Aslam, Pavlu & Yilmaz, SIGIR "
              "2006 (statAP)",
    params={"strata": Param(tuple, ((10, 1.0), (100, 0.1)),
                            "(depth, rate) pairs: ranks down to each depth form a stratum")},
    adaptive=False, scope="topic", plan=_stratified_plan,
))
