"""Does the leaderboard move with the judgments? Two qrels sets' scores of the same systems
on their common topics compared (:func:`compare_leaderboards`): Kendall's tau, tau_AP and
Spearman's rho between the rankings, the systems whose rank changes most, the overlap of the
top k, and which significant differences appear or vanish (the same paired test and correction
on both)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ..errors import EvaluationError
from .agreement import rank_agreement
from .choices import DEFAULT_SEED
from .multiple import compare
from .scores import Scores


@dataclass(frozen=True, kw_only=True)
class RankMove:
    """One system's rank (1 = best) by each qrels set's means."""

    system: str
    rank_a: int
    rank_b: int


@dataclass(frozen=True, kw_only=True)
class LeaderboardComparison:
    """Two leaderboards of one measure: ``a`` the reference, ``b`` the other (tau_AP is b's
    ranking against a's). Pairs are (system, system) in ``a``'s rank order."""

    measure: str
    qrels_a: str
    qrels_b: str
    systems: int
    topics: int                          # the topics both sets judged and every system has
    tau: float
    tau_ap: float
    swaps: int
    top_k: int
    top_overlap: int                     # systems in both top-k lists
    moves: tuple[RankMove, ...]          # every system, largest rank change first
    test: str
    correction: str
    alpha: float
    significant_both: tuple[tuple[str, str], ...]
    significant_only_a: tuple[tuple[str, str], ...]   # vanish with b's judgments
    significant_only_b: tuple[tuple[str, str], ...]   # appear with b's judgments
    spearman: float = float("nan")       # Spearman's rho of the means (scipy.stats.spearmanr)


def compare_leaderboards(a: Scores, b: Scores, *, qrels_a: str = "a", qrels_b: str = "b",
                         top_k: int = 10, test: str = "t", correction: str = "holm",
                         alpha: float = 0.05, samples: int = 10_000,
                         seed: int = DEFAULT_SEED) -> LeaderboardComparison:
    """Compare the leaderboards of one measure under two qrels sets (``a`` the reference),
    on the systems both score and the topics both have for every system."""
    if a.measure != b.measure:
        raise EvaluationError(f"compare one measure's leaderboards, not {a.measure} and "
                              f"{b.measure}")
    systems = [s for s in a.systems if s in set(b.systems)]
    if len(systems) < 2:
        raise EvaluationError(f"{qrels_a} and {qrels_b} score fewer than two systems in common")
    a, b = a.select(systems), b.select(systems)
    topics = [t for t in a.topics if t in set(b.topics)]
    a, b = _on(a, topics), _on(b, topics)
    keep = ~(np.isnan(a.values).any(axis=0) | np.isnan(b.values).any(axis=0))
    if not keep.any():
        raise EvaluationError(f"{qrels_a} and {qrels_b} have no topic in common that every "
                              "system has a score for")
    a, b = _on(a, [t for t, k in zip(topics, keep) if k]), _on(b, [t for t, k in
                                                                    zip(topics, keep) if k])
    ranks_a, ranks_b = _ranks(a.means), _ranks(b.means)
    agree = rank_agreement(a.means, b.means)
    order = np.argsort(ranks_a, kind="stable")
    a, b = a.select([systems[i] for i in order]), b.select([systems[i] for i in order])
    change = np.abs(ranks_a - ranks_b)
    moved = np.lexsort((ranks_a, -change))
    k = min(top_k, len(systems))
    sig = [{(p.system_a, p.system_b) if ranks_a[systems.index(p.system_a)]
            < ranks_a[systems.index(p.system_b)] else (p.system_b, p.system_a)
            for p in compare(s, test=test, correction=correction, alpha=alpha,
                             samples=samples, seed=seed).pairs if p.significant}
           for s in (a, b)]
    position = {s: r for s, r in zip(systems, ranks_a)}

    def ordered(pairs: set) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(pairs, key=lambda p: (position[p[0]], position[p[1]])))

    return LeaderboardComparison(
        measure=a.measure, qrels_a=qrels_a, qrels_b=qrels_b, systems=len(systems),
        topics=len(a.topics), tau=agree.tau, tau_ap=agree.tau_ap, swaps=agree.swaps,
        top_k=k, top_overlap=int(np.sum((ranks_a <= k) & (ranks_b <= k))),
        moves=tuple(RankMove(system=systems[i], rank_a=int(ranks_a[i]), rank_b=int(ranks_b[i]))
                    for i in moved),
        test=test, correction=correction, alpha=alpha,
        significant_both=ordered(sig[0] & sig[1]), significant_only_a=ordered(sig[0] - sig[1]),
        significant_only_b=ordered(sig[1] - sig[0]), spearman=_spearman(a.means, b.means))


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho of two systems' means (ties ranked by their average, as scipy does);
    NaN when one side gives every system the same mean."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: scipy warns and gives NaN
        return float(_st.spearmanr(a, b).statistic)


def _on(scores: Scores, topics: list[str]) -> Scores:
    index = {t: j for j, t in enumerate(scores.topics)}
    columns = [index[t] for t in topics]
    return Scores(scores.measure, scores.systems, tuple(topics), scores.values[:, columns])


def _ranks(means: np.ndarray) -> np.ndarray:
    """1 for the best mean; ties by the given order (the systems are sorted by name)."""
    ranks = np.empty(len(means), dtype=np.int64)
    ranks[np.argsort(-means, kind="stable")] = np.arange(1, len(means) + 1)
    return ranks


__all__ = ["LeaderboardComparison", "RankMove", "compare_leaderboards"]
