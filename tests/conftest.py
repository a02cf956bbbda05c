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
