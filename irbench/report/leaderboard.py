"""Sections 1 and 3: the leaderboard (means, intervals, marks against the baseline) and the
all-pairs significance test with its equivalence groups."""

from __future__ import annotations

import math

import numpy as np

from .. import stats
from ..config import pooled_systems, priority_order
from ..measures import parse_measure
from ..stats.latex import labels
from .contract import Cell, Leaderboard, MatrixCell, Significance, SystemRow
from .intervals import caption, intervals
from .numbers import num

MATRIX_SYSTEMS = 30  # the significance matrix shows the best 30; significance.csv every pair


def leaderboard(config, store, seed: int = 0) -> Leaderboard:
    """Section 1's first leaderboard alone, on the config's first qrels set."""
    spec = config.qrels[0]
    suite = next((s for s in shown_suites(config) if spec.measures(config.suites[s])), None)
    return leaderboard_on(config, store, spec.name, seed, suite)


def leaderboards(config, store, seed: int = 0) -> tuple[Leaderboard, ...]:
    """Section 1 alone (for the exports): one leaderboard per suite shown, on the config's
    first qrels set."""
    return leaderboards_on(config, store, config.qrels[0].name, seed)


def shown_suites(config) -> tuple[str, ...]:
    """The suites given a leaderboard: report.leaderboard_suites, else every suite."""
    return config.report.leaderboard_suites or tuple(config.suites)


def leaderboards_on(config, store, qrels: str, seed: int) -> tuple[Leaderboard, ...]:
    """One leaderboard per suite of :func:`shown_suites` that has a measure ``qrels`` scores
    (at least one: the first suite's, when none has)."""
    spec = next(q for q in config.qrels if q.name == qrels)
    boards = tuple(leaderboard_on(config, store, qrels, seed, suite)
                   for suite in shown_suites(config)
                   if spec.measures(config.suites[suite]))
    return boards or (leaderboard_on(config, store, qrels, seed, shown_suites(config)[0]),)


def leaderboard_on(config, store, qrels: str, seed: int, suite: str | None = None
                   ) -> Leaderboard:
    """The leaderboard of ``suite`` (default: the first shown) on ``qrels``: systems ranked
    by its first measure (smallest first for a measure whose registry entry says lower is
    better), intervals, marks against the baseline (Holm over the systems of each measure)."""
    spec = next(q for q in config.qrels if q.name == qrels)
    suite = suite or shown_suites(config)[0]
    measures = [str(m) for m in spec.measures(config.suites[suite])]
    lower = {m for m in measures if parse_measure(m).definition.lower_is_better}
    _, rows = store.means(qrels, measures=measures)
    means: dict[tuple[str, str], float] = {(r[0], r[2]): r[3] for r in rows}
    systems = sorted({r[0] for r in rows})
    declared = store.declared_systems()
    meta = {s.name: s for s in declared}
    matrices = {m: store.score_matrix(qrels, m) for m in measures}
    first = measures[0]
    sign = 1 if first in lower else -1  # best first
    systems.sort(key=lambda s: (_key(means.get((s, first)), sign), s))
    baseline = next((s.name for s in declared if s.baseline and s.name in systems), "")
    marks: dict[tuple[str, str], tuple[str, float]] = {}
    how = "no baseline marked in the config: no significance marks"
    if baseline and len(systems) > 1:
        scores = [stats.Scores(m, tuple(names), tuple(topics), values)
                  for m, (names, topics, values) in matrices.items()
                  if len(names) and not np.isnan(values).any()]
        comparison = stats.compare(scores, baseline=baseline, seed=seed, family="measure")
        for pair in comparison.pairs:
            other = pair.system_a if pair.system_b == baseline else pair.system_b
            diff = pair.mean_a - pair.mean_b if pair.system_b == baseline else \
                pair.mean_b - pair.mean_a
            better = diff < 0 if pair.measure in lower else diff > 0
            mark = ("▲" if better else "▼") if pair.significant else ""
            marks[(other, pair.measure)] = (mark, pair.p_adjusted)
        how = (f"against {baseline}: paired randomisation test, 10,000 samples, seed {seed}, "
               "Holm correction over the systems of each measure (the family: per measure), "
               "alpha 0.05")
    best = {m: (min if m in lower else max)(
        (means[(s, m)] for s in systems if (s, m) in means
         and means[(s, m)] is not None and math.isfinite(means[(s, m)])), default=None)
        for m in measures}
    pooled = pooled_flags(config, declared)
    found = intervals(matrices, seed)  # every system and measure at once
    table = []
    for rank, name in enumerate(systems, 1):
        cells = []
        for m in measures:
            value = means.get((name, m))
            family = parse_measure(m).definition
            ci = found.get((name, m))  # none for GMAP, sums and micro-averages
            mark, p = marks.get((name, m), ("", float("nan")))
            shown = (str(int(round(value))) if family.kind == "int" and value is not None
                     and math.isfinite(value) else num(value))  # counts print whole
            cells.append(Cell(value=value, text=shown, ci=ci.text if ci else "",
                              low=ci.low if ci else None, high=ci.high if ci else None,
                              interval=ci.method if ci else "",
                              best=value is not None and value == best[m], mark=mark,
                              p_adjusted="" if math.isnan(p) else f"{p:.4f}"))
        s = meta.get(name)
        table.append(SystemRow(rank=rank, name=name, group=s.group if s else "",
                               type=s.type if s else "", baseline=name == baseline,
                               official=s.official if s else True,
                               pooled=pooled.get(name, ""), cells=tuple(cells)))
    topics = len(matrices[first][1]) if matrices else 0
    return Leaderboard(qrels=qrels, suite=suite, measures=tuple(measures),
                       lower_better=tuple(m for m in measures if m in lower),
                       rows=tuple(table), topics=topics,
                       baseline=baseline, test=how,
                       interval=caption(seed, {i.method for i in found.values()}))


