"""Evaluations that need a table of documents beside the qrels: diversity qrels (subtopics,
for ``alpha_nDCG``, ``ERR_IA``, ...) and documents the user already knows (``Coverage``,
``Novelty``).

A :class:`~irbench.ranked.Ranked` run keeps each document's qrels level but not its docno,
so a measure cannot look a ranked document up in a second table afterwards. :class:`KeyedQrels`
ranks the run once against a qrels in which each document of the table carries its own number
(encoded above the highest qrels level), then decodes the levels back: the result is the
ordinary ranking (same order, ``-M``, ``-J``, ``-c`` and duplicate rules, since
:func:`~irbench.ranked.rank_run` does the ranking) plus, per ranked document, its row in
the table. The columns the measures read are attached with ``Ranked.cached``.

Diversity qrels are ndeval's format, ``topic subtopic docno rel`` (TREC Web track 2009-2014):
document d is relevant to subtopic j when rel > 0. Ad hoc measures asked beside diversity
measures are computed on the collapsed qrels, where a document's level is its highest level over
the subtopics (as ndeval computes its non-intent-aware MAP).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import DuplicateError, FormatError
from ..measures import Measure
from ..measures.compute import Evaluation, as_measures, score_run
from ..measures.diversity import (
    INTENT_KEY,
    IntentColumns,
    IntentQrels,
)
from ..ranked import NOT_IN_QRELS, EvalOptions, PreparedQrels, Ranked, rank_run
from ..trec import (
    FLOAT_RE,
    MAX_ID_BYTES,
    MAX_RELEVANCE,
    MIN_RELEVANCE,
    Qrels,
    Run,
    display,
    is_source,
    longest_token,
    read_run,
    read_source,
    regular_lines,
    relevance_of,
    shown,
    too_long,
)

_MAX_PROBLEMS = 20


@dataclass(frozen=True, eq=False, kw_only=True)
class DiversityQrels:
    """Diversity judgments as columns in file order: ``query_id``, ``subtopic`` and ``doc_id``
    are numpy bytes arrays, ``relevance`` int64, ``line`` the line numbers."""

    name: str
    query_id: np.ndarray
    subtopic: np.ndarray
    doc_id: np.ndarray
    relevance: np.ndarray
    line: np.ndarray
    path: str | None = None

    def __len__(self) -> int:
        return len(self.relevance)


# ---- reading -----------------------------------------------------------------------------


def read_diversity_qrels(source, name: str | None = None, *,
                         second: str = "subtopic") -> DiversityQrels:
    """Read a diversity qrels: ``topic subtopic docno rel`` lines (ndeval's format).

    ``second`` names the second column in messages (trec_eval's ``qrels_jg`` files have the
    same shape with a judgment group there: :mod:`irbench.judgments.groups`).

    ``source``: a path (``.gz`` is fine, ``-`` is stdin), a binary or text file, a mapping
    ``{topic: {subtopic: {docno: rel}}}`` or an iterable of ``(topic, subtopic, docno, rel)``.
    As for qrels, a line starting with ``#`` is a comment; blank lines are skipped. Every
    problem (field count, a relevance that is not an integer, a judgment given twice) is
    reported with its line, up to 20 in one :class:`FormatError`.
    """
    if isinstance(source, Mapping) or not is_source(source):
        label = name or "diversity qrels"
        rows = _memory_rows(source)
        columns = _columns_of_rows(rows, f"<{label}>", second)
        path = None
    else:
        path, data = read_source(source)
        columns = _parse(data, path, second)
        label = name or os.path.basename(path)
    where = path or f"<{label}>"
    if len(columns[0]) == 0:
        raise FormatError([f"{where}:1: empty qrels: no judgment lines"])
    query_id, subtopic, doc_id, relevance, line = columns
    qrels = DiversityQrels(name=label, query_id=query_id, subtopic=subtopic, doc_id=doc_id,
                           relevance=relevance, line=line, path=path)
    _check_duplicates(qrels, where, second)
    return qrels


def _memory_rows(data) -> list[tuple]:
    if isinstance(data, Mapping):
        return [(q, s, d, v) for q, subs in data.items() for s, docs in subs.items()
                for d, v in docs.items()]
    return [tuple(row) for row in data]


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


# query_id, subtopic, doc_id, relevance, line
_Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _columns_of_rows(rows: list[tuple], where: str, second: str = "subtopic") -> _Columns:
    problems = []
    for i, row in enumerate(rows, 1):
        if len(row) != 4:
            problems.append(f"{where}:{i}: expected (topic, {second}, docno, rel), "
                            f"got {len(row)} values")
        elif isinstance(row[3], (bool, str, bytes)) or int(row[3]) != row[3]:
            problems.append(f"{where}:{i}: relevance {row[3]!r} is not an integer")
        elif not MIN_RELEVANCE <= row[3] <= MAX_RELEVANCE:
            problems.append(f"{where}:{i}: {_out_of_range(row[3])}")
    if problems:
        raise FormatError(problems[:_MAX_PROBLEMS], max(0, len(problems) - _MAX_PROBLEMS))
    return (_bytes([_as_bytes(r[0]) for r in rows]), _bytes([_as_bytes(r[1]) for r in rows]),
            _bytes([_as_bytes(r[2]) for r in rows]),
            np.array([int(r[3]) for r in rows], dtype=np.int64),
            np.arange(1, len(rows) + 1, dtype=np.int64))


def _bytes(values: list[bytes]) -> np.ndarray:
    return np.array(values, dtype=bytes) if values else np.zeros(0, dtype="S1")


def _parse(data: bytes, path: str, second: str = "subtopic") -> _Columns:
    """Columns of a diversity qrels file: whole-array when every line is 4 plain fields,
    else line by line with every problem reported."""
    fast = _parse_regular(data) if longest_token(data) <= MAX_ID_BYTES else None
    if fast is not None:
        return fast
    problems: list[str] = []
    more = 0
    rows: list[tuple] = []
    lines: list[int] = []
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        if raw.startswith(b"#"):
            continue
        fields = raw.split()
        if not fields:
            continue
        reason = None
        if len(fields) != 4:
            reason = f"expected 4 columns (topic {second} docno rel), got {len(fields)}"
        elif too_long(zip(("topic id", second, "docno"), fields)) is not None:
            reason = too_long(zip(("topic id", second, "docno"), fields))
        else:
            rel, reason = relevance_of(fields[3])  # 1_0 and 5,000 digits are no integers
        if reason is not None:
            if len(problems) < _MAX_PROBLEMS:
                problems.append(f"{path}:{line_no}: {reason}")
            else:
                more += 1
            continue
        rows.append((fields[0], fields[1], fields[2], rel))
        lines.append(line_no)
    if problems:
        raise FormatError(problems, more)
    q, s, d, r, _ = _columns_of_rows(rows, path, second)
    return q, s, d, r, np.array(lines, dtype=np.int64)


def _out_of_range(rel: int) -> str:
    return (f"relevance {rel} is out of the integer range ({MIN_RELEVANCE} to "
            f"{MAX_RELEVANCE})")


def _parse_regular(data: bytes) -> _Columns | None:
    """The columns when no line is a comment and every non-blank line has 4 fields and an
    integer relevance; None otherwise (the line-by-line path then says what is wrong)."""
    lines = regular_lines(data, 4, hash_anywhere=True)
    if lines is None or len(lines) == 0:
        return None
    tokens = data.split()
    try:
        rel = np.array(tokens[3::4]).astype(np.int64)
    except (ValueError, OverflowError):
        return None
    if len(rel) and (rel.min() < MIN_RELEVANCE or rel.max() > MAX_RELEVANCE):
        return None
    if np.any(~np.char.isdigit(np.char.lstrip(np.array(tokens[3::4]), b"+-"))):
        return None  # e.g. "1.0": astype would read it, the strict path rejects it
    return (np.array(tokens[0::4]), np.array(tokens[1::4]), np.array(tokens[2::4]), rel,
            lines.astype(np.int64) + 1)


def _check_duplicates(q: DiversityQrels, where: str, second: str = "subtopic") -> None:
    order = np.lexsort((q.line, q.doc_id, q.subtopic, q.query_id))
    t, s, d = q.query_id[order], q.subtopic[order], q.doc_id[order]
    same = (t[1:] == t[:-1]) & (s[1:] == s[:-1]) & (d[1:] == d[:-1])
    dup = np.flatnonzero(same) + 1
    if len(dup) == 0:
        return
    lines = q.line[order]
    problems = [
        f"{where}:{int(lines[i])}: duplicate judgment of docno '{display(d[i])}' for topic "
        f"'{display(t[i])}' {second} '{display(s[i])}' (first at line {int(lines[i - 1])})"
        for i in dup[:_MAX_PROBLEMS]
    ]
    raise DuplicateError(problems, max(0, len(dup) - _MAX_PROBLEMS))


def check_diversity_kind(qrels: DiversityQrels) -> None:
    """Raise a :class:`FormatError` when ``qrels`` look like ad hoc qrels read as diversity
    qrels: every line's second field is ``0`` (trec_eval's unused ``iter``), whereas TREC
    diversity qrels number subtopics from 1."""
    if len(qrels) and np.all(qrels.subtopic == b"0"):
        where = qrels.path or f"<{qrels.name}>"
        raise FormatError([
            f"{where}: every line has subtopic 0: this looks like an ad hoc qrels file "
            "(qid iter docno rel); diversity measures need diversity qrels (topic subtopic "
            "docno rel, ndeval's format, subtopics numbered from 1)"
        ])


def diversity_hint(source) -> str | None:
    """When ``source`` (a qrels path that failed to read as ad hoc qrels) is diversity qrels,
    a sentence saying so, for the error message; else None."""
    try:
        q = read_diversity_qrels(source)
    except FormatError:
        return None
    if np.all(q.subtopic == q.subtopic[0]):
        return None
    keys = np.unique(np.char.add(np.char.add(q.query_id, b" "), q.doc_id))
    if len(keys) == len(q):
        return None
    return (f"{q.path or q.name} looks like diversity qrels (topic subtopic docno rel): "
            "use them with a diversity measure (alpha_nDCG@20, ERR_IA@20, nERR_IA@20, P_IA@20, "
            "S_recall@20), or give ad hoc qrels (qid iter docno rel) for the other measures")


def read_intent_weights(source) -> dict[str, dict[str, float]]:
    """Intent weights from ``topic subtopic weight`` lines (or a mapping, returned as is)."""
    if isinstance(source, Mapping):
        return {str(t): {str(s): float(w) for s, w in subs.items()} for t, subs in source.items()}
    path, data = read_source(source)
    weights: dict[str, dict[str, float]] = {}
    problems = []
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 3:
            problems.append(f"{path}:{line_no}: expected 3 columns (topic subtopic weight), "
                            f"got {len(fields)}")
            continue
        value = float(fields[2]) if FLOAT_RE.match(fields[2]) else math.nan
        if not math.isfinite(value):
            problems.append(f"{path}:{line_no}: weight '{shown(fields[2])}' is not a finite "
                            "number")
            continue
        weights.setdefault(display(fields[0]), {})[display(fields[1])] = value
    if problems:
        raise FormatError(problems[:_MAX_PROBLEMS], max(0, len(problems) - _MAX_PROBLEMS))
    return weights


# ---- ranking with a table ----------------------------------------------------------------


class KeyedQrels:
    """Qrels plus a table of (topic, docno) keys: ranks a run once and says, for each ranked
    document, its qrels level and its row in the table (-1 if absent).

    Table documents get the relevance ``base + i`` in a synthetic qrels (``base`` one above
    the highest qrels level, ``i`` the document's number within its topic); the others keep
    their qrels value. Built once, shared by every run. Table keys of topics absent from the
    qrels are ignored (those topics are not evaluated).
    """

    def __init__(self, qrels: Qrels, table_topic: np.ndarray, table_doc: np.ndarray):
        self.prepared = PreparedQrels(qrels)
        topics = self.prepared.topics
        n = len(table_topic)
        ti = index_in(table_topic, topics)
        rows = np.flatnonzero(ti >= 0)
        self.table_level = np.full(n, NOT_IN_QRELS, dtype=np.int64)
        self.table_level[rows] = self.prepared.lookup(ti[rows], table_doc[rows])
        rows = rows[np.argsort(ti[rows], kind="stable")]  # topic by topic
        sorted_topic = ti[rows]
        self.table_row = rows
        self.topic_start = np.searchsorted(sorted_topic, np.arange(len(topics)))
        local = np.arange(len(rows)) - self.topic_start[sorted_topic]
        self.base = self.prepared.level_counts.shape[1]
        # qrels rows whose (topic, docno) is also in the table give way to the table's row
        q_topic = index_in(qrels.query_id, topics)
        both_topic = np.concatenate((q_topic, sorted_topic))
        both_doc = np.concatenate((qrels.doc_id, table_doc[rows]))
        order = np.lexsort((both_doc, both_topic))
        same = (both_topic[order][1:] == both_topic[order][:-1]) & (
            both_doc[order][1:] == both_doc[order][:-1])
        twin = np.zeros(len(both_topic), dtype=bool)
        twin[order[1:][same]] = True
        twin[order[:-1][same]] = True
        keep = ~twin[: len(q_topic)]
        synthetic = Qrels(
            name=qrels.name,
            query_id=np.concatenate((qrels.query_id[keep], topics[sorted_topic])),
            doc_id=np.concatenate((qrels.doc_id[keep], table_doc[rows])),
            relevance=np.concatenate((qrels.relevance[keep], self.base + local)),
            line=np.concatenate((qrels.line[keep], np.zeros(len(rows), dtype=np.int64))),
            path=qrels.path,
        )
        self.synthetic = PreparedQrels(synthetic)

    @property
    def topics(self) -> np.ndarray:
        return self.prepared.topics

    def rank(self, run: Run, options: EvalOptions = EvalOptions()) -> tuple[Ranked, np.ndarray]:
        """(the run ranked against the qrels, each ranked document's table row or -1)."""
        coded = rank_run(run, self.synthetic, replace(options, judged_only=False))
        code = coded.level
        in_table = code >= self.base
        row = np.full(len(code), -1, dtype=np.int64)
        topic = coded.topic_index[in_table]
        row[in_table] = self.table_row[self.topic_start[topic] + code[in_table] - self.base]
        level = code.copy()
        level[in_table] = self.table_level[row[in_table]]
        offsets = coded.offsets
        if options.judged_only:  # after -M, as rank_run does
            keep = level >= 0
            level, row = level[keep], row[keep]
            counts = np.bincount(coded.topic_index[keep], minlength=len(self.topics))
            offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        ranked = Ranked(
            topics=self.topics,
            offsets=offsets,
            level=level,
            missing=coded.missing,
            level_counts=self.prepared.level_counts,
            options=options,
            runid=coded.runid,
            name=coded.name,
            num_lines_rel_positive=self.prepared.num_lines_rel_positive,
        )
        return ranked, row


def index_in(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Index of each value in the sorted unique ``sorted_keys``, -1 where absent."""
    if len(sorted_keys) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_keys, values), len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == values, pos, -1).astype(np.int64)


# ---- diversity ---------------------------------------------------------------------------


def collapse(qrels: DiversityQrels) -> Qrels:
    """Ad hoc qrels from diversity qrels: each (topic, docno) once, at its highest level."""
    order = np.lexsort((qrels.line, qrels.doc_id, qrels.query_id))
    t, d = qrels.query_id[order], qrels.doc_id[order]
    start = np.flatnonzero(np.concatenate(([True], (t[1:] != t[:-1]) | (d[1:] != d[:-1]))))
    return Qrels(
        name=qrels.name,
        query_id=t[start],
        doc_id=d[start],
        relevance=np.maximum.reduceat(qrels.relevance[order], start),
        line=qrels.line[order][start],
        path=qrels.path,
    )


def _subtopic_order(subtopic: np.ndarray) -> np.ndarray:
    """Sort keys of subtopic labels: numeric when every label is a natural number (as ndeval
    reads them), else byte order."""
    if len(subtopic) and np.all(np.char.isdigit(subtopic)) and subtopic.dtype.itemsize < 19:
        return subtopic.astype(np.int64)
    return np.unique(subtopic, return_inverse=True)[1].ravel()


class KeyedJudgments:
    """Prepared judgments that rank a run through a :class:`KeyedQrels` (``self.keyed``) and
    attach the columns their measures read under ``column_key``."""

    keyed: KeyedQrels
    column_key: object = None

    @property
    def topics(self) -> np.ndarray:
        return self.keyed.topics

    @property
    def adhoc(self) -> PreparedQrels:
        """The ad hoc judgments (collapsed, for diversity qrels), prepared."""
        return self.keyed.prepared

    def columns(self, row: np.ndarray):
        """What the measures read, from each ranked document's row in the table (or -1)."""
        raise NotImplementedError

    def rank(self, run: Run, options: EvalOptions = EvalOptions()) -> Ranked:
        """The run ranked against the qrels, with this kind's columns attached."""
        ranked, row = self.keyed.rank(run, options)
        columns = self.columns(row)
        ranked.cached(self.column_key, lambda: columns)
        return ranked


class PreparedDiversity(KeyedJudgments):
    """Diversity qrels prepared once for many runs: the collapsed qrels, the intents of each
    topic with their weights, and the relevant documents keyed for ranking.

    ``intent_weights``: ``{topic: {subtopic: weight}}`` (or a ``topic subtopic weight`` file);
    a topic it lists gets those weights over its intents (the subtopics with a relevant
    document), normalised to sum to 1, and must give one to every intent; other topics get
    uniform weights 1/S.
    """

    def __init__(self, qrels: DiversityQrels, intent_weights=None):
        check_diversity_kind(qrels)
        self.qrels = qrels
        collapsed = collapse(qrels)
        topics = PreparedQrels(collapsed).topics if len(collapsed) else collapsed.query_id
        pos = qrels.relevance > 0
        ti = index_in(qrels.query_id[pos], topics)
        sub, doc = qrels.subtopic[pos], qrels.doc_id[pos]
        T = len(topics)

        # intents: (topic, subtopic) pairs with a relevant document, topic by topic
        sub_key = _subtopic_order(sub)
        o = np.lexsort((sub_key, ti))
        new = _starts(ti[o], sub_key[o])
        intent = np.empty(len(o), dtype=np.int64)
        intent[o] = np.cumsum(new) - 1
        intent_topic = ti[o][new]
        intent_offsets = np.concatenate(([0], np.cumsum(np.bincount(intent_topic, minlength=T))))
        weight, uniform = _weights(intent_weights, topics, intent_topic, sub[o][new],
                                   intent_offsets, qrels)

        # relevant documents: topic by topic, docno descending (ndeval's tie order)
        doc_code = np.unique(doc, return_inverse=True)[1].ravel()
        o = np.lexsort((intent, -doc_code, ti))
        new = _starts(ti[o], doc_code[o])
        doc_topic = ti[o][new]
        hit_offsets = np.concatenate((np.flatnonzero(new), [len(o)])).astype(np.int64)
        self.intents = IntentQrels(doc_topic=doc_topic, hit_offsets=hit_offsets,
                                   hit_intent=intent[o], intent_offsets=intent_offsets,
                                   intent_weight=weight, uniform=uniform)
        self.keyed = KeyedQrels(collapsed, topics[doc_topic], doc[o][new])

    column_key = INTENT_KEY

    def columns(self, row: np.ndarray) -> IntentColumns:
        """The intent columns of a run ranked against the collapsed qrels."""
        return IntentColumns(self.intents, row)


def _starts(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """True where the sorted pair (first, second) differs from the row before."""
    change = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    return np.concatenate(([True], change)) if len(first) else np.zeros(0, dtype=bool)


def _weights(given, topics, intent_topic, intent_label, intent_offsets, qrels):
    """(weight per intent, uniform?): 1/S, or the given weights normalised within a topic."""
    per_topic = np.diff(intent_offsets)
    weight = 1.0 / np.maximum(per_topic, 1)[intent_topic]
    if given is None:
        return weight, True
    table = read_intent_weights(given)
    problems = []
    for t, subs in table.items():
        idx = index_in(np.array([t.encode()]), topics)[0]
        if idx < 0:
            continue
        lo, hi = intent_offsets[idx], intent_offsets[idx + 1]
        values = []
        for j in range(lo, hi):  # the intents of one listed topic (a handful)
            label = display(intent_label[j])
            w = subs.get(label)
            if w is None or not np.isfinite(w) or w < 0:
                problems.append(f"intent weights: topic '{t}' subtopic '{label}': "
                                f"{'no weight' if w is None else f'weight {w} is not >= 0'}")
                w = 0.0
            values.append(w)
        total = sum(values)
        if hi > lo and total <= 0:
            problems.append(f"intent weights: topic '{t}': the weights sum to 0")
        elif hi > lo:
            weight[lo:hi] = np.array(values) / total
    if problems:
        raise FormatError(problems[:_MAX_PROBLEMS], max(0, len(problems) - _MAX_PROBLEMS))
    return weight, False


def evaluate_diversity(
    qrels: DiversityQrels | PreparedDiversity | Any,
    run: Run | Any,
    measures: Iterable[Measure | str],
    options: EvalOptions | None = None,
    intent_weights=None,
    **option_values: Any,
) -> Evaluation:
    """Evaluate ``run`` against diversity qrels (a path, in-memory data as for
    :func:`read_diversity_qrels`, a :class:`DiversityQrels` or a :class:`PreparedDiversity`
    to reuse across runs). Diversity measures use the subtopics; other measures use the
    collapsed qrels (a document's highest level over its subtopics)."""
    if options is None:
        options = EvalOptions(**option_values)
    elif option_values:
        raise TypeError("give either options= or option keywords, not both")
    if isinstance(qrels, PreparedDiversity):
        if intent_weights is not None:
            raise TypeError("give intent_weights to PreparedDiversity, not here")
        prepared = qrels
    else:
        dq = qrels if isinstance(qrels, DiversityQrels) else read_diversity_qrels(qrels)
        prepared = PreparedDiversity(dq, intent_weights)
    run = run if isinstance(run, Run) else read_run(run)
    return score_run(prepared, run, as_measures(measures), options)
