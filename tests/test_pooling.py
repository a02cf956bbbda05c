"""Pooling: table, strategies, provenance, interactive state, oracle simulation, bias, stats,
assessor files. Runs on small campaigns from irbench.simulate (whose qrels are exactly a
depth-k pool of known runs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from irbench import evaluate, read_qrels, read_run
from irbench.errors import FormatError, IrbenchError
from irbench.pooling import (
    STRATEGIES,
    JudgmentError,
    Oracle,
    PoolingError,
    PoolingState,
    UnknownStrategyError,
    build_pool,
    build_table,
    contributing_runs,
    describe,
    leave_one_out,
    pool_stats,
    read_assessor_file,
    simulate_budgets,
    write_assessor_files,
)
from irbench.pooling.kernels import TableScorer, judged_from_qrels
from irbench.simulate import CampaignSpec, simulate
from irbench.trec import Qrels

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "runs" / "demo"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    spec = CampaignSpec(groups=5, runs_per_group=3, topics=12, depth=60, pool_depth=15,
                        pooled_runs=2, seed=11)
    result = simulate(spec, tmp_path_factory.mktemp("campaign"))
    runs = [(r.name, r.group, r.path) for r in result.runs]
    table = build_table(runs)
    pooled = [r.name for r in result.runs if r.pooled]
    return result, table, read_qrels(result.qrels_path), pooled


def _pairs(query_id, doc_id):
    return set(zip(query_id.tolist(), doc_id.tolist()))


# ---- table --------------------------------------------------------------------------------

def test_table_ranks_in_trec_eval_order(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("1 Q0 d1 1 2.0 x\n1 Q0 d9 2 2.0 x\n1 Q0 d10 3 3.0 x\n2 Q0 d1 1 1 x\n")
    table = build_table([("r", "g", path)])
    docs = table.docs[table.doc]
    assert docs.tolist() == [b"d10", b"d9", b"d1", b"d1"]  # score desc, then docno desc
    assert table.rank.tolist() == [1, 2, 3, 1]


def test_table_errors(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        build_table([("r", "g", tmp_path / "missing.txt")])
    dup = tmp_path / "dup.txt"
    dup.write_text("1 Q0 d1 1 2.0 x\n1 Q0 d1 2 1.0 x\n")
    with pytest.raises(FormatError, match="retrieved twice"):
        build_table([("r", "g", dup)])
    assert len(build_table([("r", "g", dup)], duplicates="first").doc) == 1
    with pytest.raises(IrbenchError, match="unique"):
        build_table([("r", "g", dup), ("r", "g", dup)], duplicates="first")
    with pytest.raises(IrbenchError, match="no runs"):
        build_table([])


def test_contributing_per_group(campaign):
    _, table, _, pooled = campaign
    mask = contributing_runs(table, per_group=2)
    assert [table.runs[i] for i in np.flatnonzero(mask)] == pooled
    with pytest.raises(IrbenchError, match="unknown run"):
        contributing_runs(table, ["nope"])


# ---- depth-k reproduces the official pool ----------------------------------------------

def test_depth_k_reproduces_official_judged_set(campaign):
    result, table, qrels, pooled = campaign
    pool = build_pool(table, "depth", k=result.spec.pool_depth, contributing=pooled)
    assert _pairs(pool.query_id, pool.doc_id) == _pairs(qrels.query_id, qrels.doc_id)
    assert len(pool) == result.pool_size
    # per_group picks the same runs (each group's priority runs)
    again = build_pool(table, "depth", k=result.spec.pool_depth, per_group=2)
    assert np.array_equal(again.candidate, pool.candidate)


def test_depth_k_on_the_demo_campaign():
    camp = json.loads((DEMO / "campaign.json").read_text())
    table = build_table([(r["name"], r["group"], DEMO / r["path"]) for r in camp["runs"]])
    pooled = [r["name"] for r in camp["runs"] if r["pooled"]]
    pool = build_pool(table, "depth", k=camp["spec"]["pool_depth"], contributing=pooled)
    qrels = read_qrels(DEMO / "qrels.txt")
    assert _pairs(pool.query_id, pool.doc_id) == _pairs(qrels.query_id, qrels.doc_id)


def test_provenance(campaign):
    result, table, _, pooled = campaign
    k = result.spec.pool_depth
    pool = build_pool(table, "depth", k=k, contributing=pooled)
    p = pool.provenance
    assert p.rank.max() <= k and set(np.unique(p.run)) == set(table.run_index(pooled))
    assert np.all(pool.covered[pool.contributing] == k) and np.all(pool.covered[~pool.contributing] == 0)
    # every (contributing run, rank <= k) retrieval of the raw files is in the provenance
    name = pooled[0]
    run = read_run(result.runs[0].path)
    top = {}
    for q, d in zip(run.query_id.tolist(), run.doc_id.tolist()):
        top.setdefault(q, []).append(d)
    expected = {(q, d, i + 1) for q, docs in top.items() for i, d in enumerate(docs[:k])}
    mine = p.run == table.run_index([name])[0]
    got = {(pool.query_id[d], pool.doc_id[d], int(r)) for d, r in zip(p.doc[mine], p.rank[mine])}
    assert got == expected
    assert np.all(p.runs_per_doc(len(pool)) >= 1)


# ---- strategies and budgets ------------------------------------------------------------

def test_registry_and_describe():
    for name in ("depth", "budgeted", "mtf", "mtf-global", "mm", "mm-ns", "thompson", "rrf",
                 "rbp", "uniform", "stratified"):
        assert name in STRATEGIES
        assert STRATEGIES[name].reference
    assert "Cormack" in describe("mtf")
    with pytest.raises(UnknownStrategyError, match="did you mean mtf"):
        build_pool(None, "mft")


@pytest.mark.parametrize("kwargs, message", [
    ({"budget": 0}, "budget must be"),
    ({"total": 0}, "total budget must be"),
    ({"k": 0}, "k must be >= 1"),
    ({"depth_k": 3}, "unknown parameter"),
    ({"seed": -1}, "seed"),
])
def test_bad_parameters(campaign, kwargs, message):
    _, table, _, _ = campaign
    with pytest.raises(PoolingError, match=message):
        build_pool(table, "depth", **kwargs)


def test_adaptive_needs_judgments(campaign):
    _, table, _, _ = campaign
    with pytest.raises(PoolingError, match="adaptive"):
        build_pool(table, "mtf", budget=5)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_respects_budgets(campaign, strategy):
    _, table, qrels, pooled = campaign
    spec = STRATEGIES[strategy]
    kw = {"oracle": qrels} if spec.adaptive else {}
    pool = build_pool(table, strategy, contributing=pooled, budget=7, seed=3, **kw)
    assert np.all(pool.to_judge() <= 7) and pool.to_judge().sum() > 0
    pool = build_pool(table, strategy, contributing=pooled, total=40, seed=3, **kw)
    assert pool.sampled.sum() == 40
    # the judging order is a permutation per topic
    for t in range(len(pool.topics)):
        order = pool.order[(pool.topic == t) & pool.sampled]
        assert sorted(order.tolist()) == list(range(len(order)))
    # seeded: the same call gives the same pool
    again = build_pool(table, strategy, contributing=pooled, total=40, seed=3, **kw)
    assert np.array_equal(again.candidate[again.sampled], pool.candidate[pool.sampled])


def test_budgeted_is_depth_order(campaign):
    _, table, _, pooled = campaign
    deep = build_pool(table, "depth", k=3, contributing=pooled)
    sizes = deep.size()
    budgeted = build_pool(table, "budgeted", contributing=pooled, budget=sizes.min())
    assert set(budgeted.candidate) <= set(deep.candidate)


def test_fusion_orders(campaign):
    _, table, _, pooled = campaign
    rrf = build_pool(table, "rrf", contributing=pooled, budget=1)
    # brute force on topic 0: the document with the highest sum of 1 / (60 + rank)
    mine = np.isin(table.run, table.run_index(pooled)) & (table.topic == 0)
    scores = {}
    for doc, rank in zip(table.doc[mine].tolist(), table.rank[mine].tolist()):
        scores[doc] = scores.get(doc, 0.0) + 1.0 / (60 + rank)
    best = max(scores, key=lambda d: (scores[d], -d))
    assert rrf.doc_id[rrf.topic == 0].tolist() == [table.docs[best]]
    rbp = build_pool(table, "rbp", contributing=pooled, budget=5, aggregate="max")
    assert len(rbp) == 5 * len(table.topics)


def test_sampling_inclusion_and_minus_one(campaign):
    _, table, qrels, pooled = campaign
    pool = build_pool(table, "uniform", k=10, rate=0.3, contributing=pooled, seed=5)
    sizes, sampled = pool.size(), pool.to_judge()
    expected = np.maximum(np.rint(0.3 * sizes), 1)
    assert np.array_equal(sampled, expected)
    assert np.allclose(pool.inclusion, (sampled / sizes)[pool.topic])
    judged = Oracle(table, qrels)
    judgments = Qrels("j", pool.query_id[pool.sampled], pool.doc_id[pool.sampled],
                      judged.relevance[pool.candidate[pool.sampled]],
                      np.arange(int(pool.sampled.sum())))
    out = pool.qrels(judgments)
    assert (out.relevance == -1).sum() == (~pool.sampled).sum()
    ev = evaluate(out, table.sources[0], ["infAP"], complete=True)  # trec_eval reads -1
    assert 0 <= ev.summary("infAP") <= 1
    strat = build_pool(table, "stratified", strata=((5, 1.0), (15, 0.2)), contributing=pooled,
                       seed=5)
    top = strat.stratum == 0
    assert np.all(strat.sampled[top]) and np.allclose(strat.inclusion[top], 1.0)
    assert np.all(strat.inclusion[strat.stratum == 1] < 0.5)
    with pytest.raises(PoolingError, match="increasing"):
        build_pool(table, "stratified", strata=((10, 1.0), (5, 0.5)))


# ---- interactive loop ----------------------------------------------------------------------

def test_interactive_loop_matches_oracle(campaign):
    _, table, qrels, pooled = campaign
    oracle = Oracle(table, qrels)
    simulated = build_pool(table, "mtf", contributing=pooled, budget=10, oracle=qrels, seed=2)
    state = PoolingState(table, "mtf", contributing=pooled, budget=10, seed=2)
    while not state.done:
        batch = state.next_batch()          # one document per topic: the oracle's steps
        saved = state.to_dict()             # resumable from plain values at any point
        state = PoolingState.from_dict(saved, table)
        rel = oracle.relevance[batch.candidate]
        state.record(list(zip(batch.query_id.tolist(), batch.doc_id.tolist(), rel.tolist())))
    pool = state.pool()
    assert np.array_equal(pool.candidate, simulated.candidate)
    assert np.array_equal(pool.order, simulated.order)
    assert len(state.judgments()) == pool.sampled.sum()


def test_record_rejects_bad_judgments_and_keeps_good_ones(campaign):
    _, table, qrels, pooled = campaign
    state = PoolingState(table, "mm-ns", contributing=pooled, budget=20, seed=0)
    batch = state.next_batch(30)
    assert len(batch) == 30 and state.pending_total == 30
    (q0, d0), (q1, d1) = batch.pairs()[:2]
    assert state.record([(q0, d0, 1)]) == 1
    bad = [(q1, d1, 2), (q0, "NOT-A-DOC", 1), ("999", d1, 0), (q1, d1 + "x", 1)]
    with pytest.raises(JudgmentError) as info:
        state.record(bad)
    text = str(info.value)
    assert "not in the pool" in text and "not in the campaign" in text
    assert state.judged_total == 1 and state.pending_total == 29   # nothing recorded
    with pytest.raises(JudgmentError, match="already judged 1, not 0"):
        state.record([(q0, d0, 0)])
    with pytest.raises(JudgmentError, match="negative"):
        state.record([(q1, d1, -1)])
    with pytest.raises(FormatError, match="not an integer"):
        state.record([(q1, d1, "yes")])
    assert state.record([(q0, d0, 1), (q1, d1, 0)]) == 1           # repeats are harmless
    assert state.judged_total == 2
    with pytest.raises(PoolingError, match="n >= 1"):
        state.next_batch(0)


def test_state_rejects_other_tables(campaign, tmp_path):
    _, table, _, pooled = campaign
    state = PoolingState(table, "thompson", contributing=pooled, budget=5)
    other = build_table([(table.runs[0], "g", table.sources[0])])
    with pytest.raises(PoolingError, match="other runs"):
        PoolingState.from_dict(state.to_dict(), other)


# ---- assessor files ------------------------------------------------------------------------

def test_assessor_files_round_trip(campaign, tmp_path):
    _, table, qrels, pooled = campaign
    depth = build_pool(table, "depth", k=5, contributing=pooled)
    paths = write_assessor_files(depth, tmp_path / "depth")
    first = paths[0].read_text().splitlines()
    docs = [line.split()[2] for line in first]
    assert docs == sorted(docs) and all(line.endswith(" -1") for line in first)  # docno order
    state = PoolingState(table, "mtf", contributing=pooled, budget=6)
    state.next_batch()
    state.next_batch()
    pool = state.pool()
    paths = write_assessor_files(pool, tmp_path / "mtf")
    csv_path = next(p for p in paths if p.suffix == ".csv")
    rows = csv_path.read_text().splitlines()
    assert rows[0] == "query_id,doc_id,relevance,position"
    qid = rows[1].split(",")[0]
    mine = pool.topic == np.searchsorted(pool.topics, qid.encode())
    expected = pool.doc_id[mine][np.argsort(pool.order[mine])]
    assert [r.split(",")[1].encode() for r in rows[1:]] == expected.tolist()  # judging order
    filled = rows[0] + "\n" + "\n".join(r.replace(",,", ",1,") for r in rows[1:]) + "\n"
    csv_path.write_text(filled)
    judgments = read_assessor_file(csv_path, pool)
    assert len(judgments) == len(rows) - 1
    assert state.record(judgments) == len(judgments)


def test_assessor_file_errors(campaign, tmp_path):
    _, table, _, pooled = campaign
    pool = build_pool(table, "depth", k=2, contributing=pooled)
    q, d = pool.query_id[0].decode(), pool.doc_id[0].decode()
    path = tmp_path / "bad.qrels"
    path.write_text(f"{q} 0 {d} 1\n{q} 0 NOT-POOLED 1\n{q} 0 {d}\n{q} 0 {pool.doc_id[1].decode()} "
                    f"maybe\n{q} 0 {d} 1\n")
    with pytest.raises(JudgmentError) as info:
        read_assessor_file(path, pool)
    text = str(info.value)
    for line, reason in ((2, "not in the pool"), (3, "expected 4 columns"),
                         (4, "not a level"), (5, "judged twice")):
        assert f"bad.qrels:{line}: " in text and reason in text


# ---- statistics, bias, simulation ------------------------------------------------------

def test_pool_stats(campaign):
    result, table, qrels, pooled = campaign
    pool = build_pool(table, "depth", k=result.spec.pool_depth, contributing=pooled)
    stats = pool_stats(table, pool, qrels, ks=(10, 15))
    assert stats.total == len(qrels)
    contributing = table.run_index(pooled)
    assert np.all(stats.run_contributed[contributing] > 0)
    assert stats.run_contributed.sum() == len(pool.provenance)
    assert np.all(stats.run_unique <= stats.run_contributed)
    assert np.array_equal(np.diag(stats.overlap), stats.run_contributed)
    # pooled runs are fully judged to the pool depth, unpooled ones are not
    assert np.allclose(stats.judged_at[15][contributing], 1.0)
    unpooled = np.setdiff1d(np.arange(table.num_runs), contributing)
    assert np.all(stats.judged_at[15][unpooled] < 1.0)
    share = stats.relevant / stats.judged
    assert np.allclose(stats.relevant_share, share)
    assert np.array_equal(stats.flagged, share > 0.5)


def test_kernels_match_evaluate(campaign):
    _, table, qrels, _ = campaign
    measures = TableScorer.check(["AP", "P@10", "nDCG@10", "RR"])
    scorer = TableScorer(table, np.unique(qrels.query_id))
    means = scorer.means(judged_from_qrels(table, qrels), measures)
    for r, run in enumerate(table.sources):
        ev = evaluate(qrels, run, measures, complete=True)
        assert np.allclose([ev.summary(m) for m in measures], means[:, r])
    with pytest.raises(PoolingError, match="no pooling kernel"):
        TableScorer.check(["GMAP"])


def test_leave_one_out(campaign):
    result, table, qrels, pooled = campaign
    pool = build_pool(table, "depth", k=result.spec.pool_depth, contributing=pooled)
    loo = leave_one_out(table, qrels, pool, by="group", measures=["AP"])
    assert loo.removed.max() > 0 and loo.change.mean() < 0   # unpooled, a group loses
    stats = pool_stats(table, pool, qrels)
    for g in range(len(table.groups)):
        members = table.run_group == g
        assert np.all(loo.removed[members] == stats.group_unique[g])
    summary = loo.summary("AP", top=3)
    assert summary["max_drop"] == pytest.approx(-loo.change.min())
    assert len(summary["most_affected"]) == 3
    by_run = leave_one_out(table, qrels, pool, by="run", measures=["AP", "P@10"])
    unpooled = ~pool.contributing
    assert np.all(by_run.change[:, unpooled] == 0)


def test_simulation(campaign):
    result, table, qrels, pooled = campaign
    kwargs = dict(strategies=("budgeted", "mtf", "mtf-global", "mm-ns", "thompson"),
                  fractions=(0.1, 0.3, 1.0), contributing=pooled, measures=("AP", "P@10"),
                  max_depth=result.spec.pool_depth, seed=4)
    sim = simulate_budgets(table, qrels, **kwargs)
    relevant = int((qrels.relevance >= 1).sum())
    assert sim.found.shape == (5, 3, len(table.topics))
    assert np.all(sim.found[:, -1].sum(axis=1) == relevant)    # 100% finds everything
    assert np.allclose(sim.tau[:, -1], 1.0)                     # and ranks as the full qrels
    assert np.all(np.diff(sim.found.sum(axis=2), axis=1) >= 0)
    spent = sim.spent.sum(axis=2)
    assert np.all(spent == spent[0])                            # equal budgets
    again = simulate_budgets(table, qrels, **kwargs)
    assert np.array_equal(again.found, sim.found) and np.array_equal(again.tau, sim.tau)
    # adaptive strategies find more relevant documents at small budgets than depth
    small = sim.found[:, 0].sum(axis=1)
    assert small[1:4].min() > small[0]   # mtf, mtf-global, mm-ns (thompson explores more)
    assert sim.rows()[0]["strategy"] == "budgeted"


def test_long_pooling_work_reports_its_progress():
    """pool simulate and pool bias tell a progress callback of each strategy / unit."""
    from irbench import pooling

    runs = [(f"r{i}", f"g{i % 2}", read_run(
        [(f"t{t}", f"d{(i + k) % 30}", float(30 - k)) for t in range(3) for k in range(20)],
        name=f"r{i}")) for i in range(4)]
    table = pooling.build_table(runs)
    qrels = read_qrels([(f"t{t}", f"d{d}", int(d % 3 == 0)) for t in range(3)
                                for d in range(30)])
    heard = []
    pooling.simulate_budgets(table, qrels, strategies=("budgeted", "mtf"),
                             fractions=(0.5, 1.0),
                             progress=lambda *a: heard.append(a))
    assert heard == [(1, 2, "simulating budgeted"), (2, 2, "simulating mtf")]
    heard.clear()
    pool = pooling.build_pool(table, "depth", k=10)
    pooling.leave_one_out(table, qrels, pool, by="group", progress=lambda *a: heard.append(a))
    assert [h[:2] for h in heard] == [(1, 2), (2, 2)]
    assert {h[2] for h in heard} == {"leaving out g0", "leaving out g1"}
