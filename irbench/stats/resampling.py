"""Vectorised resampling kernels over many paired comparisons at once.

Every kernel takes a difference matrix ``D`` of shape (topics, pairs) (column ``k`` holds
``x - y`` of the k-th comparison) and draws its resamples *once* from a seeded
``np.random.Generator``: one sign-flip matrix (samples x topics) for the randomisation test, one
count matrix (samples x topics; how often each topic is drawn) for the bootstrap. A statistic
over all samples and all pairs is then one matrix product, computed in column chunks so memory
stays bounded (about :data:`CHUNK_BYTES` per chunk). The resamples depend only on (topics,
samples, seed), so one pair tested alone and the same pair inside an all-pairs run get the
same p-value.

p-values of sampled tests are (b + 1) / (B + 1), where b counts the samples at least as extreme
as the observed statistic (the observed one is a valid member of the null distribution, and the
p-value is never 0). When every resample can be enumerated (2^n sign vectors or n^n bootstrap
draws, no more than the requested samples) the test is exact: p = b / (all of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from ..errors import StatisticsError

CHUNK_BYTES = 64 * 2**20
MAX_EXACT_SIGNS = 2**20
RELATIVE_TOLERANCE = 1e-9  # statistics this close to the observed one count as ties


@dataclass(frozen=True)
class Resamples:
    """Rows of weights over topics: sign flips (+/-1) or bootstrap counts; ``exact`` when the
    rows are every possible resample, each once."""

    weights: np.ndarray  # (samples, topics) float64
    exact: bool
    seed: int | None

    @property
    def samples(self) -> int:
        return self.weights.shape[0]


def sign_flips(topics: int, samples: int, seed: int | None, exact: bool | None = None
               ) -> Resamples:
    """Sign-flip matrix for the paired randomisation test: every one of the 2^topics sign
    vectors when ``exact`` (None: when 2^topics <= samples), else ``samples`` rows of
    independent fair signs from ``np.random.default_rng(seed)``."""
    if exact is None:  # exact when it is no bigger than asked and fits; else sampled
        exact = topics < 63 and 2**topics <= min(samples, MAX_EXACT_SIGNS)
    if exact:
        if 2**topics > MAX_EXACT_SIGNS:
            raise StatisticsError(f"exact enumeration of 2^{topics} sign vectors is too large; "
                             "use a sampled test")
        bits = (np.arange(2**topics)[:, None] >> np.arange(topics)) & 1
        return Resamples(1.0 - 2.0 * bits, True, None)
    _check_samples(samples)
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(samples, topics), dtype=np.int8)
    return Resamples(1.0 - 2.0 * bits, False, seed)


def bootstrap_counts(topics: int, samples: int, seed: int | None, exact: bool | None = None
                     ) -> Resamples:
    """How often each topic is drawn in each bootstrap resample (rows sum to ``topics``):
    every one of the topics^topics ordered draws when ``exact`` (None: when that is no more
    than ``samples``), else ``samples`` draws with replacement from
    ``np.random.default_rng(seed)``."""
    if exact is None:
        exact = topics < 12 and topics**topics <= min(samples, MAX_EXACT_SIGNS)
    if exact:
        total = topics**topics
        if total > MAX_EXACT_SIGNS:
            raise StatisticsError(f"exact enumeration of {topics}^{topics} bootstrap draws is too "
                             "large; use a sampled test")
        index = (np.arange(total)[:, None] // topics ** np.arange(topics)) % topics
        seed_used = None
    else:
        _check_samples(samples)
        index = np.random.default_rng(seed).integers(0, topics, size=(samples, topics))
        seed_used = seed
    rows = index.shape[0]
    flat = (np.arange(rows)[:, None] * topics + index).ravel()
    counts = np.bincount(flat, minlength=rows * topics).reshape(rows, topics)
    return Resamples(counts.astype(np.float64), bool(exact), seed_used)


def _check_samples(samples: int) -> None:
    if int(samples) < 1:
        raise StatisticsError(f"samples must be a positive number, got {samples}")


def _chunks(rows: int, columns: int, factor: int = 1):
    step = max(1, CHUNK_BYTES // (8 * max(rows, 1) * factor))
    for start in range(0, columns, step):
        yield slice(start, min(columns, start + step))


def _extreme(null: np.ndarray, observed: np.ndarray, alternative: str) -> np.ndarray:
    """Count, per column, the rows of ``null`` at least as extreme as ``observed``."""
    tol = RELATIVE_TOLERANCE * np.maximum(np.abs(observed), 1e-300)
    if alternative == "two-sided":
        return (np.abs(null) >= np.abs(observed) - tol).sum(axis=0)
    if alternative == "greater":
        return (null >= observed - tol).sum(axis=0)
    return (null <= observed + tol).sum(axis=0)


def _p_values(counts: np.ndarray, resamples: Resamples) -> np.ndarray:
    if resamples.exact:
        return counts / resamples.samples
    return (counts + 1.0) / (resamples.samples + 1.0)


def randomization_p(D: np.ndarray, flips: Resamples, alternative: str) -> np.ndarray:
    """Paired randomisation test of every column of ``D`` (topics x pairs): the statistic is the
    sum (equivalently the mean) of the differences, its null distribution that of the sums
    with each topic's sign flipped at random."""
    observed = D.sum(axis=0)
    counts = np.zeros(D.shape[1])
    scale = np.abs(D).sum(axis=0)  # tolerance relative to the largest possible |sum|
    for cols in _chunks(flips.samples, D.shape[1]):
        null = flips.weights @ D[:, cols]
        tol = RELATIVE_TOLERANCE * np.maximum(scale[cols], 1e-300)
        obs = observed[cols]
        if alternative == "two-sided":
            hit = np.abs(null) >= np.abs(obs) - tol
        elif alternative == "greater":
            hit = null >= obs - tol
        else:
            hit = null <= obs + tol
        counts[cols] = hit.sum(axis=0)
    return _p_values(counts, flips)


