"""The interval printed beside a system's mean (the leaderboard, its exports, the run pages):
:func:`irbench.stats.mean_intervals`, a bootstrap BCa interval from scipy.stats.bootstrap,
for every system and measure in one call, seeded with the report's seed. It stays within the
lowest and highest per-topic value, so within the measure's range."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures import parse_measure
from ..stats.choices import DEFAULT_SAMPLES
from ..stats.intervals import PERCENTILE, POINT, describe, mean_intervals

CONFIDENCE = 0.95
SAMPLES = DEFAULT_SAMPLES  # 10,000 resamples of the topics, as the significance tests draw
FALLBACK_MARK = "*"        # beside an interval scipy's BCa could not give (percentile instead)


@dataclass(frozen=True)
class Interval:
    """One system's interval on one measure: its ends, the method that gave them (``BCa``,
    ``percentile`` or ``point``: every topic the same value) and the text printed."""

    low: float
    high: float
    method: str
    text: str


def has_interval(measure: str) -> bool:
    """A measure whose value is the arithmetic mean of its per-topic values (not GMAP's
    geometric mean, a count's sum or a micro-average such as P(micro)): the interval is of
    that mean."""
    parsed = parse_measure(measure)
    family = parsed.definition
    micro = family.summary is not None and parsed.get("variant") == "micro"
    return family.aggregate == "mean" and not micro


def intervals(matrices: dict[str, tuple], seed: int) -> dict[tuple[str, str], Interval]:
    """{(system, measure): Interval} for the measures of ``matrices`` ({measure: (systems,
    topics, values)} as Store.score_matrix gives them) that :func:`has_interval`: every row
    resampled in one call. A system's interval depends on its values and the seed alone, so
    the leaderboard and a run page computed apart print the same."""
    keys, rows = [], []
    for measure, (names, _, values) in matrices.items():
        if has_interval(measure) and len(names):
            keys += [(name, measure) for name in names]
            rows.append(np.asarray(values, dtype=np.float64))
    width = max((r.shape[1] for r in rows), default=0)
    stacked = np.vstack([np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=np.nan)
                         for r in rows]) if rows else np.empty((0, 0))
    found = mean_intervals(stacked, confidence=CONFIDENCE, samples=SAMPLES, seed=seed)
    out = {}
    for key, low, high, method in zip(keys, found.low, found.high, found.methods):
        if method:
            mark = FALLBACK_MARK if method == PERCENTILE else ""
            out[key] = Interval(float(low), float(high), method, f"[{low:.4f}, {high:.4f}]{mark}")
    return out


def caption(seed: int, methods) -> str:
    """The sentence naming the interval, and the fallbacks among ``methods`` (those of the
    intervals shown)."""
    text = (f"{describe(CONFIDENCE, SAMPLES, seed)}, which stays between the run's lowest and "
            "highest per-topic value")
    if POINT in methods:
        text += "; an interval of one value: every topic has that value"
    if PERCENTILE in methods:
        text += (f"; {FALLBACK_MARK}: a percentile interval of the same resamples, where BCa "
                 "is undefined")
    return text
