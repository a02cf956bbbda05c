"""The run stamp: an unchanged rerun is answered without imports; every change goes the long way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.config import load_config
from irbench.runner import stamp
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent
PROBE = textwrap.dedent("""\
    import sys
    from irbench import cli
    code = cli.main(sys.argv[1:])
    print("heavy:", sorted(m for m in ("numpy", "duckdb", "yaml", "irbench.runner.campaign")
                           if m in sys.modules), file=sys.stderr)
    sys.exit(code)
    """)


def irbench(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=300)


def summary(err: str) -> str:
    """The summary line without its time."""
    line = next(x for x in err.splitlines() if x.startswith("irbench run:") and " failed in " in x)
    head, tail = line.split(" failed in ")
    return head + " failed; " + tail.split("; ", 1)[1]


def runner_rows(config_path) -> int:
    with Store(load_config(config_path).store, read_only=True) as store:
        return store.query("SELECT count(*) FROM runner_runs")[1][0][0]


def test_an_unchanged_rerun_is_answered_from_the_stamp(tmp_path):
    path = make_campaign(tmp_path)
    first = irbench("run", "--workers", "1", str(path))
    assert first.returncode == 0, first.stderr
    store = load_config(path).store
    before = (Path(store).read_bytes(), os.stat(store).st_mtime_ns, runner_rows(path))
    again = irbench("run", str(path))
    assert again.returncode == 0, again.stderr
    assert "heavy: []" in again.stderr  # no numpy, DuckDB, YAML or runner was imported
    assert summary(again.stderr) == summary(first.stderr).replace(
        "8 evaluated, 0 reused", "0 evaluated, 8 reused")
    assert again.stdout == first.stdout and first.stdout.startswith("top 4 of 4 systems")
    assert (Path(store).read_bytes(), os.stat(store).st_mtime_ns, runner_rows(path)) == before
    quiet = irbench("run", "--quiet", "--workers=2", "--wait", "5", "--fail-fast", str(path))
    assert quiet.returncode == 0 and quiet.stdout == "" and "heavy: []" in quiet.stderr


def test_the_long_way_gives_what_the_stamp_gives(tmp_path):
    path = make_campaign(tmp_path)
    assert irbench("run", str(path)).returncode == 0
    fast = irbench("run", str(path))
    slow = irbench("run", "--rehash", str(path))  # never answered from the stamp
    assert "heavy: []" in fast.stderr and "numpy" in slow.stderr
    assert (fast.stdout, summary(fast.stderr)) == (slow.stdout, summary(slow.stderr))


def _edit_run(root: Path) -> None:
    run = root / "runs" / "r01.txt"
    run.write_text(run.read_text().replace("tag01", "tagXX"))  # the same size


def _touch_run(root: Path) -> None:
    os.utime(root / "runs" / "r02.txt", ns=(1, 1))


def _new_run(root: Path) -> None:
    (root / "runs" / "r09.txt").write_text(
        (root / "runs" / "r00.txt").read_text().replace("tag00", "tag09"))


def _removed_run(root: Path) -> None:
    (root / "runs" / "r03.txt").unlink()


def _edit_qrels(root: Path) -> None:
    qrels = root / "runs" / "shallow.txt"
    qrels.write_text(qrels.read_text() + "t01 0 t01-D0299 1\n")


def _edit_config(root: Path) -> None:
    config = root / "configs" / "c.yaml"
    config.write_text(config.read_text() + "evaluation: {depth: 20}\n")


def _other_writer(root: Path) -> None:
    with Store(load_config(root / "configs" / "c.yaml").store) as store:
        store.con.execute("CREATE TABLE notes (note VARCHAR)")


def _stamp_corrupt(root: Path) -> None:
    Path(stamp.stamp_path(str(root / "configs" / "c.yaml"))).write_text("{not json")


def _stamp_other_version(root: Path) -> None:
    path = Path(stamp.stamp_path(str(root / "configs" / "c.yaml")))
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "version": "0.0.1"}))


@pytest.mark.parametrize("change, evaluated", [
    (_edit_run, 2), (_touch_run, 0), (_new_run, 2), (_removed_run, 0), (_edit_qrels, 4),
    (_edit_config, 8), (_other_writer, 0), (_stamp_corrupt, 0), (_stamp_other_version, 0),
])
def test_any_change_goes_the_long_way(tmp_path, change, evaluated):
    path = make_campaign(tmp_path)
    assert irbench("run", "--quiet", str(path)).returncode == 0
    change(tmp_path)
    rerun = irbench("run", "--quiet", str(path))
    assert rerun.returncode == 0, rerun.stderr
    assert "numpy" in rerun.stderr and f": {evaluated} evaluated," in rerun.stderr
    assert "heavy: []" in irbench("run", "--quiet", str(path)).stderr  # stamped again


def test_a_quiet_run_leaves_no_leaderboard_to_print(tmp_path):
    path = make_campaign(tmp_path)
    assert irbench("run", "--quiet", str(path)).returncode == 0
    loud = irbench("run", str(path))
    assert "numpy" in loud.stderr and loud.stdout.startswith("top 4 of 4 systems")
    assert "heavy: []" in irbench("run", str(path)).stderr


def test_a_failed_run_leaves_no_stamp(tmp_path, capsys):
    path = make_campaign(tmp_path)
    time.sleep(0.1)  # older than the racy window
    assert cli.main(["run", "--quiet", str(path)]) == 0
    assert os.path.exists(stamp.stamp_path(str(path)))
    (tmp_path / "runs" / "r01.txt").write_text("t01 Q0 d1 1 not-a-score tag\n")
    assert cli.main(["run", "--quiet", str(path)]) == 1
    assert not os.path.exists(stamp.stamp_path(str(path)))
    assert cli.main(["run", "--quiet", str(path)]) == 1  # reported again, not answered
    assert "r01.txt" in capsys.readouterr().err


def test_a_store_left_with_a_write_ahead_log_is_not_trusted(tmp_path):
    path = make_campaign(tmp_path)
    assert irbench("run", "--quiet", str(path)).returncode == 0
    Path(load_config(path).store + ".wal").write_bytes(b"")
    assert stamp.answer_unchanged_run(["run", "--quiet", str(path)]) is None


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(blocker))
    path = make_campaign(tmp_path)
    time.sleep(0.1)
    assert cli.main(["run", "--quiet", str(path)]) == 0
    assert cli.main(["run", "--quiet", str(path)]) == 0
    assert stamp.answer_unchanged_run(["run", "--quiet", str(path)]) is None


def test_a_file_changed_just_before_the_run_leaves_no_stamp(tmp_path):
    """git's racy-clean rule: a same-size change in the same timestamp tick as the facts
    would go unseen, so files that recent are not stamped (the next run stamps them)."""
    path = make_campaign(tmp_path)
    time.sleep(0.1)
    assert cli.main(["run", "--quiet", str(path)]) == 0
    run = str(tmp_path / "runs" / "r00.txt")
    Path(run).write_text(Path(run).read_text())  # the same content, written now
    facts = {run: stamp.file_facts(run)}
    store = load_config(path).store

    def attempt(checked_ns: int) -> bool:
        return stamp.Stamp("sha", store, facts, {}, 4, 2, 6, 8, None, checked_ns).write("x.yaml")

    assert not attempt(time.time_ns())
    assert not os.path.exists(stamp.stamp_path("x.yaml"))
    assert attempt(time.time_ns() + 100_000_000)  # as if the facts were taken 0.1 s later
    assert json.loads(Path(stamp.stamp_path("x.yaml")).read_text())["inputs"] == facts


@pytest.mark.parametrize("mtime, ctime, checked, want", [
    (10**18, 10**18 + 7, 10**18 + 60_000_000, False),  # ns stamps, 60 ms before: safe
    (10**18, 10**18 + 7, 10**18 + 40_000_000, True),  # 40 ms before: within the tick window
    (10**18, 10**18, 10**18 + 1_500_000_000, True),  # whole seconds: coarse, 2 s window
    (10**18, 10**18, 10**18 + 2_500_000_000, False),
    (10**18 + 5, 10**18 + 5, 10**18, True),  # changed after the facts were taken
])
def test_racy(mtime, ctime, checked, want):
    assert stamp.racy([10, mtime, ctime, 1], checked) is want


@pytest.mark.parametrize("argv, want", [
    (["run", "c.yaml"], ("c.yaml", False)),
    (["run", "--quiet", "c.yaml"], ("c.yaml", True)),
    (["run", "c.yaml", "--workers", "2", "--wait=3"], ("c.yaml", False)),
    (["run", "--rehash", "c.yaml"], None),
    (["run", "--qui", "c.yaml"], None),  # argparse's abbreviation: argparse decides
    (["run", "-h"], None),
    (["run"], None),
    (["run", "a.yaml", "b.yaml"], None),
    (["run", "c.yaml", "--workers"], None),
    (["scores", "c.yaml"], None),
    ([], None),
])
def test_which_command_lines_may_be_answered(argv, want):
    assert stamp._run_arguments(argv) == want


def test_the_readme_demo_command(tmp_path):
    """README's first command on a copy of the bundled demo: scores, prints the leaderboard,
    and an unchanged second run is answered at once."""
    import shutil

    shutil.copytree(REPO / "configs", tmp_path / "configs")
    shutil.copytree(REPO / "runs" / "demo", tmp_path / "runs" / "demo")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    first = subprocess.run([sys.executable, "-m", "irbench", "run", "configs/demo.yaml"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("top 10 of 12 systems on qrels 'official', by AP:")
    assert ": 24 evaluated, 0 reused, 0 failed" in first.stderr
    assert (tmp_path / "runs" / "demo.duckdb").exists()
    again = irbench("run", str(tmp_path / "configs" / "demo.yaml"))
    assert again.returncode == 0 and "heavy: []" in again.stderr
    assert again.stdout == first.stdout


def test_a_run_arriving_while_the_config_is_read_is_scored_next_time(tmp_path, monkeypatch,
                                                                      capsys):
    from irbench.cli import campaign as campaign_cli

    path = make_campaign(tmp_path)
    time.sleep(0.1)
    read = campaign_cli.load_configs

    def arriving(*args, **kwargs):
        configs = read(*args, **kwargs)
        _new_run(tmp_path)  # after the glob was expanded
        return configs

    monkeypatch.setattr(campaign_cli, "load_configs", arriving)
    assert cli.main(["run", "--quiet", "--workers", "1", str(path)]) == 0
    monkeypatch.undo()
    assert "4 systems" in capsys.readouterr().err
    assert stamp.answer_unchanged_run(["run", "--quiet", str(path)]) is None
    assert cli.main(["run", "--quiet", "--workers", "1", str(path)]) == 0
    assert "5 systems x 2 qrels sets x 6 measures: 2 evaluated, 8 reused" in (
        capsys.readouterr().err)
