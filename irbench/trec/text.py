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
import io
import math
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FormatError
from .columns import qrels_columns, run_columns
from .frames import qrels_from_memory, run_from_memory
from .ids import (
    MAX_ID_BYTES,
    MAX_RELEVANCE,
    MIN_RELEVANCE,
    Problems,
    Qrels,
    Run,
    Source,
    bytes_array,
    check_qrels_duplicates,
    display,
    is_source,
    shown,
)
from .sources import (
    GZIP_MAGIC,
    Prefixed,
    gunzip_or_fail,
    is_url,
    open_binary,
    read_source,
    without_bom,
)

CHUNK = 1 << 22  # bytes per parsing piece: bounds memory, keeps columns in cache


FLOAT_RE = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


_INT_RE = re.compile(rb"[+-]?\d+\Z")


def _chunks(data: bytes) -> Iterable[tuple[int, bytes]]:
    """Split ``data`` at line ends into pieces of about ``CHUNK`` bytes: (first line no, piece)."""
    line = 1
    for piece in _cut(data):
        yield line, piece
        line += piece.count(b"\n")


def _cut(data: bytes) -> Iterator[bytes]:
    """``data`` in consecutive whole-line pieces of about ``CHUNK`` bytes (no line counted:
    that took 0.9 ms of a 2 MB run's 25 ms)."""
    start, n = 0, len(data)
    while start < n:
        end = min(start + CHUNK, n)
        if end < n:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or n)
        yield data[start:end]
        start = end


def regular_lines(piece: bytes, ncols: int, hash_anywhere: bool):
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


def longest_token(piece: bytes) -> int:
    """The length of the longest whitespace-free stretch of ``piece``."""
    buf = np.frombuffer(piece, dtype=np.uint8)
    at = np.flatnonzero((buf == 32) | ((buf >= 9) & (buf <= 13)))
    if len(at) == 0:
        return len(buf)
    return int(max(at[0], len(buf) - 1 - at[-1], np.diff(at).max(initial=1) - 1))


def _long_id(query_id: bytes, doc_id: bytes) -> str | None:
    """The problem with a topic id or docno longer than MAX_ID_BYTES, or None."""
    return too_long((("topic id", query_id), ("docno", doc_id)))


def too_long(named) -> str | None:
    """The problem with the first of ``(what, token)`` pairs longer than MAX_ID_BYTES (topic
    ids, docnos, subtopics, judgment groups: every id a reader turns into a column, which
    numpy makes as wide as its longest value), or None."""
    for what, value in named:
        if len(value) > MAX_ID_BYTES:
            return (f"{what} of {len(value):,} bytes: irbench takes topic ids and docnos of "
                    f"at most {MAX_ID_BYTES:,} bytes")
    return None


def relevance_of(text: bytes) -> tuple[int, str | None]:
    """(the relevance level written ``text``, None), or (0, why it is not one): an integer
    in trec_eval's range (a C long); ``1_0`` and ``1.0`` are not integers here."""
    if not _INT_RE.match(text):
        return 0, f"relevance '{shown(text)}' is not an integer"
    digits = text.lstrip(b"+-").lstrip(b"0")
    rel = int(text) if len(digits) <= 20 else None  # int() refuses over 4,300 digits
    if rel is None or not MIN_RELEVANCE <= rel <= MAX_RELEVANCE:
        return 0, (f"relevance {shown(text) if rel is None else rel} is out of the integer "
                   f"range ({MIN_RELEVANCE} to {MAX_RELEVANCE})")
    return rel, None


def _run_pieces(source: Source) -> tuple[str, Iterator[bytes]]:
    """(display path, the source's bytes in whole-line pieces of about ``CHUNK`` bytes).

    A plain file is read a piece at a time, so it is never in memory whole; gzip files,
    stdin and file objects are read whole first (see :func:`read_source`).
    """
    if isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-" \
            and not is_url(source):
        path = os.fspath(source)
        return path, _file_pieces(path)
    path, data = read_source(source)
    return path, _cut(data)


def _file_pieces(path: str) -> Iterator[bytes]:
    """Whole-line pieces of the file at ``path``; a gzip file is decompressed whole."""
    try:
        with open(path, "rb") as fh:
            piece = fh.read(CHUNK)
            if piece[:2] == GZIP_MAGIC or path.endswith(".gz"):
                yield from _cut(without_bom(gunzip_or_fail(path, piece + fh.read())))
                return
            piece = without_bom(piece)
            while piece:
                if not piece.endswith(b"\n"):
                    piece += fh.readline()  # finish the last line
                yield piece
                piece = fh.read(CHUNK)
    except FileNotFoundError:
        raise FormatError([f"{path}: no such file"]) from None
    except IsADirectoryError:
        raise FormatError([f"{path}: is a directory, not a file"]) from None
    except OSError as exc:
        raise FormatError([f"{path}: cannot read ({exc.strerror})"]) from None