def _key(value: float | None, sign: int) -> float:
    """A mean as a sort key, best first (``sign`` -1: the largest first); none last."""
    return sign * value if value is not None and math.isfinite(value) else math.inf


def pooled_flags(config, systems) -> dict[str, str]:
    """{system: 'yes'/'no'}: the systems declared ``pooled:`` when any is, else the first
    report.pooled_per_group runs of each group by priority (then config order); {} when the
    config does not say."""
    declared = pooled_systems(systems)
    if declared is not None:
        return {s.name: "yes" if s.name in declared else "no" for s in systems}
    per_group = config.report.pooled_per_group
    if not per_group:
        return {}

    out: dict[str, str] = {}
    taken: dict[str, int] = {}
    for s in priority_order(systems):
        group = s.group or s.name
        taken[group] = taken.get(group, 0) + 1
        out[s.name] = "yes" if taken[group] <= per_group else "no"
    return out


def significance(config, store, board: Leaderboard, measure: str, seed: int = 0
                 ) -> Significance | None:
    """Section 3 alone (for the exports), on the config's first qrels set."""
    return significance_on(store, config.qrels[0].name, board, measure, seed)


def significance_on(store, qrels: str, board: Leaderboard, measure: str,
                  seed: int) -> Significance | None:

    if len(board.rows) < 3 or not board.measures:
        return None
    names, topics, values = store.score_matrix(qrels, measure)
    if not names:
        return None
    if np.isnan(values).any():
        return None
    order = [r.name for r in board.rows if r.name in names]
    scores = stats.Scores(measure, tuple(names), tuple(topics), values).select(order)
    comparison = stats.compare(scores, test="randomized-tukey-hsd", seed=seed)
    p = stats.pairwise_matrix(comparison, measure, "p_adjusted").values
    diff = stats.pairwise_matrix(comparison, measure, "mean_diff").values
    effect = stats.pairwise_matrix(comparison, measure, "effect_size").values
    matrix = []
    shown = min(len(order), MATRIX_SYSTEMS)  # a readable matrix; every pair in the CSV
    for i in range(shown):
        row = []
        for j in range(shown):
            if i == j or not np.isfinite(p[i, j]):
                row.append(MatrixCell(text="", detail="", shade="transparent", p=math.nan,
                                      diff=math.nan, effect=math.nan))
                continue
            strength = max(0.0, min(1.0, -math.log10(max(p[i, j], 1e-4)) / 4))
            hue = 130 if diff[i, j] > 0 else 0
            row.append(MatrixCell(text=f"{p[i, j]:.3f}",
                                  detail=f"difference {diff[i, j]:+.4f}, effect size d_z "
                                         f"{effect[i, j]:+.2f}",
                                  shade=f"hsl({hue}, 60%, {95 - 45 * strength:.0f}%)",
                                  p=float(p[i, j]), diff=float(diff[i, j]),
                                  effect=float(effect[i, j])))
        matrix.append(tuple(row))
    classes = stats.equivalence_classes(comparison, measure)
    groups = tuple(", ".join(g) for g in classes)
    letters = labels(len(classes))
    sep = "," if len(classes) > 26 else ""
    membership = tuple(sep.join(letters[k] for k, g in enumerate(classes) if name in g)
                       for name in order)
    return Significance(measure=measure,
                        test=f"randomised Tukey HSD, 10,000 samples, seed {seed}; "
                        f"family: all {len(order) * (len(order) - 1) // 2:,} pairs of "
                        f"{measure} (the test controls the family-wise error over them)",
                        systems=tuple(order), matrix=tuple(matrix), groups=groups,
                        membership=membership, p=p, diff=diff, effect=effect)
