"""Nugget lists and nugget assignments of generated answers, as nuggetizer writes them
(castorini/nuggetizer; Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024
RAG Track with the AutoNuggetizer Framework", arXiv:2411.09607):

- **nugget lists**, one JSON object per topic: ``{"qid", "query", "nuggets": [{"text",
  "importance"}]}`` with importance ``vital`` or ``okay`` (``ok`` is read as okay, with a
  warning);
- **assignments**, one JSON object per (topic, run): ``{"qid", "run_id", "nuggets":
  [{"text", "importance", "assignment"}]}`` with assignment ``support``,
  ``partial_support`` or ``not_support`` (nuggetizer's 2-grade mode writes only the first
  and the last). ``topic_id`` is taken for ``qid``.

Problems are collected as ``FILE:LINE: reason`` and raised as one
:class:`~irbench.errors.FormatError`; oddities that still read are ``warnings``. Reads are
bounded as :mod:`irbench.judgments.support`'s are (a line's bytes, the nuggets of a topic,
an id's bytes). Ids are kept whole.

:func:`nugget_columns` gives the kernels of :mod:`irbench.measures.answers` one run's
nuggets topic by topic: importance (vital as True) and assignment score (1, 0.5, 0).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from ..answers.scored import topic_index
from ..errors import EvaluationError
from ..trec import Problems, read_source
from .support import group_rows, json_objects, object_array, warning_lines

MAX_NUGGETS = 10_000  # nuggets of one topic
ASSIGNMENTS = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
IMPORTANCE = {"vital": True, "okay": False}
_ODD_IMPORTANCE = {"ok": False}
_SPACES = re.compile(r"[\s-]+")


@dataclass(frozen=True, eq=False, kw_only=True)
class NuggetLists:
    """Each topic's nuggets: ``topics`` (bytes, sorted, each once), ``offsets`` (int64, len
    topics + 1: topic ``t``'s nuggets are ``offsets[t]:offsets[t + 1]``, in file order),
    per nugget ``text`` (object array of str), ``vital`` (bool) and ``line``."""

    name: str
    topics: np.ndarray
    offsets: np.ndarray
    text: np.ndarray
    vital: np.ndarray
    line: np.ndarray
    path: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, kw_only=True)
class NuggetAssignments:
    """One row per (topic, run, nugget), in file order: ``topic_id`` (bytes), ``run_id``
    (object str), ``nugget`` (the nugget's 0-based position in the topic's list), ``text``,
    ``vital`` (bool), ``score`` (1 support, 0.5 partial, 0 not), ``line``; ``judge``: who
    assigned (a person or a model), when said."""

    name: str
    topic_id: np.ndarray
    run_id: np.ndarray
    nugget: np.ndarray
    text: np.ndarray
    vital: np.ndarray
    score: np.ndarray
    line: np.ndarray
    path: str | None = None
    judge: str | None = None
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.score)


def _topic(obj: dict) -> tuple[str | None, str | None]:
    from_key = "qid" if "qid" in obj else "topic_id"
    value = obj.get(from_key)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        return None, "no qid (or topic_id)"
    return _whole(str(value), from_key)


def _whole(value: str, what: str) -> tuple[str | None, str | None]:
    if len(value.encode("utf-8", "surrogatepass")) > 1024 or any(c.isspace() for c in value):
        return None, f"{what} is longer than 1024 bytes or holds whitespace"
    return value, None


def _nuggets(obj: dict, line: int, problems: Problems, warnings: Problems,
             assigned: bool) -> list[tuple[str, bool, float]] | None:
    """``(text, vital, score)`` of each nugget of ``obj`` (score 0 when not ``assigned``);
    None when a problem was recorded."""
    nuggets = obj.get("nuggets")
    if not isinstance(nuggets, list) or len(nuggets) > MAX_NUGGETS:
        problems.add(line, "no 'nuggets' list" if not isinstance(nuggets, list) else
                     f"{len(nuggets):,} nuggets (at most {MAX_NUGGETS:,})")
        return None
    out = []
    for i, nugget in enumerate(nuggets):
        if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str):
            problems.add(line, f"nugget {i} is not an object with a text")
            return None
        importance = str(nugget.get("importance", "")).strip().lower()
        vital = IMPORTANCE.get(importance, _ODD_IMPORTANCE.get(importance))
        if vital is None:
            problems.add(line, f"nugget {i}: importance {nugget.get('importance')!r:.40} is "
                         "not vital or okay")
            return None
        if importance in _ODD_IMPORTANCE:
            warnings.add(line, f"nugget {i}: importance '{importance}' read as okay")
        score = 0.0
        if assigned:
            word = _SPACES.sub("_", str(nugget.get("assignment", "")).strip().lower())
            if word not in ASSIGNMENTS:
                problems.add(line, f"nugget {i}: assignment {nugget.get('assignment')!r:.40}"
                             " is not support, partial_support or not_support")
                return None
            score = ASSIGNMENTS[word]
        out.append((nugget["text"], vital, score))
    return out


def read_nuggets(source, name: str | None = None) -> NuggetLists:
    """Read nuggetizer's nugget lists (one JSON object per topic)."""
    path, data = read_source(source)
    problems, warnings = Problems(path), Problems(path)
    topics: dict[str, tuple[int, list]] = {}
    for line_no, obj in json_objects(path, data, problems):
        topic, why = _topic(obj)
        nuggets = _nuggets(obj, line_no, problems, warnings, assigned=False)
        if why or topic is None:
            problems.add(line_no, why or "no qid")
        elif topic in topics:
            problems.add(line_no, f"topic '{topic}' again (first at line {topics[topic][0]})")
        elif nuggets is not None:
            topics[topic] = (line_no, nuggets)
    if not problems and not topics:
        problems.add(1, "no nugget lists")
    problems.raise_if_any()
    order = sorted(topics, key=lambda t: t.encode("utf-8", "surrogatepass"))
    rows = [(n, topics[t][0]) for t in order for n in topics[t][1]]
    counts = [len(topics[t][1]) for t in order]
    return NuggetLists(
        name=name or os.path.basename(path),
        topics=np.array([t.encode("utf-8", "surrogatepass") for t in order], dtype=np.bytes_),
        offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        text=object_array([n[0] for n, _ in rows]),
        vital=np.array([n[1] for n, _ in rows], dtype=bool),
        line=np.array([line for _, line in rows], dtype=np.int64), path=path,
        warnings=warning_lines(warnings))


