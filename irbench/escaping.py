"""Participants' strings (run tags, system names, docnos) made inert in each output format.

Run files come from participants, so any text from them may be hostile: a CSV cell that
starts a spreadsheet formula (``=HYPERLINK(...)``), raw HTML in Markdown, a newline that ends
a LaTeX ``%`` comment, or terminal escape sequences that retitle the window or erase lines.
HTML is escaped by Jinja2's autoescape (``irbench.report``); LaTeX by
:func:`irbench.stats.latex.escape_latex`, which also turns control characters into spaces.

On the terminal one rule holds for every command: :func:`terminal` for a value, and
:class:`TerminalStream`, which the command line puts in front of stdout and stderr
(``irbench.cli.main``), for everything written, so no name, docno, message or server text
reaches the screen with a control or format character in it (tabs and newlines, the layout
of the output, excepted).
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
    "\U000e0020-\U000e007f"
    "\ud800-\udfff]")  # and lone surrogates (undecodable bytes of a file name or docno)
# what a stream keeps of the controls: the tab and the newline, the layout of the output
_LAYOUT = frozenset((0x09, 0x0A))
_STREAM = {c: shown for c, shown in _CONTROLS.items() if c not in _LAYOUT}
_PLAIN_ASCII = bytes((*_LAYOUT, *range(0x20, 0x7F)))

_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " "}


def terminal(text: Any) -> str:
    """``text`` with control characters (ESC, CR, BEL, ...) written as ``\\xNN`` and format
    characters (a right-to-left override, a zero-width space) as ``\\uNNNN``."""
    shown = str(text).translate(_CONTROLS)
    return shown if shown.isascii() else _format_pattern().sub(_escaped, shown)


def terminal_text(text: str) -> str:
    """:func:`terminal` for output made of lines and columns: tabs and newlines kept."""
    if text.isascii():  # the common case, checked at C speed: plain printable ASCII
        if not text.encode("ascii").translate(None, _PLAIN_ASCII):
            return text
        return text.translate(_STREAM)
    return _format_pattern().sub(_escaped, text.translate(_STREAM))


class TerminalStream:
    """A text stream (stdout, stderr) that writes what it is given through
    :func:`terminal_text`; everything else (``isatty``, ``fileno``, ``encoding`` ...) is the
    wrapped stream's, which ``unescaped`` names (for a progress bar's carriage returns)."""

    def __init__(self, stream):
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.unescaped.write(terminal_text(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


def json_text(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``, which writes C0 controls as
    ``\\u00NN`` already) with DEL, the C1 controls, format characters and lone surrogates
    written as JSON's ``\\uNNNN`` escapes: the same data, nothing a terminal acts on."""
    return text if text.isascii() and "\x7f" not in text else _json_pattern().sub(_json_escaped,
                                                                                  text)


@functools.cache
def _json_pattern() -> re.Pattern:
    return re.compile(f"[\x7f-\x9f]|{_FORMAT}")


def _json_escaped(match: re.Match) -> str:
    units = match[0].encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}"
                   for i in range(0, len(units), 2))


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
