"""The score store: one DuckDB file per campaign. The only module that speaks SQL.

``with Store(path) as store:`` opens the file (creating it), applies pending migrations from
:data:`MIGRATIONS` (each recorded in ``migrations``) and holds DuckDB's file lock, so a second
writer gets a :class:`StoreError` instead of a corrupt file. Every write happens in a
transaction; a process killed mid-write leaves the last committed state.

Results are content-addressed: an ``evaluations`` row is the key (sha256 of the run file,
sha256 of the qrels, the evaluation options as canonical JSON, the irbench version), and
``scores``/``summaries`` hang off it per measure. ``current`` says which evaluation each
(system, qrels set) shows now; the documented views ``per_query`` and ``means`` read through
it, so results of an old version of a file are never shown under the system's name.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from .errors import NotStoredError, StoreError
from .measures import measure_list
from .system import System

MIGRATIONS: list[tuple[str, str]] = [
    ("create the score store", """
    CREATE TABLE files (
        path VARCHAR PRIMARY KEY, size BIGINT, mtime_ns BIGINT, sha256 VARCHAR);
    CREATE TABLE runner_runs (
        runner_id INTEGER PRIMARY KEY, config_path VARCHAR, config_sha256 VARCHAR,
        irbench_version VARCHAR, options VARCHAR, environment VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, status VARCHAR,
        evaluated INTEGER, reused INTEGER, failed INTEGER);
    CREATE TABLE topics (query_id VARCHAR PRIMARY KEY, text VARCHAR, position INTEGER);
    CREATE TABLE qrels_sets (
        name VARCHAR PRIMARY KEY, path VARCHAR, sha256 VARCHAR, num_topics INTEGER,
        num_judged BIGINT, num_relevant BIGINT, max_level INTEGER, level_counts BIGINT[],
        topics VARCHAR[], topics_sha256 VARCHAR, status VARCHAR, error VARCHAR,
        runner_id INTEGER);
    CREATE TABLE systems (
        name VARCHAR PRIMARY KEY, path VARCHAR, sha256 VARCHAR, run_tag VARCHAR,
        "group" VARCHAR, type VARCHAR, description VARCHAR, baseline BOOLEAN,
        metadata VARCHAR, status VARCHAR, error VARCHAR, runner_id INTEGER,
        num_topics INTEGER, num_docs BIGINT, answered VARCHAR[]);
    CREATE TABLE measures (
        measure VARCHAR PRIMARY KEY, family VARCHAR, aggregate VARCHAR, description VARCHAR);
    CREATE TABLE suites (
        suite VARCHAR, measure VARCHAR, position INTEGER, PRIMARY KEY (suite, measure));
    CREATE TABLE evaluations (
        evaluation_id INTEGER PRIMARY KEY, run_sha256 VARCHAR, qrels_sha256 VARCHAR,
        options VARCHAR, irbench_version VARCHAR, runner_id INTEGER,
        UNIQUE (run_sha256, qrels_sha256, options, irbench_version));
    CREATE TABLE summaries (
        evaluation_id INTEGER, measure VARCHAR, value DOUBLE, num_topics INTEGER,
        runner_id INTEGER, PRIMARY KEY (evaluation_id, measure));
    CREATE TABLE scores (
        evaluation_id INTEGER, measure VARCHAR, query_id VARCHAR, value DOUBLE);
    CREATE TABLE current (
        system VARCHAR, qrels VARCHAR, evaluation_id INTEGER, PRIMARY KEY (system, qrels));
    CREATE VIEW per_query AS
        SELECT c.system, c.qrels, s.measure, s.query_id, s.value
        FROM current c JOIN scores s USING (evaluation_id);
    CREATE VIEW means AS
        SELECT c.system, c.qrels, m.measure, m.value, m.num_topics
        FROM current c JOIN summaries m USING (evaluation_id);
    """),
    ("run metadata and submission checks", """
    ALTER TABLE systems ADD COLUMN official BOOLEAN;
    ALTER TABLE systems ADD COLUMN priority INTEGER;
    ALTER TABLE systems ADD COLUMN ir_metadata VARCHAR;
    ALTER TABLE systems ADD COLUMN validation VARCHAR;
    ALTER TABLE systems ADD COLUMN problems VARCHAR;
    """),
    ("pools judged over days", """
    CREATE TABLE pools (
        name VARCHAR PRIMARY KEY, strategy VARCHAR, state VARCHAR, arrays BLOB,
        created_at TIMESTAMP, updated_at TIMESTAMP);
    CREATE TABLE judgments (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, relevance INTEGER, batch INTEGER,
        source VARCHAR, judged_at TIMESTAMP);
    """),
    ("built pools with provenance", """
    CREATE TABLE pool_docs (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, sampled BOOLEAN, inclusion DOUBLE,
        stratum INTEGER, position INTEGER);
    CREATE TABLE pool_provenance (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, run VARCHAR, "group" VARCHAR,
        rank INTEGER);
    CREATE TABLE pool_builds (
        pool VARCHAR PRIMARY KEY, strategy VARCHAR, params VARCHAR, seed INTEGER,
        built_at TIMESTAMP);
    """),
    ("analyses kept for reports", """
    CREATE TABLE analyses (
        key VARCHAR PRIMARY KEY, kind VARCHAR, result VARCHAR, created_at TIMESTAMP);
    """),
    ("diversity qrels sets", """
    ALTER TABLE qrels_sets ADD COLUMN kind VARCHAR DEFAULT 'adhoc';
    ALTER TABLE qrels_sets ADD COLUMN intent_weights VARCHAR;
    ALTER TABLE qrels_sets ADD COLUMN intent_weights_sha256 VARCHAR;
    """),
    ("the campaign a store belongs to", """
    CREATE TABLE campaign (
        name VARCHAR PRIMARY KEY, config_path VARCHAR, claimed_at TIMESTAMP);
    """),
    ("which systems were pooled", """
    ALTER TABLE systems ADD COLUMN pooled BOOLEAN;
    """),
    # Migration 1 was once edited in place (three qrels_sets columns added): stores made by
    # its first form were stamped as migrated without them. Never edit an applied migration;
    # tests/test_store_robustness.py pins each one's text.
    ("repair stores made by the first schema", """
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS level_counts BIGINT[];
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS topics VARCHAR[];
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS topics_sha256 VARCHAR;
    """),
    ("the report's profiles and analyses with their parameters", """
    CREATE TABLE IF NOT EXISTS profiles (
        evaluation_id INTEGER, measure VARCHAR, value DOUBLE, PRIMARY KEY (evaluation_id, measure));
    ALTER TABLE analyses ADD COLUMN IF NOT EXISTS params VARCHAR;
    ALTER TABLE systems ADD COLUMN IF NOT EXISTS position INTEGER;
    """),
]

READER_WAIT = 30.0  # seconds a reader waits for a running 'irbench run' by default


@dataclass(frozen=True, kw_only=True)
class Evaluated:
    """Per-topic values and summaries of one (system, qrels set) to store."""

    system: str
    qrels: str
    run_sha256: str
    qrels_sha256: str
    topics: tuple[str, ...]
    values: dict[str, np.ndarray]   # canonical measure name -> per-topic float64
    summaries: dict[str, float]
    profile: dict[str, float] = field(default_factory=dict)  # the report's PROFILE means


@dataclass(frozen=True, kw_only=True)
class SystemRecord:
    """One system's outcome as the store records it (:meth:`Store.record_system`): its
    results, its status, and which evaluation it shows. A failed system keeps showing its
    stored results only when ``keep_current`` (its file is unchanged or unreadable).
    ``reuse``: (qrels set, run sha256, qrels sha256) whose stored results it shows now.
    ``ir_metadata`` (JSON), ``validation`` (the checks' verdict) and ``problems`` (JSON)
    replace the stored ones when given; ``fields`` (group, type from ir_metadata) fill in
    what the config left empty."""

    name: str
    status: str                      # ok or failed
    options: str                     # the evaluation options' key
    version: str                     # irbench's version
    runner_id: int
    results: Sequence[Evaluated] = ()
    sha256: str = ""
    run_tag: str = ""
    error: str | None = None
    keep_current: bool = False
    num_topics: int | None = None
    num_docs: int | None = None
    answered: Sequence[str] | None = ()
    reuse: Sequence[tuple[str, str, str]] = ()
    ir_metadata: str | None = None
    validation: str | None = None
    problems: str | None = None
    fields: dict | None = None


class Store:
    """A campaign's DuckDB file. Use as a context manager; see the module docstring."""

    _in_transaction: bool = False  # set by _Transaction while BEGIN ... COMMIT is open

    def __init__(self, path: str, read_only: bool = False, wait: float | None = None, *,
                 _in_place: bool = False):
        """wait: seconds to wait for another process holding the store; None: READER_WAIT
        when reading (a reader waits out a running ``irbench run``), 0 when writing."""
        wait = wait if wait is not None else (READER_WAIT if read_only else 0.0)
        self.path = path
        self.read_only = read_only
        if read_only and not os.path.exists(path):
            raise StoreError(f"{path}: no score store yet (run 'irbench run CONFIG' first)")
        if not read_only:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if not os.path.exists(path) and not _in_place:
                _create(path)
        self.con = _Connection(_connect(path, read_only, wait), path)
        self._ids: dict | None = None  # evaluation key -> id, loaded on first use
        self._created: set[int] = set()  # ids made by this connection
        self._clear_pending()
        if not read_only:
            self._migrate()
        else:
            self._check_version()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            # a closed store has no connection; typed non-optional as every other use is open
            self.con = None  # type: ignore[assignment]

    # -- schema

    def _applied(self) -> int:
        self.con.execute("CREATE TABLE IF NOT EXISTS migrations ("
                         "version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)")
        row = self.con.execute("SELECT max(version) FROM migrations").fetchone()
        return row[0] or 0

    def _tables(self) -> set[str]:
        rows = self.con.execute("SELECT table_name FROM information_schema.tables "
                                "WHERE table_schema = 'main'").fetchall()
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
        for version, (name, sql) in enumerate(MIGRATIONS, 1):
            if version <= applied:
                continue
            with self.transaction():
                self.con.execute(sql)
                self.con.execute("INSERT INTO migrations VALUES (?, ?, now())", [version, name])

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
        return _Transaction(self)

    # -- file hashes (a cache keyed by path, size and mtime)

    def cached_hashes(self) -> dict[str, tuple[int, int, str]]:
        rows = self.con.execute("SELECT path, size, mtime_ns, sha256 FROM files").fetchall()
        return {path: (size, mtime, sha) for path, size, mtime, sha in rows}

    def remember_hashes(self, rows: Iterable[tuple[str, int, int, str]]) -> None:
        rows = list(rows)
        if not rows:
            return
        columns = {"path": np.array([r[0] for r in rows], dtype=object),
                   "size": np.array([r[1] for r in rows], dtype=np.int64),
                   "mtime_ns": np.array([r[2] for r in rows], dtype=np.int64),
                   "sha256": np.array([r[3] for r in rows], dtype=object)}
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
                          systems: Sequence[dict], qrels: Sequence[dict]) -> None:
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
            self._sync("qrels_sets", "name", qrels, "qrels")

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
            self.con.register("irbench_rows", data)
            try:
                self.con.execute(f"INSERT INTO {table} ({quoted}) SELECT {quoted} FROM "
                                 f"irbench_rows ON CONFLICT ({key}) DO UPDATE SET {updates}")
            finally:
                self.con.unregister("irbench_rows")
            return
        sql = (f"INSERT INTO {table} ({quoted}) VALUES ({marks}) "
               f"ON CONFLICT ({key}) DO UPDATE SET {updates}")
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
            "      SELECT evaluation_id, 'profile:' || measure FROM profiles) s "
            "USING (evaluation_id) "
            "WHERE e.options = ? AND e.irbench_version = ?", [options, version]).fetchall()
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

    def qrels_records(self) -> dict[str, dict]:
        """{qrels set: its stored row as a dict}."""
        columns, rows = self.query("SELECT * FROM qrels_sets")
        return {row[0]: dict(zip(columns, row)) for row in rows}

    def answered_topics(self) -> dict[str, list[str]]:
        """{system: topics its run answers} as last recorded."""
        rows = self.con.execute("SELECT name, answered FROM systems "
                                "WHERE answered IS NOT NULL").fetchall()
        return {name: list(topics) for name, topics in rows}

    def _write(self, results: Sequence[Evaluated], options: str, version: str,
               runner_id: int) -> None:
        for res in results:
            eid = self._evaluation_id(res.run_sha256, res.qrels_sha256, options, version,
                                      runner_id)
            names = list(res.values)
            if names:
                if eid not in self._created:  # an older evaluation may hold some of these
                    self.con.execute("DELETE FROM scores WHERE evaluation_id = ? AND measure "
                                     "IN (SELECT unnest(?))", [eid, names])
                self._queue(eid, res, names, runner_id)
            if res.profile:
                self._pending["profiles"].append({
                    "evaluation_id": np.full(len(res.profile), eid, dtype=np.int64),
                    "measure": np.array(list(res.profile), dtype=object),
                    "value": np.array(list(res.profile.values()), dtype=np.float64)})
            self._pending["current"].append((res.system, res.qrels, eid))

    def _queue(self, eid: int, res: Evaluated, names: list[str], runner_id: int) -> None:
        """Rows for ``scores`` and ``summaries``, inserted in bulk when the transaction ends."""
        t, n = len(res.topics), len(names)
        self._pending["scores"].append({
            "evaluation_id": np.full(t * n, eid, dtype=np.int64),
            "measure": np.repeat(np.array(names, dtype=object), t),
            "query_id": np.tile(np.array(res.topics, dtype=object), n),
            "value": np.concatenate([np.asarray(res.values[m], dtype=np.float64)
                                     for m in names]) if t else np.zeros(0),
        })
        self._pending["summaries"].append({
            "evaluation_id": np.full(n, eid, dtype=np.int64),
            "measure": np.array(names, dtype=object),
            "value": np.array([res.summaries[m] for m in names], dtype=np.float64),
            "num_topics": np.full(n, t, dtype=np.int64),
            "runner_id": np.full(n, runner_id, dtype=np.int64),
        })

    def _insert_pending(self) -> None:
        """Insert the queued rows: one statement per table, from numpy columns."""
        made = self._pending["evaluations"]
        if made:
            names = ("evaluation_id", "run_sha256", "qrels_sha256", "options",
                     "irbench_version", "runner_id")
            self._insert_columns("INSERT INTO", "evaluations", {
                name: np.array([row[i] for row in made],
                               dtype=np.int64 if name.endswith("_id") else object)
                for i, name in enumerate(names)})
        for table, verb in (("scores", "INSERT INTO"), ("summaries", "INSERT OR REPLACE INTO"),
                            ("profiles", "INSERT OR REPLACE INTO")):
            parts = self._pending[table]
            if parts:
                rows = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
                self._insert_columns(verb, table, rows)
        if self._pending["systems"]:
            self._update_systems(self._pending["systems"])
        current = self._pending["current"]
        if current:
            rows = {"system": np.array([c[0] for c in current], dtype=object),
                    "qrels": np.array([c[1] for c in current], dtype=object),
                    "evaluation_id": np.array([c[2] for c in current], dtype=np.int64)}
            self._insert_columns("INSERT OR REPLACE INTO", "current", rows)
        self._clear_pending()

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
        self.con.register("irbench_rows", rows)
        try:
            self.con.execute(f"{verb} {table} SELECT * FROM irbench_rows")
        finally:
            self.con.unregister("irbench_rows")

    def _clear_pending(self) -> None:
        self._pending: dict[str, Any] = {"evaluations": [], "scores": [], "summaries": [],
                                         "profiles": [], "current": [], "systems": {}}

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

    # -- reading

    def query(self, sql: str, params: Sequence = ()) -> tuple[list[str], list[tuple]]:
        """Column names and rows of a read query (parameterised)."""
        cursor = self.con.execute(sql, list(params))
        return [d[0] for d in cursor.description], cursor.fetchall()

    def means(self, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = ()) -> tuple[list[str], list[tuple]]:
        return self.query(*_view_sql("means", qrels, systems, measures))

    def per_query(self, qrels: str | None = None, systems: Sequence[str] = (),
                  measures: Sequence[str] = ()) -> tuple[list[str], list[tuple]]:
        return self.query(*_view_sql("per_query", qrels, systems, measures))

    def frame(self, view: str, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = ()):
        """``means`` or ``per_query`` (the documented views, read as :meth:`means` and
        :meth:`per_query` read them) as a pandas DataFrame, built by DuckDB from columns
        (pandas needed: ``pip install 'irbench[pandas]'``)."""
        sql, params = _view_sql(view, qrels, systems, measures)
        try:
            return self.con.execute(sql, list(params)).df()
        except ModuleNotFoundError as exc:
            raise StoreError(f"data frames need pandas ({exc}): pip install "
                             "'irbench[pandas]'") from None

    def topic_texts(self) -> dict[str, str]:
        """{topic id: its text} of the campaign's topics."""
        return dict(self.con.execute("SELECT query_id, text FROM topics").fetchall())

    def system_hashes(self) -> dict[str, str]:
        """{system: sha256 of its run file as last scored ('' if never read)}."""
        rows = self.con.execute("SELECT name, sha256 FROM systems").fetchall()
        return {name: sha or "" for name, sha in rows}

    def qrels_hash(self, name: str) -> str:
        """The sha256 of qrels set ``name``'s file ('' if the store has no such set)."""
        row = self.con.execute("SELECT sha256 FROM qrels_sets WHERE name = ?",
                               [name]).fetchone()
        return (row[0] or "") if row else ""

    def file_hash(self, path: str) -> str:
        """The sha256 the store recorded for the input file at ``path`` ('' if none)."""
        row = self.con.execute("SELECT sha256 FROM files WHERE path = ?", [path]).fetchone()
        return (row[0] or "") if row else ""

    def inputs(self) -> list[tuple[str, str, str, str]]:
        """(kind, name, path, sha256) of every qrels set and run file, by kind then name."""
        rows = self.con.execute(
            "SELECT 'qrels', name, path, sha256 FROM qrels_sets UNION ALL "
            "SELECT 'run', name, path, sha256 FROM systems ORDER BY 1, 2").fetchall()
        return [(kind, name, path, sha or "") for kind, name, path, sha in rows]

    def last_runner(self) -> tuple | None:
        """(options JSON, started_at, finished_at or None, status) of the latest
        ``irbench run``, or None if there was none."""
        return self.con.execute("SELECT options, started_at, finished_at, status FROM "
                                "runner_runs ORDER BY runner_id DESC LIMIT 1").fetchone()

    def systems_overview(self) -> list[tuple]:
        """Per stored system, by name: (name, group, type, baseline, status, qrels sets with
        current results, stored summaries, topics answered, error)."""
        return self.con.execute(
            "SELECT s.name, s.\"group\", s.type, s.baseline, s.status, "
            "count(DISTINCT c.qrels) AS qrels_sets, "
            "(SELECT count(*) FROM summaries m WHERE m.evaluation_id IN "
            " (SELECT evaluation_id FROM current c2 WHERE c2.system = s.name)) AS results, "
            "s.num_topics, s.error FROM systems s LEFT JOIN current c ON c.system = s.name "
            "GROUP BY ALL ORDER BY s.name").fetchall()

    def stored_systems(self, qrels: str | None = None) -> list[str]:
        """The systems with current results on qrels set ``qrels`` (on any set if None), by
        name."""
        sql, params = _filtered("SELECT DISTINCT system FROM current", qrels, (), ())
        return [r[0] for r in self.con.execute(sql + " ORDER BY 1", params).fetchall()]

    def stored_measures(self, qrels: str | None = None) -> list[str]:
        """The measures (canonical names) with current results on qrels set ``qrels`` (on any
        set if None), by name."""
        sql, params = _filtered("SELECT DISTINCT measure FROM means", qrels, (), ())
        return [r[0] for r in self.con.execute(sql + " ORDER BY 1", params).fetchall()]

    def read_scores(self, system: str, qrels: str, measure: str) -> tuple[list[str], np.ndarray]:
        """(query ids, values) of one system on one measure, ordered by query_id."""
        _, rows = self.query("SELECT query_id, value FROM per_query WHERE system = ? AND "
                             "qrels = ? AND measure = ? ORDER BY query_id",
                             [system, qrels, measure])
        return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.float64)

    def score_matrix(self, qrels: str, measure: str, systems: Sequence[str] = ()
                     ) -> tuple[list[str], list[str], np.ndarray]:
        """(systems, topics, values[system, topic]) of one measure on one qrels set, systems
        and topics sorted by name; NaN where a system has no value for a topic (e.g. under
        ``topics: intersection``)."""
        sql, params = _filtered("SELECT system, query_id, value FROM per_query",
                                qrels, systems, [measure])
        cols = self.con.execute(sql, params).fetchnumpy()
        names, si = np.unique(np.asarray(cols["system"], dtype=str), return_inverse=True)
        topics, ti = np.unique(np.asarray(cols["query_id"], dtype=str), return_inverse=True)
        matrix = np.full((len(names), len(topics)), np.nan)
        matrix[si, ti] = np.asarray(cols["value"], dtype=np.float64)
        return names.tolist(), topics.tolist(), matrix

    # -- pools judged over days

    def load_pool(self, name: str) -> tuple[str, bytes] | None:
        """(state JSON, arrays) of a pool being judged, or None."""
        row = self.con.execute("SELECT state, arrays FROM pools WHERE name = ?",
                               [name]).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    def save_pool(self, name: str, strategy: str, state: str, arrays: bytes,
                  judgments: Sequence[tuple[str, str, int]] = (), source: str = "") -> None:
        """Save a pool's state and the judgments just recorded, in one transaction."""
        with self.transaction():
            self.con.execute(
                "INSERT INTO pools VALUES (?, ?, ?, ?, now(), now()) ON CONFLICT (name) DO "
                "UPDATE SET strategy = excluded.strategy, state = excluded.state, "
                "arrays = excluded.arrays, updated_at = now()",
                [name, strategy, state, arrays])
            if judgments:  # idempotent per (pool, topic, document, file): a file given
                # again (after a crash, or by habit) records nothing twice
                batch = self.con.execute("SELECT coalesce(max(batch), 0) + 1 FROM judgments "
                                         "WHERE pool = ?", [name]).fetchone()[0]
                q, d, r = (list(column) for column in zip(*judgments))
                self.con.execute(
                    "INSERT INTO judgments SELECT ?, n.q, n.d, n.r, ?, ?, now() FROM "
                    "(SELECT unnest(?) AS q, unnest(?) AS d, unnest(?) AS r) AS n "
                    "WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.pool = ? AND "
                    "j.query_id = n.q AND j.doc_id = n.d AND j.source = ?)",
                    [name, batch, source, q, d, r, name, source])

    def save_built_pool(self, name: str, strategy: str, params: str, seed: int,
                        docs: dict, provenance: dict) -> None:
        """Replace the stored pool ``name``: its documents and who contributed each, at which
        rank (columns as numpy arrays), in one transaction."""
        with self.transaction():
            for table in ("pool_docs", "pool_provenance", "pool_builds"):
                self.con.execute(f"DELETE FROM {table} WHERE pool = ?", [name])
            self.con.execute("INSERT INTO pool_builds VALUES (?, ?, ?, ?, now())",
                             [name, strategy, params, seed])
            for table, columns in (("pool_docs", docs), ("pool_provenance", provenance)):
                n = len(next(iter(columns.values())))
                self._insert_columns("INSERT INTO", table,
                                     {"pool": np.full(n, name, dtype=object), **columns})

    def load_analysis(self, key: str) -> str | None:
        """The stored result (JSON) of an analysis with this content key, or None."""
        row = self.con.execute("SELECT result FROM analyses WHERE key = ?", [key]).fetchone()
        return None if row is None else row[0]

    def analysis_kinds(self) -> dict[str, str]:
        """{kind: the parameters (JSON) of the one stored analysis of that kind}."""
        return dict(self.con.execute("SELECT kind, coalesce(params, '') FROM analyses")
                    .fetchall())

    def save_analysis(self, key: str, kind: str, result: str, params: str = "") -> None:
        """Keep ``result`` as the one analysis of ``kind`` (an older one, for other inputs or
        parameters, is replaced: never shown as current)."""
        with self.transaction():
            self.con.execute("DELETE FROM analyses WHERE kind = ?", [kind])
            self.con.execute("INSERT INTO analyses (key, kind, result, created_at, params) "
                             "VALUES (?, ?, ?, now(), ?)", [key, kind, result, params])

    def profiles(self, qrels: str) -> dict[str, dict[str, float]]:
        """{system: {measure: mean}} of the report's profile (judged@k, the 11-point curve)
        that ``irbench run`` keeps for every system shown on qrels set ``qrels``."""
        out: dict[str, dict[str, float]] = {}
        for system, measure, value in self.con.execute(
                "SELECT c.system, p.measure, p.value FROM current c "
                "JOIN profiles p USING (evaluation_id) WHERE c.qrels = ? "
                "ORDER BY c.system, p.measure", [qrels]).fetchall():
            out.setdefault(system, {})[measure] = value
        return out

    def declared_systems(self) -> list[System]:
        """The systems as the config declared them at the last ``irbench run`` (name, path,
        group, type, description, baseline, official, priority, pooled), in config order."""
        rows = self.con.execute(
            'SELECT name, path, coalesce("group", \'\'), coalesce(type, \'\'), '
            "coalesce(description, ''), coalesce(baseline, false), coalesce(official, true), "
            "priority, pooled FROM systems ORDER BY position NULLS LAST, name").fetchall()
        return [System(name=name, path=path, group=group, type=kind, description=description,
                       baseline=baseline, official=official, priority=priority, pooled=pooled)
                for name, path, group, kind, description, baseline, official, priority, pooled
                in rows]

    def shown_systems(self, qrels: str) -> list[tuple[str, str, str]]:
        """(name, run file path, sha256) of the systems with results shown on ``qrels``, in
        name order."""
        return self.con.execute(
            "SELECT s.name, s.path, s.sha256 FROM systems s JOIN current c ON c.system = s.name "
            "WHERE c.qrels = ? ORDER BY s.name", [qrels]).fetchall()

    def drop_pool(self, name: str) -> None:
        with self.transaction():
            self.con.execute("DELETE FROM pools WHERE name = ?", [name])
            self.con.execute("DELETE FROM judgments WHERE pool = ?", [name])

    def export_parquet(self, path: str, qrels: str | None, measures: Sequence[str],
                       systems: Sequence[str] = (), per_query: bool = False,
                       partition_by: str | None = None) -> None:
        """Write the means (or, ``per_query``, every per-topic value) of ``measures`` on
        ``qrels`` (None: every set) to a Parquet file (DuckDB's writer, no extra package),
        rows in the order ``means``/``per_query`` read them. ``partition_by`` (``system`` or
        ``qrels``): a hive-partitioned dataset in folder ``path`` (``system=NAME/...``, the
        value percent-encoded, so a participant's name never leaves the folder), read back by
        DuckDB, pandas, pyarrow and Spark."""
        if partition_by not in (None, "system", "qrels"):
            raise StoreError(f"partition by system or qrels, not {partition_by!r}")
        sql, params = _view_sql("per_query" if per_query else "means", qrels, systems, measures)
        option = f", PARTITION_BY ({partition_by})" if partition_by else ""  # a fixed name
        self.con.execute(f"COPY ({sql}) TO '{_sql_string(path)}' (FORMAT parquet{option})",
                         params)


