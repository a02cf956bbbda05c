"""`irbench eval`, a drop-in for trec_eval called in loops, starts fast: it imports its own
command only (measured in bench/bench_startup.py; here: what it must not import), and its exit
statuses are trec_eval's (a usage error is 1) (issue 16)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from irbench import cli

HEAVY = ("yaml", "duckdb", "scipy", "jinja2", "multiprocessing", "irbench.config",
         "irbench.store", "irbench.runner.stamp", "irbench.submissions", "irbench.stats",
         "irbench.pooling", "irbench.report", "irbench.cli.campaign", "irbench.cli.compare")

PROBE = """
import json, sys
from irbench.cli import main
rc = main(sys.argv[1:])
print(json.dumps([rc, sorted(sys.modules)]))
"""


@pytest.fixture
def small(tmp_path):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d3 2 1.0 r\n")
    return str(qrels), str(run)


def test_eval_imports_only_what_it_needs(small):
    proc = subprocess.run([sys.executable, "-c", PROBE, "eval", *small], capture_output=True,
                          text=True, check=True)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("runid")
    rc, modules = json.loads(lines[-1])
    assert rc == 0
    loaded = [name for name in HEAVY if name in modules]
    assert loaded == []


@pytest.mark.parametrize("argv", [["eval"], ["eval", "--no-such-option", "q", "r"],
                                  ["eval", "-M", "many", "q", "r"]])
def test_eval_usage_errors_exit_1_as_trec_eval(argv, capsys):
    assert cli.main(argv) == 1
    assert "usage: irbench" in capsys.readouterr().err


def test_eval_help_exits_0(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["eval", "--help"])
    assert exc.value.code == 0
    assert "qrels" in capsys.readouterr().out


def test_other_commands_keep_argparse_statuses(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["scores"])
    assert exc.value.code == 2
    capsys.readouterr()
