"""Section 6 and 7: how complete the judgments are (judged@k), the judgment-reduction
experiment and the pool bias as stored by ``irbench run`` (with the sentences their numbers
support), and the precision-recall curves of the stored profiles."""

from __future__ import annotations

import numpy as np

from .. import analyses
from ..analyses.reduction import DESIGNS, Reduction
from ..measures import CURVE, JUDGED, JUDGED_RETRIEVED
from ..pooling import Coverage
from . import figures
from .contract import (
    BiasRow,
    Curve,
    Judged,
    JudgedRow,
    PoolBias,
    PrecisionRecall,
    ReductionRow,
    ReductionSection,
)
from .numbers import join_names, num, num3, signed

JUDGED_FLAG = 0.5  # judged@10 under this: most of the top 10 is unjudged


def from_profiles(store, qrels: str, order: list[str]):
    """judged@10/@100 and 11-point curves of every system: the profile ``irbench run`` keeps
    for every ad hoc evaluation (measures a campaign's suites need not contain)."""
    profiles = {name: p for name, p in store.profiles(qrels).items()
                if all(m in p for m in (*JUDGED, *CURVE))}  # older stores lack COUNTS
    if not profiles:
        return None, None
    rows = [JudgedRow(name, num(p["judged@10"]), num(p["judged@100"]),
                      p["judged@10"] < JUDGED_FLAG,
                      *(num(p[m]) if m in p else "" for m in JUDGED_RETRIEVED))
            for name, p in profiles.items()]  # a store scored before has no JUDGED_RETRIEVED
    rows.sort(key=lambda r: (r.judged_10, r.name))
    flagged = [r.name for r in rows if r.flagged]
    finding = (f"No system has judged@10 below {JUDGED_FLAG:.2f}." if not flagged else
               f"{len(flagged)} of {len(rows)} systems have judged@10 below "
               f"{JUDGED_FLAG:.2f}: {', '.join(flagged[:10])}"
               + (f" and {len(flagged) - 10} more" if len(flagged) > 10 else "") + ".")
    judged = Judged(qrels, tuple(rows), f"{JUDGED_FLAG:.2f}", finding)
    curves = {name: [float(p[m]) for m in CURVE] for name, p in profiles.items()}
    ranked = [n for n in order if n in curves] + sorted(set(curves) - set(order))
    shown = ranked[:len(figures.PALETTE)]
    lines = tuple(Curve(name, " ".join(f"{y:.3f}" for y in curves[name]),
                        figures.PALETTE[i] if i < len(shown) else "")
                  for i, name in enumerate(ranked))
    return judged, PrecisionRecall(lines, figures.precision_recall(
        {n: curves[n] for n in ranked}, shown))


def not_shown(config, store) -> tuple[str, ...]:
    """Why an analysis the report could show is missing: never computed, or computed from
    other inputs (stale, so not shown)."""
    notes = []
    for spec, what in ((analyses.reduction_spec(config, store), "The judgment-reduction "
                        "experiment (6b)"),
                       (analyses.pool_bias_spec(config, store), "The pool-bias analysis (6c)")):
        if spec is None or analyses.load(store, spec) is not None:
            continue
        if analyses.stale(store, spec):
            notes.append(f"{what} in the store was computed from other inputs or parameters "
                         "(runs, qrels, options or report settings changed since), so it is "
                         "not shown: 'irbench run CONFIG' (or 'irbench analyse CONFIG') "
                         "computes it again.")
        elif spec.kind == analyses.POOL_BIAS or config.report.reduction_design:
            notes.append(f"{what} has not been computed yet: run 'irbench run CONFIG'.")
        else:
            notes.append(f"{what} is not computed: set report.reduction_design in the config "
                         "(then 'irbench run CONFIG' computes it), or run 'irbench analyse "
                         "CONFIG'.")
    return tuple(notes)


def reduction_section(config, store) -> ReductionSection | None:
    """The judgment-reduction experiment on the first qrels set, as stored for the store's
    current inputs (irbench run or irbench analyse computes it)."""
    spec = analyses.reduction_spec(config, store)
    saved = analyses.load(store, spec) if spec is not None else None
    if saved is None:
        return None
    result = Reduction.from_json(saved)
    design = DESIGNS[result.design]
    labels = tuple(f"{f:.0%}" for f in result.fractions)
    rows = tuple(ReductionRow(m, tuple(num3(t) for t in result.tau[i]),
                              tuple(num3(t) for t in result.tau_map[i]),
                              tuple(f"{e:.4f}" for e in result.rmse[i]),
                              figures.PALETTE[i % len(figures.PALETTE)])
                 for i, m in enumerate(result.measures))
    figure = figures.reduction(result.measures, labels, result.tau, result.tau_map, design.name)
    return ReductionSection(design=design.name, how=design.description,
                            citation=design.citation, fractions=labels,
                            seeds=", ".join(map(str, result.seeds)), rows=rows, figure=figure,
                            findings=reduction_findings(result))


