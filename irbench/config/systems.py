"""The ``systems:`` section: inline entries, globs and run tables (CSV/TSV), every problem
with its file and line."""

from __future__ import annotations

import csv
import io
import os
import re
from typing import Any

from ..errors import ConfigError
from ..runner.stamp import glob_matches
from ..system import System, source_of
from ..trec import glob_url, is_url, run_name, run_tag
from .base import BuilderBase, not_a_file
from .types import MAX_TABLE_BYTES, MAX_TABLE_ROWS, SYSTEM_KEYS, TABLE_COLUMNS, TableRow


class SystemsBuilder(BuilderBase):
    """The ``systems:`` section of a config: inline entries, globs and run tables, each system
    checked by the same code (mixed into the config builder)."""

    def _systems(self) -> tuple[System, ...]:
        value = self.data.get("systems")
        if value is None:
            return ()
        items: list[tuple[tuple[str | int, ...], Any]]
        if isinstance(value, dict) and list(value) == ["table"] and not isinstance(
                value["table"], dict):  # systems: {table: FILE}
            items = [(("systems",), value)]
        elif isinstance(value, dict):
            if "table" in value:
                self.problem(("systems", "table"), "a run table is given alone (systems: "
                             "{table: FILE}) or as an item of the systems list (- table: FILE); "
                             "a system named table is written in the list form")
            items = [(("systems", k), {"name": k, **(v if isinstance(v, dict) else {"run": v})})
                     for k, v in value.items() if k != "table"]
        elif isinstance(value, list):
            items = [(("systems", i), v) for i, v in enumerate(value)]
        else:
            self.problem(("systems",), "a list of systems, or a mapping of name: run file")
            return ()
        systems: list[System] = []
        seen: dict[str, tuple[tuple, str]] = {}
        for where, entry in items:
            if not isinstance(entry, dict):
                self.problem(where, "a system is a mapping with name and run (or glob, or table)")
                continue
            rows = self._table(where, entry) if "table" in entry else [(where, entry, None)]
            for where, entry, folder in rows:
                for system in self._system(where, entry, folder):
                    if system.name in seen:
                        first, path = seen[system.name]
                        hint = ""
                        if "glob" in entry:
                            hint = ("; name the glob's runs by their run tag (name_from: tag)"
                                    if entry.get("name_from", "file") == "file" else
                                    "; two runs share this run tag: name the glob's runs by "
                                    "their file names (name_from: file)")
                        self.problem(where, f"system name '{system.name}' ({system.path}) "
                                            f"also used at {self._named(first)} ({path}){hint}")
                        continue
                    seen[system.name] = (where, system.path)
                    systems.append(system)
        if not systems and not self.reader.problems:
            self.problem(("systems",), "no systems")
        return tuple(systems)

    def _table(self, where: tuple, entry: dict) -> list[tuple[tuple, dict, str]]:
        """The rows of the run table of ``entry`` (``{table: FILE}``) as ``(where, entry,
        folder)``: each row an entry as a YAML system would be (cells as text; true/false
        and whole numbers read as such; an empty cell as no key), ``where`` its
        :class:`TableRow`, ``folder`` the table's, to which its run paths are relative.
        Problems of the table itself are reported at its line (the header at its own)."""
        for key in entry:
            if key != "table":
                self.problem(where + (key,), "unknown key (a run table gives every system "
                                             "key as a column: table: FILE alone)")
        value = entry["table"]
        if is_url(value):
            self.problem(where + ("table",), "a run table is a local file (its runs may be "
                                             "URLs)")
            return []
        path = self._resolve(where + ("table",), value)
        if path is None:
            return []
        shown = os.path.normpath(os.path.join(os.path.dirname(self.path),
                                              os.path.expanduser(value)))
        self.tables.append(path)
        self.table_names.append(shown)
        try:
            header, rows = read_table(path, shown)
        except ConfigError as exc:
            self.reader.problems.extend(exc.problems)
            return []
        if header is None:
            self.problem(where + ("table",), f"'{value}' is empty: a run table has a header "
                                             f"row naming its columns ({', '.join(TABLE_COLUMNS)})"
                                             ", then a row per system")
            return []
        line, names = header
        at_header = ("systems", TableRow(shown, line))
        columns: list[str | None] = []  # per cell: its column, None for one not taken
        for i, written in enumerate(names, 1):
            name: str | None = written.strip().lower()
            if name not in TABLE_COLUMNS:
                unknown = shown_value(written.strip())
                self.problem(at_header, f"column {i}: unknown column {unknown} "
                                        f"(a run table has {', '.join(TABLE_COLUMNS)})" if name
                             else f"column {i} has no name")
                name = None
            elif name in columns:
                self.problem(at_header, f"column {i}: '{name}' given twice")
                name = None
            columns.append(name)
        if "run" not in columns:
            self.problem(at_header, "no 'run' column (the run file of each system, relative "
                                    "to the table's folder)")
            return []
        if not rows:
            self.problem(at_header, "no rows under the header")
        out = []
        for line, cells in rows:
            row_where = ("systems", TableRow(shown, line))
            if len(cells) > len(columns):
                self.problem(row_where, f"{len(cells)} cells, the header names "
                                        f"{len(columns)} columns")
                continue
            row: dict[str, Any] = {}
            for column, cell in zip(columns, cells):
                cell = cell.strip()
                if column is not None and cell:
                    row[column] = _cell_value(column, cell)
            if "run" not in row:
                self.problem(row_where + ("run",), "empty: each row names its run file")
                continue
            row.setdefault("name", run_name(row["run"]))
            out.append((row_where, row, os.path.dirname(path)))
        return out

    def _system(self, where: tuple, entry: dict, folder: str | None = None) -> list[System]:
        """The systems of one entry of ``systems:`` (or row of a run table, whose run path is
        relative to ``folder``), each problem reported at ``where``."""
        for key in entry:
            if key not in SYSTEM_KEYS:
                self.problem(where + (key,), f"unknown key ({', '.join(sorted(SYSTEM_KEYS))})")
        meta = self._metadata(where, entry)
        if ("run" in entry) == ("glob" in entry):
            self.problem(where, "give either run (one file) or glob (many files)")
            return []
        if "run" in entry:
            name = entry.get("name")
            if not isinstance(name, (str, int)) or not str(name).strip():
                self.problem(where + ("name",), "every system needs a name")
                return []
            path = self._resolve(where + ("run",), entry["run"], must_exist=False,
                                 folder=folder)
            if path is None:
                return []
            present = source_of(path).present  # None (a URL): the run tells
            if present is not None and not present(path):
                self.missing_runs[str(name)] = (f"{self._at(where + ('run',))}: "
                                                f"{not_a_file(path)} '{entry['run']}'")
            return [System(str(name), path, **meta)]
        return self._glob(where, entry, meta)

    def _glob(self, where: tuple, entry: dict, meta: dict) -> list[System]:
        pattern = entry["glob"]
        if "name" in entry:
            self.problem(where + ("name",), "a glob names its systems by name_from")
        name_from = entry.get("name_from", "file")
        if name_from not in ("file", "tag"):
            self.problem(where + ("name_from",), "must be file or tag")
            return []
        if not isinstance(pattern, str) or not pattern.strip():
            self.problem(where + ("glob",), "must be a file pattern")
            return []
        local = not is_url(pattern) and not os.path.isabs(os.path.expanduser(pattern))
        if is_url(pattern):  # a prefix in object storage, read through fsspec
            full, what = pattern, "object"
            try:
                paths = glob_url(pattern)
            except OSError as exc:
                self.problem(where + ("glob",), f"'{pattern}': {exc.strerror}")
                return []
        else:
            full, what = os.path.normpath(os.path.join(self.folder,
                                                       os.path.expanduser(pattern))), "file"
            if local and os.path.commonpath([full, self.root]) != self.root:
                self.problem(where + ("glob",), f"'{pattern}' leaves the campaign folder "
                                                f"{self.root} (write an absolute path)")
                return []
            paths = glob_matches(full)
        self.globs.append((full, tuple(paths)))
        if not paths:
            self.problem(where + ("glob",), f"'{pattern}' matches no {what}")
            return []
        systems = []
        for path in paths:
            if local and self._escapes(path):
                self.problem(where + ("glob",), f"'{path}' is a link leading out of the "
                                                f"campaign folder {self.root}")
                continue
            name = run_name(path) if name_from == "file" else run_tag(path)
            if not name:
                self.problem(where + ("glob",), f"cannot read a run tag from '{path}'")
                continue
            systems.append(System(name, path, **meta))
        return systems

    def _metadata(self, where: tuple, entry: dict) -> dict:
        meta: dict[str, Any] = {}
        for key in ("group", "type", "description"):
            if key in entry:
                if not isinstance(entry[key], (str, int, float)):
                    self.problem(where + (key,), "must be text")
                else:
                    meta[key] = str(entry[key])
        for key in ("baseline", "official", "pooled"):
            if key in entry:
                if not isinstance(entry[key], bool):
                    self.problem(where + (key,),
                                 f"must be true or false, not {shown_value(entry[key])}")
                else:
                    meta[key] = entry[key]
        if "priority" in entry:
            value = entry["priority"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                self.problem(where + ("priority",), f"must be a whole number >= 1 (1 first), "
                                                    f"not {shown_value(value)}")
            else:
                meta["priority"] = value
        if "metadata" in entry:
            if not isinstance(entry["metadata"], dict):
                self.problem(where + ("metadata",), "must be a mapping")
            else:
                meta["metadata"] = entry["metadata"]
        return meta


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


# the words PyYAML reads as booleans (YAML 1.1), so a table says what inline YAML would
_BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def _cell_value(column: str, cell: str) -> Any:
    """A run table cell as YAML would give it, so that the checks of a system see the same
    values: true/false for the yes-or-no columns, whole numbers for priority, else text."""
    if column in ("baseline", "official", "pooled") and cell.lower() in _BOOLEANS:
        return _BOOLEANS[cell.lower()]
    if column == "priority" and re.fullmatch(r"[+-]?[0-9]{1,18}", cell):
        return int(cell)
    return cell


def shown_value(value: Any) -> str:
    """``repr(value)`` for a message, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
