"""Reproducibility measures (irbench.stats.repro) against repro_eval 0.5.0, the oracle, on
generated runs (tests/repro_runs.py), and by hand on rankings of 3-5 documents."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from repro_eval.measure import document_order, effectiveness, overall_effects  # test extra
from repro_eval.measure import statistics as re_stats
from repro_eval.util import evaluate_run, load_qrels, load_run
from repro_runs import RUNS, make_runs
from scipy import stats

import irbench
from irbench.errors import StatisticsError
from irbench.ranked import rank_order
from irbench.stats import repro
from irbench.trec import Run

MEASURES = ("P@10", "nDCG@20", "AP", "RR")
CUTOFFS = (1, 5, 10, 100, 1000)
TOL = 1e-10


def _run(ranking: dict[str, list[str]], name: str = "r") -> Run:
    """A run whose scores fall with the rank (one row per document)."""
    q, d, s = [], [], []
    for topic, docs in ranking.items():
        for i, doc in enumerate(docs):
            q.append(topic.encode())
            d.append(doc.encode())
            s.append(float(len(docs) - i))
    return Run(name=name, runid=name, query_id=np.array(q, dtype="S"),
               doc_id=np.array(d, dtype="S"), score=np.array(s),
               line=np.arange(1, len(s) + 1))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repro")
    paths = make_runs(folder)
    runs = {name: irbench.read_run(str(paths[name])) for name in RUNS}
    qrels = irbench.read_qrels(str(paths["qrels"]))
    scores = {name: irbench.evaluate(qrels, runs[name], MEASURES, complete=True)
              for name in RUNS}
    return paths, runs, scores


def _oracle_run(paths, name):
    return load_run(str(paths[name]))  # repro_eval's reader (a str: it drops Paths)


def _oracle_scores(ev) -> dict[str, dict[str, float]]:
    """repro_eval's nested {topic: {measure: score}} of an irbench Evaluation."""
    columns = {str(m): ev[m] for m in MEASURES}
    return {t: {m: float(v[i]) for m, v in columns.items()} for i, t in enumerate(ev.topics)}


# rankings against repro_eval --------------------------------------------------------------

@pytest.mark.timeout(120)
@pytest.mark.parametrize("side", ["baseline", "advanced"])
def test_ktu_and_rbo_equal_repro_eval_at_cutoffs(generated, side):
    paths, runs, _ = generated
    pair = repro.rank_pair(runs[side], runs[f"reproduced_{side}"])
    assert len(pair.topics) == 30 and not pair.in_both[pair.topics.index("t7")]
    for depth in CUTOFFS:
        ktu = repro.ktu(pair, depth)
        want = document_order.KTU(_oracle_run(paths, side),
                                  _oracle_run(paths, f"reproduced_{side}"),
                                  trim_thresh=depth, per_topic=True)
        assert len(want) == 29
        for topic, value in want.items():
            got = ktu.values[ktu.topics.index(topic)]
            assert (np.isnan(value) and np.isnan(got)) or abs(got - value) < TOL, (depth, topic)
        if depth > 1:
            assert abs(ktu.mean - np.mean(list(want.values()))) < TOL
        for p in (0.8, 0.95):
            rbo = repro.rbo(pair, depth, p)
            want = document_order.RBO(_oracle_run(paths, side),
                                      _oracle_run(paths, f"reproduced_{side}"),
                                      p=p, depth=depth, pbar=False, per_topic=True)
            got = np.array([rbo.values[rbo.topics.index(t)] for t in want])
            assert np.max(np.abs(got - np.array(list(want.values())))) < TOL, (depth, p)
            assert abs(rbo.mean - np.mean(list(want.values()))) < TOL
            assert rbo.values[rbo.topics.index("t7")] == 0.0


@pytest.mark.timeout(60)
def test_ktu_and_rbo_of_a_run_with_itself_are_one(generated):
    _, runs, _ = generated
    pair = repro.rank_pair(runs["baseline"], runs["baseline"])
    assert np.allclose(repro.ktu(pair, 1000).values, 1.0)
    assert np.allclose(repro.rbo(pair, 1000, 0.9).values, 1.0)
    assert np.allclose(repro.rbo(pair, 1000, 0.9, variant="extrapolated").values, 1.0)