# why a measure equals another when judgments are removed (not sampled): nothing is left
# unjudged inside the pool, so the estimator has nothing to estimate
_BY_CONSTRUCTION = {("AP", "infAP"): "infAP estimates AP from a sample of the pool; when the "
                    "dropped judgments are removed rather than marked unjudged, no document of "
                    "the pool is unjudged and infAP equals AP by construction"}


def reduction_findings(result: Reduction) -> tuple[str, ...]:
    """Sentences computed from the experiment's numbers: measures whose values equal
    another's at every fraction (and why, when it holds by construction), which measures keep
    their ranking best and worst at the fewest judgments, and which stay closest to MAP."""
    out = []
    names = list(result.measures)
    same: set[int] = set()
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if j in same or not (np.allclose(result.tau[i], result.tau[j], equal_nan=True) and
                                 np.allclose(result.rmse[i], result.rmse[j], equal_nan=True)):
                continue
            same.add(j)
            why = _BY_CONSTRUCTION.get((names[i], names[j]))
            out.append(f"{names[j]} gives the same values as {names[i]} at every fraction "
                       f"under design {result.design}" +
                       (f": {why}. Its line is {names[i]}'s and it is no evidence of its own."
                        if why else "; their lines coincide."))
    last = len(result.fractions) - 1
    if last > 0:
        kept = [i for i in range(len(names)) if i not in same and
                np.isfinite(result.tau[i, last])]
        if len(kept) >= 2:
            order = sorted(kept, key=lambda i: (-result.tau[i, last], names[i]))
            best, worst = order[0], order[-1]
            ties = [names[i] for i in order if result.tau[i, last] == result.tau[best, last]]
            out.append(f"With {result.fractions[last]:.0%} of the judgments, "
                       f"{join_names(ties)} {'keeps its' if len(ties) == 1 else 'keep their'} "
                       f"full-judgment ranking best (tau {result.tau[best, last]:.3f}) and "
                       f"{names[worst]} least (tau {result.tau[worst, last]:.3f}): on these "
                       f"runs {join_names(ties)} {'is' if len(ties) == 1 else 'are'} the safer "
                       "choice when the pool is shallow or runs were not pooled.")
            near = max(kept, key=lambda i: (result.tau_map[i, last], -i))
            out.append(f"Closest to the official ranking (MAP on all judgments) with "
                       f"{result.fractions[last]:.0%} of the judgments: {names[near]} "
                       f"(tau {result.tau_map[near, last]:.3f}).")
    return tuple(out)


def pool_bias(config, store) -> PoolBias | None:
    """Leave-one-group-out on the first qrels set (see analyses.pool_bias_spec), as stored
    for the store's current inputs; how much of the qrels the rebuilt pool holds is
    reported, with a warning when it is not the judged pool."""
    spec = analyses.pool_bias_spec(config, store)
    data = analyses.load(store, spec) if spec is not None else None
    if spec is None or data is None:
        return None
    declared, per_group = spec.params["declared"], spec.params["per_group"]
    full, reduced = np.array(data["full"]), np.array(data["reduced"])
    change = reduced - full
    coverage = Coverage(*data["coverage"])
    rows = tuple(BiasRow(name=data["runs"][i], group=data["unit"][i],
                         removed=int(data["removed"][i]),
                         removed_relevant=int(data["removed_relevant"][i]), full=num(full[i]),
                         reduced=num(reduced[i]), change=signed(change[i]))
                 for i in np.argsort(change, kind="stable"))
    how = (f"{data['pooled']} run(s) declared pooled: true" if declared is not None else
           f"each group's first {per_group} run(s) by priority" if per_group else "every run")
    warning = "" if coverage.exact else (
        f"{coverage.describe()}: this is not the pool that was judged, so the bias figures are "
        "unreliable; declare each system's 'pooled: true|false' in the config (or set "
        "report.pool_depth to the judged depth)")
    return PoolBias(depth=spec.params["depth"], per_group=str(per_group) if per_group else "all",
                    pooled=how, coverage=coverage.describe(), warning=warning,
                    mean_change=signed(change.mean()),
                    max_drop=f"{max(0.0, -change.min()):.4f}", rows=rows)
