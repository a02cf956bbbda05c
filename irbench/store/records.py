"""What the runner hands the store: one (system, qrels set)'s values, one system's outcome,
a qrels set's facts, a file's facts; and one row of ``judgments``, as every producer of
judgments writes it and every reader gets it back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import NamedTuple

import numpy as np

from ..measures import Measure

PROFILE_PREFIX = "profile:"  # done_measures names a stored profile value profile:<measure>


class FileFacts(NamedTuple):
    """A file's size and modification time (for an object at a URL: a version token) when
    its content had this sha256: an unchanged file is not read again."""

    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class QrelsRecord:
    """A qrels set as the store declares it: its file, kind and what it holds."""

    name: str
    path: str
    kind: str
    intent_weights: str | None
    sha256: str | None = None
    intent_weights_sha256: str | None = None
    num_topics: int | None = None
    num_judged: int | None = None
    num_relevant: int | None = None
    max_level: int | None = None
    level_counts: list[int] | None = None
    topics: list[str] | None = None
    topics_sha256: str | None = None


@dataclass(frozen=True, kw_only=True)
class Evaluated:
    """Per-topic values and summaries of one (system, qrels set) to store."""

    system: str
    qrels: str
    run_sha256: str
    qrels_sha256: str
    topics: tuple[str, ...]
    values: dict[Measure, np.ndarray]   # per-topic float64 (stored under canonical names)
    summaries: dict[Measure, float]
    profile: dict[Measure, float] = field(default_factory=dict)  # the report's PROFILE means


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


@dataclass(frozen=True, kw_only=True)
class Judgment:
    """One row of ``judgments``: a label given to (topic, document) by one judge.

    Each producer fills what it knows: an assessor's file judged into a pool or an imported
    qrels file (``source`` the file, ``batch`` the pool's batch), a model judge (``judge_kind``
    ``model``, ``source`` ``model:<model>``, the model, the sha256 of its request and its raw
    answer), the browser (``source`` :data:`ASSESSED`, the model's label shown as a
    ``suggested`` one, the ``seconds`` from showing the document to the click).
    :meth:`Store.record_judgments` writes them; ``judged_at`` is the store's, set when
    recorded (given back on reads)."""

    query_id: str
    doc_id: str
    relevance: int
    judge: str
    judge_kind: str = "human"        # human or model
    pool: str = ""                   # the pool judged; '' for judgments not made for one
    source: str = ""                 # the file, 'model:<model>' or ASSESSED
    batch: int | None = None         # a file's batch of its pool, else None
    model: str | None = None
    prompt_sha256: str | None = None  # of the request the model was asked
    answer: str | None = None         # the model's raw answer
    suggested: int | None = None      # the label shown as a suggestion in the browser
    seconds: float | None = None      # in the browser: from showing the document to the click
    judged_at: datetime | None = None


JUDGMENT_FIELDS = tuple(f.name for f in fields(Judgment))  # the columns of ``judgments``
ASSESSED = "assess"  # the source of a judgment made in the browser (``irbench assess``)


Column = np.ndarray | str | int | float | None  # one value per row, or one value for all


@dataclass(frozen=True, kw_only=True)
class JudgmentColumns:
    """Rows of ``judgments`` as columns, one per field of :class:`Judgment` (but
    ``judged_at``, the store's): each a numpy array of ``length`` values, or one value (a
    scalar) that every row has. What :meth:`Store.record_judgments` writes; the bulk producers
    (a qrels file imported, an assessor's file judged into a pool) build it from their
    columns, the small ones from their :class:`Judgment` rows (:meth:`from_rows`)."""

    length: int
    query_id: Column
    doc_id: Column
    relevance: Column
    judge: Column
    judge_kind: Column = "human"
    pool: Column = ""
    source: Column = ""
    batch: Column = None
    model: Column = None
    prompt_sha256: Column = None
    answer: Column = None
    suggested: Column = None
    seconds: Column = None

    def __post_init__(self) -> None:
        for name in WRITTEN_FIELDS:
            value = getattr(self, name)
            if isinstance(value, np.ndarray) and value.shape != (self.length,):
                raise ValueError(f"JudgmentColumns: {name} has shape {value.shape}, not "
                                 f"({self.length},)")

    def __len__(self) -> int:
        return self.length

    @classmethod
    def from_rows(cls, rows: Sequence[Judgment]) -> JudgmentColumns:
        """``rows`` as columns: a field with one value in every row as that value, any other
        as an object array of the rows' values in order."""
        columns: dict[str, Column] = {}
        for name in WRITTEN_FIELDS:
            values = [getattr(row, name) for row in rows]
            if values and values.count(values[0]) == len(values):
                columns[name] = values[0]
            else:
                columns[name] = np.array(values + [None], dtype=object)[:-1]  # never 2-d
        return cls(length=len(rows), **columns)


WRITTEN_FIELDS = tuple(name for name in JUDGMENT_FIELDS if name != "judged_at")
