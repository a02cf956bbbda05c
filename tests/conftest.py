import gc
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """Each test keeps irbench's run stamps (irbench.runner.stamp) in a folder of its own, never in
    the user's ~/.cache; subprocesses inherit it."""
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("irbench-cache")))


@pytest.fixture
def no_dask_client_left():
    """For the cluster tests. distributed's LoopRunner has one lock for the class: a Client
    left by an earlier test, garbage-collected (its __del__ closes it) in the thread a new
    Client is starting, waits for that lock while the start waits for the thread (a deadlock
    seen in the full suite). Leftovers are collected here, where no lock is held."""
    gc.collect()
    yield
    gc.collect()


@pytest.fixture
def browser():
    """Debian's Chromium in Playwright (tests/desk_server.py ``chromium``), for the pages of
    ``irbench assess`` (the modules using it are skipped where Chromium or Playwright is
    missing)."""
    from desk_server import chromium

    with chromium() as launched:
        yield launched
