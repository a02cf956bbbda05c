"""Accuracy, BEP, Coverage, Novelty (measures/textbook.py), Q and nERR (measures/qmeasure.py).

Every expected value is worked out by hand in the comments from the small collection below
(the one of test_measures_beyond_trec_eval.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irbench
from irbench.errors import EvaluationError, MeasureParameterError
from irbench.judgments.known import PreparedKnown, evaluate_known
from irbench.measures import parse_measure

TE = Path(__file__).parent / "data" / "trec_eval_test"

# q1, ranked by score: a u b c e d
#   rank   1  2  3  4  5  6
#   level  2 -1  0  1 -2  3     (u not in the qrels, e judged -1: unjudged; f relevant, unretrieved)
#   R = 4 (a c d f), relevant retrieved a c d at ranks 1 4 6, N = 6
# q2, ranked: y z x
#   level  0 -1  1              R = 1, N = 3
QRELS = {
    "q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1, "f": 1},
    "q2": {"x": 1, "y": 0},
}
RUN = {
    "q1": {"a": 6, "u": 5, "b": 4, "c": 3, "e": 2, "d": 1},
    "q2": {"y": 3, "z": 2, "x": 1},
}


def per_topic(name, qrels=QRELS, run=RUN, **options):
    ev = irbench.evaluate(irbench.read_qrels(qrels), irbench.read_run(run), [name], **options)
    return list(ev[name]), ev.summary(name)


def approx(values):
    return pytest.approx(values, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["Accuracy", "BEP", "Coverage", "Novelty", "Q", "Q@10",
                                  "Q(beta=0.5)@5", "nERR@20", "nERR(max_grade=4)@10"])
def test_canonical_names_round_trip(name):
    assert str(parse_measure(name)) == name


# ---- Accuracy ----------------------------------------------------------------------------


def test_accuracy():
    # Ncoll = 100. q1: a = 3, N = 6, R = 4: non-relevant not retrieved 100 - 6 - (4 - 3) = 93,
    #   (3 + 93)/100. q2: a = 1, N = 3, R = 1: (1 + 97)/100
    values, summary = per_topic("Accuracy", collection_size=100)
    assert values == approx([0.96, 0.98])
    assert summary == approx(0.97)


def test_accuracy_rewards_retrieving_nothing():
    # why Accuracy is a poor IR measure: an empty-handed run beats a perfect one of length 1000
    size, rel = 500_000, 100
    qrels = {"q": {f"r{i}": 1 for i in range(rel)}}
    perfect = {"q": {**{f"r{i}": 2000 - i for i in range(rel)},
                     **{f"n{i}": 1000 - i for i in range(900)}}}
    nothing = {"q": {"n0": 1.0}}  # one non-relevant document
    best = per_topic("Accuracy", qrels, perfect, collection_size=size)[0][0]
    idle = per_topic("Accuracy", qrels, nothing, collection_size=size)[0][0]
    assert best == approx((100 + size - 1000) / size)
    assert idle == approx((size - 1 - 100) / size)
    assert idle > best


def test_accuracy_missing_topic_retrieves_nothing():
    # q2 absent, scored under -c: N = a = 0, so (100 - 1)/100
    run = {"q1": RUN["q1"]}
    assert per_topic("Accuracy", run=run, collection_size=100, complete=True)[0] == approx(
        [0.96, 0.99])


def test_accuracy_needs_the_collection_size():
    with pytest.raises(EvaluationError, match="collection size.*-N"):
        per_topic("Accuracy")


def test_accuracy_rejects_a_collection_too_small():
    # q1 needs N + R - a = 6 + 4 - 3 = 7 documents
    with pytest.raises(EvaluationError, match="smaller.*'q1'"):
        per_topic("Accuracy", collection_size=5)


# ---- BEP ---------------------------------------------------------------------------------


def test_bep_is_precision_at_r():
    # q1: R = 4, top 4 a u b c hold a c: 2/4; q2: R = 1, rank 1 is y (non-relevant): 0
    values, _ = per_topic("BEP")
    assert values == approx([0.5, 0.0])
    assert values == per_topic("Rprec")[0]


def test_bep_of_a_run_shorter_than_r():
    # R = 4, the run has 2 documents, both relevant: precision 1 > recall 1/2 at both ranks;
    # the curves meet at rank R where both are a/R = 2/4
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    assert per_topic("BEP", qrels, {"q": {"a": 2, "b": 1}})[0] == approx([0.5])


def test_bep_without_relevant_documents_is_zero():
    assert per_topic("BEP", {"q": {"a": 0}}, {"q": {"a": 1}})[0] == [0.0]


# ---- Q -----------------------------------------------------------------------------------


def test_q_measure():
    # q1: ideal levels 3 2 1 1: cg* = 3 5 6 7. Relevant retrieved:
    #   rank 1 a: C 1, cg 2:  (1 + 2)/(1 + 3)  = 3/4
    #   rank 4 c: C 2, cg 3:  (2 + 3)/(4 + 7)  = 5/11
    #   rank 6 d: C 3, cg 6:  (3 + 6)/(6 + 7)  = 9/13     Q = (3/4 + 5/11 + 9/13)/4
    # q2: x at rank 3: C 1, cg 1, cg*(3) = cg*(1) = 1: (1 + 1)/(3 + 1) = 1/2, R = 1
    values, summary = per_topic("Q")
    q1 = (3 / 4 + 5 / 11 + 9 / 13) / 4
    assert values == approx([q1, 0.5])
    assert summary == approx((q1 + 0.5) / 2)


def test_q_at_k_divides_by_min_k_r():
    # Q@3: q1 has only a within rank 3: (3/4)/min(3, 4); q2: x at rank 3: (1/2)/min(3, 1)
    assert per_topic("Q@3")[0] == approx([0.25, 0.5])
    # Q@5: adds c: (3/4 + 5/11)/4
    assert per_topic("Q@5")[0] == approx([(3 / 4 + 5 / 11) / 4, 0.5])


def test_q_with_beta_zero_is_ap():
    assert per_topic("Q(beta=0)")[0] == approx(per_topic("AP")[0])


def test_q_beta():
    # beta = 2 on q2: (1 + 2)/(3 + 2) = 3/5
    assert per_topic("Q(beta=2)")[0][1] == approx(0.6)


def test_q_follows_the_relevance_level():
    # -l 2: relevant a (2), d (3), R = 2; ideal 3 2: cg* = 3 5; gains of level-1 documents are 0
    #   a rank 1: (1 + 2)/(1 + 3) = 3/4; d rank 6: C 2, cg 5: (2 + 5)/(6 + 5) = 7/11
    # q2 has no document of level 2: 0
    assert per_topic("Q", relevance_level=2)[0] == approx([(3 / 4 + 7 / 11) / 2, 0.0])


def test_q_rejects_negative_beta():
    with pytest.raises(MeasureParameterError):
        per_topic("Q(beta=-1)")


# ---- nERR --------------------------------------------------------------------------------


def test_nerr():
    # ERR@4: q1 = 3/8 + (5/8)(1/8)/4 (test_measures_beyond_trec_eval); q2 = (1/2)/3
    # ideal ERR@4, q1: levels 3 2 1 1, R = 7/8 3/8 1/8 1/8:
    #   7/8 + (1/8)(3/8)/2 + (1/8)(5/8)(1/8)/3 + (1/8)(5/8)(7/8)(1/8)/4
    # q2: x first: 1/2
    values, _ = per_topic("nERR@4")
    ideal = 7 / 8 + (3 / 64) / 2 + (5 / 512) / 3 + (35 / 4096) / 4
    assert values == approx([(3 / 8 + 5 / 256) / ideal, (1 / 6) / 0.5])


def test_nerr_of_the_ideal_ranking_is_one():
    run = {"q1": {"d": 4, "a": 3, "c": 2, "f": 1}, "q2": {"x": 1}}
    assert per_topic("nERR@3", run=run)[0] == approx([1.0, 1.0])
    assert per_topic("nERR", run=run)[0] == approx([1.0, 1.0])


def test_nerr_topic_without_grades_is_zero():
    assert per_topic("nERR@5", {"q": {"a": 0}}, {"q": {"a": 1}})[0] == [0.0]


# ---- Coverage and Novelty ----------------------------------------------------------------

# The user knows a, b and f for q1 (b is not relevant) and nothing for q2;
# "g" is known but not in the qrels, "z" is known with value 0 (listed, not known).
KNOWN = {"q1": {"a": 1, "b": 1, "f": 1, "g": 1}, "q2": {"z": 0}}


def known_values(names, run=RUN, **options):
    ev = evaluate_known(QRELS, KNOWN, run, names, **options)
    return {name: list(ev[name]) for name in names}


def test_coverage_and_novelty():
    # q1: known relevant a f; retrieved: a -> coverage 1/2.
    #     relevant retrieved a c d, new ones c d -> novelty 2/3
    # q2: known relevant: none -> coverage 0; relevant retrieved x, new -> novelty 1
    values = known_values(["Coverage", "Novelty"])
    assert values["Coverage"] == approx([0.5, 0.0])
    assert values["Novelty"] == approx([2 / 3, 1.0])


def test_coverage_follows_the_relevance_level():
    # -l 2: relevant a (2), d (3); known relevant: a -> coverage 1;
    #   relevant retrieved a d, new: d -> novelty 1/2
    values = known_values(["Coverage", "Novelty"], relevance_level=2)
    assert values["Coverage"] == approx([1.0, 0.0])
    assert values["Novelty"] == approx([0.5, 0.0])


@pytest.mark.parametrize("options", [{}, {"judged_only": True}, {"max_docs": 4},
                                     {"relevance_level": 2}])
def test_other_measures_unchanged_beside_known(options):
    names = ["AP", "P@5", "nDCG", "NumRet", "Bpref", "RR"]
    plain = irbench.evaluate(QRELS, RUN, names, **options)
    beside = evaluate_known(QRELS, KNOWN, RUN, names, **options)
    for name in names:
        assert list(beside[name]) == list(plain[name])


def test_known_with_judged_only_keeps_the_columns_aligned():
    # -J drops u and e: q1 becomes a b c d; known a b: coverage 1/2, novelty 2/3 still
    values = known_values(["Coverage", "Novelty", "NumRet"], judged_only=True)
    assert values["NumRet"] == [4.0, 2.0]
    assert values["Coverage"] == approx([0.5, 0.0])
    assert values["Novelty"] == approx([2 / 3, 1.0])


def test_known_missing_topic_scores_zero():
    values = known_values(["Coverage", "Novelty"], run={"q1": RUN["q1"]}, complete=True)
    assert values["Coverage"] == approx([0.5, 0.0])
    assert values["Novelty"] == approx([2 / 3, 0.0])


def test_prepared_known_reused_across_runs():
    prepared = PreparedKnown(irbench.read_qrels(QRELS), irbench.read_qrels(KNOWN))
    other = {"q1": {"f": 2, "c": 1}, "q2": {"x": 1}}
    for run, expected in ((RUN, [0.5, 0.0]), (other, [0.5, 0.0])):
        ranked = prepared.rank(irbench.read_run(run))
        values = parse_measure("Coverage").definition.compute(ranked, parse_measure("Coverage"))
        assert list(values) == approx(expected)


def test_coverage_without_known_documents_says_how():
    with pytest.raises(EvaluationError, match="--known"):
        per_topic("Coverage")


def test_known_columns_are_booleans_per_ranked_document():
    from irbench.measures.textbook import KNOWN_KEY

    prepared = PreparedKnown(irbench.read_qrels(QRELS), irbench.read_qrels(KNOWN))
    ranked = prepared.rank(irbench.read_run(RUN))
    cols = ranked.cached(KNOWN_KEY, lambda: None)
    # q1: a u b c e d -> known a, b; q2: y z x -> z has value 0: not known
    assert cols.known.tolist() == [True, False, True, False, False, False, False, False, False]
    assert np.array_equal(cols.num_known_rel(1), [2, 0])


# ---- Q and nERR against references on random data ----------------------------------------


def _random_collection(rng, topics=30):
    qrels, run = {}, {}
    for t in range(topics):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.choice(40, size=int(rng.integers(1, 20)), replace=False)
        qrels[f"q{t}"] = {docs[i]: int(rng.choice([0, 0, 1, 2, 3])) for i in judged}
        retrieved = rng.choice(40, size=int(rng.integers(1, 40)), replace=False)
        run[f"q{t}"] = {docs[i]: float(rng.integers(0, 10)) for i in retrieved}  # ties
    return qrels, run


def _q_reference(qrels, run, beta, k=None, level=1):
    out = []
    for topic in sorted(qrels):
        judged = qrels[topic]
        gains = sorted((g for g in judged.values() if g >= level), reverse=True)
        R = len(gains)
        docs = [d for d, _ in sorted(run[topic].items(), key=lambda x: (x[1], x[0]),
                                     reverse=True)]
        total, count, cg = 0.0, 0, 0.0
        for rank, d in enumerate(docs[:k] if k else docs, 1):
            g = judged.get(d, -1)
            if g >= level:
                count += 1
                cg += g
                total += (count + beta * cg) / (rank + beta * sum(gains[:min(rank, R)]))
        den = R if k is None else min(k, R)
        out.append(total / den if den else 0.0)
    return out


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name,beta,k,level", [("Q", 1.0, None, 1), ("Q@5", 1.0, 5, 1),
                                               ("Q(beta=0.5)@10", 0.5, 10, 1),
                                               ("Q", 1.0, None, 2)])
def test_q_against_reference(seed, name, beta, k, level):
    qrels, run = _random_collection(np.random.default_rng(seed))
    got = per_topic(name, qrels, run, relevance_level=level)[0]
    assert got == pytest.approx(_q_reference(qrels, run, beta, k, level), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("k", [None, 3, 10])
def test_nerr_is_err_over_the_ideal_run_err(seed, k):
    qrels, run = _random_collection(np.random.default_rng(seed))
    # the ideal run: judged documents by level descending (ties in any order: same ERR)
    ideal = {t: {d: float(g) for d, g in judged.items() if g > 0} or {"none": 1.0}
             for t, judged in qrels.items()}
    at = "" if k is None else f"@{k}"
    err = np.array(per_topic(f"ERR{at}", qrels, run)[0])
    best = np.array(per_topic(f"ERR{at}", qrels, ideal)[0])
    expected = np.divide(err, best, out=np.zeros_like(err), where=best > 0)
    assert per_topic(f"nERR{at}", qrels, run)[0] == pytest.approx(list(expected), rel=1e-12,
                                                                   abs=1e-12)


@pytest.mark.parametrize("name,canonical", [("RR@10", "RR@10"), ("MRR@10", "RR@10"),
                                            ("RR(rel=2)@5", "RR(rel=2)@5"), ("RR", "RR"),
                                            ("MRR", "RR"), ("recip_rank", "RR")])
def test_rr_at_k_names(name, canonical):
    assert str(parse_measure(name)) == canonical


@pytest.mark.parametrize("k", [1, 2, 3, 10, 1000])
def test_rr_at_k_counts_only_the_top_k(k):
    """RR@k (MS MARCO's MRR@10): 1/rank of the first relevant document if within k, else 0;
    checked against a loop over the ranking of trec_eval's own test run."""
    from irbench.trec import read_qrels, read_run

    qrels = read_qrels(TE / "qrels.test")
    run = read_run(TE / "results.test")
    ev = irbench.evaluate(qrels, run, [f"RR@{k}", "RR"])
    relevant = {(q, d) for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)
                if r >= 1}
    for t, topic in enumerate(ev.topics):
        rows = [i for i in range(len(run.query_id)) if run.query_id[i].decode() == topic]
        ranked = sorted(rows, key=lambda i: (run.score[i], run.doc_id[i]), reverse=True)
        first = next((rank for rank, i in enumerate(ranked, 1)
                      if (run.query_id[i], run.doc_id[i]) in relevant), None)
        expected = 1 / first if first is not None and first <= k else 0.0
        assert ev[f"RR@{k}"][t] == pytest.approx(expected)
    if k == 1000:
        assert np.array_equal(ev["RR@1000"], ev["RR"])
