"""Topic-set size design (Sakai 2016, "Topic set size design", Information Retrieval Journal
19(3); Webber, Moffat & Zobel 2008, "Statistical power in retrieval experimentation", CIKM).

Given alpha, the power wanted (1 - beta), the smallest difference worth detecting and the
variance of the scores, how many topics does an experiment need, and what power does a topic
set of a given size achieve?

- ``t``: the two-sided (or one-sided) paired t-test of two systems. ``variance`` is the
  variance of the per-topic differences, sigma_d^2; power from the noncentral t with
  n - 1 degrees of freedom and noncentrality sqrt(n) * min_diff / sigma_d.
- ``anova``: the F test of the system effect in the two-way ANOVA without replication
  (topic-blocked) of ``systems`` systems. ``variance`` is the residual variance sigma^2;
  ``min_diff`` is the smallest range of system means worth detecting (the two extreme
  systems min_diff apart, the others at the grand mean: the least favourable configuration),
  so the noncentrality is n * min_diff^2 / (2 sigma^2), with (systems - 1,
  (systems - 1)(n - 1)) degrees of freedom. Sakai's Excel tools use the one-way design; the
  blocked one matches irbench's ANOVA: for the same variance it has fewer error degrees of
  freedom, but its residual variance leaves out the topic effect, usually the larger part.

:func:`estimate_variance` takes both from stored scores: the residual mean square MS_E of the
two-way ANOVA, and for ``t`` 2 MS_E, which is exactly the variance of the differences averaged
over all system pairs. With two systems the two designs agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ..errors import StatisticsError
from .anova import anova_two_way
from .scores import Scores, check_alternative, check_choice

DESIGNS = ("t", "anova")
MAX_TOPICS = 1_000_000


@dataclass(frozen=True, kw_only=True)
class TopicSetSize:
    """topics: the fewest topics reaching ``power`` (achieved: ``achieved_power``);
    current_topics / current_power: the topic set at hand and the power it achieves for
    ``min_diff`` (None when no current size was given)."""

    design: str
    alpha: float
    power: float
    min_diff: float
    variance: float
    systems: int
    alternative: str
    topics: int
    achieved_power: float
    current_topics: int | None
    current_power: float | None


def _check(design, alpha, min_diff, variance, systems, alternative):
    check_choice("design", design, DESIGNS)
    check_alternative(alternative)
    if not 0 < alpha < 1:
        raise StatisticsError(f"alpha must lie between 0 and 1, got {alpha}")
    if not min_diff > 0 or not variance > 0:
        raise StatisticsError(f"min_diff and variance must be positive, got {min_diff} and "
                         f"{variance}")
    if design == "anova":
        if systems < 2:
            raise StatisticsError(f"the ANOVA design needs at least 2 systems, got {systems}")
        if alternative != "two-sided":
            raise StatisticsError("the ANOVA design is two-sided only")


def _power(topics: np.ndarray, design: str, alpha: float, min_diff: float, variance: float,
           systems: int, alternative: str) -> np.ndarray:
    n = np.asarray(topics, dtype=np.float64)
    if design == "t":
        df = n - 1
        nc = np.sqrt(n) * min_diff / np.sqrt(variance)
        if alternative == "two-sided":
            crit = _st.t.ppf(1 - alpha / 2, df)
            return _st.nct.sf(crit, df, nc) + _st.nct.cdf(-crit, df, nc)
        crit = _st.t.ppf(1 - alpha, df)
        return _st.nct.sf(crit, df, nc)
    df1 = systems - 1
    df2 = (systems - 1) * (n - 1)
    nc = n * min_diff**2 / (2 * variance)
    return _st.ncf.sf(_st.f.ppf(1 - alpha, df1, df2), df1, df2, nc)


def power(topics: int, min_diff: float, variance: float, *, design: str = "t",
          alpha: float = 0.05, systems: int = 2, alternative: str = "two-sided") -> float:
    """The power a set of ``topics`` topics achieves for a true difference of ``min_diff``."""
    _check(design, alpha, min_diff, variance, systems, alternative)
    if topics < 2:
        raise StatisticsError(f"power needs at least 2 topics, got {topics}")
    return float(_power(np.array([topics]), design, alpha, min_diff, variance, systems,
                        alternative)[0])


def topic_set_size(min_diff: float, variance: float, *, design: str = "t", alpha: float = 0.05,
                   power: float = 0.8, systems: int = 2, alternative: str = "two-sided",
                   current_topics: int | None = None) -> TopicSetSize:
    """The fewest topics for which the test of ``design`` detects a difference of
    ``min_diff`` with probability ``power`` at level ``alpha``."""
    _check(design, alpha, min_diff, variance, systems, alternative)
    if not 0 < power < 1:
        raise StatisticsError(f"power must lie between 0 and 1, got {power}")
    z = _st.norm.ppf(1 - (alpha / 2 if alternative == "two-sided" else alpha)) + \
        _st.norm.ppf(power)
    guess = int(np.ceil(z**2 * (variance if design == "t" else 2 * variance) / min_diff**2))
    upper = 2 * guess + 64
    while True:
        if upper > MAX_TOPICS:
            raise StatisticsError(f"more than {MAX_TOPICS:,} topics would be needed")
        n = np.arange(2, upper + 1)
        achieved = _power(n, design, alpha, min_diff, variance, systems, alternative)
        enough = np.flatnonzero(achieved >= power)
        if enough.size:
            k = enough[0]
            break
        upper *= 4
    current = None
    if current_topics is not None:
        current = float(_power(np.array([current_topics]), design, alpha, min_diff, variance,
                               systems, alternative)[0])
    return TopicSetSize(design=design, alpha=alpha, power=power, min_diff=min_diff,
                        variance=variance, systems=systems, alternative=alternative,
                        topics=int(n[k]), achieved_power=float(achieved[k]),
                        current_topics=current_topics, current_power=current)


def estimate_variance(scores: Scores, design: str = "t") -> float:
    """The variance the design needs, from per-topic scores of several systems: the residual
    mean square of the two-way ANOVA for ``anova``; twice it for ``t`` (= the variance of the
    per-topic differences averaged over all pairs of systems)."""
    check_choice("design", design, DESIGNS)
    ms_error = anova_two_way(scores).ms_error
    return 2 * ms_error if design == "t" else ms_error


def plan_topics(scores: Scores, min_diff: float, *, design: str = "t", alpha: float = 0.05,
                power: float = 0.8, alternative: str = "two-sided") -> TopicSetSize:
    """:func:`topic_set_size` with the variance estimated from ``scores``, its systems as the
    ANOVA's, and the power of its own topic set as the current one."""
    return topic_set_size(min_diff, estimate_variance(scores, design), design=design,
                          alpha=alpha, power=power, systems=len(scores.systems),
                          alternative=alternative, current_topics=len(scores.topics))
