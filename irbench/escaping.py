"""Participants' strings (run tags, system names, docnos) made inert in each output format.

Run files come from participants, so any text from them may be hostile: a CSV cell that
starts a spreadsheet formula (``=HYPERLINK(...)``), raw HTML in Markdown, a newline that ends
a LaTeX ``%`` comment, or terminal escape sequences that retitle the window or erase lines.
HTML is escaped by Jinja2's autoescape (``irbench.report``); LaTeX by
:func:`irbench.stats.latex.escape_latex`, which also turns control characters into spaces.
"""

from __future__ import annotations

from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# C0 controls, DEL and C1 controls: shown as \xNN, never sent to a terminal raw
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " "}


def terminal(text: Any) -> str:
    """``text`` with control characters (ESC, CR, BEL, ...) written as ``\\xNN``."""
    return str(text).translate(_CONTROLS)


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
