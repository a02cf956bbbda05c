"""Topic-blocked comparisons of many systems: two-way ANOVA without replication, Tukey's HSD on
it, and the randomised Tukey HSD.

IR scores vary more between topics than between systems, so the topic is a block: the model is
``score[i, j] = mu + system_i + topic_j + error`` with one score per (system, topic) cell, and
the error variance is the residual mean square (Sakai, *Laboratory Experiments in Information
Retrieval*, 2018, ch. 4 and 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st
from scipy.interpolate import CubicSpline

from ..errors import EvaluationError
from .paired import DEFAULT_SAMPLES, DEFAULT_SEED
from .resampling import CHUNK_BYTES, RELATIVE_TOLERANCE
from .scores import Scores

DIRECT_SF = 120  # distinct q values beyond which studentized_range.sf is interpolated


@dataclass(frozen=True, kw_only=True)
class AnovaResult:
    """Two-way ANOVA without replication (system x topic): sums of squares, degrees of freedom,
    mean squares, and the F tests of the system and topic effects."""

    measure: str
    systems: int
    topics: int
    ss_system: float
    ss_topic: float
    ss_error: float
    ss_total: float
    df_system: int
    df_topic: int
    df_error: int
    ms_system: float
    ms_topic: float
    ms_error: float
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float


@dataclass(frozen=True, eq=False, kw_only=True)
class TukeyResult:
    """All-pairs comparisons that control the family-wise error rate.

    ``p_values[i, j]`` is the p-value of systems ``i`` and ``j`` (1 on the diagonal);
    ``statistic[i, j]`` the studentised range q = |mean_i - mean_j| / sqrt(MS_error / n)
    (``tukey-hsd``) or the absolute mean difference (``randomized-tukey-hsd``);
    ``critical_difference`` the smallest mean difference significant at ``alpha``.
    """

    method: str
    measure: str
    systems: tuple[str, ...]
    means: np.ndarray = field(repr=False)
    statistic: np.ndarray = field(repr=False)
    p_values: np.ndarray = field(repr=False)
    critical_difference: float
    alpha: float
    ms_error: float
    df_error: int
    samples: int | None
    seed: int | None


def _matrix(scores: Scores) -> np.ndarray:
    scores.check_complete()
    m, n = scores.values.shape
    if m < 2 or n < 2:
        raise EvaluationError(f"{scores.measure}: an ANOVA needs at least 2 systems and 2 "
                              f"topics, got {m} x {n}")
    return scores.values


def anova_two_way(scores: Scores) -> AnovaResult:
    """Two-way ANOVA without replication of ``scores`` (systems x topics)."""
    v = _matrix(scores)
    m, n = v.shape
    grand = v.mean()
    ss_system = n * ((v.mean(axis=1) - grand) ** 2).sum()
    ss_topic = m * ((v.mean(axis=0) - grand) ** 2).sum()
    residual = v - v.mean(axis=1, keepdims=True) - v.mean(axis=0, keepdims=True) + grand
    ss_error = (residual**2).sum()
    ss_total = ((v - grand) ** 2).sum()
    df_s, df_t, df_e = m - 1, n - 1, (m - 1) * (n - 1)
    ms_s, ms_t, ms_e = ss_system / df_s, ss_topic / df_t, ss_error / df_e
    with np.errstate(divide="ignore", invalid="ignore"):
        f_s, f_t = ms_s / ms_e, ms_t / ms_e
    return AnovaResult(measure=scores.measure, systems=m, topics=n,
                       ss_system=float(ss_system), ss_topic=float(ss_topic),
                       ss_error=float(ss_error), ss_total=float(ss_total),
                       df_system=df_s, df_topic=df_t, df_error=df_e,
                       ms_system=float(ms_s), ms_topic=float(ms_t), ms_error=float(ms_e),
                       f_system=float(f_s), p_system=float(_st.f.sf(f_s, df_s, df_e)),
                       f_topic=float(f_t), p_topic=float(_st.f.sf(f_t, df_t, df_e)))


def tukey_hsd(scores: Scores, alpha: float = 0.05) -> TukeyResult:
    """Tukey's HSD on the two-way ANOVA (topic-blocked): q_ij = |mean_i - mean_j| /
    sqrt(MS_error / n), p_ij = P(Q > q_ij) for the studentised range Q with (systems,
    df_error) degrees of freedom (``scipy.stats.studentized_range``)."""
    table = anova_two_way(scores)
    means = scores.values.mean(axis=1)
    se = np.sqrt(table.ms_error / table.topics)
    diff = np.abs(means[:, None] - means[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(diff == 0, 0.0, diff / se)
    p = _range_sf(q, table.systems, table.df_error)
    critical = float(_st.studentized_range.ppf(1 - alpha, table.systems, table.df_error) * se)
    return TukeyResult(method="tukey-hsd", measure=scores.measure, systems=scores.systems,
                       means=means, statistic=q, p_values=p, critical_difference=critical,
                       alpha=alpha, ms_error=table.ms_error, df_error=table.df_error,
                       samples=None, seed=None)


def _range_sf(q: np.ndarray, k: int, df: int) -> np.ndarray:
    """studentized_range.sf over a matrix of q. scipy integrates numerically per value (several
    ms each), so beyond :data:`DIRECT_SF` distinct values log sf is interpolated by a cubic
    spline through DIRECT_SF points spread evenly over [0, q_tail], where q_tail is where a
    Bonferroni bound puts the p-value below 1e-13 (every p-value a decision can turn on lies
    there), plus a coarser spline beyond it. Measured against scipy (tests/test_stats.py):
    relative error about 1e-6 at most for p-values above 1e-12 (absolute error below 1e-9 for
    the smaller ones), from 3 to 129 systems, whatever the largest q."""
    flat = q.ravel()
    finite = np.isfinite(flat) & (flat > 0)
    out = np.where(flat > 0, 0.0, 1.0)
    values, inverse = np.unique(flat[finite], return_inverse=True)
    if len(values) <= DIRECT_SF:
        sf = _st.studentized_range.sf(values, k, df)
    else:
        # P(range > q) <= C(k, 2) P(|t_df| > q / sqrt 2): beyond q_tail every p-value < 1e-13
        q_tail = float(np.sqrt(2) * _st.t.isf(1e-13 / (k * (k - 1)), df))
        sf = np.empty(len(values))
        inside = values <= q_tail
        for part, low, high, points in ((inside, 0.0, min(values[-1], q_tail), DIRECT_SF),
                                        (~inside, q_tail, values[-1], DIRECT_SF // 6)):
            if part.any():
                grid = np.linspace(low, high, points)
                log_sf = np.log(np.maximum(_st.studentized_range.sf(grid, k, df), 1e-300))
                sf[part] = np.exp(CubicSpline(grid, log_sf)(values[part]))
    out[finite] = np.clip(sf[inverse], 0.0, 1.0)
    return out.reshape(q.shape)


def randomized_tukey_hsd(scores: Scores, samples: int = DEFAULT_SAMPLES,
                         seed: int | None = DEFAULT_SEED, alpha: float = 0.05) -> TukeyResult:
    """Randomised Tukey HSD (Carterette 2012; Sakai 2014): in each of ``samples`` trials,
    shuffle the system labels within every topic, take the range (largest minus smallest)
    of the system means; p_ij = (b + 1) / (samples + 1) where b counts the trials whose range
    is at least |mean_i - mean_j|. Seeded (``np.random.default_rng(seed)``); trials are drawn
    in chunks of whole topic x system matrices, never one Python iteration per trial."""
    v = _matrix(scores)
    m, n = v.shape
    if int(samples) < 1:
        raise EvaluationError(f"samples must be a positive number, got {samples}")
    ranges = _null_ranges(v, int(samples), seed)
    means = v.mean(axis=1)
    diff = np.abs(means[:, None] - means[None, :])
    tol = RELATIVE_TOLERANCE * max(float(np.abs(means).max()), 1e-300)
    ordered = np.sort(ranges)
    at_least = samples - np.searchsorted(ordered, diff.ravel() - tol, side="left")
    p = ((at_least + 1.0) / (samples + 1.0)).reshape(m, m)
    np.fill_diagonal(p, 1.0)
    critical = float(np.quantile(ranges, 1 - alpha))
    table = anova_two_way(scores)
    return TukeyResult(method="randomized-tukey-hsd", measure=scores.measure,
                       systems=scores.systems, means=means, statistic=diff, p_values=p,
                       critical_difference=critical, alpha=alpha, ms_error=table.ms_error,
                       df_error=table.df_error, samples=int(samples), seed=seed)


def _null_ranges(v: np.ndarray, samples: int, seed: int | None) -> np.ndarray:
    m, n = v.shape
    rng = np.random.default_rng(seed)
    # (topics, systems): shuffle within each row. Each row is sorted first: a uniform shuffle
    # of a row has the same distribution whatever its order, and sorting makes the draws, and
    # so the p-values, the same for any order of the systems given the seed
    by_topic = np.sort(v.T, axis=1)
    step = max(1, CHUNK_BYTES // (8 * m * n))
    ranges = np.empty(samples)
    for start in range(0, samples, step):
        stop = min(samples, start + step)
        trials = np.repeat(by_topic[None], stop - start, axis=0)
        rng.permuted(trials, axis=2, out=trials)
        means = trials.sum(axis=1) / n  # (trials, systems)
        ranges[start:stop] = means.max(axis=1) - means.min(axis=1)
    return ranges
