"""Readers for TREC run and qrels files, as whole columns.

Runs are ``qid Q0 docno rank score tag`` lines and qrels are ``qid iter docno rel`` lines,
separated by any ASCII whitespace (the C ``isspace`` set, so CRLF line ends are fine). Files
ending in ``.gz`` (or starting with the gzip magic bytes) are decompressed; ``-`` reads stdin.

The rules follow trec_eval 10.0 (``get_trec_results.c``, ``get_qrels.c``):

* runs: blank lines are skipped, a line whose first non-blank character is ``#`` is a comment,
  fields after the sixth are ignored, ``iter`` and ``rank`` are ignored, the run id is the tag of
  the last content line;
* qrels: exactly four fields, a ``#`` in column 0 starts a comment (an indented ``#`` is data);
* ids are byte strings compared as unsigned bytes; ``01`` and ``1`` are different topics.

irbench is stricter than trec_eval where trec_eval silently reads garbage: a score that is not
a finite decimal number and a relevance that is not an integer are errors (trec_eval's ``atof`` and
``atol`` would read a prefix). Duplicate qrels rows are reported here, at read time; duplicate
docnos in a run are checked when the run is ranked (after ``-M``, as trec_eval does).

Every problem is reported as ``PATH:LINE: reason``; up to 20 in one :class:`FormatError`.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import sys
import zlib
from dataclasses import dataclass
from typing import IO, Iterable, Mapping, Union

import numpy as np

from .errors import FormatError

Source = Union[str, "os.PathLike[str]", IO[bytes], IO[str]]

_CHUNK = 1 << 24  # bytes per parsing chunk; keeps peak memory bounded on huge runs
_MAX_PROBLEMS = 20
_FLOAT_RE = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INT_RE = re.compile(rb"[+-]?\d+\Z")
MIN_RELEVANCE, MAX_RELEVANCE = -(2**31), 2**31 - 1  # trec_eval keeps levels in a C long
_WS = b" \t\n\r\x0b\x0c"


@dataclass(frozen=True, eq=False)
class Run:
    """A run as columns in file order. ``query_id``/``doc_id`` are numpy bytes arrays."""

    name: str
    runid: str
    query_id: np.ndarray
    doc_id: np.ndarray
    score: np.ndarray
    line: np.ndarray
    path: str | None = None

    def __len__(self) -> int:
        return len(self.score)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Judgments as columns in file order. ``relevance`` is int64; negatives are kept."""

    name: str
    query_id: np.ndarray
    doc_id: np.ndarray
    relevance: np.ndarray
    line: np.ndarray
    path: str | None = None

    def __len__(self) -> int:
        return len(self.relevance)


class _Problems:
    """Collects ``PATH:LINE: reason`` messages, keeping the first 20 and counting the rest."""

    def __init__(self, path: str):
        self.path = path
        self.shown: list[str] = []
        self.more = 0

    def add(self, line: int, reason: str) -> None:
        if len(self.shown) < _MAX_PROBLEMS:
            self.shown.append(f"{self.path}:{line}: {reason}")
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.shown)

    def raise_if_any(self) -> None:
        if self.shown:
            raise FormatError(self.shown, self.more)


def _display(text: bytes) -> str:
    return text.decode("utf-8", "backslashreplace")


