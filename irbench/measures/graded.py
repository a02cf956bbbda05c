"""Graded measures trec_eval lacks: ERR, CG/nCG, DCG with exponential gain or Järvelin's
discount, and PairRatio.

Grades are qrels levels; an unjudged document (level < 0) has grade 0. The relevance level
(``-l``) plays no part, as in trec_eval's nDCG.

``nDCG`` and ``DCG`` themselves live in ``gain.py`` (trec_eval's definitions and its gain
table). :func:`dcg_general`, :func:`idcg_general` and :func:`ndcg_general` compute them for the
``gain`` and ``discount`` choices trec_eval lacks, given a gain setup with the attributes of
``gain.GainSetup`` (``doc_gain``, ``ideal_gain``, ``ideal_pos``, ``ideal_topic``), so that
``gain.py`` can dispatch to them without this module importing it (which would be an import
cycle). ``CG`` and ``nCG`` use plain levels as gains (no trec_eval gain table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import segment_cumsum
from ..errors import MeasureParameterError
from .base import Family, Param, register
from .precision import safe_div

GAIN = Param("gain", str, "linear", "gain of grade g: linear g, or exp 2^g - 1",
             choices=("linear", "exp"))
DISCOUNT = Param("discount", str, "log2",
                 "log2: gain/log2(rank+1); jarvelin: no discount before rank b, log_b(rank) "
                 "from rank b on", choices=("log2", "jarvelin"))
LOG_BASE = Param("b", int, 2, "base b of the jarvelin discount (>= 2)")
_CUTOFF = Param("cutoff", int, None, "rank cutoff k; none: the whole ranking")

JARVELIN_2002 = ("Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, "
                 "ACM TOIS 2002")


def _check_cutoff(family: str, k):
    if k is not None and k <= 0:
        raise MeasureParameterError(f"{family}: the cutoff must be positive, not {k}")
    return k


def max_levels(r) -> np.ndarray:
    """The highest judged level of each topic's qrels (0 for a topic with no judged document)."""
    counts = r.level_counts
    nonzero = counts > 0
    width = counts.shape[1]
    return np.where(nonzero.any(axis=1), width - 1 - np.argmax(nonzero[:, ::-1], axis=1), 0)


# ---- gains and discounts -----------------------------------------------------------------


def transform_gain(gain: np.ndarray, kind: str) -> np.ndarray:
    """``linear``: the gain itself; ``exp``: 2^gain - 1 (Burges et al. 2005)."""
    if kind == "linear":
        return gain
    if kind == "exp":
        return np.exp2(gain) - 1.0
    raise MeasureParameterError(f"gain must be linear or exp, not {kind!r}")


def discount_at(rank: np.ndarray, kind: str, b: int = 2) -> np.ndarray:
    """The divisor of the gain at each rank.

    ``log2``: log2(rank + 1). ``jarvelin`` (Järvelin & Kekäläinen 2002): 1 for rank < b,
    log_b(rank) from rank b on (so 1 at rank b). ``none``: 1 (cumulated gain).
    """
    rank = np.asarray(rank, dtype=np.float64)
    if kind != "jarvelin" and b != 2:
        raise MeasureParameterError(f"b applies to discount=jarvelin only (discount={kind})")
    if kind == "log2":
        return np.log2(rank + 1.0)
    if kind == "jarvelin":
        if b < 2:
            raise MeasureParameterError(f"the jarvelin discount needs a base b >= 2, not {b}")
        log_b = np.log2(rank) if b == 2 else np.log(rank) / np.log(b)
        return np.where(rank < b, 1.0, log_b)
    if kind == "none":
        return np.ones_like(rank)
    raise MeasureParameterError(f"discount must be log2 or jarvelin, not {kind!r}")


