"""Novelty and diversity measures over subtopics (intents), as TREC Web track's ndeval computes
them: alpha-nDCG@k, ERR-IA@k, nERR-IA@k, P-IA@k and S-recall@k.

Judgments come from a diversity qrels (``topic subtopic docno rel``, see
``irbench.judgments.diversity``): document d is relevant to intent j when rel > 0. Judgments are
binary per intent, as in ndeval ("binary assessment only": grades above 1 count as 1), so that
values agree with the TREC Web track's official numbers; a grade says how relevant a document is,
not how much of a second intent it covers. A topic's intents are its subtopics with at least one
relevant document (ndeval's "actual subtopics"), S of them; intent weights w_j are 1/S unless
given. For the document at rank i, r_j(i) is the number of documents above rank i relevant to
intent j, and J_j(i) is 1 when it is relevant to j.

The ideal rankings are ndeval's greedy approximation: at each rank, the judged document with
the largest gain given the documents already placed, ties going to the larger docno; computed
for all topics at once, one rank at a time (a loop over k ranks, not over topics or documents).

The ranking carries an :class:`IntentColumns` (``irbench.judgments.diversity`` attaches it);
without it these measures raise an :class:`EvaluationError` saying that diversity qrels are needed.
Topics: every qrels topic, as everywhere in irbench (ndeval averages over the topics the run
answers unless given -c). A topic without relevant document scores 0 on every measure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np

from ..errors import EvaluationError, MeasureParameterError
from .base import Family, Param, register, register_spelling
from .precision import safe_div

INTENT_KEY = ("diversity", "intents")  # where the intent columns sit in Ranked.cached
SPELLINGS = {"alpha-nDCG": "alpha_nDCG", "ERR-IA": "ERR_IA", "nERR-IA": "nERR_IA",
             "P-IA": "P_IA", "S-recall": "S_recall", "strec": "S_recall"}
DIVERSITY_FAMILIES = ("alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "S_recall")

CLARKE_2008 = ("Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, Novelty and "
               "diversity in information retrieval evaluation, SIGIR 2008")
CHAPELLE_2009 = ("Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank for graded "
                 "relevance, CIKM 2009 (intent-aware form as in ndeval)")
AGRAWAL_2009 = ("Agrawal, Gollapudi, Halverson & Ieong, Diversifying search results, WSDM 2009")
ZHAI_2003 = ("Zhai, Cohen & Lafferty, Beyond independent relevance: methods and evaluation "
             "metrics for subtopic retrieval, SIGIR 2003")


@dataclass(eq=False)
class IntentQrels:
    """The relevant documents of a diversity qrels, by topic, with their intents.

    Topics are those of the ranking (the qrels topics in byte order). Documents relevant to at
    least one intent are numbered topic by topic, within a topic by docno descending (ndeval's
    tie order); ``doc_topic`` gives each one's topic. ``hit_offsets`` (D+1) delimits each
    document's intents in ``hit_intent`` (global intent numbers, ascending within a document).
    Intents are numbered topic by topic; ``intent_offsets`` (T+1) delimits each topic's and
    ``intent_weight`` gives each one's weight (summing to 1 within a topic), ``uniform`` when
    every weight is 1/S.
    """

    doc_topic: np.ndarray
    hit_offsets: np.ndarray
    hit_intent: np.ndarray
    intent_offsets: np.ndarray
    intent_weight: np.ndarray
    uniform: bool
    _ideals: dict = field(default_factory=dict, repr=False)

    @property
    def num_topics(self) -> int:
        return len(self.intent_offsets) - 1

    @property
    def num_intents(self) -> np.ndarray:
        return np.diff(self.intent_offsets)

    @property
    def hit_doc(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.doc_topic)), np.diff(self.hit_offsets))

    def ideal_gains(self, alpha: float, weighted: bool, depth: int) -> np.ndarray:
        """topics x depth: the gain at each rank of the greedy ideal ranking (shared by every
        run evaluated against these qrels). Gains are sum_j w_j J_j (1 - alpha)^r_j, with
        w_j = 1 when not ``weighted``. Uniform weights scale a topic's gains by 1/S, which
        leaves the greedy choices as they are, so the unweighted ranking serves."""
        key = (alpha, weighted and not self.uniform)
        cached = self._ideals.get(key)
        if cached is None or cached.shape[1] < depth:
            cached = self._greedy(alpha, key[1], max(depth, 20))
            self._ideals[key] = cached
        gains = cached[:, :depth]
        if weighted and self.uniform:
            gains = gains * safe_div(1.0, self.num_intents)[:, None]
        return gains

    def _greedy(self, alpha: float, weighted: bool, depth: int) -> np.ndarray:
        T, D = self.num_topics, len(self.doc_topic)
        gains = np.zeros((T, depth))
        if D == 0:
            return gains
        hit_doc = self.hit_doc
        w = self.intent_weight[self.hit_intent] if weighted else np.ones(len(self.hit_intent))
        factor = np.ones(len(self.intent_weight))
        chosen = np.zeros(D, dtype=bool)
        per_topic = np.bincount(self.doc_topic, minlength=T)
        has_docs = per_topic > 0
        starts = np.concatenate(([0], np.cumsum(per_topic)))[:-1][has_docs]
        lengths = per_topic[has_docs]
        for step in range(depth):
            score = np.bincount(hit_doc, weights=w * factor[self.hit_intent], minlength=D)
            score[chosen] = -1.0
            best = np.repeat(np.maximum.reduceat(score, starts), lengths)
            top = np.flatnonzero((score == best) & (score >= 0))
            if len(top) == 0:
                break
            t = self.doc_topic[top]
            first = top[np.concatenate(([True], t[1:] != t[:-1]))]  # the larger docno
            chosen[first] = True
            gains[self.doc_topic[first], step] = score[first]
            hits = expand(self.hit_offsets[first], np.diff(self.hit_offsets)[first])
            factor[self.hit_intent[hits]] *= 1.0 - alpha
        return gains


@dataclass(frozen=True, eq=False)
class IntentColumns:
    """A ranked run's link to its :class:`IntentQrels`: ``row`` gives, per ranked document
    (aligned with ``Ranked.level``), its relevant-document number, -1 if relevant to no
    intent."""

    qrels: IntentQrels
    row: np.ndarray


def expand(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ranges start..start+length-1, in order."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.arange(total) + np.repeat(starts - (ends - lengths), lengths)


def intent_columns(r, m) -> IntentColumns:
    """The :class:`IntentColumns` attached to ``r``, or an error saying they are missing."""

    def absent():
        raise EvaluationError(
            f"{m} needs diversity qrels (topic subtopic docno rel, as ndeval reads): give "
            "irbench eval a diversity qrels file, or use "
            "irbench.judgments.diversity.evaluate_diversity"
        )

    return r.cached(INTENT_KEY, absent)


@dataclass(frozen=True)
class RunHits:
    """(document, intent) pairs of a ranked run, by rank then intent: ``topic``, ``rank``,
    ``intent`` (global) and ``prior``, the number of documents above relevant to that intent."""

    topic: np.ndarray
    rank: np.ndarray
    intent: np.ndarray
    prior: np.ndarray

    def top(self, k: int | None) -> RunHits:
        if k is None:
            return self
        keep = self.rank <= k
        return RunHits(self.topic[keep], self.rank[keep], self.intent[keep], self.prior[keep])


def run_hits(r, m) -> RunHits:
    cols = intent_columns(r, m)

    def compute() -> RunHits:
        q = cols.qrels
        pos = np.flatnonzero(cols.row >= 0)
        doc = cols.row[pos]
        lengths = np.diff(q.hit_offsets)[doc]
        hits = expand(q.hit_offsets[doc], lengths)
        hit_pos = np.repeat(pos, lengths)
        intent = q.hit_intent[hits]
        order = np.argsort(intent, kind="stable")  # by intent, then rank
        grouped = intent[order]
        first = np.concatenate(([True], grouped[1:] != grouped[:-1]))
        index = np.arange(len(order))
        prior = np.empty(len(order), dtype=np.int64)
        prior[order] = index - np.maximum.accumulate(np.where(first, index, 0))
        return RunHits(r.topic_index[hit_pos], r.rank[hit_pos], intent, prior)

    return r.cached(("diversity", "hits"), compute)


@overload
def _cutoff(m, required: Literal[True] = True) -> int: ...


@overload
def _cutoff(m, required: bool) -> int | None: ...


def _cutoff(m, required: bool = True) -> int | None:
    k = m.get("cutoff")
    if k is None and required:
        raise MeasureParameterError(f"{m.family} needs a cutoff, e.g. {m.family}@20")
    if k is not None and k <= 0:
        raise MeasureParameterError(f"{m.family}: the cutoff must be positive, not {k}")
    return k


def _alpha(m, allow_zero: bool = True) -> float:
    alpha = m.get("alpha")
    if not (0.0 <= alpha <= 1.0) or (alpha == 0.0 and not allow_zero):
        bounds = "[0, 1]" if allow_zero else "(0, 1]"
        raise MeasureParameterError(f"{m.family}: alpha must be in {bounds}, not {alpha}")
    return alpha


def _by_topic(r, topic, weights) -> np.ndarray:
    return np.bincount(topic, weights=weights, minlength=r.num_topics)


def _alpha_ndcg(r, m):
    """alpha-nDCG@k (Clarke et al. 2008): alpha-DCG@k over the alpha-DCG@k of the greedy ideal
    ranking, alpha-DCG@k = sum over i <= k of G(i) / log2(i + 1) with the novelty-discounted
    gain G(i) = sum_j J_j(i) (1 - alpha)^r_j(i); alpha = 0.5 by default. Intent weights play no
    part (as in ndeval). 0 when the ideal is 0."""
    k, alpha = _cutoff(m), _alpha(m)
    h = run_hits(r, m).top(k)
    dcg = _by_topic(r, h.topic, np.power(1.0 - alpha, h.prior) / np.log2(h.rank + 1.0))
    ideal = intent_columns(r, m).qrels.ideal_gains(alpha, False, k)
    idcg = ideal @ (1.0 / np.log2(np.arange(2, k + 2)))
    return safe_div(dcg, idcg)


def _err_ia_sum(r, m, k: int, alpha: float) -> np.ndarray:
    """sum over i <= k of (1/i) sum_j w_j J_j(i) (1 - alpha)^r_j(i)."""
    h = run_hits(r, m).top(k)
    w = intent_columns(r, m).qrels.intent_weight[h.intent]
    return _by_topic(r, h.topic, w * np.power(1.0 - alpha, h.prior) / h.rank)


def _err_ia(r, m):
    """ERR-IA@k, intent-aware ERR with ndeval's collection-independent normalisation.

    ERR-IA@k = sum_j w_j ERR_j@k / ERRmax@k, where ERR_j@k = sum over i <= k of
    (alpha / i) J_j(i) (1 - alpha)^r_j(i) is ERR for intent j with binary judgments (a relevant
    document stops the user with probability alpha: ERR's (2^1 - 1)/2^1 at alpha = 0.5), and
    ERRmax@k = sum over i <= k of alpha (1 - alpha)^(i-1) / i is the ERR of a ranking whose
    every document is relevant to the intent, so values lie in [0, 1]. ndeval leaves its rank-1
    value unnormalised; irbench normalises at every k."""
    k, alpha = _cutoff(m), _alpha(m, allow_zero=False)
    i = np.arange(1, k + 1)
    err_max = float(np.sum(np.power(1.0 - alpha, i - 1) / i))
    return _err_ia_sum(r, m, k, alpha) / err_max


def _nerr_ia(r, m):
    """nERR-IA@k, intent-aware ERR with collection-dependent normalisation (ndeval): the
    run's sum_j w_j ERR_j@k over the same sum for the greedy ideal ranking (built with the
    weighted gains sum_j w_j J_j (1 - alpha)^r_j). 0 when the ideal is 0."""
    k, alpha = _cutoff(m), _alpha(m, allow_zero=False)
    ideal = intent_columns(r, m).qrels.ideal_gains(alpha, True, k) @ (1.0 / np.arange(1, k + 1))
    return safe_div(_err_ia_sum(r, m, k, alpha), ideal)


def _p_ia(r, m):
    """P-IA@k (Agrawal et al. 2009): sum_j w_j P_j@k, P_j@k the fraction of the top k relevant
    to intent j (over k also when fewer documents are retrieved, as ndeval). Without @k, over
    the number retrieved."""
    k = _cutoff(m, required=False)
    h = run_hits(r, m).top(k)
    w = intent_columns(r, m).qrels.intent_weight[h.intent]
    found = _by_topic(r, h.topic, w)
    return safe_div(found, r.num_ret if k is None else np.full(r.num_topics, float(k)))


def _s_recall(r, m):
    """S-recall@k, subtopic recall (Zhai, Cohen & Lafferty 2003; ndeval's strec): the number
    of intents with a relevant document in the top k over S. Without @k, the whole ranking."""
    k = _cutoff(m, required=False)
    h = run_hits(r, m).top(k)
    covered = np.bincount(h.topic[h.prior == 0], minlength=r.num_topics)
    return safe_div(covered, intent_columns(r, m).qrels.num_intents)


_ALPHA = Param("alpha", float, 0.5, "redundancy penalty: the gain of a document for an intent "
                                    "already covered r times is (1 - alpha)^r")
_STOP = Param("alpha", float, 0.5, "probability that a relevant document satisfies its intent "
                                   "(ndeval's alpha)")
_CUT = Param("cutoff", int, None, "rank cutoff k")

register(Family("alpha_nDCG", "alpha-nDCG@k: novelty-discounted nDCG over subtopics (ndeval)",
                _alpha_ndcg, (_ALPHA, _CUT), cutoff="cutoff", citation=CLARKE_2008,
                needs="diversity"))
register(Family("ERR_IA", "intent-aware ERR@k, normalised by ERR of an all-relevant ranking "
                          "(ndeval)", _err_ia, (_STOP, _CUT), cutoff="cutoff",
                citation=CHAPELLE_2009, needs="diversity"))
register(Family("nERR_IA", "intent-aware ERR@k over that of the greedy ideal ranking (ndeval)",
                _nerr_ia, (_STOP, _CUT), cutoff="cutoff", citation=CHAPELLE_2009,
                needs="diversity"))
register(Family("P_IA", "intent-aware precision@k: sum_j w_j P_j@k (ndeval)", _p_ia, (_CUT,),
                cutoff="cutoff", citation=AGRAWAL_2009, needs="diversity"))
register(Family("S_recall", "subtopic recall@k: intents covered in the top k / intents "
                            "(ndeval strec)", _s_recall, (_CUT,), cutoff="cutoff",
                citation=ZHAI_2003, needs="diversity"))
for _spelling, _name in SPELLINGS.items():
    register_spelling(_spelling, _name)
