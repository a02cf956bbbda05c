"""Format checks of a run file, line by line but on whole numpy arrays.

The file is read whole (gzip is decompressed, as irbench's readers do) and scanned in pieces
of about 4 MB that end at a line end. Each piece is split into whitespace-separated tokens
(the C ``isspace`` set, as trec_eval and ``bytes.split``) with array operations; lines with
exactly six fields become columns, and the checks (columns, Q0, rank, score, tag, encoding,
line ends) are comparisons on those columns. Python loops run only over problems, and only
until enough are kept (see :class:`~.problems.Collector`).

Comment lines (first field starting with ``#``) and blank lines are skipped, as trec_eval does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..trec import gunzip
from .problems import Collector

PIECE = 1 << 22
MAX_FIELD = 256  # longer fields are an error (and would make the column arrays huge)
GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
FIELDS = "qid Q0 docno rank score tag"
_NAMES = FIELDS.split()

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True
_RANK_BYTES = np.zeros(256, dtype=bool)
_RANK_BYTES[list(b"0123456789+-")] = True
_RANK_BYTES[0] = True  # padding
_SCORE_BYTES = _RANK_BYTES.copy()
_SCORE_BYTES[list(b".eE")] = True


class Unreadable(Exception):
    """The file cannot be checked at all; the message says why (internal to this package)."""


@dataclass(frozen=True, eq=False)
class Columns:
    """The result lines (six fields) of a run file, as columns in file order.

    ``rank_ok``/``score_ok`` say where ``rank``/``score`` hold a valid value.
    """

    line: np.ndarray
    query_id: np.ndarray
    doc_id: np.ndarray
    rank: np.ndarray
    rank_ok: np.ndarray
    score: np.ndarray
    score_ok: np.ndarray
    run_tag: bytes
    lines: int  # lines in the file

    def __len__(self) -> int:
        return len(self.line)


def read_file(path: str) -> bytes:
    """The file's bytes, gunzipped when it starts with the gzip magic or ends in ``.gz``."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise Unreadable("no such file") from None
    except IsADirectoryError:
        raise Unreadable("is a directory, not a file") from None
    except OSError as exc:
        raise Unreadable(f"cannot read ({exc.strerror})") from None
    if data[:2] == GZIP_MAGIC or path.endswith(".gz"):
        try:
            data = gunzip(data)
        except ValueError as exc:
            raise Unreadable(str(exc)) from None
    return data


def scan(data: bytes, out: Collector) -> Columns:
    """Run the per-line format checks over ``data``; return its result lines as columns."""
    if data.startswith(BOM):
        out.add("encoding", 1, "UTF-8 byte order mark at the start of the file")
        data = b"   " + data[3:]  # keeps offsets; the BOM is not part of the first topic id
    scanner = _Scanner(out)
    start, line = 0, 1
    while start < len(data):
        end = min(start + PIECE, len(data))
        if end < len(data):
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or len(data))
        piece = data[start:end]
        scanner.piece(piece, line)
        line += piece.count(b"\n")
        start = end
    lines = line - 1 + (0 if not data or data.endswith(b"\n") else 1)
    return scanner.finish(lines)