def dcg_general(r, setup, k=None, gain="linear", discount="log2", b=2) -> np.ndarray:
    """DCG@k = sum over ranks i <= k of G(g_i) / D(i): G from ``gain``, D from ``discount``,
    g_i the gain of the document at rank i in ``setup`` (``doc_gain``)."""
    g = transform_gain(setup.doc_gain, gain)
    contrib = g / discount_at(r.rank, discount, b)
    mask = g != 0
    if k is not None:
        mask &= r.rank <= k
    return r.per_topic_sum(contrib, mask)


def idcg_general(r, setup, k=None, gain="linear", discount="log2", b=2) -> np.ndarray:
    """The same sum over the ideal ranking of ``setup`` (``ideal_gain`` by ``ideal_pos``)."""
    g = transform_gain(setup.ideal_gain, gain)
    weights = g / discount_at(setup.ideal_pos, discount, b)
    topic = setup.ideal_topic
    if k is not None:
        keep = setup.ideal_pos <= k
        weights, topic = weights[keep], topic[keep]
    return np.bincount(topic, weights=weights, minlength=r.num_topics)


def ndcg_general(r, setup, k=None, gain="linear", discount="log2", b=2) -> np.ndarray:
    """nDCG@k = DCG@k / ideal DCG@k; 0 when the ideal DCG is 0.

    ``gain=exp``: G(g) = 2^g - 1 (Burges, Shaked, Renshaw, Lazier, Deeds, Hamilton &
    Hullender, Learning to rank using gradient descent, ICML 2005). ``discount=jarvelin``:
    D(i) = 1 for i < b, log_b(i) for i >= b (Järvelin & Kekäläinen, Cumulated gain-based
    evaluation of IR techniques, ACM TOIS 2002).
    """
    return safe_div(dcg_general(r, setup, k, gain, discount, b),
                    idcg_general(r, setup, k, gain, discount, b))


@dataclass(frozen=True)
class LevelGains:
    """Gains equal to qrels levels: per document max(level, 0), and per topic the ideal
    ranking, every judged document of level >= 1 by level descending."""

    doc_gain: np.ndarray
    ideal_gain: np.ndarray
    ideal_pos: np.ndarray
    ideal_topic: np.ndarray


def level_gains(r) -> LevelGains:
    def compute() -> LevelGains:
        counts = r.level_counts[:, :0:-1]  # levels max..1, per topic
        T, W = counts.shape
        levels = np.arange(W, 0, -1, dtype=np.float64)
        ideal_gain = np.repeat(np.tile(levels, T), counts.ravel())
        lengths = counts.sum(axis=1)
        ideal_topic = np.repeat(np.arange(T), lengths)
        starts = np.concatenate(([0], np.cumsum(lengths)))[:-1]
        ideal_pos = np.arange(len(ideal_gain)) - starts[ideal_topic] + 1
        doc_gain = np.maximum(r.level, 0).astype(np.float64)
        return LevelGains(doc_gain, ideal_gain, ideal_pos, ideal_topic)

    return r.cached(("graded", "level_gains"), compute)


def _cg(r, m):
    """Cumulated gain (Järvelin & Kekäläinen 2002): CG@k = sum over ranks i <= k of G(g_i),
    g_i the level of the document at rank i (0 if unjudged), G linear or exp (2^g - 1)."""
    k = _check_cutoff("CG", m.get("cutoff"))
    return dcg_general(r, level_gains(r), k, m.get("gain"), "none")


def _ncg(r, m):
    """Normalised cumulated gain (Järvelin & Kekäläinen 2002): CG@k over the CG@k of the ideal
    ranking (every judged document by level descending); 0 when that is 0. Without @k, the
    gain retrieved over the gain of all judged documents."""
    k = _check_cutoff("nCG", m.get("cutoff"))
    setup = level_gains(r)
    return safe_div(dcg_general(r, setup, k, m.get("gain"), "none"),
                    idcg_general(r, setup, k, m.get("gain"), "none"))


# ---- ERR ---------------------------------------------------------------------------------


