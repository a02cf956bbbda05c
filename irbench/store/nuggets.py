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
:meth:`Nuggets.live_nuggets` reads a list as it stands, :meth:`Nuggets.nugget_history` every
version of a topic's list. A person's edits (the desk's), each one transaction: add, change,
merge, split and delete (:meth:`Nuggets.add_nugget` ...). An edit naming a nugget that is not
live in the list (ended meanwhile by someone else's edit) raises :class:`NuggetEditError` and
writes nothing. A person's nugget has an id made of the edit (:func:`person_nugget_id`): its
list, topic, the ids it came from, text, importance, who, the number of rows the topic's list
held before the edit (each edit that adds rows adds at least one, so no two edits share it)
and its part number.

The order of a list: a nugget made from none (a model's, an added one) sorts by (position,
created_at, nugget_id); a changed one sorts where the nugget it came from did, a merged one
where the first of its nuggets did, and the parts of a split where the split one did, in their
order. Positions are integers and never renumbered (no row but the edited ones is touched), so
this order is computed from ``derived_from`` when read (:func:`list_order`): parts of a split
of a split come out where their nugget was, between its neighbours.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..errors import IrbenchError, StoreError

MODEL, PERSON = "model", "person"  # origin
IMPORTANCE = ("vital", "okay")
MAX_TEXT = 1000  # characters of a nugget's text
MAX_NAME = 200  # characters of a person's name
_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # control characters, lone surrogates
COLUMNS = ("query_id, nugget_id, text, importance, position, origin, judge, made_by, "
           "derived_from, created_at, deleted_at, deleted_by")


class NuggetEditError(IrbenchError):
    """An edit of a nugget list that cannot be made: ``stale`` when a nugget it names is not
    live in the list (changed or deleted meanwhile, or unknown): reload the list; otherwise a
    text, importance or name that is not allowed. Nothing was written."""

    def __init__(self, message: str, stale: bool = False):
        super().__init__(message)
        self.stale = stale

    def __reduce__(self):
        return (type(self), (str(self), self.stale))


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


@dataclass(frozen=True)
class NuggetVersion:
    """One row of ``nuggets``: a version of a nugget, live (``deleted_at`` None) or ended."""

    query_id: str
    nugget_id: str
    text: str
    importance: str
    position: int
    origin: str
    judge: str
    made_by: str
    derived_from: tuple[str, ...]
    created_at: datetime | None
    deleted_at: datetime | None
    deleted_by: str | None

    @classmethod
    def of(cls, row: Sequence) -> NuggetVersion:
        (qid, nid, text, importance, position, origin, judge, made_by, derived, created,
         deleted, deleted_by) = row
        return cls(qid, nid, text, importance, position, origin, judge, made_by,
                   tuple(derived or ()), created, deleted, deleted_by)

    def stored(self) -> StoredNugget:
        return StoredNugget(query_id=self.query_id, nugget_id=self.nugget_id, text=self.text,
                            importance=self.importance, position=self.position,
                            origin=self.origin, made_by=self.made_by)


def nugget_id(judge: str, query_id: str, position: int, text: str, importance: str) -> str:
    """The content id of a model judge's nugget."""
    key = json.dumps([judge, query_id, position, text, importance], ensure_ascii=False)
    return "n-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def person_nugget_id(judge: str, query_id: str, derived_from: Sequence[str], text: str,
                     importance: str, by: str, rows: int, part: int) -> str:
    """The id of a nugget a person's edit makes (see the module docstring)."""
    key = json.dumps([judge, query_id, list(derived_from), text, importance, by, rows, part],
                     ensure_ascii=False)
    return "p-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_EARLIEST = datetime.min


def list_order(versions: Iterable[NuggetVersion]) -> dict[str, tuple]:
    """{nugget_id: its sort key} for the versions of one topic's list (see the module
    docstring): a key is its root's (position, created_at, nugget_id) then the part numbers
    of the splits since. A nugget derived from ids the list does not hold (or from itself,
    which no writer makes) sorts as one made from none."""
    rows = {v.nugget_id: v for v in versions}
    parts: dict[str, list[str]] = {}  # a nugget -> those made from it alone, in order made
    for v in sorted(rows.values(), key=lambda v: (v.created_at or _EARLIEST, v.nugget_id)):
        if len(v.derived_from) == 1:
            parts.setdefault(v.derived_from[0], []).append(v.nugget_id)
    keys: dict[str, tuple] = {}
    for start in rows:
        stack, opened = [start], set()
        while stack:  # depth first without recursion: a list edited 10,000 times is fine
            nid = stack[-1]
            if nid in keys:
                stack.pop()
                continue
            v = rows[nid]
            before = [p for p in v.derived_from if p in rows and p not in keys]
            if nid not in opened and before:
                opened.add(nid)
                stack.extend(p for p in before if p not in opened)
                continue
            stack.pop()
            known = [keys[p] for p in v.derived_from if p in keys]
            if not known:
                keys[nid] = ((v.position, v.created_at or _EARLIEST, nid),)
            elif len(v.derived_from) > 1:
                keys[nid] = min(known)  # a merge: where its first nugget was
            else:
                siblings = parts[v.derived_from[0]]
                keys[nid] = known[0] if len(siblings) == 1 else \
                    known[0] + (siblings.index(nid),)  # a change; a split's part
    return keys


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise NuggetEditError("a nugget's text must be a string")
    text = text.strip()
    if not text:
        raise NuggetEditError("a nugget's text cannot be empty")
    if len(text) > MAX_TEXT:
        raise NuggetEditError(f"a nugget's text has {len(text):,} characters: at most "
                              f"{MAX_TEXT:,} are allowed")
    if _FORBIDDEN.search(text):
        raise NuggetEditError("a nugget's text cannot hold line breaks, tabs or other control "
                              "characters")
    return text


def _importance(importance: Any) -> str:
    if importance not in IMPORTANCE:
        shown = importance if isinstance(importance, str) and len(importance) <= 20 and \
            not _FORBIDDEN.search(importance) else "this"
        raise NuggetEditError(f"importance '{shown}' is not one of {', '.join(IMPORTANCE)}")
    return str(importance)


def _name(by: Any) -> str:
    if not isinstance(by, str) or not by.strip() or len(by) > MAX_NAME or \
            _FORBIDDEN.search(by):
        raise NuggetEditError(f"who edits must be named (at most {MAX_NAME} characters, no "
                              "control characters)")
    return by


def _shown(nid: Any) -> str:
    text = str(nid)
    text = text if len(text) <= 60 else text[:57] + "..."
    return _FORBIDDEN.sub("?", text)


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
        """The list of ``judge`` as it stands: each topic's live nuggets in the list's order
        (see the module docstring)."""
        topics: dict[str, list[NuggetVersion]] = {}
        for row in self.con.execute(f"SELECT {COLUMNS} FROM nuggets WHERE judge = ? "
                                    "ORDER BY query_id", [judge]).fetchall():
            v = NuggetVersion.of(row)
            topics.setdefault(v.query_id, []).append(v)
        out: dict[str, list[StoredNugget]] = {}
        for qid, versions in topics.items():
            live = [v for v in versions if v.deleted_at is None]
            if live:
                keys = list_order(versions)
                out[qid] = [v.stored() for v in sorted(live, key=lambda v: keys[v.nugget_id])]
        return out

    def nugget_history(self, judge: str, query_id: str) -> list[NuggetVersion]:
        """Every version of the topic's list of ``judge``, oldest first."""
        return [NuggetVersion.of(row) for row in self.con.execute(
            f"SELECT {COLUMNS} FROM nuggets WHERE judge = ? AND query_id = ? "
            "ORDER BY created_at, position, nugget_id", [judge, query_id]).fetchall()]

    def nugget_judges(self) -> list[str]:
        """The names of the lists the store holds, sorted."""
        return [r[0] for r in self.con.execute(
            "SELECT DISTINCT judge FROM nuggets ORDER BY judge").fetchall()]

    # -- a person's edits (the desk's), each one transaction

    def add_nugget(self, judge: str, query_id: str, text: str, importance: str,
                   by: str) -> StoredNugget:
        """A new nugget at the end of the topic's list."""
        made = [(_text(text), _importance(importance))]
        by = _name(by)
        if not isinstance(query_id, str) or not query_id or _FORBIDDEN.search(query_id):
            raise NuggetEditError("a nugget is added to a topic: name it")
        with self._editing():
            if not self.con.execute("SELECT count(*) FROM nuggets WHERE judge = ?",
                                    [judge]).fetchone()[0]:
                raise NuggetEditError(f"no nugget list by '{_shown(judge)}' in the store")
            last = self.con.execute(
                "SELECT max(position) FROM nuggets WHERE judge = ? AND query_id = ? AND "
                "deleted_at IS NULL", [judge, query_id]).fetchone()[0]
            return self._edit(judge, query_id, [], [], made,
                              -1 if last is None else last, by, True)[0]

    def change_nugget(self, judge: str, nugget_id: str, by: str, *, text: str | None = None,
                      importance: str | None = None) -> StoredNugget:
        """The nugget with a new text and/or importance, where it was. Changing nothing (or
        to what it says already) writes nothing and returns it as it stands."""
        if text is None and importance is None:
            raise NuggetEditError("a change needs a new text or importance")
        new_text = None if text is None else _text(text)
        new_importance = None if importance is None else _importance(importance)
        by = _name(by)
        with self._editing():
            (old,) = self._live(judge, [nugget_id])
            made = (old.text if new_text is None else new_text,
                    old.importance if new_importance is None else new_importance)
            if made == (old.text, old.importance):
                return old.stored()
            return self._edit(judge, old.query_id, [old], [old.nugget_id], [made],
                              old.position, by)[0]

    def merge_nuggets(self, judge: str, nugget_ids: Sequence[str], text: str,
                      importance: str, by: str) -> StoredNugget:
        """Two or more live nuggets of one topic as one, where the first of them in the list
        was (the smallest position)."""
        made = [(_text(text), _importance(importance))]
        by = _name(by)
        ids = list(nugget_ids) if not isinstance(nugget_ids, str) else [nugget_ids]
        if len(ids) < 2 or len(set(ids)) != len(ids):
            raise NuggetEditError("a merge needs two or more different nuggets")
        with self._editing():
            old = self._live(judge, ids)
            topics = {v.query_id for v in old}
            if len(topics) > 1:
                raise NuggetEditError("the nuggets to merge belong to different topics: "
                                      "reload the list", stale=True)
            qid = old[0].query_id
            keys = list_order(self.nugget_history(judge, qid))
            first = min(old, key=lambda v: keys[v.nugget_id])
            return self._edit(judge, qid, old, ids, made, first.position, by)[0]

    def split_nugget(self, judge: str, nugget_id: str, parts: Sequence[tuple[str, str]],
                     by: str) -> list[StoredNugget]:
        """The nugget as two or more ``(text, importance)``, in that order, where it was."""
        if isinstance(parts, str | bytes) or len(parts) < 2:
            raise NuggetEditError("a split needs two or more parts")
        made = []
        for part in parts:
            if isinstance(part, str | bytes) or len(part) != 2:
                raise NuggetEditError("each part of a split is a (text, importance)")
            made.append((_text(part[0]), _importance(part[1])))
        by = _name(by)
        with self._editing():
            (old,) = self._live(judge, [nugget_id])
            return self._edit(judge, old.query_id, [old], [old.nugget_id], made,
                              old.position, by)

    def delete_nugget(self, judge: str, nugget_id: str, by: str) -> None:
        """End the nugget (its versions stay in the history)."""
        by = _name(by)
        with self._editing():
            (old,) = self._live(judge, [nugget_id])
            self._edit(judge, old.query_id, [old], [], [], old.position, by)

    @contextmanager
    def _editing(self) -> Iterator[None]:
        """The store's transaction; an edit that met another one writing the same rows at
        the same time (DuckDB's conflict, the other one stored) is stale."""
        try:
            with self.transaction():
                yield
        except StoreError as exc:
            if "Conflict" not in str(exc):
                raise
            raise NuggetEditError("the list was changed by someone else at the same time: "
                                  "reload the list", stale=True) from None

    def _live(self, judge: str, ids: Sequence[str]) -> list[NuggetVersion]:
        """The live versions of ``ids`` in the list of ``judge``, in that order;
        NuggetEditError (stale) naming the first that is not."""
        if any(not isinstance(nid, str) for nid in ids):
            raise NuggetEditError("nuggets are named by their ids (strings)")
        found = {v.nugget_id: v for v in map(NuggetVersion.of, self.con.execute(
            f"SELECT {COLUMNS} FROM nuggets WHERE judge = ? AND deleted_at IS NULL AND "
            "list_contains(?, nugget_id)", [judge, list(ids)]).fetchall())}
        for nid in ids:
            if nid not in found:
                raise NuggetEditError(f"nugget {_shown(nid)} was changed or deleted meanwhile: "
                                      "reload the list", stale=True)
        return [found[nid] for nid in ids]

    def _edit(self, judge: str, qid: str, ended: Sequence[NuggetVersion],
              derived: Sequence[str], made: Sequence[tuple[str, str]], position: int,
              by: str, after: bool = False) -> list[StoredNugget]:
        """End ``ended`` and add ``made`` at ``position`` (the one after it if ``after``),
        each derived from ``derived``: at one time a microsecond later than anything the
        topic's list holds (its parts a microsecond apart), so the history's order is the
        edits' order whatever the clock does. Inside the caller's transaction."""
        now, rows = self.con.execute(
            "SELECT greatest(now()::TIMESTAMP, max(created_at) + INTERVAL 1 MICROSECOND, "
            "max(deleted_at) + INTERVAL 1 MICROSECOND), count(*) FROM nuggets "
            "WHERE judge = ? AND query_id = ?", [judge, qid]).fetchone()
        if ended:
            gone = [v.nugget_id for v in ended]
            self.con.execute("UPDATE nuggets SET deleted_at = ?, deleted_by = ? WHERE judge = ? "
                             "AND deleted_at IS NULL AND list_contains(?, nugget_id)",
                             [now, by, judge, gone])
            still = self.con.execute("SELECT count(*) FROM nuggets WHERE deleted_at IS NULL "
                                     "AND list_contains(?, nugget_id)", [gone]).fetchone()[0]
            if still:  # no writer leaves one so: refuse rather than keep two versions live
                raise NuggetEditError("the list changed meanwhile: reload it", stale=True)
        out = []
        for part, (text, importance) in enumerate(made):
            nid = person_nugget_id(judge, qid, derived, text, importance, by, rows, part)
            if self.con.execute("SELECT count(*) FROM nuggets WHERE nugget_id = ?",
                                [nid]).fetchone()[0]:
                raise NuggetEditError("the list changed meanwhile: reload it", stale=True)
            at = position + 1 if after else position
            self.con.execute(
                f"INSERT INTO nuggets ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, "
                "NULL)", [qid, nid, text, importance, at, PERSON, judge, by, list(derived),
                          now + timedelta(microseconds=part)])
            out.append(StoredNugget(query_id=qid, nugget_id=nid, text=text,
                                    importance=importance, position=at, origin=PERSON,
                                    made_by=by))
        return out
