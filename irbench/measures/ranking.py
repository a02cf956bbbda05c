"""Rank-sensitive binary measures: AP, GMAP, RR, Bpref, infAP, interpolated precision, binG.

Definitions follow trec_eval 10.0 (``m_map.c``, ``m_map_cut.c``, ``m_gm_map.c``,
``m_recip_rank.c``, ``m_bpref.c``, ``m_infap.c``, ``m_iprec_at_recall.c``, ``m_11pt_avg.c``,
``m_binG.c``). All kernels work on every topic at once.
"""

from __future__ import annotations

import numpy as np

from ..ranked import UNJUDGED
from .base import Family, Param, register, register_spelling
from .extra import best_precision_from, bpref_ten, condense
from .precision import REL, parse_float_list, safe_div

INFAP_EPSILON = 1e-5


def _ap(r, m):
    """AP = (1/R) * sum over relevant retrieved d of precision at d's rank.

    Buckley & Voorhees (2000); trec_eval ``map``. With a cutoff k only ranks <= k add
    (``map_cut_k``), still divided by R. ``AP(condensed)``: on the ranking with unjudged
    documents removed (Sakai 2007).
    """
    if m.get("variant") == "condensed":
        r = condense(r)
    k = m.get("cutoff")
    contrib = r.cum_rel / r.rank
    mask = r.rel if k is None else r.rel & (r.rank <= k)
    return safe_div(r.per_topic_sum(contrib, mask), r.num_rel)


def _rr(r, m):
    """Reciprocal rank of the first relevant document: trec_eval's recip_rank (no cutoff),
    or ``RR@k`` (MRR@k, MS MARCO's measure): 0 when the first relevant document is below k."""
    first = r.rel & (r.cum_rel == 1)
    k = m.get("cutoff")
    if k is not None:
        first = first & (r.rank <= k)
    return r.per_topic_sum(1.0 / r.rank, first)


def _bpref(r, m):
    """Bpref (Buckley & Voorhees 2004), trec_eval's version.

    Unjudged documents are skipped. Each judged relevant document adds 1 - min(n, R)/min(Nn, R),
    n judged non-relevant documents above it, Nn judged non-relevant in the qrels; / R.
    ``Bpref(ten)`` is bpref-10 (see ``extra.bpref_ten``); ``Bpref(condensed)`` the same kernel
    on the condensed ranking, which gives the same value, since bpref skips unjudged documents.
    """
    variant = m.get("variant")
    if variant == "ten":
        return bpref_ten(r, m)
    if variant == "condensed":
        r = condense(r)
    at = np.flatnonzero(r.rel)  # only relevant documents contribute
    n_above = r.count_at(r.judged & ~r.rel, at)  # a relevant document is not counted
    topic = r.topic_index[at]
    R = r.num_rel[topic].astype(np.float64)
    Nn = r.num_nonrel[topic].astype(np.float64)
    penalty = safe_div(np.minimum(n_above, R), np.minimum(Nn, R))
    contrib = np.where(n_above > 0, 1.0 - penalty, 1.0)
    total = np.bincount(topic, weights=contrib, minlength=r.num_topics)
    return safe_div(total, r.num_rel)


def _infap(r, m):
    """infAP (Yilmaz & Aslam 2006), trec_eval's ``m_infap.c``.

    Documents valued -1 (not in the pool) count in the position j but in no count; -2
    (pooled, unjudged) count in u. At relevant document at 0-based position j: 1 if j = 0,
    else 1/(j+1) + (j/(j+1)) * ((r-1+n+u)/j) * ((r-1+eps)/(r-1+n+2*eps)); divided by R.
    """
    at = np.flatnonzero(r.rel)  # only relevant documents contribute
    topic = r.topic_index[at]
    j = (r.rank[at] - 1).astype(np.float64)
    rel_c = r.cum_rel[at].astype(np.float64)
    n_c = r.count_at(r.judged & ~r.rel, at).astype(np.float64)
    u_c = r.count_at(r.level == UNJUDGED, at).astype(np.float64)
    rm1 = rel_c - 1.0
    eps = INFAP_EPSILON
    with np.errstate(divide="ignore", invalid="ignore"):
        later = (
            1.0 / (j + 1.0)
            + (j / (j + 1.0)) * ((rm1 + n_c + u_c) / j) * ((rm1 + eps) / (rm1 + n_c + 2 * eps))
        )
    contrib = np.where(j == 0, 1.0, later)
    total = np.bincount(topic, weights=contrib, minlength=r.num_topics)
    return safe_div(total, r.num_rel)


def lround(values: np.ndarray) -> np.ndarray:
    """C ``lround`` for values >= 0: halves round away from zero (numpy rounds to even)."""
    k = np.floor(values)
    return k + (values - k >= 0.5)


