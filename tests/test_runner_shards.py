"""One huge run evaluated in topic shards: the same per-topic values and summaries as one
evaluation, bit for bit, with the file's own line numbers in its problems."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import irbench
from irbench.errors import FormatError, IrbenchError
from irbench.measures import parse_measure
from irbench.measures.names import parse_trec_specs
from irbench.ranked import EvalOptions
from irbench.runner.shards import evaluate_sharded, topic_shards

MEASURES = ["AP", "GMAP", "Bpref", "infAP", "Rprec", "RR", "P@10", "nDCG", "nDCG@10",
            "R@100", "judged@10", "ERR@20", "num_ret", "num_rel_ret"] + \
    [str(m) for _, m in parse_trec_specs(["iprec_at_recall"])]


def _campaign(tmp_path, topics=600, depth=40, seed=3):
    """A run of ``topics`` topics in shuffled line order, and qrels judging most of them
    (some qrels topics unanswered, some answered topics unjudged)."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(topics)]
    lines = [f"{t} Q0 d{t}-{rng.integers(0, 3 * depth)}x{j} {j} {rng.normal():.6f} tag"
             for t in ids[: topics - 20] for j in range(depth)]
    order = rng.permutation(len(lines))
    run = tmp_path / "run.txt"
    run.write_text("".join(lines[i] + "\n" for i in order))
    qrels = tmp_path / "qrels.txt"
    judged = {f"{t} 0 d{t}-{d}x{j}": rng.integers(0, 3) for t in ids[10:]
              for j in range(3) for d in rng.integers(0, 3 * depth, 4)}
    qrels.write_text("".join(f"{k} {v}\n" for k, v in judged.items()))
    return run, qrels


@pytest.mark.parametrize("intersection", [False, True])
def test_sharded_equals_one_evaluation(tmp_path, intersection):
    run, qrels_path = _campaign(tmp_path)
    qrels = irbench.read_qrels(qrels_path)
    measures = [parse_measure(m) for m in MEASURES]
    options = EvalOptions(complete=True)  # as the runner scores; intersection restricts
    whole = irbench.evaluate(irbench.PreparedQrels(qrels), irbench.read_run(run), measures,
                             options)
    for shards in (1, 7):
        got = evaluate_sharded(qrels, str(run), measures, options, shards=shards,
                               intersection=intersection)
        if intersection:
            keep = np.isin(whole.topics, got.topics)
            assert keep.sum() == len(got.topics) < len(whole.topics)
        else:
            keep = np.ones(len(whole.topics), bool)
        assert [irbench.trec.display(t) for t in got.topics] == list(np.asarray(whole.topics)[keep])
        for m in measures:
            np.testing.assert_array_equal(got.values[m], whole[str(m)][keep])
            if not intersection:
                assert got.summaries[m] == whole.summary(str(m)), m
        assert got.num_docs == len(irbench.read_run(run)) and got.runid == "tag"
        assert got.shards == shards


def test_gzip_runs_and_line_numbers_of_problems(tmp_path):
    run, qrels_path = _campaign(tmp_path, topics=200, depth=10)
    lines = run.read_bytes().splitlines(keepends=True)
    lines[777] = b"q5 Q0 broken 1 not-a-number tag\n"
    lines[1500] = b"q6 Q0 short\n"
    run.write_bytes(b"".join(lines))
    with pytest.raises(FormatError) as whole:
        irbench.read_run(run)
    with pytest.raises(FormatError) as sharded:
        evaluate_sharded(irbench.read_qrels(qrels_path), str(run), [parse_measure("AP")],
                         shards=5)
    assert sharded.value.problems == whole.value.problems
    assert any(":778:" in p for p in sharded.value.problems)
    good, _ = _campaign(tmp_path / "g" if (tmp_path / "g").mkdir() is None else tmp_path,
                        topics=100, depth=10)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(good.read_bytes()))
    qrels = irbench.read_qrels(tmp_path / "g" / "qrels.txt")
    options = EvalOptions(complete=True)
    a = evaluate_sharded(qrels, str(packed), [parse_measure("AP")], options, shards=3)
    b = evaluate_sharded(qrels, str(good), [parse_measure("AP")], options, shards=3)
    np.testing.assert_array_equal(a.values[parse_measure("AP")], b.values[parse_measure("AP")])