class _Scanner:
    def __init__(self, out: Collector):
        self.out = out
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in
                                                   ("line", "qid", "doc", "rank", "rank_ok",
                                                    "score", "score_ok")}
        self.tag: bytes | None = None
        self.tag_line = 0
        # aggregated problems: (first line, count, example)
        self.crlf = [0, 0]
        self.lone_cr = [0, 0]
        self.q0: list[Any] = [0, 0, b""]  # the example: column 2 as written

    def piece(self, piece: bytes, first: int) -> None:
        buf = np.frombuffer(piece, dtype=np.uint8)
        newlines = np.flatnonzero(buf == 10)
        nlines = len(newlines) + (0 if piece.endswith(b"\n") else 1)
        starts_of_line = np.concatenate(([0], newlines + 1))[:nlines]
        ends_of_line = np.concatenate((newlines, [len(buf)]))[:nlines]
        self._line_ends(buf, newlines, first)
        if not piece.isascii():
            self._encoding(piece, buf, newlines, starts_of_line, ends_of_line, first)
        edges = np.diff(np.concatenate(([0], (~_WS[buf]).view(np.int8), [0])))
        starts = np.flatnonzero(edges == 1)
        ends = np.flatnonzero(edges == -1)
        token_line = np.searchsorted(newlines, starts)
        counts = np.bincount(token_line, minlength=nlines)
        offset = np.concatenate(([0], np.cumsum(counts)[:-1]))
        content = counts > 0
        content[content] = buf[starts[offset[content]]] != 35  # '#': a comment line
        bad = np.flatnonzero(content & (counts != 6))
        self.out.add_many("columns", bad + first, lambda i: (
            f"expected 6 columns ({FIELDS}), got {counts[bad[i]]}"))
        rows = np.flatnonzero(content & (counts == 6))
        if not len(rows):
            return
        tok = offset[rows][:, None] + np.arange(6)
        s, e = starts[tok], ends[tok]
        long_field = (e - s) > MAX_FIELD
        if long_field.any():
            where = np.flatnonzero(long_field.any(axis=1))
            column = long_field[where].argmax(axis=1)
            self.out.add_many("columns", rows[where] + first, lambda i: (
                f"column {column[i] + 1} ({_NAMES[column[i]]}) is "
                f"{e[where[i], column[i]] - s[where[i], column[i]]} bytes long "
                f"(at most {MAX_FIELD})"))
            keep = ~long_field.any(axis=1)
            rows, s, e = rows[keep], s[keep], e[keep]
            if not len(rows):
                return
        line = rows + first
        self._tag(buf, s[:, 5], e[:, 5], line)
        self._q0(buf, s[:, 1], e[:, 1], line)
        rank, rank_ok = self._numbers(buf, s[:, 3], e[:, 3], line, "rank", np.int64)
        score, score_ok = self._numbers(buf, s[:, 4], e[:, 4], line, "score", np.float64)
        parts = self.parts
        parts["line"].append(line)
        parts["qid"].append(_strings(buf, s[:, 0], e[:, 0]))
        parts["doc"].append(_strings(buf, s[:, 2], e[:, 2]))
        parts["rank"].append(rank)
        parts["rank_ok"].append(rank_ok)
        parts["score"].append(score)
        parts["score_ok"].append(score_ok)

    # -- whole-piece checks

    def _line_ends(self, buf, newlines, first: int) -> None:
        cr = np.flatnonzero(buf == 13)
        if not len(cr):
            return
        follows = np.zeros(len(cr), dtype=bool)
        inside = cr + 1 < len(buf)
        follows[inside] = buf[cr[inside] + 1] == 10
        for seen, where in ((self.crlf, cr[follows]), (self.lone_cr, cr[~follows])):
            if len(where):
                if not seen[1]:
                    seen[0] = first + int(np.searchsorted(newlines, where[0]))
                seen[1] += len(where)

    def _encoding(self, piece: bytes, buf, newlines, line_starts, line_ends, first) -> None:
        try:
            piece.decode("utf-8")
            return
        except UnicodeDecodeError:
            pass
        lines = np.unique(np.searchsorted(newlines, np.flatnonzero(buf >= 0x80)))
        bad, where = [], []
        for i in lines:  # only lines with non-ASCII bytes
            raw = piece[line_starts[i]:line_ends[i]]
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad.append(i)
                where.append((raw[exc.start], exc.start + 1))
        self.out.add_many("encoding", np.array(bad, dtype=np.int64) + first, lambda i: (
            f"not UTF-8 (byte 0x{where[i][0]:02x} at column {where[i][1]})"))

    # -- column checks

    def _tag(self, buf, s, e, line) -> None:
        tags = _strings(buf, s, e)
        if self.tag is None:
            self.tag = bytes(tags[0])
            self.tag_line = int(line[0])
        tag = self.tag
        other = np.flatnonzero(tags != tag)
        self.out.add_many("tag", line[other], lambda i: (
            f"run tag '{text_of(tags[other[i]])}' differs from '{text_of(tag)}' "
            f"(line {self.tag_line})"))

    def _q0(self, buf, s, e, line) -> None:
        if not self.out.on("q0"):
            return
        q0 = self.out.rules.q0.encode("utf-8")
        other = np.flatnonzero(_strings(buf, s, e) != q0)
        if len(other):
            if not self.q0[1]:
                self.q0 = [int(line[other[0]]), 0, buf[s[other[0]]:e[other[0]]].tobytes()]
            self.q0[1] += len(other)

    def _numbers(self, buf, s, e, line, name: str, dtype):
        """Parse a column; report bad values; return (values, ok)."""
        words = _matrix(buf, s, e)
        allowed = _RANK_BYTES if dtype is np.int64 else _SCORE_BYTES
        ok = allowed[words].all(axis=1) & (e > s)
        text = words.view(f"S{words.shape[1]}").ravel()
        values = np.zeros(len(text), dtype=dtype)
        good = np.flatnonzero(ok)
        parsed, parsed_ok = _convert(text[good], dtype)
        values[good] = parsed
        ok[good] = parsed_ok
        if dtype is np.float64:
            ok &= np.isfinite(values)
        bad = np.flatnonzero(~ok)
        what = "an integer" if dtype is np.int64 else "a finite number"
        self.out.add_many(name, line[bad], lambda i: (
            f"{name} '{text_of(text[bad[i]])}' is not {what}"))
        return values, ok

    def finish(self, lines: int) -> Columns:
        out = self.out
        if self.crlf[1]:
            out.add("line_endings", self.crlf[0], f"Windows line ends (CRLF) on "
                    f"{_lines(self.crlf[1])}, the first here; use LF")
        if self.lone_cr[1]:
            out.add("line_endings", self.lone_cr[0], f"carriage return (CR) without LF on "
                    f"{_lines(self.lone_cr[1])}, the first here")
        if self.q0[1]:
            n = self.q0[1] - 1
            more = f" (also on {n} more line{'' if n == 1 else 's'})" if n else ""
            out.add("q0", self.q0[0], f"column 2 is '{text_of(self.q0[2])}', "
                    f"not '{out.rules.q0}'{more}")
        p = self.parts
        return Columns(
            line=_cat(p["line"], np.int64), query_id=_cat(p["qid"], "S1"),
            doc_id=_cat(p["doc"], "S1"), rank=_cat(p["rank"], np.int64),
            rank_ok=_cat(p["rank_ok"], bool), score=_cat(p["score"], np.float64),
            score_ok=_cat(p["score_ok"], bool), run_tag=self.tag or b"", lines=lines)


