"""Tables from a :class:`Comparison`: pairwise matrices, the systems each one beats, and the groups
of systems not significantly different from the best, as overview papers print them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import StatisticsError
from .multiple import Comparison

MATRIX_FIELDS = ("p_value", "p_adjusted", "effect_size", "hedges_g", "mean_diff", "statistic")
ANTISYMMETRIC = ("effect_size", "hedges_g", "mean_diff", "statistic")


@dataclass(frozen=True, eq=False)
class PairwiseMatrix:
    """``values[i, j]`` compares ``systems[i]`` with ``systems[j]``: p-values are symmetric,
    effect sizes and differences change sign (row minus column). NaN on the diagonal and for
    pairs that were not compared (e.g. two non-baseline systems)."""

    measure: str
    field: str
    systems: tuple[str, ...]
    values: np.ndarray = dataclasses.field(repr=False)  # the field above hides field()


def pairwise_matrix(comparison: Comparison, measure: str, field: str = "p_adjusted"
                    ) -> PairwiseMatrix:
    """One of :data:`MATRIX_FIELDS` of every compared pair of ``measure`` as a matrix."""
    if field not in MATRIX_FIELDS:
        raise StatisticsError(f"unknown matrix field '{field}' (choose from "
                         f"{', '.join(MATRIX_FIELDS)})")
    systems = comparison.systems
    index = {s: i for i, s in enumerate(systems)}
    pairs = comparison.for_measure(measure)
    a = np.array([index[p.system_a] for p in pairs], dtype=int)
    b = np.array([index[p.system_b] for p in pairs], dtype=int)
    if field == "p_adjusted":
        v = np.array([p.p_adjusted for p in pairs])
    else:
        v = np.array([getattr(p.result, field) for p in pairs])
    out = np.full((len(systems), len(systems)), np.nan)
    out[a, b] = v
    out[b, a] = -v if field in ANTISYMMETRIC else v
    return PairwiseMatrix(measure, field, systems, out)


def beaten(comparison: Comparison, measure: str) -> dict[str, tuple[str, ...]]:
    """For each system, the systems it beats on ``measure``: a higher mean and a significant
    (adjusted) difference, in system order."""
    wins: dict[str, list[str]] = {s: [] for s in comparison.systems}
    for p in comparison.for_measure(measure):
        if p.significant and p.mean_a != p.mean_b:
            winner, loser = ((p.system_a, p.system_b) if p.mean_a > p.mean_b
                             else (p.system_b, p.system_a))
            wins[winner].append(loser)
    order = {s: i for i, s in enumerate(comparison.systems)}
    return {s: tuple(sorted(v, key=order.__getitem__)) for s, v in wins.items()}


def ranked_systems(comparison: Comparison, measure: str) -> tuple[str, ...]:
    """Systems by mean on ``measure``, best first (ties by name)."""
    means = comparison.means[comparison._index(measure)]
    return tuple(s for _, s in sorted(zip(-means, comparison.systems)))


def equivalence_classes(comparison: Comparison, measure: str) -> tuple[tuple[str, ...], ...]:
    """Groups of systems not significantly different from a leader, best first.

    The first group is the best system (highest mean) and every system not significantly
    different from it, "the top group". Each next group is led by the best system not yet in
    any group and holds it and every system ranked below it that it does not significantly
    beat; so a system can sit in two adjacent groups, as in the letter displays of overview
    papers. Needs all pairs (not a baseline comparison).
    """
    if comparison.baseline is not None:
        raise StatisticsError("equivalence classes need all pairs; this comparison is against the "
                         f"baseline '{comparison.baseline}' only")
    order = ranked_systems(comparison, measure)
    different: set[frozenset] = {frozenset((p.system_a, p.system_b))
                                 for p in comparison.for_measure(measure) if p.significant}
    groups: list[tuple[str, ...]] = []
    placed: set[str] = set()
    for i, leader in enumerate(order):
        if leader in placed:
            continue
        group = (leader,) + tuple(s for s in order[i + 1:]
                                  if frozenset((leader, s)) not in different)
        groups.append(group)
        placed.update(group)
    return tuple(groups)
