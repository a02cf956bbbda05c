"""Nugget lists (mixed into Store): the table ``nuggets`` (migration 21), every version of
every nugget kept.

A row is one version of a nugget of a topic's list: ``judge`` names the list (the nugget
judge that made it; a person's edit of that list stays in it), ``made_by`` who made this
version and ``origin`` whether a model or a person did. A live nugget has ``deleted_at``
NULL. A change never rewrites a row: it ends the rows it replaces (``deleted_at``,
``deleted_by``) and adds the new ones, each naming the ids it came from (``derived_from``).
A model judge's nugget has a content id (:func:`nugget_id`: its list, topic, position, text
and importance), so that the same list stored again changes nothing.

:meth:`Nuggets.record_model_nuggets` is the writer of a model judge's lists;
:meth:`Nuggets.live_nuggets` reads a list as it stands.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MODEL, PERSON = "model", "person"  # origin


@dataclass(frozen=True)
class StoredNugget:
    """One live nugget of a topic's list."""

    query_id: str
    nugget_id: str
    text: str
    importance: str
    position: int
    origin: str
    made_by: str


def nugget_id(judge: str, query_id: str, position: int, text: str, importance: str) -> str:
    """The content id of a model judge's nugget."""
    key = json.dumps([judge, query_id, position, text, importance], ensure_ascii=False)
    return "n-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


class Nuggets:
    """The writer and readers of ``nuggets`` (mixed into Store)."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def record_model_nuggets(self, judge: str,
                             lists: Mapping[str, Sequence[tuple[str, str]]]) -> int:
        """Store each topic's list ``[(text, importance)]`` as the model judge ``judge`` made
        it. A list whose every nugget the store holds already (live, or ended by an edit)
        changes nothing: a rerun, or a rerun after a person's edits, keeps the list as it
        stands. A different list (another prompt, model, window ...) ends the judge's own
        live nuggets of the topic that it does not hold and adds its new ones, each derived
        from none. Returns how many nuggets were added. One transaction."""
        added = 0
        with self.transaction():
            for qid, nuggets in lists.items():
                ids = [nugget_id(judge, qid, i, t, imp) for i, (t, imp) in enumerate(nuggets)]
                known = {r[0] for r in self.con.execute(
                    "SELECT nugget_id FROM nuggets WHERE list_contains(?, nugget_id)",
                    [ids]).fetchall()}
                if len(known) == len(set(ids)):
                    continue
                self.con.execute(
                    "UPDATE nuggets SET deleted_at = now(), deleted_by = ? WHERE judge = ? "
                    "AND query_id = ? AND made_by = ? AND origin = ? AND deleted_at IS NULL "
                    "AND NOT list_contains(?, nugget_id)", [judge, judge, qid, judge, MODEL, ids])
                for i, ((text, importance), nid) in enumerate(zip(nuggets, ids)):
                    if nid in known:
                        continue
                    known.add(nid)
                    self.con.execute(
                        "INSERT INTO nuggets (query_id, nugget_id, text, importance, position, "
                        "origin, judge, made_by, derived_from, created_at) VALUES (?, ?, ?, ?, "
                        "?, ?, ?, ?, [], now())", [qid, nid, text, importance, i, MODEL, judge,
                                                    judge])
                    added += 1
        return added

    def live_nuggets(self, judge: str) -> dict[str, list[StoredNugget]]:
        """The list of ``judge`` as it stands: each topic's live nuggets, by position (then by
        when made)."""
        out: dict[str, list[StoredNugget]] = {}
        for row in self.con.execute(
                "SELECT query_id, nugget_id, text, importance, position, origin, made_by "
                "FROM nuggets WHERE judge = ? AND deleted_at IS NULL "
                "ORDER BY query_id, position, created_at, nugget_id", [judge]).fetchall():
            out.setdefault(row[0], []).append(StoredNugget(*row))
        return out

    def nugget_judges(self) -> list[str]:
        """The names of the lists the store holds, sorted."""
        return [r[0] for r in self.con.execute(
            "SELECT DISTINCT judge FROM nuggets ORDER BY judge").fetchall()]
