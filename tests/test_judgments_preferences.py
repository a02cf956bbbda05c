"""Preference judgments (-R prefs, -R qrels_prefs): counts checked by hand on get_prefs.c's own
examples; trec_eval's quicktest outputs are in test_measures_golden.py."""

from __future__ import annotations

import pytest

from irbench import cli


def _eval(capsys, tmp_path, prefs: str, run: str, *args: str) -> dict:
    (tmp_path / "p.prefs").write_text(prefs)
    (tmp_path / "r.run").write_text(run)
    rc = cli.main(["eval", "-q", "-m", "all_prefs", *args, str(tmp_path / "p.prefs"),
                   str(tmp_path / "r.run")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return {(m.strip(), q): v for m, q, v in (line.split("\t") for line in out.splitlines())}


def _run(*docs: str) -> str:
    return "".join(f"q Q0 {d} {i} {100 - i} r\n" for i, d in enumerate(docs, 1))


# get_prefs.c: a complete ranking of six documents "establishes a total of 13 preferences"
RANKING = """\
q u s d1 3.0
q u s d2 2.0
q u s d3 0.0
q u s d4 6.0
q u s d5 0.0
q u s d6 2.0
"""
# get_prefs.c: two sub-groups of one user "express 5 preferences (1>2, 1>3, 2>3, 4>1, 4>2)";
# its code also closes them transitively (4>1>3 gives 4>3), so trec_eval counts 6
PARTIAL = """\
q u s1 d1 3.0
q u s1 d2 2.0
q u s1 d3 1.0
q u s2 d1 2.0
q u s2 d2 1.0
q u s2 d4 3.0
"""
# get_prefs.c: transitivity "expresses 5 preferences (1>2, 1>3, 2>3, 2>4, 1>4)"
TRANSITIVE = """\
q u s1 d1 3.0
q u s1 d2 2.0
q u s1 d3 1.0
q u s2 d2 5.0
q u s2 d4 4.0
"""


@pytest.mark.parametrize("prefs, possible", [(RANKING, 13), (PARTIAL, 6), (TRANSITIVE, 5)])
def test_the_number_of_preferences(tmp_path, capsys, prefs, possible):
    got = _eval(capsys, tmp_path, prefs, _run("d1", "d2", "d3", "d4"), "-R", "prefs")
    assert got[("prefs_num_prefs_poss", "q")] == str(possible)


def test_fulfilled_by_hand(tmp_path, capsys):
    # TRANSITIVE, ranking d4 d3 d2 (d1 not retrieved): retrieved numbers d4=0 d3=1 d2=2,
    # then d1=3. Preferences 1>2, 1>3, 1>4 (d1 unretrieved, the others retrieved): not
    # fulfilled, implied; 2>3: d2 below d3, not fulfilled; 2>4: not fulfilled.
    got = _eval(capsys, tmp_path, TRANSITIVE, _run("d4", "d3", "d2"), "-R", "prefs")
    assert got[("prefs_num_prefs_ful", "q")] == "0"
    assert got[("prefs_simp", "q")] == "0.0000"
    # ranking d1 d2 d3 d4 fulfils all five, all retrieved
    got = _eval(capsys, tmp_path, TRANSITIVE, _run("d1", "d2", "d3", "d4"), "-R", "prefs")
    assert got[("prefs_num_prefs_ful_ret", "q")] == "5"
    assert got[("prefs_simp", "q")] == got[("prefs_pair", "q")] == "1.0000"
    # ranking d2 d1: 1>2 not fulfilled (both retrieved); 1>3, 1>4, 2>3, 2>4 fulfilled implied
    got = _eval(capsys, tmp_path, TRANSITIVE, _run("d2", "d1"), "-R", "prefs")
    assert got[("prefs_num_prefs_ful", "q")] == "4"
    assert got[("prefs_num_prefs_ful_ret", "q")] == "0"
    assert got[("prefs_simp_ret", "q")] == "0.0000"
    assert got[("prefs_simp", "q")] == "0.8000"


def test_qrels_read_as_preferences(tmp_path, capsys):
    # one judgment group: relevant d1, d2 over non-relevant d3: 4 preferences
    qrels = "q 0 d1 1\nq 0 d2 1\nq 0 d3 0\n"
    got = _eval(capsys, tmp_path, qrels, _run("d3", "d1"), "-R", "qrels_prefs")
    # d1 > d3 not fulfilled (both retrieved), d2 > d3: d2 not retrieved, d3 retrieved
    assert got[("prefs_num_prefs_poss", "q")] == "2"
    assert got[("prefs_num_prefs_ful", "q")] == "0"


def test_problems(tmp_path, capsys):
    bad = tmp_path / "bad.prefs"
    bad.write_text("q u s d1\nq u s d2 high\nq u s d3 nan\n")
    (tmp_path / "r.run").write_text(_run("d1"))
    assert cli.main(["eval", "-R", "prefs", str(bad), str(tmp_path / "r.run")]) == 2
    err = capsys.readouterr().err
    assert "bad.prefs:1: expected 5 columns (qid jg jsg docno rel_level), got 4" in err
    assert "bad.prefs:2: rel_level 'high' is not a finite number" in err
    assert "bad.prefs:3: rel_level 'nan' is not a finite number" in err
    mixed = tmp_path / "mixed.prefs"
    mixed.write_text("q u s1 d1 2\nq u s1 d2 0\nq u s2 d2 1\nq u s2 d3 0\n")
    assert cli.main(["eval", "-R", "prefs", str(mixed), str(tmp_path / "r.run")]) == 2
    assert "'d2' has both 0 and non-0 rel_level" in capsys.readouterr().err


def test_usage(tmp_path, capsys):
    (tmp_path / "p.prefs").write_text(RANKING)
    (tmp_path / "r.run").write_text(_run("d1"))
    files = [str(tmp_path / "p.prefs"), str(tmp_path / "r.run")]
    assert cli.main(["eval", "-R", "prefs", "-m", "map", *files]) == 1
    assert "-R prefs takes only the preference measures" in capsys.readouterr().err
    assert cli.main(["eval", "-m", "prefs_simp", *files]) == 1
    assert "preference measures need -R prefs or -R qrels_prefs" in capsys.readouterr().err
    assert cli.main(["eval", "-R", "prefs", *files]) == 0  # default: trec_eval's 'prefs' set
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0].strip() for line in lines][:3] == [
        "runid", "num_q", "prefs_num_prefs_poss"]


def test_both_representations_count_alike():
    """A judgment group of one sub-group is counted by equivalence classes; written as two
    identical sub-groups it goes through the preference matrix instead: the counts agree."""
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from irbench.judgments.preferences import _class_group, _matrix_group

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.integers(0, 3), min_size=2, max_size=12), st.data())
    def check(levels, data):
        n = len(levels)
        order = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
        njr = data.draw(st.integers(0, n))
        level = np.array(levels, dtype=float)
        lines = np.arange(n)
        by_class = np.zeros((n, n), dtype=np.int32)
        by_matrix = np.zeros((n, n), dtype=np.int32)
        ec = _class_group(level, order, njr, by_class, None, lines)
        twice = np.concatenate((np.zeros(n, dtype="S1"), np.ones(n, dtype="S1")))
        pa = _matrix_group(twice, np.tile(level, 2), np.tile(order, 2), n, njr, by_matrix,
                           None, np.tile(lines, 2))
        assert (by_class == by_matrix).all()
        for name in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "num_rel",
                     "num_rel_ret", "num_nonrel", "num_nonrel_ret"):
            assert getattr(ec, name) == getattr(pa, name), name

    check()