def test_shards_do_not_depend_on_the_id_arrays_width():
    ids = np.array([b"q1", b"q22", b"topic-333"])
    narrow = np.array([b"q1", b"q22"])
    assert topic_shards(ids, 13)[:2].tolist() == topic_shards(narrow, 13).tolist()


@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(complete=True),
                                     EvalOptions(complete=True, relevance_level=2)],
                         ids=["plain", "-c", "-c -l 2"])
def test_num_rel_is_summed_in_shards_as_trec_eval_sums_it(tmp_path, options):
    """NumRel's summary (the report's run pages print it): the sum of the per-topic values,
    and under -c the qrels lines above 0 of the topics scored whatever -l says (m_num_rel.c),
    as in one evaluation."""
    run, qrels_path = _campaign(tmp_path, topics=60, depth=10)
    qrels = irbench.read_qrels(qrels_path)
    if not options.complete:  # every qrels topic answered: no -c needed
        answered = tmp_path / "answered.qrels"
        answered.write_text("".join(line + "\n" for line in qrels_path.read_text().splitlines()
                                    if int(line.split()[0][1:]) < 40))
        qrels = irbench.read_qrels(answered)
    measures = [parse_measure("num_rel"), parse_measure("num_ret")]
    whole = irbench.evaluate(irbench.PreparedQrels(qrels), irbench.read_run(run), measures,
                             options)
    got = evaluate_sharded(qrels, str(run), measures, options, shards=5)
    for m in measures:
        assert got.summaries[m] == whole.summary(str(m)), m


def test_run_level_summaries_are_refused(tmp_path):
    run, qrels = _campaign(tmp_path, topics=30, depth=5)
    with pytest.raises(IrbenchError, match="NumQ cannot be computed in topic shards"):
        evaluate_sharded(irbench.read_qrels(qrels), str(run), [parse_measure("num_q")])


def _stored(config) -> dict:
    from irbench.store import Store

    with Store(config.store, read_only=True) as store:
        return {v: sorted(store.query(f"SELECT * FROM {v}")[1]) for v in ("per_query", "means")} \
            | {"profiles": store.profiles(config.qrels[0].name),
               "systems": sorted(store.query("SELECT name, sha256, run_tag, num_topics, "
                                             "num_docs, answered FROM systems")[1])}


@pytest.mark.parametrize("engine", ["local", "cluster"])
def test_irbench_run_scores_big_runs_in_shards_with_the_same_results(tmp_path, monkeypatch,
                                                                     engine):
    """A run file over the shard size is scored in topic shards by irbench run, on one
    machine and on a Dask cluster; the store equals the one scored whole."""
    import shutil

    from campaigns import make_campaign

    from irbench.config import load_config
    from irbench.runner import run_campaign, shards

    path = make_campaign(tmp_path / "whole", systems=3, topics=12, depth=30,
                         suites="core: [AP, nDCG@10, P@10, GMAP, Bpref, RR, ERR@20]")
    shutil.copytree(tmp_path / "whole", tmp_path / "sharded")
    (tmp_path / "sharded" / "runs" / "c.duckdb").unlink(missing_ok=True)
    whole = run_campaign(load_config(path), workers=1)
    size = min(p.stat().st_size for p in (tmp_path / "whole" / "runs").glob("r*.txt"))
    monkeypatch.setattr(shards, "SHARD_BYTES", size // 4)  # every run: >= 4 shards
    calls = []
    real = shards.evaluate_sharded
    monkeypatch.setattr(shards, "evaluate_sharded",
                        lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    sharded_config = load_config(tmp_path / "sharded" / "configs" / "c.yaml")
    if engine == "cluster":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster:
            sharded = run_campaign(sharded_config, cluster=cluster.scheduler_address)
    else:
        sharded = run_campaign(sharded_config, workers=1)
        assert len(calls) == 6  # 3 runs x 2 qrels sets, each in shards
    assert whole.failures == sharded.failures == []
    assert sharded.evaluated == whole.evaluated == 6
    assert _stored(load_config(path)) == _stored(sharded_config)
