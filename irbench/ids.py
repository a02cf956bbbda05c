"""Ids (topic ids, docnos) as the store keeps them: one rule for every path that writes or
looks up an id (pool builds, judging, qrels import, the assessment desk).

The readers give ids as the bytes of the file. Valid UTF-8 is kept as it is; every byte that
is not part of valid UTF-8 is written as its escape ``\\xNN`` (two lower-case hex digits), the
same text :func:`irbench.trec.display` shows in messages. So a docno ``doc\\xff\\xfe`` in a run
is stored, printed in an assessor file and looked up as the 10 characters ``doc\\xff\\xfe``,
whichever command meets it first. A str holding lone surrogates (bytes decoded with
``surrogateescape``, or a surrogate a JSON ``\\ud800`` gave) is first turned back into its
bytes, so it ends as the same text as those bytes would.

:func:`id_bytes` inverts it: each ``\\xNN`` of a byte 0x80-0xff is that byte again. The one
ambiguity is an id whose valid UTF-8 spells such an escape literally (the 4 characters
``\\xff``): it shares its text with the id holding the byte; a lookup by bytes may try both
(:func:`id_candidates`).
"""

from __future__ import annotations

import re

import numpy as np

_ESCAPE = re.compile(r"\\x([89a-f][0-9a-f])")


def id_text(value: bytes | str) -> str:
    """The id as the store keeps it: valid UTF-8 unchanged, each undecodable byte as
    ``\\xNN``; a str with lone surrogates as the text of its bytes. Never raises."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            value = _surrogate_bytes(value)
    return bytes(value).decode("utf-8", "backslashreplace")


def ids_text(values: np.ndarray) -> np.ndarray:
    """:func:`id_text` of a column (numpy bytes, str or object array) as an object array."""
    if values.dtype.kind == "S":
        return np.char.decode(values, "utf-8", "backslashreplace").astype(object)
    return np.array([id_text(v) for v in values.tolist()], dtype=object)


def id_bytes(text: str) -> bytes:
    """The bytes of an id :func:`id_text` gave: each ``\\xNN`` escape of a byte 0x80-0xff is
    that byte again, the rest is UTF-8."""
    if "\\x" not in text:
        return _surrogate_bytes(text)
    parts = _ESCAPE.split(text)  # text, hex, text, hex, ..., text
    out = bytearray()
    for i, part in enumerate(parts):
        out += bytes((int(part, 16),)) if i % 2 else _surrogate_bytes(part)
    return bytes(out)


def id_candidates(text: str) -> tuple[bytes, ...]:
    """The bytes an id stored as ``text`` may have been: the undecodable form first (what
    :func:`id_text` of it gives back), then the literal UTF-8 if it differs."""
    decoded, literal = id_bytes(text), _surrogate_bytes(text)
    return (decoded,) if decoded == literal else (decoded, literal)


def _surrogate_bytes(text: str) -> bytes:
    """UTF-8 of ``text``; a lone surrogate of ``surrogateescape`` as its byte, any other as
    its (invalid) three bytes."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(code - 0xDC00)
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)
