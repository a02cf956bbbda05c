"""Measures trec_eval lacks (measures/graded.py, measures/extra.py, measures/sets.py).

Every expected value is worked out by hand in the comments from the small collection below.
Names that need a parameter on a family defined elsewhere (``nDCG(gain=exp)``, ``AP(condensed)``,
``P(micro)``, ...) are tested twice: through the kernel now, and by name with an ``xfail`` mark
until ``gain.py``, ``ranking.py`` and ``precision.py`` dispatch to the kernels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irbench
from irbench.errors import MeasureParameterError
from irbench.measures import REGISTRY, parse_measure
from irbench.measures.extra import bpref_ten, condense
from irbench.measures.graded import dcg_general, ndcg_general
from irbench.measures.sets import micro_p, micro_p_total, micro_r, micro_r_total, micro_summary

# q1, ranked by score: a u b c e d
#   rank   1  2  3  4  5  6
#   level  2 -1  0  1 -2  3     (u not in the qrels, e judged -1: unjudged; f relevant, unretrieved)
#   R = 4 (a c d f), relevant retrieved a c d at ranks 1 4 6, judged non-relevant b at rank 3
# q2, ranked: y z x
#   level  0 -1  1              R = 1
QRELS = {
    "q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1, "f": 1},
    "q2": {"x": 1, "y": 0},
}
RUN = {
    "q1": {"a": 6, "u": 5, "b": 4, "c": 3, "e": 2, "d": 1},
    "q2": {"y": 3, "z": 2, "x": 1},
}
LOG2_3 = math.log2(3)
LOG2_5 = math.log2(5)


def per_topic(name, qrels=QRELS, run=RUN, **options):
    ev = irbench.evaluate(irbench.read_qrels(qrels), irbench.read_run(run), [name], **options)
    return list(ev[name]), ev.summary(name)


def ranked(qrels=QRELS, run=RUN, **options):
    prepared = irbench.PreparedQrels(irbench.read_qrels(qrels))
    return irbench.rank_run(irbench.read_run(run), prepared, irbench.EvalOptions(**options))


def approx(values):
    return pytest.approx(values, rel=1e-12, abs=1e-12)


# ---- ERR ---------------------------------------------------------------------------------


def test_err_whole_ranking():
    # q1: gmax = 3, R_i = (2^g - 1)/8: a 3/8, c 1/8, d 7/8, the rest 0
    #   ERR = 3/8 + (5/8)(1/8)/4 + (5/8)(7/8)(7/8)/6 = 3/8 + 5/256 + 245/3072
    # q2: gmax = 1, x: R = 1/2 at rank 3 after two zeros: (1/2)/3
    values, summary = per_topic("ERR")
    q1 = 3 / 8 + 5 / 256 + 245 / 3072
    assert values == approx([q1, 1 / 6])
    assert summary == approx((q1 + 1 / 6) / 2)


def test_err_cutoff():
    # ERR@3: only a; ERR@4 adds c: 3/8 + 5/256
    assert per_topic("ERR@3")[0] == approx([3 / 8, 1 / 6])
    assert per_topic("ERR@4")[0] == approx([3 / 8 + 5 / 256, 1 / 6])
    assert per_topic("ERR@2")[0] == approx([3 / 8, 0.0])


def test_err_max_grade():
    # max_grade = 4: R = (2^g - 1)/16: a 3/16, c 1/16; ERR@4 = 3/16 + (13/16)(1/16)/4
    #   q2: x R = 1/16 at rank 3 -> 1/48
    assert per_topic("ERR(max_grade=4)@4")[0] == approx([3 / 16 + 13 / 1024, 1 / 48])
    # max_grade = 1: levels clip to 1, every relevant R = 1/2:
    #   q1 = 1/2 + (1/2)(1/2)/4 + (1/2)(1/2)(1/2)/6; q2 unchanged (gmax was 1)
    assert per_topic("ERR(max_grade=1)")[0] == approx([1 / 2 + 1 / 16 + 1 / 48, 1 / 6])


def test_err_topic_without_grades_is_zero():
    # q has judged documents of level 0 only: gmax = 0, R = 0 everywhere
    values, _ = per_topic("ERR", {"q": {"a": 0, "b": 0}}, {"q": {"a": 2, "b": 1}})
    assert values == [0.0]


def test_err_rejects_bad_max_grade():
    with pytest.raises(MeasureParameterError):
        per_topic("ERR(max_grade=0)")


# ---- DCG / nDCG with exponential gain or Järvelin's discount (kernels) --------------------


def _trec_setup(r):
    from irbench.measures.gain import gains_for

    return gains_for(r, "")


def test_dcg_exp_kernel():
    # exp gains 2^g - 1: a 3 (rank 1), c 1 (rank 4), d 7 (rank 6); log2(rank + 1) discount
    r = ranked()
    dcg = dcg_general(r, _trec_setup(r), None, "exp", "log2")
    assert list(dcg) == approx([3 / 1 + 1 / LOG2_5 + 7 / math.log2(7), 1 / 2])


def test_ndcg_exp_kernel():
    # nDCG(gain=exp)@4, q1: DCG@4 = 3 + 1/log2(5);
    #   ideal levels 3 2 1 1 -> gains 7 3 1 1: 7 + 3/log2(3) + 1/2 + 1/log2(5)
    # q2: DCG@4 = 1/log2(4) = 1/2, ideal 1/1
    r = ranked()
    value = ndcg_general(r, _trec_setup(r), 4, "exp", "log2")
    expected = (3 + 1 / LOG2_5) / (7 + 3 / LOG2_3 + 1 / 2 + 1 / LOG2_5)
    assert list(value) == approx([expected, 1 / 2])


def test_dcg_jarvelin_kernel():
    # b = 2: no discount at ranks 1 and 2, log2(i) from rank 2 on
    #   q1 DCG = 2/1 + 1/log2(4) + 3/log2(6); ideal 3 2 1 1: 3/1 + 2/1 + 1/log2(3) + 1/log2(4)
    r = ranked()
    setup = _trec_setup(r)
    dcg = dcg_general(r, setup, None, "linear", "jarvelin", 2)
    assert list(dcg) == approx([2 + 1 / 2 + 3 / math.log2(6), 1 / LOG2_3])
    value = ndcg_general(r, setup, None, "linear", "jarvelin", 2)
    assert value[0] == approx((2 + 1 / 2 + 3 / math.log2(6)) / (3 + 2 + 1 / LOG2_3 + 1 / 2))
    # q2: x at rank 3 -> 1/log2(3); ideal x at rank 1 -> 1
    assert value[1] == approx(1 / LOG2_3)


def test_dcg_jarvelin_base_3_kernel():
    # b = 3: no discount at ranks 1 and 2, log3(i) from rank 3 on (log3(3) = 1)
    #   q1 DCG = 2/1 + 1/log3(4) + 3/log3(6); ideal 3 2 1 1 -> 3 + 2 + 1/1 + 1/log3(4)
    r = ranked()
    log3 = lambda x: math.log(x) / math.log(3)  # noqa: E731
    value = ndcg_general(r, _trec_setup(r), None, "linear", "jarvelin", 3)
    expected = (2 + 1 / log3(4) + 3 / log3(6)) / (3 + 2 + 1 + 1 / log3(4))
    assert list(value) == approx([expected, 1.0])  # q2: x at rank 3: 1/log3(3) = 1 = ideal


def test_jarvelin_base_must_be_at_least_2():
    r = ranked()
    with pytest.raises(MeasureParameterError):
        dcg_general(r, _trec_setup(r), None, "linear", "jarvelin", 1)
    with pytest.raises(MeasureParameterError):  # b only means something for jarvelin
        dcg_general(r, _trec_setup(r), None, "linear", "log2", 3)


@pytest.mark.parametrize("name,expected", [
    ("nDCG(gain=exp)@4", [(3 + 1 / LOG2_5) / (7 + 3 / LOG2_3 + 1 / 2 + 1 / LOG2_5), 1 / 2]),
    ("DCG(gain=exp)", [3 + 1 / LOG2_5 + 7 / math.log2(7), 1 / 2]),
    ("DCG(gain=exp)@4", [3 + 1 / LOG2_5, 1 / 2]),
    ("DCG(discount=jarvelin)", [2 + 1 / 2 + 3 / math.log2(6), 1 / LOG2_3]),
    ("nDCG(discount=jarvelin)",
     [(2 + 1 / 2 + 3 / math.log2(6)) / (3 + 2 + 1 / LOG2_3 + 1 / 2), 1 / LOG2_3]),
    ("nDCG(discount=jarvelin,b=3)",
     [(2 + 1 / (math.log(4) / math.log(3)) + 3 / (math.log(6) / math.log(3)))
      / (3 + 2 + 1 + 1 / (math.log(4) / math.log(3))), 1.0]),
])
def test_dcg_variants_by_name(name, expected):
    assert per_topic(name)[0] == approx(expected)


def test_trec_ndcg_unchanged():
    # the default nDCG stays trec_eval's: q1 DCG = 2 + 1/log2(5) + 3/log2(7),
    #   ideal 3 2 1 1: 3 + 2/log2(3) + 1/2 + 1/log2(5)
    expected = (2 + 1 / LOG2_5 + 3 / math.log2(7)) / (3 + 2 / LOG2_3 + 1 / 2 + 1 / LOG2_5)
    assert per_topic("nDCG")[0] == approx([expected, 1 / 2])


# ---- CG, nCG -----------------------------------------------------------------------------


def test_cg_and_ncg():
    # q1 top 4: a 2, u 0, b 0, c 1 -> CG@4 = 3; ideal 3 2 1 1 -> 7; whole ranking CG = 6
    # q2: x (1) at rank 3 -> 1, ideal 1
    assert per_topic("CG@4")[0] == approx([3.0, 1.0])
    assert per_topic("nCG@4")[0] == approx([3 / 7, 1.0])
    assert per_topic("CG")[0] == approx([6.0, 1.0])
    assert per_topic("nCG")[0] == approx([6 / 7, 1.0])
    # nCG@2: q1 a only = 2 over ideal 3 + 2; q2 nothing relevant in the top 2
    assert per_topic("nCG@2")[0] == approx([2 / 5, 0.0])


def test_cg_exp():
    # exp gains: a 3, c 1 in the top 4 -> 4; ideal 7 3 1 1 = 12
    assert per_topic("CG(gain=exp)@4")[0] == approx([4.0, 1.0])
    assert per_topic("nCG(gain=exp)@4")[0] == approx([4 / 12, 1.0])


# ---- judged@k ----------------------------------------------------------------------------


def test_judged_at_k():
    # q1 top 4: a u b c -> a b c judged: 3/4; top 10: a b c d judged (e negative): 4/10
    # q2 top 2: y judged, z not: 1/2; top 10: y x -> 2/10
    assert per_topic("judged@4")[0] == approx([3 / 4, 2 / 4])
    assert per_topic("judged@2")[0] == approx([1 / 2, 1 / 2])
    assert per_topic("judged@10")[0] == approx([4 / 10, 2 / 10])


def test_judged_needs_cutoff():
    with pytest.raises(MeasureParameterError):
        per_topic("judged")


def test_judged_missing_topic_is_zero():
    qrels = dict(QRELS, q3={"g": 1})
    values, _ = per_topic("judged@5", qrels=qrels, complete=True)
    assert values[2] == 0.0


# ---- condensed rankings (Sakai 2007) ------------------------------------------------------

# q1 condensed: a b c d (levels 2 0 1 3) at ranks 1..4; q2 condensed: y x (0 1)


def test_condense_view():
    r = ranked()
    c = condense(r)
    assert list(c.level) == [2, 0, 1, 3, 0, 1]
    assert list(c.offsets) == [0, 4, 6]
    assert list(c.rank) == [1, 2, 3, 4, 1, 2]
    assert condense(c) is c
    assert condense(r) is c  # cached


def test_ap_condensed_kernel():
    from irbench.measures.ranking import _ap

    # q1: relevant at condensed ranks 1 3 4: (1 + 2/3 + 3/4) / R=4 = 29/48
    #     (uncondensed: ranks 1 4 6: (1 + 2/4 + 3/6) / 4 = 1/2)
    # q2: x at condensed rank 2: (1/2) / 1
    r = ranked()
    assert list(_ap(condense(r), parse_measure("AP"))) == approx([29 / 48, 1 / 2])
    assert per_topic("AP")[0] == approx([1 / 2, 1 / 3])


def test_p_condensed_kernel():
    from irbench.measures.precision import _p

    # condensed top 3: q1 a b c -> 2/3 (uncondensed a u b -> 1/3); q2 y x -> 1/3
    r = ranked()
    assert list(_p(condense(r), parse_measure("P@3"))) == approx([2 / 3, 1 / 3])


def test_ndcg_condensed_kernel():
    from irbench.measures.gain import _ndcg

    # q1 condensed top 3: a 2, b 0, c 1: 2/1 + 1/log2(4); ideal 3 2 1: 3 + 2/log2(3) + 1/2
    # q2 condensed: x at rank 2: 1/log2(3), ideal 1
    r = ranked()
    value = _ndcg(condense(r), parse_measure("nDCG@3"))
    assert list(value) == approx([(2 + 1 / 2) / (3 + 2 / LOG2_3 + 1 / 2), 1 / LOG2_3])


def test_bpref_condensed_kernel_equals_bpref():
    from irbench.measures.ranking import _bpref

    # bpref already skips unjudged documents. q1: R = 4, Nn = 1 (b);
    #   a: nothing above -> 1; c, d: b above -> 1 - 1/min(1, 4) = 0; (1 + 0 + 0)/4
    # q2: x below y: 1 - 1/1 = 0
    r = ranked()
    assert list(_bpref(condense(r), parse_measure("Bpref"))) == approx([1 / 4, 0.0])
    assert per_topic("Bpref")[0] == approx([1 / 4, 0.0])


@pytest.mark.parametrize("name,expected", [
    ("AP(condensed)", [29 / 48, 1 / 2]),
    ("P(condensed)@3", [2 / 3, 1 / 3]),
    ("nDCG(condensed)@3", [(2 + 1 / 2) / (3 + 2 / LOG2_3 + 1 / 2), 1 / LOG2_3]),
    ("Bpref(condensed)", [1 / 4, 0.0]),
])
def test_condensed_by_name(name, expected):
    assert per_topic(name)[0] == approx(expected)


# ---- bpref-10 ----------------------------------------------------------------------------


def test_bpref_ten_kernel():
    # q1: R + 10 = 14; a: 0 above -> 1; c, d: b above -> 1 - 1/14; (1 + 2 * 13/14) / 4 = 5/7
    # q2: R + 10 = 11; x: y above -> 1 - 1/11; / 1
    assert list(bpref_ten(ranked(), None)) == approx([5 / 7, 10 / 11])


def test_bpref_ten_caps_at_r_plus_10():
    # R = 1: 12 judged non-relevant above the relevant document, only R + 10 = 11 count
    qrels = {"q": {"r": 1, **{f"n{i:02d}": 0 for i in range(12)}}}
    run = {"q": {**{f"n{i:02d}": 100 - i for i in range(12)}, "r": 1}}
    assert list(bpref_ten(ranked(qrels, run), None)) == [0.0]


def test_bpref_ten_by_name():
    assert per_topic("Bpref(ten)")[0] == approx([5 / 7, 10 / 11])


# ---- IPrec@r -----------------------------------------------------------------------------


def test_iprec():
    # q1: R = 4, relevant at ranks 1 4 6: precision 1, 2/4, 3/6
    #   @0: best anywhere 1; @0.25: c = 1 -> max(1, 1/2, 1/2) = 1; @0.3: c = ceil(1.2) = 2 -> 1/2
    #   @0.5: c = 2 -> 1/2; @0.75: c = 3 -> 1/2; @1: c = 4 > 3 found -> 0
    # q2: R = 1, x at rank 3: 1/3 at every level
    assert per_topic("IPrec@0")[0] == approx([1.0, 1 / 3])
    assert per_topic("IPrec@0.25")[0] == approx([1.0, 1 / 3])
    assert per_topic("IPrec@0.3")[0] == approx([1 / 2, 1 / 3])
    assert per_topic("IPrec@0.5")[0] == approx([1 / 2, 1 / 3])
    assert per_topic("IPrec@0.75")[0] == approx([1 / 2, 1 / 3])
    assert per_topic("IPrec@1")[0] == approx([0.0, 1 / 3])


def test_iprec_threshold_is_robust_to_rounding():
    # R = 10: 0.3 * 10 = 3.0000000000000004 must still ask for 3 relevant documents.
    # ranking r0 r1 r2, six non-relevant, r3: precision 1 at the 3rd relevant, 4/10 at the 4th
    qrels = {"q": {**{f"r{i}": 1 for i in range(10)}, **{f"n{i}": 0 for i in range(6)}}}
    order = ["r0", "r1", "r2"] + [f"n{i}" for i in range(6)] + ["r3"]
    run = {"q": {d: 100 - i for i, d in enumerate(order)}}
    assert per_topic("IPrec@0.3", qrels, run)[0] == approx([1.0])
    assert per_topic("IPrec@0.4", qrels, run)[0] == approx([4 / 10])
    assert per_topic("IPrec@0.7", qrels, run)[0] == approx([0.0])  # only 4 of 7 found


def test_iprec_needs_recall_in_range():
    with pytest.raises(MeasureParameterError):
        per_topic("IPrec")
    with pytest.raises(MeasureParameterError):
        per_topic("IPrec@1.5")


# ---- AUC ---------------------------------------------------------------------------------


def test_auc():
    # q1: relevant a c d, judged non-relevant b (rank 3): (a,b) right, (c,b) (d,b) wrong: 1/3
    # q2: relevant x below non-relevant y: 0/1
    assert per_topic("AUC")[0] == approx([1 / 3, 0.0])


def test_auc_perfect_and_undefined():
    # q: r1 r2 n1 n2 -> 4 of 4 pairs right; q0: relevant only -> no pair -> 0
    qrels = {"q": {"r1": 1, "r2": 2, "n1": 0, "n2": 0}, "q0": {"r": 1}}
    run = {"q": {"r1": 4, "r2": 3, "n1": 2, "n2": 1, "u": 0}, "q0": {"r": 1, "v": 2}}
    # topics in byte order: q, q0
    assert per_topic("AUC", qrels, run)[0] == approx([1.0, 0.0])
    # relevance level 2: only r2 relevant; r1 (level 1) judged non-relevant above it:
    #   r2 vs r1 wrong, r2 vs n1, n2 right: 2/3
    assert per_topic("AUC", qrels, run, relevance_level=2)[0] == approx([2 / 3, 0.0])


# ---- PairRatio ---------------------------------------------------------------------------


def test_pair_ratio():
    # q1 judged in rank order: a2 b0 c1 d3
    #   right (higher above): (a,b) (a,c) = 2; wrong: (a,d) (b,c) (b,d) (c,d) = 4 -> 2/4
    # q2: y0 above x1: right 0, wrong 1 -> 0
    assert per_topic("PairRatio")[0] == approx([1 / 2, 0.0])


def test_pair_ratio_division_by_zero():
    # q: d3 a2 c1 b0, all 6 pairs right, none wrong -> 6 / max(0, 1) = 6
    # q0: two judged documents of one level, no pair with different levels -> 0
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 3}, "q0": {"x": 1, "y": 1}}
    run = {"q": {"d": 4, "a": 3, "u": 2.5, "c": 2, "b": 1}, "q0": {"x": 2, "y": 1}}
    assert per_topic("PairRatio", qrels, run)[0] == approx([6.0, 0.0])


# ---- F, E, micro averages ----------------------------------------------------------------

# sets: q1 a = 3, N = 6, R = 4; q2 a = 1, N = 3, R = 1


def test_f_and_e():
    # F1 = 2a/(N + R): q1 6/10, q2 2/4
    assert per_topic("F")[0] == approx([0.6, 0.5])
    assert per_topic("E")[0] == approx([0.4, 0.5])
    # F_0.5 = 1.25a/(N + 0.25R): q1 3.75/7, q2 1.25/3.25
    assert per_topic("F(beta=0.5)")[0] == approx([3.75 / 7, 1.25 / 3.25])
    assert per_topic("E(beta=0.5)")[0] == approx([1 - 3.75 / 7, 1 - 1.25 / 3.25])
    # F_2 = 5a/(N + 4R): q1 15/22, q2 5/7
    assert per_topic("F(beta=2)")[0] == approx([15 / 22, 5 / 7])


def test_f_zero_when_nothing_relevant_retrieved():
    # nothing relevant retrieved: F = 0, E = 1
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 1}}
    assert per_topic("F", qrels, run)[0] == [0.0]
    assert per_topic("E", qrels, run)[0] == [1.0]


def test_f_micro():
    # per topic as F; summary (1 + 1) * (3 + 1) / ((6 + 3) + (4 + 1)) = 8/14, not the mean 0.55
    values, summary = per_topic("F(micro)")
    assert values == approx([0.6, 0.5])
    assert summary == approx(8 / 14)
    assert per_topic("F")[1] == approx(0.55)
    assert per_topic("E(micro)")[1] == approx(1 - 8 / 14)
    # F_0.5 micro: 1.25 * 4 / (9 + 0.25 * 5)
    assert per_topic("F(micro,beta=0.5)")[1] == approx(5 / 10.25)


def test_micro_p_and_r_kernels():
    # P(micro): per topic a/N = 3/6, 1/3; all topics (3 + 1)/(6 + 3) = 4/9 (mean 5/12)
    # R(micro): per topic a/R = 3/4, 1; all topics 4/5 (mean 7/8)
    r = ranked()
    p, rec = parse_measure("P(micro)"), parse_measure("R(micro)")
    assert list(micro_p(r, p)) == approx([1 / 2, 1 / 3])
    assert micro_p_total(r, p) == approx(4 / 9)
    assert list(micro_r(r, rec)) == approx([3 / 4, 1.0])
    assert micro_r_total(r, rec) == approx(4 / 5)
    # @4: hits q1 2 (a c), q2 1 -> P: sum hits / (T k) = 3/8; R: 3/5
    p4, r4 = parse_measure("P(micro)@4"), parse_measure("R(micro)@4")
    assert list(micro_p(r, p4)) == approx([2 / 4, 1 / 4])
    assert micro_p_total(r, p4) == approx(3 / 8)
    assert list(micro_r(r, r4)) == approx([2 / 4, 1.0])
    assert micro_r_total(r, r4) == approx(3 / 5)
    # the same hook gives the plain mean for the ordinary variant
    hook = micro_summary(micro_p_total)
    assert hook(np.array([0.5, 0.25]), r, parse_measure("P@4")) == approx(0.375)
    assert hook(np.array([0.5, 0.25]), r, p4) == approx(3 / 8)


@pytest.mark.parametrize("name,values,summary", [
    ("P(micro)", [1 / 2, 1 / 3], 4 / 9),
    ("R(micro)", [3 / 4, 1.0], 4 / 5),
    ("P(micro)@4", [2 / 4, 1 / 4], 3 / 8),
    ("R(micro)@4", [2 / 4, 1.0], 3 / 5),
])
def test_micro_by_name(name, values, summary):
    got, got_summary = per_topic(name)
    assert got == approx(values)
    assert got_summary == approx(summary)


def test_micro_with_missing_topic():
    # q3 missing from the run, scored under complete: it retrieved nothing (N = 0), R = 2
    # F(micro) = 2 * 4 / (9 + (4 + 1 + 2)) = 8/16; per topic q3 = 0
    qrels = dict(QRELS, q3={"g": 1, "h": 1})
    values, summary = per_topic("F(micro)", qrels=qrels, complete=True)
    assert values == approx([0.6, 0.5, 0.0])
    assert summary == approx(8 / 16)


# ---- TREC 2002 filtering -----------------------------------------------------------------


def test_t11u_t11su_t11f():
    # T11U = 2a - (N - a): q1 6 - 3 = 3, q2 2 - 2 = 0
    # T11SU: MaxU = 2R; q1 3/8 -> (3/8 + 1/2) / (3/2) = 7/12; q2 0/2 -> (1/2)/(3/2) = 1/3
    # T11F = F_0.5: q1 3.75/7, q2 1.25/3.25
    assert per_topic("T11U")[0] == approx([3.0, 0.0])
    assert per_topic("T11SU")[0] == approx([7 / 12, 1 / 3])
    assert per_topic("T11F")[0] == approx([3.75 / 7, 1.25 / 3.25])


def test_t11su_floor_and_empty():
    # qa: R = 1, five non-relevant retrieved: T11U = -5, -5/2 clipped to -0.5 -> 0
    # qb: R = 0 and something retrieved -> 0
    # qc: missing from the run (complete): nothing retrieved, R = 1 -> T11U 0, T11SU 1/3
    # qd: missing, R = 0: nothing to find, nothing retrieved -> 1
    qrels = {"qa": {"r": 1, **{f"n{i}": 0 for i in range(5)}}, "qb": {"n": 0},
             "qc": {"r": 1}, "qd": {"n": 0}}
    run = {"qa": {f"n{i}": 5 - i for i in range(5)}, "qb": {"n": 1}}
    assert per_topic("T11U", qrels, run, complete=True)[0] == approx([-5.0, -1.0, 0.0, 0.0])
    assert per_topic("T11SU", qrels, run, complete=True)[0] == approx([0.0, 0.0, 1 / 3, 1.0])
    assert per_topic("T11F", qrels, run, complete=True)[0] == approx([0.0, 0.0, 0.0, 0.0])


# ---- vectorised kernels against per-topic references --------------------------------------


def _reference(levels, rel_level=1):
    """Straightforward per-topic loops for ERR, AUC and PairRatio."""
    gmax = max([lv for lv in levels if lv >= 0] + [0])
    err, go_on = 0.0, 1.0
    for i, lv in enumerate(levels, start=1):
        p = (2 ** max(lv, 0) - 1) / 2 ** gmax
        err += go_on * p / i
        go_on *= 1 - p
    judged = [lv for lv in levels if lv >= 0]
    rel = [lv >= rel_level for lv in judged]
    right = sum(1 for i in range(len(judged)) for j in range(i + 1, len(judged))
                if rel[i] and not rel[j])
    a, n = sum(rel), len(rel) - sum(rel)
    auc = right / (a * n) if a and n else 0.0
    hi = sum(1 for i in range(len(judged)) for j in range(i + 1, len(judged))
             if judged[i] > judged[j])
    lo = sum(1 for i in range(len(judged)) for j in range(i + 1, len(judged))
             if judged[i] < judged[j])
    return err, auc, hi / max(lo, 1)


def test_kernels_match_per_topic_loops():
    rng = np.random.default_rng(7)
    qrels, run, expected = {}, {}, []
    for t in range(40):
        n_docs = int(rng.integers(1, 15))
        levels = rng.choice([-2, -1, 0, 0, 1, 2, 3], size=n_docs)
        topic = f"t{t:02d}"
        qrels[topic] = {f"d{i:02d}": int(lv) for i, lv in enumerate(levels) if lv != -1}
        if not qrels[topic]:
            qrels[topic] = {"judged-elsewhere": 0}
        run[topic] = {f"d{i:02d}": float(n_docs - i) for i in range(n_docs)}
        # gmax comes from the qrels, which here hold exactly the retrieved judged documents
        # (plus a level-0 filler), so the reference's max over retrieved levels is the same
        expected.append(_reference([int(x) for x in levels]))
    ev = irbench.evaluate(irbench.read_qrels(qrels), irbench.read_run(run),
                          ["ERR", "AUC", "PairRatio"])
    err, auc, pairs = zip(*expected)
    assert list(ev["ERR"]) == pytest.approx(list(err), rel=1e-9, abs=1e-12)
    assert list(ev["AUC"]) == approx(list(auc))
    assert list(ev["PairRatio"]) == approx(list(pairs))


# ---- names -------------------------------------------------------------------------------

NEW_NAMES = [
    "ERR", "ERR@10", "ERR(max_grade=4)@20", "CG@5", "CG(gain=exp)@5", "nCG", "nCG(gain=exp)@10",
    "judged@10", "IPrec@0", "IPrec@0.5", "IPrec@1", "AUC", "PairRatio", "F", "F(beta=0.5)",
    "E(beta=2)", "F(micro)", "F(micro,beta=0.5)", "E(micro)", "T11U", "T11SU", "T11F",
]

DISPATCH_NAMES = [
    "nDCG(gain=exp)@10", "DCG(gain=exp)@10", "DCG(gain=exp)", "nDCG(discount=jarvelin)@10",
    "nDCG(discount=jarvelin,b=3)@10", "DCG(discount=jarvelin,b=3)", "AP(condensed)",
    "AP(condensed)@10", "nDCG(condensed)@10", "nDCG(condensed,gain=exp)@10", "P(condensed)@10",
    "Bpref(condensed)", "Bpref(ten)", "P(micro)", "P(micro)@10", "R(micro)",
]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_new_names_round_trip(name):
    assert str(parse_measure(name)) == name


@pytest.mark.parametrize("name", DISPATCH_NAMES)
def test_dispatch_names_round_trip(name):
    assert str(parse_measure(name)) == name


@pytest.mark.parametrize("text,canonical", [
    ("F(beta=1)", "F"),                    # the default is dropped
    ("F(beta=0.50)", "F(beta=0.5)"),
    ("F(beta=0.5,micro)", "F(micro,beta=0.5)"),  # positional first
    ("ERR(max_grade=3)", "ERR(max_grade=3)"),
    ("IPrec@0.50", "IPrec@0.5"),
    ("IPrec@1.0", "IPrec@1"),
    ("nCG(gain=linear)@5", "nCG@5"),
])
def test_names_normalise(text, canonical):
    assert str(parse_measure(text)) == canonical


@pytest.mark.parametrize("text", [
    "F(beta=abc)", "F(macro)", "ERR(max_grade=x)", "CG(gain=cubic)@5", "T11U@5", "AUC@10",
    "PairRatio(micro)", "judged@x",
])
def test_invalid_names(text):
    with pytest.raises(MeasureParameterError):
        parse_measure(text)


@pytest.mark.parametrize("family", ["ERR", "CG", "nCG", "PairRatio", "judged", "IPrec", "AUC",
                                    "F", "E", "T11U", "T11SU", "T11F"])
def test_families_carry_formula_and_citation(family):
    definition = REGISTRY[family]
    assert definition.citation
    assert definition.compute.__doc__ and "," in definition.compute.__doc__


# ---- a relevance level per measure -------------------------------------------------------


def test_rel_parameter_sets_the_level_for_one_measure():
    # rel=2: q1 relevant a (2) and d (3), at ranks 1 and 6; q2 has none
    assert per_topic("P(rel=2)@6")[0] == approx([2 / 6, 0.0])
    assert per_topic("AP(rel=2)")[0] == approx([(1 + 2 / 6) / 2, 0.0])
    # the same as -l 2 for the whole evaluation, while AP beside it keeps level 1
    ev = irbench.evaluate(irbench.read_qrels(QRELS), irbench.read_run(RUN), ["AP", "AP(rel=2)"])
    assert list(ev["AP(rel=2)"]) == approx(per_topic("AP", relevance_level=2)[0])
    assert list(ev["AP"]) == approx(per_topic("AP")[0])
    assert str(parse_measure("P(rel=2)@10")) == "P(rel=2)@10"
    assert str(parse_measure("nDCG(condensed,gain=exp)@10")) == "nDCG(condensed,gain=exp)@10"
