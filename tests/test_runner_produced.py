"""Systems given as commands (issue 41), on a config of three collections cut from the bundled
demo: irbench run executes each command once per collection and scores its run as it scores a
submitted one; a rerun executes nothing; editing one input file or one command executes exactly
that system's cells again; a command that fails, runs past its timeout or writes a malformed
run is that cell's failure and every other cell is scored; an irbench run killed while a
command runs leaves the store as after its last complete write and no run file behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_collections import PARTS, _split

from irbench import cli
from irbench.config import load_configs
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
COPY = """import sys
src, out = sys.argv[1], sys.argv[2]
with open(src) as f, open(out, "w") as g:
    for line in f:
        q, _, d, r, s, _ = line.split()
        g.write(f"{q} Q0 {d} {r} {s} made\\n")
"""
SUITE = "suites:\n  core: [AP, nDCG@10]\n"


def _lab(folder: Path, systems: str) -> Path:
    _split(folder)
    path = folder / "lab.yaml"
    path.write_text("name: lab\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in PARTS)
        + "systems:\n  - {name: base, run: \"{collection}/runs/groupA-1.txt\", baseline: true}\n"
        + systems + SUITE)
    return path


def _executions(path: Path) -> dict[tuple[str, str], list[str]]:
    """{(collection, system): [status of each execution, in order]}."""
    out: dict[tuple[str, str], list[str]] = {}
    for view in load_configs(path, strict=False):
        with Store(view.store, read_only=True, scope=view.scope) as store:
            _, rows = store.query("SELECT system, status FROM commands ORDER BY rowid")
        for system, status in rows:
            out.setdefault((view.scope, system), []).append(status)
    return out


def _means(path: Path, scope: str, system: str) -> list[tuple]:
    with Store(str(path), read_only=True, scope=scope) as store:
        _, rows = store.means(systems=[system])
    return sorted((m, v) for _, _, m, v, _ in rows)


@pytest.mark.timeout(300)
def test_commands_run_once_and_again_only_when_their_key_changes(tmp_path, capsys):
    (tmp_path / "a.py").write_text(COPY)
    (tmp_path / "b.py").write_text(COPY)
    path = _lab(tmp_path, "  - {name: A, command: \"python a.py {collection}/runs/groupB-1.txt "
                          "{run}\", inputs: [a.py]}\n"
                          "  - {name: B, command: \"python b.py {collection}/runs/groupC-1.txt "
                          "{run}\", inputs: [b.py]}\n")
    assert cli.main(["run", str(path), "--quiet"]) == 0
    done = _executions(path)
    assert done == {(c, s): ["ok"] for c in PARTS for s in "AB"}
    # a made run is scored as the submitted run it copies
    (tmp_path / "sub.yaml").write_text(path.read_text().split("systems:")[0].replace(
        "name: lab", "name: sub") + "systems:\n  - {glob: \"{collection}/runs/group[BC]-1.txt\"}\n"
        + SUITE)
    assert cli.main(["run", str(tmp_path / "sub.yaml"), "--quiet"]) == 0
    for c in PARTS:
        assert _means(tmp_path / "lab.duckdb", c, "A") == \
            _means(tmp_path / "sub.duckdb", c, "groupB-1") != []
    capsys.readouterr()
    assert cli.main(["run", str(path), "--quiet"]) == 0  # nothing changed: nothing executed
    assert "executed" not in capsys.readouterr().err and _executions(path) == done
    (tmp_path / "b.py").write_text(COPY + "# edited\n")  # one input: B's cells only
    assert cli.main(["run", str(path), "--quiet"]) == 0
    assert _executions(path) == {**done, **{(c, "B"): ["ok", "ok"] for c in PARTS}}
    path.write_text(path.read_text().replace("python a.py {collection}/runs/groupB-1.txt",
                                             "python a.py {collection}/runs/groupB-2.txt"))
    assert cli.main(["run", str(path), "--quiet"]) == 0  # one command: A's cells only
    assert _executions(path) == {**{(c, "A"): ["ok", "ok"] for c in PARTS},
                                 **{(c, "B"): ["ok", "ok"] for c in PARTS}}
    capsys.readouterr()  # efficiency: what making each command's runs cost, in the leaderboard
    assert cli.main(["compare", str(path), "--across", "--format", "json"]) == 0
    systems = {s["name"]: s for s in json.loads(capsys.readouterr().out)["systems"]}
    assert systems["base"]["seconds_per_topic"] is None
    assert systems["A"]["seconds_per_topic"] > 0 and systems["A"]["peak_rss_bytes"] > 2**20
    assert cli.main(["compare", str(path), "--across"]) == 0
    assert "s/topic" in capsys.readouterr().out
    views = {v.scope: v for v in load_configs(path)}
    with Store(str(tmp_path / "lab.duckdb"), read_only=True, scope="c2") as store:
        last = store.last_command("A")
    assert last is not None and last.run_path == views["c2"].systems[1].path
    assert json.loads(last.argv)[-1] == last.run_path and last.wall_seconds > 0
    assert "platform" in json.loads(last.environment)


@pytest.mark.timeout(300)
def test_a_failing_hanging_or_malformed_command_is_its_cell_s_failure(tmp_path, capsys):
    (tmp_path / "odd.py").write_text(
        "import sys, time\ncollection, out = sys.argv[1], sys.argv[2]\n"
        "if collection == 'c1':\n    open(out, 'w').write('not a run line\\n')\n"
        "elif collection == 'c2':\n    sys.exit('odd.py: no index for ' + collection)\n"
        "else:\n    time.sleep(600)\n")
    path = _lab(tmp_path, "  - {name: odd, command: \"python odd.py {collection} {run}\", "
                          "inputs: [odd.py], timeout: 2}\n")
    assert cli.main(["run", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "odd.py: no index for c2" in err and "ran past its timeout (2 s)" in err
    assert _executions(path) == {("c1", "odd"): ["ok"], ("c2", "odd"): ["failed"],
                                 ("c3", "odd"): ["timeout"]}
    for c in PARTS:  # every other cell is scored
        assert _means(tmp_path / "lab.duckdb", c, "base")
    views = {v.scope: v for v in load_configs(path, strict=False)}
    assert not os.path.exists(views["c2"].systems[1].path)
    assert not os.path.exists(views["c3"].systems[1].path)
    with Store(str(tmp_path / "lab.duckdb"), read_only=True, scope="c1") as store:
        rows = {r[0]: (r[4], r[8]) for r in store.systems_overview()}
    assert rows["odd"][0] == "failed"  # the malformed run: read and refused like a submission
    assert "odd.run" in rows["odd"][1]


@pytest.mark.timeout(300)
def test_a_run_killed_while_a_command_runs_leaves_the_store_as_it_was(tmp_path):
    marker = tmp_path / "started"
    (tmp_path / "slow.py").write_text(
        f"import sys, time\nopen({str(marker)!r}, 'w').close()\nopen(sys.argv[1], 'w')"
        ".write('1 Q0 d 1 1 x\\n')\ntime.sleep(600)\n")
    path = _lab(tmp_path, "  - {name: slow, command: \"python slow.py {run}\", "
                          "inputs: [slow.py]}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "irbench", "run", str(path), "--quiet",
                             "--collection", "c1"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # the command has started (a condition, not a delay)
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    view = load_configs(path, collection="c1")[0]
    slow = next(s for s in view.systems if s.name == "slow")
    assert not os.path.exists(slow.path)  # no half-written run left
    with Store(view.store, read_only=True, scope="c1") as store:
        assert store.last_command("slow") is None
    (tmp_path / "slow.py").write_text("import sys\nopen(sys.argv[1], 'w')"
                                      ".write('1 Q0 d 1 1 x\\n')\n")
    assert cli.main(["run", str(path), "--quiet", "--collection", "c1"]) in (0, 1)
    with Store(view.store, read_only=True, scope="c1") as store:
        _, rows = store.query("SELECT status FROM commands WHERE system = 'slow'")
    assert rows == [("ok",)]  # executed again, once


MEET = """import os, sys, time
me, other, out = sys.argv[1], sys.argv[2], sys.argv[3]
with open(f"/proc/{os.getppid()}/stat") as f:  # the process that started its supervisor
    starter = int(f.read().rsplit(")", 1)[1].split()[1])
