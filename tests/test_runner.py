"""The runner and the store: equal to evaluate(), incremental, safe under failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from campaigns import hold_store, make_campaign, release, write_run

import irbench
from irbench import cli
from irbench.config import load_config
from irbench.errors import StoreError
from irbench.runner import campaign as runner
from irbench.runner import inputs, run_campaign, score
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent


def stored(config) -> dict:
    """{(system, qrels, measure): {query_id: value}} as the per_query view shows it."""
    out: dict = {}
    with Store(config.store, read_only=True) as store:
        _, rows = store.query("SELECT system, qrels, measure, query_id, value FROM per_query")
    for system, qrels, measure, qid, value in rows:
        out.setdefault((system, qrels, measure), {})[qid] = value
    return out


def means(config) -> dict:
    with Store(config.store, read_only=True) as store:
        _, rows = store.query("SELECT system, qrels, measure, value FROM means")
    return {(s, q, m): v for s, q, m, v in rows}


def run(config_path, **kwargs):
    return run_campaign(load_config(config_path, strict=False), workers=1, **kwargs)


def test_store_equals_evaluate(tmp_path):
    path = make_campaign(tmp_path, systems=3)
    report = run(path)
    assert (report.evaluated, report.reused, report.failures) == (6, 0, [])
    config = load_config(path)
    values, summaries = stored(config), means(config)
    assert len(values) == 3 * 2 * 6
    for system in config.systems:
        for qrels in config.qrels:
            ev = irbench.evaluate(qrels.path, system.path, config.measures, complete=True)
            for m in config.measures:
                got = values[(system.name, qrels.name, str(m))]
                assert list(got) == list(ev.topics)
                assert np.array_equal(np.array(list(got.values())), ev[m])
                assert summaries[(system.name, qrels.name, str(m))] == ev.summary(m)


def test_intersection_scores_only_answered_topics(tmp_path):
    path = make_campaign(tmp_path, systems=2, evaluation="{topics: intersection}",
                         extra_qrels=False)
    run_file = tmp_path / "runs" / "r00.txt"
    lines = [line for line in run_file.read_text().splitlines() if not line.startswith("t01 ")]
    run_file.write_text("\n".join(lines) + "\n")
    assert not run(path).failures
    config = load_config(path)
    got = stored(config)[("r00", "official", "AP")]
    assert "t01" not in got and len(got) == 4
    ev = irbench.evaluate(config.qrels[0].path, str(run_file), ["AP"], complete=True)
    assert got == {t: v for t, v in zip(ev.topics, ev["AP"]) if t != "t01"}
    assert means(config)[("r00", "official", "AP")] == pytest.approx(np.mean(list(got.values())))


def test_second_run_reuses_everything(tmp_path):
    path = make_campaign(tmp_path)
    run(path)
    before = stored(load_config(path))
    report = run(path)
    assert (report.evaluated, report.reused) == (0, 8)
    assert stored(load_config(path)) == before


def test_a_changed_run_file_recomputes_only_that_system(tmp_path):
    path = make_campaign(tmp_path)
    run(path)
    config = load_config(path)
    before = stored(config)
    write_run(tmp_path / "runs" / "r01.txt", np.random.default_rng(99), [f"t{i:02d}" for i in
              range(1, 6)], 50, "new")
    report = run(path)
    assert (report.evaluated, report.reused) == (2, 6)
    after = stored(config)
    for key in before:
        assert (after[key] == before[key]) == (key[0] != "r01"), key
    ev = irbench.evaluate(config.qrels[0].path, str(tmp_path / "runs" / "r01.txt"), ["AP"],
                          complete=True)
    assert list(after[("r01", "official", "AP")].values()) == list(ev["AP"])
    with Store(config.store, read_only=True) as store:  # the old results were dropped
        _, rows = store.query("SELECT count(*) FROM evaluations")
    assert rows == [(8,)]


def test_changed_qrels_options_and_measures(tmp_path):
    path = make_campaign(tmp_path)
    run(path)
    shallow = tmp_path / "runs" / "shallow.txt"
    shallow.write_text(shallow.read_text().replace(" 0\n", " 1\n", 3))
    assert (run(path).evaluated, run(path).evaluated) == (4, 0)
    text = path.read_text().replace("GMAP, ", "GMAP, ERR@10, ")
    path.write_text(text)
    report = run(path)
    assert report.evaluated == 8  # every pair computes the one new measure
    config = load_config(path)
    with Store(config.store, read_only=True) as store:
        _, rows = store.query("SELECT runner_id, count(*) FROM summaries GROUP BY ALL "
                              "ORDER BY runner_id")
    assert rows[-1][1] == 8  # only ERR@10, once per pair
    path.write_text(text + "evaluation: {depth: 10}\n")
    assert run(path).evaluated == 8
    ev = irbench.evaluate(config.qrels[0].path, str(tmp_path / "runs" / "r00.txt"), ["P@10"],
                          complete=True, max_docs=10)
    assert list(stored(config)[("r00", "official", "P@10")].values()) == list(ev["P@10"])


def test_removed_systems_leave_the_views(tmp_path):
    path = make_campaign(tmp_path)
    run(path)
    os.remove(tmp_path / "runs" / "r03.txt")
    run(path)
    config = load_config(path)
    assert {k[0] for k in stored(config)} == {"r00", "r01", "r02"}


def test_failures_are_reported_and_the_rest_scored(tmp_path, capsys):
    path = make_campaign(tmp_path, suites="core: [AP, P(rel=3)@5]")
    run(path)  # P(rel=3)@5 fails: the qrels only have levels 0-2
    bad = tmp_path / "runs" / "r01.txt"
    bad.write_text(bad.read_text() + "t01 Q0 x 1 abc tag01\n")
    (tmp_path / "runs" / "r02.txt").write_text("t99 Q0 d 1 1.0 tag02\n")
    stray = (tmp_path / "runs" / "r03.txt").read_text()
    rc = cli.main(["run", "--workers", "1", "--quiet", str(path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert "Traceback" not in err
    lines = (bad.read_text().count("\n"))
    assert f"system 'r01': {bad}:{lines}: score 'abc' is not a finite number" in err
    assert f"system 'r02': {tmp_path / 'runs' / 'r02.txt'}:1: topics not in the topic set: " \
           "'t99'" in err
    assert "measure P(rel=3)@5" in err and "counts judgments of level 3 or more" in err
    config = load_config(path)
    values = stored(config)
    assert {k[0] for k in values} == {"r00", "r03"}  # r01, r02 changed and broke: not shown
    assert stray and ("r03", "official", "AP") in values
    # a run file that disappears keeps its stored results (nothing is lost)
    os.remove(tmp_path / "runs" / "r03.txt")
    text = path.read_text().replace("  - glob: ../runs/r*.txt",
                                    "  - glob: ../runs/r*.txt\n  - {name: r03, run: "
                                    "../runs/r03.txt}")
    path.write_text(text)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 1
    assert "systems[1].run: no such file '../runs/r03.txt'" in capsys.readouterr().err
    assert ("r03", "official", "AP") in stored(config)


def test_fail_fast(tmp_path, capsys):
    path = make_campaign(tmp_path)
    (tmp_path / "runs" / "r00.txt").write_text("t01 Q0 d1 1 nan x\n")
    assert cli.main(["run", "--workers", "1", "--fail-fast", str(path)]) == 1
    err = capsys.readouterr().err
    assert "score 'nan' is not a finite number" in err and "Traceback" not in err


def test_unanswered_qrels_topic(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=2, extra_qrels=False)
    for name in ("r00.txt", "r01.txt"):
        f = tmp_path / "runs" / name
        f.write_text("".join(line + "\n" for line in f.read_text().splitlines()
                             if not line.startswith("t05 ")))
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 1
    assert "qrels 'official'" in capsys.readouterr().err
    assert ("r00", "official", "AP") in stored(load_config(path))


def test_worker_processes_give_the_same_store(tmp_path, monkeypatch):
    one = make_campaign(tmp_path / "one")
    two = make_campaign(tmp_path / "two")
    run(one)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    report = run_campaign(load_config(two), workers=2)
    assert report.evaluated == 8
    a, b = stored(load_config(one)), stored(load_config(two))
    assert a == b


def test_cli_commands(tmp_path, capsys):
    path = str(make_campaign(tmp_path))
    assert cli.main(["run", "--workers", "1", path]) == 0
    captured = capsys.readouterr()
    assert "top 4 of 4 systems on qrels 'official', by AP" in captured.out
    assert "8 evaluated, 0 reused, 0 failed" in captured.err
    assert cli.main(["scores", path, "--format", "csv", "--measure", "AP"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "system,qrels,measure,value,num_topics" and len(rows) == 5
    assert cli.main(["scores", path, "--per-query", "--system", "r00", "--qrels", "shallow",
                     "--format", "json"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert len(data) == 6 * 5 and data[0]["system"] == "r00"
    out = tmp_path / "x.parquet"
    assert cli.main(["scores", path, "--format", "parquet", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"PAR1"
    assert cli.main(["systems", path]) == 0
    assert "r00" in capsys.readouterr().out
    assert cli.main(["scores", path, "--qrels", "nope"]) == 1


def test_store_is_versioned(tmp_path):
    path = str(tmp_path / "s.duckdb")
    with Store(path) as store:
        _, rows = store.query("SELECT version, name FROM migrations")
        assert rows == [(1, "create the score store"),
                        (2, "run metadata and submission checks"),
                        (3, "pools judged over days"), (4, "built pools with provenance"),
                        (5, "analyses kept for reports"), (6, "diversity qrels sets"),
                        (7, "the campaign a store belongs to"),
                        (8, "which systems were pooled"),
                        (9, "repair stores made by the first schema"),
                        (10, "the report's profiles and analyses with their parameters"),
                        (11, "judgments that know their judge; model judges' answers and usage"),
                        (12, "qrels sets written from the store's judgments"),
                        (13, "assessors in the browser"),
                        (14, "a pool's state saved with the clicks it has applied"),
                        (15, "judges' base URLs without credentials"),
                        (16, "model answers keyed by their endpoint, with the HTTP requests "
                             "each took"),
                        (17, "sign-ins that survive a restart"),
                        (18, "model judgments made from another endpoint's answers removed"),
                        (19, "answer runs among the systems"),
                        (20, "labels of generated answers: support and nugget judgments"),
                        (21, "nugget lists, every version kept"),
                        (22, "systems given as commands: every execution")]
    with Store(path) as store:  # opening again applies nothing
        assert store.query("SELECT count(*) FROM migrations")[1] == [(22,)]
    with pytest.raises(StoreError, match="no score store yet"):
        Store(str(tmp_path / "none.duckdb"), read_only=True)


def test_an_older_store_is_migrated_and_rerun(tmp_path):
    path = make_campaign(tmp_path)
    assert run(path).evaluated == 8
    before = stored(load_config(path))
    with Store(load_config(path).store) as store:  # as a store was before migration 6
        for column in ("kind", "intent_weights", "intent_weights_sha256"):
            store.con.execute(f"ALTER TABLE qrels_sets DROP COLUMN {column}")
        store.con.execute("DROP TABLE campaign")
        store.con.execute("ALTER TABLE systems DROP COLUMN pooled")
        store.con.execute("DROP TABLE profiles")
        store.con.execute("ALTER TABLE analyses DROP COLUMN params")
        store.con.execute("ALTER TABLE systems DROP COLUMN position")
        store.con.execute("DELETE FROM migrations WHERE version >= 6")
    report = run(path)  # the stored scores are reused; only the report's profiles are new
    assert (report.evaluated, report.failures) == (8, [])
    assert stored(load_config(path)) == before
    with Store(load_config(path).store, read_only=True) as store:
        assert len(store.profiles(load_config(path).qrels[0].name)) == 4
    assert (run(path).evaluated, run(path).reused) == (0, 8)
    with Store(load_config(path).store, read_only=True) as store:
        assert store.query("SELECT DISTINCT kind FROM qrels_sets")[1] == [("adhoc",)]


# ---- whole processes ---------------------------------------------------------------------


def _irbench(*args, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "irbench", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


ALL_MEASURES = ("core: [AP, GMAP, Bpref, infAP, Rprec, RR, P@5, P@10, P@20, nDCG, nDCG@10, "
                "nDCG@20, R@100, ERR@20, RBP, judged@10, AUC, IPrec@0.5, AP(condensed), "
                "Bpref(ten), nDCG(gain=exp)@10, F, Success@10]")


@pytest.mark.parametrize("delay", [0.4, 0.9, 1.6])
def test_kill_9_then_resume(tmp_path, delay):
    path = make_campaign(tmp_path / "k", systems=40, topics=25, depth=300, suites=ALL_MEASURES)
    reference = make_campaign(tmp_path / "ref", systems=40, topics=25, depth=300,
                              suites=ALL_MEASURES)
    proc = _irbench("run", "--workers", "1", "--quiet", str(path))
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    resumed = _irbench("run", "--workers", "1", "--quiet", str(path))
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert run(reference).evaluated == 80
    assert stored(load_config(path)) == stored(load_config(reference))
    with Store(load_config(path).store, read_only=True) as store:
        _, rows = store.query("SELECT status FROM runner_runs ORDER BY runner_id")
    assert rows[-1] == ("ok",) and all(r in (("interrupted",), ("ok",)) for r in rows)


def test_a_second_runner_stops_while_the_store_is_in_use(tmp_path):
    path = make_campaign(tmp_path, systems=4, topics=5, depth=20)
    run(path)
    holder = hold_store(load_config(path).store)
    try:
        second = _irbench("run", "--workers", "1", "--quiet", "--rehash", str(path))
        _, err = second.communicate(timeout=300)
    finally:
        release(holder)
    assert second.returncode == 3, err
    assert "is in use by another process" in err and "Traceback" not in err


def test_a_runner_with_wait_goes_on_once_the_store_is_free(tmp_path):
    path = make_campaign(tmp_path, systems=4, topics=5, depth=20)
    holder = hold_store(load_config(path).store)
    third = _irbench("run", "--workers", "1", "--quiet", "--wait", "300", str(path))
    release(holder)  # whether third has tried the lock yet or not, it must end the same way
    _, err = third.communicate(timeout=300)
    assert third.returncode == 0, err
    assert "8 evaluated" in err


def test_opening_with_wait_retries_until_the_lock_is_released(tmp_path, monkeypatch):
    import irbench.store as store_module

    path = str(tmp_path / "s.duckdb")
    Store(path).close()
    holder = hold_store(path)
    attempts = []

    def sleep(seconds):  # the wait loop's pause: release the lock at the first one
        attempts.append(seconds)
        if len(attempts) == 1:
            release(holder)

    clock = types.SimpleNamespace(**{name: getattr(time, name) for name in dir(time)
                                     if not name.startswith("_")})
    clock.sleep = sleep  # the store's own clock only
    monkeypatch.setattr(store_module.connection, "time", clock)
    with Store(path, wait=300) as store:
        assert store.con is not None
    assert len(attempts) == 1  # refused once while held, then opened


def test_a_rerun_with_nothing_to_do_reads_no_input(tmp_path, monkeypatch):
    path = make_campaign(tmp_path)
    run(path)

    def refuse(*args, **kwargs):
        raise AssertionError("read an input that had not changed")

    monkeypatch.setattr(score, "load", refuse)  # no run is read (the topics are, always)
    monkeypatch.setattr(inputs.judgments, "prepare", refuse)
    monkeypatch.setattr(score, "read_run", refuse)
    assert run(path).reused == 8
    os.utime(tmp_path / "runs" / "r00.txt", ns=(1, 1))  # touched: hashed again, not scored
    monkeypatch.setattr(score, "load", inputs.load)
    report = run(path)
    assert (report.evaluated, report.reused) == (0, 8)
    with Store(load_config(path).store, read_only=True) as store:
        _, rows = store.query("SELECT count(*) FROM evaluations")
    assert rows == [(8,)]


@pytest.mark.parametrize("on_error", ["fail", "warn"])
def test_submission_checks_inside_run(tmp_path, capsys, on_error):
    path = make_campaign(tmp_path, systems=2, extra_qrels=False,
                         evaluation="{topics: qrels}")
    path.write_text(path.read_text() + f"validation: {{on_error: {on_error}, rules: "
                                       "{max_docs: 40}}\n")
    meta = "# ir_metadata.start\n# actor: {team: lab7}\n# ir_metadata.end\n"
    first = tmp_path / "runs" / "r00.txt"
    first.write_text(meta + first.read_text())
    rc = cli.main(["run", "--workers", "1", "--quiet", str(path)])
    err = capsys.readouterr().err
    assert "more than 40" in err or "40" in err
    config = load_config(path)
    with Store(config.store, read_only=True) as store:
        _, rows = store.query('SELECT name, "group", validation, ir_metadata FROM systems '
                              "ORDER BY name")
    assert rows[0][:3] == ("r00", "lab7", "rejected") and "lab7" in rows[0][3]
    if on_error == "fail":
        assert rc == 1 and "rejected by the submission checks" in err
        assert {k[0] for k in stored(config)} == set()
    else:
        assert rc == 0 and "irbench: warning: system 'r00'" in err
        assert {k[0] for k in stored(config)} == {"r00", "r01"}


def test_coverage_and_novelty_with_known_documents(tmp_path):
    path = make_campaign(tmp_path, systems=2, extra_qrels=False,
                         suites="core: [AP, Coverage, Novelty]")
    qrels = (tmp_path / "runs" / "qrels.txt").read_text().splitlines()
    known = tmp_path / "runs" / "known.txt"
    known.write_text("".join(line + "\n" for line in qrels[::3]))  # a third already known
    text = path.read_text().replace("  topics: ../runs/topics.tsv",
                                    "  topics: ../runs/topics.tsv\n  known: ../runs/known.txt")
    path.write_text(text)
    report = run(path)
    assert not report.failures and report.evaluated == 2
    config = load_config(path)
    from irbench.judgments.known import evaluate_known

    ev = evaluate_known(config.qrels[0].path, str(known), str(tmp_path / "runs" / "r00.txt"),
                        ["Coverage", "Novelty"], complete=True)
    got = stored(config)
    assert list(got[("r00", "official", "Coverage")].values()) == list(ev["Coverage"])
    assert list(got[("r00", "official", "Novelty")].values()) == list(ev["Novelty"])
    known.write_text("".join(line + "\n" for line in qrels[::2]))  # the known set changes
    assert run(path).evaluated == 2  # recomputed: the known documents are part of the key


def test_a_store_is_created_whole_or_not_at_all(tmp_path, monkeypatch):
    """A run killed while creating the store leaves no half-made file at its path (the next
    run starts afresh), and a store another process created meanwhile is never replaced."""
    import irbench.store as store_module

    path = str(tmp_path / "s.duckdb")

    def crash(self):
        raise KeyboardInterrupt  # as a kill while the schema is being written

    monkeypatch.setattr(store_module.Store, "_migrate", crash)
    with pytest.raises(KeyboardInterrupt):
        Store(path)
    monkeypatch.undo()
    assert not os.path.exists(path)
    with Store(path) as store:
        store.con.execute("CREATE TABLE mark (x INTEGER)")
    store_module.create(path)  # someone else's creation, too late: the store is kept
    with Store(path, read_only=True) as store:
        assert store.query("SELECT count(*) FROM mark")[1] == [(0,)]
    assert sorted(os.listdir(tmp_path)) == ["s.duckdb"]


@pytest.mark.parametrize("mistake", ["topics", "relevance_level"])
def test_a_mistake_in_the_topics_or_options_keeps_the_stored_results(tmp_path, capsys, mistake):
    """A typo in the topic file or 'relevance_level: 99' fails every qrels set; the results
    of the last good run stay (scores and report say they are stale) until the sets read
    again, and are never deleted by the mistake."""
    path = make_campaign(tmp_path, systems=3)
    run(path)
    before = stored(load_config(path))
    topics = tmp_path / "runs" / "topics.tsv"
    good = topics.read_text()
    if mistake == "topics":
        topics.write_text(good.replace("t01", "t1"))
    else:
        path.write_text(path.read_text() + "evaluation: {relevance_level: 99}\n")
    report = run(path)
    assert len(report.failures) == 2 and report.evaluated == 0
    assert stored(load_config(path)) == before
    assert cli.main(["scores", str(path)]) == 0
    err = capsys.readouterr().err
    assert "irbench: warning: qrels 'official' failed at the last 'irbench run'" in err
    assert "these are its last good results" in err
    if mistake == "topics":  # fixed: the same results, current again, nothing recomputed
        topics.write_text(good)
        again = run(path)
        assert again.failures == [] and again.evaluated == 0
        assert stored(load_config(path)) == before
        assert cli.main(["scores", str(path)]) == 0
        assert "warning" not in capsys.readouterr().err


def test_a_store_holds_one_campaign(tmp_path, capsys):
    """A second config on the same store (a subset copied under another name) is refused
    and destroys nothing; the same campaign under another file name shares it."""
    path = make_campaign(tmp_path, systems=3)
    run(path)
    before = stored(load_config(path))
    subset = path.parent / "subset.yaml"
    subset.write_text(path.read_text().replace("glob: ../runs/r*.txt", "glob: ../runs/r00.txt")
                      + "store: ../runs/c.duckdb\n")
    assert cli.main(["run", "--workers", "1", str(subset)]) == 3
    err = capsys.readouterr().err
    assert "this store holds campaign 'c'" in err and "not 'subset'" in err
    assert stored(load_config(path)) == before
    same = path.parent / "again.yaml"
    same.write_text("name: c\n" + path.read_text() + "store: ../runs/c.duckdb\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(same)]) == 0
    assert stored(load_config(path)) == before


def test_every_ad_hoc_evaluation_keeps_the_reports_profile(tmp_path):
    """judged@10/@100 and the 11-point curve are stored whatever the suites, equal to scoring
    them directly: the report needs no run file."""
    from irbench.measures import PROFILE

    path = make_campaign(tmp_path, suites="core: [AP]")
    config = load_config(path)
    run(path)
    for spec in config.qrels:
        with Store(config.store, read_only=True) as store:
            profiles = store.profiles(spec.name)
        prepared = irbench.PreparedQrels(irbench.read_qrels(spec.path))
        assert sorted(profiles) == sorted(s.name for s in config.systems)
        for system in config.systems:
            evaluation = irbench.evaluate(prepared, irbench.read_run(system.path), list(PROFILE),
                                          config.settings.options())
            assert profiles[system.name] == {m: evaluation.summary(m) for m in PROFILE}


def test_a_local_run_imports_neither_dask_nor_object_storage(tmp_path):
    """The cluster and cloud extras are imported only when a campaign uses them."""
    path = make_campaign(tmp_path, systems=2, topics=3)
    code = ("import sys; from irbench import cli; rc = cli.main(['run', '--quiet', '--workers', "
            f"'1', {str(path)!r}]); print(rc, *(m in sys.modules for m in "
            "('distributed', 'dask', 'fsspec', 's3fs')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.stdout.split() == ["0", "False", "False", "False", "False"], out.stderr


def test_a_qrels_topic_no_run_answers_fails_its_set_naming_it(tmp_path, capsys):
    """Topics of the qrels that no recorded run answers (here, or in an earlier run of the
    campaign whose results are reused) are named, in the qrels' order, once all are stored."""
    config = make_campaign(tmp_path, systems=2, topics=5, extra_qrels=False)
    runs = tmp_path / "runs"
    full = {p: p.read_text() for p in sorted(runs.glob("r*.txt"))}
    for path, text in full.items():  # no run answers t03 or t05
        path.write_text("".join(line for line in text.splitlines(keepends=True)
                                if line.split()[0] not in ("t03", "t05")))
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 1
    err = capsys.readouterr().err
    assert "qrels.txt: no system answers topics 't03', 't05'" in err
    r01 = runs / "r01.txt"
    r01.write_text("".join(line for line in full[r01].splitlines(keepends=True)
                           if line.split()[0] != "t05"))  # r01 answers t03 now
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 1
    err = capsys.readouterr().err
    assert "no system answers topic 't05'" in err and "t03" not in err
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 1  # all reused
    err = capsys.readouterr().err
    assert "no system answers topic 't05'" in err and "t03" not in err
    r01.write_text(full[r01])
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