def read_assignments(source, name: str | None = None, *, judge: str | None = None
                     ) -> NuggetAssignments:
    """Read nuggetizer's assignments (one JSON object per topic and run)."""
    path, data = read_source(source)
    problems, warnings = Problems(path), Problems(path)
    seen: dict[tuple[str, str], int] = {}
    rows: list[tuple] = []
    for line_no, obj in json_objects(path, data, problems):
        topic, why = _topic(obj)
        run = obj.get("run_id")
        if why is None and (not isinstance(run, str) or not run):
            why = "no run_id"
        elif why is None and isinstance(run, str):
            run, why = _whole(run, "run_id")
        nuggets = _nuggets(obj, line_no, problems, warnings, assigned=True)
        if why or topic is None or run is None:
            problems.add(line_no, why or "no qid")
            continue
        if (topic, run) in seen:
            problems.add(line_no, f"topic '{topic}' of run '{run}' again (first at line "
                         f"{seen[topic, run]})")
            continue
        seen[topic, run] = line_no
        rows.extend((topic, run, i, *n, line_no) for i, n in enumerate(nuggets or ()))
    if not problems and not seen:
        problems.add(1, "no nugget assignments")
    problems.raise_if_any()
    columns = list(zip(*rows)) if rows else [()] * 7
    return NuggetAssignments(
        name=name or os.path.basename(path),
        topic_id=np.array([t.encode("utf-8", "surrogatepass") for t in columns[0]],
                          dtype=np.bytes_),
        run_id=object_array(list(columns[1])), nugget=np.array(columns[2], dtype=np.int64),
        text=object_array(list(columns[3])), vital=np.array(columns[4], dtype=bool),
        score=np.array(columns[5], dtype=np.float64), line=np.array(columns[6], dtype=np.int64),
        path=path, judge=judge, warnings=warning_lines(warnings))


