"""Worker processes die with the process that started them, however it dies."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# a parent that maps on worker processes as irbench run does, prints its worker's pid, and
# waits for the second item, which never ends (it reads a pipe nobody writes)
PARENT = """
import os
from irbench.runner.engine import Processes

def work(item, shared):
    if item == "pid":
        return os.getpid()
    os.read(shared, 1)  # never returns: the worker is busy when its parent dies

hold, _ = os.pipe()
Processes(1).map(work, ["pid", "hold"], hold, lambda item, pid: print(pid, flush=True))
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


def _square_or_die(item: int, shared: int) -> int:
    if item == shared:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    return item * item


def test_a_worker_killed_loses_its_item_only():
    from irbench.runner.engine import Processes, WorkerDied

    got, lost = {}, []

    def on_lost(item, error):
        lost.append((item, error))
        return None

    Processes(2).map(_square_or_die, list(range(8)), 3, got.__setitem__, on_lost)
    assert got == {i: (None if i == 3 else i * i) for i in range(8)}
    assert [item for item, _ in lost] == [3] and isinstance(lost[0][1], WorkerDied)
    assert "exit code -9" in str(lost[0][1])


def test_an_error_in_a_worker_is_raised_here():
    from irbench.runner.engine import Processes

    with pytest.raises(ZeroDivisionError):
        Processes(2).map(lambda item, shared: 1 / item, [2, 1, 0, 4], None, lambda *a: None)


def test_a_worker_killed_mid_run_is_a_message_naming_the_run():
    from irbench.runner.campaign import _lost
    from irbench.runner.engine import Processes, WorkerDied
    from irbench.runner.score import Task

    task = Task(system="sys-a", path="runs/a.txt", wanted={})
    outcome = _lost(task, WorkerDied("worker process 1 ended (exit code -9)"), Processes(2))
    assert outcome.system == "sys-a" and outcome.error.startswith("runs/a.txt: not scored: a "
                                                                   "worker process was killed")
    assert "GiB" in outcome.error and "next 'irbench run' tries again" in outcome.error


def _pid_or_double(item: int, shared: None) -> tuple[int, int]:
    return os.getpid(), item * 2


def _killed(pid: int) -> None:
    """SIGKILL ``pid`` and wait until the kernel has ended it (a zombie until joined)."""
    os.kill(pid, signal.SIGKILL)
    while Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] != "Z":
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_killed_while_idle_costs_nothing(monkeypatch):
    """A worker killed between two items (the OOM killer picks an idle one too): its next
    item goes to a new worker, and every item is computed (review of the engine)."""
    from irbench.runner import engine

    give = engine._Worker.give
    killed = []

    def give_to_a_dead_worker(worker, item):
        if item == 1 and not killed:  # the worker that answered item 0 dies before item 1
            killed.append(worker.process.pid)
            _killed(worker.process.pid)
        return give(worker, item)

    monkeypatch.setattr(engine._Worker, "give", give_to_a_dead_worker)
    got = {}
    engine.Processes(1).map(_pid_or_double, list(range(6)), None,
                            lambda item, result: got.__setitem__(item, result[1]))
    assert killed and got == {i: 2 * i for i in range(6)}


_SERVED_ZERO: list[int] = []  # in a worker: its pid once it has computed item 0


def _zero_then_held(item: int, shared: None) -> tuple[int, int]:
    """Item 0 answered; item 1 held in the worker that computed item 0 until it is killed
    (so its answer cannot come first, whatever the machine's speed); the rest doubled."""
    if item == 0:
        _SERVED_ZERO.append(os.getpid())
    elif item == 1 and _SERVED_ZERO == [os.getpid()]:
        threading.Event().wait()  # until SIGKILL
    return os.getpid(), item * 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_next_item_is_out_before_a_result_is_handled():
    """A worker is given its next item before the result it sent is handled here (the
    runner's writes do not hold it up): a worker killed while the result is handled loses that
    next item only (to ``on_lost``), and every other item is computed."""
    from irbench.runner.engine import Processes

    got, lost = {}, []

    def on_result(item, result):
        if item == 0:  # its worker holds item 1 by now
            _killed(result[0])
        got[item] = result[1]

    Processes(1).map(_zero_then_held, list(range(6)), None, on_result,
                     lambda item, exc: (lost.append(item), (0, None))[1])
    assert lost == [1]
    assert got == {0: 0, 1: None, 2: 4, 3: 6, 4: 8, 5: 10}


def _fail_on_two(item: int, shared: None) -> int:
    if item == 2:
        raise ValueError("two")
    return item


def test_an_error_in_a_worker_leaves_no_worker_behind():
    import multiprocessing

    from irbench.runner.engine import Processes

    with pytest.raises(ValueError, match="two"):
        Processes(2).map(_fail_on_two, [0, 1, 2, 3, 4], None, lambda *a: None)
    assert multiprocessing.active_children() == []


def _released(item: int, done) -> int:
    done.release()
    return item


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks")
def test_meanwhile_runs_while_the_workers_score_the_items_given_ahead():
    """``meanwhile`` (irbench run opening a new store) runs once each worker has AHEAD items
    to do, and before any result is handled: it sees the first 2 x AHEAD items computed (a
    semaphore released by the workers: no timing involved)."""
    import multiprocessing

    from irbench.runner.engine import AHEAD, Processes

    done = multiprocessing.get_context("fork").Semaphore(0)
    items = list(range(8 * AHEAD))
    got: list[int] = []
    seen: list = []

    def meanwhile():
        seen.append(all(done.acquire(timeout=60) for _ in range(2 * AHEAD)))
        seen.append(list(got))

    Processes(2).map(_released, items, done, lambda item, result: got.append(result),
                     meanwhile=meanwhile)
    assert seen == [True, []]
    assert sorted(got) == items


def test_a_worker_killed_with_items_ahead_loses_only_the_one_it_computed():
    """A worker dies on its second item of those given ahead: that item goes to ``on_lost``,
    the ones it had not begun are given to the new worker, and each other item is computed
    once."""
    from irbench.runner.engine import Processes, WorkerDied

    got, lost, calls = {}, [], []

    def on_result(item, result):
        assert item not in got
        got[item] = result

    def on_lost(item, error):
        lost.append((item, error))
        return None

    Processes(2).map(_square_or_die, list(range(16)), 3, on_result, on_lost,
                     meanwhile=lambda: calls.append(len(got)))
    assert calls == [0]
    assert got == {i: (None if i == 3 else i * i) for i in range(16)}
    assert [item for item, _ in lost] == [3] and isinstance(lost[0][1], WorkerDied)


def test_meanwhile_raising_stops_the_workers():
    import multiprocessing

    from irbench.runner.engine import Processes

    def meanwhile():
        raise RuntimeError("the store is held")

    got: list = []
    with pytest.raises(RuntimeError, match="held"):
        Processes(2).map(_square_or_die, list(range(40)), -1,
                         lambda item, result: got.append(item), meanwhile=meanwhile)
    assert got == [] and multiprocessing.active_children() == []
