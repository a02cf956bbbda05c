"""In-memory input: data frames (pandas, Polars, Arrow), dicts and tuples as Run and Qrels
columns, with the same checks as files."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import FormatError, OutputError
from .ids import (
    MAX_ID_BYTES,
    MAX_RELEVANCE,
    MIN_RELEVANCE,
    Problems,
    Qrels,
    Run,
    as_strings,
    bytes_array,
    check_qrels_duplicates,
    token_words,
)


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _rows(data, value: str) -> list[tuple]:
    """(query_id, doc_id, value) rows of in-memory data; named tuples (ir_measures' ScoredDoc
    and Qrel, ir_datasets' TrecQrel: ``query_id, doc_id, relevance, iteration``) by field."""
    if isinstance(data, Mapping):
        return [(q, d, v) for q, inner in data.items() for d, v in inner.items()]
    wanted = ("query_id", "doc_id", value)
    return [tuple(getattr(row, f) for f in wanted)
            if all(f in getattr(row, "_fields", ()) for f in wanted) else tuple(row)
            for row in data]


FRAME_COLUMNS = {"run": ("query_id", "doc_id", "score"),
                 "qrels": ("query_id", "doc_id", "relevance")}


def pandas_module(what: str):
    """pandas, imported on first use by what gives a data frame (``what``, for the message);
    without it an OutputError names the ``pandas`` extra."""
    try:
        import pandas
    except ModuleNotFoundError:
        raise OutputError(f"{what} needs pandas: pip install 'irbench[pandas]'") from None
    return pandas


def is_frame(data) -> bool:
    """Whether ``data`` is a data frame (pandas, Polars) or an Arrow table."""
    return not isinstance(data, Mapping) and (hasattr(data, "column_names")  # Arrow
                                              or hasattr(data, "columns"))  # pandas, Polars


def frame_names(frame) -> list[str]:
    """The column names of a data frame (pandas, Polars) or an Arrow table."""
    return [str(c) for c in (frame.column_names if hasattr(frame, "column_names")
                             else list(frame.columns))]


def frame_column(frame, name: str):
    """One column of a data frame or Arrow table (it has ``to_numpy``)."""
    return frame.column(name) if hasattr(frame, "column_names") else frame[name]


def _frame_columns(frame, kind: str, name: str) -> list[tuple[Any, np.ndarray]]:
    """Per needed column: (the column, its missing-value mask)."""
    present = frame_names(frame)
    wanted = FRAME_COLUMNS[kind]
    missing = [c for c in wanted if c not in present]
    if missing:
        raise FormatError([f"<{name}>: a {kind} data frame needs the column"
                           f"{'s' if len(missing) > 1 else ''} {', '.join(missing)} (it has "
                           f"{', '.join(present) or 'none'}; the names ir_measures uses)"])
    out = []
    for c in wanted:
        column = frame_column(frame, c)
        missing = (getattr(column, "isna", None) or column.is_null)()
        mask = np.asarray(missing.to_numpy() if hasattr(missing, "to_numpy") else missing,
                          dtype=bool)
        out.append((column, mask))
    return out


def _arrow_strings(column) -> np.ndarray | None:
    """A text column as a numpy bytes array built from its Arrow buffers (offsets and UTF-8
    data, as the file reader builds its columns: no Python object per value), or None when
    pyarrow is not installed or the column is not text."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        array = column.to_arrow() if hasattr(column, "to_arrow") else (
            column if isinstance(column, (pa.Array, pa.ChunkedArray)) else pa.array(column))
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        array = array.cast(pa.large_string())
    except (pa.ArrowException, TypeError, ValueError):
        return None
    _, offsets, data = array.buffers()
    ends = np.frombuffer(offsets, dtype=np.int64)[array.offset:array.offset + len(array) + 1]
    buf = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(8, np.uint8)
    starts, ends = ends[:-1], ends[1:]
    if not len(starts):
        return np.zeros(0, dtype="S1")
    return as_strings(token_words(buf, starts, ends), ends - starts)


def _frame_ids(column, mask: np.ndarray, what: str, problems: Problems) -> np.ndarray:
    if mask.any():
        problems.add(int(np.argmax(mask)) + 1, f"{what} is missing")
        return np.zeros(0, dtype="S1")
    ids = _arrow_strings(column)
    if ids is None:  # no pyarrow: through numpy
        values = np.asarray(column.to_numpy())
        if values.dtype.kind in "iuS":
            ids = values.astype("S")
        else:
            text = values.astype(str)
            try:
                ids = text.astype("S")  # ASCII: one cast
            except UnicodeEncodeError:
                ids = np.char.encode(text, "utf-8")
    empty = ids == b""
    if empty.any():
        problems.add(int(np.argmax(empty)) + 1, f"{what} is empty")
    if ids.dtype.itemsize > MAX_ID_BYTES:
        long = np.char.str_len(ids) > MAX_ID_BYTES
        row = int(np.argmax(long))
        problems.add(row + 1, f"{what} of {len(ids[row]):,} bytes: at most "
                     f"{MAX_ID_BYTES:,} bytes")
    return ids


def _from_frame(frame, kind: str, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    (q, q_na), (d, d_na), (v_col, v_na) = _frame_columns(frame, kind, name)
    problems = Problems(f"<{name}>")
    query_id = _frame_ids(q, q_na, "query_id", problems)
    doc_id = _frame_ids(d, d_na, "doc_id", problems)
    v = np.asarray(v_col.to_numpy())
    try:
        value = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        value = np.full(len(v), np.nan)
    bad = v_na | ~np.isfinite(value)
    if kind == "qrels":
        bad |= (value != np.round(value)) | (value < MIN_RELEVANCE) | (value > MAX_RELEVANCE)
    if bad.any():
        row = int(np.argmax(bad))
        what = ("score is not a finite number" if kind == "run"
                else "relevance is not an integer in range")
        shown = repr(v[row].item() if isinstance(v[row], np.generic) else v[row])
        more = int(bad.sum()) - 1
        problems.add(row + 1, f"{what}: {shown}" + (f" (and {more} more rows)" if more else ""))
    problems.raise_if_any()
    if not len(value):
        raise FormatError([f"<{name}>:1: empty {kind}: no rows"])
    return query_id, doc_id, value


def _memory_score(value) -> float | None:
    """An in-memory score as a finite float, or None."""
    if isinstance(value, (str, bytes, bool)):
        return None
    try:
        score = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return score if math.isfinite(score) else None


def _memory_relevance(value) -> int | None:
    """An in-memory relevance as an int in range, or None (floats must be whole numbers)."""
    if isinstance(value, (str, bytes, bool)):
        return None
    try:
        rel = int(value)
        whole = rel == value
    except (TypeError, ValueError, OverflowError):
        return None
    return rel if whole and MIN_RELEVANCE <= rel <= MAX_RELEVANCE else None


def run_from_memory(data, name: str) -> Run:
    if is_frame(data):
        query_id, doc_id, score = _from_frame(data, "run", name)
        return Run(name=name, runid=name, query_id=query_id, doc_id=doc_id, score=score,
                   line=np.arange(1, len(score) + 1, dtype=np.int64))
    rows = _rows(data, "score")
    problems = Problems(f"<{name}>")
    for i, row in enumerate(rows, 1):
        if len(row) != 3:
            problems.add(i, f"expected (query_id, doc_id, score), got {len(row)} values")
        elif _memory_score(row[2]) is None:
            problems.add(i, f"score {row[2]!r} is not a finite number")
    problems.raise_if_any()
    if not rows:
        raise FormatError([f"<{name}>:1: empty run: no results"])
    return Run(
        name=name,
        runid=name,
        query_id=bytes_array([_as_bytes(r[0]) for r in rows]),
        doc_id=bytes_array([_as_bytes(r[1]) for r in rows]),
        score=np.array([float(r[2]) for r in rows], dtype=np.float64),
        line=np.arange(1, len(rows) + 1, dtype=np.int64),
    )


def qrels_from_memory(data, name: str) -> Qrels:
    if is_frame(data):
        query_id, doc_id, relevance = _from_frame(data, "qrels", name)
        qrels = Qrels(name=name, query_id=query_id, doc_id=doc_id,
                      relevance=relevance.astype(np.int64),
                      line=np.arange(1, len(relevance) + 1, dtype=np.int64))
        check_qrels_duplicates(qrels)
        return qrels
    rows = _rows(data, "relevance")
    problems = Problems(f"<{name}>")
    for i, row in enumerate(rows, 1):
        if len(row) != 3:
            problems.add(i, f"expected (query_id, doc_id, relevance), got {len(row)} values")
        elif _memory_relevance(row[2]) is None:
            problems.add(i, f"relevance {row[2]!r} is not an integer in range")
    problems.raise_if_any()
    if not rows:
        raise FormatError([f"<{name}>:1: empty qrels: no judgments"])
    qrels = Qrels(
        name=name,
        query_id=bytes_array([_as_bytes(r[0]) for r in rows]),
        doc_id=bytes_array([_as_bytes(r[1]) for r in rows]),
        relevance=np.array([int(r[2]) for r in rows], dtype=np.int64),
        line=np.arange(1, len(rows) + 1, dtype=np.int64),
    )
    check_qrels_duplicates(qrels)
    return qrels
