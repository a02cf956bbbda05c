"""One DuckDB connection held safely: the file lock (a second writer waits or is told who
holds it), transactions, and storage errors told apart (:func:`storage_error`: a full disk, a
file-size limit, a name too long, no permission, a read-only file system, a write that failed
earlier, or a truly damaged file), each saying what happened and what to do."""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from ..cache import alive
from ..errors import OutputError, StoreError, StoreValueError
from ..files import replacing_name
from ..runner.engine import stops_blocked
from .reads import sql_string


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
                self._rollback()
                raise
            self.store.con.execute("COMMIT")
        else:
            self.store._clear_pending()
            self._rollback()
        return False

    def _rollback(self) -> None:
        """ROLLBACK after an error, which stays the error raised: a rollback that fails too
        (DuckDB invalidates a database after a failed write) adds nothing to it."""
        self.store._ids, self.store._created = None, set()  # ids made inside are gone
        try:
            self.store.con.execute("ROLLBACK")
        except (StoreError, imported_duckdb().Error):
            pass


DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


NO_EXTENSIONS: dict[str, str | bool | int | float | list[str]] = {
    "autoload_known_extensions": False, "autoinstall_known_extensions": False}


def imported_duckdb():
    """DuckDB, imported when a store is first opened (90 ms: ``irbench run`` forks its workers
    and has them scoring before it opens a new store)."""
    with stops_blocked():  # a kill during the import: delivered after it, not inside it
        import duckdb

    return duckdb


@functools.cache
def _caught() -> tuple:
    """DuckDB's errors that :class:`Connection` turns into a StoreError: damage (an I/O,
    internal, serialization, invalid input, fatal, catalog, transaction or out-of-memory
    error) and :func:`value_errors`."""
    d = imported_duckdb()
    return (d.IOException, d.InternalException, d.SerializationException,
            d.InvalidInputException, d.FatalException, d.CatalogException,
            d.TransactionException, d.OutOfMemoryException, *value_errors())


def value_errors() -> tuple:
    """A write refused for a value it was given: the store is fine (not damage)."""
    d = imported_duckdb()
    return (d.ConversionException, d.ConstraintException, d.OutOfRangeException,
            d.TypeMismatchException)

# DuckDB's InvalidInputException also covers a value Python could not hand over (a str with a
# lone surrogate: "Python Conversion Failure: cannot encode str as UTF-8"), told by its words
VALUE_WORDS = ("Conversion", "UTF-8", "UTF8", "nicode", "surrogate")


ADVICE = ("restore it from a backup, or move it away and run 'irbench run CONFIG' to score "
          "the campaign again from its inputs; keep the damaged file: the judgments made in "
          "it ('irbench pool judge') are in no input, and no rerun makes them again")

INTACT = ("nothing of this write was stored: the store is as it was after its last complete "
          "write, and the command can be run again")

# what an operating system error in DuckDB's message means, and what to do about it
CAUSES = (
    (("No space left on device", "ENOSPC", "not enough space", "disk is full"),
     "the disk is full", "free some space there and run the command again"),
    (("File too large", "EFBIG"), "a file-size limit was reached (ulimit -f, or the file "
     "system's largest file)", "raise the limit, or put the file on another file system"),
    (("File name too long", "ENAMETOOLONG"), "a file name is longer than the file system "
     "allows", "use a shorter name"),
    (("ermission denied", "EACCES", "EPERM"), "permission was denied",
     "check the file's and its folder's permissions"),
    (("ead-only file system", "EROFS", "read-only"), "the file system is read-only",
     "put the file on a writable file system"),
    (("Out of Memory", "out of memory"), "DuckDB ran out of memory",
     "close other programs, or set a smaller --workers"),
)


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
    duckdb = imported_duckdb()
    check_file(path)
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            return duckdb.connect(path, read_only=read_only, config=NO_EXTENSIONS)
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower():
                raise storage_error(path, exc) from None
            if time.monotonic() >= deadline:
                holder = lock_holder(text)
                if wait > 0:
                    raise StoreError(f"{path}: the score store is still in use by another "
                                     f"process{holder} after waiting {wait:g} s; wait for it "
                                     "to finish, or give a longer --wait") from None
                raise StoreError(f"{path}: the score store is in use by another "
                                 f"process{holder}; wait for it to finish (or pass --wait "
                                 "SECONDS)") from None
            time.sleep(0.2)
        except duckdb.Error as exc:
            raise storage_error(path, exc) from None


def cause(text: str) -> tuple[str, str] | None:
    """(what happened, what to do) for an operating system error named in ``text``."""
    for words, what, todo in CAUSES:
        if any(w in text for w in words):
            return what, todo
    return None


