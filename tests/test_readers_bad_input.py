"""Bad input through ``irbench eval`` in-process, and what the TREC readers accept.

Every input error must end as ``irbench: error: PATH:LINE: reason`` lines on stderr (no
traceback) with exit code 2 for bad files, 1 for unknown measures and 4 for a qrels topic missing
from the run. The reader tests pin down trec_eval 10.0's format rules (see irbench/trec.py).
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irbench
from irbench.cli import main

ROOT = Path(__file__).parent.parent
PREFIX = "irbench: error: "

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\nq2 0 d4 0\n"
RUN = (
    "q1 Q0 d3 1 3.0 tag\nq1 Q0 d2 2 2.0 tag\nq1 Q0 d1 3 1.0 tag\n"
    "q2 Q0 d4 1 2.5 tag\nq2 Q0 d1 2 0.5 tag\nq2 Q0 d9 3 0.25 tag\n"
)
MEASURES = ["-m", "all_trec"]


def _write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return str(path)


def _eval(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["eval", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _assert_errors(err: str, locations: list[str], reason: str | None = None) -> list[str]:
    """Every stderr line is an ``irbench: error:`` line; each ``PATH:LINE`` comes with a reason."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines, "no error message"
    for line in lines:
        assert line.startswith(PREFIX), line
    for location in locations:
        hits = [ln for ln in lines if ln.startswith(f"{PREFIX}{location}: ")]
        assert hits, f"{location} not reported in:\n{err}"
        for hit in hits:
            assert hit[len(PREFIX) + len(location) + 2:].strip(), f"no reason in {hit!r}"
            if reason is not None:
                assert reason in hit, hit
    return lines


def _ok(capsys, *args: str) -> str:
    rc, out, err = _eval(capsys, *args)
    assert rc == 0, err
    assert err == ""
    return out


@pytest.fixture
def qrels(tmp_path) -> str:
    return _write(tmp_path, "qrels.txt", QRELS)


@pytest.fixture
def run(tmp_path) -> str:
    return _write(tmp_path, "run.txt", RUN)


# ---- one bad line: (file, content, bad line number, reason) --------------------------------

GOOD_RUN_LINE = "q1 Q0 d1 1 1.0 tag\n"
GOOD_QRELS_LINE = "q1 0 d1 1\n"


def _bad_score(score: str, **kw):
    return pytest.param("run", f"{GOOD_RUN_LINE}q1 Q0 d2 2 {score} tag\n", 2,
                        "is not a finite number", id=f"score-{score}", **kw)


BAD_LINES = [
    pytest.param("run", f"{GOOD_RUN_LINE}q1 Q0 d2 2 1.0\n", 2, "expected 6 columns",
                 id="run-5-columns"),
    pytest.param("run", f"# comment\n\n{GOOD_RUN_LINE}q1 Q0 d2 2\n", 4, "expected 6 columns",
                 id="run-4-columns-after-comment-and-blank"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}q1 0 d2\n", 2, "expected 4 columns",
                 id="qrels-3-columns"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}q1 0 d2 1 extra\n", 2, "expected 4 columns",
                 id="qrels-5-columns"),
    _bad_score("abc"),
    _bad_score("1.5x"),
    _bad_score("nan"),
    _bad_score("inf"),
    _bad_score("-inf"),
    _bad_score("1e999"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}q1 0 d2 1.5\n", 2, "is not an integer",
                 id="relevance-1.5"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}q1 0 d2 x\n", 2, "is not an integer",
                 id="relevance-x"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}q1 0 d2 99999999999999999999\n", 2, "integer",
                 id="relevance-overflows-int64"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}\nq1 0 d2 1\n", 2, "blank line",
                 id="qrels-blank-line"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}   \t\nq1 0 d2 1\n", 2, "blank line",
                 id="qrels-whitespace-line"),
    pytest.param("qrels", f"{GOOD_QRELS_LINE}  # indented comment\n", 2, "expected 4 columns",
                 id="qrels-indented-hash-is-data"),
]


