"""Per-topic scores as the statistics see them: a (system x topic) matrix for one measure.

Paired statistics compare systems on the *same* topics. :class:`Scores` holds one measure's
matrix with its system and topic names; :func:`paired_arrays` aligns two score vectors (arrays of
equal length, or mappings from topic id to value) and refuses vectors that do not cover the same
topics. Missing values (NaN, as ``Store.score_matrix`` returns for a system without a value for
a topic) are an error, never silently dropped: :meth:`Scores.common_topics` is the explicit way
to keep only the topics every system was scored on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import EvaluationError, NotStoredError, StatisticsError
from ..trec import frame_column, frame_names
from .choices import ALTERNATIVES  # noqa: F401

SHOWN = 5  # topic or system names listed in an error message
PICKED = {"measure": "measures", "qrels": "qrels sets"}  # frame columns a keyword picks from


@dataclass(frozen=True, eq=False)
class Scores:
    """One measure's per-topic scores: ``values[i, j]`` is system ``systems[i]`` on topic
    ``topics[j]`` (NaN where a system has no value)."""

    measure: str
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray = field(repr=False)

    def __post_init__(self):
        values = np.array(self.values, dtype=np.float64)
        object.__setattr__(self, "systems", tuple(str(s) for s in self.systems))
        object.__setattr__(self, "topics", tuple(str(t) for t in self.topics))
        if values.ndim != 2 or values.shape != (len(self.systems), len(self.topics)):
            raise EvaluationError(
                f"{self.measure}: scores of shape {values.shape} for {len(self.systems)} "
                f"systems x {len(self.topics)} topics")
        if len(set(self.systems)) != len(self.systems):
            raise EvaluationError(f"{self.measure}: a system name is repeated")
        if len(set(self.topics)) != len(self.topics):
            raise EvaluationError(f"{self.measure}: a topic id is repeated")
        values.flags.writeable = False
        object.__setattr__(self, "values", values)

    @classmethod
    def from_store(cls, store, qrels: str, measure: str, systems: Sequence[str] = ()) -> Scores:
        """The stored scores of ``measure`` on the qrels set ``qrels`` (``Store.score_matrix``);
        systems sorted by name unless ``systems`` gives an order."""
        names, topics, values = store.score_matrix(qrels, measure, systems)
        if not names:
            raise NotStoredError(f"no stored scores for measure '{measure}' on qrels '{qrels}'"
                             + (f" for systems {', '.join(systems)}" if systems else "")
                             + " (has the campaign been run?)")
        if systems:
            missing = [s for s in systems if s not in names]
            if missing:
                raise NotStoredError(f"no stored scores of {', '.join(missing)} for measure "
                                 f"'{measure}' on qrels '{qrels}'")
            order = [names.index(s) for s in systems]
            names, values = list(systems), values[order]
        return cls(measure, tuple(names), tuple(topics), values)

    @classmethod
    def from_frame(cls, frame, measure: str | None = None, *,
                   qrels: str | None = None) -> Scores:
        """Scores from a tidy data frame (pandas, Polars or Arrow; as :func:`irbench.to_frame`
        and ``irbench.open_store(...).per_query()`` give them): columns ``system``,
        ``query_id``, ``value`` and, when it holds several measures or qrels sets, ``measure``
        and ``qrels`` (then ``measure=`` and ``qrels=`` pick one each). Systems and topics keep
        their order of first appearance; a (system, topic) pair without a row is NaN, and a
        pair with two rows is an error naming the column that tells them apart."""
        present = frame_names(frame)
        missing = [c for c in ("system", "query_id", "value") if c not in present]
        if missing:
            raise EvaluationError(f"a scores data frame needs the columns system, query_id "
                                  f"and value; it lacks {', '.join(missing)}")

        def column(name: str) -> np.ndarray:
            return np.asarray(frame_column(frame, name).to_numpy())

        system = column("system").astype(str)
        keep = np.ones(len(system), dtype=bool)
        picked = {}
        for name, wanted in zip(PICKED, (measure, qrels)):
            if name in present:
                chosen, rows = _pick(name, column(name).astype(str), wanted)
                picked[name] = chosen
                keep &= rows
            elif wanted is not None and name != "measure":  # measure= also names the scores
                raise EvaluationError(f"{name}='{wanted}' given, but the frame has no "
                                      f"'{name}' column (it has {', '.join(present)})")
        system = system[keep]
        topic = column("query_id").astype(str)[keep]
        value = column("value").astype(np.float64)[keep]
        systems, s_index = _first_seen(system)
        topics, t_index = _first_seen(topic)
        cell = s_index * len(topics) + t_index
        if len(np.unique(cell)) != len(cell):
            first = np.flatnonzero(np.bincount(cell) > 1)[0]
            rows = np.flatnonzero(keep)[cell == first]
            others = [c for c in present if c not in ("system", "query_id", "value", *picked)]
            raise EvaluationError(
                f"system '{systems[first // len(topics)]}' has two values for topic "
                f"'{topics[first % len(topics)]}'; "
                + _told_apart([(c, column(c)[rows]) for c in others]))
        values = np.full(len(systems) * len(topics), np.nan)
        values[cell] = value
        name = measure if measure is not None else picked.get("measure") or "value"
        return cls(name, systems, topics, values.reshape(len(systems), len(topics)))

    @property
    def means(self) -> np.ndarray:
        """Mean score of each system over the topics (NaN if any value is missing)."""
        return self.values.mean(axis=1)

    def select(self, systems: Sequence[str]) -> Scores:
        """These systems only, in this order."""
        index = {s: i for i, s in enumerate(self.systems)}
        missing = [s for s in systems if s not in index]
        if missing:
            raise NotStoredError(f"{self.measure}: unknown system{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(missing)}")
        return Scores(self.measure, tuple(systems), self.topics,
                      self.values[[index[s] for s in systems]])

    def common_topics(self) -> Scores:
        """Only the topics every system has a value for."""
        keep = ~np.isnan(self.values).any(axis=0)
        if not keep.any():
            raise EvaluationError(f"{self.measure}: no topic has a value for every system")
        return Scores(self.measure, self.systems, tuple(np.asarray(self.topics)[keep]),
                      self.values[:, keep])

    def check_complete(self) -> None:
        """Raise EvaluationError naming the systems and topics without a value."""
        missing = np.isnan(self.values)
        if not missing.any():
            return
        lines = []
        for i in np.flatnonzero(missing.any(axis=1))[:SHOWN]:
            topics = np.asarray(self.topics)[missing[i]]
            lines.append(f"system '{self.systems[i]}' has no {self.measure} value for "
                         f"{_names(topics)} (of {len(self.topics)} topics)")
        rest = int(missing.any(axis=1).sum()) - SHOWN
        if rest > 0:
            lines.append(f"... and {rest} more systems")
        lines.append("paired statistics need every system scored on the same topics "
                     "(evaluate with topics: qrels, or keep only the common topics)")
        raise EvaluationError("\n".join(lines))


def _names(items) -> str:
    items = [str(t) for t in items]
    head = ", ".join(items[:SHOWN])
    return head + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def paired_arrays(x, y, name_x: str = "x", name_y: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Two aligned float arrays from score vectors over the same topics.

    Either both arrays (aligned by position; equal lengths) or both mappings from topic id to
    value (aligned by topic id; equal key sets). Raises EvaluationError when they do not cover
    the same topics, hold NaN, or have fewer than two topics.
    """
    if isinstance(x, Mapping) != isinstance(y, Mapping):
        raise EvaluationError(f"{name_x} and {name_y}: give two mappings (topic -> score) or "
                              "two arrays, not one of each")
    if isinstance(x, Mapping):
        only_x = sorted(set(x) - set(y))
        only_y = sorted(set(y) - set(x))
        if only_x or only_y:
            parts = []
            if only_x:
                parts.append(f"topics {_names(only_x)} only in {name_x}")
            if only_y:
                parts.append(f"topics {_names(only_y)} only in {name_y}")
            raise EvaluationError(f"{name_x} and {name_y} do not cover the same topics: "
                                  + "; ".join(parts))
        topics = sorted(x)
        a = np.array([x[t] for t in topics], dtype=np.float64)
        b = np.array([y[t] for t in topics], dtype=np.float64)
    else:
        a = np.asarray(x, dtype=np.float64)
        b = np.asarray(y, dtype=np.float64)
        if a.ndim != 1 or b.ndim != 1:
            raise EvaluationError(f"{name_x} and {name_y} must be one-dimensional")
        if a.shape != b.shape:
            raise EvaluationError(f"{name_x} and {name_y} do not cover the same topics: "
                                  f"{len(a)} values against {len(b)}")
    for name, v in ((name_x, a), (name_y, b)):
        if np.isnan(v).any():
            raise EvaluationError(f"{name} has no value (NaN) for {int(np.isnan(v).sum())} "
                                  "topics; paired tests need a value for every topic")
    if len(a) < 2:
        raise EvaluationError(f"{name_x} and {name_y}: a paired test needs at least 2 topics, "
                              f"got {len(a)}")
    return a, b


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise StatisticsError(f"unknown alternative '{alternative}' (choose from "
                         f"{', '.join(ALTERNATIVES)})")
    return alternative


