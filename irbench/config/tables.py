"""Run tables as organisers have them (``systems: {table: FILE, columns: {...}, run: ...}``):
the file read as CSV or TSV, its columns given to a system's fields by their own names or by
the ``columns:`` map (``{pooled: judged_depth100}``), the run file made from a row's cells by a
template (``run: "input.{run tag}.gz"``), yes-or-no cells read as booleans, and every other
column kept as the system's ``metadata``. Where each problem is belongs to the caller (the
builder's ``where`` tuples); this module says what it is."""

from __future__ import annotations

import csv
import difflib
import io
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .types import MAX_TABLE_BYTES, MAX_TABLE_ROWS, TABLE_BOOLEANS, TABLE_COLUMNS

Problem = Callable[[tuple, str], None]  # (where, reason): where is relative to the caller's
BOOLEAN_FIELDS = ("baseline", "official", "pooled")
BOOLEAN_WORDS = "true/false, yes/no, y/n, on/off or 1/0, in any letter case"
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Layout:
    """What each column of a run table gives: ``names`` (the header row's cells, as written),
    ``fields`` ((system field, column index)), ``template`` (the run file's pieces: text, or
    the index of the column whose cell goes there; None when a column gives the run),
    ``metadata`` ((column name, index) of every named column no field takes), ``labels``
    ((field, how a message names its column) for fields whose column is called otherwise)."""

    names: tuple[str, ...]
    fields: tuple[tuple[str, int], ...]
    template: tuple[str | int, ...] | None
    metadata: tuple[tuple[str, int], ...]
    labels: tuple[tuple[str, str], ...]