@pytest.mark.parametrize("kind,content,line,reason", BAD_LINES)
def test_bad_line(kind, content, line, reason, tmp_path, capsys, qrels, run):
    bad = _write(tmp_path, f"bad.{kind}", content)
    args = [bad, run] if kind == "qrels" else [qrels, bad]
    rc, out, err = _eval(capsys, *args)
    assert rc == 2
    assert out == ""
    lines = _assert_errors(err, [f"{bad}:{line}"], reason)
    assert len(lines) == 1


# ---- duplicates ------------------------------------------------------------------------------

DUP_RUN = (
    "q1 Q0 d1 1 1.0 tag\n"   # first occurrence of d1: low score
    "q1 Q0 d2 2 2.0 tag\n"
    "q1 Q0 d3 3 1.5 tag\n"
    "q1 Q0 d1 4 3.0 tag\n"   # later copy of d1 with the top score
    "q2 Q0 d1 1 1.0 tag\n"
)


def test_duplicate_docno_in_run_names_both_lines(tmp_path, capsys, qrels):
    bad = _write(tmp_path, "dup.run", DUP_RUN)
    rc, out, err = _eval(capsys, qrels, bad)
    assert rc == 4  # trec_eval's exit status
    assert out == ""
    [line] = _assert_errors(err, [f"{bad}:4"])
    assert "'d1'" in line and "'q1'" in line and "line 1" in line


def test_duplicates_first_keeps_first_in_file_order(tmp_path, capsys, qrels):
    dup = _write(tmp_path, "dup.run", DUP_RUN)
    lines = DUP_RUN.splitlines(keepends=True)
    first = _write(tmp_path, "first.run", "".join(lines[:3] + lines[4:]))
    last = _write(tmp_path, "last.run", "".join(lines[1:]))
    got = _ok(capsys, "-q", *MEASURES, "--duplicates", "first", qrels, dup)
    assert got == _ok(capsys, "-q", *MEASURES, qrels, first)
    # keeping the highest-scored copy instead would give other numbers
    assert got != _ok(capsys, "-q", *MEASURES, qrels, last)


def test_duplicate_cut_away_by_max_docs_is_no_error(tmp_path, capsys, qrels):
    # ranked: d1 (3.0, line 4), d2, d3, d1 (1.0, line 1); -M 3 cuts the line-1 copy, and
    # trec_eval checks for duplicates after -M
    dup = _write(tmp_path, "dup.run", DUP_RUN)
    _ok(capsys, "-M", "3", qrels, dup)
    rc, _, err = _eval(capsys, "-M", "4", qrels, dup)
    assert rc == 4
    [line] = _assert_errors(err, [f"{dup}:4"])  # lines are named in file order
    assert "line 1" in line


def test_duplicates_beside_other_problems_exit_2(tmp_path, capsys):
    qrels = _write(tmp_path, "dup.qrels", "q1 0 d1 1\nq1 0 d1 0\n")
    run = _write(tmp_path, "bad.run", "q1 Q0 d1 1 high r\n")
    rc, _, err = _eval(capsys, qrels, run)
    assert rc == 2
    _assert_errors(err, [f"{qrels}:2", f"{run}:1"])