def _err(r, m):
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan 2009).

    ERR@k = sum over i <= k of (1/i) R_i prod_{j<i} (1 - R_j), with R_i = (2^g_i - 1) / 2^gmax
    the probability that the document at rank i satisfies the user; g_i its level (0 if
    unjudged), gmax the highest level in the topic's qrels, or ``max_grade`` when given (levels
    above it count as max_grade). 0 for a topic whose qrels have no level above 0. Without @k,
    the whole ranking.
    """
    k = _check_cutoff("ERR", m.get("cutoff"))
    max_grade = m.get("max_grade")
    if max_grade is None:
        top = max_levels(r)[r.topic_index]
    elif max_grade < 1:
        raise MeasureParameterError(f"ERR: max_grade must be >= 1, not {max_grade}")
    else:
        top = np.full(len(r.level), max_grade)
    grade = np.clip(r.level, 0, top).astype(np.float64)
    top = top.astype(np.float64)
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    # prod_{j<i} (1 - R_j) within each topic, as exp of a segmented sum of logs; R_j < 1 unless
    # 2^gmax rounds 1 - R_j to 0, and the floor keeps that a (finite) zero probability
    log_go_on = np.maximum(np.log1p(-stop), -1000.0)
    reach = np.exp(segment_cumsum(log_go_on, r.offsets) - log_go_on)
    mask = None if k is None else r.rank <= k
    return r.per_topic_sum(stop * reach / r.rank, mask)


# ---- PairRatio ---------------------------------------------------------------------------


def pair_counts(r) -> tuple[np.ndarray, np.ndarray]:
    """(right, wrong) per topic: pairs of judged retrieved documents with different levels,
    ordered with the higher level above (right) or below (wrong)."""
    judged = r.judged
    judged_above = segment_cumsum(judged.astype(np.int64), r.offsets) - judged
    lower_above = np.zeros(len(r.level), dtype=np.int64)
    same_above = np.zeros(len(r.level), dtype=np.int64)
    for v in np.unique(r.level[judged]):  # a loop over the distinct grades, not documents
        is_v = r.level == v
        above = segment_cumsum(is_v.astype(np.int64), r.offsets) - is_v
        lower_above += np.where(r.level > v, above, 0)
        same_above += np.where(is_v, above, 0)
    higher_above = judged_above - same_above - lower_above
    right = r.per_topic_sum(higher_above, judged)
    wrong = r.per_topic_sum(lower_above, judged)
    return right, wrong


def _pair_ratio(r, m):
    """PairRatio: pairs of judged retrieved documents with different levels in the right order
    (higher level above) over pairs in the wrong order, right / max(wrong, 1).

    A topic with no wrong pair scores its number of right pairs (so no infinite values; a
    perfect ranking scores as if one pair were wrong), and a topic with no pair of different
    levels scores 0. Unjudged documents play no part; the relevance level plays no part.
    The ratio is irbench's definition; the pairs are those of Kendall's tau (Kendall, A new
    measure of rank correlation, Biometrika 1938).
    """
    right, wrong = pair_counts(r)
    return right / np.maximum(wrong, 1.0)


register(Family("ERR", "expected reciprocal rank, R = (2^g - 1)/2^gmax", _err,
                (Param("max_grade", int, None, "gmax; default: the topic's highest level"),
                 _CUTOFF), cutoff="cutoff", graded=True,
                citation="Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank for "
                         "graded relevance, CIKM 2009"))
register(Family("CG", "cumulated gain: sum of the gains in the top k", _cg, (GAIN, _CUTOFF),
                cutoff="cutoff", citation=JARVELIN_2002))
register(Family("nCG", "normalised cumulated gain: CG@k / ideal CG@k", _ncg, (GAIN, _CUTOFF),
                cutoff="cutoff", citation=JARVELIN_2002))
register(Family("PairRatio", "correctly over incorrectly ordered pairs of judged documents "
                             "with different levels, right / max(wrong, 1)", _pair_ratio,
                graded=True,
                citation="Kendall, A new measure of rank correlation, Biometrika 1938"))
