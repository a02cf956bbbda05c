"""What every reader shares: the sources a reader takes, the Run and Qrels columns, ids as
they are shown in messages, and the collected problems of a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import IO, NamedTuple, Protocol, TypeGuard, Union

import numpy as np

from ..arrays import block_starts, pair_order
from ..errors import DuplicateError, FormatError


class Readable(Protocol):
    """Anything with a ``read()`` of the whole content (a file object, or a file already in
    memory with a ``name``)."""

    def read(self) -> bytes | str: ...


class Loaded(NamedTuple):
    """A file already read: its path (as messages name it) and its bytes, as they are on
    disk (gzip is decompressed by the reader)."""

    name: str
    data: bytes


Source = Union[str, "os.PathLike[str]", Loaded, IO[bytes], IO[str], Readable]


def is_source(source: object) -> TypeGuard[Source]:
    """True for a path, a :class:`Loaded` file or something readable; False for in-memory
    data."""
    return isinstance(source, (str, os.PathLike, Loaded)) or hasattr(source, "read")


_MAX_PROBLEMS = 20


MIN_RELEVANCE, MAX_RELEVANCE = -(2**31), 2**31 - 1  # trec_eval keeps levels in a C long


_WS = b" \t\n\r\x0b\x0c"


MAX_ID_BYTES = 1024  # a topic id or docno longer than this is an error (columns are as wide
                     # as their longest value: one huge docno would widen every row)


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

    @cached_property
    def topic_starts(self) -> np.ndarray:
        """The first row of each block of rows of one topic (ranking and the run's topics
        both need them)."""
        return block_starts(self.query_id) if len(self.query_id) else np.zeros(0, np.int64)


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


class Problems:
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


def bytes_array(tokens: list[bytes]) -> np.ndarray:
    return np.array(tokens, dtype=np.bytes_) if tokens else np.zeros(0, dtype="S1")


_BYTE_MASKS = np.array([(1 << (8 * b)) - 1 for b in range(9)], dtype="<u8")


def token_words(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
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
    for j in range(nwords):  # column by column: no (rows, words) mask beside ``out``
        out[:, j] &= _BYTE_MASKS[np.clip(lens - 8 * j, 0, 8)]
    return out


_U = np.uint64
_ZEROS = _U(0x3030303030303030)  # eight ASCII '0'
_POW10_INT = np.array([10 ** k for k in range(17)], dtype=np.uint64)
_POW10 = np.array([float(10 ** k) for k in range(17)])  # exact: 5**16 < 2**53
_EXACT = 1 << 53  # integers up to here are exact in a float64


def _eight_digits(w: np.ndarray) -> np.ndarray:
    """The value of eight ASCII digits per uint64 (first character in the lowest byte)."""
    w = w - _ZEROS
    w = (w * _U(10) + (w >> _U(8))) & _U(0x00FF00FF00FF00FF)
    w = (w * _U(100) + (w >> _U(16))) & _U(0x0000FFFF0000FFFF)
    return (w * _U(10000) + (w >> _U(32))) & _U(0xFFFFFFFF)


def _all_digits(w: np.ndarray) -> np.ndarray:
    """Whether all eight bytes of each uint64 are ASCII digits."""
    high = _U(0xF0F0F0F0F0F0F0F0)
    return ((w & high) == _ZEROS) & (((w + _U(0x0606060606060606)) & high) == _ZEROS)


def plain_decimals(words: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, done) of tokens given as :func:`token_words` rows: a token of at most 16
    bytes of the form ``[+-]digits[.digits]`` with at most 15 significant digits is its
    digits as an integer divided by its power of ten, one correctly rounded division of two
    exact float64 values (Clinger's fast path): exactly the value a correctly rounded
    conversion (``strtod``, numpy's cast) gives. ``done`` is False for every other token
    (exponents, more digits, anything else): its value is left to such a conversion."""
    rows = len(lens)
    values = np.zeros(rows)
    if rows == 0:
        return values, np.zeros(0, dtype=bool)
    w0 = words[:, 0].copy()
    w1 = words[:, 1].copy() if words.shape[1] > 1 else np.zeros(rows, dtype=np.uint64)
    first = w0 & _U(0xFF)
    negative = first == 45  # '-'
    signed = negative | (first == 43)  # '+': both read as a leading '0'
    w0[signed] = (w0[signed] & ~_U(0xFF)) | _U(0x30)
    point = np.full(rows, -1, dtype=np.int64)
    for j, w in enumerate((w0, w1)):  # the first '.', read as a '0' (taken out below)
        x = w ^ _U(0x2E2E2E2E2E2E2E2E)
        zero = (x - _U(0x0101010101010101)) & ~x & _U(0x8080808080808080)
        found = (zero != 0) & (point < 0)
        lowest = zero[found] & (~zero[found] + _U(1))  # its lowest set bit: exact
        at = (np.log2(lowest.astype(np.float64)).astype(np.int64) - 7) // 8
        point[found] = at + 8 * j
        w[found] ^= _U(0x2E ^ 0x30) << (at.astype(np.uint64) * _U(8))
    fill = [~_BYTE_MASKS[np.clip(lens - 8 * j, 0, 8)] & _ZEROS for j in (0, 1)]
    w0 |= fill[0]  # bytes after the token read as '0's: the integer times 10**(16 - len)
    w1 |= fill[1]
    done = (lens <= 16) & _all_digits(w0) & _all_digits(w1)
    done &= lens - signed - (point >= 0) >= 1  # a digit at least
    scaled = _eight_digits(w0) * _U(10 ** 8) + _eight_digits(w1)
    whole = scaled // _POW10_INT[np.clip(16 - lens, 0, 16)]
    after = np.where(done & (point >= 0), lens - 1 - point, 0)
    tail = whole % _POW10_INT[after]  # the digits after the point, and the '0' before them
    mantissa = np.where(point >= 0, (whole - tail) // _U(10) + tail, whole)
    done &= mantissa <= _U(_EXACT)
    values[done] = mantissa[done].astype(np.float64) / _POW10[after[done]]
    values[negative & done] *= -1.0  # -0 stays -0.0, as strtod reads it
    return values, done


def as_strings(words: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Rows of zero-padded words as a numpy bytes array as wide as the longest token."""
    width = max(1, int(lens.max()))
    matrix = words.view(np.uint8)
    if width < matrix.shape[1]:
        matrix = np.ascontiguousarray(matrix[:, :width])
    return matrix.view(f"S{width}").ravel()


def check_qrels_duplicates(qrels: Qrels) -> None:
    in_order = len(qrels.line) < 2 or bool(np.all(qrels.line[1:] > qrels.line[:-1]))
    order = (pair_order(qrels.query_id, qrels.doc_id) if in_order  # ties in line order
             else np.lexsort((qrels.line, qrels.doc_id, qrels.query_id)))
    q, d = qrels.query_id[order], qrels.doc_id[order]
    dup = np.flatnonzero((q[1:] == q[:-1]) & (d[1:] == d[:-1])) + 1
    if dup.size == 0:
        return
    problems = Problems(qrels.path or qrels.name)
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
