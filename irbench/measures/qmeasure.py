"""Graded measures with an ideal ranking in the normaliser: Sakai's Q-measure and nERR.

Notation, for one topic: R relevant documents in the qrels (level >= the relevance level);
the gain g(d) of a relevant document is its qrels level, 0 for any other document; at rank r,
C(r) relevant documents and cg(r) = sum of gains at ranks <= r; the ideal ranking lists the
relevant documents by level descending, cg*(r) its cumulated gain (cg*(r) = cg*(R) for r > R).
"""

from __future__ import annotations

import numpy as np

from ..arrays import segment_cumsum
from ..errors import MeasureParameterError
from .base import Family, Param, register
from .graded import level_gains, max_levels
from .precision import safe_div

_CUTOFF = Param("cutoff", int, None, "rank cutoff k; none: the whole ranking")
SAKAI_2004 = ("Sakai, New performance metrics based on multigrade relevance: their application "
              "to question answering, NTCIR-4 2004; Sakai, On the reliability of information "
              "retrieval metrics based on graded relevance, IP&M 2007")


def _cutoff(m) -> int | None:
    k = m.get("cutoff")
    if k is not None and k <= 0:
        raise MeasureParameterError(f"{m.family}: the cutoff must be positive, not {k}")
    return k


def ideal_cumulated_gain(r) -> tuple[np.ndarray, np.ndarray]:
    """(cum, start): per topic, the cumulated gains of the ideal ranking of the relevant
    documents (levels >= the relevance level, by level descending), flat, topic after topic;
    ``cum[start[t] + i - 1]`` is cg*(i) of topic t for 1 <= i <= R_t."""

    def compute():
        level = r.options.relevance_level
        counts = r.level_counts[:, level:][:, ::-1]  # levels max..rl, per topic
        T, W = counts.shape
        levels = np.arange(level + W - 1, level - 1, -1, dtype=np.float64)
        gain = np.repeat(np.tile(levels, T), counts.ravel())
        lengths = counts.sum(axis=1)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return segment_cumsum(gain, offsets), offsets[:-1]

    return r.cached(("qmeasure", "ideal_cg"), compute)


def _segments(topic: np.ndarray, num_topics: int) -> np.ndarray:
    """Offsets (T+1) of the rows of each topic in ``topic`` (sorted)."""
    return np.concatenate(([0], np.cumsum(np.bincount(topic, minlength=num_topics))))


def _q(r, m):
    """Q-measure (Sakai 2004), and Q@k.

    Q = (1/R) sum over relevant documents at rank r of (C(r) + beta cg(r)) / (r + beta cg*(r)):
    a blend of precision (beta = 0 gives AP) and normalised cumulated gain; beta = 1 by
    default, Sakai's choice. Q@k sums over ranks r <= k and divides by min(k, R) (Sakai's
    Q@l, as NTCIREVAL computes it). 0 when R = 0. Gains are qrels levels (0 for unjudged),
    so a relevant document of level 2 counts twice one of level 1.

    Only relevant documents change C and cg, so both are running sums over the relevant
    retrieved documents alone.
    """
    beta = m.get("beta")
    if beta < 0:
        raise MeasureParameterError(f"Q: beta must be >= 0, not {beta}")
    k = _cutoff(m)
    mask = r.rel if k is None else r.rel & (r.rank <= k)
    idx = np.flatnonzero(mask)
    t = r.topic_index[idx]
    rank = r.rank[idx]
    offsets = _segments(t, r.num_topics)
    count = np.arange(1, len(idx) + 1) - np.repeat(offsets[:-1], np.diff(offsets))  # C(r)
    cg = segment_cumsum(r.level[idx].astype(np.float64), offsets)
    cum, start = ideal_cumulated_gain(r)
    num_rel = r.num_rel
    ideal = cum[start[t] + np.minimum(rank, num_rel[t]) - 1] if len(idx) else np.zeros(0)
    blended = (count + beta * cg) / (rank + beta * ideal)
    total = np.bincount(t, weights=blended, minlength=r.num_topics)
    return safe_div(total, num_rel if k is None else np.minimum(num_rel, k))


def err_sum(grade, top, topic, rank, num_topics) -> np.ndarray:
    """Per topic, sum over the given documents (topic by topic, in rank order) of
    (1/rank) R prod_{earlier} (1 - R), R = (2^grade - 1) / 2^top: ERR (Chapelle et al. 2009)
    when the documents left out have grade 0 (they stop no one and change no product)."""
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    # as graded.py: the floor keeps 1 - R = 0 (2^gmax rounding) a finite zero probability
    log_go_on = np.maximum(np.log1p(-stop), -1000.0)
    reach = np.exp(segment_cumsum(log_go_on, _segments(topic, num_topics)) - log_go_on)
    return np.bincount(topic, weights=stop * reach / rank, minlength=num_topics)


def _nerr(r, m):
    """Normalised ERR: ERR@k / ERR@k of the ideal ranking (every judged document by level
    descending), with ERR's stopping probabilities R = (2^g - 1) / 2^gmax (see ``ERR``);
    0 when the ideal is 0 (no level above 0). Without @k, the whole ranking over the ERR of
    every judged document. Documents of grade 0 play no part, so only the others are read."""
    k = _cutoff(m)
    max_grade = m.get("max_grade")
    if max_grade is not None and max_grade < 1:
        raise MeasureParameterError(f"nERR: max_grade must be >= 1, not {max_grade}")
    tops = max_levels(r) if max_grade is None else np.full(r.num_topics, max_grade)
    mask = r.level > 0 if k is None else (r.level > 0) & (r.rank <= k)
    idx = np.flatnonzero(mask)
    t = r.topic_index[idx]
    top = tops[t]
    run = err_sum(np.minimum(r.level[idx], top).astype(np.float64), top.astype(np.float64), t,
                  r.rank[idx], r.num_topics)
    setup = level_gains(r)
    keep = slice(None) if k is None else setup.ideal_pos <= k
    t = setup.ideal_topic[keep]
    top = tops[t].astype(np.float64)
    ideal = err_sum(np.minimum(setup.ideal_gain[keep], top), top, t, setup.ideal_pos[keep],
                    r.num_topics)
    return safe_div(run, ideal)


register(Family("Q", "Sakai's Q-measure: (1/R) sum over relevant r of (C(r)+b cg(r))/(r+b cg*(r))",
                _q, (Param("beta", float, 1.0, "weight of cumulated gain against precision "
                           "(0: AP)"), _CUTOFF),
                cutoff="cutoff", graded=True, citation=SAKAI_2004))
register(Family("nERR", "ERR@k over the ERR@k of the ideal ranking", _nerr,
                (Param("max_grade", int, None, "gmax; default: the topic's highest level"),
                 _CUTOFF), cutoff="cutoff", graded=True,
                citation="Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank for "
                         "graded relevance, CIKM 2009"))
