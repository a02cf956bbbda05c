"""Storage faults (issue 25): a full disk or a file-size limit is told apart from a damaged
store, never a traceback, and nothing is lost: the store is as after its last complete write
(a rerun finishes it equal to a clean run's) and an output file is either the new one, whole,
or the previous one."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from campaigns import make_campaign

from irbench.config import load_config
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent


def _limited(kilobytes: int):
    def set_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (kilobytes * 1024, kilobytes * 1024))
    return set_limit


def _irbench(tmp_path, *argv, limit_kb: int | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), IRBENCH_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "irbench", *map(str, argv)],
                          capture_output=True, text=True, env=env,
                          preexec_fn=None if limit_kb is None else _limited(limit_kb))


def _contents(config: Path) -> dict:
    with Store(load_config(config).store, read_only=True) as store:
        return {view: sorted(store.query(f"SELECT * FROM {view}")[1])
                for view in ("per_query", "means")}


def _clean(message: str) -> None:
    assert "Traceback" not in message and "damaged" not in message, message


def test_a_file_size_limit_during_run_is_told_apart_and_loses_nothing(tmp_path):
    config = make_campaign(tmp_path / "camp", systems=6, topics=20)
    proc = _irbench(tmp_path, "run", "--workers", "1", "--quiet", config, limit_kb=24)
    assert proc.returncode == 3, proc.stderr
    _clean(proc.stderr)
    assert "a file-size limit was reached" in proc.stderr
    assert "nothing of this write was stored" in proc.stderr
    rerun = _irbench(tmp_path, "run", "--workers", "1", "--quiet", config)
    assert rerun.returncode == 0, rerun.stderr
    twin = make_campaign(tmp_path / "twin", systems=6, topics=20)
    assert _irbench(tmp_path, "run", "--workers", "1", "--quiet", twin).returncode == 0
    assert _contents(config) == _contents(twin)


@pytest.mark.parametrize("fmt, name", [("csv", "scores.csv"), ("json", "scores.json"),
                                       ("parquet", "scores.parquet")])
def test_an_output_that_cannot_be_written_leaves_the_previous_file(tmp_path, fmt, name):
    config = make_campaign(tmp_path / "camp", systems=4, topics=30)
    assert _irbench(tmp_path, "run", "--workers", "1", "--quiet", config).returncode == 0
    out = tmp_path / name
    out.write_bytes(b"the previous export\n")
    proc = _irbench(tmp_path, "scores", config, "--per-query", "--format", fmt, "-o", out,
                    limit_kb=4)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stderr)
    assert str(out) in proc.stderr and ("File too large" in proc.stderr
                                        or "file-size limit" in proc.stderr)
    assert out.read_bytes() == b"the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "camp", name]  # no .part
    ok = _irbench(tmp_path, "scores", config, "--per-query", "--format", fmt, "-o", out)
    assert ok.returncode == 0 and out.stat().st_size > 1000


def test_a_partitioned_export_that_cannot_be_written_leaves_nothing(tmp_path):
    config = make_campaign(tmp_path / "camp", systems=4, topics=30)
    assert _irbench(tmp_path, "run", "--workers", "1", "--quiet", config).returncode == 0
    out = tmp_path / "dataset"
    proc = _irbench(tmp_path, "scores", config, "--per-query", "--format", "parquet",
                    "--partition-by", "system", "-o", out, limit_kb=1)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stderr)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "camp"]


def _mounted(tmp_path, size: str):
    """A tmpfs of ``size`` (needs root; skipped elsewhere)."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    return mount


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (needs root; skipped elsewhere)."""
    mount = _mounted(tmp_path, "1m")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture
def disk(tmp_path):
    """A 32 MiB tmpfs (needs root; skipped elsewhere)."""
    mount = _mounted(tmp_path, "32m")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(folder: Path) -> Path:
    """A file taking every free byte of ``folder``'s file system."""
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (64 << 10))
                fh.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_during_run_is_told_apart_and_loses_nothing(tmp_path, small_disk):
    config = make_campaign(tmp_path / "camp", systems=8, topics=40)
    config.write_text(config.read_text() + f"store: {small_disk / 'c.duckdb'}\n")
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (700 << 10))
    proc = _irbench(tmp_path, "run", "--workers", "1", "--quiet", config)
    assert proc.returncode == 3, proc.stderr
    _clean(proc.stderr)
    assert "the disk is full" in proc.stderr and "free some space" in proc.stderr
    filler.unlink()
    rerun = _irbench(tmp_path, "run", "--workers", "1", "--quiet", config)
    assert rerun.returncode == 0, rerun.stderr
    twin = make_campaign(tmp_path / "twin", systems=8, topics=40)
    assert _irbench(tmp_path, "run", "--workers", "1", "--quiet", twin).returncode == 0
    assert _contents(config) == _contents(twin)


def test_judging_on_a_full_disk_loses_no_judgment(tmp_path, disk):
    """irbench pool judge when the store's disk is full: a message, the judgments recorded
    before are kept, and the same file judged again once there is space records it."""
    from campaigns import copy_demo

    config = copy_demo(tmp_path)
    config.write_text(config.read_text() + f"store: {disk / 'demo.duckdb'}\n")
    assert _irbench(tmp_path, "run", "--quiet", config).returncode == 0
    start = _irbench(tmp_path, "pool", "start", config, "--name", "p", "--strategy", "mtf",
                     "--per-group", "1", "--budget", "6")
    assert start.returncode == 0, start.stderr
    batch = tmp_path / "batch.txt"
    assert _irbench(tmp_path, "pool", "next", config, "--name", "p", "-o", batch).returncode == 0
    lines = batch.read_text().splitlines()
    judged = tmp_path / "judged.txt"
    judged.write_text("".join(f"{q} 0 {d} 1\n" for q, _, d, _ in map(str.split, lines)))
    filler = _fill(disk)
    proc = _irbench(tmp_path, "pool", "judge", config, "--name", "p", "-j", judged)
    assert proc.returncode == 3, proc.stderr
    _clean(proc.stderr)
    assert "the disk is full" in proc.stderr
    filler.unlink()
    status = _irbench(tmp_path, "pool", "status", config, "--name", "p")
    assert "0 judged" in status.stdout, status.stdout + status.stderr
    again = _irbench(tmp_path, "pool", "judge", config, "--name", "p", "-j", judged)
    assert again.returncode == 0, again.stderr
    status = _irbench(tmp_path, "pool", "status", config, "--name", "p")
    assert f"{len(lines)} judged" in status.stdout



def test_figures_that_cannot_be_written_are_a_message(tmp_path):
    """irbench report --figures past a file-size limit (as on a full disk): a message, and no
    figure file cut short."""
    pytest.importorskip("matplotlib")
    config = make_campaign(tmp_path / "camp", systems=4, topics=10)
    assert _irbench(tmp_path, "run", "--workers", "1", "--quiet", config).returncode == 0
    figures = tmp_path / "figures"
    proc = _irbench(tmp_path, "report", config, "--figures", figures, limit_kb=8)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stderr)
    assert "cannot write" in proc.stderr and "File too large" in proc.stderr
    written = list(figures.iterdir()) if figures.exists() else []
    assert not [p for p in written if p.name.endswith(".part")]  # nothing cut short is left
    ok = _irbench(tmp_path, "report", config, "--figures", figures)
    assert ok.returncode == 0, ok.stderr
    assert sorted(p.suffix for p in figures.iterdir()) and all(
        p.stat().st_size > 0 for p in figures.iterdir())
