"""Building the command line's parser (every command but ``irbench eval``, which builds its
own, and an unchanged ``irbench run``, answered from its stamp) imports no heavy module: each
command imports what it needs inside its function. Before: ``compare --across``'s module
imported the comparison at the top (scipy.stats, DuckDB), 1-2 s of every command's start-up
and 2 s of ``irbench run`` scoring one collection of 129 runs (bench/results-collections.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("scipy", "duckdb", "pandas", "matplotlib", "statsmodels", "irbench.store",
         "irbench.notebook", "irbench.runner.campaign", "irbench.stats.across")


@pytest.mark.timeout(120)
def test_building_the_parser_imports_no_heavy_module():
    probe = ("import sys\nfrom irbench.cli import build_parser\nbuild_parser()\n"
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=100)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.timeout(120)
def test_the_runner_and_the_store_modules_import_no_duckdb():
    """DuckDB (90 ms) is imported when a store is first opened: ``irbench run`` on a new store
    has its workers scoring by then (irbench.runner.campaign, the engine's ``meanwhile``)."""
    probe = ("import sys\nimport irbench.cli.campaign, irbench.runner.campaign, irbench.store, "
             "irbench.config\nprint('duckdb' in sys.modules)\n"
             "from irbench.store import Store\nStore(sys.argv[1]).close()\n"
             "print('duckdb' in sys.modules)\n")
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, PYTHONPATH=str(REPO), IRBENCH_CACHE_DIR=folder)
        out = subprocess.run([sys.executable, "-c", probe, os.path.join(folder, "s.duckdb")],
                             env=env, capture_output=True, text=True, timeout=100)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
