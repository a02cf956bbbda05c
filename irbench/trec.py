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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, Protocol, TypeGuard, Union

import numpy as np

from .errors import DuplicateError, FormatError, OutputError


class Readable(Protocol):
    """Anything with a ``read()`` of the whole content (a file object, or a file already in
    memory with a ``name``)."""

    def read(self) -> bytes | str: ...


Source = Union[str, "os.PathLike[str]", IO[bytes], IO[str], Readable]


def _is_source(source: object) -> TypeGuard[Source]:
    """True for a path or something readable; False for in-memory data."""
    return isinstance(source, (str, os.PathLike)) or hasattr(source, "read")

CHUNK = 1 << 22  # bytes per parsing piece: bounds memory, keeps columns in cache
_MAX_PROBLEMS = 20
FLOAT_RE = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INT_RE = re.compile(rb"[+-]?\d+\Z")
MIN_RELEVANCE, MAX_RELEVANCE = -(2**31), 2**31 - 1  # trec_eval keeps levels in a C long
_WS = b" \t\n\r\x0b\x0c"
GZIP_MAGIC = b"\x1f\x8b"
MAX_ID_BYTES = 1024  # a topic id or docno longer than this is an error (columns are as wide
                     # as their longest value: one huge docno would widen every row)
GUNZIP_RATIO, GUNZIP_FLOOR = 100, 1 << 28  # a gzip file may expand to max(100x, 256 MiB)
UTF8_BOM = b"\xef\xbb\xbf"  # dropped from the start of a file (trec_eval keeps it in the first id)


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
        self.items: list[tuple[int, str]] = []  # (line, reason) of the first 20
        self.more = 0

    def add(self, line: int, reason: str) -> None:
        if len(self.items) < _MAX_PROBLEMS:
            self.items.append((line, reason))
        else:
            self.more += 1

    @property
    def shown(self) -> list[str]:
        return [f"{self.path}:{line}: {reason}" for line, reason in self.items]

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self, error: type[FormatError] = FormatError) -> None:
        if self.items:
            raise error(self.shown, self.more)


def display(text: bytes) -> str:
    return text.decode("utf-8", "backslashreplace")


SHOWN_BYTES = 64  # a field quoted in a message is cut here: it may be megabytes long


def shown(text: bytes) -> str:
    """``text`` for a message: decoded, its first SHOWN_BYTES bytes and its length if longer."""
    if len(text) <= SHOWN_BYTES:
        return display(text)
    return f"{display(text[:SHOWN_BYTES])}... ({len(text):,} bytes)"