# ---- helpers -------------------------------------------------------------------------------


def _matrix(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Tokens ``buf[s:e]`` as rows of a uint8 matrix, zero-padded to the longest."""
    lens = e - s
    width = max(1, int(lens.max())) if len(lens) else 1
    cols = np.arange(width)
    idx = s[:, None] + cols
    np.minimum(idx, len(buf) - 1, out=idx)
    words = buf[idx]
    words[cols >= lens[:, None]] = 0
    return words


def _strings(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Tokens ``buf[s:e]`` as a numpy bytes array."""
    words = _matrix(buf, s, e)
    return words.view(f"S{words.shape[1]}").ravel()


def _convert(text: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``text.astype(dtype)`` where possible: (values, ok). A failing slice is halved until
    the bad entries are found, so a few bad values cost a few small conversions."""
    values = np.zeros(len(text), dtype=dtype)
    ok = np.ones(len(text), dtype=bool)
    todo = [(0, len(text))]
    while todo:
        a, b = todo.pop()
        if a >= b:
            continue
        try:
            values[a:b] = text[a:b].astype(dtype)
        except (ValueError, OverflowError):
            if b - a == 1:
                ok[a] = False
            else:
                m = (a + b) // 2
                todo += [(a, m), (m, b)]
    return values, ok


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    if parts[0].dtype.kind == "S":
        width = max(p.dtype.itemsize for p in parts)
        parts = [p.astype(f"S{width}", copy=False) for p in parts]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def text_of(raw: bytes) -> str:
    """Bytes as text for messages (undecodable bytes as \\xNN)."""
    return bytes(raw).decode("utf-8", "backslashreplace")


def _lines(n: int) -> str:
    return f"{n} line{'' if n == 1 else 's'}"
