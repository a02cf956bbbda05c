"""Random-effects meta-analysis of a system against a baseline across test collections.

Per collection, :func:`collection_effect` turns the paired per-topic scores of the system and
the baseline (topics with a NaN dropped pairwise) into one effect and its variance; the
:data:`EFFECTS` registry names the kinds (differences ``d_i = system_i - baseline_i`` over the
``n`` paired topics, ``s`` their standard deviation with ddof=1):

- ``raw``: the mean difference ``D = mean(d)``, variance ``s^2 / n`` (Borenstein, Hedges,
  Higgins & Rothstein 2009, *Introduction to Meta-Analysis*, ch. 4, eqs. 4.6-4.8);
- ``smd``: the standardised mean difference of paired data ``d_z = D / s`` (Cohen's d_z,
  Lakens 2013), variance ``1/n + d_z^2 / (2n)`` (the standardised one-sample mean; Borenstein
  et al. 2009, ch. 4); with ``hedges=True`` (default) times Hedges' small-sample correction
  ``J = 1 - 3 / (4 df - 1)``, ``df = n - 1``, and the variance times ``J^2`` (eqs. 4.22-4.25).

Soboroff (CIKM 2018, "Meta-analysis for retrieval experiments involving multiple test
collections") combines such raw and standardised differences across collections.

A collection with fewer than 2 paired topics, or whose differences are all equal (within
rounding: no variance to weigh it by), gets an :class:`Effect` with a ``reason`` and no value:
:func:`meta_analysis` leaves it out and names it with that reason in its result, never as a
silent NaN.

:func:`meta_analysis` combines the effects with statsmodels' ``combine_effects`` (the optional
``stats`` extra): the fixed-effect (inverse variance) estimate and the random-effects one with
tau^2 by DerSimonian-Laird (``dl``) or Paule-Mandel (``pm``). statsmodels' ``dl`` leaves
tau^2 = (Q - df) / C negative when Q < df (and I^2 = 1 - df/Q negative); the estimator is
truncated at zero (DerSimonian & Laird 1986; Borenstein et al. 2009, ch. 16), so then tau^2 = 0,
I^2 = 0 and the random-effects estimate is the fixed-effect one. Otherwise every value equals
statsmodels'. Intervals and the test of the combined effect use the normal distribution (z).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ..errors import StatisticsError, StatisticsExtraError, install
from ..registry import Registry

METHODS = ("dl", "pm")  # statsmodels' method_re: DerSimonian-Laird, Paule-Mandel
DEFAULT_CONFIDENCE = 0.95
# differences that spread less than this (times the scores' scale) are all equal: what
# separates 0.4 - 0.3 from 0.3 - 0.2 is rounding, not variance
EQUAL = 1e-12


@dataclass(frozen=True, kw_only=True)
class Effect:
    """One collection's effect of the system against the baseline (``kind``: an
    :data:`EFFECTS` name; ``hedges``: the smd corrected), over ``n`` paired topics. A
    collection that cannot be weighed has ``reason`` (why) and NaN effect and variance."""

    effect: float
    variance: float
    n: int
    kind: str = "raw"
    hedges: bool = False
    reason: str = ""

    def __post_init__(self):
        if self.reason:
            if not (math.isnan(self.effect) and math.isnan(self.variance)):
                raise StatisticsError(f"an effect left out ({self.reason}) has no value")
        elif not (math.isfinite(self.effect) and math.isfinite(self.variance)
                  and self.variance > 0):
            raise StatisticsError(f"an effect needs a finite value and a positive variance "
                                  f"(got {self.effect!r}, variance {self.variance!r})")

    @property
    def usable(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class EffectKind:
    """How a collection's paired differences become an effect and its variance:
    ``compute(differences, hedges) -> (effect, variance)``, differences of >= 2 topics with
    a positive variance."""

    name: str
    summary: str
    compute: Callable[[np.ndarray, bool], tuple[float, float]]


EFFECTS: Registry[EffectKind] = Registry("effect kind")


def _raw(d: np.ndarray, hedges: bool) -> tuple[float, float]:
    return float(d.mean()), float(d.var(ddof=1) / len(d))


def hedges_j(df: int) -> float:
    """Hedges' approximate small-sample correction J = 1 - 3 / (4 df - 1)."""
    return 1.0 - 3.0 / (4.0 * df - 1.0)


