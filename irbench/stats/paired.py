"""Paired comparisons of two systems over the same topics.

Five tests, one result type (:class:`TestResult`):

- ``t``: paired t-test (``scipy.stats.ttest_rel``);
- ``wilcoxon``: Wilcoxon signed-rank test (``scipy.stats.wilcoxon``; zero differences dropped,
  exact null distribution for small samples without ties, as scipy chooses for each pair);
- ``sign``: sign test, the binomial test of the number of positive differences among the non-zero
  ones (``scipy.stats.binomtest`` with p = 1/2, computed in closed form over many pairs);
- ``randomization``: paired randomisation (permutation) test of the mean difference: each topic's
  difference keeps or flips its sign (Fisher 1935; Smucker, Allan & Carterette 2007);
- ``bootstrap``: paired bootstrap test of the studentised mean difference (Efron & Tibshirani
  1993, sec. 16.4; Sakai 2006).

t, randomisation and bootstrap test the mean difference; Wilcoxon and the sign test test the
median (on skewed differences with mean zero they reject more often than alpha:
docs/statistics.md).

The two resampling tests are seeded (default seed 0, recorded in the result), draw
``samples`` resamples (default 10,000) at once, report (b + 1) / (B + 1), and enumerate every
resample instead when there are no more of them than ``samples`` (then ``exact`` is True and
``seed`` None).

Every result also describes the difference ``x - y``: its mean, a confidence interval for it
(``ci``: ``t``, the default, or bootstrap ``percentile`` / ``bca``), the standardised effect
size d_z = mean / sd of the differences, and Hedges' g (see :func:`hedges_g`). A test of two
identical score vectors (every difference 0) has statistic 0 and p-value 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _st
from scipy.special import gammaln

from ..errors import StatisticsError
from .choices import CI_METHODS, DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST, TESTS  # noqa: F401
from .resampling import bootstrap, bootstrap_counts, randomization_p, sign_flips
from .scores import check_alternative, check_choice, paired_arrays


@dataclass(frozen=True, kw_only=True)
class TestResult:
    """One paired test of ``x`` against ``y`` (differences are ``x - y``).

    statistic: t (``t``, ``bootstrap``), W (``wilcoxon``, as scipy reports it), the number of
    positive differences (``sign``), the mean difference (``randomization``).
    p_value: for ``alternative`` (``two-sided``; ``greater``: x > y; ``less``: x < y).
    ci_low, ci_high: ``confidence`` interval of the mean difference by ``ci_method`` (one-sided
    intervals are open on one side, as scipy's). effect_size: d_z; hedges_g: g_av corrected.
    samples, seed: the resampling behind the p-value or interval (None when there is none);
    exact: every resample was enumerated.
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    alternative: str
    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    ci_method: str
    confidence: float
    effect_size: float
    hedges_g: float
    samples: int | None
    seed: int | None
    exact: bool
    method: str = ""  # how the p-value was computed, e.g. wilcoxon's "exact" or "approx"

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value <= alpha


@dataclass(frozen=True, kw_only=True)
class Columns:
    """Results of one test over many pairs at once: every array has one value per pair."""

    statistic: np.ndarray
    p_value: np.ndarray
    mean_diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray
    hedges_g: np.ndarray
    samples: int | None
    seed: int | None
    exact: bool
    method: np.ndarray | None = None  # per pair, where the test chooses (wilcoxon)

    def result(self, k: int, test: str, alternative: str, n: int, ci: str,
               confidence: float) -> TestResult:
        return TestResult(test=test, statistic=float(self.statistic[k]),
                          p_value=float(self.p_value[k]), alternative=alternative, n=n,
                          mean_diff=float(self.mean_diff[k]), ci_low=float(self.ci_low[k]),
                          ci_high=float(self.ci_high[k]), ci_method=ci, confidence=confidence,
                          effect_size=float(self.effect_size[k]),
                          hedges_g=float(self.hedges_g[k]), samples=self.samples,
                          seed=self.seed, exact=self.exact,
                          method="" if self.method is None else str(self.method[k]))


def paired_test(x, y, test: str = DEFAULT_TEST, *, alternative: str = "two-sided",
                samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                ci: str = "t", confidence: float = 0.95, exact: bool | None = None
                ) -> TestResult:
    """Test whether ``x`` and ``y`` (scores of two systems over the same topics: two arrays
    aligned by position, or two mappings topic -> score) differ in mean.

    test: one of :data:`TESTS` (default ``randomization``); samples, seed, exact: for the
    ``randomization`` and ``bootstrap`` tests and the bootstrap intervals (exact None:
    enumerate when there are at most ``samples`` resamples). Raises EvaluationError when the
    vectors do not cover the same topics.
    """
    a, b = paired_arrays(x, y)
    check_choice("test", test, TESTS)
    cols = paired_columns(a[:, None], b[:, None], test, alternative=alternative,
                          samples=samples, seed=seed, ci=ci, confidence=confidence, exact=exact)
    return cols.result(0, test, alternative, len(a), ci, confidence)


def t_test(x, y, *, alternative: str = "two-sided", ci: str = "t", confidence: float = 0.95,
           samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED) -> TestResult:
    """Paired t-test (``scipy.stats.ttest_rel``)."""
    return paired_test(x, y, "t", alternative=alternative, ci=ci, confidence=confidence,
                       samples=samples, seed=seed)


def wilcoxon_test(x, y, *, alternative: str = "two-sided", ci: str = "t",
                  confidence: float = 0.95, samples: int = DEFAULT_SAMPLES,
                  seed: int | None = DEFAULT_SEED) -> TestResult:
    """Wilcoxon signed-rank test (``scipy.stats.wilcoxon``)."""
    return paired_test(x, y, "wilcoxon", alternative=alternative, ci=ci, confidence=confidence,
                       samples=samples, seed=seed)


def sign_test(x, y, *, alternative: str = "two-sided", ci: str = "t", confidence: float = 0.95,
              samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED) -> TestResult:
    """Sign test: ``scipy.stats.binomtest(positives, non-zero differences, 0.5)``."""
    return paired_test(x, y, "sign", alternative=alternative, ci=ci, confidence=confidence,
                       samples=samples, seed=seed)


def randomization_test(x, y, *, samples: int = DEFAULT_SAMPLES,
                       seed: int | None = DEFAULT_SEED, alternative: str = "two-sided",
                       exact: bool | None = None, ci: str = "t", confidence: float = 0.95
                       ) -> TestResult:
    """Paired randomisation test of the mean difference (sign flips of the differences)."""
    return paired_test(x, y, "randomization", alternative=alternative, samples=samples,
                       seed=seed, exact=exact, ci=ci, confidence=confidence)


def bootstrap_test(x, y, *, samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                   alternative: str = "two-sided", exact: bool | None = None, ci: str = "t",
                   confidence: float = 0.95) -> TestResult:
    """Paired bootstrap test of the studentised mean difference."""
    return paired_test(x, y, "bootstrap", alternative=alternative, samples=samples, seed=seed,
                       exact=exact, ci=ci, confidence=confidence)


def hedges_g(x, y) -> float:
    """Hedges' g for paired scores: the mean difference over s_av = sqrt((s_x^2 + s_y^2) / 2),
    the root mean square of the two standard deviations (Cumming 2012, *Understanding the New
    Statistics*; Lakens 2013's d_av averages the standard deviations themselves instead), times
    Hedges' (1981) exact small-sample correction J(df) = Gamma(df/2) / (sqrt(df/2)
    Gamma((df-1)/2)) with df = n - 1; J(df) ~ 1 - 3 / (4 df - 1)."""
    a, b = paired_arrays(x, y)
    return float(_hedges(a[:, None], b[:, None])[0])


def _correction(df: int) -> float:
    if df < 2:
        return 0.0 if df == 1 else float("nan")
    return float(np.exp(gammaln(df / 2) - gammaln((df - 1) / 2)) / np.sqrt(df / 2))


def _hedges(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    n = X.shape[0]
    mean = (X - Y).mean(axis=0)
    s_av = np.sqrt((X.var(axis=0, ddof=1) + Y.var(axis=0, ddof=1)) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(mean == 0, 0.0, mean / s_av) * _correction(n - 1)
    return g


def _t_interval(D: np.ndarray, alternative: str, confidence: float
                ) -> tuple[np.ndarray, np.ndarray]:
    n = D.shape[0]
    mean = D.mean(axis=0)
    se = D.std(axis=0, ddof=1) / np.sqrt(n)
    if alternative == "two-sided":
        half = _st.t.ppf(0.5 + confidence / 2, n - 1) * se
        return mean - half, mean + half
    half = _st.t.ppf(confidence, n - 1) * se
    if alternative == "greater":
        return mean - half, np.full_like(mean, np.inf)
    return np.full_like(mean, -np.inf), mean + half


def paired_columns(X: np.ndarray, Y: np.ndarray, test: str | None, *,
                   alternative: str = "two-sided", samples: int = DEFAULT_SAMPLES,
                   seed: int | None = DEFAULT_SEED, ci: str = "t", confidence: float = 0.95,
                   exact: bool | None = None) -> Columns:
    """One test over every column of X and Y (topics x pairs) at once; the vectorised core of
    :func:`paired_test` and :func:`irbench.stats.compare`. With ``test`` None only the
    description (mean, interval, effect sizes) is computed; statistic and p-value are NaN."""
    check_alternative(alternative)
    check_choice("interval", ci, CI_METHODS)
    if not 0 < confidence < 1:
        raise StatisticsError(f"confidence must lie between 0 and 1, got {confidence}")
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    D = X - Y
    n, pairs = D.shape
    mean = D.mean(axis=0)
    sd = D.std(axis=0, ddof=1)
    zero = ~D.any(axis=0)  # identical systems
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(mean == 0, 0.0, mean / sd)
    statistic = np.full(pairs, np.nan)
    p = np.full(pairs, np.nan)
    used_samples = used_seed = None
    is_exact = False
    counts = None
    live = ~zero
    if test == "t":
        with np.errstate(divide="ignore", invalid="ignore"):
            res = _st.ttest_rel(X[:, live], Y[:, live], axis=0, alternative=alternative)
        statistic[live], p[live] = res.statistic, res.pvalue
    elif test == "wilcoxon":
        method = _wilcoxon_methods(D)
        for kind in ("exact", "approx"):  # each pair as scipy treats it alone
            cols = np.flatnonzero(live & (method == kind))
            if len(cols):
                res = _st.wilcoxon(D[:, cols], axis=0, alternative=alternative, method=kind)
                statistic[cols], p[cols] = res.statistic, res.pvalue
    elif test == "sign":
        statistic, p = _sign(D, alternative)
    elif test == "randomization":
        flips = sign_flips(n, samples, seed, exact)
        statistic = mean.copy()
        p = randomization_p(D, flips, alternative)
        used_samples, used_seed, is_exact = flips.samples, flips.seed, flips.exact
    elif test == "bootstrap":
        counts = bootstrap_counts(n, samples, seed, exact)
        out = bootstrap(D, counts, alternative, True, None if ci == "t" else ci, confidence)
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.where(mean == 0, 0.0, mean / (sd / np.sqrt(n)))
        p = out.tested()
        used_samples, used_seed, is_exact = counts.samples, counts.seed, counts.exact
    if test is not None:
        statistic = np.where(zero, 0.0, statistic)
        p = np.where(zero, 1.0, p)
    if ci == "t":
        low, high = _t_interval(D, alternative, confidence)
    elif test == "bootstrap":
        low, high = out.interval()
    else:
        counts = bootstrap_counts(n, samples, seed)
        out = bootstrap(D, counts, alternative, False, ci, confidence)
        low, high = out.interval()
        if used_samples is None:
            used_samples, used_seed = counts.samples, counts.seed
    return Columns(statistic=statistic, p_value=p, mean_diff=mean, ci_low=low, ci_high=high,
                   effect_size=effect, hedges_g=_hedges(X, Y), samples=used_samples,
                   seed=used_seed, exact=is_exact, method=method if test == "wilcoxon" else None)


def _wilcoxon_methods(D: np.ndarray) -> np.ndarray:
    """Per pair, the method ``scipy.stats.wilcoxon`` chooses for that pair alone: ``exact``
    for at most 50 differences with no zero and no tie, else ``approx`` (normal). A batched
    call would give every pair the approximation once any pair has a zero or a tie, so that
    a pair's p-value would depend on the other pairs computed with it."""
    n = D.shape[0]
    ordered = np.sort(np.abs(D), axis=0)
    tied = (ordered[1:] == ordered[:-1]).any(axis=0) if n > 1 else np.zeros(D.shape[1], bool)
    zero = (D == 0).any(axis=0)
    return np.where((n <= 50) & ~tied & ~zero, "exact", "approx")


def _sign(D: np.ndarray, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """Sign test over columns: k positives among m non-zero differences; the binomial with
    p = 1/2 is symmetric, so binomtest's two-sided p is min(1, 2 min(P(K <= k), P(K >= k)))."""
    k = (D > 0).sum(axis=0)
    m = (D != 0).sum(axis=0)
    lower = _st.binom.cdf(k, m, 0.5)
    upper = _st.binom.sf(k - 1, m, 0.5)
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = np.minimum(1.0, 2 * np.minimum(lower, upper))
    return k.astype(np.float64), np.where(m == 0, 1.0, p)