def read_source(source: Source) -> tuple[str, bytes]:
    """Return (display path, raw bytes), decompressing gzip."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-":
            data = sys.stdin.buffer.read()
            path = "<stdin>"
        elif is_url(path):  # read whole through fsspec
            try:
                data = read_url(path)
            except OSError as exc:
                raise FormatError([f"{path}: cannot read ({exc.strerror})"]) from None
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
    if data[:2] == GZIP_MAGIC or path.endswith(".gz"):
        data = _gunzip(path, data)
    data = without_bom(data)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FormatError([f"{path}:{line}: not a text file (NUL byte)"])
    return path, data


def without_bom(data: bytes) -> bytes:
    """``data`` without a UTF-8 byte-order mark at its start. trec_eval reads the mark as part
    of the first topic id, so that topic loses a judgment or a document (a documented
    difference: see docs/trec_eval.md)."""
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


def gunzip(data: bytes) -> bytes:
    """``data`` decompressed (every gzip member), at most ``max(GUNZIP_RATIO x its size,
    GUNZIP_FLOOR)`` bytes: ValueError with the reason for a file that is not gzip or
    expands further (a gzip bomb), found before more than that limit is held in memory."""
    limit = max(GUNZIP_RATIO * len(data), GUNZIP_FLOOR)
    out: list[bytes] = []
    size = 0
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = inflater.decompress(rest, limit - size + 1)
            size += len(chunk)
            out.append(chunk)
            while inflater.unconsumed_tail and size <= limit:
                chunk = inflater.decompress(inflater.unconsumed_tail, limit - size + 1)
                size += len(chunk)
                out.append(chunk)
            if size > limit:
                raise ValueError(f"gzip file expands to more than {limit:,} bytes (irbench "
                                 f"allows {GUNZIP_RATIO} times the compressed size, at least "
                                 f"{GUNZIP_FLOOR >> 20} MiB)")
            if not inflater.eof:
                raise ValueError("not a valid gzip file (Compressed file ended before the "
                                 "end-of-stream marker was reached)")
            rest = inflater.unused_data.lstrip(b"\x00")  # next member (or padding)
    except zlib.error as exc:
        raise ValueError(f"not a valid gzip file ({exc})") from None
    return b"".join(out)


def _gunzip(path: str, data: bytes) -> bytes:
    try:
        return gunzip(data)
    except ValueError as exc:
        raise FormatError([f"{path}:1: {exc}"]) from None


def _chunks(data: bytes) -> Iterable[tuple[int, bytes]]:
    """Split ``data`` at line ends into pieces of about ``CHUNK`` bytes: (first line no, piece)."""
    start, line = 0, 1
    n = len(data)
    while start < n:
        end = min(start + CHUNK, n)
        if end < n:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or n)
        piece = data[start:end]
        yield line, piece
        line += piece.count(b"\n")
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


def _to_int(tokens: list[bytes]) -> np.ndarray | None:
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.array(tokens).astype(np.int64)
    except (ValueError, OverflowError):
        return None


def _bytes_array(tokens: list[bytes]) -> np.ndarray:
    return np.array(tokens, dtype=np.bytes_) if tokens else np.zeros(0, dtype="S1")


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
                yield from _cut(without_bom(_gunzip(path, piece + fh.read())))
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


def _cut(data: bytes) -> Iterator[bytes]:
    """``data`` in consecutive whole-line pieces of about ``CHUNK`` bytes."""
    for _, piece in _chunks(data):
        yield piece


def read_run(source: Source | Mapping | Iterable, name: str | None = None) -> Run:
    """Read a TREC run from a path, ``-`` (stdin), a file object, or in-memory data.

    In-memory data is ``{query_id: {doc_id: score}}`` (pytrec_eval's shape), an iterable of
    ``(query_id, doc_id, score)`` tuples (or named tuples with those fields, as ir_measures'
    ``ScoredDoc``), or a data frame (pandas, Polars, Arrow) with columns ``query_id``,
    ``doc_id`` and ``score`` (others, e.g. ``iteration``, are ignored). Files are parsed in
    whole-line pieces: :func:`_run_columns` (vectorised) when the piece is regular, else line by
    line.
    """
    if isinstance(source, Mapping) or not _is_source(source):
        return _run_from_memory(source, name or "run")
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
    problems = _Problems("")
    parts: list[tuple[np.ndarray, ...]] = []
    runid = b""
    line = 1
    for piece in pieces:
        nul = piece.find(b"\x00")
        if nul >= 0:
            nul_line = line + piece.count(b"\n", 0, nul)
            return _RunPart(None, b"", line - 1, [], 0, nul_line)
        fast = _run_columns(piece, line)
        if fast is not None:
            q, d, s, ln, tag, newlines = fast
        else:
            q, d, s, ln, tag = _parse_run_lines(piece, line, problems)
            q, d = _bytes_array(q), _bytes_array(d)
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
    return Run(name=name or _default_name(path), runid=display(joined.runid), query_id=q,
               doc_id=d, score=s, line=ln, path=path)


class PartJoiner:
    """Consecutive parts of one run file (:func:`parse_run` of its pieces) joined as one read
    of the file: :meth:`add` gives a part's columns with the file's line numbers and collects
    its problems (a NUL byte raises at once); ``runid`` is the tag of the last result line."""

    def __init__(self, path: str):
        self.path, self.problems = path, _Problems(path)
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


def _run_columns(piece: bytes, first_line: int):
    """Vectorised parse of a piece: (qid, docno, score, line, tag, line ends), or None.

    None sends the piece to the line-by-line path: a line with other than 6 fields, a comment
    line, or a score that is not a plain finite decimal. Blank lines are skipped here.
    """
    buf = np.frombuffer(piece, dtype=np.uint8)
    starts, ends, newlines = _tokens(buf)
    if len(starts) % 6:
        return None
    rows = len(starts) // 6
    if rows == 0:
        empty = _bytes_array([])
        return empty, empty, np.zeros(0), np.zeros(0, np.int64), b"", len(newlines)
    line = _row_lines(starts, ends, newlines)
    if line is None or np.any(buf[starts[::6]] == 35):  # irregular, or a comment line
        return None
    score = _scores(buf, starts[4::6], ends[4::6])
    if score is None:
        return None
    if max(int((ends[0::6] - starts[0::6]).max()), int((ends[2::6] - starts[2::6]).max())) > (
            MAX_ID_BYTES):
        return None  # the line-by-line path names the long ids
    qid = _as_strings(_token_words(buf, starts[0::6], ends[0::6]), ends[0::6] - starts[0::6])
    doc = _as_strings(_token_words(buf, starts[2::6], ends[2::6]), ends[2::6] - starts[2::6])
    line += first_line
    return qid, doc, score, line, piece[starts[-1]:ends[-1]], len(newlines)


def _tokens(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whitespace-separated tokens of ``buf`` (the C isspace set): (starts, ends, line ends)."""
    padded = np.empty(len(buf) + 2, dtype=np.uint8)  # a space before and after: every token
    padded[0] = padded[-1] = 32                       # lies between two whitespace bytes
    padded[1:-1] = buf
    at = np.flatnonzero(padded <= 32)  # = position in buf + 1
    byte = padded[at]
    space = (byte == 32) | ((byte - np.uint8(9)) < np.uint8(5))
    if not space.all():  # other control bytes are token data
        at, byte = at[space], byte[space]
    newlines = at[byte == 10] - 1
    token_after = at[1:] - at[:-1] > 1  # a token between whitespace bytes i and i + 1
    if token_after.all():  # single separators: every gap holds one whitespace byte
        return at[:-1], at[1:] - 1, newlines
    k = np.flatnonzero(token_after)
    return at[k], at[k + 1] - 1, newlines


def _row_lines(starts: np.ndarray, ends: np.ndarray, newlines: np.ndarray) -> np.ndarray | None:
    """0-based line (within the piece) of each 6-token row, or None if a line is not a row."""
    rows = len(starts) // 6
    n = len(newlines)
    if n in (rows, rows - 1):  # the usual case: one line end after each row, no blank lines
        after_row = newlines >= ends[5::6][:n]
        before_next = newlines[: rows - 1] < starts[6::6]
        if after_row.all() and before_next.all():
            return np.arange(rows, dtype=np.int64)
    gap = np.searchsorted(starts, newlines)  # index of the first token after each line end
    if np.any(gap % 6):  # a line end inside a row: some line has other than 6 fields
        return None
    newlines_before = np.bincount(gap // 6, minlength=rows + 1)
    if not np.all(newlines_before[1:rows]):  # two rows on one line
        return None
    return np.cumsum(newlines_before[:rows])


def _scores(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The score tokens as float64 (numpy's cast, correctly rounded), or None if one is not a
    plain finite decimal. Each distinct string is converted once per stretch of repeats."""
    words = _token_words(buf, starts, ends)
    text = words.view(np.uint8)
    # beyond '9' only the exponent letters; inf, nan, 1_0 and the like go line by line
    if np.any((text > 57) & (text != 69) & (text != 101)):
        return None
    strings = _as_strings(words, ends - starts)
    new = np.ones(len(strings), dtype=bool)
    np.not_equal(strings[1:], strings[:-1], out=new[1:])
    first = np.flatnonzero(new)
    try:
        values = strings[first].astype(np.float64)
    except ValueError:
        return None
    if not np.isfinite(values).all():
        return None
    if len(first) == len(strings):
        return values
    return np.repeat(values, np.diff(np.append(first, len(strings))))


_BYTE_MASKS = np.array([(1 << (8 * b)) - 1 for b in range(9)], dtype="<u8")


def _token_words(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The tokens ``buf[starts[i]:ends[i]]`` as rows of little-endian uint64 words, zero-padded.

    Each word is one unaligned 8-byte load at a byte offset; ``starts`` must be increasing.
    """
    lens = ends - starts
    nwords = max(1, -(-int(lens.max()) // 8)) if len(lens) else 1
    span = 8 * nwords
    n = len(buf)
    out = np.empty((len(starts), nwords), dtype="<u8")
    fit = int(np.searchsorted(starts, n - span, side="right"))
    if fit:
        loads = np.ndarray((n - 7,), dtype="<u8", buffer=buf, strides=(1,))
        for j in range(nwords):
            out[:fit, j] = loads[starts[:fit] + 8 * j]
    if fit < len(starts):  # tokens too near the end for whole loads: pad a copy of the tail
        base = int(starts[fit])
        tail = np.zeros(n - base + span, dtype=np.uint8)
        tail[: n - base] = buf[base:]
        loads = np.ndarray((len(tail) - 7,), dtype="<u8", buffer=tail, strides=(1,))
        for j in range(nwords):
            out[fit:, j] = loads[starts[fit:] - base + 8 * j]
    out &= _BYTE_MASKS[np.clip(lens[:, None] - 8 * np.arange(nwords), 0, 8)]
    return out


def _as_strings(words: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Rows of zero-padded words as a numpy bytes array as wide as the longest token."""
    width = max(1, int(lens.max()))
    matrix = words.view(np.uint8)
    if width < matrix.shape[1]:
        matrix = np.ascontiguousarray(matrix[:, :width])
    return matrix.view(f"S{width}").ravel()


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
    if isinstance(source, Mapping) or not _is_source(source):
        return _qrels_from_memory(source, name or "qrels")
    path, data = read_source(source)
    problems = _Problems(path)
    qids, docs, rels, lines = [], [], [], []
    for first_line, piece in _chunks(data):
        content = None if b"_" in piece or longest_token(piece) > MAX_ID_BYTES else (
            regular_lines(piece, 4, hash_anywhere=False))
        if content is not None:
            tokens = piece.split()
            values = _to_int(tokens[3::4])
            if values is not None and len(values) and (
                    values.min() < MIN_RELEVANCE or values.max() > MAX_RELEVANCE):
                values = None  # the line-by-line path names each level out of range
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
        query_id=concat(qids),
        doc_id=concat(docs),
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
            f"duplicate judgment of docno '{display(d[i])}' for topic '{display(q[i])}'"
            f" (first at line {int(first_line[o])})",
        )
    problems.raise_if_any(DuplicateError)


def concat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype="S1")
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts)  # bytes arrays widen to the widest part


def _default_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in (".gz",):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


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


# ---- data frames: pandas, Polars, Arrow -----------------------------------------------------
# Columns named as ir_measures and ranx name them; one numpy conversion per column, no row loop
# (except for text ids that are not ASCII, encoded by numpy per element).

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
    return _as_strings(_token_words(buf, starts, ends), ends - starts)


def _frame_ids(column, mask: np.ndarray, what: str, problems: _Problems) -> np.ndarray:
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
    problems = _Problems(f"<{name}>")
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


def _run_from_memory(data, name: str) -> Run:
    if is_frame(data):
        query_id, doc_id, score = _from_frame(data, "run", name)
        return Run(name=name, runid=name, query_id=query_id, doc_id=doc_id, score=score,
                   line=np.arange(1, len(score) + 1, dtype=np.int64))
    rows = _rows(data, "score")
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
    if is_frame(data):
        query_id, doc_id, relevance = _from_frame(data, "qrels", name)
        qrels = Qrels(name=name, query_id=query_id, doc_id=doc_id,
                      relevance=relevance.astype(np.int64),
                      line=np.arange(1, len(relevance) + 1, dtype=np.int64))
        _check_qrels_duplicates(qrels)
        return qrels
    rows = _rows(data, "relevance")
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
    """Read a trec_eval ``-Z`` file: ``qid measure mean std_dev`` lines ->
    {(qid, measure): (mean, sd)}."""
    path, data = read_source(source)
    problems = _Problems(path)
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


# ---- naming runs -------------------------------------------------------------------------


RUN_SUFFIXES = (".gz", ".txt", ".run", ".trec", ".res", ".tsv")


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
    """The tag (sixth column) of the first result line of a run file (or URL), or ''."""
    import io

    opener: Callable[..., Any] = gzip.open if path.endswith(".gz") else open
    source: str | io.BytesIO = path
    try:
        if is_url(path):
            data = io.BytesIO(read_url(path))
            opener, source = (gzip.open if data.getvalue()[:2] == GZIP_MAGIC else
                              (lambda f, mode: f)), data
        with opener(source, "rb") as fh:
            for _ in range(1000):
                line = fh.readline()
                if not line:
                    break
                fields = line.split()
                if len(fields) >= 6 and not fields[0].startswith(b"#"):
                    return fields[5].decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):  # unreadable or not gzip: no tag
        return ""
    return ""


# ---- inputs by URL (fsspec) ----------------------------------------------------------------

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: object) -> bool:
    """Whether ``path`` is a URL (``s3://``, ``gs://``, ``https://``, ``file://`` ...) read
    through fsspec rather than a local path."""
    return isinstance(path, str) and _URL_RE.match(path) is not None


def _fsspec(url: str):
    """(file system, path) of ``url``; a scheme without its package is an OSError naming it."""
    try:
        import fsspec
    except ModuleNotFoundError:
        raise OSError(0, "URLs need the cloud extra: pip install 'irbench[cloud]'") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        scheme = url.split("://", 1)[0]
        raise OSError(0, f"no fsspec file system for {scheme}:// ({exc}); for s3:// pip "
                      "install 'irbench[cloud]'") from None


def _url_error(url: str, exc: BaseException) -> OSError:
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(2, "no such object", url)
    if isinstance(exc, PermissionError):
        return PermissionError(13, "permission denied", url)
    if isinstance(exc, OSError) and exc.strerror:
        return exc
    return OSError(5, f"{type(exc).__name__}: {str(exc)[:300]}", url)


def url_stat(url: str) -> tuple[int, int]:
    """(size, a version token) of the object at ``url``: the token is a hash of its ETag or
    modification time (0 when the store reports neither: then it is always read again)."""
    fs, path = _fsspec(url)
    try:
        info = fs.info(path)
    except Exception as exc:  # each file system raises its own errors
        raise _url_error(url, exc) from None
    if info.get("type") == "directory":
        raise IsADirectoryError(21, "a folder, not a file", url)
    version = next((str(info[k]) for k in ("ETag", "etag", "VersionId", "LastModified",
                                           "mtime", "last_modified", "updated", "created")
                    if info.get(k) not in (None, "")), "")
    token = int.from_bytes(_digest(version.encode())[:7], "big") if version else 0
    return int(info.get("size") or 0), token


def _digest(data: bytes) -> bytes:
    import hashlib

    return hashlib.sha256(data).digest()


def read_url(url: str) -> bytes:
    """The bytes of the object at ``url`` (read once, whole)."""
    fs, path = _fsspec(url)
    try:
        with fs.open(path, "rb") as fh:
            return fh.read()
    except Exception as exc:
        raise _url_error(url, exc) from None


def glob_url(pattern: str) -> list[str]:
    """The URLs an fsspec glob pattern matches (``s3://bucket/runs/*.txt``), sorted."""
    fs, path = _fsspec(pattern)
    try:
        found = fs.glob(path, detail=True)
    except Exception as exc:
        raise _url_error(pattern, exc) from None
    return sorted(fs.unstrip_protocol(p) for p, info in found.items()
                  if info.get("type") != "directory")
