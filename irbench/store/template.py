"""The empty store, kept to be copied: every new store starts as the file that this irbench's
migrations (:data:`~irbench.store.schema.MIGRATIONS`) make with this DuckDB, so the first one
made is kept in the cache folder (``stores/``) and the next ones are copies of it (1 ms instead
of the 80 ms of running the migrations), as PostgreSQL makes a database from its template.

The kept file is named by a key of the DuckDB version and the migrations' text (another
version or another migration: another file) and by the sha256 of its bytes, checked before
each copy; a file that does not match is removed and the migrations run again. A store copied
from it records the times its migrations were applied to the kept file. Nothing here is
needed: a cache folder that cannot be read or written only means the migrations run.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..cache import cache_folder
from ..files import write_file
from .connection import imported_duckdb
from .schema import MIGRATIONS

MAX_BYTES = 16 << 20  # an empty store is ~0.8 MB; anything bigger is not one


def _key() -> str:
    text = json.dumps([imported_duckdb().__version__, MIGRATIONS])  # imported when a store is made
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _folder() -> str:
    return os.path.join(cache_folder(), "stores")


def copy_empty(dest: str) -> bool:
    """Write the kept empty store to ``dest`` (a new file, synced to disk); False when there
    is none that matches its name, or the copy could not be written (nothing left behind)."""
    prefix = f"empty-{_key()}-"
    try:
        names = sorted(n for n in os.listdir(_folder())
                       if n.startswith(prefix) and n.endswith(".duckdb"))
    except OSError:
        return False
    for name in names:
        kept = os.path.join(_folder(), name)
        data = _read(kept)
        if data is None or hashlib.sha256(data).hexdigest() != name[len(prefix):-7]:
            _remove(kept)
            continue
        try:
            _write(dest, data)
        except OSError:
            return False
        return True
    return False


def keep_empty(made: str) -> None:
    """Keep ``made``, a store just made by the migrations and closed, as the empty store (when
    the cache folder takes it; else nothing)."""
    if os.path.exists(made + ".wal"):
        return  # not wholly in its file
    data = _read(made)
    if data is None:
        return
    folder = _folder()
    try:
        os.makedirs(folder, exist_ok=True)
        write_file(os.path.join(
            folder, f"empty-{_key()}-{hashlib.sha256(data).hexdigest()}.duckdb"), data)
    except OSError:
        pass


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    return data if 0 < len(data) <= MAX_BYTES else None


def _write(path: str, data: bytes) -> None:
    """``data`` as the new file ``path``, synced to disk; removed if it could not be written
    whole."""
    with open(path, "xb") as fh:
        try:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        except OSError:
            _remove(path)
            raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
