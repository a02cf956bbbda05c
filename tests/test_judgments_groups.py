"""Judgment groups (-R qrels_jg): each group scored alone, then averaged per topic."""

from __future__ import annotations

import numpy as np
import pytest

import irbench
from irbench import cli
from irbench.judgments.groups import PreparedJudgmentGroups, read_qrels_jg
from irbench.trec import read_run

# t1 judged by groups a and b (b finds d3 relevant, a does not); t2 by group a only
QRELS_JG = """\
t1 a d1 1
t1 a d2 0
t1 a d3 0
t1 b d1 0
t1 b d3 2
t1 b d4 1
t2 a e1 1
t2 a e2 1
"""
RUN = """\
t1 Q0 d3 1 9 r
t1 Q0 d1 2 8 r
t1 Q0 d9 3 7 r
t1 Q0 d4 4 6 r
t2 Q0 e2 1 5 r
t2 Q0 e7 2 4 r
"""


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "q.jg"
    qrels.write_text(QRELS_JG)
    run = tmp_path / "r.run"
    run.write_text(RUN)
    return str(qrels), str(run)


def _lines(capsys, *args) -> dict:
    assert cli.main(["eval", *args]) == 0
    out = capsys.readouterr().out
    return {(m.strip(), q): v for m, q, v in (line.split("\t") for line in out.splitlines())}


def test_hand_computed(files, capsys):
    got = _lines(capsys, "-q", "-R", "qrels_jg", "-m", "map_avgjg", "-m", "P_avgjg.1,2",
                 "-m", "Rprec_mult_avgjg.1.0", *files)
    # t1, group a: relevant {d1} at rank 2: AP 1/2, P@1 0, P@2 1/2, R=1: P@1 = 0
    #     group b: relevant {d3, d4} at ranks 1, 4: AP (1 + 2/4)/2 = 0.75, P@1 1, P@2 1/2,
    #              R=2: P@2 = 1/2
    # t2, group a only: relevant {e1, e2}, e2 at rank 1: AP 1/2, P@1 1, P@2 1/2, P@R=2 1/2
    assert got[("map_avgjg", "t1")] == "0.6250" and got[("map_avgjg", "t2")] == "0.5000"
    assert got[("P_avgjg_1", "t1")] == "0.5000" and got[("P_avgjg_2", "t1")] == "0.5000"
    assert got[("Rprec_mult_avgjg_1.00", "t1")] == "0.2500"
    assert got[("Rprec_mult_avgjg_1.00", "t2")] == "0.5000"
    assert got[("map_avgjg", "all")] == "0.5625"


@pytest.mark.parametrize("options", [{}, {"complete": True}, {"max_docs": 2},
                                     {"judged_only": True}, {"relevance_level": 2}])
def test_each_group_is_an_ordinary_evaluation(files, options):
    """The average over groups of AP, P@k and Rprec_mult on each group's own qrels."""
    qrels = read_qrels_jg(files[0])
    run = read_run(files[1])
    ev = irbench.evaluate(PreparedJudgmentGroups(qrels), run,
                          ["AP_avgjg", "P_avgjg@2", "Rprec_mult_avgjg(mult=0.6)"], **options)
    for name, base in (("AP_avgjg", "AP"), ("P_avgjg@2", "P@2"),
                       ("Rprec_mult_avgjg(mult=0.6)", "Rprec_mult(mult=0.6)")):
        sums: dict[str, list[float]] = {}
        for group in np.unique(qrels.subtopic):
            rows = qrels.subtopic == group
            one: dict[str, dict[str, int]] = {}
            for t, d, r in zip(qrels.query_id[rows], qrels.doc_id[rows], qrels.relevance[rows]):
                one.setdefault(t.decode(), {})[d.decode()] = int(r)
            plain = irbench.evaluate(one, run, [base], **options)
            for t, v in zip(plain.topics, plain[base]):
                sums.setdefault(t, []).append(v)
        want = [np.mean(sums[t]) for t in ev.topics]
        assert list(ev[name]) == pytest.approx(want, abs=1e-15)


def test_usage_errors(files, capsys):
    assert cli.main(["eval", "-R", "qrels_jg", "-m", "map", *files]) == 1
    assert "-R qrels_jg takes only the judgment-group measures" in capsys.readouterr().err
    assert cli.main(["eval", "-m", "map_avgjg", *files]) == 1
    assert "judgment-group measures need -R qrels_jg" in capsys.readouterr().err
    assert cli.main(["eval", "-R", "qrels_jg", "-m", "prefs_simp", *files]) == 1
    assert "not prefs_simp" in capsys.readouterr().err


def test_the_default_measures_are_the_qrels_jg_set(files, capsys):
    got = _lines(capsys, "-R", "qrels_jg", *files)
    assert [m for m, _ in got][:3] == ["runid", "num_q", "map_avgjg"]
    assert got[("num_q", "all")] == "2"


def test_a_docno_judged_twice_by_one_group(tmp_path, files, capsys):
    bad = tmp_path / "dup.jg"
    bad.write_text(QRELS_JG + "t1 b d4 0\n")
    assert cli.main(["eval", "-R", "qrels_jg", str(bad), files[1]]) == 4
    err = capsys.readouterr().err
    assert f"{bad}:9: duplicate judgment of docno 'd4' for topic 't1' jg 'b'" in err


def test_malformed_lines(tmp_path, files, capsys):
    bad = tmp_path / "bad.jg"
    bad.write_text("t1 a d1\nt1 a d2 x\n")
    assert cli.main(["eval", "-R", "qrels_jg", str(bad), files[1]]) == 2
    err = capsys.readouterr().err
    assert "bad.jg:1: expected 4 columns (topic jg docno rel), got 3" in err
    assert "bad.jg:2: relevance 'x' is not an integer" in err
