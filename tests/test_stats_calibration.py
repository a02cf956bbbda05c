"""Calibration of irbench.stats by simulation: under the null hypothesis (systems with equal true
means) each test rejects at about its nominal rate, and the corrections keep the family-wise
error rate at or below alpha. Everything is vectorised over the simulated comparisons, and
seeded, so the outcome is the same on every run."""

from __future__ import annotations

import numpy as np
import pytest

from irbench import stats as S
from irbench.stats.paired import paired_columns

ALPHA = 0.05
SIMS = 2000


def null_pairs(sims: int, topics: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(topics x sims) scores of two systems with equal true means: a shared topic effect
    (topics vary far more than systems, as in IR) plus independent noise."""
    rng = np.random.default_rng(seed)
    topic = rng.beta(2, 5, (topics, sims))
    return (topic + rng.normal(0, 0.08, (topics, sims)),
            topic + rng.normal(0, 0.08, (topics, sims)))


@pytest.mark.parametrize("test", S.TESTS)
def test_rejection_rate_under_the_null(test):
    X, Y = null_pairs(SIMS, 30, seed=11)
    cols = paired_columns(X, Y, test, samples=1000, seed=5)
    rate = (cols.p_value <= ALPHA).mean()
    assert 0.03 <= rate <= 0.07, f"{test}: {rate:.3f}"


def test_rejection_rate_on_discrete_scores():
    # P@10-like scores (multiples of 0.1): ties everywhere
    X, Y = null_pairs(SIMS, 30, seed=12)
    X, Y = np.round(np.clip(X, 0, 1), 1), np.round(np.clip(Y, 0, 1), 1)
    for test in ("t", "randomization", "bootstrap"):
        rate = (paired_columns(X, Y, test, samples=1000, seed=5).p_value <= ALPHA).mean()
        assert 0.03 <= rate <= 0.07, f"{test}: {rate:.3f}"


SYSTEMS, FAMILIES = 10, 1000
TOLERANCE = 2 * np.sqrt(ALPHA * (1 - ALPHA) / FAMILIES)  # two standard errors of a rate


def null_campaigns(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.beta(2, 5, (FAMILIES, 1, 30))
    return topic + rng.normal(0, 0.08, (FAMILIES, SYSTEMS, 30))


@pytest.mark.parametrize("test", ["t", "randomization"])
def test_holm_controls_the_family_wise_error_rate(test):
    v = null_campaigns(seed=21)
    a, b = np.triu_indices(SYSTEMS, 1)  # 45 pairs per campaign
    X = v[:, a, :].reshape(-1, 30).T  # (topics, campaigns x pairs)
    Y = v[:, b, :].reshape(-1, 30).T
    p = paired_columns(X, Y, test, samples=2000, seed=1).p_value.reshape(FAMILIES, len(a))
    raw = (p <= ALPHA).any(axis=1).mean()
    holm = (S.adjust_p(p, "holm", axis=1) <= ALPHA).any(axis=1).mean()
    assert raw > 0.5  # uncorrected, some pair of 45 is "significant" in most campaigns
    assert holm <= ALPHA + TOLERANCE, holm


def test_randomized_tukey_controls_the_family_wise_error_rate():
    v = null_campaigns(seed=22)
    errors = 0
    for k in range(FAMILIES):  # one campaign per iteration; the trials inside are vectorised
        sc = S.Scores("AP", [f"s{i}" for i in range(SYSTEMS)], [f"t{j}" for j in range(30)],
                      v[k])
        p = S.randomized_tukey_hsd(sc, samples=200, seed=k).p_values
        errors += bool((p <= ALPHA).any())
    assert errors / FAMILIES <= ALPHA + TOLERANCE, errors / FAMILIES