def _smd(d: np.ndarray, hedges: bool) -> tuple[float, float]:
    n = len(d)
    dz = float(d.mean() / d.std(ddof=1))
    variance = 1.0 / n + dz * dz / (2.0 * n)
    if not hedges:
        return dz, variance
    j = hedges_j(n - 1)
    return j * dz, j * j * variance


EFFECTS.add(EffectKind("raw", "the mean per-topic difference; variance s^2/n", _raw))
EFFECTS.add(EffectKind("smd", "d_z = mean/sd of the differences (Hedges' g with hedges=True); "
                       "variance 1/n + d^2/(2n) (times J^2)", _smd))


def _kind(name: str) -> EffectKind:
    if name not in EFFECTS:
        close = EFFECTS.closest(name)
        raise StatisticsError(f"unknown effect kind '{name}' (kinds: {', '.join(EFFECTS)}"
                              + (f"; did you mean '{close}'?)" if close else ")"))
    return EFFECTS[name]


def collection_effect(system, baseline, kind: str = "raw", hedges: bool = True) -> Effect:
    """The effect of ``system`` against ``baseline`` on one collection: two equal-length
    arrays of per-topic scores in the same topic order (a topic with NaN in either dropped).
    ``hedges`` applies to ``smd`` only. Fewer than 2 paired topics, or differences all equal:
    an Effect with a ``reason`` instead of a value."""
    member = _kind(kind)
    x = np.asarray(system, dtype=np.float64)
    y = np.asarray(baseline, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise StatisticsError(f"per-topic scores of shapes {x.shape} and {y.shape}: two "
                              f"vectors of equal length are needed, one value per topic")
    if np.isinf(x).any() or np.isinf(y).any():
        raise StatisticsError("per-topic scores hold an infinite value")
    kept = ~(np.isnan(x) | np.isnan(y))
    d = x[kept] - y[kept]
    n = len(d)
    hedges = bool(hedges) and kind == "smd"
    reason = ""
    if n < 2:
        reason = f"{n} paired topic{'s' if n != 1 else ''} (at least 2 are needed)"
    elif np.ptp(d) <= EQUAL * max(1.0, float(np.abs(x[kept]).max()),
                                  float(np.abs(y[kept]).max())):
        reason = (f"the differences of its {n} paired topics are all {float(d[0]):g}: no "
                  f"variance to weigh the collection by")
    if reason:
        return Effect(effect=math.nan, variance=math.nan, n=n, kind=kind, hedges=hedges,
                      reason=reason)
    effect, variance = member.compute(d, hedges)
    return Effect(effect=effect, variance=variance, n=n, kind=kind, hedges=hedges)


@dataclass(frozen=True, kw_only=True)
class CollectionRow:
    """One collection in the meta-analysis: its effect, variance, topics, its ``confidence``
    interval (normal), and its relative weight in the random-effects and fixed-effect
    estimates (each set of weights sums to 1)."""

    name: str
    effect: float
    variance: float
    n: int
    ci_low: float
    ci_high: float
    weight: float
    fixed_weight: float


@dataclass(frozen=True, kw_only=True)
class MetaResult:
    """A random-effects meta-analysis of one system against a baseline across collections.

    effect, se, ci_low, ci_high, z, p_value: the random-effects estimate (two-sided p);
    tau2: the between-collection variance (``method``), i2: I^2 = (Q - df) / Q (0 when Q <=
    df), q, q_df, q_p_value: Cochran's Q, its df = k - 1 and chi^2 p (None with one
    collection); fixed_*: the fixed-effect (inverse variance) estimate; tau2_truncated: the
    DerSimonian-Laird tau^2 was negative and is taken as 0. left_out: (collection, why).
    """

    kind: str
    hedges: bool
    method: str
    confidence: float
    collections: tuple[CollectionRow, ...]
    effect: float
    se: float
    ci_low: float
    ci_high: float
    z: float
    p_value: float
    tau2: float
    i2: float
    q: float
    q_df: int
    q_p_value: float | None
    fixed_effect: float
    fixed_se: float
    fixed_ci_low: float
    fixed_ci_high: float
    tau2_truncated: bool
    left_out: tuple[tuple[str, str], ...]


def _combine_effects():
    """statsmodels' combine_effects, or why it cannot be used."""
    try:
        from statsmodels.stats.meta_analysis import combine_effects
    except ImportError:
        raise StatisticsExtraError(
            f"the meta-analysis across collections needs statsmodels: {install('stats')}"
        ) from None
    return combine_effects


def _check(effects: Mapping[str, Effect], method: str, confidence: float) -> tuple[str, bool]:
    if method not in METHODS:
        raise StatisticsError(f"unknown meta-analysis method '{method}' (choose from "
                              f"{', '.join(METHODS)})")
    if not 0 < confidence < 1:
        raise StatisticsError(f"confidence {confidence!r} is not between 0 and 1")
    if not effects:
        raise StatisticsError("a meta-analysis needs at least one collection")
    kinds = {(e.kind, e.hedges) for e in effects.values()}
    if len(kinds) > 1:
        shown = ", ".join(f"{n}: {e.kind}{' (hedges)' if e.hedges else ''}"
                          for n, e in effects.items())
        raise StatisticsError(f"the collections' effects are of different kinds ({shown}); "
                              f"combine effects of one kind")
    return kinds.pop()


def meta_analysis(effects: Mapping[str, Effect], method: str = "dl",
                  confidence: float = DEFAULT_CONFIDENCE) -> MetaResult:
    """Combine the collections' effects (by collection name, in their order) into a
    random-effects estimate; collections whose Effect has a reason are left out with it."""
    kind, hedges = _check(effects, method, confidence)
    used = {name: e for name, e in effects.items() if e.usable}
    left_out = tuple((name, e.reason) for name, e in effects.items() if not e.usable)
    if not used:
        raise StatisticsError("no collection can be combined: " + "; ".join(
            f"{name}: {why}" for name, why in left_out))
    combine_effects = _combine_effects()
    k = len(used)
    eff = np.array([e.effect for e in used.values()])
    var = np.array([e.variance for e in used.values()])
    alpha = 1.0 - confidence
    with np.errstate(all="ignore"):  # one collection: statsmodels divides by df = 0
        res = combine_effects(eff, var, method_re=method, alpha=alpha)
        fixed_ci, random_ci, _, _ = res.conf_int(alpha=alpha, use_t=False)
        low, high = res.conf_int_samples(alpha=alpha, use_t=False)
    truncated = k > 1 and float(res.tau2) < 0
    if k == 1 or float(res.tau2) <= 0:  # tau^2 = 0: the random effects are the fixed ones
        tau2, effect, se = 0.0, float(res.mean_effect_fe), float(res.sd_eff_w_fe)
        weights, ci = res.weights_rel_fe, fixed_ci
    else:
        tau2, effect, se = float(res.tau2), float(res.mean_effect_re), float(res.sd_eff_w_re)
        weights, ci = res.weights_rel_re, random_ci
    q = float(res.q) if k > 1 else 0.0
    z = effect / se
    rows = tuple(
        CollectionRow(name=name, effect=e.effect, variance=e.variance, n=e.n,
                      ci_low=float(low[i]), ci_high=float(high[i]), weight=float(weights[i]),
                      fixed_weight=float(res.weights_rel_fe[i]))
        for i, (name, e) in enumerate(used.items()))
    return MetaResult(
        kind=kind, hedges=hedges, method=method, confidence=confidence, collections=rows,
        effect=effect, se=se, ci_low=float(ci[0]), ci_high=float(ci[1]), z=z,
        p_value=float(2 * _st.norm.sf(abs(z))), tau2=tau2,
        i2=float(res.i2) if q > k - 1 else 0.0, q=q, q_df=k - 1,
        q_p_value=float(res.test_homogeneity().pvalue) if k > 1 else None,
        fixed_effect=float(res.mean_effect_fe), fixed_se=float(res.sd_eff_w_fe),
        fixed_ci_low=float(fixed_ci[0]), fixed_ci_high=float(fixed_ci[1]),
        tau2_truncated=truncated, left_out=left_out)
