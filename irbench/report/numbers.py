"""Numbers as the report prints them, and the few statistics every section uses (per-topic
spread, ranks); the intervals of means are in :mod:`.intervals`."""

from __future__ import annotations

import math

import numpy as np


def spread(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per topic (column): best, median and worst over systems, ignoring missing values."""
    with np.errstate(all="ignore"):
        return (np.nanmax(values, axis=0), np.nanmedian(values, axis=0),
                np.nanmin(values, axis=0))


def num(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4f}"


def signed(value: float) -> str:
    """A difference printed with its sign, 4 decimals; one that prints as zero is '0.0000'
    (never '-0.0000' or '+0.0000')."""
    text = f"{value:+.4f}"
    return "0.0000" if text in ("+0.0000", "-0.0000") else text


def num3(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"


def ranks(values: np.ndarray) -> np.ndarray:
    """Rank 1 for the largest value, ties in the given order; missing values (NaN) last."""
    order = np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def join_names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
