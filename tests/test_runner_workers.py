"""Worker processes die with the process that started them, however it dies."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# a parent that starts a pool the way irbench run does, prints its worker's pid, and waits
PARENT = """
import os, sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from irbench.runner.parallel import die_with_parent

def work():
    return os.getpid()

def hold():
    sys.stdin.read()  # never returns: the worker is busy when its parent dies

with ProcessPoolExecutor(1, mp_context=get_context("fork"), initializer=die_with_parent,
                         initargs=(os.getpid(),)) as pool:
    print(pool.submit(work).result(), flush=True)
    pool.submit(hold)
    sys.stdin.read()
"""


def _wait_gone(pid: int) -> bool:
    """Block until process ``pid`` has exited (pidfd: no polling); False after 60 s."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], 60)
        return bool(ready)
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                    reason="PR_SET_PDEATHSIG and pidfd are Linux's")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP],
                         ids=lambda sig: sig.name)
def test_no_worker_outlives_its_parent(sig):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    worker = int(parent.stdout.readline())
    assert worker != parent.pid
    parent.send_signal(sig)
    parent.wait(timeout=60)
    assert _wait_gone(worker), f"worker {worker} outlived its parent ({sig.name})"
    parent.stdin.close()
    assert parent.stdout.read() == ""  # nothing else holds the pipe: '| cat' ends


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                    reason="PR_SET_PDEATHSIG and pidfd are Linux's")
def test_irbench_eval_workers_die_with_it(tmp_path):
    """Two runs are FIFOs: once this test's open() for writing returns, a worker has opened
    each (so the workers exist and are busy), and nothing here depends on timing."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    fifos = [tmp_path / f"run{i}" for i in range(2)]
    for fifo in fifos:
        os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    parent = subprocess.Popen([sys.executable, "-m", "irbench", "eval", "--workers", "2",
                               str(qrels), *map(str, fifos)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    writers = [open(fifo, "w") for fifo in fifos]  # returns once a worker reads each
    workers = _children(parent.pid)
    assert workers
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=60)
    for worker in workers:
        assert _wait_gone(worker), f"worker {worker} outlived irbench eval"
    for writer in writers:
        try:
            writer.close()
        except BrokenPipeError:
            pass


def test_a_worker_killed_mid_run_is_a_message_naming_the_run():
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from irbench.runner import campaign as runner

    future = Future()
    future.set_exception(BrokenProcessPool("A process in the process pool was terminated"))
    task = runner._Task("sys-a", "runs/a.txt", {})
    outcome = runner._Campaign._result(future, task)
    assert outcome.system == "sys-a" and outcome.error.startswith("runs/a.txt: not scored: a "
                                                                   "worker process was killed")
    assert "GiB" in outcome.error and "next 'irbench run' tries again" in outcome.error