def storage_error(path: str, exc: BaseException) -> StoreError:
    """The StoreError for a DuckDB error that is no fault of irbench's, told apart: a full
    disk, a file-size limit, a name too long, no permission or a read-only file system (the
    store is intact), a database DuckDB stopped using after such a failure, part of the
    schema dropped, or a truly damaged file. A value a write could not store (a conversion,
    encoding, range or constraint error) is a :class:`StoreValueError`, never damage."""
    duckdb, text = imported_duckdb(), first_line(exc)
    if is_value_error(exc):
        return StoreValueError(f"{path}: a write to the score store was refused: a value "
                               f"could not be stored ({text}); {INTACT}")
    found = cause(str(exc))
    if found is not None:
        what, todo = found
        return StoreError(f"{path}: cannot write the score store: {what} ({text}); {INTACT}; "
                          f"{todo}")
    if "invalidated" in text:
        return StoreError(f"{path}: an earlier write to the score store failed, so DuckDB "
                          f"stopped using it ({text}); {INTACT} once the cause is fixed")
    if isinstance(exc, duckdb.TransactionException):  # a conflict, an aborted transaction
        return StoreError(f"{path}: a write to the score store failed ({text}); {INTACT}")
    if isinstance(exc, duckdb.CatalogException):
        return StoreError(f"{path}: the score store lacks part of its schema ({text}): it was "
                          f"changed by another program; {ADVICE}", damaged=path)
    return StoreError(f"{path}: the score store is damaged ({text}); {ADVICE}", damaged=path)


def is_value_error(exc: BaseException) -> bool:
    """Whether a DuckDB error is a value a write could not store, not the file's fault."""
    if isinstance(exc, value_errors()):
        return True
    return (isinstance(exc, imported_duckdb().InvalidInputException)
            and any(word in str(exc) for word in VALUE_WORDS))


def rescue_judgments(path: str) -> str:
    """Copy the judgments of the damaged store at ``path`` (read-only) to ``PATH.judgments.tsv``
    beside it, and say so; or say that they could not be read. Never raises."""
    target = f"{path}.judgments.tsv"
    for k in range(2, 1000):  # never over an earlier rescue
        if not os.path.lexists(target):
            break
        target = f"{path}.judgments-{k}.tsv"
    unreadable = ("its judgments could not be read ({}): keep the file, a backup of it may "
                  "still hold them")
    duckdb = imported_duckdb()
    try:
        con = duckdb.connect(path, read_only=True, config=NO_EXTENSIONS)
    except duckdb.Error as exc:
        return unreadable.format(first_line(exc))
    try:
        row = con.execute("SELECT count(*) FROM judgments").fetchone()
        count = row[0] if row else 0
        if not count:
            return "it holds no judgments"
        query = "SELECT * FROM judgments ORDER BY pool, query_id, doc_id, batch"  # any schema
        try:
            with replacing_name(target) as name:
                con.execute(f"COPY ({query}) TO '{sql_string(name)}' "
                            "(FORMAT csv, DELIMITER '\t', HEADER true)")
        except (duckdb.Error, OSError) as exc:
            return (f"its {count:,} judgments could not be written to {target} "
                    f"({first_line(exc)}): keep the damaged file, they are in it")
    except duckdb.Error as exc:
        return unreadable.format(first_line(exc))
    finally:
        con.close()
    return (f"its {count:,} judgments were saved to {target} (one row per judgment, with "
            "its judge where recorded) before anything else: keep that file")


class Connection:
    """A store's DuckDB connection: a DuckDB error that is not irbench's doing (a damaged
    file, a dropped table or view) becomes a :class:`StoreError` naming the store and what to
    do; results are fetched from it as from DuckDB's."""

    def __init__(self, con, path: str, use: str = ""):
        self._con, self._path, self._use = con, path, use

    def use(self, statement: str) -> None:
        """Run ``statement`` (a USE of a schema) now and on every cursor made from here."""
        self._call("execute", statement)
        self._use = statement

    def _call(self, method: str, *args):
        try:
            return getattr(self._con, method)(*args)
        except _caught() as exc:
            raise storage_error(self._path, exc) from None

    def execute(self, sql: str, params=None) -> Connection:
        self._call("execute", sql, *(() if params is None else (params,)))
        return self

    def write_out(self, sql: str, params, target: str) -> None:
        """Run a ``COPY ... TO`` statement writing the file ``target``: a failure names that
        file and its cause (an :class:`OutputError`), not the store."""
        try:
            self._con.execute(sql, params)
        except imported_duckdb().Error as exc:
            found = cause(str(exc))
            why = (f"{found[0]} ({first_line(exc)}); {found[1]}" if found is not None
                   else first_line(exc))
            raise OutputError(f"{target}: cannot write: {why}; nothing was changed "
                              "there") from None

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

    def cursor(self) -> Connection:
        """Another connection to the same database (in the same schema), for another
        thread."""
        other = Connection(self._call("cursor"), self._path, self._use)
        if self._use:
            other._call("execute", self._use)
        return other

    def close(self) -> None:
        self._call("close")


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


def lock_holder(text: str) -> str:
    marker = "PID "
    if marker in text:
        pid = text.split(marker, 1)[1].split(")")[0].split()[0]
        return f" (PID {pid})"
    return ""