@dataclass(frozen=True)
class BootstrapOutcome:
    """Per column: the studentised bootstrap test's p-value (or None if not asked for) and
    the percentile or BCa interval of the mean difference (or None)."""

    p_value: np.ndarray | None
    ci_low: np.ndarray | None
    ci_high: np.ndarray | None

    def tested(self) -> np.ndarray:
        """The p-values of a bootstrap asked for the test."""
        if self.p_value is None:
            raise ValueError("this bootstrap was not asked for the test")
        return self.p_value

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """(ci_low, ci_high) of a bootstrap asked for an interval."""
        if self.ci_low is None or self.ci_high is None:
            raise ValueError("this bootstrap was not asked for an interval")
        return self.ci_low, self.ci_high


def bootstrap(D: np.ndarray, counts: Resamples, alternative: str, test: bool,
              ci: str | None, confidence: float) -> BootstrapOutcome:
    """The paired bootstrap over every column of ``D`` (topics x pairs).

    Test (Efron & Tibshirani 1993, sec. 16.4; Sakai 2006): shift the differences to mean 0
    (the null), resample topics with replacement and compare the studentised mean
    t* = mean* / (sd* / sqrt(n)) with the observed t. Interval (``ci``): ``percentile`` or
    ``bca`` (bias-corrected and accelerated, Efron 1987; acceleration from the jackknife) of the
    bootstrap means of the unshifted differences, two-sided or one-sided as ``alternative``.
    """
    n, pairs = D.shape
    mean = D.mean(axis=0)
    Z = D - mean
    B = counts.samples
    p = np.empty(pairs) if test else None
    lo = np.empty(pairs) if ci else None
    hi = np.empty(pairs) if ci else None
    if test:
        sd = D.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_obs = np.where(mean == 0, 0.0, mean / (sd / np.sqrt(n)))
    for cols in _chunks(B, pairs, factor=3):
        M = counts.weights @ Z[:, cols] / n  # bootstrap means, shifted to the null
        if test and p is not None:
            ss = counts.weights @ (Z[:, cols] ** 2)
            var = np.maximum(ss - n * M**2, 0.0) / (n - 1)
            tiny = 1e-12 * (np.abs(Z[:, cols]).max(axis=0) + 1e-300)
            with np.errstate(divide="ignore", invalid="ignore"):
                t_star = M / np.sqrt(var / n)
            t_star = np.where(np.abs(M) <= tiny, 0.0, t_star)  # no shift: 0 (also 0/0)
            p[cols] = _p_values(_extreme(t_star, t_obs[cols], alternative), counts)
        if ci and lo is not None and hi is not None:
            means = M + mean[cols]
            lo[cols], hi[cols] = _interval(means, D[:, cols], mean[cols], ci, confidence,
                                           alternative, counts)
    return BootstrapOutcome(p, lo, hi)


def _interval(means: np.ndarray, D: np.ndarray, theta: np.ndarray, method: str,
              confidence: float, alternative: str, counts: Resamples
              ) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval from bootstrap means (samples x pairs), as scipy.stats.
    bootstrap computes them (linear interpolation between order statistics)."""
    tail = 1 - confidence if alternative != "two-sided" else (1 - confidence) / 2
    levels = np.array([tail, 1 - tail])
    if method == "bca":
        n = D.shape[0]
        tol = RELATIVE_TOLERANCE * (np.abs(D).max(axis=0) + 1e-300)  # ties are ties
        below = (((means < theta - tol).sum(axis=0) + (means <= theta + tol).sum(axis=0))
                 / (2 * len(means)))  # scipy's percentile of score, kind "mean"
        z0 = ndtri(below)
        jack = (D.sum(axis=0) - D) / (n - 1)  # leave-one-out means (topics x pairs)
        dev = jack.mean(axis=0) - jack
        with np.errstate(divide="ignore", invalid="ignore"):
            a = (dev**3).sum(axis=0) / (6.0 * ((dev**2).sum(axis=0)) ** 1.5)
        z = ndtri(levels)[:, None]
        adjusted = ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))  # (2, pairs)
        out = np.empty((2, means.shape[1]))
        for k in range(2):
            out[k] = _column_quantiles(means, adjusted[k])
        low, high = out
    else:
        low, high = np.quantile(means, levels, axis=0)
    degenerate = np.ptp(D, axis=0) == 0  # every difference equal: the interval is a point
    low = np.where(degenerate, theta, low)
    high = np.where(degenerate, theta, high)
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high


def _column_quantiles(values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q[k] of column k (linear interpolation, NaN where q is NaN)."""
    ordered = np.sort(values, axis=0)
    rows = values.shape[0]
    pos = np.clip(np.nan_to_num(q, nan=0.5), 0, 1) * (rows - 1)
    below = np.floor(pos).astype(int)
    above = np.minimum(below + 1, rows - 1)
    cols = np.arange(values.shape[1])
    frac = pos - below
    out = ordered[below, cols] * (1 - frac) + ordered[above, cols] * frac
    return np.where(np.isnan(q), np.nan, out)
