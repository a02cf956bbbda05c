"""Rank measures trec_eval lacks: judged@k, IPrec@r, AUC, bpref-10, and condensed rankings.

Notation as in ``ranking.py``: R relevant documents in the qrels (level >= the relevance level),
"judged non-relevant" 0 <= level < relevance level; unjudged documents (level -1, not in the
qrels, or -2, a negative judgment) are neither.

:func:`condense` gives the condensed ranking of Sakai (2007): the same run with every unjudged
document removed and the ranks closed up. ``AP(condensed)``, ``P(condensed)@k``,
``nDCG(condensed)@k`` and ``Bpref(condensed)`` are the ordinary kernels applied to it.

This module imports nothing from the other kernel modules, so that ``ranking.py``,
``precision.py`` and ``gain.py`` can import :func:`condense` and :func:`bpref_ten` from it
without an import cycle.
"""

from __future__ import annotations

import numpy as np

from ..arrays import segment_cumsum, suffix_max_at
from ..errors import MeasureParameterError
from ..ranked import Ranked
from .base import Family, Param, register
from .sets import ratio

IPREC_SLACK = 1e-9  # c = ceil(r*R - slack): 0.3 * 10 is 3.0000000000000004, still 3


def condense(r: Ranked) -> Ranked:
    """The condensed ranking: unjudged documents (level < 0) removed, ranks closed up.

    Sakai, Alternatives to Bpref, SIGIR 2007. Computed once per run; a ranking with no unjudged
    document (for example under ``judged_only``) is its own condensed ranking.
    """
    if r.judged.all():
        return r

    def compute() -> Ranked:
        keep = r.judged
        counts = np.bincount(r.topic_index[keep], minlength=r.num_topics)
        return Ranked(
            topics=r.topics,
            offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            level=r.level[keep],
            missing=r.missing,
            level_counts=r.level_counts,
            options=r.options,
            runid=r.runid,
            name=r.name,
            num_lines_rel_positive=r.num_lines_rel_positive,
        )

    return r.cached(("extra", "condensed"), compute)


def _judged(r, m):
    """Judged@k: the fraction of the top k that has a judgment (level >= 0), divided by k even
    when fewer than k documents are retrieved: ranks a run left empty count as unjudged. As
    ir_measures' ``Judged`` (MacAvaney, Macdonald & Ounis, Streamlining evaluation with
    ir-measures, ECIR 2022). ``judged(retrieved)@k`` divides by min(k, retrieved) instead: the
    share of what the run did retrieve in its top k that is judged (0 with nothing
    retrieved), so a run of 61 documents a topic, all judged, has judged@100 0.61 and
    judged(retrieved)@100 1."""
    k = m.get("cutoff")
    if k is None or k <= 0:
        raise MeasureParameterError("judged needs a positive cutoff, e.g. judged@10")
    count = r.cached(("extra", "judged", k),  # judged@k and judged(retrieved)@k: one count
                     lambda: r.per_topic_count(r.judged & (r.rank <= k)))
    if m.get("of") == "retrieved":
        return ratio(count, np.minimum(r.num_ret, k))
    return count / k


def _iprec(r, m):
    """Interpolated precision at recall x, as textbooks define it: the highest precision at any
    rank whose recall is >= x. With c = ceil(x*R - 1e-9) relevant documents needed, that is the
    highest precision at or below the rank of the c-th relevant retrieved document (x = 0 or
    R = 0: the highest precision anywhere); 0 when fewer than c relevant are retrieved.
    Precision only peaks at relevant documents, so they are the only candidates.
    Manning, Raghavan & Schütze, Introduction to Information Retrieval, 2008, sec. 8.4.
    trec_eval's ``iprec_at_recall`` rounds x*R to the nearest integer instead (``lround``), so
    for x = 0.6 and R = 4 it asks for 2 relevant documents where this asks for 3."""
    x = m.get("recall")
    if x is None or not 0.0 <= x <= 1.0:
        raise MeasureParameterError("IPrec needs a recall level in [0, 1], e.g. IPrec@0.5")
    c = np.maximum(np.ceil(x * r.num_rel - IPREC_SLACK), 0).astype(np.int64)
    return best_precision_from(r, c[:, None])[:, 0]