def read_run(source: Source | Mapping | Iterable, name: str | None = None) -> Run:
    """Read a TREC run from a path, ``-`` (stdin), a file object, or in-memory data.

    In-memory data is ``{query_id: {doc_id: score}}`` (pytrec_eval's shape), an iterable of
    ``(query_id, doc_id, score)`` tuples (or named tuples with those fields, as ir_measures'
    ``ScoredDoc``), or a data frame (pandas, Polars, Arrow) with columns ``query_id``,
    ``doc_id`` and ``score`` (others, e.g. ``iteration``, are ignored). Files are parsed in
    whole-line pieces: :func:`_run_columns` (vectorised) when the piece is regular, else line by
    line.
    """
    if isinstance(source, Mapping) or not is_source(source):
        return run_from_memory(source, name or "run")
    path, pieces = _run_pieces(source)
    return run_of_parts(path, [parse_run(pieces)], name)


@dataclass
class _RunPart:
    """Some consecutive whole lines of a run file, parsed; line numbers count from the part's
    first line as 1. ``nul_line``: where a NUL byte stopped parsing (None if none)."""

    columns: tuple[np.ndarray, ...] | None  # query_id, doc_id, score, line; None if no rows
    runid: bytes
    newlines: int
    problems: list[tuple[int, str]]
    more: int
    nul_line: int | None = None


def parse_run(pieces: Iterable[bytes]) -> _RunPart:
    """Parse whole-line pieces, each with :func:`_run_columns` or else line by line."""
    problems = Problems("")
    parts: list[tuple[np.ndarray, ...]] = []
    runid = b""
    line = 1
    for piece in pieces:
        nul = piece.find(b"\x00")
        if nul >= 0:
            nul_line = line + piece.count(b"\n", 0, nul)
            return _RunPart(None, b"", line - 1, [], 0, nul_line)
        fast = run_columns(piece, line)
        if fast is not None:
            q, d, s, ln, tag, newlines = fast
        else:
            q, d, s, ln, tag = _parse_run_lines(piece, line, problems)
            q, d = bytes_array(q), bytes_array(d)
            s, ln = np.array(s, dtype=np.float64), np.array(ln, dtype=np.int64)
            newlines = piece.count(b"\n")
        line += newlines
        if len(s):
            parts.append((q, d, s, ln))
            runid = tag
    columns = tuple(concat(list(c)) for c in zip(*parts)) if parts else None
    return _RunPart(columns, runid, line - 1, problems.items, problems.more)


def run_of_parts(path: str, parts: list[_RunPart], name: str | None) -> Run:
    """The run made of consecutive parts of the file at ``path``, or its problems raised.

    A NUL byte is an error on its own (earlier problems are dropped, as when the whole file
    was checked before parsing); at most 20 problems are listed, then a count.
    """
    joined = PartJoiner(path)
    columns = [c for c in map(joined.add, parts) if c is not None]
    joined.problems.raise_if_any()
    if not columns:
        raise FormatError([f"{path}:1: empty run: no result lines"])
    q, d, s, ln = (concat(list(c)) for c in zip(*columns))
    return Run(name=name or default_name(path), runid=display(joined.runid), query_id=q,
               doc_id=d, score=s, line=ln, path=path)


class PartJoiner:
    """Consecutive parts of one run file (:func:`parse_run` of its pieces) joined as one read
    of the file: :meth:`add` gives a part's columns with the file's line numbers and collects
    its problems (a NUL byte raises at once); ``runid`` is the tag of the last result line."""

    def __init__(self, path: str):
        self.path, self.problems = path, Problems(path)
        self.offset, self.runid = 0, b""

    def add(self, part: _RunPart):
        if part.nul_line is not None:
            raise FormatError([f"{self.path}:{self.offset + part.nul_line}: not a text file "
                               "(NUL byte)"])
        for line, reason in part.problems:
            self.problems.add(self.offset + line, reason)
        self.problems.more += part.more
        columns = None
        if part.columns is not None:
            q, d, s, ln = part.columns
            columns = (q, d, s, ln + self.offset if self.offset else ln)
            self.runid = part.runid
        self.offset += part.newlines
        return columns


def _parse_run_lines(piece: bytes, first_line: int, problems: Problems):
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
        if len(fields) >= 2 * 6:  # trec_eval reads the first 6 and drops the rest
            cr = b"\r" in raw.rstrip(b"\r")
            problems.add(line, f"{len(fields):,} fields on one line: " + (
                "its lines end in a bare carriage return (CR); end them with newlines" if cr
                else "several results run together? (a result line has 6 fields)"))
            continue
        long = _long_id(fields[0], fields[2])
        if long:
            problems.add(line, long)
            continue
        text = fields[4]
        score = float(text) if FLOAT_RE.match(text) else math.nan
        if not math.isfinite(score):
            problems.add(line, f"score '{shown(text)}' is not a finite number")
            continue
        q.append(fields[0])
        d.append(fields[2])
        s.append(score)
        ln.append(line)
        tag = fields[5]
    return q, d, s, ln, tag