def iprec_trec(r, x: float) -> np.ndarray:
    """trec_eval 10.0 ``iprec_at_recall``: c = lround(x*R); the highest precision at or below
    the rank of the c-th relevant retrieved document (the first when c = 0); 0 if c exceeds the
    relevant retrieved. A topic with nothing retrieved gives 0/0 = NaN when c = 0 (trec_eval
    prints -nan)."""
    return iprec_curve(r, (x,))[0]


def iprec_curve(r, points: tuple[float, ...]) -> np.ndarray:
    """:func:`iprec_trec` at each of ``points`` at once: an array (points, topics)."""
    x = np.asarray(points, dtype=np.float64)
    c = lround(x[:, None] * r.num_rel.astype(np.float64)[None, :]).astype(np.int64)
    order = np.argsort(x, kind="stable")  # so each topic's counts are nondecreasing
    value = np.empty(c.shape)
    value[order] = best_precision_from(r, c[order].T).T
    return np.where((c == 0) & (r.num_ret == 0), np.nan, value)


STANDARD_RECALL = tuple(i / 10 for i in range(11))  # trec_eval's iprec_at_recall_0.00 ... 1.00


def _iprec(r, m):
    x = m.get("recall")
    if x not in STANDARD_RECALL:
        return iprec_trec(r, x)
    curve = r.cached("iprec_standard", lambda: iprec_curve(r, STANDARD_RECALL))
    return curve[STANDARD_RECALL.index(x)].copy()  # the 11 points in one pass, each its own


def _eleven_pt(r, m):
    points = parse_float_list(m.get("values"))
    curve = iprec_curve(r, tuple(points))
    total = np.zeros(r.num_topics)
    for row in curve:  # added point by point, in order, as trec_eval adds them
        total = total + row
    return total / len(points)


def _bin_g(r, m):
    """trec_eval's binG: sum over relevant retrieved of 1/log2(2 + non-relevant above) / R."""
    nonrel_above = r.rank - r.cum_rel
    contrib = 1.0 / np.log2(2.0 + nonrel_above)
    return safe_div(r.per_topic_sum(contrib, r.rel), r.num_rel)


_DEFAULT_11PT = "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"

register(Family("AP", "average precision (trec_eval map; map_cut_k with @k); AP(condensed)", _ap,
                (Param("variant", str, "", "condensed: unjudged documents removed first",
                       choices=("", "condensed"), positional=True), REL,
                 Param("cutoff", int, None, "only ranks <= k contribute")), cutoff="cutoff",
                citation="Buckley & Voorhees, Evaluating evaluation measure stability, SIGIR 2000"))
register(Family("GMAP", "geometric mean of AP over topics, AP floored at 1e-5 (gm_map)", _ap,
                (REL,), aggregate="gmean", citation="Robertson, On GMAP, CIKM 2006"))
register(Family("RR", "reciprocal rank of the first relevant document (recip_rank); RR@k, "
                      "also spelt MRR@k, counts only the top k", _rr,
                (REL, Param("cutoff", int, None, "only ranks <= k count")), cutoff="cutoff"))
register_spelling("MRR", "RR")
register(Family("Bpref", "binary preference, unjudged skipped; Bpref(ten) is bpref-10", _bpref,
                (Param("variant", str, "", "ten: bpref-10; condensed: unjudged removed first",
                       choices=("", "condensed", "ten"), positional=True), REL),
                citation="Buckley & Voorhees, Retrieval evaluation with incomplete information, "
                         "SIGIR 2004"))
register(Family("GMBpref", "geometric mean of bpref over topics (gm_bpref)", _bpref,
                aggregate="gmean"))
register(Family("infAP", "inferred AP from sampled judgments (-1 unjudged-in-pool)", _infap,
                citation="Yilmaz & Aslam, Estimating average precision with incomplete and "
                         "imperfect judgments, CIKM 2006"))
register(Family("iprec_at_recall",
                "interpolated precision at recall x, trec_eval 10.0's lround(x*R) rule",
                _iprec, (Param("recall", float, 0.0, "recall level x"),),
                canonical_fn=lambda m: f"iprec_at_recall_{m.get('recall'):3.2f}"))
register(Family("11pt_avg", "mean interpolated precision over recall points (default 0..1)",
                _eleven_pt, (Param("values", str, _DEFAULT_11PT, "comma list of recall points"),),
                canonical_fn=lambda m: "11pt_avg" if m.get("values") == _DEFAULT_11PT
                else f"11pt_avg_{m.get('values')}"))
register(Family("binG", "trec_eval's binary G", _bin_g))


