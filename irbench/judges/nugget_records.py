"""What the nugget judge gives and keeps: nugget lists and assignments as records (written as
nuggetizer's JSON lines, which :mod:`irbench.judgments.nuggets` reads), what a run did
(:class:`NuggetSummary`), and :class:`AnswerFile`, the answers kept in a JSON-lines file.

:class:`AnswerFile` is an :class:`~.judging.AnswerStore` of its own (the store is another,
which ``irbench judge --nuggets`` uses): one JSON object a line per answer (model, endpoint, request
sha256, topic, unit, judge, answer, tokens), appended and synced to disk as the journal
folds into it; read back whole when opened (a line cut by a kill, or not an answer, is
skipped and counted in ``skipped``). An answer is kept once per (model, endpoint, request,
topic, unit).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import OutputError
from ..files import write_file
from ..store import ModelAnswer
from .judging import JudgingSummary

KEPT = ("model", "endpoint", "prompt_sha256", "query_id", "doc_id", "judge", "answer",
        "prompt_tokens", "completion_tokens", "seconds", "requests")
FAILED_AS = "not_support"  # how an assignment no sample gave is written (AutoNuggetizer's
#                            "failed" scores 0, as not_support does)


@dataclass(frozen=True)
class ScoredNugget:
    """A nugget and its importance (vital or okay); ``failed``: no sample labelled it (okay,
    AutoNuggetizer's fallback)."""

    text: str
    importance: str
    failed: bool = False
    nugget_id: str | None = None  # the store's id (irbench.store.nuggets), when stored


@dataclass(frozen=True)
class NuggetList:
    """A topic's nuggets."""

    qid: str
    query: str
    nuggets: tuple[ScoredNugget, ...]

    def record(self) -> dict[str, Any]:
        return {"qid": self.qid, "query": self.query, "nuggets": [
            {"text": n.text, "importance": n.importance} for n in self.nuggets]}


@dataclass(frozen=True)
class AssignedNugget:
    """A nugget of a topic's list and its assignment in one answer (support,
    partial_support, not_support; None: no sample gave one)."""

    text: str
    importance: str
    assignment: str | None
    nugget_id: str | None = None  # the store's id of the nugget, when stored
    request: str | None = None  # the sha256 of its batch's request (its first sample)
    answer: str | None = None  # that request's answer


@dataclass(frozen=True)
class Assignments:
    """One answer's (topic, run) assignment of its topic's nuggets."""

    qid: str
    run_id: str
    nuggets: tuple[AssignedNugget, ...]

    def record(self, failed: str = FAILED_AS) -> dict[str, Any]:
        return {"qid": self.qid, "run_id": self.run_id, "nuggets": [
            {"text": n.text, "importance": n.importance,
             "assignment": failed if n.assignment is None else n.assignment}
            for n in self.nuggets]}


def write_nugget_lists(path: str | os.PathLike, lists: Iterable[NuggetList]) -> None:
    """Nugget lists as nuggetizer writes them, one topic a line."""
    _write(path, (x.record() for x in lists))


def write_assignments(path: str | os.PathLike, assignments: Iterable[Assignments],
                      failed: str = FAILED_AS) -> None:
    """Assignments as nuggetizer writes them, one (topic, run) a line; an assignment no
    sample gave is written as ``failed``."""
    _write(path, (x.record(failed) for x in assignments))


def assignments_text(assignments: Iterable[Assignments], failed: str = FAILED_AS) -> str:
    """The lines :func:`write_assignments` writes."""
    return _lines(x.record(failed) for x in assignments)


def _lines(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _write(path: str | os.PathLike, records: Iterable[dict[str, Any]]) -> None:
    try:
        write_file(path, _lines(records))
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror})") from None


@dataclass
class NuggetSummary:
    """What a nugget judging did: requests (units x samples) asked, answers the answer store
    held, answers received (calls paid for), HTTP requests, requests failed after their
    retries, answers not read (``unparsed``: kept, left out of the vote), requests whose
    samples all failed to parse (``failed_batches``), requests left because the budget was
    spent, tokens; topics (or ``topic run`` answers) left unfinished (a rerun goes on),
    topics without relevant segments, answers whose topic has no nuggets."""

    asked: int = 0
    cached: int = 0
    answered: int = 0
    requests: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    unparsed: int = 0
    failed_batches: int = 0
    budget_left: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    leftovers: int = 0
    unfinished: list[str] = field(default_factory=list)
    no_segments: list[str] = field(default_factory=list)
    no_nuggets: int = 0

    def add(self, ran: JudgingSummary) -> None:
        """Count one call of the judging loop."""
        for name in ("asked", "cached", "answered", "requests", "failed", "budget_left",
                     "prompt_tokens", "completion_tokens"):
            setattr(self, name, getattr(self, name) + getattr(ran, name))
        self.failures += ran.failures[:max(0, 5 - len(self.failures))]


class AnswerFile:
    """Answers kept in a JSON-lines file (see the module docstring)."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.rows: dict[tuple[str, str, str, str], list[tuple[str, str, str]]] = {}
        self.keys: set[tuple[str, ...]] = set()
        self.skipped = 0
        self.cut = False  # the file ends inside a line (a write killed midway)
        if os.path.exists(self.path):
            with open(self.path, "rb") as fh:
                for line in fh:
                    self.cut = not line.endswith(b"\n")
                    try:
                        self._take(json.loads(line))
                    except (ValueError, TypeError, KeyError, RecursionError):
                        self.skipped += 1

    def _take(self, row: dict[str, Any]) -> bool:
        key = tuple(str(row[k]) for k in ("model", "endpoint", "prompt_sha256", "query_id",
                                          "doc_id"))
        if not isinstance(row["answer"], str) or key in self.keys:
            return False
        self.keys.add(key)
        self.rows.setdefault((key[0], key[2], key[3], key[4]), []).append(
            (key[1], str(row["judge"]), row["answer"]))
        return True

    def __len__(self) -> int:
        return len(self.keys)

    def answers(self, model: str, sha256: str, query_id: str, unit: str
                ) -> list[tuple[str, str, str]]:
        """(endpoint, judge, answer) of every answer kept for this request."""
        return list(self.rows.get((model, sha256, query_id, unit), ()))

    def cached_answers(self, model: str, endpoint: str, keys: Sequence[tuple[str, str, str]],
                       *, endpoints: Sequence[str] = (), judges: Sequence[str] = ()
                       ) -> dict[tuple[str, str, str], tuple[int | None, str, str]]:
        """As the store's: the answer of ``endpoint`` first, else the first kept of one of
        ``endpoints`` or first given to one of ``judges``; no grade (read by the task)."""
        out: dict[tuple[str, str, str], tuple[int | None, str, str]] = {}
        for key in keys:
            rows = self.rows.get((model, *key), [])
            own = [r for r in rows if r[0] == endpoint]
            other = [r for r in rows if r[0] in endpoints or r[1] in judges]
            for found in (own or other)[:1]:
                out[key] = (None, found[2], found[0])
        return out

    def save_answers(self, answers: Sequence[ModelAnswer], pool: str = "") -> list[str]:
        """Append the answers not kept yet, on disk before it returns."""
        lines = []
        for a in answers:
            row = {name: getattr(a, name) for name in KEPT}
            if self._take(row):
                lines.append(json.dumps(row) + "\n")  # lone surrogates escaped
        if lines:
            try:
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write("\n" * self.cut + "".join(lines))
                    self.cut = False
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise OutputError(f"{self.path}: cannot keep the answers ({exc.strerror}); "
                                  "they stay in the journal") from None
        return []
