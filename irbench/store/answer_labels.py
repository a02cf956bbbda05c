"""Labels of generated answers (mixed into Store): support labels of (sentence, cited segment)
units, and room for nugget assignments, in the table ``answer_labels`` (migration 20).

Each row is an :class:`AnswerLabel`: the task (``support``, ``nugget``), the topic, the unit
(``sentence_text`` and ``reference``, the cited segment, for support; ``reference``, the
nugget's id, and ``run_id`` for a nugget assignment), the run and sentence position when the
label was made for one run's sentence (NULL: it serves every run writing that sentence citing
that segment in that topic, as the ``support_shared`` judgment kind keys labels), the label
(2 / 1 / 0) and who gave it, as ``judgments`` keeps a relevance label's. A model judge's
labels come from its answers (:meth:`irbench.store.judging.Judging.save_answers` routes the
answers of an answer task here); :meth:`AnswerLabels.record_answer_labels` is the one writer
of the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

SUPPORT, NUGGET = "support", "nugget"  # the tasks whose labels live here


@dataclass(frozen=True, kw_only=True)
class AnswerLabel:
    """One row of ``answer_labels`` (see the module docstring); ``judged_at`` is the
    store's."""

    task: str
    query_id: str
    reference: str
    label: int
    judge: str
    judge_kind: str = "human"
    sentence_text: str | None = None
    run_id: str | None = None
    sentence: int | None = None
    pool: str = ""
    source: str = ""
    model: str | None = None
    prompt_sha256: str | None = None
    answer: str | None = None
    suggested: int | None = None
    seconds: float | None = None


LABEL_FIELDS = tuple(f.name for f in fields(AnswerLabel))
_TYPES = {"sentence": "INTEGER", "label": "INTEGER", "suggested": "INTEGER",
          "seconds": "DOUBLE"}  # every other column VARCHAR
# a model's label of one request: once per judge, request and unit (a rerun records nothing)
ONE_MODEL_LABEL = ("task", "judge", "prompt_sha256", "query_id", "sentence_text", "reference",
                   "run_id", "sentence")
_GIVEN = "irbench_answer_labels"


class AnswerLabels:
    """The writer and readers of ``answer_labels`` (mixed into Store)."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def record_answer_labels(self, rows: Sequence[AnswerLabel], *,
                             once_per: Sequence[str] = ()) -> int:
        """Record ``rows`` in the order given, each judged now() (one statement, inside the
        caller's transaction if one is open). ``once_per``: the columns that identify a label
        already made (:data:`ONE_MODEL_LABEL`): a row equal in them (NULLs equal) to a stored
        row or an earlier row given is not recorded; empty, every row is. Returns how many
        were recorded. The only writer of ``answer_labels``."""
        if unknown := [name for name in once_per if name not in LABEL_FIELDS]:
            raise ValueError(f"not columns of answer_labels: {unknown}")
        if not rows:
            return 0
        table = {name: np.array([getattr(r, name) for r in rows] + [None],
                                dtype=object)[:-1] for name in LABEL_FIELDS}
        table["i"] = np.arange(len(rows))
        selected = ", ".join(f"CAST(r.{n} AS {_TYPES.get(n, 'VARCHAR')}) AS {n}"
                             for n in LABEL_FIELDS)
        given = f"SELECT r.i, {selected} FROM {_GIVEN} r"
        where = ""
        if once_per:
            keys = ", ".join(once_per)
            given += f" QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY r.i) = 1"
            same = " AND ".join(f"a.{n} IS NOT DISTINCT FROM n.{n}" for n in once_per)
            where = f"WHERE NOT EXISTS (SELECT 1 FROM answer_labels a WHERE {same}) "
        names = ", ".join(LABEL_FIELDS)
        with self.transaction():  # BEGIN first: DuckDB registers on a finished result only
            self.con.register(_GIVEN, table)
            try:
                row = self.con.execute(
                    f"INSERT INTO answer_labels ({names}, judged_at) SELECT {names}, now() "
                    f"FROM ({given}) n {where}ORDER BY n.i").fetchall()[0]
            finally:
                self.con.unregister(_GIVEN)
        return int(row[0])

    def answer_label_columns(self, task: str, judges: Sequence[str] = ()
                             ) -> dict[str, np.ndarray]:
        """Every label of ``task`` (by ``judges``; empty: all) as object columns query_id,
        sentence_text, reference, run_id, sentence, label, judge, judge_kind and position
        (0, 1, ... in the order recorded), sorted by topic, run, sentence, text, reference,
        judge and position."""
        where, params = ["task = ?"], list[Any]([task])
        if judges:
            where.append("list_contains(?, judge)")
            params.append(list(judges))
        rows = self.con.execute(
            "SELECT query_id, sentence_text, reference, run_id, sentence, label, judge, "
            "judge_kind, row_number() OVER (ORDER BY judged_at, rowid) - 1 AS position "
            f"FROM answer_labels WHERE {' AND '.join(where)} ORDER BY query_id, run_id "
            "NULLS FIRST, sentence NULLS FIRST, sentence_text, reference, judge, position",
            params).fetchall()
        names = ("query_id", "sentence_text", "reference", "run_id", "sentence", "label",
                 "judge", "judge_kind", "position")
        columns = list(zip(*rows)) if rows else [()] * len(names)
        return {name: np.array(list(values) + [None], dtype=object)[:-1]
                for name, values in zip(names, columns)}

    def answer_label_counts(self, task: str) -> list[tuple[str, str, int, int]]:
        """(judge, kind, labels, topics) of every judge of ``task``, by name."""
        return [(r[0], r[1], int(r[2]), int(r[3])) for r in self.con.execute(
            "SELECT judge, any_value(judge_kind), count(*), count(DISTINCT query_id) "
            "FROM answer_labels WHERE task = ? GROUP BY judge ORDER BY judge",
            [task]).fetchall()]