def test_duplicate_qrels_rows(tmp_path, capsys, run):
    bad = _write(tmp_path, "dup.qrels", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\nq2 0 d1 1\n")
    rc, out, err = _eval(capsys, bad, run)
    assert rc == 4
    [line] = _assert_errors(err, [f"{bad}:3"])
    assert "'d1'" in line and "line 1" in line


# ---- empty, binary, compressed, missing ------------------------------------------------------

@pytest.mark.parametrize(
    "kind,content,reason",
    [
        ("run", "", "empty run"),
        ("run", "# only a comment\n\n   \n\t# indented comment\n", "empty run"),
        ("qrels", "", "empty qrels"),
        ("qrels", "# only a comment\n", "empty qrels"),
    ],
    ids=["empty-run", "comments-only-run", "empty-qrels", "comments-only-qrels"],
)
def test_empty_file(kind, content, reason, tmp_path, capsys, qrels, run):
    bad = _write(tmp_path, f"empty.{kind}", content)
    rc, out, err = _eval(capsys, *([bad, run] if kind == "qrels" else [qrels, bad]))
    assert rc == 2
    _assert_errors(err, [f"{bad}:1"], reason)


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_binary_file(kind, tmp_path, capsys, qrels, run):
    good = RUN if kind == "run" else QRELS
    bad = _write(tmp_path, f"bin.{kind}", good.encode()[:40] + b"\x00\x01\x02\n" + b"x" * 10)
    line = good.encode()[:40].count(b"\n") + 1
    rc, out, err = _eval(capsys, *([bad, run] if kind == "qrels" else [qrels, bad]))
    assert rc == 2
    _assert_errors(err, [f"{bad}:{line}"], "NUL")


def test_gz_name_but_not_gzip(tmp_path, capsys, qrels):
    bad = _write(tmp_path, "run.txt.gz", RUN)
    rc, out, err = _eval(capsys, qrels, bad)
    assert rc == 2
    _assert_errors(err, [f"{bad}:1"], "gzip")


def test_valid_gzip_run_and_qrels(tmp_path, capsys, qrels, run):
    gz_run = _write(tmp_path, "run.txt.gz", gzip.compress(RUN.encode()))
    gz_qrels = _write(tmp_path, "qrels.gz", gzip.compress(QRELS.encode()))
    plain = _ok(capsys, "-q", *MEASURES, qrels, run)
    assert _ok(capsys, "-q", *MEASURES, qrels, gz_run) == plain
    assert _ok(capsys, "-q", *MEASURES, gz_qrels, gz_run) == plain


def test_missing_file(tmp_path, capsys, qrels):
    missing = str(tmp_path / "nope.run")
    rc, out, err = _eval(capsys, qrels, missing)
    assert rc == 2
    _assert_errors(err, [f"{missing}"], "no such file")


def test_directory(tmp_path, capsys, qrels):
    rc, out, err = _eval(capsys, qrels, str(tmp_path))
    assert rc == 2
    _assert_errors(err, [f"{tmp_path}"], "directory")


# ---- many problems ---------------------------------------------------------------------------

def _many_bad(n: int) -> str:
    return GOOD_RUN_LINE + "".join(f"q1 Q0 e{i} {i} bad{i} tag\n" for i in range(n))


def _many_bad_qrels(n: int) -> str:
    return GOOD_QRELS_LINE + "".join(f"q1 0 e{i} bad{i}\n" for i in range(n))


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_25_bad_lines_show_20_then_a_count(kind, tmp_path, capsys, qrels, run):
    if kind == "run":
        bad = _write(tmp_path, "bad.run", _many_bad(25))
        args, reason = [qrels, bad], "not a finite"
    else:
        bad = _write(tmp_path, "bad.qrels", _many_bad_qrels(25))
        args, reason = [bad, run], "not an integer"
    rc, out, err = _eval(capsys, *args)
    assert rc == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    _assert_errors("\n".join(lines[:20]), [f"{bad}:{n}" for n in range(2, 22)], reason)
    assert lines[20:] == [f"{PREFIX}... and 5 more problems"]


def test_bad_lines_in_two_runs_reported_together(tmp_path, capsys, qrels):
    a = _write(tmp_path, "a.run", f"{GOOD_RUN_LINE}q1 Q0 d2 2 abc tag\n")
    b = _write(tmp_path, "b.run", f"q1 Q0 d2\n{GOOD_RUN_LINE}q1 Q0 d3 2 nan tag\n")
    rc, out, err = _eval(capsys, qrels, a, b)
    assert rc == 2
    assert out == ""
    lines = _assert_errors(err, [f"{a}:2", f"{b}:1", f"{b}:3"])
    assert len(lines) == 3


def test_hidden_problem_count_spans_runs(tmp_path, capsys, qrels):
    a = _write(tmp_path, "a.run", _many_bad(25))
    b = _write(tmp_path, "b.run", _many_bad(25))
    rc, out, err = _eval(capsys, qrels, a, b)
    assert rc == 2
    lines = err.splitlines()
    assert len(lines) == 21
    assert lines[-1] == f"{PREFIX}... and 30 more problems"  # 50 problems, 20 shown


# ---- stdin -----------------------------------------------------------------------------------

def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_stdin_run(monkeypatch, capsys, qrels, run):
    plain = _ok(capsys, "-q", *MEASURES, qrels, run)
    _stdin(monkeypatch, RUN.encode())
    assert _ok(capsys, "-q", *MEASURES, qrels, "-") == plain


def test_stdin_gzip_run(monkeypatch, capsys, qrels, run):
    plain = _ok(capsys, "-q", *MEASURES, qrels, run)
    _stdin(monkeypatch, gzip.compress(RUN.encode()))
    assert _ok(capsys, "-q", *MEASURES, qrels, "-") == plain


def test_stdin_bad_run(monkeypatch, capsys, qrels):
    _stdin(monkeypatch, f"{GOOD_RUN_LINE}{GOOD_RUN_LINE}q1 Q0 d2 2 1.5x tag\n".encode())
    rc, out, err = _eval(capsys, qrels, "-")
    assert rc == 2
    _assert_errors(err, ["<stdin>:3"], "1.5x")


# ---- measures and topics ---------------------------------------------------------------------

@pytest.mark.parametrize("spec,suggestion", [
    ("nDGC@10", "nDCG"), ("mapp", "map"), ("map_cutt.10", "map_cut"),
    ("ndcg_cutt.10", "ndcg_cut"),
])
def test_unknown_measure_suggests(spec, suggestion, capsys, qrels, run):
    rc, out, err = _eval(capsys, "-m", spec, qrels, run)
    assert rc == 1
    assert out == ""
    [line] = _assert_errors(err, [])
    assert f"'{spec}'" in line
    assert "did you mean" in line and suggestion in line


def test_several_unknown_measures_reported_at_once(capsys, qrels, run):
    rc, out, err = _eval(capsys, "-m", "nDGC@10", "-m", "map", "-m", "mapp", "-m", "zzzz",
                         qrels, run)
    assert rc == 1
    lines = _assert_errors(err, [])
    assert len(lines) == 3
    for spec in ("nDGC@10", "mapp", "zzzz"):
        assert any(f"'{spec}'" in line for line in lines), spec


@pytest.mark.parametrize("spec,reason", [("P.0", "positive"), ("P.5,5", "duplicate"),
                                         ("rbp.0.5", "name=value")])
def test_bad_measure_parameters(spec, reason, capsys, qrels, run):
    rc, out, err = _eval(capsys, "-m", spec, qrels, run)
    assert rc == 2
    [line] = _assert_errors(err, [])
    assert reason in line


def test_qrels_topic_missing_from_run(tmp_path, capsys, qrels):
    short = _write(tmp_path, "short.run", "q1 Q0 d1 1 1.0 tag\n")
    rc, out, err = _eval(capsys, qrels, short)
    assert rc == 4
    [line] = _assert_errors(err, [])
    assert short in line and "'q2'" in line and "-c" in line
    out = _ok(capsys, "-c", "-q", "-m", "num_rel", qrels, short)
    assert "num_rel               \tq2\t1\n" in out


def test_real_entry_point_has_no_traceback(tmp_path):
    qrels = _write(tmp_path, "qrels.txt", QRELS)
    bad = _write(tmp_path, "bad.run", f"{GOOD_RUN_LINE}q1 Q0 d2 2 abc tag\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "irbench", "eval", qrels, bad],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    _assert_errors(proc.stderr, [f"{bad}:2"], "abc")


# ---- what the readers accept -----------------------------------------------------------------

def _same_as_plain(tmp_path, capsys, qrels_text: str | bytes, run_text: str | bytes) -> None:
    plain = _ok(capsys, "-q", *MEASURES, _write(tmp_path, "p.qrels", QRELS),
                _write(tmp_path, "p.run", RUN))
    got = _ok(capsys, "-q", *MEASURES, _write(tmp_path, "x.qrels", qrels_text),
              _write(tmp_path, "x.run", run_text))
    assert got == plain


def test_tabs_mixed_whitespace_crlf_no_final_newline(tmp_path, capsys):
    def mangle(text: str) -> str:
        out = []
        for i, line in enumerate(text.splitlines()):
            sep = ["\t", " \t ", "   ", "\x0b", "\x0c"][i % 5]
            out.append(("  " if i % 2 else "") + sep.join(line.split()) + ("\t " if i % 3 else ""))
        return "\r\n".join(out)  # CRLF, and no newline after the last line

    _same_as_plain(tmp_path, capsys, mangle(QRELS), mangle(RUN))


def test_run_comments_skipped(tmp_path, capsys):
    lines = RUN.splitlines(keepends=True)
    run = "# header\n" + lines[0] + "   # indented comment\n\t#tabbed\n" + "".join(lines[1:])
    run += "#q1 Q0 d9 9 9.0 tag\n"  # a commented-out result line
    _same_as_plain(tmp_path, capsys, QRELS, run)


def test_run_extra_fields_ignored(tmp_path, capsys):
    run = "".join(line + " extra fields 1 2\n" for line in RUN.splitlines())
    _same_as_plain(tmp_path, capsys, QRELS, run)


def test_rank_column_ignored(tmp_path, capsys):
    run = "".join(
        " ".join(f[:3] + [str(99 - i)] + f[4:]) + "\n"
        for i, f in enumerate(line.split() for line in RUN.splitlines())
    )
    _same_as_plain(tmp_path, capsys, QRELS, run)


def test_file_order_ignored(tmp_path, capsys):
    _same_as_plain(tmp_path, capsys, "".join(reversed(QRELS.splitlines(keepends=True))),
                   "".join(reversed(RUN.splitlines(keepends=True))))


def test_hash_inside_docno_is_data(tmp_path, capsys):
    qrels = _write(tmp_path, "q", "q1 0 d#1 1\nq1 0 #d2 1\n")
    run = _write(tmp_path, "r", "q1 Q0 d#1 1 2.0 t\nq1 Q0 #d2 2 1.0 t\nq1 Q0 d3 3 0.5 t\n")
    out = _ok(capsys, "-m", "num_ret", "-m", "num_rel_ret", qrels, run)
    assert "num_ret               \tall\t3\n" in out
    assert "num_rel_ret           \tall\t2\n" in out


def test_qrels_indented_hash_line_is_data(tmp_path, capsys):
    # trec_eval reads a qrels line as a comment only when '#' is in column 0
    qrels = _write(tmp_path, "q", "# comment\nq1 0 d1 1\n  #x 0 d1 1\n")
    run = _write(tmp_path, "r", "q1 Q0 d1 1 1.0 t\n")
    assert irbench.read_qrels(qrels).query_id.tolist() == [b"q1", b"#x"]
    rc, _, err = _eval(capsys, qrels, run)
    assert rc == 4 and "'#x'" in err
    out = _ok(capsys, "-c", "-q", "-m", "num_rel", qrels, run)
    assert "num_rel               \t#x\t1\n" in out


def test_topic_ids_are_strings(tmp_path, capsys):
    topics = ["2024-145763", "q1.X", "01", "1", "é", "10"]
    qrels = _write(tmp_path, "q", "".join(f"{t} 0 d{i} 1\n" for i, t in enumerate(topics)))
    run = _write(tmp_path, "r", "".join(
        f"{t} Q0 d{i} 1 1.0 t\n{t} Q0 x 2 0.5 t\n" for i, t in enumerate(topics)))
    ev = irbench.evaluate(qrels, run, ["num_ret", "num_rel"])
    assert ev.topics == tuple(sorted(topics, key=lambda t: t.encode("utf-8")))
    assert list(ev["num_ret"]) == [2] * len(topics)
    out = _ok(capsys, "-q", "-m", "num_rel", qrels, run)
    shown = [line.split("\t")[1] for line in out.splitlines()][:-1]
    assert shown == list(ev.topics)
    assert "01" in shown and "1" in shown  # distinct topics


def test_invalid_utf8_ids_do_not_crash(tmp_path, capsys):
    qrels = _write(tmp_path, "q", b"q1 0 d1 1\n\xff 0 d\xfe 1\n")
    run = _write(tmp_path, "r", b"q1 Q0 d1 1 2 t\n\xff Q0 d\xfe 1 1 t\n")
    out = _ok(capsys, "-q", "-m", "num_rel_ret", qrels, run)
    assert "num_rel_ret           \tall\t2\n" in out


def test_in_memory_inputs_match_files(qrels, run):
    def parsed(text):
        return [line.split() for line in text.splitlines()]

    q_rows = [(f[0], f[2], int(f[3])) for f in parsed(QRELS)]
    r_rows = [(f[0], f[2], float(f[4])) for f in parsed(RUN)]
    q_dict: dict = {}
    for t, d, rel in q_rows:
        q_dict.setdefault(t, {})[d] = rel
    r_dict: dict = {}
    for t, d, s in r_rows:
        r_dict.setdefault(t, {})[d] = s
    measures = ["AP", "nDCG@10", "P@5", "Bpref", "RR", "num_rel_ret", "infAP"]
    want = irbench.evaluate(qrels, run, measures)
    for q, r in [(q_dict, r_dict), (q_rows, r_rows), (q_dict, r_rows), (q_rows, r_dict)]:
        got = irbench.evaluate(q, r, measures)
        assert got.topics == want.topics
        for m in want.values:
            np.testing.assert_array_equal(got.values[m], want.values[m])


def test_ties_broken_by_docno_descending_bytes(tmp_path, capsys):
    # same score: d9 > d10 > d1 as bytes, and 'é' (0xC3..) > 'z'; file order is the reverse
    qrels = _write(tmp_path, "q", "q1 0 d9 1\nq2 0 é 1\n")
    run = _write(tmp_path, "r", "q1 Q0 d1 1 1.0 t\nq1 Q0 d10 2 1.0 t\nq1 Q0 d9 3 1.0 t\n"
                                "q2 Q0 z 1 0.5 t\nq2 Q0 é 2 0.5 t\n")
    out = _ok(capsys, "-q", "-m", "recip_rank", "-m", "relstring.3", qrels, run)
    assert "recip_rank            \tq1\t1.0000\n" in out
    assert "recip_rank            \tq2\t1.0000\n" in out
    qrels2 = _write(tmp_path, "q2", "q1 0 d10 1\nq2 0 z 1\n")
    out = _ok(capsys, "-q", "-m", "recip_rank", qrels2, run)
    assert "recip_rank            \tq1\t0.5000\n" in out
    assert "recip_rank            \tq2\t0.5000\n" in out


def test_line_numbers_across_parsing_chunks(tmp_path, capsys, monkeypatch, qrels):
    """Long files are parsed in chunks, fast-path and line-by-line; line numbers must hold."""
    good = "".join(f"q1 Q0 e{i} {i} {1000 - i}.5 tag\n" for i in range(300))
    lines = good.splitlines(keepends=True)
    bad_at = [5, 150, 151, 299]
    for n in bad_at:
        lines[n - 1] = f"q1 Q0 bad{n} {n} x{n} tag\n"
    plain = _write(tmp_path, "good.run", good)
    bad = _write(tmp_path, "bad.run", "".join(lines))
    whole = _ok(capsys, "-c", "-q", *MEASURES, qrels, plain)
    monkeypatch.setattr("irbench.trec.text.CHUNK", 97)
    assert _ok(capsys, "-c", "-q", *MEASURES, qrels, plain) == whole
    rc, _, err = _eval(capsys, qrels, bad)
    assert rc == 2
    reported = _assert_errors(err, [f"{bad}:{n}" for n in bad_at], "not a finite")
    assert len(reported) == len(bad_at)


@pytest.mark.parametrize("qrels_data,run_data,where", [
    ({"q1": {"d1": 1}}, {"q1": {"d1": float("inf")}}, "<run>:1"),
    ({"q1": {"d1": 1}}, [("q1", "d1")], "<run>:1"),
    ({"q1": {"d1": 1.5}}, {"q1": {"d1": 1.0}}, "<qrels>:1"),
    pytest.param({"q1": {"d1": "x"}}, {"q1": {"d1": 1.0}}, "<qrels>:1", id="relevance-str"),
    pytest.param({"q1": {"d1": 2**70}}, {"q1": {"d1": 1.0}}, "<qrels>:1", id="relevance-big"),
    pytest.param({"q1": {"d1": 1}}, {"q1": {"d1": "abc"}}, "<run>:1", id="score-str"),
    pytest.param({"q1": {"d1": 1}}, {"q1": {"d1": None}}, "<run>:1", id="score-None"),
], ids=["score-inf", "two-values", "relevance-1.5", "relevance-str", "relevance-big",
        "score-str", "score-None"])
def test_bad_in_memory_values_raise_format_error(qrels_data, run_data, where):
    with pytest.raises(irbench.FormatError) as info:
        irbench.evaluate(qrels_data, run_data, ["AP"])
    assert str(info.value).startswith(f"{where}: ")


def test_qrels_and_run_problems_reported_together(tmp_path, capsys):
    qrels = _write(tmp_path, "bad.qrels", "q1 0 d1 x\n")
    run = _write(tmp_path, "bad.run", "q1 Q0 d1 1 abc tag\n")
    rc, out, err = _eval(capsys, qrels, run)
    assert rc == 2
    _assert_errors(err, [f"{qrels}:1", f"{run}:1"])


@pytest.mark.parametrize("level,reason", [
    ("99999999999999", "relevance 99999999999999 is out of the integer range"),
    ("-99999999999999", "relevance -99999999999999 is out of the integer range"),
    ("2000000000", "relevance 2000000000 is too high: irbench counts judgments per topic and "
                   "level, and with 2 topics levels up to 33,554,431 fit"),
])
def test_a_huge_relevance_level_is_refused_with_its_line(tmp_path, capsys, level, reason):
    qrels = _write(tmp_path, "q.txt", f"1 0 d1 1\n2 0 d2 {level}\n2 0 d3 0\n")
    run = _write(tmp_path, "r.txt", "1 Q0 d1 1 1.0 r\n2 Q0 d2 1 1.0 r\n")
    code, out, err = _eval(capsys, qrels, run)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"irbench: error: {qrels}:2: {reason}")


def test_levels_of_a_few_hundred_are_counted(tmp_path, capsys):
    qrels = _write(tmp_path, "q.txt", "1 0 d1 300\n1 0 d2 1\n")
    run = _write(tmp_path, "r.txt", "1 Q0 d2 1 2.0 r\n1 Q0 d1 2 1.0 r\n")
    assert "ndcg                  \tall\t" in _ok(capsys, "-m", "ndcg", qrels, run)


@pytest.mark.parametrize("where", ["run", "qrels"])
@pytest.mark.parametrize("what,size", [("docno", 1 << 20), ("topic id", 1025)])
def test_an_overlong_id_is_a_line_error(tmp_path, capsys, where, what, size):
    long = "x" * size
    qid, doc = (long, "d2") if what == "topic id" else ("2", long)
    qrels = "1 0 d1 1\n" + (f"{qid} 0 {doc} 1\n" if where == "qrels" else "2 0 d2 1\n")
    run = "1 Q0 d1 1 1.0 r\n" + (f"{qid} Q0 {doc} 1 1.0 r\n" if where == "run"
                                 else "2 Q0 d2 1 1.0 r\n")
    q, r = _write(tmp_path, "q.txt", qrels), _write(tmp_path, "r.txt", run)
    code, out, err = _eval(capsys, q, r)
    path = q if where == "qrels" else r
    assert code == 2 and out == ""
    assert err == (f"irbench: error: {path}:2: {what} of {size:,} bytes: irbench takes topic "
                   "ids and docnos of at most 1,024 bytes\n")


def test_ids_of_the_largest_length_are_read(tmp_path, capsys):
    doc = "d" * 1024
    q = _write(tmp_path, "q.txt", f"1 0 {doc} 1\n")
    r = _write(tmp_path, "r.txt", f"1 Q0 {doc} 1 1.0 r\n")
    assert "map                   \tall\t1.0000" in _ok(capsys, "-m", "map", q, r)


def test_a_gzip_bomb_is_refused_before_it_is_expanded(tmp_path, capsys, monkeypatch):
    import irbench.trec as trec

    monkeypatch.setattr(trec.sources, "GUNZIP_FLOOR", 1 << 16)
    bomb = gzip.compress(b"1 Q0 d1 1 1.0 r\n" * (1 << 16))  # 1 MiB from a few KiB
    assert len(bomb) * trec.GUNZIP_RATIO < (1 << 20)
    r = _write(tmp_path, "r.txt.gz", bomb)
    q = _write(tmp_path, "q.txt", "1 0 d1 1\n")
    code, out, err = _eval(capsys, q, r)
    assert code == 2 and err.startswith(f"irbench: error: {r}:1: gzip file expands to more than")


def test_gzip_files_of_several_members_are_read_whole(tmp_path, capsys):
    r = _write(tmp_path, "r.txt.gz", gzip.compress(b"1 Q0 d1 1 2.0 r\n")
               + gzip.compress(b"1 Q0 d2 2 1.0 r\n"))
    q = _write(tmp_path, "q.txt", "1 0 d2 1\n")
    assert "num_ret               \tall\t2" in _ok(capsys, "-m", "num_ret", q, r)


@pytest.mark.parametrize("content,reason", [
    (b"1 Q0 d1 1 2.0 r\r1 Q0 d2 2 1.0 r\r2 Q0 d3 1 1.0 r\r",
     "18 fields on one line: its lines end in a bare carriage return (CR); end them with "
     "newlines"),
    (b"1 Q0 d1 1 2.0 r 1 Q0 d2 2 1.0 r\n",
     "12 fields on one line: several results run together? (a result line has 6 fields)"),
])
def test_results_run_together_on_one_line_are_an_error(tmp_path, capsys, content, reason):
    """trec_eval reads the first six fields and scores one result (a documented difference)."""
    q = _write(tmp_path, "q.txt", "1 0 d1 1\n2 0 d3 1\n")
    r = _write(tmp_path, "r.txt", content)
    code, out, err = _eval(capsys, q, r)
    assert code == 2 and err == f"irbench: error: {r}:1: {reason}\n"


def test_crlf_and_one_extra_field_are_still_read(tmp_path, capsys):
    q = _write(tmp_path, "q.txt", "1 0 d1 1\n")
    r = _write(tmp_path, "r.txt", b"1 Q0 d1 1 2.0 r extra\r\n1 Q0 d2 2 1.0 r\r\n")
    assert "num_ret               \tall\t2" in _ok(capsys, "-m", "num_ret", q, r)


def test_format_characters_are_shown_escaped_on_terminals():
    import sys
    import unicodedata

    from irbench.escaping import terminal

    formats = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    shown = [terminal(f"a{c}b") for c in formats]
    assert all(s.startswith("a\\u") or s.startswith("a\\U") for s in shown)  # all of them
    assert terminal("tag\u202eexe.txt") == "tag\\u202eexe.txt"  # a bidi override
    assert terminal("\U000e0041") == "\\U000e0041"
    assert terminal("日本語 café") == "日本語 café"  # letters stay letters
