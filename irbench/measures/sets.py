"""Set measures trec_eval lacks: F_beta, E, the TREC 2002 filtering utilities, micro averages.

Notation: for one topic, a relevant documents retrieved, N retrieved, R relevant in the qrels
(relevant: level >= the relevance level). A qrels topic missing from the run and scored under
``complete`` (trec_eval ``-c``) counts as retrieving nothing here (a = N = 0), not as retrieving
the one placeholder document trec_eval ranks for it.

Micro averages (``P(micro)``, ``R(micro)``, ``F(micro)``, ``E(micro)``) sum the counts over
topics before dividing; their per-topic values are the ordinary per-topic values and only the
summary differs (:func:`micro_summary` builds the summary hook of such a family).

This module imports nothing from the other kernel modules, so that ``precision.py`` can import
the micro kernels from it without an import cycle.
"""

from __future__ import annotations

import numpy as np

from ..errors import MeasureParameterError
from .base import Family, Param, register, sequential_sum

T11_MIN_NU = -0.5  # MinNU, the floor of the normalised utility (Robertson & Soboroff 2002)


def ratio(num, den) -> np.ndarray:
    """num / den elementwise, 0 where den is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def set_counts(r, k: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, N, R) per topic as float64; with ``k`` the set is the top k (N = min(num_ret, k))."""
    if k is None:
        a = r.num_rel_ret.astype(np.float64)
        n = r.num_ret.astype(np.float64)
    else:
        a = r.per_topic_count(r.rel & (r.rank <= k)).astype(np.float64)
        n = np.minimum(r.num_ret, k).astype(np.float64)
    a = np.where(r.missing, 0.0, a)
    n = np.where(r.missing, 0.0, n)
    return a, n, r.num_rel.astype(np.float64)


# ---- micro averages ----------------------------------------------------------------------

def micro_summary(total):
    """A summary hook: ``total(ranked, measure)`` for the ``micro`` variant, else the mean."""

    def summary(values: np.ndarray, r, m) -> float:
        if m.get("variant") == "micro":
            return float(total(r, m))
        return float(sequential_sum(values) / len(values)) if len(values) else 0.0

    return summary


def _cutoff(m) -> int | None:
    k = m.get("cutoff")
    if k is not None and k <= 0:
        raise MeasureParameterError(f"{m.family}: the cutoff must be positive, not {k}")
    return k


def micro_p(r, m) -> np.ndarray:
    """P(micro) per topic: a/N (set precision), or hits(k)/k with @k (P@k)."""
    k = _cutoff(m)
    a, n, _ = set_counts(r, k)
    return ratio(a, n if k is None else np.full(r.num_topics, float(k)))


def micro_p_total(r, m) -> float:
    """P(micro) over all topics: sum(a) / sum(N), or sum(hits(k)) / (T*k) (the mean of P@k)."""
    k = _cutoff(m)
    a, n, _ = set_counts(r, k)
    return float(ratio(a.sum(), n.sum() if k is None else float(k) * r.num_topics))


def micro_r(r, m) -> np.ndarray:
    """R(micro) per topic: a/R (set recall), or hits(k)/R with @k."""
    a, _, rel = set_counts(r, _cutoff(m))
    return ratio(a, rel)


def micro_r_total(r, m) -> float:
    """R(micro) over all topics: sum(a) / sum(R)."""
    a, _, rel = set_counts(r, _cutoff(m))
    return float(ratio(a.sum(), rel.sum()))


# ---- F, E --------------------------------------------------------------------------------


def f_beta(a, n, rel, beta: float) -> np.ndarray:
    """(1 + b^2) P R / (b^2 P + R) = (1 + b^2) a / (N + b^2 R); 0 when a = 0."""
    b2 = beta * beta
    return ratio((1.0 + b2) * a, n + b2 * rel)


def _beta(m) -> float:
    beta = m.get("beta")
    if beta < 0:
        raise MeasureParameterError(f"{m.family}: beta must be >= 0, not {beta}")
    return beta


