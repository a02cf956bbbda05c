"""Pools judged over days, built pools, stored analyses and the Parquet export."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import OutputError, StoreError
from ..files import replacing_folder, replacing_name
from ..ids import ids_text
from .reads import sql_string, view_sql
from .records import Judgment, JudgmentColumns


class Labels(Protocol):
    """Labels as columns (a :class:`irbench.trec.Qrels` has them)."""

    query_id: np.ndarray
    doc_id: np.ndarray
    relevance: np.ndarray

    def __len__(self) -> int: ...


class Pools:
    """Pools judged over days, built pools, stored analyses and the Parquet export."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def _insert_columns(self, verb: str, table: str, rows: dict) -> None: ...  # the Store's

    def record_judged(self, rows: Sequence[Judgment] | JudgmentColumns
                      ) -> int:  # Judging's (before Pools)
        raise NotImplementedError

    def load_pool(self, name: str) -> tuple[str, bytes] | None:
        """(state JSON, arrays) of a pool being judged, or None."""
        row = self.con.execute("SELECT state, arrays FROM pools WHERE name = ?",
                               [name]).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    def save_pool(self, name: str, strategy: str, state: str, arrays: bytes,
                  judgments: Sequence[tuple[str, str, int]] | Labels = (), source: str = "",
                  judge: str = "assessor") -> None:
        """Save a pool's state and the judgments just recorded (by assessor ``judge``, from
        file ``source``): (topic, document, relevance) rows, or columns ``query_id``,
        ``doc_id`` (bytes or text) and ``relevance`` (a :class:`irbench.trec.Qrels` read from
        the file), in one transaction."""
        with self.transaction():
            self.con.execute(
                "INSERT INTO pools (name, strategy, state, arrays, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, now(), now()) ON CONFLICT (name) DO "
                "UPDATE SET strategy = excluded.strategy, state = excluded.state, "
                "arrays = excluded.arrays, updated_at = now()",
                [name, strategy, state, arrays])
            if len(judgments):  # idempotent per (pool, topic, document, file, judge): a
                # file given again (after a crash, or by habit) records nothing twice
                if isinstance(judgments, Sequence):
                    self.record_judged([Judgment(query_id=q, doc_id=d, relevance=r,
                                                 judge=judge, pool=name, source=source)
                                        for q, d, r in judgments])
                else:
                    self.record_judged(JudgmentColumns(
                        length=len(judgments), query_id=ids_text(judgments.query_id),
                        doc_id=ids_text(judgments.doc_id), relevance=judgments.relevance,
                        judge=judge, pool=name, source=source))

    def save_built_pool(self, name: str, strategy: str, params: str, seed: int,
                        docs: dict, provenance: dict) -> None:
        """Replace the stored pool ``name``: its documents and who contributed each, at which
        rank (columns as numpy arrays), in one transaction. Ids (bytes or text) are stored by
        :func:`irbench.ids.id_text`: one with bytes that are not UTF-8 as their ``\\xNN``."""
        with self.transaction():
            for table in ("pool_docs", "pool_provenance", "pool_builds"):
                self.con.execute(f"DELETE FROM {table} WHERE pool = ?", [name])
            self.con.execute("INSERT INTO pool_builds VALUES (?, ?, ?, ?, now())",
                             [name, strategy, params, seed])
            for table, columns in (("pool_docs", docs), ("pool_provenance", provenance)):
                n = len(next(iter(columns.values())))
                ids = {k: ids_text(np.asarray(columns[k])) for k in ("query_id", "doc_id")}
                self._insert_columns("INSERT INTO", table, {
                    "pool": np.full(n, name, dtype=object), **columns, **ids})

    def drop_pool(self, name: str) -> None:
        with self.transaction():
            self.con.execute("DELETE FROM pools WHERE name = ?", [name])
            self.con.execute("DELETE FROM judgments WHERE pool = ?", [name])

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

    def export_parquet(self, path: str, qrels: str | None, measures: Sequence[str],
                       systems: Sequence[str] = (), per_query: bool = False,
                       partition_by: str | None = None) -> None:
        """Write the means (or, ``per_query``, every per-topic value) of ``measures`` on
        ``qrels`` (None: every set) to a Parquet file (DuckDB's writer, no extra package),
        rows in the order ``means``/``per_query`` read them. ``partition_by`` (``system`` or
        ``qrels``): a hive-partitioned dataset in folder ``path``, one folder per value named by
        its key (:func:`partition_key`: ``system_key=bm25-run-3f2a9c01d4/...``), the exact
        value in the files' own column: read back by DuckDB, pandas, pyarrow and Spark with
        every name exact, whatever it is (``__HIVE_DEFAULT_PARTITION__``, names differing only
        in case, names longer than a file name may be), and never leaving the folder."""
        if partition_by not in (None, "system", "qrels"):
            raise StoreError(f"partition by system or qrels, not {partition_by!r}")
        sql, params = view_sql("per_query" if per_query else "means", qrels, systems, measures)
        option = ""
        if partition_by:  # a fixed column name: never a participant's text
            sql = (f"SELECT *, {partition_key(partition_by)} AS {partition_by}_key "
                   f"FROM ({sql})")
            option = f", PARTITION_BY ({partition_by}_key)"
        written = replacing_folder(path) if partition_by else replacing_name(path)
        try:
            with written as target:  # a failure leaves what was at path as it was
                self.con.write_out(f"COPY ({sql}) TO '{sql_string(target)}' "
                                   f"(FORMAT parquet{option})", params, path)
        except OSError as exc:  # making or renaming the temporary file or folder
            raise OutputError(f"{path}: cannot write ({exc.strerror}); nothing was changed "
                              "there") from None


def partition_key(column: str) -> str:
    """SQL for the folder key of a partition value: at most 40 characters of it in lower
    case ASCII letters, digits, '.', '_' and '-' (every other run of characters one '-'),
    then '-' and 10 hex digits of its sha256. Unique per value, the same on every file
    system (case-insensitive ones too), never a reader's null marker, never too long."""
    return (f"left(lower(regexp_replace({column}, '[^A-Za-z0-9._-]+', '-', 'g')), 40) || '-' "
            f"|| left(sha256({column}), 10)")
