"""Systems given as commands (issue 41): irbench.runner.commands with real subprocesses (small
Python scripts run by sys.executable)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from irbench.errors import CommandError, IrbenchError
from irbench.runner.commands import (
    CommandSpec,
    command_argv,
    command_key,
    execute,
    placeholders_used,
)

pytestmark = pytest.mark.timeout(60)  # every test; the subprocess ones say so again

PY = sys.executable
RUN_LINE = "1 Q0 d1 1 1.0 sys\n"


def _script(folder, name: str, text: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _spec(tmp_path, script: str, args: str = "{run}", **kw) -> CommandSpec:
    return CommandSpec(f"{PY} {script} {args}", cwd=str(tmp_path), **kw)


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (a container's init may never reap one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_gone(pids: list[int]) -> list[int]:
    """The pids still alive once all are gone or 20 s passed (the test's timeout bounds it)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.02)
    return [pid for pid in pids if _alive(pid)]


def _wait_for(path) -> None:
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def _leftovers(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if ".partial-" in name)


# ---- execution -----------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_a_command_writing_a_run_is_ok(tmp_path):
    script = _script(tmp_path, "bm25.py", f"""
        import sys
        total = sum(i * i for i in range(300000))  # some CPU time
        open(sys.argv[1], "w").write({RUN_LINE!r})
        """)
    run_path = tmp_path / "runs" / "bm25.txt"  # its folder is made
    outcome = execute(_spec(tmp_path, script), {}, str(run_path))
    assert outcome.status == "ok" and outcome.ok and outcome.exit_code == 0
    assert run_path.read_text() == RUN_LINE
    assert outcome.wall_seconds > 0 and outcome.cpu_seconds > 0
    assert outcome.peak_rss_bytes > 1 << 20  # a Python process: megabytes, not kilobytes
    assert outcome.argv == (PY, script, str(run_path))
    assert _leftovers(run_path.parent) == []
    env = outcome.environment()
    assert env["implementation"]["executable"]["cmd"].startswith(PY)
    platform = env["platform"]
    assert platform["hardware"]["cpu"]["number of cores"] == os.cpu_count()
    assert any(lib.startswith("irbench==") for lib in platform["software"]["libraries"]["python"])
    assert platform["operating system"]["kernel"]


@pytest.mark.timeout(60)
def test_a_failing_command_leaves_the_old_run_as_it_was(tmp_path):
    script = _script(tmp_path, "bad.py", """
        import sys
        open(sys.argv[1], "w").write("half a run")
        sys.stderr.write("Traceback: the index is missing\\n")
        sys.exit(3)
        """)
    run_path = tmp_path / "run.txt"
    run_path.write_bytes(b"the older run\n")
    outcome = execute(_spec(tmp_path, script), {}, str(run_path))
    assert (outcome.status, outcome.exit_code) == ("failed", 3)
    assert "the index is missing" in outcome.stderr_tail
    assert run_path.read_bytes() == b"the older run\n"
    assert _leftovers(tmp_path) == []


@pytest.mark.timeout(60)
def test_a_command_that_cannot_start_fails_with_a_message(tmp_path):
    outcome = execute(CommandSpec("no-such-program-irbench {run}", cwd=str(tmp_path)), {},
                      str(tmp_path / "run.txt"))
    assert (outcome.status, outcome.exit_code) == ("failed", 127)
    assert "no-such-program-irbench" in outcome.stderr_tail
    assert not (tmp_path / "run.txt").exists()


@pytest.mark.timeout(60)
def test_a_command_past_its_timeout_is_stopped_with_its_whole_group(tmp_path):
    pids = tmp_path / "pids"
    script = _script(tmp_path, "hang.py", f"""
        import os, sys, time
        child = os.fork()  # a child in the command's group (a fork: quick, well within 1 s)
        if child == 0:
            time.sleep(60)
            os._exit(0)
        open(sys.argv[1], "w").write("partial")
        open({str(pids)!r} + ".tmp", "w").write(f"{{os.getpid()}} {{child}}")
        os.rename({str(pids)!r} + ".tmp", {str(pids)!r})
        time.sleep(60)
        """)
    run_path = tmp_path / "run.txt"
    outcome = execute(_spec(tmp_path, script, timeout=1.0), {}, str(run_path), grace=1.0)
    assert outcome.status == "timeout"
    assert not run_path.exists() and _leftovers(tmp_path) == []
    command, child = map(int, pids.read_text().split())
    assert _wait_gone([command, child]) == []


@pytest.mark.timeout(60)
def test_a_command_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    script = _script(tmp_path, "stubborn.py", """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
        """)
    outcome = execute(_spec(tmp_path, script, timeout=1.0), {}, str(tmp_path / "r"),
                      grace=0.5)
    assert outcome.status == "timeout" and outcome.exit_code == -signal.SIGKILL


@pytest.mark.timeout(60)
@pytest.mark.parametrize("body", ["pass", "open(sys.argv[1], 'w').close()"],
                         ids=["nothing", "an empty file"])
def test_exit_0_without_a_run_is_no_output(tmp_path, body):
    script = _script(tmp_path, "quiet.py", f"import sys\n{body}\n")
    run_path = tmp_path / "run.txt"
    run_path.write_text("older\n")
    outcome = execute(_spec(tmp_path, script), {}, str(run_path))
    assert (outcome.status, outcome.exit_code) == ("no-output", 0)
    assert run_path.read_text() == "older\n" and _leftovers(tmp_path) == []


@pytest.mark.timeout(60)
def test_a_path_with_spaces_stays_one_argument(tmp_path):
    folder = tmp_path / "my collection"
    folder.mkdir()
    topics = folder / "topics file.txt"
    topics.write_text("1 query\n")
    script = _script(tmp_path, "args.py", """
        import json, sys
        out = sys.argv[sys.argv.index("--out") + 1]
        open(out, "w").write(json.dumps(sys.argv[1:]))
        """)
    spec = _spec(tmp_path, script, "--topics {topics} --name '{collection} x' --out {run}")
    run_path = folder / "run file.txt"
    outcome = execute(spec, {"topics": str(topics), "collection": "dl 19"}, str(run_path))
    assert outcome.status == "ok"
    args = __import__("json").loads(run_path.read_text())
    assert args[:4] == ["--topics", str(topics), "--name", "dl 19 x"]
    assert args[4] == "--out" and args[5].startswith(str(run_path) + ".partial-")
    assert outcome.argv[-1] == str(run_path)


@pytest.mark.timeout(60)
def test_stderr_keeps_only_its_last_4_kb(tmp_path):
    script = _script(tmp_path, "noisy.py", """
        import sys
        for i in range(1024):
            sys.stderr.write(f"{i:04d}" + "x" * 1020)
        sys.stderr.write("THE END")
        sys.exit(1)
        """)
    outcome = execute(_spec(tmp_path, script), {}, str(tmp_path / "r"))
    assert outcome.status == "failed"
    expected = "".join(f"{i:04d}" + "x" * 1020 for i in range(1024)) + "THE END"
    assert outcome.stderr_tail == expected[-4096:]


@pytest.mark.timeout(60)
def test_undecodable_stderr_is_replaced_not_raised(tmp_path):
    script = _script(tmp_path, "bytes.py", """
        import sys
        sys.stderr.buffer.write(b"bad \\xff\\xfe bytes")
        sys.exit(2)
        """)
    outcome = execute(_spec(tmp_path, script), {}, str(tmp_path / "r"))
    assert outcome.stderr_tail == "bad \ufffd\ufffd bytes"


KILLED_PARENT = """
import sys
from irbench.runner.commands import CommandSpec, execute
spec = CommandSpec(sys.argv[1], cwd=sys.argv[2], timeout=600)
execute(spec, {{}}, sys.argv[3])
"""


@pytest.mark.timeout(90)
def test_sigkill_of_irbench_kills_the_command_group_and_leaves_no_run(tmp_path):
    pids = tmp_path / "pids"
    script = _script(tmp_path, "slow.py", f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([{PY!r}, "-c", "import time; time.sleep(60)"])
        open(sys.argv[1], "w").write("half a run")
        open({str(pids)!r} + ".tmp", "w").write(f"{{os.getppid()}} {{os.getpid()}} {{child.pid}}")
        os.rename({str(pids)!r} + ".tmp", {str(pids)!r})
        time.sleep(60)
        """)
    run_path = tmp_path / "run.txt"
    irbench = subprocess.Popen([PY, "-c", KILLED_PARENT.format(), f"{PY} {script} {{run}}",
                                str(tmp_path), str(run_path)])
    try:
        _wait_for(pids)
        supervisor, command, child = map(int, pids.read_text().split())
        assert _alive(command) and _alive(child)
        os.kill(irbench.pid, signal.SIGKILL)
        assert irbench.wait() == -signal.SIGKILL
        assert _wait_gone([supervisor, command, child]) == []
    finally:
        if irbench.poll() is None:
            irbench.kill()
            irbench.wait()
    assert not run_path.exists() and _leftovers(tmp_path) == []


@pytest.mark.timeout(60)
def test_an_exception_while_waiting_stops_the_command(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    script = _script(tmp_path, "slow.py", f"""
        import os, sys, time
        open({str(pids)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
        """)
    from irbench.runner import commands

    def interrupted(self, timeout, grace):
        _wait_for(pids)
        raise KeyboardInterrupt

    monkeypatch.setattr(commands._Supervised, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        execute(_spec(tmp_path, script), {}, str(tmp_path / "run.txt"))
    assert _wait_gone([int(pids.read_text())]) == []
    assert not (tmp_path / "run.txt").exists() and _leftovers(tmp_path) == []


# ---- placeholders --------------------------------------------------------------------------


@pytest.mark.parametrize("command, named", [
    ("bm25 --topics {topic} --out {run}", "{topic}"),
    ("bm25 --out {run.name}", "{run.name}"),
    ("bm25 --out {run!r}", "{run!r}"),
    ("bm25 --out {}", "{}"),
])
def test_an_unknown_placeholder_is_named_with_the_known_ones(command, named):
    with pytest.raises(CommandError) as raised:
        CommandSpec(command)
    message = str(raised.value)
    assert f"unknown placeholder {named}" in message
    assert "{topics}, {qrels}, {documents}, {run}, {collection}" in message
    assert isinstance(raised.value, IrbenchError)
    assert str(pickle.loads(pickle.dumps(raised.value))) == message


@pytest.mark.parametrize("command, reason", [
    ("bm25 --out {run", "stray brace"), ("bm25 --out run}", "stray brace"),
    ("bm25 'unclosed", "No closing quotation"), ("   ", "empty"),
])
def test_a_malformed_command_is_a_command_error(command, reason):
    with pytest.raises(CommandError, match=reason):
        CommandSpec(command)


def test_a_timeout_must_be_positive():
    with pytest.raises(CommandError, match="timeout"):
        CommandSpec("bm25 {run}", timeout=0)


def test_doubled_braces_are_literal_and_values_are_not_formatted_again():
    argv = command_argv("jq '{{a}}' {topics}", {"topics": "{run}"})
    assert argv == ["jq", "{a}", "{run}"]
    assert placeholders_used("x {topics} --q={qrels}:{run}") == {"topics", "qrels", "run"}


def test_a_placeholder_without_a_value_is_a_command_error():
    with pytest.raises(CommandError, match=r"uses \{documents\}"):
        command_argv("bm25 {documents} {run}", {"run": "r"})


# ---- the key -------------------------------------------------------------------------------


@pytest.fixture
def system(tmp_path):
    (tmp_path / "bm25.py").write_text("print('bm25')\n")
    index = tmp_path / "index"
    (index / "part").mkdir(parents=True)
    (index / "a.bin").write_bytes(b"postings")
    (index / "part" / "b.bin").write_bytes(b"more postings")
    (tmp_path / "topics.txt").write_text("1 query\n")
    (tmp_path / "unrelated.txt").write_text("x\n")
    spec = CommandSpec("python bm25.py --topics {topics} --out {run}",
                       inputs=("bm25.py", "index"), env=("BM25_K1",), cwd=str(tmp_path))
    return spec, {"topics": "topics.txt"}


def _key(spec, given, **environ):
    return command_key(spec, given, environ=environ)


def test_the_key_changes_with_what_the_system_depends_on(system, tmp_path):
    spec, given = system
    base = _key(spec, given, BM25_K1="0.9")
    assert base == _key(spec, given, BM25_K1="0.9")
    seen = {base}

    def changed(key):
        assert key not in seen
        seen.add(key)

    changed(_key(CommandSpec(spec.command + " --k1 1", spec.inputs, spec.env, cwd=spec.cwd),
                 given, BM25_K1="0.9"))
    changed(_key(spec, given, BM25_K1="1.2"))
    changed(_key(spec, given, BM25_K1=""))  # empty differs from unset
    changed(_key(spec, given))
    (tmp_path / "topics.txt").write_text("1 another query\n")
    changed(_key(spec, given, BM25_K1="0.9"))
    (tmp_path / "bm25.py").write_text("print('bm25+rm3')\n")
    changed(_key(spec, given, BM25_K1="0.9"))
    (tmp_path / "index" / "part" / "b.bin").write_bytes(b"other postings")
    changed(_key(spec, given, BM25_K1="0.9"))
    (tmp_path / "index" / "c.bin").write_bytes(b"")
    changed(_key(spec, given, BM25_K1="0.9"))
    os.rename(tmp_path / "index" / "c.bin", tmp_path / "index" / "d.bin")
    changed(_key(spec, given, BM25_K1="0.9"))
    os.symlink("a.bin", tmp_path / "index" / "e.bin")
    changed(_key(spec, given, BM25_K1="0.9"))


def test_the_key_ignores_unrelated_files_times_and_order(system, tmp_path):
    spec, given = system
    base = _key(spec, given, BM25_K1="0.9", OTHER="1")
    (tmp_path / "unrelated.txt").write_text("changed\n")
    for path in (tmp_path / "index", tmp_path / "index" / "a.bin", tmp_path / "bm25.py"):
        os.utime(path, (1_000_000, 1_000_000))
    reordered = CommandSpec(spec.command, tuple(reversed(spec.inputs)), spec.env,
                            timeout=5, cwd=spec.cwd)
    assert _key(reordered, given, BM25_K1="0.9", OTHER="2") == base


def test_a_link_out_of_an_input_folder_is_not_followed(system, tmp_path):
    spec, given = system
    os.symlink(tmp_path / "unrelated.txt", tmp_path / "index" / "outside")
    base = _key(spec, given)
    (tmp_path / "unrelated.txt").write_text("changed\n")
    assert _key(spec, given) == base


def test_a_fifo_in_an_input_folder_is_not_read(system, tmp_path):
    spec, given = system
    os.mkfifo(tmp_path / "index" / "pipe")
    assert len(_key(spec, given)) == 64  # returns: the FIFO is listed, never opened


def test_a_missing_input_is_a_command_error(system, tmp_path):
    spec, given = system
    (tmp_path / "bm25.py").unlink()
    with pytest.raises(CommandError, match="bm25.py"):
        _key(spec, given)
    with pytest.raises(CommandError, match="nope.txt"):
        _key(CommandSpec("x {run}", cwd=str(tmp_path)), {"qrels": "nope.txt"})


def test_a_folder_too_big_to_hash_is_refused(system, tmp_path):
    spec, given = system
    with pytest.raises(CommandError, match=r"index: more than 2 files"):
        command_key(spec, given, max_files=2)
    with pytest.raises(CommandError, match="GiB"):
        command_key(spec, given, max_bytes=10)


def test_a_cached_hasher_is_used_for_files(system):
    spec, given = system
    asked = []

    def hasher(path):
        asked.append(os.path.basename(path))
        return "0" * 64

    command_key(spec, given, environ={}, hasher=hasher)
    assert sorted(asked) == ["a.bin", "b.bin", "bm25.py", "topics.txt"]
