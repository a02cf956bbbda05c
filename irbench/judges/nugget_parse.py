"""A list of strings read from what a model wrote, in linear time, nothing evaluated.

AutoNuggetizer asks for "a Pythonic list" and reads the answer with ``ast.literal_eval`` after
removing code fences; a model also writes prose around the list, JSON's double quotes, a list
of bare words, an echo of the prompt's list before its own. :func:`string_lists` finds every
flat list of string literals (``['a', "b"]``; with ``bare=True`` also ``[support, okay]``) in
the answer's last :data:`MAX_ANSWER_CHARS` characters by one pass of one regular expression
over it (each token matched once: linear in the answer's length whatever it holds) and a
state machine over the tokens; each list found, at most :data:`MAX_LIST_CHARS` long, is read
by ``ast.literal_eval`` (JSON's ``json.loads`` when Python's literal syntax refuses it, e.g. a
``\\/`` escape), which can only build strings here: the list's grammar is checked before.
A nested list, a number, a call, an unclosed string breaks a list: it is no list of strings.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable

MAX_ANSWER_CHARS = 1_000_000  # the tail of an answer looked at
MAX_LIST_CHARS = 200_000  # a list longer than this is not read
MAX_ITEMS = 1_000  # items of one list

# one token: a string literal (one line, escapes allowed), a bracket, a comma, white space,
# a run of other characters, or a quote that opens no string
_TOKEN = re.compile(r"""(?P<s>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|(?P<o>\[)|(?P<c>\])"""
                    r"""|(?P<k>,)|(?P<w>\s+)|(?P<x>[^\[\]'",\s]+|['"])""")
_BARE = re.compile(r"[A-Za-z_][\w-]*")


def string_lists(answer: str, bare: bool = False) -> list[list[str]]:
    """Every flat list of strings in ``answer``'s tail, in order (see the module docstring).
    ``bare``: an unquoted word (``support``) is an item too."""
    text = answer[-MAX_ANSWER_CHARS:]
    found: list[list[str]] = []
    start: int | None = None  # where the list being read opened
    items: list[tuple[str, bool]] = []  # (token, quoted)
    expect_item = True  # after '[' or ',': an item or ']'
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "w":
            continue
        if kind == "o":
            start, items, expect_item = m.start(), [], True
        elif start is None:
            continue
        elif kind == "c":
            read = _read(text[start:m.end()], items)
            if read is not None:
                found.append(read)
            start = None
        elif expect_item and (kind == "s" or bare and kind == "x"
                              and _BARE.fullmatch(m.group()) is not None):
            items.append((m.group(), kind == "s"))
            expect_item = False
        elif kind == "k" and not expect_item:
            expect_item = True
        else:
            start = None
        if start is not None and (m.end() - start > MAX_LIST_CHARS or len(items) > MAX_ITEMS):
            start = None
    return found


def _read(span: str, items: list[tuple[str, bool]]) -> list[str] | None:
    """The strings of a list whose grammar is checked (``items``: its item tokens)."""
    if all(quoted for _, quoted in items):
        for parse in _LITERALS:
            try:
                value = parse(span)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
        return None
    out = []
    for token, quoted in items:
        if quoted:
            value = _string(token)
            if value is None:
                return None
            out.append(value)
        else:
            out.append(token)
    return out


def _string(token: str) -> str | None:
    for parse in _LITERALS:
        try:
            value = parse(token)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, str):
            return value
    return None


_LITERALS: tuple[Callable[[str], object], ...] = (ast.literal_eval, json.loads)


def last_list(answer: str, bare: bool = False, length: int | None = None) -> list[str] | None:
    """The list an answer gives: the last list of strings in it (of ``length`` items when
    given and one has it, else the last: the caller then finds its length wrong), or None."""
    lists = string_lists(answer, bare)
    if length is not None:
        fitting = [x for x in lists if len(x) == length]
        if fitting:
            return fitting[-1]
    return lists[-1] if lists else None


def normalised(text: str) -> str:
    """A nugget's text as compared (a vote, a duplicate): white space runs as one space,
    case folded."""
    return " ".join(text.split()).casefold()
