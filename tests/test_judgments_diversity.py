"""Diversity measures (measures/diversity.py) and diversity qrels (irbench/diversity.py).

The hand-worked example follows ndeval's definitions (version 4.5): binary judgments per
subtopic, subtopics without a relevant document ignored, the ideal ranking built greedily with
ties to the larger docno, alpha-nDCG as alpha-DCG over the ideal's alpha-DCG, ERR-IA over the
ERR of an all-relevant ranking, nERR-IA over the ideal's, P-IA and strec at k. A loop-per-topic
reference written the way ndeval computes checks the columnar kernels on random data.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest

import irbench
from irbench import judgments
from irbench.errors import EvaluationError, FormatError, MeasureParameterError
from irbench.judgments.diversity import (
    PreparedDiversity,
    collapse,
    evaluate_diversity,
    read_diversity_qrels,
)
from irbench.measures import parse_measure
from irbench.measures.diversity import SPELLINGS

# t1: subtopic 1: d1 d2 d6 (d6 graded 2: binary 1), subtopic 2: d2 d4, subtopic 3: d3,
#     subtopic 4: only d5, judged 0 -> ignored. S = 3, intents {1, 2, 3}.
#     Intents per document: d1 {1}, d2 {1, 2}, d3 {3}, d4 {2}, d6 {1}; d5 none.
# t2: judged, nothing relevant: every measure 0.
DQRELS = {
    "t1": {"1": {"d1": 1, "d2": 1, "d6": 2}, "2": {"d2": 1, "d4": 1, "d1": 0},
           "3": {"d3": 1}, "4": {"d5": 0}},
    "t2": {"1": {"e1": 0}},
}
# t1 ranked: d4 d1 d5 d2 u d3 d6 (u unjudged)
#   rank  1   2   3   4    5  6   7
#   intents {2} {1} {} {1,2} {} {3} {1}
#   alpha = 0.5 gains G(i) = sum_j (1/2)^r_j: 1, 1, 0, 1/2 + 1/2, 0, 1, (1/2)^2
DRUN = {
    "t1": {"d4": 7, "d1": 6, "d5": 5, "d2": 4, "u": 3, "d3": 2, "d6": 1},
    "t2": {"e1": 2, "e2": 1},
}
GAINS = [1, 1, 0, 1, 0, 1, 0.25]
# greedy ideal of t1 (alpha = 0.5):
#   1: d2 (2);   2: d3 (1);   3: d1 d4 d6 tie at 1/2 -> d6 (larger docno);
#   4: d4 (1/2); 5: d1 (1/4)
IDEAL = [2, 1, 0.5, 0.5, 0.25]


def div(names, qrels=DQRELS, run=DRUN, **kwargs):
    ev = evaluate_diversity(qrels, run, names, **kwargs)
    return {name: list(ev[name]) for name in names}


def approx(values):
    return pytest.approx(values, rel=1e-12, abs=1e-12)


def dcg(gains, k):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def err_sum(gains, k):
    return sum(g / (i + 1) for i, g in enumerate(gains[:k]))


@pytest.mark.parametrize("name", ["alpha_nDCG@20", "alpha_nDCG(alpha=0.3)@10", "ERR_IA@20",
                                  "nERR_IA(alpha=0.25)@5", "P_IA@10", "P_IA", "S_recall@20",
                                  "S_recall"])
def test_canonical_names_round_trip(name):
    measure = parse_measure(name)
    assert str(measure) == name
    assert [k.name for k in judgments.serving(measure)] == ["diversity"]


def test_hyphenated_spellings_are_declared():
    assert {SPELLINGS[s] for s in ("alpha-nDCG", "ERR-IA", "nERR-IA", "P-IA", "S-recall")} == {
        "alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "S_recall"}


def test_hyphenated_spellings_parse():
    assert parse_measure("alpha-nDCG@10") == parse_measure("alpha_nDCG@10")
    assert parse_measure("nERR-IA(alpha=0.3)@5") == parse_measure("nERR_IA(alpha=0.3)@5")


# ---- the hand-worked example -------------------------------------------------------------


def test_alpha_ndcg():
    # alpha-DCG@5 = 1 + 1/log2(3) + 0 + 1/log2(5) + 0;
    # ideal: 2 + 1/log2(3) + (1/2)/2 + (1/2)/log2(5) + (1/4)/log2(6)
    values = div(["alpha_nDCG@5", "alpha_nDCG@3", "alpha_nDCG@20"])
    assert values["alpha_nDCG@5"] == approx([dcg(GAINS, 5) / dcg(IDEAL, 5), 0.0])
    assert values["alpha_nDCG@5"][0] == approx(
        (1 + 1 / math.log2(3) + 1 / math.log2(5))
        / (2 + 1 / math.log2(3) + 0.25 + 0.5 / math.log2(5) + 0.25 / math.log2(6)))
    assert values["alpha_nDCG@3"] == approx([dcg(GAINS, 3) / dcg(IDEAL, 3), 0.0])
    assert values["alpha_nDCG@20"] == approx([dcg(GAINS, 20) / dcg(IDEAL, 20), 0.0])


def test_alpha_ndcg_alpha():
    # alpha = 0: no redundancy penalty, G(i) = number of intents: 1 1 0 2 0 1 1;
    # the ideal (greedy on counts): d2 (2), then d1 d3 d4 d6 (1 each)
    values = div(["alpha_nDCG(alpha=0)@5"])["alpha_nDCG(alpha=0)@5"]
    assert values == approx([dcg([1, 1, 0, 2, 0], 5) / dcg([2, 1, 1, 1, 1], 5), 0.0])


def test_err_ia():
    # ERR-IA@5 = (1/3) sum_i G(i)/i / sum_i (1/2)^(i-1)/i
    #          = (1/3)(1 + 1/2 + 1/4) / (1 + 1/4 + 1/12 + 1/32 + 1/80)
    values = div(["ERR_IA@5"])["ERR_IA@5"]
    assert values == approx([(1.75 / 3) / (1 + 1 / 4 + 1 / 12 + 1 / 32 + 1 / 80), 0.0])


def test_nerr_ia():
    # nERR-IA@5 = sum_i G(i)/i over the ideal's: 1.75 / (2 + 1/2 + 1/6 + 1/8 + 1/20)
    values = div(["nERR_IA@5", "nERR_IA@2"])
    assert values["nERR_IA@5"] == approx([1.75 / (2 + 1 / 2 + 1 / 6 + 1 / 8 + 1 / 20), 0.0])
    assert values["nERR_IA@2"] == approx([1.5 / 2.5, 0.0])


def test_p_ia():
    # top 5: intent 1: d1 d2, intent 2: d4 d2, intent 3: none -> (1/3)(2/5 + 2/5 + 0)
    # @10, fewer documents than 10: intent 1: d1 d2 d6, 2: d4 d2, 3: d3 -> (1/3)(6/10)
    # no cutoff: over the 7 retrieved
    values = div(["P_IA@5", "P_IA@10", "P_IA"])
    assert values["P_IA@5"] == approx([4 / 15, 0.0])
    assert values["P_IA@10"] == approx([0.2, 0.0])
    assert values["P_IA"] == approx([6 / 21, 0.0])


def test_s_recall():
    # top 1: intent 2; top 5: 1 and 2; top 6: all three
    values = div(["S_recall@1", "S_recall@5", "S_recall@6", "S_recall"])
    assert values["S_recall@1"] == approx([1 / 3, 0.0])
    assert values["S_recall@5"] == approx([2 / 3, 0.0])
    assert values["S_recall@6"] == approx([1.0, 0.0])
    assert values["S_recall"] == approx([1.0, 0.0])


def test_intent_weights():
    # weights 2 : 1 : 1 -> 1/2, 1/4, 1/4
    # ERR-IA@5 numerator: d4 (1/4)/1 + d1 (1/2)/2 + d2 ((1/2)(1/2) + (1/4)(1/2))/4 = 0.59375
    # P-IA@5: (1/2)(2/5) + (1/4)(2/5) = 0.3
    # nERR-IA@5, greedy on weighted gains: d2 .75; d6 .25 (tie d1 d3 d6); d3 .25; d4 .125;
    #   d1 .125 -> .75 + .25/2 + .25/3 + .125/4 + .125/5
    # alpha-nDCG and S-recall take no weights
    weights = {"t1": {"1": 2, "2": 1, "3": 1}}
    names = ["ERR_IA@5", "P_IA@5", "nERR_IA@5", "alpha_nDCG@5", "S_recall@5"]
    values = div(names, intent_weights=weights)
    plain = div(names)
    err_max = 1 + 1 / 4 + 1 / 12 + 1 / 32 + 1 / 80
    assert values["ERR_IA@5"] == approx([0.59375 / err_max, 0.0])
    assert values["P_IA@5"] == approx([0.3, 0.0])
    assert values["nERR_IA@5"] == approx(
        [0.59375 / (0.75 + 0.25 / 2 + 0.25 / 3 + 0.125 / 4 + 0.125 / 5), 0.0])
    assert values["alpha_nDCG@5"] == plain["alpha_nDCG@5"]
    assert values["S_recall@5"] == plain["S_recall@5"]


def test_intent_weights_must_cover_every_intent():
    with pytest.raises(FormatError, match="subtopic '3': no weight"):
        div(["ERR_IA@5"], intent_weights={"t1": {"1": 1, "2": 1}})


def test_ideal_run_scores_one():
    ideal = {"t1": {"d2": 5, "d3": 4, "d6": 3, "d4": 2, "d1": 1}, "t2": {"e1": 1}}
    values = div(["alpha_nDCG@5", "nERR_IA@5", "S_recall@5"], run=ideal)
    for name in values:
        assert values[name] == approx([1.0, 0.0])


def test_ad_hoc_measures_use_the_collapsed_qrels():
    # collapsed t1: d1 1, d2 1, d3 1, d4 1, d6 2, d5 0: top 5 d4 d1 d5 d2 u -> P@5 = 3/5
    values = div(["P@5", "NumRel"])
    assert values["P@5"] == approx([0.6, 0.0])
    assert values["NumRel"] == [5.0, 0.0]
    collapsed = collapse(read_diversity_qrels(DQRELS))
    levels = dict(zip(collapsed.doc_id.tolist(), collapsed.relevance.tolist()))
    assert levels[b"d6"] == 2 and levels[b"d1"] == 1 and levels[b"d5"] == 0


@pytest.mark.parametrize("options", [{}, {"judged_only": True}, {"max_docs": 3},
                                     {"relevance_level": 2}])
def test_ad_hoc_values_match_plain_evaluation(options):
    names = ["AP", "P@5", "nDCG", "NumRet", "Bpref"]
    qrels = collapse(read_diversity_qrels(DQRELS))
    plain = irbench.evaluate(qrels, DRUN, names, **options)
    beside = evaluate_diversity(DQRELS, DRUN, names, **options)
    for name in names:
        assert list(beside[name]) == list(plain[name])


def test_judged_only_drops_the_unjudged_before_diversity():
    # -J drops u (and e2): t1 becomes d4 d1 d5 d2 d3 d6: the top 5 now reaches d3
    values = div(["S_recall@5", "alpha_nDCG@5"], judged_only=True)
    gains = [1, 1, 0, 1, 1]
    assert values["S_recall@5"] == approx([1.0, 0.0])
    assert values["alpha_nDCG@5"] == approx([dcg(gains, 5) / dcg(IDEAL, 5), 0.0])


def test_missing_topic():
    run = {"t1": DRUN["t1"]}
    with pytest.raises(EvaluationError, match="no results"):
        div(["alpha_nDCG@5"], run=run)
    assert div(["alpha_nDCG@5"], run=run, complete=True)["alpha_nDCG@5"][1] == 0.0


def test_prepared_diversity_reused_across_runs():
    prepared = PreparedDiversity(read_diversity_qrels(DQRELS))
    first = evaluate_diversity(prepared, DRUN, ["alpha_nDCG@5"])["alpha_nDCG@5"]
    ideal = {"t1": {"d2": 5, "d3": 4, "d6": 3, "d4": 2, "d1": 1}, "t2": {"e1": 1}}
    second = evaluate_diversity(prepared, ideal, ["alpha_nDCG@5"])["alpha_nDCG@5"]
    again = evaluate_diversity(prepared, DRUN, ["alpha_nDCG@5"])["alpha_nDCG@5"]
    assert list(second) == approx([1.0, 0.0])
    assert list(first) == list(again)


# ---- errors ------------------------------------------------------------------------------


def test_diversity_measure_on_ad_hoc_qrels_says_what_is_needed():
    with pytest.raises(EvaluationError, match="needs diversity qrels"):
        irbench.evaluate({"q": {"a": 1}}, {"q": {"a": 1}}, ["alpha_nDCG@10"])


def test_ad_hoc_qrels_given_as_diversity_qrels(tmp_path):
    path = tmp_path / "adhoc.qrels"
    path.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    with pytest.raises(FormatError, match="looks like an ad hoc qrels"):
        evaluate_diversity(str(path), {"1": {"a": 1}, "2": {"c": 1}}, ["alpha_nDCG@10"])


@pytest.mark.parametrize("name", ["alpha_nDCG", "ERR_IA", "nERR_IA"])
def test_cutoff_required(name):
    with pytest.raises(MeasureParameterError, match="needs a cutoff"):
        div([name])


@pytest.mark.parametrize("name", ["alpha_nDCG(alpha=1.5)@5", "ERR_IA(alpha=0)@5",
                                  "P_IA@0"])
def test_bad_parameters(name):
    with pytest.raises(MeasureParameterError):
        div([name])


# ---- reading -----------------------------------------------------------------------------

TEXT = """\
t1 1 d1 1
t1 1 d2 1
t1 1 d6 2
t1 2 d2 1
t1 2 d4 1
t1 2 d1 0
t1 3 d3 1
t1 4 d5 0
t2 1 e1 0
"""


def test_read_file_fast_path(tmp_path):
    path = tmp_path / "div.qrels"
    path.write_text(TEXT)
    q = read_diversity_qrels(str(path))
    assert q.query_id.tolist()[:2] == [b"t1", b"t1"]
    assert q.subtopic.tolist()[3] == b"2"
    assert q.relevance.tolist()[2] == 2
    assert q.line.tolist() == list(range(1, 10))
    names = ["alpha_nDCG@5", "ERR_IA@5", "P_IA@5"]
    assert div(names, qrels=str(path)) == div(names)


def test_read_gzip_comments_and_blank_lines(tmp_path):
    path = tmp_path / "div.qrels.gz"
    path.write_bytes(gzip.compress(("# diversity\n\n" + TEXT).encode()))
    q = read_diversity_qrels(str(path))
    assert len(q) == 9 and q.line.tolist()[0] == 3
    assert div(["nERR_IA@5"], qrels=str(path)) == div(["nERR_IA@5"])


def test_read_reports_every_bad_line(tmp_path):
    path = tmp_path / "bad.qrels"
    path.write_text("t1 1 d1 1\nt1 1 d2\nt1 2 d3 x\nt1 2 d4 1.5\n")
    with pytest.raises(FormatError) as info:
        read_diversity_qrels(str(path))
    text = str(info.value)
    assert "bad.qrels:2: expected 4 columns" in text
    assert "bad.qrels:3: relevance 'x' is not an integer" in text
    assert "bad.qrels:4: relevance '1.5' is not an integer" in text


def test_read_rejects_a_judgment_given_twice(tmp_path):
    path = tmp_path / "dup.qrels"
    path.write_text("t1 1 d1 1\nt1 2 d1 1\nt1 1 d1 0\n")
    with pytest.raises(FormatError, match=r"dup.qrels:3: duplicate judgment of docno 'd1' for "
                                          r"topic 't1' subtopic '1' \(first at line 1\)"):
        read_diversity_qrels(str(path))


def test_read_rows():
    rows = [("t1", 1, "d1", 1), ("t1", 2, "d1", 0)]
    q = read_diversity_qrels(rows)
    assert q.subtopic.tolist() == [b"1", b"2"]
    with pytest.raises(FormatError, match="not an integer"):
        read_diversity_qrels([("t1", 1, "d1", "1")])


def test_subtopics_sort_numerically():
    # subtopic 10 comes after 9, as ndeval numbers them: the greedy sums in that order and
    # the measures do not depend on it; the intents are 2, 9 and 10
    qrels = {"t": {"10": {"a": 1}, "9": {"b": 1}, "2": {"a": 1}}}
    run = {"t": {"a": 2, "b": 1}}
    values = div(["S_recall@1", "alpha_nDCG@2"], qrels=qrels, run=run)
    assert values["S_recall@1"] == approx([2 / 3])
    assert values["alpha_nDCG@2"] == approx([1.0])


# ---- the columnar kernels against a per-topic reference -----------------------------------


def _reference(qrels, run, k, alpha, weights=None):
    """ndeval's computations, one topic at a time, with lists and loops."""
    out = {}
    for topic in sorted(qrels, key=str.encode):
        judged = {}
        for sub, docs in qrels[topic].items():
            for doc, rel in docs.items():
                judged.setdefault(doc, set())
                if rel > 0:
                    judged[doc].add(int(sub))
        intents = sorted(set().union(*judged.values()))
        s = len(intents)
        w = {j: 1 / s for j in intents} if s else {}
        if weights and topic in weights:
            total = sum(weights[topic][str(j)] for j in intents)
            w = {j: weights[topic][str(j)] / total for j in intents}
        # trec_eval order: score descending, docno descending
        ranking = sorted(run.get(topic, {}).items(), key=lambda x: (x[1], x[0].encode()),
                         reverse=True)
        docs = [d for d, _ in ranking]

        def gains(sequence, weighted):
            seen, out_g = {j: 0 for j in intents}, []
            for d in sequence:
                g = 0.0
                for j in sorted(judged.get(d, ())):
                    g += (w[j] if weighted else 1.0) * (1 - alpha) ** seen[j]
                    seen[j] += 1
                out_g.append(g)
            return out_g

        def greedy(weighted):
            left = [d for d in judged if judged[d]]
            factor = {j: 1.0 for j in intents}
            out_g = []
            while left and len(out_g) < k:
                best, best_doc = -1.0, None
                for d in left:
                    score = sum((w[j] if weighted else 1.0) * factor[j] for j in sorted(judged[d]))
                    if score > best or (score == best and d.encode() > best_doc.encode()):
                        best, best_doc = score, d
                out_g.append(best)
                left.remove(best_doc)
                for j in judged[best_doc]:
                    factor[j] *= 1 - alpha
            return out_g

        run_g, run_w = gains(docs[:k], False), gains(docs[:k], True)
        ideal = dcg(greedy(False), k)
        ideal_err = err_sum(greedy(True), k)
        err_max = sum((1 - alpha) ** i / (i + 1) for i in range(k))
        covered = set().union(*[judged.get(d, set()) for d in docs[:k]]) if docs else set()
        hits = sum(w[j] for d in docs[:k] for j in judged.get(d, ()))
        out[topic] = {
            "alpha_nDCG": dcg(run_g, k) / ideal if ideal else 0.0,
            "ERR_IA": err_sum(run_w, k) / err_max,
            "nERR_IA": err_sum(run_w, k) / ideal_err if ideal_err else 0.0,
            "P_IA": hits / k,
            "S_recall": len(covered) / s if s else 0.0,
        }
    return out


