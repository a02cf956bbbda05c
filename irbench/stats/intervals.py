"""Confidence intervals of means over topics that stay in the values' range: one bootstrap BCa
interval (Efron 1987) per row of a (rows x topics) matrix, computed by
``scipy.stats.bootstrap`` for every row at once (:func:`mean_intervals`).

A measure's per-topic values are bounded and often skewed (AP, P@10, RR: many topics near 0 or
1), where a t-interval leaves the range ([-0.0012, 0.0064] for a mean AP of 0.0026). A
bootstrap interval of the mean is a pair of quantiles of resampled means, and a mean of
resampled values cannot leave [min, max] of the values; so neither can the interval.

How the rows share the work: the resamples depend only on (topics, samples, seed) -- the
indices ``np.random.default_rng(seed).integers(0, n, (samples, n))`` that scipy.stats.bootstrap
itself draws for a sample of n topics -- so every row with n values gets the same resamples, a
row's interval does not depend on the other rows, and a row alone gives what scipy.stats.
bootstrap(row, np.mean, n_resamples=samples, rng=default_rng(seed)) gives (to the rounding
below). The resampled means
of all rows are one product (rows x topics) @ (topics x samples) of the values with the counts
of each topic in each resample, handed to scipy as its ``bootstrap_result``; scipy then computes
the BCa interval (bias correction, jackknife acceleration, quantiles) for all rows in one call.

Ties: the means are rounded to 2^-30 of the row's magnitude (far below the 4 printed decimals),
so a resample whose mean equals the observed one in exact arithmetic counts as a tie whatever
the order of the sums (scipy's bias correction counts those half below, half above); without
this, float rounding would decide them, differently on another machine's BLAS.

Where BCa is undefined the method says so in :attr:`MeanIntervals.methods`: every value equal
(also one topic) is ``point``, the interval the value itself; a row whose BCa levels come out
undefined (NaN; seen only with very few resamples) gets scipy's ``percentile`` interval of the
same resamples. No warning from scipy or numpy escapes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import StatisticsError
from .choices import DEFAULT_SAMPLES, DEFAULT_SEED

BCA, PERCENTILE, POINT, NONE = "BCa", "percentile", "point", ""
METHODS = (BCA, PERCENTILE, POINT, NONE)
CHUNK_BYTES = 16 * 2**20  # resampled means held at once (scipy copies them a few times)
SNAP_BITS = 30            # means rounded to 2^-30 of the row's magnitude (ties are ties)


@dataclass(frozen=True, eq=False)
class MeanIntervals:
    """Per row of the matrix: the mean of its finite values, the interval's ends and the
    method that gave them (:data:`METHODS`: ``BCa``; ``percentile`` where BCa is undefined;
    ``point`` where every value is equal, the interval the value; ``''`` and NaN ends for a
    row without values). ``topics`` counts each row's finite values."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    methods: tuple[str, ...]
    topics: np.ndarray
    confidence: float
    samples: int
    seed: int

    def describe(self) -> str:
        """The method in words, for a caption (:func:`describe`)."""
        return describe(self.confidence, self.samples, self.seed)


def describe(confidence: float, samples: int, seed: int) -> str:
    """'95% bootstrap BCa interval of the mean (scipy.stats.bootstrap, 10,000 resamples of the
    topics, seed 0)': what :func:`mean_intervals` computes with these settings, in words."""
    return (f"{confidence:.0%} bootstrap BCa interval of the mean (scipy.stats.bootstrap, "
            f"{samples:,} resamples of the topics, seed {seed})")


