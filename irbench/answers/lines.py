"""The JSON objects of an answer file, one per line, read as untrusted input.

A file is read as a stream in blocks (a path, a URL, stdin as ``-``, a file object or a
:class:`~irbench.trec.Loaded` file), inflated when it starts with the gzip magic bytes or its
name ends in ``.gz`` (at most :func:`~irbench.trec.gunzip_limit` bytes: no gzip bomb), so a
file of any size takes memory bounded by its longest line. Each line is a problem of its own,
collected, never a traceback:

* a line longer than ``max_line_bytes`` (default :data:`MAX_LINE_BYTES`) is skipped without
  being held whole;
* a line holding more than :data:`MAX_VALUES` JSON values (counted, before parsing, as its
  commas and opening brackets) is not parsed: JSON's small values take some 50 bytes each in
  Python, so this bounds the memory a line may cost;
* bytes that are not UTF-8 are reported with the line and the byte's position;
* JSON nested deeper than Python's recursion limit is reported (json's own RecursionError);
* a UTF-8 byte-order mark at the start of the file is dropped (one elsewhere is not JSON).

``NaN``, ``Infinity`` and ``-Infinity`` are read as Python's json reads them (floats): the
formats then refuse them where a text, an index or a finite confidence is expected.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import AnswerFormatError
from ..trec import (
    GZIP_MAGIC,
    UTF8_BOM,
    Loaded,
    Source,
    gunzip_limit,
    inflate,
    is_url,
    open_binary,
    source_size,
)
from .problems import Problems

MAX_LINE_BYTES = 8 << 20  # one answer (a JSON line) at most; a RAG 2025 line with its prompt
                          # and 100 references is some hundreds of kB
MAX_VALUES = 1_000_000  # JSON values in one line at most (commas and opening brackets)
BLOCK = 1 << 20  # bytes read at a time


@contextmanager
def opened(source: Source) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(the name messages give the file, its bytes in blocks, inflated when gzip)."""
    if isinstance(source, Loaded):
        yield source.name, _maybe_gunzip(source.name, iter((source.data,)), len(source.data))
        return
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-":
            yield "<stdin>", _maybe_gunzip("<stdin>", _blocks(sys.stdin.buffer), None)
            return
        try:
            size = source_size(path)
            with open_binary(path) as fh:
                yield path, _maybe_gunzip(path, _blocks(fh), size)
        except FileNotFoundError:
            raise AnswerFormatError([f"{path}: no such file"]) from None
        except IsADirectoryError:
            raise AnswerFormatError([f"{path}: is a directory, not a file"]) from None
        except OSError as exc:
            if is_url(path) or exc.filename in (None, path):
                raise AnswerFormatError([f"{path}: cannot read ({exc.strerror})"]) from None
            raise
        return
    name = getattr(source, "name", None)
    name = name if isinstance(name, str) else "<memory>"
    yield name, _maybe_gunzip(name, _blocks(source), None)


def _blocks(fh: Any) -> Iterator[bytes]:
    while True:
        try:
            block = fh.read(BLOCK)
        except TypeError:  # a reader whose read() takes no size: the whole content
            block = fh.read()
            yield block.encode("utf-8") if isinstance(block, str) else block
            return
        if not block:
            return
        yield block.encode("utf-8") if isinstance(block, str) else block


def _maybe_gunzip(name: str, blocks: Iterator[bytes], size: int | None) -> Iterator[bytes]:
    first = b""
    for first in blocks:
        if first:
            break
    if not first:
        return
    if first[:2] == GZIP_MAGIC or name.endswith(".gz"):
        yield from inflate(_chain(first, blocks), gunzip_limit(size or 0))
    else:
        yield first
        yield from blocks


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def numbered_lines(blocks: Iterator[bytes],
                   max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """The lines of a stream given in blocks, each with its number from 1; None for a line
    longer than ``max_bytes``, skipped without being held (its parts are dropped as they
    come)."""
    parts: list[bytes] = []
    held, number, skipping = 0, 1, False
    for data in blocks:
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            piece = data[start:end]
            if skipping or held + len(piece) > max_bytes:
                yield number, None
            else:
                yield number, b"".join(parts) + piece if parts else piece
            parts, held, skipping = [], 0, False
            number, start = number + 1, end + 1
        if skipping:
            continue
        rest = data[start:]
        if held + len(rest) > max_bytes:
            parts, held, skipping = [], 0, True
        elif rest:
            parts.append(rest)
            held += len(rest)
    if skipping:
        yield number, None
    elif parts:
        yield number, b"".join(parts)


def json_objects(lines: Iterator[tuple[int, bytes | None]], problems: Problems,
                 max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each line holding a JSON object; every other non-blank line
    is a problem (see the module's notes). A gzip stream that breaks off is a problem at the
    line it broke in, and the end of the reading."""
    number = 0
    try:
        for number, raw in lines:
            obj = _object(number, raw, problems, max_bytes)
            if obj is not None:
                yield number, obj
    except ValueError as exc:  # inflate: not gzip, cut short, or a gzip bomb
        problems.add(number + 1, str(exc))


def _object(number: int, raw: bytes | None, problems: Problems,
            max_bytes: int) -> dict | None:
    if raw is None:
        problems.add(number, f"a line longer than {max_bytes:,} bytes: not read")
        return None
    if number == 1 and raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM):]
    if not raw.strip():
        return None
    values = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    if values > MAX_VALUES:
        problems.add(number, f"more than {MAX_VALUES:,} JSON values in one line: not read")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(number, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte "
                             f"{exc.start + 1:,} of the line)")
        return None
    try:
        obj = json.loads(text)
    except RecursionError:  # json's reader goes one call deeper per level
        problems.add(number, "JSON arrays or objects nested too deeply (more than some "
                             f"{sys.getrecursionlimit():,} levels)")
        return None
    except ValueError as exc:  # JSONDecodeError; an integer of too many digits
        if isinstance(exc, json.JSONDecodeError):  # its msg may end "... at"
            reason = f"{exc.msg.removesuffix(' at')} (column {exc.colno})"
        else:
            reason = str(exc)
        problems.add(number, f"not JSON: {reason}")
        return None
    if not isinstance(obj, dict):
        problems.add(number, f"not a JSON object but {_json_type(obj)}")
        return None
    return obj


def _json_type(value: object) -> str:
    """The JSON name of a parsed value's type."""
    return JSON_TYPES.get(type(value), type(value).__name__)


JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number",
              float: "a number", bool: "true or false", type(None): "null"}
