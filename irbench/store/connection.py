"""One DuckDB connection held safely: the file lock (a second writer waits or is told who
holds it), transactions, a damaged file told apart from a full disk."""

from __future__ import annotations

import os
import time
from typing import Any

import duckdb

from ..errors import StoreError


class Transaction:
    """BEGIN ... COMMIT, or ROLLBACK on an exception; nested uses join the outer one."""

    def __init__(self, store: Any):
        self.store = store
        self.outer = False

    def __enter__(self):
        self.outer = not getattr(self.store, "_in_transaction", False)
        if self.outer:
            self.store.con.execute("BEGIN TRANSACTION")
            self.store._in_transaction = True
        return self.store.con

    def __exit__(self, exc_type, exc, tb):
        if not self.outer:
            return False
        self.store._in_transaction = False
        if exc_type is None:
            try:
                self.store._insert_pending()
            except BaseException:
                self.store.con.execute("ROLLBACK")
                self.store._ids, self.store._created = None, set()
                raise
            self.store.con.execute("COMMIT")
        else:
            self.store._clear_pending()
            self.store.con.execute("ROLLBACK")
            self.store._ids = None  # ids made inside are gone
            self.store._created = set()
        return False


DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


NO_EXTENSIONS: dict[str, str | bool | int | float | list[str]] = {
    "autoload_known_extensions": False, "autoinstall_known_extensions": False}


DAMAGE = (duckdb.IOException, duckdb.InternalException, duckdb.SerializationException,
          duckdb.InvalidInputException, duckdb.FatalException, duckdb.CatalogException)


ADVICE = ("restore it from a backup, or move it away and run 'irbench run CONFIG' to score "
          "the campaign again from its inputs")


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def check_file(path: str) -> None:
    """Refuse a file that is not a DuckDB database before DuckDB opens it (DuckDB would try to
    fetch an extension for an SQLite file, or report a raw error)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the score store ({exc.strerror})") from None
    if not head:
        return  # an empty file: DuckDB makes a store of it
    if len(head) < 12 or head[8:12] != DUCKDB_MAGIC:
        kind = ("an SQLite database" if head.startswith(b"SQLite format 3") else
                "a truncated file" if len(head) < 12 else "not a DuckDB database")
        raise StoreError(f"{path}: not an irbench score store ({kind}); point the config's "
                         "'store:' elsewhere, or move this file away")


def connect(path: str, read_only: bool, wait: float):
    check_file(path)
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            return duckdb.connect(path, read_only=read_only, config=NO_EXTENSIONS)
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower():
                raise damaged(path, exc) from None
            if time.monotonic() >= deadline:
                holder = lock_holder(text)
                raise StoreError(
                    f"{path}: the score store is in use by another process{holder}; wait for "
                    "it to finish (or pass --wait SECONDS)") from None
            time.sleep(0.2)
        except duckdb.Error as exc:
            raise damaged(path, exc) from None


def damaged(path: str, exc: BaseException) -> StoreError:
    """The StoreError for a DuckDB error that is no fault of irbench's: a damaged file, part of
    the schema dropped, a file that cannot be read or written."""
    text = first_line(exc)
    if isinstance(exc, duckdb.CatalogException):
        return StoreError(f"{path}: the score store lacks part of its schema ({text}): it was "
                          f"changed by another program; {ADVICE}")
    if isinstance(exc, duckdb.IOException) and ("ermission" in text or "ead-only" in text):
        return StoreError(f"{path}: cannot write the score store ({text})")
    return StoreError(f"{path}: the score store is damaged ({text}); {ADVICE}")


class Connection:
    """A store's DuckDB connection: a DuckDB error that is not irbench's doing (a damaged
    file, a dropped table or view) becomes a :class:`StoreError` naming the store and what to
    do; results are fetched from it as from DuckDB's."""

    def __init__(self, con, path: str):
        self._con, self._path = con, path

    def _call(self, method: str, *args):
        try:
            return getattr(self._con, method)(*args)
        except DAMAGE as exc:
            raise damaged(self._path, exc) from None

    def execute(self, sql: str, params=None) -> Connection:
        self._call("execute", sql, *(() if params is None else (params,)))
        return self

    def executemany(self, sql: str, params) -> Connection:
        self._call("executemany", sql, params)
        return self

    def fetchone(self):
        return self._call("fetchone")

    def fetchall(self):
        return self._call("fetchall")

    def fetchnumpy(self):
        return self._call("fetchnumpy")

    def df(self):
        return self._call("df")

    @property
    def description(self):
        return self._con.description

    def register(self, name: str, data) -> None:
        self._call("register", name, data)

    def unregister(self, name: str) -> None:
        self._call("unregister", name)

    def close(self) -> None:
        self._con.close()


def remove_strays(path: str) -> None:
    """Remove ``PATH.new-PID`` (and its ``.wal``) left by creations killed midway, whose
    process is gone."""
    folder, base = os.path.split(os.path.abspath(path))
    try:
        names = os.listdir(folder)
    except OSError:
        return
    prefix = base + ".new-"
    for name in sorted(names):
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix):].removesuffix(".wal")
        if not pid.isdigit() or alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True


def lock_holder(text: str) -> str:
    marker = "PID "
    if marker in text:
        pid = text.split(marker, 1)[1].split(")")[0].split()[0]
        return f" (PID {pid})"
    return ""
