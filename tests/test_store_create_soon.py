"""irbench.store.create_soon: ``irbench run`` makes a new store in a thread while it imports the
runner and reads its inputs (bench/results-collections.md); the store it leaves is the store
``Store(path)`` would make, an existing store is left alone, and a store that cannot be made is
reported by ``Store(path)`` as before."""

from __future__ import annotations

import os

import pytest

from irbench.errors import StoreError
from irbench.store import MIGRATIONS, Store
from irbench.store.creation import create_soon


def test_a_new_store_is_made_beside_the_caller(tmp_path):
    path = str(tmp_path / "deep" / "er" / "scores.duckdb")
    wait = create_soon(path)
    wait()
    assert os.path.exists(path)
    assert not [p for p in os.listdir(tmp_path / "deep" / "er") if ".new-" in p]
    with Store(path) as store:
        version = store.con.execute("SELECT max(version) FROM migrations").fetchone()[0]
    assert version == len(MIGRATIONS)


def test_an_existing_store_is_left_alone(tmp_path):
    path = str(tmp_path / "scores.duckdb")
    with Store(path) as store:
        store.con.execute("CREATE TABLE mine AS SELECT 42 AS x")
    before = os.stat(path).st_mtime_ns
    wait = create_soon(path)
    wait()
    assert os.stat(path).st_mtime_ns == before
    with Store(path) as store:
        assert store.con.execute("SELECT x FROM mine").fetchone()[0] == 42


def test_a_store_that_cannot_be_made_is_reported_by_store(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    path = str(blocker / "scores.duckdb")
    create_soon(path)()  # no exception from the thread, nothing made
    assert not os.path.exists(path)
    with pytest.raises((StoreError, OSError)):
        Store(path)