# per-topic effectiveness and the effect against repro_eval ----------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("side", ["baseline", "advanced"])
def test_rmse_and_nrmse_equal_repro_eval(generated, side):
    _, _, scores = generated
    orig, rep = scores[side], scores[f"reproduced_{side}"]
    want_rmse = effectiveness.RMSE(_oracle_scores(orig), _oracle_scores(rep))
    want_nrmse = effectiveness.nRMSE(_oracle_scores(orig), _oracle_scores(rep))
    for measure in MEASURES:
        got = repro.closeness(orig, rep, measure)
        assert abs(got.rmse - want_rmse[measure]) < TOL
        assert abs(got.nrmse - want_nrmse[measure]) < TOL
        assert got.rmse > 0 and len(got.differences) == 30


@pytest.mark.timeout(60)
def test_effect_ratio_and_delta_ri_equal_repro_eval(generated):
    _, _, scores = generated
    oracle = {name: _oracle_scores(scores[name]) for name in RUNS}
    want_er = overall_effects.ER(orig_score_a=oracle["advanced"], orig_score_b=oracle["baseline"],
                                 rep_score_a=oracle["reproduced_advanced"],
                                 rep_score_b=oracle["reproduced_baseline"])
    want_dri = overall_effects.DRI(orig_score_a=oracle["advanced"],
                                   orig_score_b=oracle["baseline"],
                                   rep_score_a=oracle["reproduced_advanced"],
                                   rep_score_b=oracle["reproduced_baseline"])
    for measure in MEASURES:
        got = repro.effect(*(scores[name] for name in RUNS), measure)
        assert abs(got.effect_ratio - want_er[measure]) < TOL
        assert abs(got.delta_ri - want_dri[measure]) < TOL


@pytest.mark.timeout(60)
@pytest.mark.parametrize("side", ["baseline", "advanced"])
def test_p_values_equal_repro_eval(generated, side):
    _, _, scores = generated
    orig, rep = scores[side], scores[f"reproduced_{side}"]
    for paired in (True, False):
        want = re_stats.ttest(_oracle_scores(orig), _oracle_scores(rep), rpd=paired)
        for measure in MEASURES:
            got = repro.t_test(orig, rep, measure, paired=paired)
            assert got.paired is paired
            assert abs(got.p_value - want[measure]) < TOL


@pytest.mark.timeout(60)
def test_replicated_t_test_takes_other_topics(generated):
    _, _, scores = generated
    orig = scores["baseline"]
    other = irbench.evaluate(
        irbench.read_qrels([("x1", "a", 1), ("x2", "b", 1), ("x3", "c", 0)]),
        _run({"x1": ["a", "z"], "x2": ["z", "b"], "x3": ["c"]}), ["AP"])
    unpaired = repro.t_test(orig, other, "AP", paired=False)
    assert unpaired.p_value == pytest.approx(stats.ttest_ind(orig["AP"], other["AP"]).pvalue,
                                             abs=TOL)
    assert (unpaired.n_original, unpaired.n_reproduced) == (30, 3)
    with pytest.raises(StatisticsError, match="same topics"):
        repro.t_test(orig, other, "AP", paired=True)
    with pytest.raises(StatisticsError, match="same topics"):
        repro.closeness(orig, other, "AP")


