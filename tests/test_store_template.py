"""irbench.store.template: a new store is a copy of the empty store the first one kept (the
migrations ran once), never of a kept file that does not match its name, and a cache folder
that takes nothing only means the migrations run."""

from __future__ import annotations

import os

import pytest

from irbench.store import MIGRATIONS, Store, create, template


def _applied(path) -> list:
    with Store(str(path), read_only=True) as store:
        return store.con.execute("SELECT version, name, applied_at FROM migrations "
                                 "ORDER BY version").fetchall()


def _kept(cache) -> list[str]:
    folder = cache / "stores"
    return sorted(os.listdir(folder)) if folder.exists() else []


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(folder))
    return folder


def test_the_second_store_is_a_copy_of_the_first(tmp_path, cache):
    create(str(tmp_path / "a.duckdb"))
    assert len(_kept(cache)) == 1 and _kept(cache)[0].startswith("empty-")
    create(str(tmp_path / "b.duckdb"))
    first, second = _applied(tmp_path / "a.duckdb"), _applied(tmp_path / "b.duckdb")
    assert len(first) == len(MIGRATIONS)
    assert second == first  # the same times: copied, not migrated again
    assert not [p for p in os.listdir(tmp_path) if ".new-" in p]
    with Store(str(tmp_path / "b.duckdb")) as store:  # written like any store
        store.con.execute("INSERT INTO topics VALUES ('1', 'one', 0)")
    with Store(str(tmp_path / "a.duckdb"), read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM topics").fetchone()[0] == 0


def test_a_kept_store_that_does_not_match_its_name_is_not_copied(tmp_path, cache):
    create(str(tmp_path / "a.duckdb"))
    kept = cache / "stores" / _kept(cache)[0]
    data = bytearray(kept.read_bytes())
    data[5000] ^= 0xFF
    kept.write_bytes(bytes(data))
    create(str(tmp_path / "b.duckdb"))
    assert _applied(tmp_path / "b.duckdb") != _applied(tmp_path / "a.duckdb")  # migrated
    assert len(_kept(cache)) == 1  # the damaged one removed, the new one kept
    assert (cache / "stores" / _kept(cache)[0]).read_bytes() != bytes(data)


def test_another_schema_keeps_another_store(tmp_path, cache, monkeypatch):
    create(str(tmp_path / "a.duckdb"))
    monkeypatch.setattr(template, "MIGRATIONS", [*MIGRATIONS, ("later", "SELECT 1")])
    assert not template.copy_empty(str(tmp_path / "b.duckdb"))
    assert not (tmp_path / "b.duckdb").exists()


def test_a_cache_folder_that_takes_nothing_only_means_migrations(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(blocker))
    for name in ("a.duckdb", "b.duckdb"):
        create(str(tmp_path / name))
        assert len(_applied(tmp_path / name)) == len(MIGRATIONS)
    assert _applied(tmp_path / "a.duckdb") != _applied(tmp_path / "b.duckdb")


def test_a_copy_that_cannot_be_written_leaves_nothing(tmp_path, cache):
    create(str(tmp_path / "a.duckdb"))
    assert not template.copy_empty(str(tmp_path / "no-such-folder" / "b.duckdb"))
    (tmp_path / "b.duckdb").write_bytes(b"")  # there already: never overwritten
    assert not template.copy_empty(str(tmp_path / "b.duckdb"))
    assert (tmp_path / "b.duckdb").read_bytes() == b""


def test_a_copy_cut_short_is_removed(tmp_path, cache, monkeypatch):
    create(str(tmp_path / "a.duckdb"))

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(template.os, "fsync", full)
    assert not template.copy_empty(str(tmp_path / "b.duckdb"))
    assert not (tmp_path / "b.duckdb").exists()
