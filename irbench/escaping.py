"""Participants' strings (run tags, system names, docnos) made inert in each output format.

Run files come from participants, so any text from them may be hostile: a CSV cell that
starts a spreadsheet formula (``=HYPERLINK(...)``), raw HTML in Markdown, a newline that ends
a LaTeX ``%`` comment, or terminal escape sequences that retitle the window or erase lines.
HTML is escaped by Jinja2's autoescape (``irbench.report``); LaTeX by
:func:`irbench.stats.latex.escape_latex`, which also turns control characters into spaces.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# C0 controls, DEL and C1 controls: shown as \xNN, never sent to a terminal raw
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
# Unicode format characters (category Cf: bidi overrides and isolates, zero-width characters,
# the BOM ...), invisible yet able to reorder what a terminal shows: shown as \uNNNN
# (tests/test_readers_bad_input.py checks this class against unicodedata)
_FORMAT = (
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]")

_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " "}


def terminal(text: Any) -> str:
    """``text`` with control characters (ESC, CR, BEL, ...) written as ``\\xNN`` and format
    characters (a right-to-left override, a zero-width space) as ``\\uNNNN``."""
    shown = str(text).translate(_CONTROLS)
    return shown if shown.isascii() else _format_pattern().sub(_escaped, shown)


@functools.cache
def _format_pattern() -> re.Pattern:
    return re.compile(_FORMAT)  # when first needed: not at start-up


def _escaped(match: re.Match) -> str:
    code = ord(match[0])
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting like a formula gets a leading
    apostrophe (numbers, and text that reads as one, are left alone)."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value


def markdown_cell(text: Any) -> str:
    """Text for a Markdown table cell: no raw HTML, no cell break, no line break."""
    return "".join(_MARKDOWN.get(c, c) for c in terminal(text).replace("\\x0a", " "))