def _f(r, m):
    """van Rijsbergen's F_beta of the retrieved set.

    F_beta = (1 + beta^2) P R / (beta^2 P + R) with P = a/N, R = a/R, which is
    (1 + beta^2) a / (N + beta^2 R); 0 when a = 0 (including N = R = 0). beta = 1 weighs P and R
    equally, beta < 1 favours precision. ``F(micro)`` sums a, N and R over topics first.
    van Rijsbergen, Information Retrieval, 2nd ed., Butterworths 1979, ch. 7.
    """
    a, n, rel = set_counts(r)
    return f_beta(a, n, rel, _beta(m))


def _f_total(r, m) -> float:
    a, n, rel = set_counts(r)
    return float(f_beta(a.sum(), n.sum(), rel.sum(), _beta(m)))


def _e(r, m):
    """van Rijsbergen's effectiveness E = 1 - F_beta (so 1 when a = 0); lower is better.
    ``E(micro)`` is 1 - F(micro). van Rijsbergen, Information Retrieval, 1979, ch. 7."""
    a, n, rel = set_counts(r)
    return 1.0 - f_beta(a, n, rel, _beta(m))


def _e_total(r, m) -> float:
    return 1.0 - _f_total(r, m)


# ---- TREC 2002 filtering -----------------------------------------------------------------


def _t11u(r, m):
    """TREC 2002 filtering linear utility T11U = 2a - (N - a): +2 per relevant document
    retrieved, -1 per non-relevant (or unjudged) one. Robertson & Soboroff, The TREC 2002
    Filtering Track Report, TREC 2002."""
    a, n, _ = set_counts(r)
    return 2.0 * a - (n - a)


def _t11su(r, m):
    """TREC 2002 scaled utility T11SU = (max(T11U / MaxU, MinNU) - MinNU) / (1 - MinNU),
    MaxU = 2R, MinNU = -0.5, so it lies in [0, 1]. A topic with R = 0 has MaxU = 0: it scores 1
    when nothing is retrieved and 0 otherwise (the limit of the clipped ratio).
    Robertson & Soboroff, The TREC 2002 Filtering Track Report, TREC 2002."""
    a, n, rel = set_counts(r)
    utility = 2.0 * a - (n - a)
    max_u = 2.0 * rel
    with np.errstate(divide="ignore", invalid="ignore"):
        normalised = np.maximum(utility / np.where(max_u > 0, max_u, 1.0), T11_MIN_NU)
    scaled = (normalised - T11_MIN_NU) / (1.0 - T11_MIN_NU)
    return np.where(max_u > 0, scaled, np.where(n == 0, 1.0, 0.0))


def _t11f(r, m):
    """TREC 2002 filtering F-beta with beta = 0.5: 1.25 a / (N + 0.25 R), 0 when a = 0.
    Robertson & Soboroff, The TREC 2002 Filtering Track Report, TREC 2002."""
    a, n, rel = set_counts(r)
    return f_beta(a, n, rel, 0.5)


_VARIANT = Param("variant", str, "", "micro: sum a, N and R over topics before dividing",
                 choices=("", "micro"), positional=True)
_BETA = Param("beta", float, 1.0, "weight of recall against precision")
_VAN_RIJSBERGEN = "van Rijsbergen, Information Retrieval, 2nd ed., Butterworths 1979, ch. 7"
_TREC2002 = "Robertson & Soboroff, The TREC 2002 Filtering Track Report, TREC 2002"

register(Family("F", "F_beta of the retrieved set: (1+b^2)a/(N+b^2 R)", _f, (_VARIANT, _BETA),
                summary=micro_summary(_f_total), citation=_VAN_RIJSBERGEN))
register(Family("E", "van Rijsbergen's E = 1 - F_beta of the retrieved set", _e,
                (_VARIANT, _BETA), summary=micro_summary(_e_total), citation=_VAN_RIJSBERGEN,
                lower_is_better=True))
register(Family("T11U", "TREC 2002 filtering utility 2a - (N-a)", _t11u, citation=_TREC2002))
register(Family("T11SU", "TREC 2002 filtering scaled utility, MinNU = -0.5", _t11su,
                citation=_TREC2002))
register(Family("T11F", "TREC 2002 filtering F-beta, beta = 0.5", _t11f, citation=_TREC2002))
