"""The nugget judge's three tasks, as AutoNuggetizer asks them: what each prompt sees and how
each answer is read (the tasks are registered in :mod:`.tasks`; :mod:`.nugget_judging` drives
them).

* ``nugget_create``: a topic's nuggets from the text of its relevant segments, a window of
  :data:`WINDOW` segments per request, numbered ``[1] text`` one a line; the nuggets so far
  (the list the previous window's answer gave, none at first) go with each window, and the
  answer is the updated list, of which the first ``max_nuggets`` (:data:`MAX_NUGGETS`) are
  kept. Template names: ``query_id``, ``query``, ``context`` (the window), ``nuggets`` (the
  list so far, as Python writes a list), ``nuggets_length``, ``creator_max_nuggets``.
* ``nugget_importance``: vital or okay for a batch of :data:`BATCH` nuggets of a topic. Names:
  ``query_id``, ``query``, ``nuggets``, ``num_nuggets``.
* ``nugget_assign``: support, partial_support or not_support of a batch of :data:`BATCH`
  nuggets in one answer (its sentences' text joined by spaces, as AutoNuggetizer joins them;
  no run id, no team). Names: ``query_id``, ``query``, ``context`` (the answer), ``nuggets``,
  ``num_nuggets``.

An answer is read by :mod:`.nugget_parse` (the last list of strings in it; for labels, the
last of the batch's length whose words are all labels, bare words allowed, case and
``-``/space folded, a few spellings taken: :data:`IMPORTANCE`, :data:`ASSIGNMENT`). A list
of the wrong length, an unknown label or no list at all is a failed answer: kept, counted,
left out of the vote. Labels are whole
numbers: vital 1, okay 0; support 2, partial_support 1, not_support 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from ..errors import JudgeError
from .nugget_parse import last_list, string_lists

WINDOW = 10  # segments per creation request (AutoNuggetizer's creator_window_size)
BATCH = 10  # nuggets per importance or assignment request (its scorer/assigner window)
MAX_NUGGETS = 30  # nuggets kept of a creation answer (its creator_max_nuggets)

IMPORTANCE = {"vital": 1, "okay": 0, "ok": 0}
IMPORTANCE_NAMES = {1: "vital", 0: "okay"}
ASSIGNMENT = {"support": 2, "supported": 2, "full_support": 2, "partial_support": 1,
              "partially_supported": 1, "partial": 1, "not_support": 0, "not_supported": 0,
              "no_support": 0, "unsupported": 0}
ASSIGNMENT_NAMES = {2: "support", 1: "partial_support", 0: "not_support"}
_FOLD = re.compile(r"[\s-]+")


class _Names:
    def names(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name)) for f in fields(self)}  # type: ignore


@dataclass(frozen=True)
class CreateContext(_Names):
    """What a creation prompt sees (one window of a topic's relevant segments)."""

    query_id: str
    query: str
    context: str
    nuggets: str
    nuggets_length: int
    creator_max_nuggets: int

    @classmethod
    def of(cls, query_id: str, query: str, segments: Sequence[str], nuggets: Sequence[str],
           max_nuggets: int = MAX_NUGGETS) -> CreateContext:
        return cls(query_id=query_id, query=query, context=window_text(segments),
                   nuggets=str(list(nuggets)), nuggets_length=len(nuggets),
                   creator_max_nuggets=max_nuggets)


@dataclass(frozen=True)
class ImportanceContext(_Names):
    """What an importance prompt sees (a batch of a topic's nuggets)."""

    query_id: str
    query: str
    nuggets: str
    num_nuggets: int

    @classmethod
    def of(cls, query_id: str, query: str, nuggets: Sequence[str]) -> ImportanceContext:
        return cls(query_id=query_id, query=query, nuggets=str(list(nuggets)),
                   num_nuggets=len(nuggets))


@dataclass(frozen=True)
class AssignContext(_Names):
    """What an assignment prompt sees (an answer and a batch of its topic's nuggets)."""

    query_id: str
    query: str
    context: str
    nuggets: str
    num_nuggets: int

    @classmethod
    def of(cls, query_id: str, query: str, answer: str, nuggets: Sequence[str]
           ) -> AssignContext:
        return cls(query_id=query_id, query=query, context=answer,
                   nuggets=str(list(nuggets)), num_nuggets=len(nuggets))


def window_text(segments: Sequence[str]) -> str:
    """A window of segments as AutoNuggetizer writes it: ``[i] text`` one a line."""
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(segments, 1))


def bounds(total: int, size: int) -> list[tuple[int, int]]:
    """The [start, end) of each window (batch) of ``size`` over ``total`` items."""
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def read_nuggets(answer: str) -> list[str] | None:
    """The nugget list an answer gives (each stripped, empty ones dropped), or None."""
    found = last_list(answer)
    if found is None:
        return None
    return [t for t in (" ".join(x.split()) for x in found) if t]


def read_labels(answer: str, known: Mapping[str, int], length: int) -> list[int] | None:
    """The ``length`` labels an answer gives: its last list of that length whose words are
    all labels (``known``: label words to numbers); None when it has none."""
    for found in reversed(string_lists(answer, bare=True)):
        if len(found) == length:
            out = [known.get(_FOLD.sub("_", x.strip().lower())) for x in found]
            if all(x is not None for x in out):
                return [x for x in out if x is not None]
    return None


def not_a_pair(topic: Mapping[str, str], docno: str, title: str, text: str, limit: int
               ) -> CreateContext:
    """The nugget tasks' requests are made by :mod:`.nugget_judging`, not of (topic,
    document) pairs."""
    raise JudgeError("the nugget tasks judge windows of segments and batches of nuggets, "
                     "not (topic, document) pairs")


SAMPLE_CREATE = CreateContext.of("1", "a sample topic", ["A sample segment."] * 2,
                                 ["a sample nugget"])
SAMPLE_IMPORTANCE = ImportanceContext.of("1", "a sample topic", ["a sample nugget"] * 2)
SAMPLE_ASSIGN = AssignContext.of("1", "a sample topic", "A sample answer.",
                                 ["a sample nugget"] * 2)
