"""A closed stdout (``irbench ... | head``, a reader that exits) loses no data and leaves no
traceback (issue 37): every command stores what it stores before it prints, and ``irbench``
then exits with status 141 (128 + SIGPIPE, what a shell reports for ``seq`` in ``seq 100000 |
head -1``), silently.

Real ``python -m irbench`` subprocesses with stdout a real pipe, made deterministic without a
sleep: either the pipe's read end is closed before irbench starts (its first write meets
EPIPE, whatever it writes: a reader that has exited), or the pipe is shrunk to one page and
the output is larger than the pipe and what the reader takes (the reader reads its first
bytes, then closes, as ``head -c 100`` does). Each runs with Python's default buffered stdout
and unbuffered (``PYTHONUNBUFFERED=1``, as this machine's environment sets it): the write that
meets EPIPE is a different one, the outcome must not be.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from campaigns import make_campaign, simulated_with_judge, write_run
from chat_server import ChatServer, rule_simulated

from irbench import cli
from irbench.config import load_config
from irbench.runner.stamp import stamp_path
from irbench.store import Store

CLOSED_PIPE = 141
TIMEOUT = 120
PAGE = 4096  # the smallest pipe Linux makes
LONG_NAMES = 80  # runs with 150-character names: pool build prints ~15 KB, more than a pipe


@pytest.fixture(params=["buffered", "unbuffered"])
def env(request) -> dict[str, str]:
    """The child's environment: stdout buffered (Python's default) or not."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if request.param == "unbuffered":
        env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def campaign(tmp_path) -> Path:
    """A campaign of 82 runs, 80 with long names: what pool build prints is 4 pages."""
    config = make_campaign(tmp_path / "camp", systems=2, topics=3, depth=10)
    import numpy as np

    rng = np.random.default_rng(5)
    for i in range(LONG_NAMES):
        write_run(config.parent.parent / "runs" / f"r-{i:03d}-{'x' * 150}.txt", rng,
                  ["t01", "t02", "t03"], 10, f"long{i:03d}")
    return config


def _argv(*args) -> list[str]:
    return [sys.executable, "-m", "irbench", *map(str, args)]


def closed_stdout(*args, env, stderr_too: bool = False) -> subprocess.CompletedProcess:
    """irbench with stdout a pipe nobody reads any more: its read end is closed before irbench
    starts, so its first write to stdout meets EPIPE (``stderr_too``: stderr the same pipe,
    as ``2>&1 | head`` after head has exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(_argv(*args), stdout=write,
                              stderr=write if stderr_too else subprocess.PIPE, env=env,
                              timeout=TIMEOUT, text=True)
    finally:
        os.close(write)


def head(*args, env, take: int = 100) -> tuple[bytes, int, str]:
    """irbench ... | head -c ``take``: a pipe of one page, read until its first bytes come,
    then closed; (those bytes, the exit status, stderr)."""
    if not hasattr(fcntl, "F_SETPIPE_SZ"):
        pytest.skip("needs Linux's F_SETPIPE_SZ to make the pipe smaller than the output")
    read, write = os.pipe()
    with contextlib.ExitStack() as stack:
        stack.callback(os.close, read)
        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, PAGE)
        err = stack.enter_context(tempfile.TemporaryFile())
        try:
            proc = subprocess.Popen(_argv(*args), stdout=write, stderr=err, env=env)
        finally:
            os.close(write)
        try:
            first = os.read(read, take)  # the first write of irbench (b"" if it wrote none)
        finally:
            os.close(read)  # head has its bytes: the reader is gone
            stack.pop_all()
            code = proc.wait(timeout=TIMEOUT)
        err.seek(0)
        return first, code, err.read().decode("utf-8", "replace")


def clean(stderr: str) -> bool:
    """No traceback and no "Exception ignored" from the interpreter's last flush."""
    return "Traceback" not in stderr and "Exception ignored" not in stderr


def closed_cleanly(done: subprocess.CompletedProcess) -> None:
    """Exit status 141, no traceback (asserted after the data: what a test names first is
    what was kept)."""
    assert done.returncode == CLOSED_PIPE and clean(done.stderr or ""), \
        f"exit {done.returncode}: {done.stderr}"