def check_choice(kind: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise StatisticsError(f"unknown {kind} '{value}' (choose from {', '.join(choices)})")
    return value


def _pick(name: str, labels: np.ndarray, wanted: str | None) -> tuple[str, np.ndarray]:
    """The value of column ``name`` that the keyword ``name=`` picks (``wanted``; None: the
    column's only value) and the rows that hold it."""
    found = list(dict.fromkeys(labels.tolist()))
    if wanted is None:
        if len(found) > 1:
            raise EvaluationError(f"the frame holds {len(found)} {PICKED[name]} in its "
                                  f"'{name}' column ({_names(found)}): pick one with {name}=")
        wanted = found[0] if found else ""
    rows = labels == wanted
    if not rows.any():
        raise EvaluationError(f"no rows of {name} '{wanted}' (the frame's '{name}' column "
                              f"has {_names(found)})")
    return wanted, rows


def _told_apart(columns: list[tuple[str, np.ndarray]]) -> str:
    """Which of these columns (name, the repeated rows' values) tells the repeated rows
    apart, as the end of an error message."""
    differ = [(name, list(dict.fromkeys(map(str, values.tolist()))))
              for name, values in columns if len(set(map(str, values.tolist()))) > 1]
    if not differ:
        return "the rows are the same in every other column (drop the repeated rows)"
    return ("the rows differ in " + "; ".join(f"column '{name}' ({_names(values)})"
                                               for name, values in differ)
            + ": keep one value of it (filter the frame) before Scores.from_frame")


def _first_seen(labels: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The distinct labels in order of first appearance, and each row's index among them."""
    unique, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return tuple(unique[order].tolist()), rank[inverse.ravel()]