def read_qrels(source: Source | Mapping | Iterable, name: str | None = None) -> Qrels:
    """Read TREC qrels from a path, ``-`` (stdin), a file object, or in-memory data.

    In-memory data is ``{query_id: {doc_id: relevance}}``, ``(query_id, doc_id, relevance)``
    tuples, named tuples with those fields (ir_measures' ``Qrel``, ir_datasets' ``TrecQrel``,
    whose fourth field ``iteration`` is ignored), or a data frame (pandas, Polars, Arrow) with
    columns ``query_id``, ``doc_id`` and ``relevance``. Duplicate ``(query_id, doc_id)`` rows are
    an error.
    """
    if isinstance(source, Mapping) or not is_source(source):
        return qrels_from_memory(source, name or "qrels")
    path, data = read_source(source)
    problems = Problems(path)
    qids: list[np.ndarray] = []
    docs: list[np.ndarray] = []
    rels: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    for first_line, piece in _chunks(data):
        fast = qrels_columns(piece, first_line)
        if fast is not None:
            for column, part in zip((qids, docs, rels, lines), fast):
                column.append(part)
            continue
        q, d, r, ln = _parse_qrels_lines(piece, first_line, problems)
        if q:
            qids.append(bytes_array(q))
            docs.append(bytes_array(d))
            rels.append(np.array(r, dtype=np.int64))
            lines.append(np.array(ln, dtype=np.int64))
    problems.raise_if_any()
    if not any(len(r) for r in rels):
        raise FormatError([f"{path}:1: empty qrels: no judgment lines"])
    qrels = Qrels(
        name=name or default_name(path),
        query_id=concat(qids),
        doc_id=concat(docs),
        relevance=np.concatenate(rels),
        line=np.concatenate(lines),
        path=path,
    )
    check_qrels_duplicates(qrels)
    return qrels


def _parse_qrels_lines(piece: bytes, first_line: int, problems: Problems):
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
        long = _long_id(fields[0], fields[2])
        if long:
            problems.add(line, long)
            continue
        rel, reason = relevance_of(fields[3])
        if reason:
            problems.add(line, reason)
            continue
        q.append(fields[0])
        d.append(fields[2])
        r.append(rel)
        ln.append(line)
    return q, d, r, ln


def concat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype="S1")
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts)  # bytes arrays widen to the widest part


def default_name(path: str) -> str:
    """A run's name when none is given: its file's name without ``.gz``."""
    base = os.path.basename(path)
    for suffix in (".gz",):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def read_zscores(source: Source) -> dict[tuple[str, str], tuple[float, float]]:
    """Read a trec_eval ``-Z`` file: ``qid measure mean std_dev`` lines ->
    {(qid, measure): (mean, sd)}."""
    path, data = read_source(source)
    problems = Problems(path)
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            problems.add(line_no,
                         f"expected 4 columns (qid measure mean std_dev), got {len(fields)}")
            continue
        if not (FLOAT_RE.match(fields[2]) and FLOAT_RE.match(fields[3])):
            problems.add(line_no, "mean and std_dev must be numbers")
            continue
        table[(display(fields[0]), display(fields[1]))] = (float(fields[2]), float(fields[3]))
    problems.raise_if_any()
    return table


RUN_SUFFIXES = (".gz", ".txt", ".run", ".trec", ".res", ".tsv", ".jsonl")


def run_name(path: str) -> str:
    """A system name from a run file name: without ``.gz`` and a run-file extension, and
    without TREC's ``input.`` prefix (``input.acsys8aln.gz`` -> ``acsys8aln``)."""
    name = os.path.basename(path)
    for suffix in RUN_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    return name


def run_tag(path: str) -> str:
    """The tag (sixth column) of the first result line of a run file (or object at a URL),
    or ''. The file is read as a stream until that line (gzip members one after another),
    so a URL's object is fetched only as far as that: at most 1,000 lines of 1 MiB."""
    try:
        with open_binary(path) as raw:
            head = raw.read(2)
            stream = io.BufferedReader(Prefixed(head, raw))
            fh: Any = (gzip.GzipFile(fileobj=stream) if head == GZIP_MAGIC
                       or path.endswith(".gz") else stream)
            for _ in range(1000):
                line = fh.readline(1 << 20)
                if not line:
                    break
                fields = line.split()
                if len(fields) >= 6 and not fields[0].startswith(b"#"):
                    return fields[5].decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):  # unreadable or not gzip: no tag
        return ""
    return ""
