"""trec_eval 10.0's own outputs, reproduced line for line.

Fixtures: tests/data/trec_eval_golden (generated edge cases, MANIFEST.tsv gives the exact
arguments) and tests/data/trec_eval_test (trec_eval's regression files). Both were produced by
trec_eval, software from NIST; see their README and LICENSE files.
"""

import csv
import json
from pathlib import Path

import pytest

from irbench.cli import main

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "trec_eval_golden"
ROWS = list(csv.DictReader(open(GOLDEN / "MANIFEST.tsv", encoding="utf-8"), delimiter="\t"))


def _run(args, cwd, monkeypatch, capsys):
    monkeypatch.chdir(cwd)
    rc = main(["eval", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize(
    "row",
    [r for r in ROWS if r["exit_status"] == "0"],
    ids=lambda r: f"{r['case']}:{r['stdout']}",
)
def test_golden_output(row, monkeypatch, capsys):
    rc, out, _ = _run(json.loads(row["args"]), GOLDEN / row["case"], monkeypatch, capsys)
    assert rc == 0
    expected = (GOLDEN / row["case"] / row["stdout"]).read_text(encoding="utf-8")
    assert out.splitlines() == expected.splitlines()
    assert out == expected


# trec_eval fails on these, and so does irbench, with its own message and trec_eval's exit code.
# Not imitated, by design: the all-negative first topic (a trec_eval allocation bug, exit 4:
# irbench scores it like any topic without relevant documents) and the two crash rows.
FAILING = [
    r for r in ROWS
    if r["exit_status"] not in ("0",) and not r["exit_status"].startswith("-")
    and "negfirst" not in r["qrels"]
]


@pytest.mark.parametrize("row", FAILING, ids=lambda r: f"{r['case']}:{r['stdout']}")
def test_golden_failures(row, monkeypatch, capsys):
    rc, out, err = _run(json.loads(row["args"]), GOLDEN / row["case"], monkeypatch, capsys)
    assert rc == int(row["exit_status"])
    if "/dup_" in row["stdout"]:  # trec_eval's exit status 4, with the file and both lines
        assert ":" in err and "first at line" in err
    assert err.startswith("irbench: error: ")
    assert "Traceback" not in err


def test_first_topic_all_negative_is_scored(monkeypatch, capsys):
    rc, out, err = _run(["-q", "-m", "map", "negfirst.qrels", "negfirst.run"],
                        GOLDEN / "input_errors", monkeypatch, capsys)
    assert rc == 0, err
    assert out.splitlines()[0].split("\t")[2] == "0.0000"


TREC_EVAL_TEST = DATA / "trec_eval_test"
QUICKTEST = [
    ("out.test", ["qrels.test", "results.test"]),
    ("out.test", ["qrels.test.with-comments", "results.test"]),
    ("out.comment.test", ["qrels.comment.test", "results.comment.test"]),
    ("out.test.a", ["-m", "all_trec", "qrels.test", "results.test"]),
    ("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"]),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"]),
    ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level",
                      "results.test"]),
    ("out.test.meas_params", ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3",
                              "-m", "recall.20,2000", "-m", "Rprec_mult.5.0,0.2,0.35",
                              "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                              "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4",
                              "-msuccess.2,5,20", "qrels.test", "results.test"]),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"]),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test",
                        "prefs.results.test"]),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test",
                        "prefs.results.test"]),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test",
                              "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123",
                           "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123",
                           "results.test"]),
]


@pytest.mark.parametrize("expected,args", QUICKTEST, ids=[f"{e}:{a[-2]}" for e, a in QUICKTEST])
def test_trec_eval_quicktest(expected, args, monkeypatch, capsys):
    rc, out, err = _run(args, TREC_EVAL_TEST, monkeypatch, capsys)
    assert rc == 0, err
    assert out == (TREC_EVAL_TEST / expected).read_text(encoding="utf-8")
