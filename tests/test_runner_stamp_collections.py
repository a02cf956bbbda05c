"""The run stamp of a config with ``collections:`` (issue 41): one stamp per collection, all
written once every collection ran, and an index naming them; an unchanged rerun is answered
only when every collection's stamp holds, printing what the long way prints; any change to any
collection's inputs, the config or the store, a stamp of another run, ``--collection``, a
failure, or a system given as a command goes the long way."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_collections import PARTS, _split
from test_runner_stamp import irbench, summary

from irbench import cli
from irbench.runner import stamp
from irbench.store import Store

SUITE = "suites:\n  core: [AP, nDCG@10, P@10]\n"


def _lab(folder: Path, systems: str = "  - {glob: \"{collection}/runs/*.txt\"}\n") -> Path:
    _split(folder)
    path = folder / "lab.yaml"
    path.write_text("name: lab\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in PARTS)
        + "systems:\n" + systems + SUITE)
    return path


def _answered(path: Path) -> bool:
    return stamp.answer_unchanged_run(["run", "--quiet", str(path)]) == 0


def _stamped(path: Path) -> None:
    """Run until stamped: a first run may find its inputs too recent (git's racy rule)."""
    assert cli.main(["run", "--quiet", str(path)]) == 0
    if not _answered(path):
        assert cli.main(["run", "--quiet", str(path)]) == 0
    assert _answered(path)


@pytest.mark.timeout(300)
def test_an_unchanged_rerun_of_every_collection_is_answered_from_their_stamps(tmp_path):
    path = _lab(tmp_path)
    first = irbench("run", "--workers", "1", str(path))
    assert first.returncode == 0, first.stderr
    store = tmp_path / "lab.duckdb"
    before = (store.read_bytes(), os.stat(store).st_mtime_ns)
    again = irbench("run", str(path))
    assert again.returncode == 0, again.stderr
    assert (store.read_bytes(), os.stat(store).st_mtime_ns) == before  # the store untouched
    assert "heavy: []" in again.stderr  # no numpy, DuckDB, YAML or runner imported
    assert again.stdout == first.stdout and first.stdout.count("top 10 of 12 systems") == 3
    collections = [x for x in again.stderr.splitlines() if x.startswith("irbench run: coll")]
    assert collections == [f"irbench run: collection '{name}'" for name in PARTS]
    assert [summary(e) for e in again.stderr.split("irbench run: collection")[1:]] == [
        summary(e).replace("12 evaluated, 0 reused", "0 evaluated, 12 reused")
        for e in first.stderr.split("irbench run: collection")[1:]]
    slow = irbench("run", "--rehash", str(path))  # never answered from a stamp
    assert "numpy" in slow.stderr and slow.stdout == again.stdout
    assert [summary(e) for e in slow.stderr.split("irbench run: collection")[1:]] == \
        [summary(e) for e in again.stderr.split("irbench run: collection")[1:]]
    quiet = irbench("run", "--quiet", str(path))
    assert quiet.returncode == 0 and quiet.stdout == "" and "heavy: []" in quiet.stderr


def _edit_run(root: Path) -> None:
    run = root / "c2" / "runs" / "groupB-1.txt"
    run.write_text("".join(run.read_text().splitlines(keepends=True)[:-1]))  # one line less


def _new_run(root: Path) -> None:
    run = (root / "c3" / "runs" / "groupB-1.txt").read_text()
    (root / "c3" / "runs" / "zz-new.txt").write_text(run.replace("groupB-1", "zz-new"))


def _touch_qrels(root: Path) -> None:
    os.utime(root / "c1" / "qrels.txt", ns=(1, 1))


def _edit_config(root: Path) -> None:
    config = root / "lab.yaml"
    config.write_text(config.read_text() + "evaluation: {depth: 20}\n")


def _other_writer(root: Path) -> None:
    with Store(str(root / "lab.duckdb"), scope="c3") as store:
        store.con.execute("CREATE TABLE notes (note VARCHAR)")


def _stamp_gone(root: Path) -> None:
    os.unlink(stamp.stamp_path(str(root / "lab.yaml"), "c2"))


def _stamp_of_another_run(root: Path) -> None:
    path = Path(stamp.stamp_path(str(root / "lab.yaml"), "c3"))
    path.write_text(json.dumps({**json.loads(path.read_text()), "token": "another-run"}))


def _index_corrupt(root: Path) -> None:
    Path(stamp.stamp_path(str(root / "lab.yaml"))).write_text("{not json")


def _index_names_less(root: Path) -> None:
    path = Path(stamp.stamp_path(str(root / "lab.yaml")))
    path.write_text(json.dumps({**json.loads(path.read_text()), "collections": []}))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("change", [
    _edit_run, _new_run, _touch_qrels, _edit_config, _other_writer, _stamp_gone,
    _stamp_of_another_run, _index_corrupt, _index_names_less,
])
def test_any_change_in_any_collection_goes_the_long_way(tmp_path, change):
    path = _lab(tmp_path)
    _stamped(path)
    change(tmp_path)
    assert not _answered(path)
    assert cli.main(["run", "--quiet", str(path)]) == 0
    _stamped(path)  # stamped again


@pytest.mark.timeout(300)
def test_one_collection_run_or_a_failure_leaves_no_stamp(tmp_path, capsys):
    path = _lab(tmp_path)
    _stamped(path)
    assert cli.main(["run", "--quiet", "--collection", "c2", str(path)]) == 0
    assert not _answered(path)  # --collection: the index is forgotten, none written
    _stamped(path)
    bad = tmp_path / "c2" / "runs" / "groupC-2.txt"
    bad.write_text("t01 Q0 d1 1 not-a-score tag\n")
    assert cli.main(["run", "--quiet", str(path)]) == 1
    assert not _answered(path)
    assert cli.main(["run", "--quiet", str(path)]) == 1  # reported again, not answered
    assert bad.name in capsys.readouterr().err


@pytest.mark.timeout(300)
@pytest.mark.parametrize("several", [False, True])
def test_a_system_given_as_a_command_is_never_answered_from_a_stamp(tmp_path, capsys,
                                                                   several):
    """Its inputs and environment are checked by the long way only: an edited input file
    executes the command again (before: a one-collection config's stamp answered the rerun,
    the edit unseen)."""
    (tmp_path / "a.py").write_text(
        "import shutil, sys\nshutil.copyfile(sys.argv[1], sys.argv[2])\n")
    command = "  - {name: A, command: \"python a.py {src} {run}\", inputs: [a.py]}\n"
    if several:
        path = _lab(tmp_path, command.replace("{src}", "{collection}/runs/groupB-1.txt"))
    else:
        _split(tmp_path)
        path = tmp_path / "one.yaml"
        path.write_text("name: one\ncollection:\n  qrels: c1/qrels.txt\nsystems:\n"
                        + command.replace("{src}", "c1/runs/groupB-1.txt") + SUITE)
    for _ in range(2):
        assert cli.main(["run", "--quiet", str(path)]) == 0
        assert not _answered(path)
    capsys.readouterr()
    (tmp_path / "a.py").write_text((tmp_path / "a.py").read_text() + "# edited\n")
    assert cli.main(["run", "--quiet", str(path)]) == 0
    executed = [x for x in capsys.readouterr().err.splitlines() if "executed" in x]
    assert executed == ["irbench run: 1 command executed (systems given as commands)"] * (
        len(PARTS) if several else 1)