def ok(*args, env) -> str:
    """irbench with a stdout that is read to the end: its output (exit 0 asserted)."""
    done = subprocess.run(_argv(*args), capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _pool_size(config: Path, name: str) -> int | None:
    with Store(load_config(str(config)).store, read_only=True) as store:
        docs = store.pool_documents(name)
    return None if docs is None else len(docs[0])


# ---- pool build: the case of the issue ------------------------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_pool_build_piped_into_head_stores_the_pool(campaign, env):
    first, code, err = head("pool", "build", campaign, "--param", "k=5", "--name", "p",
                            env=env)
    assert first.startswith(b"depth pool (seed 0): ")  # it printed, and was cut
    assert _pool_size(campaign, "p") > 0  # before: no pool in the store (exit 0 or 120)
    assert code == CLOSED_PIPE and clean(err), f"exit {code}: {err}"
    # the same pool a command with its stdout read to the end builds
    assert "depth pool (seed 0)" in ok("pool", "build", campaign, "--param", "k=5", "--name",
                                       "q", env=env)
    assert _pool_size(campaign, "p") == _pool_size(campaign, "q")


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("stderr_too", [False, True], ids=["stdout", "stdout+stderr"])
def test_pool_build_into_a_closed_pipe_stores_the_pool_and_its_files(campaign, env, tmp_path,
                                                                     stderr_too):
    done = closed_stdout("pool", "build", campaign, "--param", "k=5", "--name", "p", "-o",
                         tmp_path / "assess", env=env, stderr_too=stderr_too)
    assert _pool_size(campaign, "p") > 0
    assert sorted(p.name for p in (tmp_path / "assess").iterdir())  # the assessor files
    closed_cleanly(done)


# ---- a pool judged over days ------------------------------------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_start_next_judge_into_a_closed_pipe_keep_every_step(campaign, env, tmp_path):
    status = ("pool", "status", campaign, "--name", "p")
    done = closed_stdout("pool", "start", campaign, "--name", "p", "--param", "k=2", env=env)
    assert "0 judged, 0 handed out" in ok(*status, env=env)
    closed_cleanly(done)

    batch = tmp_path / "batch.txt"
    done = closed_stdout("pool", "next", campaign, "--name", "p", "-o", batch, "--batch", "4",
                         env=env)
    lines = batch.read_text().splitlines()
    assert len(lines) == 4 and f"0 judged, {len(lines)} handed out" in ok(*status, env=env)
    closed_cleanly(done)

    filled = tmp_path / "filled.txt"
    filled.write_text("".join(line.rsplit(" ", 1)[0] + " 1\n" for line in lines))
    done = closed_stdout("pool", "judge", campaign, "--name", "p", "-j", filled, env=env)
    assert "4 judged, 0 handed out" in ok(*status, env=env)
    closed_cleanly(done)


@pytest.mark.timeout(TIMEOUT)
def test_add_assessor_into_a_closed_pipe_keeps_the_assessor(campaign, env):
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    ok("pool", "start", campaign, "--name", "p", "--param", "k=2", env=env)
    done = closed_stdout("assess", campaign, "--pool", "p", "--add-assessor", "ann", env=env)
    with Store(load_config(str(campaign)).store, read_only=True) as store:
        assert [a.name for a in store.assessors("p")] == ["ann"]
    closed_cleanly(done)


# ---- qrels: imported, and written from the store ----------------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_qrels_import_and_export_into_a_closed_pipe(campaign, env, tmp_path):
    qrels = campaign.parent.parent / "runs" / "qrels.txt"
    done = closed_stdout("qrels", campaign, "--import", qrels, "--as", "nist", env=env)
    store = load_config(str(campaign)).store
    with Store(store, read_only=True) as s:
        assert len(s.judgment_columns(None, ["nist"])["judge"]) == len(
            qrels.read_text().splitlines())
    closed_cleanly(done)

    written = tmp_path / "out.qrels"
    done = closed_stdout("qrels", campaign, "--judge", "nist", "-o", written, env=env)
    assert sorted(written.read_text().splitlines()) == sorted(qrels.read_text().splitlines())
    with Store(store, read_only=True) as s:  # the file's provenance was recorded too
        assert s.con.execute("SELECT path, judges FROM qrels_made").fetchall() == [
            (str(written), ["nist"])]
    closed_cleanly(done)

    closed_cleanly(closed_stdout("qrels", campaign, "--judge", "nist", env=env))  # a read


# ---- irbench run: the scores and the stamp ------------------------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_run_into_a_closed_pipe_stores_scores_and_stamp(tmp_path, env):
    config = make_campaign(tmp_path / "small")
    done = closed_stdout("run", config, "--workers", "1", env=env)
    assert "irbench run: 4 systems x 2 qrels sets" in done.stderr  # stderr is not the pipe
    with Store(load_config(str(config)).store, read_only=True) as store:
        _, rows = store.means("official", measures=["AP"])
    assert sorted(r[0] for r in rows) == ["r00", "r01", "r02", "r03"]
    assert os.path.exists(stamp_path(str(config)))  # before: the stamp was lost
    # the stamp answers the next run: nothing evaluated again, the same leaderboard
    again = subprocess.run(_argv("run", config), capture_output=True, text=True, env=env,
                           timeout=TIMEOUT)
    assert again.returncode == 0 and ": 0 evaluated" in again.stderr, again.stderr
    assert again.stdout.startswith("top 4 of 4 systems on qrels 'official'")
    closed_cleanly(done)


# ---- irbench judge: a model's answers -----------------------------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_judge_into_a_closed_pipe_keeps_the_answers(tmp_path, env):
    with ChatServer(rule_simulated, api_key="sk-test-pipe") as server:
        judge = {"base_url": server.base_url, "model": "stand-in-8b",
                 "api_key_env": "STANDIN_KEY", "concurrency": 2, "backoff": 0, "retries": 1}
        config = simulated_with_judge(tmp_path / "camp", {"standin": judge}, groups=2,
                                      topics=3, depth=3, seed=4)
        assert cli.main(["pool", "build", str(config), "--param", "k=3", "--name", "d"]) == 0
        done = closed_stdout("judge", config, "--judge", "standin", "--pool", "d",
                             env={**env, "STANDIN_KEY": "sk-test-pipe"})
        calls = server.calls
    with Store(str(config.parent / "campaign.duckdb"), read_only=True) as store:
        judged = len(store.judgment_columns("d", ["standin"])["judge"])
        size = len(store.pool_documents("d")[0])
    assert judged == size == calls > 0
    closed_cleanly(done)


# ---- commands that only read: the same exit, no traceback ---------------------------------------


@pytest.mark.timeout(TIMEOUT)
def test_eval_piped_into_head(tmp_path):
    """Buffered stdout only: irbench eval writes its output in one write, and Python's
    unbuffered stdout takes the short count a pipe closed in the middle of it returns as done
    (CPython's text layer does not write the rest, so no EPIPE follows); the closed pipe of
    test_reading_commands_into_a_closed_pipe covers eval there."""
    config = make_campaign(tmp_path / "small", depth=50)
    runs = config.parent.parent / "runs"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    first, code, err = head("eval", "-q", "-m", "all_trec", runs / "qrels.txt",
                            runs / "r00.txt", env=env)
    assert first.startswith(b"num_ret") and code == CLOSED_PIPE and clean(err), err


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("args", [("eval", "-q", "{runs}/qrels.txt", "{runs}/r00.txt"),
                                  ("measures",), ("pool", "strategies"), ("scores", "{c}"),
                                  ("systems", "{c}")], ids=lambda a: " ".join(a[:2]))
def test_reading_commands_into_a_closed_pipe(tmp_path, env, args):
    config = make_campaign(tmp_path / "small")
    if "{c}" in args:
        ok("run", config, "--quiet", env=env)
    runs = str(config.parent.parent / "runs")
    closed_cleanly(closed_stdout(*[a.replace("{c}", str(config)).replace("{runs}", runs)
                                   for a in args], env=env))


def test_a_broken_pipe_that_is_not_the_output_is_not_hidden(monkeypatch):
    """A BrokenPipeError from another pipe (a worker's, a socket's) is a failure to see,
    never taken for a closed stdout (here stdout is pytest's capture, no pipe at all)."""
    from irbench.cli import measures

    def broken(args) -> int:
        raise BrokenPipeError(32, "a worker's pipe")

    monkeypatch.setattr(measures, "_cmd_measures", broken)
    with pytest.raises(BrokenPipeError):
        cli.main(["measures"])
    assert cli.CLOSED_PIPE == CLOSED_PIPE