# ---- one run's nuggets, for the kernels ---------------------------------------------------


@dataclass(frozen=True)
class NuggetColumns:
    """One run's nuggets topic by topic, as :func:`irbench.measures.answers.nugget_score`
    takes them: ``offsets`` (len topics + 1), ``vital`` and ``score`` per nugget;
    ``unassigned``: nuggets of the lists the run's assignments do not mention (scored 0)."""

    offsets: np.ndarray
    vital: np.ndarray
    score: np.ndarray
    unassigned: int


class PreparedNuggets:
    """Nugget assignments (and optionally the lists) grouped by run once, for many runs."""

    def __init__(self, assignments: NuggetAssignments, nuggets: NuggetLists | None = None):
        self.assignments, self.nuggets = assignments, nuggets
        self.groups = group_rows(assignments.run_id)

    def columns_for(self, run_id: str, topics: np.ndarray) -> NuggetColumns:
        """:func:`nugget_columns` of ``run_id``."""
        rows = self.groups.get(run_id, np.zeros(0, dtype=np.int64))
        return _columns(self.assignments, rows, run_id, topics, self.nuggets)


def nugget_columns(assignments: NuggetAssignments, run_id: str, topics: np.ndarray,
                   nuggets: NuggetLists | None = None) -> NuggetColumns:
    """Run ``run_id``'s nuggets for each of ``topics`` (bytes, sorted: the campaign's).

    With ``nuggets`` (the lists), a topic's nuggets are its list's, each scored by the run's
    assignment at the same position (0 when the run has none: not answered); an assignment
    whose text differs from the list's at that position is an EvaluationError. Without, a
    topic's nuggets are those the run's assignments carry. A topic with no nuggets scores 0
    in the kernels."""
    return PreparedNuggets(assignments, nuggets).columns_for(run_id, topics)


def _columns(assignments: NuggetAssignments, mine: np.ndarray, run_id: str,
             topics: np.ndarray, nuggets: NuggetLists | None) -> NuggetColumns:
    topics = np.asarray(topics)
    ti = topic_index(assignments.topic_id[mine], topics)
    mine, ti = mine[ti >= 0], ti[ti >= 0]
    if nuggets is None:
        order = mine[np.argsort(ti, kind="stable")]
        counts = np.bincount(ti, minlength=len(topics))
        return NuggetColumns(offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                             vital=assignments.vital[order], score=assignments.score[order],
                             unassigned=0)
    li = topic_index(topics, nuggets.topics)
    counts = np.where(li >= 0, np.diff(nuggets.offsets)[li], 0)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # each kept nugget's row in the lists: its topic's start there plus its position
    topic_of = np.repeat(np.arange(len(topics)), counts)
    source = nuggets.offsets[li[topic_of]] + np.arange(offsets[-1]) - offsets[topic_of]
    position = assignments.nugget[mine]
    inside = position < counts[ti]
    target = offsets[ti[inside]] + position[inside]
    rows = mine[inside]
    differs = assignments.text[rows] != nuggets.text[source[target]]
    if differs.any():
        where = assignments.path or f"<{assignments.name}>"
        bad = rows[differs][:20]
        raise EvaluationError("\n".join(
            f"{where}:{int(assignments.line[r])}: run '{run_id}' nugget "
            f"{int(assignments.nugget[r])} is not the list's nugget at that position"
            for r in bad))
    score = np.zeros(offsets[-1])
    score[target] = assignments.score[rows]
    assigned = np.zeros(offsets[-1], dtype=bool)
    assigned[target] = True
    return NuggetColumns(offsets=offsets, vital=nuggets.vital[source], score=score,
                         unassigned=int((~assigned).sum()))
