"""Replaying strategies with existing judgments as the oracle, at increasing budgets.

For each strategy the oracle loop runs once, to the largest budget; every strategy's judging
order does not depend on the budget, so the pool at a smaller budget is a prefix of that order
(per topic; across topics for ``mtf-global``). Budget fraction ``f`` gives topic ``t``
``max(1, round(f * J_t))`` judgments, ``J_t`` being its official judgments; a global strategy
gets their sum as one total. A document the official qrels never judged counts as non-relevant.

Reported, per strategy and budget: relevant documents found and judgments spent (per topic and
overall), and how the system ranking under the reduced qrels (the official judgments of the
documents judged so far) agrees with the ranking under the full qrels: Kendall's tau and
tau_AP (:mod:`irbench.stats.agreement`), for each measure, over every run of the table (pooled
or not). Scores come from :mod:`irbench.pooling.kernels` and equal trec_eval's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import PoolingError
from ..stats.agreement import rank_agreement
from ..trec import Qrels, display
from .kernels import Judged, TableScorer, judged_from_qrels
from .state import Oracle, PoolingState
from .strategy import COMMON_PARAMS, get_strategy
from .table import RunTable, contributing_runs

DEFAULT_STRATEGIES = ("budgeted", "mtf", "mtf-global", "mm-ns", "thompson")
DEFAULT_FRACTIONS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


@dataclass(frozen=True, eq=False)
class BudgetSimulation:
    """Results of :func:`simulate_budgets`; arrays are indexed [strategy, budget, ...].

    spent, found: (S, B, T) judgments made and relevant documents found per topic;
    relevant: (T,) relevant documents in the official qrels; judged: (T,) official judgments;
    means: (S, B, M, R) system means under each reduced qrels, reference: (M, R) under the full
    qrels; tau, tau_ap: (S, B, M) agreement of each reduced ranking with the full one.
    """

    strategies: tuple[str, ...]
    fractions: np.ndarray
    topics: tuple[str, ...]
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    seed: int
    params: dict
    spent: np.ndarray
    found: np.ndarray
    relevant: np.ndarray
    judged: np.ndarray
    means: np.ndarray
    reference: np.ndarray
    tau: np.ndarray
    tau_ap: np.ndarray
    seconds: dict = field(default_factory=dict)

    def recall(self) -> np.ndarray:
        """(S, B) share of the official relevant documents found."""
        return self.found.sum(axis=2) / max(int(self.relevant.sum()), 1)

    def rows(self) -> list[dict]:
        """One flat record per (strategy, budget, measure), e.g. for a table or the store."""
        out = []
        for s, name in enumerate(self.strategies):
            for b, f in enumerate(self.fractions.tolist()):
                for m, measure in enumerate(self.measures):
                    out.append({"strategy": name, "fraction": f,
                                "judgments": int(self.spent[s, b].sum()),
                                "relevant_found": int(self.found[s, b].sum()),
                                "recall": float(self.recall()[s, b]), "measure": measure,
                                "tau": float(self.tau[s, b, m]),
                                "tau_ap": float(self.tau_ap[s, b, m])})
        return out


def split_params(strategies, given: dict) -> dict[str, dict]:
    """``given`` parameters (``--param KEY=VALUE``) for each of ``strategies``: each gets the
    ones it declares; a parameter no strategy declares is a :class:`PoolingError` (it would
    otherwise be ignored without a word)."""
    out: dict[str, dict] = {}
    unknown = set(given)
    for name in strategies:
        declared = {**COMMON_PARAMS, **get_strategy(name).params}
        out[name] = {k: v for k, v in given.items() if k in declared}
        unknown -= set(declared)
    if unknown:
        raise PoolingError(f"parameter {', '.join(map(repr, sorted(unknown)))} is taken by none "
                           f"of the strategies simulated ({', '.join(strategies)}); "
                           "'irbench pool strategies' lists each one's parameters")
    return out


def simulate_budgets(table: RunTable, qrels: Qrels, *, strategies=DEFAULT_STRATEGIES,
                     fractions=DEFAULT_FRACTIONS, measures=("AP",), contributing=None,
                     per_group: int | None = None, seed: int = 0, relevance_level: int = 1,
                     params: dict | None = None, max_depth: int | None = None,
                     progress=None) -> BudgetSimulation:
    """Replay ``strategies`` with ``qrels`` as the oracle at each budget fraction;
    ``progress(done, total, what)`` hears of each strategy as it starts.

    params: per-strategy parameters, ``{"mm-ns": {"gamma": 0.8}}``. max_depth: candidates only
    down to this rank of each contributing run (e.g. the official pool depth, so that every
    candidate has an official judgment). Seeded: the same arguments give the same result.
    """
    fractions, names, params = _checked(strategies, fractions, measures, params)
    scorer = TableScorer(table, np.unique(qrels.query_id), relevance_level)
    reference = scorer.means(judged_from_qrels(table, qrels), names)
    oracle = Oracle(table, qrels)
    judged = _per_topic(table, qrels.query_id[qrels.relevance >= 0])
    relevant = _per_topic(table, qrels.query_id[qrels.relevance >= relevance_level])
    budgets = _budgets(fractions, judged)
    S, B, T, M, R = len(strategies), len(fractions), table.num_topics, len(names), table.num_runs
    spent = np.zeros((S, B, T), dtype=np.int64)
    found = np.zeros((S, B, T), dtype=np.int64)
    means = np.zeros((S, B, M, R))
    tau = np.zeros((S, B, M))
    tau_ap = np.zeros((S, B, M))
    seconds = {}
    for s, name in enumerate(strategies):
        if progress is not None:
            progress(s + 1, len(strategies), f"simulating {name}")
        kwargs = dict(params.get(name, {}))
        if max_depth is not None:
            kwargs.setdefault("max_depth", max_depth)
        state, seconds[name] = _replay(table, oracle, name, budgets, contributing=contributing,
                                       per_group=per_group, seed=seed,
                                       relevance_level=relevance_level, kwargs=kwargs)
        spent[s], found[s], means[s], tau[s], tau_ap[s] = _at_budgets(
            table, state, oracle, budgets, scorer, names, reference, relevance_level)
    return BudgetSimulation(
        strategies=tuple(strategies), fractions=fractions, topics=tuple(table.topic_ids()),
        runs=table.runs, measures=tuple(names), seed=int(seed),
        params={"contributing": contributing if contributing is None else list(
            np.asarray(table.runs)[_mask(table, contributing, per_group)]),
            "per_group": per_group, "max_depth": max_depth, "strategy_params": params,
            "relevance_level": relevance_level},
        spent=spent, found=found, relevant=relevant, judged=judged, means=means,
        reference=reference, tau=tau, tau_ap=tau_ap, seconds=seconds,
    )


def _checked(strategies, fractions, measures, params: dict | None
             ) -> tuple[np.ndarray, list[str], dict]:
    """(fractions sorted and distinct, measure names, params) after checking every argument:
    fractions in (0, 1], measures with a pooling kernel, known strategies, parameters only for
    strategies simulated."""
    fractions = np.asarray(sorted(set(float(f) for f in fractions)), dtype=np.float64)
    if len(fractions) == 0 or fractions[0] <= 0 or fractions[-1] > 1:
        raise PoolingError("budget fractions must be in (0, 1]")
    names = TableScorer.check(measures)
    params = dict(params or {})
    for name in strategies:
        get_strategy(name)
    for name in params:
        if name not in strategies:
            raise PoolingError(f"parameters given for {name!r}, which is not simulated "
                               f"({', '.join(strategies)})")
    return fractions, names, params


def _per_topic(table: RunTable, query_id: np.ndarray) -> np.ndarray:
    """(T,) how many of ``query_id`` fall on each topic of the table (others are ignored)."""
    return np.bincount(table.topic_lookup(query_id) + 1, minlength=table.num_topics + 1)[1:]


def _budgets(fractions: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """(B, T) judgments each topic gets at each fraction: ``max(1, round(f * J_t))``; 1 for a
    topic without official judgments."""
    budgets = np.maximum(1, np.rint(fractions[:, None] * judged[None, :])).astype(np.int64)
    budgets[:, judged == 0] = 1
    return budgets


def _replay(table: RunTable, oracle: Oracle, name: str, budgets: np.ndarray, *,
            contributing, per_group: int | None, seed: int, relevance_level: int,
            kwargs: dict) -> tuple[PoolingState, float]:
    """Strategy ``name`` run by the oracle to the largest budget (per topic, or their sum for
    a global strategy); the state, and the seconds it took."""
    start = time.perf_counter()
    if get_strategy(name).scope == "global":
        state = PoolingState(table, name, contributing=contributing, per_group=per_group,
                             total=int(budgets[-1].sum()), seed=seed,
                             relevance_level=relevance_level, **kwargs)
    else:
        state = PoolingState(table, name, contributing=contributing, per_group=per_group,
                             budget=budgets[-1], seed=seed, relevance_level=relevance_level,
                             **kwargs)
    state.run_oracle(oracle)
    return state, time.perf_counter() - start


def _at_budgets(table: RunTable, state: PoolingState, oracle: Oracle, budgets: np.ndarray,
                scorer: TableScorer, names: list[str], reference: np.ndarray,
                relevance_level: int) -> tuple[np.ndarray, ...]:
    """(spent, found, means, tau, tau_ap) of one replayed strategy at each budget, shaped
    (B, T), (B, T), (B, M, R), (B, M), (B, M): the pool at a budget is a prefix of the
    strategy's judging order (per topic, or over all topics for a global strategy)."""
    B, T, (M, R) = len(budgets), table.num_topics, reference.shape
    spent = np.zeros((B, T), dtype=np.int64)
    found = np.zeros((B, T), dtype=np.int64)
    means = np.zeros((B, M, R))
    tau = np.zeros((B, M))
    tau_ap = np.zeros((B, M))
    handed = state.step >= 0
    global_scope = state.strategy.scope == "global"
    for b in range(B):
        if global_scope:
            chosen = handed & (state.step < budgets[b].sum())
        else:
            chosen = handed & (state.order < budgets[b][state.table.cand_topic])
        rel = np.where(chosen, oracle.relevance, -1)
        topic = table.cand_topic[chosen]
        spent[b] = np.bincount(topic, minlength=T)
        found[b] = np.bincount(topic, weights=rel[chosen] >= relevance_level,
                               minlength=T).astype(np.int64)
        reduced = Judged(rel, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        means[b] = scorer.means(reduced, names)
        for m in range(M):
            agreement = rank_agreement(reference[m], means[b, m])
            tau[b, m] = agreement.tau
            tau_ap[b, m] = agreement.tau_ap
    return spent, found, means, tau, tau_ap


def _mask(table: RunTable, contributing, per_group) -> np.ndarray:
    return contributing_runs(table, contributing, per_group=per_group)


def format_simulation(sim: BudgetSimulation, measure: str | None = None) -> str:
    """A plain-text table: relevant found (and tau / tau_AP for one measure) by budget."""
    m = 0 if measure is None else sim.measures.index(measure)
    head = f"{'strategy':<12}" + "".join(f"{f:>8.0%}" for f in sim.fractions)
    lines = [f"relevant found (of {int(sim.relevant.sum())} official relevant)", head]
    for s, name in enumerate(sim.strategies):
        lines.append(f"{name:<12}" + "".join(f"{int(x):>8d}" for x in sim.found[s].sum(axis=1)))
    lines += ["", "judgments spent", head]
    for s, name in enumerate(sim.strategies):
        lines.append(f"{name:<12}" + "".join(f"{int(x):>8d}" for x in sim.spent[s].sum(axis=1)))
    for label, arr in (("Kendall's tau", sim.tau), ("tau_AP", sim.tau_ap)):
        lines += ["", f"{label} with the full ranking ({sim.measures[m]})", head]
        for s, name in enumerate(sim.strategies):
            lines.append(f"{name:<12}" + "".join(f"{x:>8.3f}" for x in arr[s, :, m]))
    return "\n".join(lines)


def _topic_names(table: RunTable) -> list[str]:
    return [display(t) for t in table.topics]