_VIEWS = {  # view -> (select, alias of its columns, order): each view read one way
    "means": ("SELECT system, qrels, measure, value, num_topics FROM means", "",
              "qrels, measure, value DESC, system"),
    "per_query": ("SELECT p.system, p.qrels, p.measure, p.query_id, p.value FROM per_query p "
                  "LEFT JOIN topics t USING (query_id)", "p.",
                  "p.system, p.qrels, p.measure, t.position, p.query_id"),
}


def _view_sql(view: str, qrels, systems, measures) -> tuple[str, list]:
    """(SQL, parameters) reading one of the documented views, filtered and ordered."""
    select, alias, order = _VIEWS[view]
    sql, params = _filtered(select, qrels, systems, measures, alias=alias)
    return f"{sql} ORDER BY {order}", list(params)


def _filtered(sql: str, qrels, systems, measures, alias: str = "") -> tuple[str, list]:
    clauses, params, measures = [], [], measure_list(measures)
    if isinstance(systems, (str, bytes)):  # iterated, 'groupA-1' would be its letters
        raise NotStoredError(f"systems must be a list of system names, not the string "
                             f"{systems!r}: write [{systems!r}]")
    if qrels is not None:
        clauses.append(f"{alias}qrels = ?")
        params.append(qrels)
    if systems:
        clauses.append(f"{alias}system IN (SELECT unnest(?))")
        params.append(list(systems))
    if measures:
        clauses.append(f"{alias}measure IN (SELECT unnest(?))")
        params.append(measures)
    return (sql + (" WHERE " + " AND ".join(clauses) if clauses else "")), params