def _random_collection(rng, topics=25):
    qrels, run, weights = {}, {}, {}
    for t in range(topics):
        topic = f"{t + 1}"
        subs = int(rng.integers(1, 6))
        pool = [f"doc{int(x)}" for x in rng.choice(60, size=int(rng.integers(1, 25)),
                                                   replace=False)]
        qrels[topic] = {}
        for sub in range(1, subs + 1):
            judged = rng.random(len(pool)) < 0.6
            qrels[topic][str(sub)] = {
                d: int(rng.choice([0, 0, 1, 2])) for d, j in zip(pool, judged) if j
            }
        qrels[topic] = {s: docs for s, docs in qrels[topic].items() if docs} or {"1": {pool[0]: 0}}
        retrieved = rng.choice(60, size=int(rng.integers(1, 40)), replace=False)
        run[topic] = {f"doc{int(x)}": float(rng.integers(0, 8)) for x in retrieved}  # ties
        weights[topic] = {str(s): float(rng.integers(1, 4)) for s in range(1, subs + 1)}
    return qrels, run, weights


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("k,alpha", [(5, 0.5), (20, 0.5), (10, 0.3)])
def test_against_reference(seed, k, alpha):
    qrels, run, weights = _random_collection(np.random.default_rng(seed))
    for given in (None, weights):
        expected = _reference(qrels, run, k, alpha, given)
        names = {f: f"{f}(alpha={alpha})@{k}" if f in ("alpha_nDCG", "ERR_IA", "nERR_IA")
                 and alpha != 0.5 else f"{f}@{k}"
                 for f in ("alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "S_recall")}
        ev = evaluate_diversity(qrels, run, list(names.values()), intent_weights=given)
        for family, name in names.items():
            got = dict(zip(ev.topics, ev[name]))
            want = {t: v[family] for t, v in expected.items()}
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), name


def test_diversity_hint(tmp_path):
    from irbench.judgments.diversity import diversity_hint

    div_path = tmp_path / "div.qrels"
    div_path.write_text(TEXT)
    with pytest.raises(FormatError, match="duplicate judgment"):
        irbench.read_qrels(str(div_path))
    assert "looks like diversity qrels" in diversity_hint(str(div_path))
    adhoc = tmp_path / "adhoc.qrels"
    adhoc.write_text("1 0 a 1\n1 0 b 0\n")
    assert diversity_hint(str(adhoc)) is None


def test_read_rejects_a_relevance_out_of_range(tmp_path):
    path = tmp_path / "big.qrels"
    path.write_text("t1 1 d1 1\nt1 1 d2 99999999999999999999\n")
    with pytest.raises(FormatError, match="big.qrels:2: relevance 99999999999999999999 is out"):
        read_diversity_qrels(str(path))
    with pytest.raises(FormatError, match="out of the integer range"):
        read_diversity_qrels([("t1", "1", "d1", 2**40)])


def test_qrels_without_any_relevant_document():
    qrels = {"t1": {"1": {"a": 0}, "2": {"b": 0}}}
    names = ["alpha_nDCG@5", "ERR_IA@5", "nERR_IA@5", "P_IA@5", "S_recall@5"]
    values = div(names, qrels=qrels, run={"t1": {"a": 2, "b": 1}})
    assert all(v == [0.0] for v in values.values())