def best_precision_from(r, c: np.ndarray) -> np.ndarray:
    """Per topic (a row) and each count in its row of ``c`` (nondecreasing along it): the
    highest precision at or below the rank of the c-th relevant retrieved document (the first
    for c = 0), 0 where fewer than c are retrieved. Precision peaks at relevant documents, so
    they are the only candidates: a maximum over the suffix of theirs from the c-th."""
    def compute():
        where, starts = r.rel_starts
        nth = np.arange(1, len(where) + 1) - np.repeat(starts[:-1], np.diff(starts))
        return nth / r.rank[where], starts  # as cum_rel / rank there

    precision, starts = r.cached(("extra", "precision_at_relevant"), compute)
    first, end = starts[:-1, None], starts[1:]
    return suffix_max_at(precision, first + np.minimum(np.maximum(c, 1) - 1, end[:, None] - first),
                         end)


def _auc(r, m):
    """Area under the ROC curve of the ranking over its judged documents.

    AUC = (sum over relevant retrieved d of the judged non-relevant retrieved below d) / (a n),
    a relevant and n judged non-relevant documents retrieved: the fraction of (relevant,
    non-relevant) pairs ranked in the right order. Ranks are strict, so there are no ties.
    Unjudged documents play no part. 0 when a = 0 or n = 0 (no pair to order).
    Hanley & McNeil, The meaning and use of the area under a ROC curve, Radiology 1982;
    Fawcett, An introduction to ROC analysis, Pattern Recognition Letters 2006.
    """
    nonrel = r.judged & ~r.rel
    nonrel_above = segment_cumsum(nonrel.astype(np.int64), r.offsets)
    n = r.per_topic_count(nonrel).astype(np.float64)
    below = n[r.topic_index] - nonrel_above
    right = r.per_topic_sum(below, r.rel)
    return ratio(right, r.num_rel_ret * n)


def bpref_ten(r, m):
    """bpref-10 (Buckley & Voorhees 2004): (1/R) * sum over relevant retrieved d of
    1 - min(n_d, R + 10) / (R + 10), n_d the judged non-relevant documents ranked above d (only
    the first R + 10 of them count). Unjudged documents are skipped. 0 when R = 0.
    Buckley & Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004."""
    nonrel = r.judged & ~r.rel
    n_above = segment_cumsum(nonrel.astype(np.int64), r.offsets)
    cap = r.num_rel[r.topic_index].astype(np.float64) + 10.0
    contrib = 1.0 - np.minimum(n_above, cap) / cap
    return ratio(r.per_topic_sum(contrib, r.rel), r.num_rel)


register(Family("judged", "fraction of the top k with a judgment (level >= 0), over k (or, "
                "judged(retrieved)@k, over the documents retrieved in the top k)", _judged,
                (Param("of", str, "", "'retrieved': divide by min(k, retrieved), not k",
                       choices=("", "retrieved"), positional=True),
                 Param("cutoff", int, None, "rank cutoff k")), cutoff="cutoff",
                missing=lambda m: 0.0,
                citation="MacAvaney, Macdonald & Ounis, Streamlining evaluation with "
                         "ir-measures, ECIR 2022"))
register(Family("IPrec", "interpolated precision at recall x: the best precision at recall >= x",
                _iprec, (Param("recall", float, None, "recall level x in [0, 1]"),),
                cutoff="recall",
                citation="Manning, Raghavan & Schütze, Introduction to Information Retrieval, "
                         "2008, sec. 8.4"))
register(Family("AUC", "area under the ROC curve over the judged retrieved documents", _auc,
                citation="Hanley & McNeil, The meaning and use of the area under a receiver "
                         "operating characteristic (ROC) curve, Radiology 1982"))