open(me, "w").write(str(starter))
while not os.path.exists(other):
    time.sleep(0.02)
open(out, "w").write("1 Q0 d 1 1 x\\n")
"""


def _meeting(folder: Path) -> Path:
    """A lab whose systems P and Q each wait for the other to have started (a rendezvous),
    each leaving in {collection}-p / -q the pid of the process that started it."""
    (folder / "meet.py").write_text(MEET)
    return _lab(folder, "  - {name: P, command: \"python meet.py {collection}-p "
                        "{collection}-q {run}\", inputs: [meet.py], timeout: 60}\n"
                        "  - {name: Q, command: \"python meet.py {collection}-q "
                        "{collection}-p {run}\", inputs: [meet.py], timeout: 60}\n")


@pytest.mark.timeout(300)
def test_commands_run_side_by_side_with_workers(tmp_path):
    """Two commands that each wait for the other to have started (a rendezvous): they can
    only both finish when they run at the same time (--workers 2); one after the other, the
    first waits out its timeout."""
    path = _meeting(tmp_path)
    assert cli.main(["run", str(path), "--quiet", "--collection", "c1", "--workers", "2"]) \
        in (0, 1)  # the made runs score 0: fine
    with Store(str(tmp_path / "lab.duckdb"), read_only=True, scope="c1") as store:
        _, rows = store.query("SELECT system, status FROM commands ORDER BY system")
    assert rows == [("P", "ok"), ("Q", "ok")]


@pytest.mark.timeout(300)
def test_commands_run_as_tasks_of_a_dask_cluster(tmp_path):
    """With --cluster local:2 (a real distributed.LocalCluster of two one-thread worker
    processes) the commands are the cluster's tasks: the two that only finish side by side
    both finish, each was started by a worker process (not by irbench's), and a rerun executes
    nothing."""
    pytest.importorskip("distributed")
    path = _meeting(tmp_path)
    argv = ["run", str(path), "--quiet", "--collection", "c1", "--cluster", "local:2"]
    assert cli.main(argv) in (0, 1)  # the made runs score 0: fine
    with Store(str(tmp_path / "lab.duckdb"), read_only=True, scope="c1") as store:
        _, rows = store.query("SELECT system, status, environment FROM commands ORDER BY system")
    assert [(s, status) for s, status, _ in rows] == [("P", "ok"), ("Q", "ok")]
    assert all(json.loads(env)["platform"] for _, _, env in rows)
    starters = {int((tmp_path / f"c1-{x}").read_text()) for x in "pq"}
    assert os.getpid() not in starters and len(starters) == 2  # two workers, not irbench
    assert cli.main(argv) in (0, 1)
    with Store(str(tmp_path / "lab.duckdb"), read_only=True, scope="c1") as store:
        _, rows = store.query("SELECT count(*) FROM commands")
    assert rows == [(2,)]