def _sql_string(text: str) -> str:
    """A path quoted for a SQL string literal (COPY TO takes no parameter for its target)."""
    return text.replace("'", "''")


class _Transaction:
    """BEGIN ... COMMIT, or ROLLBACK on an exception; nested uses join the outer one."""

    def __init__(self, store: Store):
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


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _check_file(path: str) -> None:
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


def _connect(path: str, read_only: bool, wait: float):
    _check_file(path)
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            return duckdb.connect(path, read_only=read_only, config=NO_EXTENSIONS)
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower():
                raise _damaged(path, exc) from None
            if time.monotonic() >= deadline:
                holder = _lock_holder(text)
                raise StoreError(
                    f"{path}: the score store is in use by another process{holder}; wait for "
                    "it to finish (or pass --wait SECONDS)") from None
            time.sleep(0.2)
        except duckdb.Error as exc:
            raise _damaged(path, exc) from None


def _damaged(path: str, exc: BaseException) -> StoreError:
    """The StoreError for a DuckDB error that is no fault of irbench's: a damaged file, part of
    the schema dropped, a file that cannot be read or written."""
    text = _first_line(exc)
    if isinstance(exc, duckdb.CatalogException):
        return StoreError(f"{path}: the score store lacks part of its schema ({text}): it was "
                          f"changed by another program; {ADVICE}")
    if isinstance(exc, duckdb.IOException) and ("ermission" in text or "ead-only" in text):
        return StoreError(f"{path}: cannot write the score store ({text})")
    return StoreError(f"{path}: the score store is damaged ({text}); {ADVICE}")