def _read_source(source: Source) -> tuple[str, bytes]:
    """Return (display path, raw bytes), decompressing gzip."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-":
            data = sys.stdin.buffer.read()
            path = "<stdin>"
        else:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError:
                raise FormatError([f"{path}: no such file"]) from None
            except IsADirectoryError:
                raise FormatError([f"{path}: is a directory, not a file"]) from None
            except OSError as exc:
                raise FormatError([f"{path}: cannot read ({exc.strerror})"]) from None
    else:
        path = getattr(source, "name", None) or "<memory>"
        data = source.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
    if data[:2] == b"\x1f\x8b" or path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError([f"{path}:1: not a valid gzip file ({exc})"]) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FormatError([f"{path}:{line}: not a text file (NUL byte)"])
    return path, data


def _chunks(data: bytes) -> Iterable[tuple[int, bytes]]:
    """Split ``data`` at line ends into pieces of about ``_CHUNK`` bytes: (first line no, piece)."""
    start, line = 0, 1
    n = len(data)
    while start < n:
        end = min(start + _CHUNK, n)
        if end < n:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or n)
        piece = data[start:end]
        yield line, piece
        line += piece.count(b"\n")
        start = end


def _regular_lines(piece: bytes, ncols: int, hash_anywhere: bool):
    """Vectorised check that every non-blank line has exactly ``ncols`` fields and is no comment.

    Returns the 0-based line index (within ``piece``) of each content line, or None when the
    piece needs the line-by-line path (comments, blank qrels lines, other field counts).
    """
    buf = np.frombuffer(piece, dtype=np.uint8)
    if buf.size == 0:
        return np.zeros(0, dtype=np.int64)
    ws = (buf == 32) | ((buf >= 9) & (buf <= 13))
    prev_ws = np.empty_like(ws)
    prev_ws[0] = True
    prev_ws[1:] = ws[:-1]
    starts = np.flatnonzero(~ws & prev_ws)
    newlines = np.flatnonzero(buf == 10)
    line_of = np.searchsorted(newlines, starts)
    counts = np.bincount(line_of)
    content = np.flatnonzero(counts)
    if not np.all(counts[content] == ncols):
        return None
    first = starts[::ncols]
    if hash_anywhere:
        if np.any(buf[first] == 35):
            return None
    else:
        total_lines = newlines.size + (0 if piece.endswith(b"\n") else 1)
        if content.size != total_lines:  # a blank line: the strict path reports it
            return None
        line_starts = np.concatenate(([0], newlines[:-1] + 1)) if newlines.size else np.array([0])
        if np.any(buf[line_starts[line_starts < buf.size]] == 35):
            return None
    return content


def _to_float(tokens: list[bytes]) -> np.ndarray | None:
    if not tokens:
        return np.zeros(0, dtype=np.float64)
    try:
        values = np.array(tokens).astype(np.float64)
    except ValueError:
        return None
    if not np.all(np.isfinite(values)):
        return None
    return values


def _to_int(tokens: list[bytes]) -> np.ndarray | None:
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.array(tokens).astype(np.int64)
    except (ValueError, OverflowError):
        return None


def _bytes_array(tokens: list[bytes]) -> np.ndarray:
    return np.array(tokens, dtype=np.bytes_) if tokens else np.zeros(0, dtype="S1")


def read_run(source: Source | Mapping | Iterable, name: str | None = None) -> Run:
    """Read a TREC run from a path, ``-`` (stdin), a file object, or in-memory data.

    In-memory data is either ``{query_id: {doc_id: score}}`` (pytrec_eval's shape) or an
    iterable of ``(query_id, doc_id, score)`` tuples.
    """
    if isinstance(source, Mapping) or (
        not isinstance(source, (str, os.PathLike)) and not hasattr(source, "read")
    ):
        return _run_from_memory(source, name or "run")
    path, data = _read_source(source)
    problems = _Problems(path)
    qids: list[np.ndarray] = []
    docs: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    runid = b""
    for first_line, piece in _chunks(data):
        content = None if b"_" in piece else _regular_lines(piece, 6, hash_anywhere=True)
        if content is not None:
            tokens = piece.split()
            values = _to_float(tokens[4::6])
            if values is not None:
                qids.append(_bytes_array(tokens[0::6]))
                docs.append(_bytes_array(tokens[2::6]))
                scores.append(values)
                lines.append(content + first_line)
                if tokens:
                    runid = tokens[-1]
                continue
        q, d, s, ln, tag = _parse_run_lines(piece, first_line, problems)
        if q:
            qids.append(_bytes_array(q))
            docs.append(_bytes_array(d))
            scores.append(np.array(s, dtype=np.float64))
            lines.append(np.array(ln, dtype=np.int64))
            runid = tag
    problems.raise_if_any()
    if not any(len(s) for s in scores):
        raise FormatError([f"{path}:1: empty run: no result lines"])
    return Run(
        name=name or _default_name(path),
        runid=_display(runid),
        query_id=_concat(qids),
        doc_id=_concat(docs),
        score=np.concatenate(scores),
        line=np.concatenate(lines),
        path=path,
    )


def _parse_run_lines(piece: bytes, first_line: int, problems: _Problems):
    q, d, s, ln = [], [], [], []
    tag = b""
    for offset, raw in enumerate(piece.split(b"\n")):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        line = first_line + offset
        if len(fields) < 6:
            problems.add(
                line, f"expected 6 columns (qid Q0 docno rank score tag), got {len(fields)}"
            )
            continue
        text = fields[4]
        score = float(text) if _FLOAT_RE.match(text) else math.nan
        if not math.isfinite(score):
            problems.add(line, f"score '{_display(text)}' is not a finite number")
            continue
        q.append(fields[0])
        d.append(fields[2])
        s.append(score)
        ln.append(line)
        tag = fields[5]
    return q, d, s, ln, tag


def read_qrels(source: Source | Mapping | Iterable, name: str | None = None) -> Qrels:
    """Read TREC qrels from a path, ``-`` (stdin), a file object, or in-memory data.

    In-memory data is ``{query_id: {doc_id: relevance}}`` or ``(query_id, doc_id, relevance)``
    tuples. Duplicate ``(query_id, doc_id)`` rows are an error.
    """
    if isinstance(source, Mapping) or (
        not isinstance(source, (str, os.PathLike)) and not hasattr(source, "read")
    ):
        return _qrels_from_memory(source, name or "qrels")
    path, data = _read_source(source)
    problems = _Problems(path)
    qids, docs, rels, lines = [], [], [], []
    for first_line, piece in _chunks(data):
        content = None if b"_" in piece else _regular_lines(piece, 4, hash_anywhere=False)
        if content is not None:
            tokens = piece.split()
            values = _to_int(tokens[3::4])
            if values is not None:
                qids.append(_bytes_array(tokens[0::4]))
                docs.append(_bytes_array(tokens[2::4]))
                rels.append(values)
                lines.append(content + first_line)
                continue
        q, d, r, ln = _parse_qrels_lines(piece, first_line, problems)
        if q:
            qids.append(_bytes_array(q))
            docs.append(_bytes_array(d))
            rels.append(np.array(r, dtype=np.int64))
            lines.append(np.array(ln, dtype=np.int64))
    problems.raise_if_any()
    if not any(len(r) for r in rels):
        raise FormatError([f"{path}:1: empty qrels: no judgment lines"])
    qrels = Qrels(
        name=name or _default_name(path),
        query_id=_concat(qids),
        doc_id=_concat(docs),
        relevance=np.concatenate(rels),
        line=np.concatenate(lines),
        path=path,
    )
    _check_qrels_duplicates(qrels)
    return qrels


def _parse_qrels_lines(piece: bytes, first_line: int, problems: _Problems):
    q, d, r, ln = [], [], [], []
    parts = piece.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()  # the piece's final newline
    for offset, raw in enumerate(parts):
        line = first_line + offset
        if raw.startswith(b"#"):
            continue
        fields = raw.split()
        if not fields:
            problems.add(line, "blank line (qrels lines are 'qid iter docno rel')")
            continue
        if len(fields) != 4:
            problems.add(line, f"expected 4 columns (qid iter docno rel), got {len(fields)}")
            continue
        if not _INT_RE.match(fields[3]):
            problems.add(line, f"relevance '{_display(fields[3])}' is not an integer")
            continue
        rel = int(fields[3])
        if not MIN_RELEVANCE <= rel <= MAX_RELEVANCE:
            problems.add(line, f"relevance {rel} is out of the integer range "
                               f"({MIN_RELEVANCE} to {MAX_RELEVANCE})")
            continue
        q.append(fields[0])
        d.append(fields[2])
        r.append(rel)
        ln.append(line)
    return q, d, r, ln


def _check_qrels_duplicates(qrels: Qrels) -> None:
    order = np.lexsort((qrels.line, qrels.doc_id, qrels.query_id))
    q, d = qrels.query_id[order], qrels.doc_id[order]
    dup = np.flatnonzero((q[1:] == q[:-1]) & (d[1:] == d[:-1])) + 1
    if dup.size == 0:
        return
    problems = _Problems(qrels.path or qrels.name)
    first_line = qrels.line[order]
    # the first row of each run of equal keys is where the duplicate was first seen
    group_start = np.flatnonzero(np.concatenate(([True], ~((q[1:] == q[:-1]) & (d[1:] == d[:-1])))))
    owner = group_start[np.searchsorted(group_start, dup, side="right") - 1]
    for i, o in zip(dup, owner):
        problems.add(
            int(first_line[i]),
            f"duplicate judgment of docno '{_display(d[i])}' for topic '{_display(q[i])}'"
            f" (first at line {int(first_line[o])})",
        )
    problems.raise_if_any()


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype="S1")
    width = max(p.dtype.itemsize for p in parts)
    return np.concatenate([p.astype(f"S{width}") for p in parts])


def _default_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in (".gz",):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _rows(data) -> list[tuple]:
    if isinstance(data, Mapping):
        return [(q, d, v) for q, inner in data.items() for d, v in inner.items()]
    return [tuple(row) for row in data]


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


def _run_from_memory(data, name: str) -> Run:
    rows = _rows(data)
    problems = _Problems(f"<{name}>")
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
        query_id=_bytes_array([_as_bytes(r[0]) for r in rows]),
        doc_id=_bytes_array([_as_bytes(r[1]) for r in rows]),
        score=np.array([float(r[2]) for r in rows], dtype=np.float64),
        line=np.arange(1, len(rows) + 1, dtype=np.int64),
    )


def _qrels_from_memory(data, name: str) -> Qrels:
    rows = _rows(data)
    problems = _Problems(f"<{name}>")
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
        query_id=_bytes_array([_as_bytes(r[0]) for r in rows]),
        doc_id=_bytes_array([_as_bytes(r[1]) for r in rows]),
        relevance=np.array([int(r[2]) for r in rows], dtype=np.int64),
        line=np.arange(1, len(rows) + 1, dtype=np.int64),
    )
    _check_qrels_duplicates(qrels)
    return qrels


def read_zscores(source: Source) -> dict[tuple[str, str], tuple[float, float]]:
    """Read a trec_eval ``-Z`` file: ``qid measure mean std_dev`` lines -> {(qid, measure): (mean, sd)}."""
    path, data = _read_source(source)
    problems = _Problems(path)
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            problems.add(line_no, f"expected 4 columns (qid measure mean std_dev), got {len(fields)}")
            continue
        if not (_FLOAT_RE.match(fields[2]) and _FLOAT_RE.match(fields[3])):
            problems.add(line_no, "mean and std_dev must be numbers")
            continue
        table[(_display(fields[0]), _display(fields[1]))] = (float(fields[2]), float(fields[3]))
    problems.raise_if_any()
    return table
