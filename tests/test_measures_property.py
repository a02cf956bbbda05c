"""Property tests: irbench against pytrec_eval (trec_eval's own C code) on random inputs.

pytrec_eval keeps scores as C floats (float32), so every generated score is k/4 with k in 0..20:
exact in float32 and float64, and distinct values stay distinct, while ties are common. It
evaluates only the topics present in the run, so the run covers every qrels topic (or irbench
runs with ``complete=True`` and only the topics present are compared).

pytrec_eval bundles trec_eval 9.x, which differs from 10.0 in ``iprec_at_recall`` and
``11pt_avg`` (``(long)(x * R + 0.9)`` instead of ``lround(x * R)``). Those two are left out of the
comparison; ``iprec_at_recall`` is checked against :func:`_iprec_reference` instead, a direct
reading of trec_eval 10.0's ``m_iprec_at_recall.c``.

A qrels topic whose judgments are all negative trips a trec_eval bug (a 0-size allocation):
trec_eval 10.0 exits 4 when it is the first topic, and pytrec_eval reports ``num_ret`` 0 for it
or crashes the interpreter (segfault or endless loop) depending on the heap. irbench scores such
a topic like any other, so topics handed to pytrec_eval always hold a judgment >= 0; the
iprec_at_recall property, which does not call pytrec_eval, does generate all-negative topics.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irbench
from irbench.measures import parse_trec_specs

pytrec_eval = pytest.importorskip("pytrec_eval")

SPECS = [
    "map", "P.5,10", "recall.10", "Rprec", "recip_rank", "bpref", "ndcg", "ndcg_cut.5,10",
    "map_cut.10", "num_ret", "num_rel", "num_rel_ret", "infAP", "success.1", "set_P",
    "set_recall", "set_F", "relative_P.5", "Rprec_mult.0.50", "utility", "binG",
    "num_nonrel_judged_ret",
]
LABELLED = parse_trec_specs(SPECS)
MEASURES = [m for _, m in LABELLED]

# recall points: trec_eval's 11 plus points where x * R lands on or near .5 for small R
IPREC_SPEC = ("iprec_at_recall.0,0.05,0.1,0.125,0.2,0.25,0.3,0.375,0.4,0.5,0.6,0.625,0.7,0.75,"
              "0.8,0.9,1")
IPREC = [m for _, m in parse_trec_specs([IPREC_SPEC])]

TOPICS = ["q1", "q2", "10", "2", "01", "t-é"]
DOCS = [f"d{i}" for i in range(14)]  # d9 / d10 / d1: tie-breaking by docno bytes matters
LEVELS = [-2, -1, 0, 0, 1, 2, 3]
TOL = 1e-9
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def collections(draw, allow_missing: bool = False, all_negative: bool = False):
    """(qrels, run, missing topics): dicts in pytrec_eval's shape.

    ``all_negative``: allow qrels topics with only negative judgments (unsafe for pytrec_eval).
    """
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    for topic in topics:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        qrels[topic] = {d: draw(st.sampled_from(LEVELS)) for d in judged}
    if not all_negative:  # see the module docstring
        for judgments in qrels.values():
            if max(judgments.values()) < 0:
                judgments[next(iter(judgments))] = draw(st.sampled_from([0, 1, 2]))
    missing: set[str] = set()
    if allow_missing and len(topics) > 1:
        missing = set(draw(st.lists(st.sampled_from(topics), max_size=len(topics) - 1,
                                    unique=True)))
    run: dict[str, dict[str, float]] = {}
    run_topics = [t for t in topics if t not in missing]
    if draw(st.booleans()):
        run_topics.append("not_in_qrels")
    for topic in run_topics:
        # short (1 doc) to longer than the 10-cutoffs; some docs unjudged
        docs = draw(st.lists(st.sampled_from(DOCS + ["u1", "u2"]), min_size=1, max_size=13,
                             unique=True))
        high = draw(st.sampled_from([3, 20]))  # 0..3 makes ties the rule, 0..20 the exception
        run[topic] = {d: draw(st.integers(0, high)) / 4 for d in docs}
    return qrels, run, missing


def _compare(qrels, run, level, judged_only=False, complete=False):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(SPECS), relevance_level=level,
                                               judged_docs_only_flag=judged_only)
    expected = evaluator.evaluate(run)
    ev = irbench.evaluate(qrels, run, MEASURES, relevance_level=level,
                          judged_only=judged_only, complete=complete)
    assert list(ev.topics) == sorted(qrels, key=lambda t: t.encode())
    compared = 0
    for i, topic in enumerate(ev.topics):
        if topic not in run:
            continue
        got_topic = expected[topic]
        assert set(got_topic) == {label for label, _ in LABELLED}
        for label, measure in LABELLED:
            want, got = got_topic[label], float(ev.values[measure][i])
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (
                f"{label} on topic {topic!r}: irbench {got!r}, pytrec_eval {want!r}"
            )
            compared += 1
    assert compared
    return ev


@SETTINGS
@given(data=collections(), level=st.sampled_from([1, 2]))
def test_matches_pytrec_eval(data, level):
    qrels, run, _ = data
    _compare(qrels, run, level)


@SETTINGS
@given(data=collections(), level=st.sampled_from([1, 2]))
def test_matches_pytrec_eval_judged_only(data, level):
    qrels, run, _ = data
    _compare(qrels, run, level, judged_only=True)


@SETTINGS
@given(data=collections(allow_missing=True), level=st.sampled_from([1, 2]))
def test_complete_keeps_present_topics_and_zeroes_missing(data, level):
    qrels, run, missing = data
    ev = _compare(qrels, run, level, complete=True)
    for i, topic in enumerate(ev.topics):
        if topic in missing:
            num_rel = sum(1 for r in qrels[topic].values() if r >= level)
            assert ev["num_rel"][i] == num_rel
            assert ev["num_rel_ret"][i] == 0
            assert ev["map"][i] == 0.0
            assert ev["P_10"][i] == 0.0


def _ranked(qrels_topic: dict, run_topic: dict, judged_only: bool) -> list[int]:
    """Relevance values of the retrieved docs in trec_eval order (score desc, docno desc)."""
    order = sorted(run_topic.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    levels = [qrels_topic.get(doc, -1) for doc, _ in order]
    if judged_only:
        levels = [lv for lv in levels if lv >= 0]
    return levels


def _lround(x: float) -> int:
    """C lround: nearest integer, halves away from zero (x >= 0 here)."""
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def _iprec_reference(levels: list[int], num_rel: int, level: int, x: float) -> float:
    """trec_eval 10.0 iprec_at_recall for one topic and one recall point ``x``."""
    rel = [lv >= level for lv in levels]
    num_ret, num_rel_ret = len(rel), sum(rel)
    c = _lround(x * num_rel)
    if c > num_rel_ret:
        return 0.0
    if c == 0:
        if num_ret == 0:
            return math.nan  # trec_eval divides 0 by 0
        start = 1
    else:
        rel_ranks = [i + 1 for i, r in enumerate(rel) if r]
        start = rel_ranks[c - 1]
    best, seen = 0.0, 0
    for rank, r in enumerate(rel, 1):
        seen += r
        if rank >= start:
            best = max(best, seen / rank)
    return best


@SETTINGS
@given(data=collections(allow_missing=True, all_negative=True), level=st.sampled_from([1, 2]),
       judged_only=st.booleans())
def test_iprec_at_recall_follows_trec_eval_10(data, level, judged_only):
    qrels, run, missing = data
    ev = irbench.evaluate(qrels, run, IPREC, relevance_level=level, judged_only=judged_only,
                          complete=True)
    for i, topic in enumerate(ev.topics):
        if topic in missing:
            continue
        num_rel = sum(1 for r in qrels[topic].values() if r >= level)
        levels = _ranked(qrels[topic], run[topic], judged_only)
        for measure in IPREC:
            x = measure.get("recall")
            want = _iprec_reference(levels, num_rel, level, x)
            got = float(ev.values[measure][i])
            if math.isnan(want):
                assert math.isnan(got), f"{measure} on {topic!r}: want NaN, got {got}"
            else:
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (
                    f"{measure} on {topic!r}: irbench {got!r}, reference {want!r}"
                )


@pytest.mark.parametrize(
    "levels,num_rel,x,want",
    [
        ([1, 0, 1, 0], 2, 0.25, 1.0),   # lround(0.5) = 1: from the 1st relevant doc
        ([0, 1, 0, 1], 4, 0.1, 0.5),    # lround(0.4) = 0: from rank 1; +0.9 would give c = 1
        ([0, 1, 0, 1], 4, 0.5, 0.5),    # c = 2: from rank 4
        ([0, 1], 4, 0.5, 0.0),          # c = 2 > 1 relevant retrieved
        ([0, 0], 0, 0.0, 0.0),          # nothing relevant anywhere
        ([], 3, 0.0, math.nan),         # nothing retrieved: 0/0 for c = 0
        ([], 3, 0.5, 0.0),
    ],
)
def test_iprec_reference_itself(levels, num_rel, x, want):
    got = _iprec_reference(levels, num_rel, 1, x)
    assert (math.isnan(got) and math.isnan(want)) or got == want
