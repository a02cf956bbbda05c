"""Textbook measures: Accuracy, the precision-recall break-even point, Korfhage's coverage
and novelty.

Notation, for one topic: a relevant documents retrieved, N retrieved, R relevant in the qrels
(relevant: level >= the relevance level), hits(k) relevant documents in the top k. A qrels
topic missing from the run and scored under ``complete`` (trec_eval ``-c``) counts as
retrieving nothing here, as in ``sets.py``.

Coverage and novelty need a second set of documents, those the user already knows. The
ranking alone cannot say which retrieved documents those are, so the evaluation attaches a
:class:`KnownColumns` to the ranked run (``irbench.judgments.diversity.evaluate_known`` or
``PreparedKnown.rank``); without it the two measures raise an :class:`EvaluationError` that
says how to give the known documents.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EvaluationError
from ..trec import display
from .base import Family, register
from .precision import hits_at, safe_div
from .sets import set_counts

KNOWN_KEY = ("textbook", "known")  # where the known-documents columns sit in Ranked.cached


@dataclass(frozen=True)
class KnownColumns:
    """Which ranked documents the user already knows, and how many known documents of each
    qrels level each topic has.

    known: bool per ranked document (aligned with ``Ranked.level``).
    level_counts: topics x levels, known documents judged at each level (as
        ``Ranked.level_counts``), so that the known relevant count follows the relevance level.
    """

    known: np.ndarray
    level_counts: np.ndarray

    def num_known_rel(self, relevance_level: int) -> np.ndarray:
        return self.level_counts[:, relevance_level:].sum(axis=1)


def known_columns(r, m) -> KnownColumns:
    """The :class:`KnownColumns` attached to ``r``, or an error saying how to attach them."""

    def absent():
        raise EvaluationError(
            f"{m} needs the documents the user already knows: give them with --known FILE "
            "(irbench eval) or irbench.judgments.diversity.evaluate_known"
        )

    return r.cached(KNOWN_KEY, absent)


# ---- Accuracy ----------------------------------------------------------------------------


def _accuracy(r, m):
    """Accuracy of the retrieved set as a classifier of the whole collection:
    (a + (Ncoll - N - (R - a))) / Ncoll, relevant documents retrieved plus non-relevant
    documents not retrieved, over the collection size Ncoll (trec_eval ``-N``, the config's
    ``collection_size``). Unjudged documents count as non-relevant.

    A poor retrieval measure: the non-relevant documents not retrieved dominate. With
    Ncoll = 500,000, R = 100 and N = 1,000, a run retrieving no relevant document scores
    0.9978 and retrieving nothing at all scores 0.9998, better than any run that retrieves
    1,000 documents; differences between runs lie in the fourth decimal. Manning, Raghavan &
    Schütze, Introduction to Information Retrieval, 2008, section 8.3.
    """
    size = r.options.collection_size
    if not size or size <= 0:
        raise EvaluationError(
            f"{m} needs the collection size: give -N (irbench eval), 'collection: size:' in a "
            "config, or EvalOptions(collection_size=...)"
        )
    a, n, rel = set_counts(r)
    negatives_left = size - n - (rel - a)
    too_small = negatives_left < 0
    if too_small.any():
        t = int(np.flatnonzero(too_small)[0])
        raise EvaluationError(
            f"{m}: the collection size {size} is smaller than the documents retrieved and "
            f"relevant for topic '{display(r.topics[t])}' ({int(n[t] + rel[t] - a[t])})"
        )
    return (a + negatives_left) / size


# ---- BEP ---------------------------------------------------------------------------------


def _bep(r, m):
    """Precision-recall break-even point: the precision where precision equals recall.

    At rank R precision and recall are both hits(R)/R, so for a run of at least R documents
    the break-even point is P@R, that is R-precision. For a shorter run (N < R) precision stays
    above recall at every rank (a/n > a/R for n < R); past the last document the curves meet
    where trec_eval's interpolation takes them, every further rank non-relevant: precision
    a/n falls to the recall a/R at n = R (equivalently, the interpolated precision-recall curve
    drops to 0 at recall a/R and crosses the line P = R there). So BEP = hits(R)/R in both
    cases, and 0 when R = 0. Manning, Raghavan & Schütze, Introduction to Information
    Retrieval, 2008, section 8.4.
    """
    return safe_div(hits_at(r, r.num_rel), r.num_rel)


# ---- Coverage and novelty ----------------------------------------------------------------


def _coverage(r, m):
    """Korfhage's coverage: |known relevant retrieved| / |known relevant|, the share of the
    relevant documents the user already knows that the run finds again; 0 when the user knows
    no relevant document. Known: listed with a value >= 1 in the known-documents qrels;
    relevant: in the main qrels. Korfhage, Information Storage and Retrieval, Wiley 1997,
    section 8.4 (after Lesk & Salton)."""
    cols = known_columns(r, m)
    found = r.per_topic_count(r.rel & cols.known)
    found = np.where(r.missing, 0, found)
    return safe_div(found, cols.num_known_rel(r.options.relevance_level))


def _novelty(r, m):
    """Korfhage's novelty ratio: |new relevant retrieved| / (|known relevant retrieved| +
    |new relevant retrieved|), the share of the relevant documents retrieved that the user did
    not know; 0 when no relevant document is retrieved. Korfhage, Information Storage and
    Retrieval, Wiley 1997, section 8.4."""
    cols = known_columns(r, m)
    new = np.where(r.missing, 0, r.per_topic_count(r.rel & ~cols.known))
    return safe_div(new, np.where(r.missing, 0, r.num_rel_ret))


_MRS = "Manning, Raghavan & Schütze, Introduction to Information Retrieval, 2008"
_KORFHAGE = "Korfhage, Information Storage and Retrieval, Wiley 1997"

register(Family("Accuracy", "(relevant retrieved + non-relevant not retrieved) / collection "
                            "size; needs -N", _accuracy, citation=_MRS + ", 8.3"))
register(Family("BEP", "precision-recall break-even point, hits(R)/R", _bep,
                citation=_MRS + ", 8.4"))
register(Family("Coverage", "known relevant retrieved / known relevant (needs --known)",
                _coverage, citation=_KORFHAGE, needs="known"))
register(Family("Novelty", "new relevant retrieved / relevant retrieved (needs --known)",
                _novelty, citation=_KORFHAGE, needs="known"))