def column_map(value: Any, problem: Problem) -> dict[str, str] | None:
    """The ``columns:`` of a run table entry as {system field: column name}, ({} when not
    given); None (its problems reported at ``("columns", ...)``) when it is not one."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problem(("columns",), "a mapping of system field: the table's column name (columns: "
                              "{run: run tag, pooled: judged_depth100})")
        return None
    out: dict[str, str] = {}
    for field, column in value.items():
        if field not in TABLE_COLUMNS:
            close = difflib.get_close_matches(str(field), TABLE_COLUMNS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problem(("columns", field), f"unknown system field{hint}: a column may give "
                                        f"{', '.join(TABLE_COLUMNS)}; every other column is "
                                        "kept as the system's metadata")
        elif isinstance(column, bool) or not isinstance(column, (str, int)) \
                or not str(column).strip():
            problem(("columns", field), "the name of a column of the table, as its header "
                                        "row writes it")
        else:
            out[field] = str(column).strip()
    return out if len(out) == len(value) else None


def run_template(value: Any, problem: Problem) -> tuple[str, ...] | None:
    """The pieces of a run template (``input.{run tag}.gz``): text at even positions, column
    names at odd ones; None (its problem reported at ``("run",)``) when it is not one."""
    if not isinstance(value, str) or not value.strip():
        problem(("run",), "a run file name made of the row's cells, each column's name in "
                          "braces: input.{run tag}.gz")
        return None
    pieces = tuple(PLACEHOLDER.split(value))
    if any("{" in text or "}" in text for text in pieces[::2]):
        problem(("run",), f"{value!r}: a brace outside a {{column}}: write each column's "
                          "name in braces, input.{run tag}.gz")
        return None
    if len(pieces) == 1:
        problem(("run",), f"{value!r} names no column: write the column whose cell makes "
                          "each run file's name in braces, input.{run tag}.gz")
        return None
    return pieces


def layout(names: list[str], columns: dict[str, str], template: tuple[str, ...] | None,
           shown: str, header: Problem, config: Problem) -> Layout | None:
    """What each column of a header row (``names``, as written) gives, from the ``columns:``
    map and the run template; None when the header cannot be read that way (problems of the
    header row go to ``header`` with ``()``, of the entry's keys to ``config``)."""
    written = [n.strip() for n in names]
    index: dict[str, int] = {}
    for i, name in enumerate(written):
        if name.lower() in index:
            header((), f"column {i + 1}: '{name}' given twice")
        elif name:
            index[name.lower()] = i
    found = len(index) == len([n for n in written if n])

    def column(where: tuple, name: str) -> int | None:
        if name.lower() in index:
            return index[name.lower()]
        close = difflib.get_close_matches(name, [n for n in written if n], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        config(where, f"no column '{name}' in {shown} (its columns: "
                      f"{', '.join(n for n in written if n)}{hint})")
        return None

    fields: dict[str, int] = {}
    labels: list[tuple[str, str]] = []
    for field, name in columns.items():
        at = column(("columns", field), name)
        found = found and at is not None
        if at is not None:
            fields[field] = at
            if written[at].lower() != field:
                labels.append((field, f"{written[at]} ({field})"))
    mapped = set(fields.values())
    for field in TABLE_COLUMNS:  # the others by their own names, unless mapped to another
        if field not in columns and field in index and index[field] not in mapped \
                and not (field == "run" and template is not None):
            fields[field] = index[field]
    pieces: list[str | int] | None = None
    if template is not None:
        pieces = []
        for k, piece in enumerate(template):
            at = column(("run",), piece) if k % 2 else None
            found = found and (at is not None or not k % 2)
            pieces.append(piece if at is None else at)
        if "run" in fields:
            if fields["run"] not in pieces[1::2]:
                config(("columns", "run"), f"the run template does not use column "
                                           f"'{written[fields['run']]}': a column gives the "
                                           "run file, or the template makes it")
                found = False
            del fields["run"]  # the template makes the run file from it
            labels = [(field, label) for field, label in labels if field != "run"]
    elif "run" not in fields:
        header((), "no 'run' column (the run file of each system, relative to the table's "
                   "folder; or map yours: columns: {run: COLUMN}, or make it from the row: "
                   "run: 'input.{COLUMN}.gz')")
        found = False
    if not found:
        return None
    taken = set(fields.values()) | ({index[columns["run"].lower()]} if "run" in columns
                                     else set())  # the run's column, used by the template
    return Layout(names=tuple(written), fields=tuple(fields.items()),
                  template=None if pieces is None else tuple(pieces),
                  metadata=tuple((name, i) for i, name in enumerate(written)
                                 if name and i not in taken),
                  labels=tuple(labels))


def nameless(names: list[str], rows: list[tuple[int, list[str]]]) -> list[int]:
    """The columns (from 1) whose header cell is empty but some row's is not (a column left
    nameless and empty, as a trailing delimiter makes, is no problem)."""
    return [i + 1 for i, name in enumerate(names) if not name.strip()
            and any(i < len(cells) and cells[i].strip() for _, cells in rows)]


def row_entry(table: Layout, cells: list[str], problem: Problem) -> dict[str, Any] | None:
    """A row's cells as a system entry (as YAML would give it): its fields (an empty cell is a
    field not given), ``run`` made by the template, ``metadata`` {column: cell} of the other
    non-empty cells. Problems go to ``problem`` at ``(field,)`` (``()`` for the row); None
    when the row gives no run file."""
    cells = [c.strip() for c in cells] + [""] * (len(table.names) - len(cells))
    entry: dict[str, Any] = {}
    for field, i in table.fields:
        cell = cells[i]
        if not cell:
            continue
        if field in BOOLEAN_FIELDS:
            if cell.lower() in TABLE_BOOLEANS:
                entry[field] = TABLE_BOOLEANS[cell.lower()]
            else:
                problem((field,), f"must be yes or no ({BOOLEAN_WORDS}), not {shown_value(cell)}")
        elif field == "priority" and re.fullmatch(r"[+-]?[0-9]{1,18}", cell):
            entry[field] = int(cell)
        else:
            entry[field] = cell
    if table.template is not None:
        empty = [table.names[int(i)] for i in dict.fromkeys(table.template[1::2])
                 if not cells[int(i)]]
        if empty:
            problem(("run",), f"empty {', '.join(repr(n) for n in empty)}: the run template "
                              "makes the run file from it")
            return None
        entry["run"] = "".join(cells[p] if isinstance(p, int) else p
                               for p in table.template)
    if "run" not in entry:
        problem(("run",), "empty: each row names its run file")
        return None
    metadata = {name: cells[i] for name, i in table.metadata if cells[i]}
    if metadata:
        entry["metadata"] = metadata
    return entry


def read_table(path: str, shown: str) -> tuple[tuple[int, list[str]] | None,
                                               list[tuple[int, list[str]]]]:
    """The header ``(line, cells)`` (None when the file has no row) and the other rows
    ``(line, cells)`` of a CSV or TSV file: ``.csv`` is comma-separated, ``.tsv``/``.tab``
    tab-separated, any other name sniffed (comma, tab or semicolon). Read with the csv module
    only, as UTF-8 (a byte-order mark is skipped); blank lines are skipped. A file that cannot
    be read, is not UTF-8, is not CSV, or is larger than MAX_TABLE_ROWS rows or
    MAX_TABLE_BYTES is a ConfigError naming ``shown`` and the line."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TABLE_BYTES + 1)
    except OSError as exc:
        raise ConfigError([f"{shown}: cannot read the run table ({exc.strerror})"]) from None
    if len(raw) > MAX_TABLE_BYTES:
        raise ConfigError([f"{shown}: larger than {MAX_TABLE_BYTES // 2**20} MB: not a run "
                           "table"])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError([f"{shown}:{line}: not UTF-8 text"]) from None
    extension = os.path.splitext(path)[1].lower()
    if extension in (".csv", ".tsv", ".tab"):
        delimiter = "," if extension == ".csv" else "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",\t;").delimiter
        except csv.Error:
            delimiter = "\t" if "\t" in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: tuple[int, list[str]] | None = None
    rows: list[tuple[int, list[str]]] = []
    done = 0
    try:
        for cells in reader:
            line, done = done + 1, reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if header is None:
                header = (line, cells)
            elif len(rows) == MAX_TABLE_ROWS:
                raise ConfigError([f"{shown}:{line}: more than {MAX_TABLE_ROWS:,} rows"])
            else:
                rows.append((line, cells))
    except csv.Error as exc:
        raise ConfigError([f"{shown}:{done + 1}: not CSV/TSV ({exc})"]) from None
    return header, rows


def shown_value(value: Any) -> str:
    """``repr(value)`` for a message, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
