"""irbench repro (issue 42): its values from files equal irbench.stats.repro's and repro_eval
0.5.0's on generated runs (tests/repro_runs.py); names of the registry; usage errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from repro_eval.measure import document_order, effectiveness, overall_effects  # test extra
from repro_eval.util import evaluate_run, load_qrels, load_run
from repro_runs import make_runs

import irbench
from irbench.errors import MeasureParameterError, StatisticsError
from irbench.measures.reproduction import expand, parse_repro_measure
from irbench.stats import repro

TOL = 1e-10


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("cli"))


def _cli(*argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irbench", "repro", *map(str, argv)],
                          capture_output=True, text=True, timeout=180, cwd=cwd)


def _files(paths):
    return ("--qrels", paths["qrels"], "--orig-baseline", paths["baseline"],
            "--repro-baseline", paths["reproduced_baseline"], "--orig-advanced",
            paths["advanced"], "--repro-advanced", paths["reproduced_advanced"])


def _values(out: str) -> dict:
    (r,) = json.loads(out)["reproductions"]
    return {(v["measure"], v["run"]): v for v in r["values"]}


@pytest.mark.timeout(300)
def test_cli_values_equal_stats_repro_and_repro_eval(paths):
    done = _cli(*_files(paths), "-m", "AP", "-m", "P@10", "--depth", "10", "--depth", "1000",
                "--p", "0.9", "--format", "json")
    assert done.returncode == 0, done.stderr
    got = _values(done.stdout)
    # irbench.stats.repro on the same runs
    runs = {n: irbench.read_run(str(paths[n])) for n in
            ("baseline", "advanced", "reproduced_baseline", "reproduced_advanced")}
    qrels = irbench.read_qrels(str(paths["qrels"]))
    scores = {n: irbench.evaluate(qrels, r, ["AP", "P@10"], complete=True)
              for n, r in runs.items()}
    for side in ("baseline", "advanced"):
        pair = repro.rank_pair(runs[side], runs[f"reproduced_{side}"])
        assert got[("KTU@10", side)]["value"] == pytest.approx(repro.ktu(pair, 10).mean, abs=TOL)
        assert got[("RBO(p=0.9)@1000", side)]["value"] == pytest.approx(
            repro.rbo(pair, 1000, 0.9).mean, abs=TOL)
        c = repro.closeness(scores[side], scores[f"reproduced_{side}"], "AP")
        assert got[("RMSE(AP)", side)]["value"] == pytest.approx(c.rmse, abs=TOL)
        per_topic = got[("RMSE(AP)", side)]["per_topic"]
        assert np.sqrt(np.mean(np.square(list(per_topic.values())))) == pytest.approx(c.rmse)
    e = repro.effect(*(scores[n] for n in runs), "P@10")
    assert got[("ER(P@10)", "effect")]["value"] == pytest.approx(e.effect_ratio, abs=TOL)
    # repro_eval's functions on its own reading and scoring of the files
    import ir_measures
    ms = [ir_measures.parse_measure(m) for m in ("AP", "P@10")]
    oq = load_qrels(str(paths["qrels"]))
    sc = {n: evaluate_run(ms, oq, load_run(str(paths[n]))) for n in runs}
    want_rmse = effectiveness.RMSE(sc["baseline"], sc["reproduced_baseline"])
    assert got[("RMSE(AP)", "baseline")]["value"] == pytest.approx(want_rmse["AP"], abs=TOL)
    want_er = overall_effects.ER(orig_score_a=sc["advanced"], orig_score_b=sc["baseline"],
                                 rep_score_a=sc["reproduced_advanced"],
                                 rep_score_b=sc["reproduced_baseline"])
    assert got[("ER(AP)", "effect")]["value"] == pytest.approx(want_er["AP"], abs=TOL)
    want_ktu = document_order.KTU(load_run(str(paths["advanced"])),
                                  load_run(str(paths["reproduced_advanced"])), trim_thresh=10,
                                  per_topic=True)
    assert got[("KTU@10", "advanced")]["value"] == pytest.approx(
        np.mean(list(want_ktu.values())), abs=TOL)


@pytest.mark.timeout(120)
def test_baseline_alone_and_formats(paths, tmp_path):
    base = _files(paths)[:6]
    done = _cli(*base, "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert rows[0] == "reproduction,collection,measure,run,original,reproduced,value"
    assert all(",effect," not in r for r in rows)  # no advanced: no effect
    assert {r.split(",")[2] for r in rows[1:]} == {"KTU@1000", "RBO(p=0.95)@1000", "RMSE(AP)",
                                                  "nRMSE(AP)", "p_paired(AP)"}
    table = _cli(*base, "-o", tmp_path / "t.txt")
    assert table.returncode == 0 and "RMSE(AP)" in (tmp_path / "t.txt").read_text()


@pytest.mark.timeout(120)
def test_replicated_gives_effect_and_unpaired_only(paths):
    done = _cli(*_files(paths), "--replicated", "--qrels-repro", paths["qrels"], "--format",
                "json")
    assert done.returncode == 0, done.stderr
    assert set(_values(done.stdout)) == {("ER(AP)", "effect"), ("DeltaRI(AP)", "effect"),
                                         ("p_unpaired(AP)", "baseline"),
                                         ("p_unpaired(AP)", "advanced")}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("extra, message", [
    ((), "give a config, or --qrels"),
    (("--qrels", "q"), "--orig-baseline, --repro-baseline"),
    (("--p", "1.5"), "persistence between 0 and 1"),
    (("--depth", "0"), "--depth"),
])
def test_usage_errors(extra, message):
    done = _cli(*extra)
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.timeout(120)
def test_measure_errors_are_messages(paths):
    base = _files(paths)[:6]
    for measure, message in (("ER(AP)", "needs the advanced runs"),
                             ("RBO(p=3)", "between 0 and 1"), ("KTU(x=1)", "no parameter")):
        done = _cli(*base, "-m", measure)
        assert done.returncode != 0 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    done = _cli(*base, "--replicated", "--qrels-repro", paths["qrels"], "-m", "KTU@5")
    assert "not defined for a replicated" in done.stderr


def test_names_round_trip_and_expand():
    for text, canonical in (("KTU", "KTU@1000"), ("RBO", "RBO(p=0.95)@1000"),
                            ("RBO(p=0.8,variant=truncated)@10",
                             "RBO(p=0.8,variant=truncated)@10"),
                            ("RMSE(map)", "RMSE(AP)"), ("nRMSE(ndcg_cut_10)", "nRMSE(nDCG@10)"),
                            ("ER(nDCG(gain=exp)@10)", "ER(nDCG(gain=exp)@10)"),
                            ("DeltaRI(P@5)", "DeltaRI(P@5)")):
        m = parse_repro_measure(text)
        assert str(m) == canonical and parse_repro_measure(str(m)) == m
    with pytest.raises(MeasureParameterError, match="write the cutoff"):
        parse_repro_measure("RMSE(P)@10")
    assert [str(m) for m in expand(["AP"], advanced=False)] == [
        "KTU@1000", "RBO(p=0.95)@1000", "RMSE(AP)", "nRMSE(AP)", "p_paired(AP)"]
    assert [str(m) for m in expand(["KTU@5", "AP"], "reproduced")][:2] == ["KTU@5", "RMSE(AP)"]
    with pytest.raises(StatisticsError, match="replicated"):
        expand(["RMSE(AP)"], "replicated")
