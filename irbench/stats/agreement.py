"""Agreement between system rankings, and the discriminative power of a measure.

The rankings compared are those of system means under two measures (MAP against GMAP) or two
qrels sets (full against incomplete judgments). Kendall's tau counts every swapped pair alike;
Yilmaz, Aslam & Robertson's tau_AP (SIGIR 2008) weights swaps near the top more.
Discriminative power (Sakai, SIGIR 2006) is the share of system pairs a test finds
significantly different at ``alpha``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from ..errors import EvaluationError
from .choices import TUKEY_TESTS
from .multiple import compare
from .paired import DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST
from .scores import Scores, paired_arrays


@dataclass(frozen=True, kw_only=True)
class RankAgreement:
    """How far two rankings of the same systems agree.

    tau, p_value: Kendall's tau-b and its two-sided p-value (``scipy.stats.kendalltau``; ties
    counted as scipy does); tau_ap: tau_AP of ``y``'s ranking against ``x``'s as the reference;
    swaps: pairs that ``x`` and ``y`` order in opposite directions (pairs tied in either are
    not swaps); pairs: all pairs, n (n - 1) / 2.
    """

    systems: int
    tau: float
    p_value: float
    tau_ap: float
    swaps: int
    pairs: int


def _vectors(x, y) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(x, Scores) and isinstance(y, Scores):
        if set(x.systems) != set(y.systems):
            raise EvaluationError(f"{x.measure} and {y.measure} rank different systems")
        x, y = dict(zip(x.systems, x.means)), dict(zip(y.systems, y.means))
    a, b = paired_arrays(x, y, "x", "y")
    return a, b


def rank_agreement(x, y) -> RankAgreement:
    """Compare the rankings by ``x`` and by ``y`` (scores of the same systems, higher is
    better: two arrays aligned by position, two mappings system -> score, or two
    :class:`Scores`, ranked by their means)."""
    a, b = _vectors(x, y)
    res = _st.kendalltau(a, b)
    n = len(a)
    return RankAgreement(systems=n, tau=float(res.statistic), p_value=float(res.pvalue),
                         tau_ap=_tau_ap(a, b), swaps=_swaps(a, b), pairs=n * (n - 1) // 2)


def tau_ap(reference, other) -> float:
    """tau_AP (Yilmaz, Aslam & Robertson 2008) of the ranking by ``other`` against the
    ranking by ``reference``: 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where C(i) counts
    the systems ranked above the i-th system of ``other``'s ranking that ``reference`` also
    puts above it. 1 for the same ranking, -1 for the reverse; not symmetric. Ties in
    ``other`` are broken by position (the first given ranks higher); a tie in ``reference``
    is not "above"."""
    a, b = paired_arrays(reference, other, "reference", "other")
    return _tau_ap(a, b)


def _tau_ap(reference: np.ndarray, other: np.ndarray) -> float:
    n = len(reference)
    order = np.argsort(-other, kind="stable")
    ref = reference[order]
    above = np.tril(ref[None, :] > ref[:, None], k=-1)  # [i, j]: j above i in both
    c = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (c / np.arange(1, n)).sum() - 1.0)


def swaps(x, y) -> int:
    """The number of system pairs ``x`` and ``y`` order in opposite directions."""
    a, b = paired_arrays(x, y)
    return _swaps(a, b)


def _swaps(a: np.ndarray, b: np.ndarray) -> int:
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    return int(np.triu(sa * sb < 0, k=1).sum())


@dataclass(frozen=True, eq=False, kw_only=True)
class DiscriminativePower:
    """Sakai's discriminative power of one measure: ``significant`` of ``pairs`` system pairs
    differ at ``alpha`` (after ``correction``); ``p_values`` are the (adjusted) p-values of all
    pairs in increasing order, the achieved significance level curve."""

    measure: str
    test: str
    correction: str
    alpha: float
    pairs: int
    significant: int
    share: float
    p_values: np.ndarray = field(repr=False)


def discriminative_power(scores: Scores, *, test: str = DEFAULT_TEST,
                         correction: str | None = "none", alpha: float = 0.05,
                         samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                         ) -> DiscriminativePower:
    """The share of all system pairs of ``scores`` found significantly different by ``test``
    (default: randomisation, 10,000 samples, seed 0; no correction, as in Sakai 2006; give
    ``randomized-tukey-hsd`` with correction None for Sakai's later practice)."""
    if test in TUKEY_TESTS and correction == "none":
        correction = None  # a Tukey test controls its error rate itself: no correction
    result = compare(scores, test=test, correction=correction, alpha=alpha, samples=samples,
                     seed=seed)
    p = np.sort(np.array([pc.p_adjusted for pc in result.pairs]))
    significant = int((p <= alpha).sum())
    return DiscriminativePower(measure=scores.measure, test=test,
                               correction=result.correction, alpha=alpha, pairs=len(p),
                               significant=significant,
                               share=significant / len(p) if len(p) else float("nan"),
                               p_values=p)