def mean_intervals(values, *, confidence: float = 0.95, samples: int = DEFAULT_SAMPLES,
                   seed: int = DEFAULT_SEED) -> MeanIntervals:
    """Two-sided bootstrap BCa intervals of the mean of each row of ``values`` (rows x topics;
    one row may be given as a vector), over its finite values (NaN: a topic the row lacks),
    from ``samples`` resamples drawn with ``seed``. Each interval lies within [min, max] of its
    row's values."""
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if x.ndim != 2:
        raise StatisticsError(f"intervals of the rows of a matrix, not of a {x.ndim}-d array")
    if not 0 < confidence < 1:
        raise StatisticsError(f"confidence must lie between 0 and 1, got {confidence}")
    if int(samples) != samples or samples < 1:
        raise StatisticsError(f"samples must be a positive whole number, got {samples}")
    samples, seed = int(samples), int(seed)
    finite = np.isfinite(x)
    count = finite.sum(axis=1)
    rows = x.shape[0]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: NaN, said below
        mean = np.nanmean(x, axis=1) if x.shape[1] else np.full(rows, np.nan)
        least = np.nanmin(x, axis=1) if x.shape[1] else np.full(rows, np.nan)
        most = np.nanmax(x, axis=1) if x.shape[1] else np.full(rows, np.nan)
    low, high = np.full(rows, np.nan), np.full(rows, np.nan)
    methods = np.full(rows, NONE, dtype=object)
    point = (count >= 1) & (least == most)
    low[point] = high[point] = least[point]  # every value the same: the interval is it
    methods[point] = POINT
    spread = (count >= 2) & (least < most)
    for n in np.unique(count[spread]):
        which = np.flatnonzero(spread & (count == n))
        dense = x[which][finite[which]].reshape(len(which), n)  # each row's values in order
        weights = _resample_counts(int(n), samples, seed)
        step = max(1, CHUNK_BYTES // (8 * samples))
        for start in range(0, len(which), step):
            part = which[start:start + step]
            lo, hi, how = _bca(dense[start:start + step], weights, confidence)
            low[part], high[part], methods[part] = lo, hi, how
    low, high = _shown(low, most, least), _shown(high, most, least)
    return MeanIntervals(mean=mean, low=low, high=high, methods=tuple(methods.tolist()),
                         topics=count, confidence=float(confidence), samples=samples, seed=seed)


def _shown(ends: np.ndarray, most: np.ndarray, least: np.ndarray) -> np.ndarray:
    """Interval ends rounded to 8 significant digits of the row's largest magnitude (which
    removes the 2^-30 rounding of the means, far below any printed digit) and kept within
    [min, max] of the row: a quantile of resampled means lies there, the clip absorbs the
    rounding."""
    with np.errstate(all="ignore"):
        scale = np.maximum(np.abs(most), np.abs(least))
        digits = 7 - np.floor(np.log10(np.where(scale > 0, scale, 1.0)))
        power = 10.0 ** digits  # divided by, as np.round does: 0.46892934, not ...34000000003
        rounded = np.where(np.isfinite(ends), np.round(ends * power) / power, ends)
    return np.clip(rounded, least, most)


def _resample_counts(n: int, samples: int, seed: int) -> np.ndarray:
    """(samples x n): how often each of n topics is drawn in each resample, from the indices
    scipy.stats.bootstrap draws with ``rng=np.random.default_rng(seed)``."""
    index = np.random.default_rng(seed).integers(0, n, size=(samples, n))
    flat = (np.arange(samples)[:, None] * n + index).ravel()
    return np.bincount(flat, minlength=samples * n).reshape(samples, n).astype(np.float64)


@dataclass(frozen=True)
class _Distribution:
    """What scipy.stats.bootstrap reads of a ``bootstrap_result``: the resampled statistics,
    one row per sample row (the last axis the resamples)."""

    bootstrap_distribution: np.ndarray


def _bca(x: np.ndarray, weights: np.ndarray, confidence: float
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BCa intervals of the rows of ``x`` (rows x n, no NaN, no constant row) over the
    resamples ``weights`` (samples x n counts), by scipy; percentile where BCa gives NaN."""
    from scipy import stats

    n = x.shape[1]
    quantum = np.ldexp(1.0, np.frexp(np.abs(x).max(axis=1))[1] - SNAP_BITS)

    def snapped(means: np.ndarray) -> np.ndarray:
        q = quantum.reshape(quantum.shape + (1,) * (means.ndim - 1))
        return np.round(means / q) * q

    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return snapped(np.mean(sample, axis=axis))

    resampled = _Distribution(snapped((x @ weights.T) / n))
    methods = np.full(len(x), BCA, dtype=object)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.bootstrap((x,), statistic, vectorized=True, axis=-1, n_resamples=0,
                             bootstrap_result=resampled, confidence_level=confidence,
                             method="BCa").confidence_interval
        low, high = np.array(ci.low, ndmin=1), np.array(ci.high, ndmin=1)
        undefined = np.isnan(low) | np.isnan(high)
        if undefined.any():
            rows = np.flatnonzero(undefined)
            ci = stats.bootstrap((x[rows],), np.mean, vectorized=True, axis=-1,
                                 n_resamples=0, confidence_level=confidence,
                                 bootstrap_result=_Distribution(
                                     resampled.bootstrap_distribution[rows]),
                                 method="percentile").confidence_interval
            low[rows], high[rows] = ci.low, ci.high
            methods[rows] = PERCENTILE
    return low, high, methods


__all__ = ["BCA", "METHODS", "NONE", "PERCENTILE", "POINT", "MeanIntervals", "describe",
           "mean_intervals"]
