"""Set- and cutoff-based measures: P@k, R@k, Rprec, Success@k, set_*, utility, ...

Notation: N documents retrieved (after -M/-J), R relevant in the qrels, a relevant retrieved,
hits(k) relevant documents in the top k. Definitions follow trec_eval 10.0 (``m_P.c``,
``m_recall.c``, ``m_Rprec.c``, ``m_Rprec_mult.c``, ``m_rel_P.c``, ``m_success.c``,
``m_set_*.c``, ``m_utility.c``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import MeasureParameterError
from .base import Family, Param, register
from .extra import condense
from .sets import micro_p, micro_p_total, micro_r, micro_r_total, micro_summary

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def safe_div(num: ArrayLike, den: ArrayLike) -> np.ndarray:
    """num / den, with 0 where den is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def hits_at(r, k) -> np.ndarray:
    """Relevant documents within rank k (k per topic or scalar): the running count of relevant
    documents read at rank min(k, N), exact integers."""
    return r.at_rank(r.cum_rel, k).astype(np.float64)


CUTOFF = Param("cutoff", int, None, "rank cutoff k")


def check_cutoff(m):
    k = m.get("cutoff")
    if k is None or k <= 0:
        raise MeasureParameterError(f"{m.family} needs a positive cutoff, e.g. {m.family}@10")
    return k


def _p(r, m):
    """P@k = hits(k)/k, also when fewer than k documents are retrieved (trec_eval P_k).
    ``P(condensed)@k``: on the ranking with unjudged documents removed (Sakai 2007).
    ``P(micro)``: see ``sets.py``."""
    variant = m.get("variant")
    if variant == "micro":
        return micro_p(r, m)
    k = check_cutoff(m)
    if variant == "condensed":
        r = condense(r)
    return hits_at(r, k) / k


def _recall(r, m):
    """R@k = hits(k)/R (trec_eval recall_k). ``R(micro)``: see ``sets.py``."""
    if m.get("variant") == "micro":
        return micro_r(r, m)
    k = check_cutoff(m)
    return safe_div(hits_at(r, k), r.num_rel)


def _relative_p(r, m):
    k = check_cutoff(m)
    return safe_div(hits_at(r, k), np.minimum(k, r.num_rel))


def _success(r, m):
    k = check_cutoff(m)
    return (hits_at(r, k) > 0).astype(np.float64)


def _rprec(r, m):
    return safe_div(hits_at(r, r.num_rel), r.num_rel)


def _rprec_mult(r, m):
    mult = m.get("mult")
    # (long)(x * R + 0.9): trec_eval 10.0 kept the +0.9 here
    c = np.floor(mult * r.num_rel + 0.9)
    return safe_div(hits_at(r, c), c)


def _set_p(r, m):
    return safe_div(r.num_rel_ret, r.num_ret)


def _set_recall(r, m):
    return safe_div(r.num_rel_ret, r.num_rel)


def _set_relative_p(r, m):
    return safe_div(r.num_rel_ret, np.minimum(r.num_ret, r.num_rel))


def _set_map(r, m):
    return safe_div(r.num_rel_ret * r.num_rel_ret, r.num_ret * r.num_rel.astype(np.float64))


def parse_float_list(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x != ""]


def _set_f(r, m):
    beta2 = parse_float_list(m.get("values"))[0]  # only the first parameter is used
    p = _set_p(r, m)
    rec = _set_recall(r, m)
    value = safe_div((beta2 + 1) * p * rec, beta2 * p + rec)
    return np.where(r.num_rel_ret > 0, value, 0.0)


def _utility(r, m):
    values = parse_float_list(m.get("values")) + [0.0] * 4
    p1, p2, p3, p4 = values[:4]
    a = r.num_rel_ret
    n = r.num_ret.astype(np.float64)
    rel = r.num_rel.astype(np.float64)
    d = r.options.collection_size + a - n - rel
    return p1 * a + p2 * (n - a) + p3 * (rel - a) + p4 * d


def _missing_if_default(m):
    return 0.0 if m.get("values") == m.definition.params[0].default else None


def _trec_label(name):
    def canonical(m):
        values = m.get("values")
        return name if values == m.definition.params[0].default else f"{name}_{values}"

    return canonical


_SAKAI_2007 = "Sakai, Alternatives to Bpref, SIGIR 2007"
REL = Param("rel", int, None, "relevance level: relevant means level >= rel (default: -l)")

register(Family("P", "precision at rank k: hits(k)/k; P(condensed)@k, P(micro)", _p,
                (Param("variant", str, "", "condensed: unjudged removed first; micro: counts "
                       "summed over topics (no @k: the retrieved set)",
                       choices=("", "condensed", "micro"), positional=True), REL, CUTOFF),
                cutoff="cutoff", summary=micro_summary(micro_p_total)))
register(Family("R", "recall at rank k: hits(k)/R; R(micro)", _recall,
                (Param("variant", str, "", "micro: counts summed over topics (no @k: the "
                       "retrieved set)", choices=("", "micro"), positional=True), REL, CUTOFF),
                cutoff="cutoff", summary=micro_summary(micro_r_total)))
register(Family("relative_P", "relative precision at k: hits(k)/min(k, R)", _relative_p,
                (CUTOFF,), cutoff="cutoff",
                canonical_fn=lambda m: f"relative_P_{m.get('cutoff')}"))
register(Family("Success", "1 if a relevant document is in the top k", _success, (REL, CUTOFF),
                cutoff="cutoff"))
register(Family("Rprec", "precision at rank R", _rprec, (REL,)))
register(Family("Rprec_mult", "precision at rank (long)(x*R + 0.9), trec_eval's Rprec_mult",
                _rprec_mult, (Param("mult", float, 1.0, "multiple x of R"),),
                canonical_fn=lambda m: f"Rprec_mult_{m.get('mult'):3.2f}"))
register(Family("set_P", "precision of the retrieved set: a/N", _set_p))
register(Family("set_recall", "recall of the retrieved set: a/R", _set_recall))
register(Family("set_relative_P", "a/min(N, R)", _set_relative_p))
register(Family("set_map", "a^2/(N*R), the set version of AP", _set_map))
register(Family("set_F", "trec_eval's set_F: (x+1)PR/(xP+R), x plays beta^2", _set_f,
                (Param("values", str, "1", "comma list; only the first value (x) is used"),),
                canonical_fn=_trec_label("set_F")))
register(Family("utility", "p1*a + p2*b + p3*c + p4*d (defaults 1,-1,0,0), d uses -N",
                _utility,
                (Param("values", str, "1,-1,0,0", "comma list p1,p2,p3,p4"),),
                canonical_fn=_trec_label("utility"), missing=_missing_if_default))
