"""Whole-array parsing of regular pieces of TREC text: whitespace tokens found with numpy, then
the columns of a piece whose every line is a result (or judgment) line of the expected shape.
A piece that is anything else (comments, blank qrels lines, other field counts, ids over the
limit, scores or levels that are not plain numbers) gets None, and the line-by-line parser of
:mod:`.text` reads it, naming each problem with its line: both give the same columns."""

from __future__ import annotations

import numpy as np

from .ids import (
    MAX_ID_BYTES,
    MAX_RELEVANCE,
    MIN_RELEVANCE,
    as_strings,
    bytes_array,
    plain_decimals,
    token_words,
)


def run_columns(piece: bytes, first_line: int):
    """Vectorised parse of a piece: (qid, docno, score, line, tag, line ends), or None.

    None sends the piece to the line-by-line path: a line with other than 6 fields, a comment
    line, or a score that is not a plain finite decimal. Blank lines are skipped here.
    """
    buf = np.frombuffer(piece, dtype=np.uint8)
    starts, ends, newlines = tokens(buf)
    if len(starts) % 6:
        return None
    rows = len(starts) // 6
    if rows == 0:
        empty = bytes_array([])
        return empty, empty, np.zeros(0), np.zeros(0, np.int64), b"", len(newlines)
    line = row_lines(starts, ends, newlines, 6)
    if line is None or np.any(buf[starts[::6]] == 35):  # irregular, or a comment line
        return None
    score = scores(buf, starts[4::6], ends[4::6])
    ids = None if score is None else id_columns(buf, starts, ends, 6)
    if ids is None:
        return None
    return (*ids, score, line + first_line, piece[starts[-1]:ends[-1]], len(newlines))


def id_columns(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
               ncols: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(topic ids, docnos): the first and third token of each ``ncols``-token row, or None
    when one is over MAX_ID_BYTES (the line-by-line path names it)."""
    lens = ends - starts
    qid_lens, doc_lens = lens[0::ncols], lens[2::ncols]
    if max(int(qid_lens.max()), int(doc_lens.max())) > MAX_ID_BYTES:
        return None
    return (as_strings(token_words(buf, starts[0::ncols], ends[0::ncols]), qid_lens),
            as_strings(token_words(buf, starts[2::ncols], ends[2::ncols]), doc_lens))


def tokens(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def row_lines(starts: np.ndarray, ends: np.ndarray, newlines: np.ndarray,
              ncols: int) -> np.ndarray | None:
    """0-based line (within the piece) of each ``ncols``-token row, or None if a line is not
    a row."""
    rows = len(starts) // ncols
    n = len(newlines)
    if n in (rows, rows - 1):  # the usual case: one line end after each row, no blank lines
        after_row = newlines >= ends[ncols - 1::ncols][:n]
        before_next = newlines[: rows - 1] < starts[ncols::ncols]
        if after_row.all() and before_next.all():
            return np.arange(rows, dtype=np.int64)
    gap = np.searchsorted(starts, newlines)  # index of the first token after each line end
    if np.any(gap % ncols):  # a line end inside a row: some line has another field count
        return None
    newlines_before = np.bincount(gap // ncols, minlength=rows + 1)
    if not np.all(newlines_before[1:rows]):  # two rows on one line
        return None
    return np.cumsum(newlines_before[:rows])


def qrels_columns(piece: bytes, first_line: int):
    """Vectorised parse of a qrels piece: (qid, docno, relevance, line), or None.

    None sends the piece to the line-by-line path: a line with other than 4 fields, a blank
    or comment line, an id over MAX_ID_BYTES, or a relevance that is not a plain integer of
    at most 10 digits within trec_eval's range."""
    buf = np.frombuffer(piece, dtype=np.uint8)
    starts, ends, newlines = tokens(buf)
    rows = len(starts) // 4
    if len(starts) % 4 or rows == 0:
        return None
    line = row_lines(starts, ends, newlines, 4)
    lines_in_piece = len(newlines) + (0 if piece.endswith(b"\n") else 1)
    if line is None or rows != lines_in_piece:
        return None  # a blank line (the line-by-line path names it)
    if np.any(buf[starts[::4]] == 35):  # a comment line
        return None
    relevance = levels(buf, starts[3::4], ends[3::4])
    ids = None if relevance is None else id_columns(buf, starts, ends, 4)
    if ids is None:
        return None
    return (*ids, relevance, line + first_line)


def levels(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Relevance tokens as int64, or None unless every one is ``[+-]digits`` with at most 10
    digits and within trec_eval's range (the line-by-line path names the others)."""
    lens = ends - starts
    if int(lens.max()) > 11:
        return None
    words = token_words(buf, starts, ends)
    text = words.view(np.uint8)[:, :11]
    column = np.arange(text.shape[1])
    inside = column < lens[:, None]
    signed = (text[:, 0] == 43) | (text[:, 0] == 45)
    digit = (text >= 48) & (text <= 57)
    if not np.all(digit | ~inside | ((column == 0) & signed[:, None])):
        return None
    if np.any(lens - signed < 1) or np.any(lens - signed > 10):
        return None
    values, done = plain_decimals(words, lens)  # integers of up to 10 digits: exact
    if not done.all():
        return None
    out = values.astype(np.int64)
    if out.min() < MIN_RELEVANCE or out.max() > MAX_RELEVANCE:
        return None
    return out


def scores(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The score tokens as float64, or None if one is not a plain finite decimal. Plain
    decimals of up to 15 digits are read in whole-array steps (:func:`plain_decimals`); the
    others by numpy's cast (correctly rounded, as those are), each distinct string once per
    stretch of repeats."""
    words = token_words(buf, starts, ends)
    text = words.view(np.uint8)
    # beyond '9' only the exponent letters; inf, nan, 1_0 and the like go line by line
    if np.any((text > 57) & (text != 69) & (text != 101)):
        return None
    values, done = plain_decimals(words, ends - starts)
    if done.all():
        return values
    rest = np.flatnonzero(~done)
    strings = as_strings(words[rest], ends[rest] - starts[rest])
    new = np.ones(len(strings), dtype=bool)
    np.not_equal(strings[1:], strings[:-1], out=new[1:])
    first = np.flatnonzero(new)
    try:
        distinct = strings[first].astype(np.float64)
    except ValueError:
        return None
    if not np.isfinite(distinct).all():
        return None
    values[rest] = np.repeat(distinct, np.diff(np.append(first, len(strings))))
    return values
