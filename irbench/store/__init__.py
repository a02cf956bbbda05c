"""The score store: one DuckDB file per campaign. The only package that speaks SQL.

``with Store(path) as store:`` opens the file (creating it), applies pending migrations from
:data:`MIGRATIONS` (each recorded in ``migrations``) and holds DuckDB's file lock, so a second
writer gets a :class:`StoreError` instead of a corrupt file. Every write happens in a
transaction; a process killed mid-write leaves the last committed state.

Results are content-addressed: an ``evaluations`` row is the key (sha256 of the run file,
sha256 of the qrels, the evaluation options as canonical JSON, the irbench version), and
``scores``/``summaries`` hang off it per measure. ``current`` says which evaluation each
(system, qrels set) shows now; the documented views ``per_query`` and ``means`` read through
it, so results of an old version of a file are never shown under the system's name.

The package: ``schema.py`` (the migrations), ``connection.py`` (the file lock, transactions,
damage), ``records.py`` (what the runner hands over; a judgment row, :class:`Judgment`),
``reads.py``, ``pools.py``, ``judging.py`` and ``assessing.py`` (reads, pools and analyses,
judgments with their judges and their one writer, the browser's assessors and clicks, mixed
into :class:`Store`), ``answer_labels.py`` (labels of generated answers: support, nuggets;
mixed in through ``judging.py``), and here the runner's bookkeeping.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import asdict
from typing import Any

import numpy as np

from ..errors import StoreError
from .answer_labels import AnswerLabel
from .assessing import Assessing, Assessor, Click
from .commands import CommandRun, Commands
from .connection import Connection, Transaction, connect, remove_strays
from .judging import Judging, ModelAnswer
from .nuggets import NuggetEditError, Nuggets, NuggetVersion, StoredNugget
from .pools import Pools
from .reads import Reads
from .records import (
    ASSESSED,
    JUDGMENT_FIELDS,
    PROFILE_PREFIX,
    Evaluated,
    FileFacts,
    Judgment,
    JudgmentColumns,
    QrelsRecord,
    SystemRecord,
)
from .schema import MIGRATIONS
from .template import copy_empty, keep_empty

__all__ = ["ASSESSED", "JUDGMENT_FIELDS", "MIGRATIONS", "PROFILE_PREFIX", "READER_WAIT",
           "AnswerLabel", "Assessor", "Click", "CommandRun", "Evaluated", "FileFacts", "Judgment",
           "JudgmentColumns", "ModelAnswer", "NuggetEditError", "NuggetVersion", "QrelsRecord",
           "Store", "StoredNugget", "SystemRecord"]


MAIN = "main"  # the store's part for a config with one collection (DuckDB's main schema)
SCOPE_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")  # a collection's name
READER_WAIT = 30.0  # seconds a reader waits for a running 'irbench run' by default


class Store(Reads, Judging, Nuggets, Commands, Assessing,
            Pools):  # Judging before Pools: Pools names its methods
    """A campaign's DuckDB file. Use as a context manager; see the module docstring."""

    _in_transaction: bool = False  # set by Transaction while BEGIN ... COMMIT is open

    def __init__(self, path: str, read_only: bool = False, wait: float | None = None, *,
                 scope: str = MAIN, _in_place: bool = False):
        """wait: seconds to wait for another process holding the store; None: READER_WAIT
        when reading (a reader waits out a running ``irbench run``), 0 when writing.
        ``scope``: the part of the file read and written (a config's
        :attr:`~irbench.config.Config.scope`): ``main`` for a config with one collection, a
        collection's name for a config with several (a schema of its own, made on first
        write, with every table and view: every score keyed by its collection)."""
        wait = wait if wait is not None else (READER_WAIT if read_only else 0.0)
        self.path = path
        self.read_only = read_only
        if read_only and not os.path.exists(path):
            raise StoreError(f"{path}: no score store yet (run 'irbench run CONFIG' first)")
        if not read_only:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if not os.path.exists(path) and not _in_place:
                create(path)
        self.con = Connection(connect(path, read_only, wait), path)
        self.scope = scope
        if scope != MAIN:
            self._enter(scope)
        self._ids: dict | None = None  # evaluation key -> id, loaded on first use
        self._created: set[int] = set()  # ids made by this connection
        self._clear_pending()
        if not read_only:
            self._migrate()
        else:
            self._check_version()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        try:  # the error in flight is what happened: one of closing adds nothing to it
            self.close()
        except (StoreError, OSError):
            self.con = None

    def for_thread(self) -> Store:
        """This store on a connection of its own (a DuckDB cursor: the same database, its own
        transactions), for another thread; close it there."""
        other = copy.copy(self)
        other.con = self.con.cursor()
        other._in_transaction = False
        other._clear_pending()
        return other

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None  # a closed store has no connection

    # -- schema

    def _enter(self, scope: str) -> None:
        """Read and write the schema ``scope`` from now on (made when writing)."""
        if not SCOPE_RE.fullmatch(scope) or scope.lower() in ("temp", "information_schema",
                                                               "pg_catalog"):
            raise ValueError(f"not a store scope: {scope!r}")
        catalog = self.con.execute("SELECT current_database()").fetchone()[0]
        found = self.con.execute("SELECT count(*) FROM duckdb_schemas() WHERE "  # as _tables
                                 "database_name = ? AND schema_name = ?",
                                 [catalog, scope]).fetchone()[0]
        if not found:
            if self.read_only:
                raise StoreError(f"{self.path}: no scores of collection '{scope}' yet (run "
                                 "'irbench run CONFIG' first)")
            self.con.execute(f'CREATE SCHEMA IF NOT EXISTS "{scope}"')
        self.con.use(f'USE "{catalog.replace(chr(34), chr(34) * 2)}"."{scope}"')

    def _applied(self) -> int:
        self.con.execute("CREATE TABLE IF NOT EXISTS migrations ("
                         "version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)")
        row = self.con.execute("SELECT max(version) FROM migrations").fetchone()
        return row[0] or 0

    def _tables(self) -> set[str]:
        # DuckDB's own catalog functions: information_schema's view costs 5 ms to bind
        rows = self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = current_schema() UNION ALL SELECT view_name FROM duckdb_views() "
            "WHERE NOT internal AND database_name = current_database() "
            "AND schema_name = current_schema()").fetchall()
        return {r[0] for r in rows}

    def _migrate(self) -> None:
        tables = self._tables()
        if tables and "migrations" not in tables:
            raise StoreError(f"{self.path}: a DuckDB database but not an irbench score store "
                             f"(it holds {', '.join(sorted(tables)[:5])}); irbench does not "
                             "write into it: point the config's 'store:' elsewhere")
        applied = self._applied()
        if applied > len(MIGRATIONS):
            raise StoreError(f"{self.path}: made by a newer irbench (schema {applied}, this "
                             f"one knows {len(MIGRATIONS)}); upgrade irbench to use it")
        # new: one transaction (0.03 s less); else each migration kept once it is committed
        with self.transaction() if applied == 0 else nullcontext():
            for version, (name, sql) in enumerate(MIGRATIONS, 1):
                if version > applied:
                    with self.transaction():
                        self.con.execute(sql)
                        self.con.execute("INSERT INTO migrations VALUES (?, ?, now())",
                                         [version, name])

    def _check_version(self) -> None:
        if "migrations" not in self._tables():
            raise StoreError(f"{self.path}: not an irbench score store (a DuckDB database "
                             "without irbench's schema)")
        row = self.con.execute("SELECT max(version) FROM migrations").fetchone()
        applied = row[0] or 0
        if applied > len(MIGRATIONS):
            raise StoreError(f"{self.path}: made by a newer irbench (schema {applied}, this "
                             f"one knows {len(MIGRATIONS)}); upgrade irbench to read it")
        if applied < len(MIGRATIONS):
            raise StoreError(f"{self.path}: made by an older irbench (schema {applied} of "
                             f"{len(MIGRATIONS)}); run 'irbench run CONFIG' once to migrate it "
                             "(a read-only copy cannot be migrated: copy it somewhere "
                             "writable first)")

    def transaction(self):
        return Transaction(self)

    # -- file hashes (a cache keyed by path, size and mtime)

    def cached_hashes(self) -> dict[str, FileFacts]:
        """{path: its facts when last read}."""
        rows = self.con.execute("SELECT path, size, mtime_ns, sha256 FROM files").fetchall()
        return {row[0]: FileFacts(*row) for row in rows}

    def remember_hashes(self, facts: Iterable[FileFacts]) -> None:
        rows = list(facts)
        if not rows:
            return
        columns = {"path": np.array([r.path for r in rows], dtype=object),
                   "size": np.array([r.size for r in rows], dtype=np.int64),
                   "mtime_ns": np.array([r.mtime_ns for r in rows], dtype=np.int64),
                   "sha256": np.array([r.sha256 for r in rows], dtype=object)}
        with self.transaction():
            self._insert_columns("INSERT OR REPLACE INTO", "files", columns)

    # -- runner runs

    def claim(self, name: str, config_path: str) -> None:
        """Make this store campaign ``name``'s (the first ``irbench run`` into it does);
        StoreError if it holds another campaign: one config's run would otherwise replace
        the other's results."""
        with self.transaction():
            row = self.con.execute("SELECT name, config_path FROM campaign").fetchone()
            if row is None:
                self.con.execute("INSERT INTO campaign VALUES (?, ?, now())",
                                 [name, config_path])
            elif row[0] != name:
                raise StoreError(
                    f"{self.path}: this store holds campaign '{row[0]}' (scored from "
                    f"{row[1]}), not '{name}'; a store holds one campaign: give this config "
                    "a 'store:' of its own, or the same 'name:' if it is the same campaign")

    def start_runner(self, config_path: str, config_sha256: str, version: str, options: str,
                     environment: dict) -> int:
        with self.transaction():
            self.con.execute("UPDATE runner_runs SET status = 'interrupted' "
                             "WHERE status = 'running'")
            row = self.con.execute("SELECT coalesce(max(runner_id), 0) + 1 "
                                   "FROM runner_runs").fetchone()
            self.con.execute(
                "INSERT INTO runner_runs VALUES (?, ?, ?, ?, ?, ?, now(), NULL, 'running', "
                "0, 0, 0)",
                [row[0], config_path, config_sha256, version, options,
                 json.dumps(environment, sort_keys=True)])
        return row[0]

    def finish_runner(self, runner_id: int, status: str, evaluated: int, reused: int,
                      failed: int) -> None:
        with self.transaction():
            self.con.execute(
                "UPDATE runner_runs SET finished_at = now(), status = ?, evaluated = ?, "
                "reused = ?, failed = ? WHERE runner_id = ?",
                [status, evaluated, reused, failed, runner_id])

    # -- what the config declares

    def sync_declarations(self, topics: Sequence[tuple[str, str]],
                          measures: Sequence[tuple[str, str, str, str]],
                          suites: Sequence[tuple[str, str, int]],
                          systems: Sequence[dict], qrels: Sequence[QrelsRecord]) -> None:
        """Replace topics, measures, suites; upsert systems and qrels sets, dropping those the
        config no longer names (their ``current`` rows go with them)."""
        with self.transaction():
            self.con.execute("DELETE FROM topics")
            if topics:
                self.con.executemany("INSERT INTO topics VALUES (?, ?, ?)",
                                     [(q, t, i) for i, (q, t) in enumerate(topics)])
            self.con.execute("DELETE FROM measures")
            self.con.executemany("INSERT INTO measures VALUES (?, ?, ?, ?)", list(measures))
            self.con.execute("DELETE FROM suites")
            self.con.executemany("INSERT INTO suites VALUES (?, ?, ?)", list(suites))
            self._sync("systems", "name", systems, "system")
            self._sync("qrels_sets", "name", [asdict(q) for q in qrels], "qrels")

    def _sync(self, table: str, key: str, rows: Sequence[dict], current_column: str) -> None:
        names = [row[key] for row in rows]
        columns = list(rows[0]) if rows else [key]
        quoted_all = ", ".join(f'"{c}"' for c in columns)
        stored = {r[0]: r for r in self.con.execute(f"SELECT {quoted_all} FROM {table}")
                  .fetchall()}
        gone = [n for n in stored if n not in names]
        for name in gone:
            self.con.execute(f"DELETE FROM {table} WHERE {key} = ?", [name])
            self.con.execute(f"DELETE FROM current WHERE {current_column} = ?", [name])
        changed = [row for row in rows if stored.get(row[key]) != tuple(row[c] for c in columns)]
        if not changed:
            return
        quoted = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" for _ in columns)
        updates = ", ".join(f'"{c}" = excluded."{c}"' for c in columns if c != key)
        if len(changed) > 8 and not any(isinstance(row[c], (list, tuple))
                                        for row in changed for c in columns):
            # many rows (a first run): one statement from columns of Python values
            data = {c: np.array([row[c] for row in changed] + [None], dtype=object)[:-1]
                    for c in columns}
            upsert = f" ON CONFLICT ({key}) DO UPDATE SET {updates}" if stored else ""
            self.con.register("irbench_rows", data)  # (into an empty table: no upsert)
            try:
                self.con.execute(f"INSERT INTO {table} ({quoted}) SELECT {quoted} FROM "
                                 f"irbench_rows{upsert}")
            finally:
                self.con.unregister("irbench_rows")
            return
        sql = f"INSERT INTO {table} ({quoted}) VALUES ({marks})" + (
            f" ON CONFLICT ({key}) DO UPDATE SET {updates}" if stored else "")  # 3x faster
        for row in changed:  # few rows change after the first run
            self.con.execute(sql, [row[c] for c in columns])

    def set_status(self, table: str, name: str, status: str, error: str | None,
                   runner_id: int, **columns: Any) -> None:
        """Record a system's or qrels set's status (``ok``, ``failed``) and columns."""
        if table not in ("systems", "qrels_sets"):
            raise ValueError(table)
        sets = ", ".join([f'"{c}" = ?' for c in columns] + ["status = ?", "error = ?",
                                                            "runner_id = ?"])
        with self.transaction():
            self.con.execute(f"UPDATE {table} SET {sets} WHERE name = ?",
                             [*columns.values(), status, error, runner_id, name])

    def forget_current(self, system: str | None = None, qrels: str | None = None) -> None:
        """Stop showing results for a system or qrels set (its input changed and failed)."""
        with self.transaction():
            if system is not None:
                self.con.execute("DELETE FROM current WHERE system = ?", [system])
            if qrels is not None:
                self.con.execute("DELETE FROM current WHERE qrels = ?", [qrels])

    # -- results

    def done_measures(self, options: str, version: str) -> dict[tuple[str, str], set[str]]:
        """{(run_sha256, qrels_sha256): measures stored} for these options and version; the
        report's profile values are named ``profile:<measure>``."""
        rows = self.con.execute(
            "SELECT e.run_sha256, e.qrels_sha256, s.measure FROM evaluations e "
            "JOIN (SELECT evaluation_id, measure FROM summaries UNION ALL "
            "      SELECT evaluation_id, ? || measure FROM profiles) s "
            "USING (evaluation_id) "
            "WHERE e.options = ? AND e.irbench_version = ?",
            [PROFILE_PREFIX, options, version]).fetchall()
        done: dict[tuple[str, str], set[str]] = {}
        for run_sha, qrels_sha, measure in rows:
            done.setdefault((run_sha, qrels_sha), set()).add(measure)
        return done

    def point(self, system: str, qrels: str, run_sha256: str, qrels_sha256: str,
              options: str, version: str, runner_id: int) -> None:
        """Make (system, qrels) show the evaluation with this key (created if missing)."""
        with self.transaction():
            eid = self._evaluation_id(run_sha256, qrels_sha256, options, version, runner_id)
            self.con.execute("INSERT OR REPLACE INTO current VALUES (?, ?, ?)",
                             [system, qrels, eid])

    def _evaluation_id(self, run_sha256, qrels_sha256, options, version, runner_id) -> int:
        """The id of the evaluation with this key, created if missing. Ids are kept in memory
        (this process holds the store's lock, so no one else adds any); a rolled-back
        transaction forgets the ones it made."""
        if self._ids is None:
            rows = self.con.execute("SELECT run_sha256, qrels_sha256, options, irbench_version, "
                                    "evaluation_id FROM evaluations").fetchall()
            self._ids = {tuple(r[:4]): r[4] for r in rows}
            self._next_id = max(self._ids.values(), default=0) + 1
        key = (run_sha256, qrels_sha256, options, version)
        if key in self._ids:
            return self._ids[key]
        eid = self._next_id
        self._next_id += 1
        if self._in_transaction:
            self._pending["evaluations"].append((eid, *key, runner_id))
        else:
            self.con.execute("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?)",
                             [eid, *key, runner_id])
        self._ids[key] = eid
        self._created.add(eid)
        return eid

    def point_many(self, rows: Sequence[tuple[str, str, str, str]], options: str, version: str,
                   runner_id: int) -> None:
        """``point`` for many (system, qrels, run_sha256, qrels_sha256) in one transaction,
        touching only the rows that change."""
        if not rows:
            return
        shown = dict(((s, q), e) for s, q, e in
                     self.con.execute("SELECT system, qrels, evaluation_id FROM current")
                     .fetchall())
        with self.transaction():
            for system, qrels, run_sha, qrels_sha in rows:
                eid = self._evaluation_id(run_sha, qrels_sha, options, version, runner_id)
                if shown.get((system, qrels)) != eid:
                    self.con.execute("INSERT OR REPLACE INTO current VALUES (?, ?, ?)",
                                     [system, qrels, eid])

    def record_system(self, record: SystemRecord) -> None:
        """One system's outcome (see :class:`SystemRecord`) in one transaction: its results in
        bulk, its status, and which evaluation it shows."""
        r = record
        name, status, runner_id, answered = r.name, r.status, r.runner_id, r.answered
        options, version = r.options, r.version
        with self.transaction():
            self._write(r.results, options, version, runner_id)
            for qrels, run_sha, qrels_sha in r.reuse:
                eid = self._evaluation_id(run_sha, qrels_sha, options, version, runner_id)
                self.con.execute("INSERT OR REPLACE INTO current VALUES (?, ?, ?)",
                                 [name, qrels, eid])
            if status != "ok" and not r.keep_current:
                self.con.execute("DELETE FROM current WHERE system = ?", [name])
            self._pending["systems"][name] = (
                r.sha256, r.run_tag, status, r.error, runner_id, r.num_topics, r.num_docs,
                status == "ok" and answered is not None, list(answered or ()), r.ir_metadata,
                r.validation, r.problems)
            for column, value in (r.fields or {}).items():
                if column in ("group", "type"):
                    self.con.execute(f'UPDATE systems SET "{column}" = ? WHERE name = ? AND '
                                     f'coalesce("{column}", \'\') = \'\'', [value, name])

    def _write(self, results: Sequence[Evaluated], options: str, version: str,
               runner_id: int) -> None:
        for res in results:
            eid = self._evaluation_id(res.run_sha256, res.qrels_sha256, options, version,
                                      runner_id)
            names = [str(m) for m in res.values]
            if names:
                if eid not in self._created:  # an older evaluation may hold some of these
                    self.con.execute("DELETE FROM scores WHERE evaluation_id = ? AND measure "
                                     "IN (SELECT unnest(?))", [eid, names])
                self._queue(eid, res, names, runner_id)
            if res.profile:
                self._pending["profiles"].append({
                    "evaluation_id": np.full(len(res.profile), eid, dtype=np.int64),
                    "measure": np.array([str(m) for m in res.profile], dtype=object),
                    "value": np.array(list(res.profile.values()), dtype=np.float64)})
            self._pending["current"].append((res.system, res.qrels, eid))

    def _queue(self, eid: int, res: Evaluated, names: list[str], runner_id: int) -> None:
        """Rows for ``scores`` (a row per topic with a column per measure, unpivoted when
        inserted: see :meth:`_insert_scores`) and ``summaries``, inserted in bulk when the
        transaction ends."""
        t, n = len(res.topics), len(names)
        self._pending["scores"].append((tuple(names), {
            "evaluation_id": np.full(t, eid, dtype=np.int64),
            "query_id": np.array(res.topics, dtype=object),
            **{f"v{i}": np.asarray(v, dtype=np.float64)
               for i, v in enumerate(res.values.values())}}))
        self._pending["summaries"].append({
            "evaluation_id": np.full(n, eid, dtype=np.int64),
            "measure": np.array(names, dtype=object),
            "value": np.array([res.summaries[m] for m in res.values], dtype=np.float64),
            "num_topics": np.full(n, t, dtype=np.int64),
            "runner_id": np.full(n, runner_id, dtype=np.int64),
        })

    def _insert_pending(self) -> None:
        """Insert the queued rows: one statement per table, from numpy columns. The systems'
        status goes first: its lists of answered topics are big parameters (150 MB for
        1,000,000 topics), converted while the transaction holds no scores yet."""
        if self._pending["systems"]:
            self._update_systems(self._pending["systems"])
        made = self._pending["evaluations"]
        if made:
            names = ("evaluation_id", "run_sha256", "qrels_sha256", "options",
                     "irbench_version", "runner_id")
            self._insert_columns("INSERT INTO", "evaluations", {
                name: np.array([row[i] for row in made],
                               dtype=np.int64 if name.endswith("_id") else object)
                for i, name in enumerate(names)})
        self._insert_scores(self._pending["scores"])
        for table in ("summaries", "profiles"):
            parts = self._pending[table]
            if parts:
                rows = parts[0] if len(parts) == 1 else \
                    {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
                eids = [int(p["evaluation_id"][0]) for p in parts]  # one evaluation a part
                new = len(set(eids)) == len(eids) and self._created.issuperset(eids)
                # rows of evaluations made here, once each: nothing to replace (3 x faster)
                self._insert_columns("INSERT INTO" if new else "INSERT OR REPLACE INTO",
                                     table, rows)
        current = self._pending["current"]
        if current:
            rows = {"system": np.array([c[0] for c in current], dtype=object),
                    "qrels": np.array([c[1] for c in current], dtype=object),
                    "evaluation_id": np.array([c[2] for c in current], dtype=np.int64)}
            self._insert_columns("INSERT OR REPLACE INTO", "current", rows)
        self._clear_pending()

    def _insert_scores(self, parts: list[tuple[tuple[str, ...], dict]]) -> None:
        """``scores`` rows from the queued parts, one statement per set of measures: the
        parts' columns joined and unpivoted by DuckDB (a NaN, which DuckDB reads as NULL, kept
        as a row). Inserting the 6,000,000 values of a 1,000,000-topic run took 386 MB as
        long columns of Python strings, and takes 116 MB so."""
        groups: dict[tuple[str, ...], list[dict]] = {}
        for names, part in parts:
            groups.setdefault(names, []).append(part)
        for names, group in groups.items():
            rows = group[0] if len(group) == 1 else \
                {c: np.concatenate([p[c] for p in group]) for c in group[0]}
            columns = ", ".join(f"v{i}" for i in range(len(names)))
            measure = " ".join(f"WHEN 'v{i}' THEN ?" for i in range(len(names)))
            self._from_rows(
                rows, f"INSERT INTO scores SELECT evaluation_id, CASE k {measure} END, "
                f"query_id, value FROM irbench_rows UNPIVOT INCLUDE NULLS "
                f"(value FOR k IN ({columns}))", list(names))

    def _update_systems(self, status: dict[str, tuple]) -> None:
        """The recorded systems' status columns in one UPDATE (list parameters unnested into
        rows), whatever the number of systems in the transaction."""
        columns = list(zip(*status.values()))
        self.con.execute(
            "UPDATE systems SET sha256 = coalesce(nullif(r.sha256, ''), systems.sha256), "
            "run_tag = coalesce(nullif(r.run_tag, ''), systems.run_tag), status = r.status, "
            "error = r.error, runner_id = r.runner_id, "
            "num_topics = coalesce(r.num_topics, systems.num_topics), "
            "num_docs = coalesce(r.num_docs, systems.num_docs), "
            "answered = CASE WHEN r.set_answered THEN r.answered ELSE systems.answered END, "
            "ir_metadata = coalesce(r.ir_metadata, systems.ir_metadata), "
            "validation = coalesce(r.validation, systems.validation), "
            "problems = coalesce(r.problems, systems.problems) "
            "FROM (SELECT unnest(?::VARCHAR[]) AS name, unnest(?::VARCHAR[]) AS sha256, "
            "unnest(?::VARCHAR[]) AS run_tag, unnest(?::VARCHAR[]) AS status, "
            "unnest(?::VARCHAR[]) AS error, unnest(?::INTEGER[]) AS runner_id, "
            "unnest(?::INTEGER[]) AS num_topics, unnest(?::BIGINT[]) AS num_docs, "
            "unnest(?::BOOLEAN[]) AS set_answered, unnest(?::VARCHAR[][]) AS answered, "
            "unnest(?::VARCHAR[]) AS ir_metadata, unnest(?::VARCHAR[]) AS validation, "
            "unnest(?::VARCHAR[]) AS problems) r "
            "WHERE systems.name = r.name",
            [list(status), *(list(c) for c in columns)])

    def _insert_columns(self, verb: str, table: str, rows: dict) -> None:
        self._from_rows(rows, f"{verb} {table} SELECT * FROM irbench_rows")

    def _from_rows(self, rows: dict, sql: str, params: list | None = None) -> None:
        """Run ``sql`` reading the numpy columns ``rows`` as the table ``irbench_rows``."""
        self.con.register("irbench_rows", rows)
        try:
            self.con.execute(sql, params)
        finally:
            self.con.unregister("irbench_rows")

    def _clear_pending(self) -> None:
        self._pending: dict[str, Any] = {"evaluations": [], "scores": [], "summaries": [],
                                         "profiles": [], "current": [], "systems": {}}

    def release_memory(self) -> None:
        """Let DuckDB drop the blocks it keeps cached (committed tables, their indexes): a
        memory limit below them evicts them, and the limit is then DuckDB's default again
        (irbench sets none). After declaring a campaign of 1,000,000 topics it held 220 MB
        that scoring never reads; they are read back from the file when needed."""
        self.con.execute("SET memory_limit = '32MB'")
        self.con.execute("RESET memory_limit")

    def collect_garbage(self) -> int:
        """Delete evaluations no (system, qrels set) shows any more; returns how many."""
        with self.transaction():
            gone = self.con.execute(
                "SELECT count(*) FROM evaluations WHERE evaluation_id NOT IN "
                "(SELECT evaluation_id FROM current)").fetchone()[0]
            if gone:
                for table in ("scores", "summaries", "profiles", "evaluations"):
                    self.con.execute(f"DELETE FROM {table} WHERE evaluation_id NOT IN "
                                     "(SELECT evaluation_id FROM current)")
        return gone


def create(path: str) -> None:
    """A new store, made whole beside ``path`` and linked into place only once its schema is
    written: a run killed while creating the file leaves no half-made store behind (a stray
    ``.new-PID`` file at most, removed by the next creation once that process is gone). If
    another process got there first, its store is kept."""
    remove_strays(path)
    new = f"{path}.new-{os.getpid()}"
    for leftover in (new, new + ".wal"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    try:
        if not copy_empty(new):  # the empty store, kept from the first made (template.py)
            with Store(new, _in_place=True):
                pass  # migrations applied, closed (checkpointed)
            keep_empty(new)
        try:
            os.link(new, path)  # fails if the store appeared meanwhile: never replaces one
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.exists(path):
                os.rename(new, path)
    except StoreError as exc:  # name the user's store, not the temporary file
        raise StoreError(str(exc).replace(new, path)) from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the score store ({exc.strerror})") from None
    finally:
        for leftover in (new, new + ".wal"):
            if os.path.exists(leftover):
                os.unlink(leftover)
