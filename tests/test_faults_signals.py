"""Signals at the worst moments, made deterministic (issue 38): each case sends the signal
from a seam at the very point of its window (a fork handler, the folder's creation, its
removal, a worker holding a spill folder), never after a sleep.

- Ctrl-C that lands in a worker process before it has set its own handlers (random's
  reseeding after fork runs there first) printed a traceback from ``random.py ... seed``:
  the workers now start with SIGINT and SIGTERM blocked until their handlers are set.
- SIGTERM between the creation of a spill folder and the registration of its removal, or
  during its removal, or to a worker process holding one, left the folder (swept only by
  the next run): the run itself now removes it in every case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from campaigns import make_campaign

REPO = Path(__file__).resolve().parent.parent

# every worker process receives Ctrl-C as the first thing it runs after the fork (after
# random's reseeding, registered at import, before multiprocessing's bootstrap); the parent
# is interrupted once a system is scored
CTRL_C_IN_EVERY_NEW_WORKER = """
import os, signal, sys
from irbench import cli
from irbench.runner import campaign

os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGINT))
campaign.PARALLEL_MIN_BYTES = 0  # worker processes even for a small campaign
real = campaign.outcome_record

def record(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)

campaign.outcome_record = record
sys.exit(cli.main(["run", "--workers", "2", "--quiet", sys.argv[1]]))
"""


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), IRBENCH_CACHE_DIR=str(tmp_path / "cache"),
                **more)


@pytest.mark.timeout(120)
def test_ctrl_c_landing_in_a_starting_worker_prints_no_traceback(tmp_path):
    config = make_campaign(tmp_path / "camp", systems=6, extra_qrels=False)
    proc = subprocess.run([sys.executable, "-c", CTRL_C_IN_EVERY_NEW_WORKER, str(config)],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=100)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert "irbench: interrupted: what was complete is kept" in proc.stderr
    rerun = subprocess.run([sys.executable, "-m", "irbench", "run", "--quiet", "--workers",
                            "1", str(config)], capture_output=True, text=True,
                           env=_env(tmp_path), timeout=100)
    assert rerun.returncode == 0, rerun.stderr


# SIGTERM sent by this process to itself at a named point of a sharded run's spill folder
SIGTERM_AT = """
import os, shutil, signal, sys, tempfile
from irbench import cli

where = sys.argv[2]
real_mkdtemp, real_rmtree = tempfile.mkdtemp, shutil.rmtree

def mkdtemp(*args, **kwargs):  # the folder exists, its removal is not registered yet
    made = real_mkdtemp(*args, **kwargs)
    if where == "made" and "irbench-shards-" in made:
        os.kill(os.getpid(), signal.SIGTERM)
    return made

def rmtree(path, *args, **kwargs):  # the removal has begun: one file gone
    if where == "removing" and "irbench-shards-" in str(path):
        for name in sorted(os.listdir(path))[:1]:
            os.remove(os.path.join(path, name))
        os.kill(os.getpid(), signal.SIGTERM)
    return real_rmtree(path, *args, **kwargs)

tempfile.mkdtemp, shutil.rmtree = mkdtemp, rmtree
sys.exit(cli.main(["run", "--workers", "1", "--quiet", sys.argv[1]]))
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["made", "removing"])
def test_sigterm_around_a_spill_folder_leaves_nothing(tmp_path, where):
    """'made': the signal comes after the folder is made and before anything would remove
    it; 'removing': while it is being removed. Either way the run removes it, then ends as a
    terminated run does (143, a message, no traceback)."""
    config = make_campaign(tmp_path / "camp", systems=1, extra_qrels=False)
    spill = tmp_path / "tmp"
    spill.mkdir()
    size = (tmp_path / "camp" / "runs" / "r00.txt").stat().st_size
    env = _env(tmp_path, TMPDIR=str(spill), IRBENCH_SHARD_BYTES=str(size // 3))
    proc = subprocess.run([sys.executable, "-c", SIGTERM_AT, str(config), where],
                          capture_output=True, text=True, env=env, timeout=100)
    assert proc.returncode == 143, proc.stderr
    assert "irbench: terminated: what was complete is kept" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(spill.iterdir()) == []


# a worker process holding a sharded run's spill folder sends SIGTERM to irbench and waits:
# irbench, terminated, stops its workers with SIGTERM, which must remove their folders
SIGTERM_FROM_A_WORKER = """
import os, signal, sys
from irbench import cli
from irbench.runner import campaign, shards

campaign.PARALLEL_MIN_BYTES = 0
parent = os.getpid()
real = shards._Spill._add

def add(self, columns):
    real(self, columns)
    if os.getpid() != parent:  # a worker, its spill folder made and written to
        os.kill(parent, signal.SIGTERM)
        signal.pause()  # until irbench stops this worker

shards._Spill._add = add
sys.exit(cli.main(["run", "--workers", "2", "--quiet", sys.argv[1]]))
"""


@pytest.mark.timeout(120)
def test_sigterm_while_a_worker_holds_a_spill_folder_leaves_nothing(tmp_path):
    config = make_campaign(tmp_path / "camp", systems=2, extra_qrels=False)
    spill = tmp_path / "tmp"
    spill.mkdir()
    size = min(p.stat().st_size for p in (tmp_path / "camp" / "runs").glob("r*.txt"))
    env = _env(tmp_path, TMPDIR=str(spill), IRBENCH_SHARD_BYTES=str(size // 3))
    proc = subprocess.run([sys.executable, "-c", SIGTERM_FROM_A_WORKER, str(config)],
                          capture_output=True, text=True, env=env, timeout=100)
    assert proc.returncode == 143, proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(spill.iterdir()) == []