class _Connection:
    """A store's DuckDB connection: a DuckDB error that is not irbench's doing (a damaged
    file, a dropped table or view) becomes a :class:`StoreError` naming the store and what to
    do; results are fetched from it as from DuckDB's."""

    def __init__(self, con, path: str):
        self._con, self._path = con, path

    def _call(self, method: str, *args):
        try:
            return getattr(self._con, method)(*args)
        except DAMAGE as exc:
            raise _damaged(self._path, exc) from None

    def execute(self, sql: str, params=None) -> _Connection:
        self._call("execute", sql, *(() if params is None else (params,)))
        return self

    def executemany(self, sql: str, params) -> _Connection:
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


def _create(path: str) -> None:
    """A new store, made whole beside ``path`` and linked into place only once its schema is
    written: a run killed while creating the file leaves no half-made store behind (a stray
    ``.new-PID`` file at most, removed by the next creation once that process is gone). If
    another process got there first, its store is kept."""
    _remove_strays(path)
    new = f"{path}.new-{os.getpid()}"
    for leftover in (new, new + ".wal"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    try:
        with Store(new, _in_place=True):
            pass  # migrations applied, closed (checkpointed)
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


def _remove_strays(path: str) -> None:
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
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True


def _lock_holder(text: str) -> str:
    marker = "PID "
    if marker in text:
        pid = text.split(marker, 1)[1].split(")")[0].split()[0]
        return f" (PID {pid})"
    return ""
