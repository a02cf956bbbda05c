"""`irbench check` refuses what `irbench run` and `irbench report` refuse, with the same
messages (one set of rules: the runner's own functions), and writes nothing; `irbench eval`
and a config accept and refuse the same measures on the same qrels (issue 14.5, 15.3)."""

from __future__ import annotations

import os

import pytest
from campaigns import make_campaign

from irbench import cli


def _errors(text: str) -> set[str]:
    return {line for line in text.splitlines() if line.startswith("irbench: error: ")}


def _check_then_run(capsys, path) -> tuple[int, set[str], int, set[str]]:
    """Exit status and error lines of `check`, then of `run` (and `report` when run passes)."""
    rc_check = cli.main(["check", str(path)])
    checked = capsys.readouterr().err
    assert "Traceback" not in checked
    rc_run = cli.main(["run", "--workers", "1", "--quiet", str(path)])
    ran = capsys.readouterr().err
    return rc_check, _errors(checked), rc_run, _errors(ran)


def test_check_passes_a_good_campaign_and_writes_nothing(tmp_path, capsys):
    path = make_campaign(tmp_path)
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr()
    assert "ok: 4 systems, 2 qrels sets" in out.out and out.err == ""
    assert not (tmp_path / "runs" / "c.duckdb").exists()
    assert not any(p.suffix == ".duckdb" for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("mistake", ["relevance level", "topic typo", "bad run line",
                                     "duplicate", "measure level"])
def test_check_refuses_what_run_refuses_with_the_same_message(tmp_path, capsys, mistake):
    runs = tmp_path / "runs"
    suites = "core: [AP, P@10, P(rel=3)@5]" if mistake == "measure level" else \
        "core: [AP, P@10]"
    evaluation = "{relevance_level: 99}" if mistake == "relevance level" else ""
    path = make_campaign(tmp_path, suites=suites, evaluation=evaluation)
    if mistake == "topic typo":
        (runs / "topics.tsv").write_text((runs / "topics.tsv").read_text()
                                         .replace("t03\t", "t3\t"))
    if mistake == "bad run line":
        with open(runs / "r01.txt", "a") as fh:
            fh.write("t01 Q0 x 1 abc tag01\n")
    if mistake == "duplicate":
        first = (runs / "r02.txt").read_text().splitlines()[0]
        with open(runs / "r02.txt", "a") as fh:
            fh.write(first.replace(" 1 ", " 51 ", 1) + "\n")
    rc_check, checked, rc_run, ran = _check_then_run(capsys, path)
    assert rc_check == 1 and rc_run == 1
    assert ran and ran <= checked  # check goes on to the runs where run has nothing to score
    expected = {
        "relevance level": "qrels.txt: no judgment reaches relevance level 99",
        "topic typo": "qrels.txt:",
        "bad run line": "r01.txt:",
        "duplicate": "r02.txt:",
        "measure level": "P(rel=3)@5 counts judgments of level 3 or more as relevant, but "
                         "the highest level is 2: every value would be 0",
    }[mistake]
    assert any(expected in line for line in checked)


def test_check_refuses_what_report_refuses(tmp_path, capsys):
    path = make_campaign(tmp_path)
    path.write_text(path.read_text() + "report: {measure: nDCG@20, pool_depth: deep, "
                    "colour: red}\n")
    assert cli.main(["check", str(path)]) == 1
    checked = _errors(capsys.readouterr().err)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 1  # scores stored,
    run_refused = capsys.readouterr().err  # but not the report's analyses
    assert "report analyses: " in run_refused
    assert cli.main(["report", str(path), "-o", str(tmp_path / "page")]) != 0
    refused = capsys.readouterr().err
    assert f"{path}:8: report.colour: unknown option" in refused
    for text in (f"{path}:8: report.colour: unknown option",
                 f"{path}:8: report.measure: nDCG@20 is in no suite",
                 f"{path}:8: report.pool_depth: must be a whole number >= 1, not 'deep'"):
        assert any(text in line for line in checked), text
        assert text in refused, text
        assert text in run_refused, text


def test_check_reports_every_problem_at_once(tmp_path, capsys):
    path = make_campaign(tmp_path, evaluation="{relevance_level: 99}")
    with open(tmp_path / "runs" / "r01.txt", "a") as fh:
        fh.write("t01 Q0 x 1 abc tag01\n")
    assert cli.main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(_errors(err)) == 3  # two qrels sets and one run
    assert "3 problems" in err


def test_graded_measure_on_binary_qrels_warns_in_eval_and_in_run(tmp_path, capsys):
    path = make_campaign(tmp_path, suites="core: [AP, ERR@20]", extra_qrels=False)
    qrels = tmp_path / "runs" / "qrels.txt"
    qrels.write_text(qrels.read_text().replace(" 2\n", " 1\n"))
    text = "ERR@20 is meant for graded judgments, but the highest level is 1"
    assert cli.main(["eval", "-m", "ERR@20", str(qrels), str(tmp_path / "runs" / "r00.txt")]) \
        == 0
    captured = capsys.readouterr()
    assert f"irbench: warning: {qrels}: {text}" in captured.err
    assert captured.out.startswith("ERR@20")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    assert text in capsys.readouterr().err
    assert cli.main(["scores", str(path), "--measure", "ERR@20"]) == 0
    assert "r00" in capsys.readouterr().out


def test_eval_refuses_a_measure_the_config_refuses_with_the_same_text(tmp_path, capsys):
    path = make_campaign(tmp_path, suites="core: [AP, P(rel=3)@5]", extra_qrels=False)
    qrels, run = tmp_path / "runs" / "qrels.txt", tmp_path / "runs" / "r00.txt"
    text = ("P(rel=3)@5 counts judgments of level 3 or more as relevant, but the highest "
            "level is 2: every value would be 0")
    assert cli.main(["eval", "-m", "P(rel=3)@5", str(qrels), str(run)]) != 0
    assert f"{qrels}: {text}" in capsys.readouterr().err
    assert cli.main(["check", str(path)]) == 1
    assert text in capsys.readouterr().err
    assert cli.main(["eval", "-m", "P(rel=2)@5", str(qrels), str(run)]) == 0
    assert os.path.exists(qrels)


def test_a_campaign_of_a_run_table_end_to_end(tmp_path, capsys):
    """`irbench check` and `irbench run` of a config whose systems are a run table: the
    table's metadata reaches the store; a bad row is refused at its line by both."""
    from irbench.store import Store

    path = make_campaign(tmp_path)
    table = tmp_path / "runs" / "runs.tsv"
    table.write_text("run\tgroup\ttype\tdescription\tbaseline\tpriority\tpooled\n"
                     "r00.txt\tA\tautomatic\tBM25, the baseline\ttrue\t1\ttrue\n"
                     "r01.txt\tA\tmanual\t\t\t2\tfalse\n"
                     "r02.txt\tB\tautomatic\t\t\t1\ttrue\n"
                     "r03.txt\tB\tautomatic\t\t\t2\tfalse\n")
    path.write_text(path.read_text().replace("- glob: ../runs/r*.txt",
                                             "- table: ../runs/runs.tsv"))
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr()
    assert "ok: 4 systems, 2 qrels sets" in out.out and out.err == ""
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    with Store(str(tmp_path / "runs" / "c.duckdb"), read_only=True) as store:
        declared = store.declared_systems()
    assert [(s.name, s.group, s.type, s.description, s.baseline, s.priority, s.pooled)
            for s in declared] == [
        ("r00", "A", "automatic", "BM25, the baseline", True, 1, True),
        ("r01", "A", "manual", "", False, 2, False),
        ("r02", "B", "automatic", "", False, 1, True),
        ("r03", "B", "automatic", "", False, 2, False)]
    table.write_text(table.read_text().replace("\t1\ttrue\nr01", "\t1\tmaybe\nr01")
                     .replace("r03.txt", "r04.txt"))
    rc_check, checked, rc_run, ran = _check_then_run(capsys, path)
    assert rc_check == rc_run == 2  # a config problem
    expected = {"irbench: error: runs/runs.tsv:2: pooled: must be yes or no (true/false, yes/no, y/n, on/off or 1/0, in any letter case), not 'maybe'",
                "irbench: error: runs/runs.tsv:5: run: no such file 'r04.txt'"}
    assert {line.replace(str(tmp_path) + "/", "") for line in checked} == expected
    # run takes a missing run as that system's failure, after the config's problems
    assert {line.replace(str(tmp_path) + "/", "") for line in ran} == set(sorted(expected)[:1])