@pytest.mark.timeout(60)
def test_identical_scores_give_p_one_and_zero_rmse(generated):
    _, _, scores = generated
    ev = scores["baseline"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = re_stats.ttest(_oracle_scores(ev), _oracle_scores(ev), rpd=True)
    got = repro.t_test(ev, ev, "AP")
    assert got.p_value == want["AP"] == 1.0
    assert repro.closeness(ev, ev, "AP").rmse == 0.0


@pytest.mark.timeout(120)
def test_irbench_scores_are_repro_evals_scores(generated):
    # the per-topic scores the measures above take: irbench's equal repro_eval's own
    # (ir_measures over pytrec_eval), the topic the reproductions miss scored 0 by both
    import ir_measures
    paths, _, scores = generated
    qrels = load_qrels(str(paths["qrels"]))
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    for name in ("baseline", "reproduced_advanced"):
        want = evaluate_run(measures, qrels, load_run(str(paths[name])))
        ev = scores[name]
        assert len(want) == 30
        for topic, values in want.items():
            for m in MEASURES:
                assert abs(ev[m][ev.topics.index(topic)] - values[m]) < TOL, (name, topic, m)


@pytest.mark.timeout(60)
def test_ktu_equals_kendalls_tau_of_union_positions_on_random_rankings():
    # straightforward KTU of repro_eval's definition (scipy's tau of the union positions)
    # on random rankings of unequal lengths, cut at several depths
    rng = np.random.default_rng(7)
    docs = [f"d{i:03d}" for i in range(60)]
    original, reproduced = {}, {}
    for t in range(12):
        original[f"q{t:02d}"] = list(rng.choice(docs, int(rng.integers(2, 40)), replace=False))
        reproduced[f"q{t:02d}"] = list(rng.choice(docs, int(rng.integers(2, 40)), replace=False))
    pair = repro.rank_pair(_run(original), _run(reproduced))
    for depth in (2, 3, 7, 20, 50):
        got = repro.ktu(pair, depth)
        for i, topic in enumerate(got.topics):
            n = min(len(original[topic]), len(reproduced[topic]), depth)
            a, b = original[topic][:n], reproduced[topic][:n]
            union = sorted(set(a) | set(b))
            want = stats.kendalltau([union.index(d) for d in a], [union.index(d) for d in b])
            assert got.values[i] == pytest.approx(want.statistic, abs=1e-12), (depth, topic)


# by hand --------------------------------------------------------------------------------

def test_ktu_by_hand_sorts_the_union_by_docno():
    # original a b c d, reproduction a c e d: union sorted a b c d e
    # positions: original 0 1 2 3, reproduction 0 2 4 3; pairs (i, j): the one discordant
    # pair is ranks 3 and 4 (2 < 3 but 4 > 3): tau = (5 - 1) / 6
    pair = repro.rank_pair(_run({"q": list("abcd")}), _run({"q": list("aced")}))
    assert repro.ktu(pair, 10).values[0] == pytest.approx(4 / 6, abs=1e-15)
    # same documents in the reverse order: every pair discordant
    pair = repro.rank_pair(_run({"q": list("abc")}), _run({"q": list("cba")}))
    assert repro.ktu(pair, 10).values[0] == pytest.approx(-1.0, abs=1e-15)
    # cut at depth 2: a b against c b -> positions (0, 1) and (1, 0) in the union a b c
    assert repro.ktu(pair, 2).values[0] == pytest.approx(-1.0, abs=1e-15)


def test_ktu_by_hand_quirk_depends_on_docno_spelling():
    # the same two rankings with ids spelled so the union sorts differently: repro_eval's KTU
    # changes, where a tau over each document's two ranks would not
    first = repro.rank_pair(_run({"q": list("abc")}), _run({"q": list("abd")}))
    second = repro.rank_pair(_run({"q": list("bca")}), _run({"q": list("bcz")}))
    assert repro.ktu(first, 10).values[0] == pytest.approx(1.0)
    assert repro.ktu(second, 10).values[0] == pytest.approx(-1 / 3)
    with pytest.raises(StatisticsError, match="unknown KTU variant 'paper'"):
        repro.ktu(first, 10, variant="paper")


def test_ktu_breaks_score_ties_by_docno_descending():
    tied = Run(name="t", runid="t", query_id=np.array([b"q"] * 3), doc_id=np.array([b"a", b"c", b"b"]),
               score=np.array([1.0, 1.0, 1.0]), line=np.arange(1, 4))
    # trec_eval's order of the ties: c b a
    pair = repro.rank_pair(tied, _run({"q": list("cba")}))
    assert repro.ktu(pair, 10).values[0] == pytest.approx(1.0)
    assert repro.rbo(pair, 3, 0.5).values[0] == pytest.approx(1.0)


def test_rbo_by_hand():
    # a b c against b a d, p = 0.5, depth 3: A_1 = 0, A_2 = 2/2, A_3 = 2/3
    pair = repro.rank_pair(_run({"q": list("abc")}), _run({"q": list("bad")}))
    overlap = np.array([0.0, 1.0, 2 / 3])
    weights = np.array([1.0, 0.5, 0.25])
    assert repro.rbo(pair, 3, 0.5).values[0] == pytest.approx(overlap @ weights / 1.75)
    assert repro.rbo(pair, 3, 0.5, variant="truncated").values[0] == pytest.approx(
        0.5 * (overlap @ weights))
    assert repro.rbo(pair, 3, 0.5, variant="extrapolated").values[0] == pytest.approx(
        0.5 * (overlap @ weights) + (2 / 3) * 0.125)
    # deeper than the rankings: the overlap's count stays, divided by a growing d
    deep = np.array([0.0, 1.0, 2 / 3, 2 / 4, 2 / 5])
    w5 = 0.5 ** np.arange(5)
    assert repro.rbo(pair, 5, 0.5).values[0] == pytest.approx(deep @ w5 / w5.sum())


@pytest.mark.timeout(30)
def test_rbo_deeper_than_the_rankings_and_huge_depths():
    # repro_eval's loop runs to the depth even past the rankings' ends; its weights vanish
    original, reproduced = list("abcde"), list("bxaey")
    pair = repro.rank_pair(_run({"q": original}), _run({"q": reproduced}))
    for depth, p in ((3, 0.9), (5, 0.5), (40, 0.9), (3000, 0.95), (3000, 0.999)):
        want = document_order._rbo(reproduced, original, p=p, depth=depth)
        assert repro.rbo(pair, depth, p).values[0] == pytest.approx(want, abs=TOL)
    huge = repro.rbo(pair, 10**12, 0.9)  # no matrix as wide as the depth
    assert huge.values[0] == pytest.approx(repro.rbo(pair, 10**5, 0.9).values[0], abs=1e-15)
    assert repro.ktu(pair, 10**12).values[0] == repro.ktu(pair, 5).values[0]


def test_docno_retrieved_twice_counts_at_its_first_rank():
    twice = Run(name="d", runid="d", query_id=np.array([b"q"] * 4),
                doc_id=np.array([b"a", b"b", b"a", b"c"]), score=np.array([4.0, 3, 2, 1]),
                line=np.arange(1, 5))
    pair = repro.rank_pair(twice, _run({"q": list("abc")}))
    assert len(pair.original.keys) == 3
    assert repro.ktu(pair, 10).values[0] == pytest.approx(1.0)


def test_empty_and_missing_topics():
    # topic e: the reproduction has no documents; topic f: the original has none;
    # topic g: one document each (too few ranks for tau)
    pair = repro.rank_pair(_run({"q": list("abc"), "e": list("xy"), "g": ["a"]}),
                           _run({"q": list("abc"), "f": list("xy"), "g": ["a"]}))
    assert pair.topics == ("e", "f", "g", "q")
    assert pair.in_both.tolist() == [False, False, True, True]
    ktu = repro.ktu(pair, 10)
    assert np.isnan(ktu.values[:3]).all() and ktu.values[3] == pytest.approx(1.0)
    assert ktu.mean == pytest.approx(1.0)  # over the topics both runs rank, NaN left out
    rbo = repro.rbo(pair, 3, 0.5)
    assert rbo.values.tolist()[:2] == [0.0, 0.0]
    assert rbo.values[2] == pytest.approx((1 + 0.5 * 0.5 + 0.25 / 3) / 1.75)
    assert rbo.mean == pytest.approx((rbo.values[2] + 1.0) / 2)


def test_a_run_without_rows():
    empty = Run(name="e", runid="e", query_id=np.zeros(0, dtype="S1"),
                doc_id=np.zeros(0, dtype="S1"), score=np.zeros(0), line=np.zeros(0, dtype=int))
    pair = repro.rank_pair(empty, _run({"q": list("ab")}))
    assert pair.topics == ("q",) and not pair.in_both.any()
    assert np.isnan(repro.ktu(pair).values[0]) and repro.rbo(pair).values[0] == 0.0
    assert np.isnan(repro.ktu(pair).mean)
    both_empty = repro.rank_pair(empty, empty)
    assert both_empty.topics == () and len(repro.rbo(both_empty, 10).values) == 0


def test_runs_with_nothing_in_common():
    pair = repro.rank_pair(_run({"q": list("ab")}), _run({"r": list("ab")}))
    assert np.isnan(repro.ktu(pair, 10).mean) and np.isnan(repro.rbo(pair, 10).mean)


def test_bad_parameters_are_named_errors():
    pair = repro.rank_pair(_run({"q": list("ab")}), _run({"q": list("ab")}))
    for depth in (0, -1, 2.5, True):
        with pytest.raises(StatisticsError, match="depth"):
            repro.ktu(pair, depth)
    for p in (0, 1, 1.5):
        with pytest.raises(StatisticsError, match="persistence"):
            repro.rbo(pair, 10, p)
    with pytest.raises(StatisticsError, match="did you mean 'truncated'"):
        repro.rbo(pair, 10, variant="truncate")


def test_effect_by_hand_and_zero_denominators():
    qrels = irbench.read_qrels([("1", "a", 1), ("2", "b", 1)])

    def ev(ranking):
        return irbench.evaluate(qrels, _run(ranking), ["P@1"])
    base, adv = ev({"1": ["z"], "2": ["b"]}), ev({"1": ["a"], "2": ["b"]})  # P@1 0.5 / 1.0
    rep_base, rep_adv = ev({"1": ["z"], "2": ["z"]}), ev({"1": ["a"], "2": ["z"]})  # 0 / 0.5
    got = repro.effect(base, adv, rep_base, rep_adv, "P@1")
    assert got.improvement_original == 0.5 and got.improvement_reproduced == 0.5
    assert got.effect_ratio == 1.0
    assert got.relative_original == 1.0 and got.relative_reproduced == float("inf")
    assert got.delta_ri == float("-inf")
    flat = repro.effect(base, base, rep_base, rep_adv, "P@1")
    assert flat.effect_ratio == float("inf")


def test_nrmse_by_hand():
    qrels = irbench.read_qrels([("1", "a", 1), ("2", "b", 1)])
    orig = irbench.evaluate(qrels, _run({"1": ["a"], "2": ["z"]}), ["P@1"])  # 1, 0
    rep = irbench.evaluate(qrels, _run({"1": ["z"], "2": ["z"]}), ["P@1"])  # 0, 0
    got = repro.closeness(orig, rep, "P@1")
    assert got.rmse == pytest.approx(np.sqrt(0.5))
    assert got.nrmse == pytest.approx(np.sqrt(0.5) / 1.0)  # max(x, 1 - x) is 1 on both
    assert got.differences.tolist() == [1.0, 0.0]


# rankings and keys: the whole-column paths against straightforward Python ---------------

def _reference_pair(original: Run, reproduced: Run):
    """(topics, keys of each run, number of keys) as the definition says: trec_eval's order
    (irbench.ranked.rank_order), a docno's later copies dropped, keys (topic, docno
    descending) numbered over both runs, in Python."""
    topics = sorted({bytes(q) for run in (original, reproduced) for q in run.query_id})
    ranked = []
    for run in (original, reproduced):
        topic = np.searchsorted(np.array(topics, dtype="S"), run.query_id) if topics else \
            np.zeros(0, dtype=np.int64)
        order = rank_order(topic, run.score, lambda rows, run=run: run.doc_id[rows])
        rows = range(len(topic)) if order is None else order
        kept: list[tuple[int, bytes]] = []
        for row in rows:
            item = (int(topic[row]), bytes(run.doc_id[row]))
            if item not in kept:
                kept.append(item)
        ranked.append(kept)
    universe = sorted(set(ranked[0]) | set(ranked[1]), key=lambda x: x[1], reverse=True)
    universe.sort(key=lambda x: x[0])  # stable: docno descending within each topic
    number = {item: i for i, item in enumerate(universe)}
    return ([t.decode() for t in topics], [[number[x] for x in side] for side in ranked],
            len(universe))


def _random_run(rng, topics, vocab, rows: int, decimals: int, layout: str) -> Run:
    q = rng.choice(topics, rows)
    d = rng.choice(vocab, rows)  # a docno may come twice for a topic
    s = np.round(rng.normal(size=rows), decimals)
    if layout != "shuffled":  # each topic one block, scores descending
        order = np.lexsort((-s, q))
        if layout == "blocks moved":
            block = {t: i for i, t in enumerate(rng.permutation(topics))}
            order = order[np.argsort([block[t] for t in q[order]], kind="stable")]
        q, d, s = q[order], d[order], s[order]
    return Run(name="x", runid="x", query_id=q, doc_id=d, score=s, line=np.arange(1, rows + 1))


VOCABULARIES = {
    "short": [f"d{i}" for i in range(40)],
    "shared prefix, one varying word": [f"clueweb-{i:07d}" for i in range(40)],
    "several varying words": [f"clueweb09-en{i % 7:04d}-{i:02d}-{i * 37 % 101:05d}"
                              for i in range(40)],
    "mixed lengths": [("x" * (i % 13)) + f"{i}" for i in range(40)],
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("vocabulary", sorted(VOCABULARIES))
def test_rank_pair_equals_the_definition_on_random_runs(vocabulary):
    # ties (scores to 0 or 1 decimal), docnos listed twice, topics only one run has, rows
    # in score order, in moved topic blocks or shuffled, docno columns of other widths
    rng = np.random.default_rng(sorted(VOCABULARIES).index(vocabulary))
    vocab = np.array(VOCABULARIES[vocabulary], dtype="S")
    for trial in range(12):
        layouts = ("sorted", "blocks moved", "shuffled")
        runs = [_random_run(rng, np.array([b"t1", b"t2", b"t10", side], dtype="S"),
                            vocab[: int(rng.integers(2, 40))], int(rng.integers(0, 120)),
                            trial % 2, layouts[(trial + i) % 3])
                for i, side in enumerate((b"only_o", b"only_r"))]
        pair = repro.rank_pair(*runs)
        topics, keys, num_keys = _reference_pair(*runs)
        assert list(pair.topics) == topics and pair.original.num_keys == num_keys
        for side, want in zip((pair.original, pair.reproduced), keys):
            assert side.keys.tolist() == want, (vocabulary, trial)


@pytest.mark.timeout(60)
def test_rank_pair_with_many_topics_of_their_own_docnos():
    # 400 topics, each with docnos no other topic has: (topic, docno) keys too sparse for a
    # bitmap, numbered by a sort instead
    rng = np.random.default_rng(3)
    q = np.repeat(np.array([f"q{t:03d}" for t in range(400)], dtype="S"), 12)
    d = np.array([f"{t:03d}-{i}" for t in range(400) for i in rng.permutation(12)], dtype="S")
    original = Run(name="o", runid="o", query_id=q, doc_id=d,
                   score=np.tile(np.arange(12.0, 0, -1), 400), line=np.arange(1, len(q) + 1))
    reproduced = Run(name="r", runid="r", query_id=q, doc_id=d,
                     score=np.round(rng.random(len(q)), 1), line=np.arange(1, len(q) + 1))
    pair = repro.rank_pair(original, reproduced)
    topics, keys, num_keys = _reference_pair(original, reproduced)
    assert pair.original.num_keys == num_keys == 4800
    assert pair.original.keys.tolist() == keys[0] and pair.reproduced.keys.tolist() == keys[1]


@pytest.mark.timeout(60)
def test_docnos_sharing_a_hash_are_told_apart(monkeypatch):
    # docnos of several varying words are grouped by a hash, then compared: a hash every
    # docno shares must still give the definition's keys (every docno sorted instead)
    from irbench.stats import repro_rankings
    monkeypatch.setattr(repro_rankings, "doc_hash",
                        lambda doc_id, words=None: np.zeros(len(doc_id), dtype=np.uint64))
    rng = np.random.default_rng(5)
    vocab = np.array(VOCABULARIES["several varying words"], dtype="S")
    runs = [_random_run(rng, np.array([b"a", b"b"]), vocab, 80, 1, "sorted") for _ in "or"]
    pair = repro.rank_pair(*runs)
    _, keys, _ = _reference_pair(*runs)
    assert pair.original.keys.tolist() == keys[0] and pair.reproduced.keys.tolist() == keys[1]


def _discordant_before(order: np.ndarray, n: np.ndarray) -> np.ndarray:
    """repro._discordant before issue 42's speed-up (one pass per bit, np.where), kept as
    the reference the faster one must equal."""
    total = int(n.sum())
    if not total:
        return np.zeros(len(n))
    tpos = np.repeat(np.arange(len(n)), n)
    tstart = np.repeat(np.concatenate(([0], np.cumsum(n)[:-1])), n)
    tlen = np.repeat(n, n)
    pos = np.arange(total)
    found = np.zeros(total, dtype=np.int64)
    vals = order.astype(np.int64)
    for b in range(int(order.max()).bit_length() - 1, -1, -1):
        bit = (vals >> b) & 1
        first_rank = vals - (vals & ((2 << b) - 1))
        start = tstart + first_rank
        ones = np.cumsum(bit) - bit
        ones_in = ones - ones[start]
        zero = bit == 0
        found += np.where(zero, ones_in, 0)
        zeros = np.clip(tlen - first_rank, 0, 1 << b)
        new_pos = np.where(zero, pos - ones_in, start + zeros + ones_in)
        moved = np.empty_like(vals)
        moved[new_pos] = vals
        vals = moved
    return np.bincount(tpos, weights=found, minlength=len(n))


@pytest.mark.timeout(60)
def test_discordant_pairs_equal_the_previous_kernel_and_brute_force():
    rng = np.random.default_rng(11)
    for trial in range(200):
        n = rng.integers(0, 80, int(rng.integers(1, 7)))
        if trial % 5 == 0:
            n = rng.integers(0, 3, len(n))  # topics of 0, 1, 2 ranks
        order = np.concatenate([rng.permutation(int(k)) for k in n] + [np.zeros(0, int)])
        got = repro._discordant(order, n)
        assert np.array_equal(got, _discordant_before(order, n)), trial
        start = np.concatenate(([0], np.cumsum(n)))
        brute = [sum(int(np.sum(order[start[t] + i] > order[start[t] + i + 1:start[t + 1]]))
                     for i in range(int(n[t]))) for t in range(len(n))]
        assert got.tolist() == brute, trial
    big = np.concatenate([rng.permutation(1000) for _ in range(20)] + [rng.permutation(997)])
    n = np.array([1000] * 20 + [997])
    assert np.array_equal(repro._discordant(big, n), _discordant_before(big, n))


@pytest.mark.timeout(120)
def test_ktu_of_1000_document_rankings_equals_kendalls_tau():
    # rankings as deep as repro_eval's default cutoff, with ties and a docno listed twice:
    # the kernel's high passes and its groups of 16 ranks, against scipy
    rng = np.random.default_rng(13)
    vocab = np.array([f"doc-{i:05d}" for i in range(1500)], dtype="S")
    topics = [f"q{t}" for t in range(4)]
    runs = []
    for _ in "or":
        q, d, s = [], [], []
        for t in topics:
            docs = rng.choice(vocab, 1000, replace=False)
            docs[500] = docs[3]  # listed twice: counts at its first rank only
            q += [t.encode()] * 1000
            d += list(docs)
            s += list(np.round(np.sort(rng.random(1000))[::-1], 2))  # ties
        runs.append(Run(name="x", runid="x", query_id=np.array(q, dtype="S"),
                        doc_id=np.array(d, dtype="S"), score=np.array(s),
                        line=np.arange(1, len(s) + 1)))
    pair = repro.rank_pair(*runs)
    _, keys, _ = _reference_pair(*runs)
    for depth in (1000, 999, 500, 17):
        got = repro.ktu(pair, depth)
        for i in range(len(topics)):
            a = keys[0][i * 999:(i + 1) * 999][:depth]
            b = keys[1][i * 999:(i + 1) * 999][:depth]
            # the union by docno: keys descending (a larger key is an earlier docno)
            union = {k: j for j, k in enumerate(sorted(set(a) | set(b), reverse=True))}
            want = stats.kendalltau([union[k] for k in a], [union[k] for k in b]).statistic
            assert got.values[i] == pytest.approx(want, abs=1e-10), (depth, i)
