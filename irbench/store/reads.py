"""The store's reads: the documented views (``per_query``, ``means``) and every query the
report, the commands and notebooks make."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import NotStoredError, StoreError
from ..measures import measure_list
from ..system import System


class Reads:
    """The store's reads (the documented views and what the report and the commands ask)."""

    con: Any

    def query(self, sql: str, params: Sequence = ()) -> tuple[list[str], list[tuple]]:
        """Column names and rows of a read query (parameterised)."""
        cursor = self.con.execute(sql, list(params))
        return [d[0] for d in cursor.description], cursor.fetchall()

    def means(self, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = ()) -> tuple[list[str], list[tuple]]:
        return self.query(*view_sql("means", qrels, systems, measures))

    def per_query(self, qrels: str | None = None, systems: Sequence[str] = (),
                  measures: Sequence[str] = ()) -> tuple[list[str], list[tuple]]:
        return self.query(*view_sql("per_query", qrels, systems, measures))

    def frame(self, view: str, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = ()):
        """``means`` or ``per_query`` (the documented views, read as :meth:`means` and
        :meth:`per_query` read them) as a pandas DataFrame, built by DuckDB from columns
        (pandas needed: ``pip install 'irbench[pandas]'``)."""
        sql, params = view_sql(view, qrels, systems, measures)
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
        sql, params = filtered("SELECT DISTINCT system FROM current", qrels, (), ())
        return [r[0] for r in self.con.execute(sql + " ORDER BY 1", params).fetchall()]

    def stored_measures(self, qrels: str | None = None) -> list[str]:
        """The measures (canonical names) with current results on qrels set ``qrels`` (on any
        set if None), by name."""
        sql, params = filtered("SELECT DISTINCT measure FROM means", qrels, (), ())
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
        sql, params = filtered("SELECT system, query_id, value FROM per_query",
                                qrels, systems, [measure])
        cols = self.con.execute(sql, params).fetchnumpy()
        names, si = np.unique(np.asarray(cols["system"], dtype=str), return_inverse=True)
        topics, ti = np.unique(np.asarray(cols["query_id"], dtype=str), return_inverse=True)
        matrix = np.full((len(names), len(topics)), np.nan)
        matrix[si, ti] = np.asarray(cols["value"], dtype=np.float64)
        return names.tolist(), topics.tolist(), matrix

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
        group, type, description, baseline, official, priority, pooled, metadata, kind,
        answer format), in config
        order."""
        rows = self.con.execute(
            'SELECT name, path, coalesce("group", \'\'), coalesce(type, \'\'), '
            "coalesce(description, ''), coalesce(baseline, false), coalesce(official, true), "
            "priority, pooled, metadata, coalesce(kind, 'run'), answer_format FROM systems "
            "ORDER BY position NULLS LAST, name").fetchall()
        return [System(name=name, path=path, group=group, type=type_, description=description,
                       baseline=baseline, official=official, priority=priority, pooled=pooled,
                       metadata=_mapping(metadata), kind=kind, answer_format=answer_format)
                for name, path, group, type_, description, baseline, official, priority, pooled,
                metadata, kind, answer_format in rows]

    def shown_systems(self, qrels: str) -> list[tuple[str, str, str]]:
        """(name, run file path, sha256) of the systems with results shown on ``qrels``, in
        name order."""
        return self.con.execute(
            "SELECT s.name, s.path, s.sha256 FROM systems s JOIN current c ON c.system = s.name "
            "WHERE c.qrels = ? ORDER BY s.name", [qrels]).fetchall()

    def qrels_records(self) -> dict[str, dict]:
        """{qrels set: its stored row as a dict}."""
        columns, rows = self.query("SELECT * FROM qrels_sets")
        return {row[0]: dict(zip(columns, row)) for row in rows}

    def unanswered_topics(self, qrels: Sequence[str]) -> dict[str, list[str]]:
        """{qrels set: its topics that no system's run answers (as last recorded), in the
        set's order} for the sets ``qrels`` that have any; {} when no run answers anything.
        Computed here, so a campaign of 1,000,000 topics brings no topic list into Python."""
        rows = self.con.execute(
            "WITH answered AS (SELECT DISTINCT unnest(answered) AS query_id FROM systems "
            "WHERE answered IS NOT NULL), judged AS (SELECT name, unnest(topics) AS query_id, "
            "generate_subscripts(topics, 1) AS i FROM qrels_sets "
            "WHERE name IN (SELECT unnest(?::VARCHAR[]))) "
            "SELECT name, query_id FROM judged ANTI JOIN answered USING (query_id) "
            "WHERE EXISTS (SELECT 1 FROM answered) ORDER BY name, i", [list(qrels)]).fetchall()
        out: dict[str, list[str]] = {}
        for name, topic in rows:
            out.setdefault(name, []).append(topic)
        return out


VIEWS = {  # view -> (select, alias of its columns, order): each view read one way
    "means": ("SELECT system, qrels, measure, value, num_topics FROM means", "",
              "qrels, measure, value DESC, system"),
    "per_query": ("SELECT p.system, p.qrels, p.measure, p.query_id, p.value FROM per_query p "
                  "LEFT JOIN topics t USING (query_id)", "p.",
                  "p.system, p.qrels, p.measure, t.position, p.query_id"),
}


def _mapping(text: str | None) -> dict:
    """A system's stored metadata (JSON of a mapping) as a dict; {} for none or another value."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def view_sql(view: str, qrels, systems, measures) -> tuple[str, list]:
    """(SQL, parameters) reading one of the documented views, filtered and ordered."""
    select, alias, order = VIEWS[view]
    sql, params = filtered(select, qrels, systems, measures, alias=alias)
    return f"{sql} ORDER BY {order}", list(params)


def filtered(sql: str, qrels, systems, measures, alias: str = "") -> tuple[str, list]:
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


def sql_string(text: str) -> str:
    """A path quoted for a SQL string literal (COPY TO takes no parameter for its target)."""
    return text.replace("'", "''")
