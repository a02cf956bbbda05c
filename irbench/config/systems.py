"""The ``systems:`` section: inline entries, globs and run tables (CSV/TSV), every problem
with its file and line."""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from ..answers import FORMATS, answer_tag
from ..errors import CommandError, ConfigError
from ..runner.stamp import glob_matches
from ..system import SYSTEM_KINDS, System, source_of
from ..trec import glob_url, is_url, run_name, run_tag
from . import tables
from .base import BuilderBase, not_a_file
from .tables import shown_value
from .types import COMMAND_KEYS, SYSTEM_KEYS, TABLE_COLUMNS, TABLE_KEYS, TableRow

DEFAULT_TIMEOUT = 3600.0  # seconds a command may run (a system's timeout: overrides it)
MAX_TIMEOUT = 7 * 24 * 3600


def answer_formats() -> list[str]:
    """The answer formats' names (:data:`irbench.answers.FORMATS`)."""
    return list(FORMATS)


class SystemsBuilder(BuilderBase):
    """The ``systems:`` section of a config: inline entries, globs and run tables, each system
    checked by the same code (mixed into the config builder)."""

    def _systems(self) -> tuple[System, ...]:
        value = self.data.get("systems")
        if value is None:
            return ()
        items: list[tuple[tuple[str | int, ...], Any]]
        if isinstance(value, dict) and "table" in value and set(value) <= set(TABLE_KEYS) \
                and not isinstance(value["table"], dict):  # systems: {table: FILE, ...}
            items = [(("systems",), value)]
        elif isinstance(value, dict):
            if "table" in value:
                self.problem(("systems", "table"), "a run table is given alone (systems: "
                             "{table: FILE}, with its columns and run) or as an item of the "
                             "systems list (- table: FILE); a system named table is written "
                             "in the list form")
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
        """The rows of the run table of ``entry`` (``{table: FILE, columns: {...}, run:
        TEMPLATE}``, see :mod:`irbench.config.tables`) as ``(where, entry, folder)``: each row
        an entry as a YAML system would be (yes-or-no cells as booleans, whole numbers for
        priority, the other columns as its metadata; an empty cell as no key), ``where`` its
        :class:`TableRow`, ``folder`` the table's, to which its run paths are relative.
        Problems of the table itself are reported at its line (the header at its own)."""
        for key in entry:
            if key not in TABLE_KEYS:
                self.problem(where + (key,), "unknown key (a run table entry takes table, "
                                             "columns and run; the systems' fields are "
                                             "columns of the table)")
        value = entry["table"]
        if is_url(value):
            self.problem(where + ("table",), "a run table is a local file (its runs may be "
                                             "URLs)")
            return []
        path = self._resolve(where + ("table",), value)

        def at_entry(place: tuple, reason: str) -> None:
            self.problem(where + place, reason)

        columns = tables.column_map(entry.get("columns"), at_entry)
        template = tables.run_template(entry["run"], at_entry) if "run" in entry else None
        if path is None:
            return []
        shown = self._table_name(value)
        self.tables.append(path)
        self.table_names.append(shown)
        try:
            header, rows = tables.read_table(path, shown)
        except ConfigError as exc:
            self.reader.problems.extend(exc.problems)
            return []
        if header is None:
            self.problem(where + ("table",), f"'{value}' is empty: a run table has a header "
                                             f"row naming its columns ({', '.join(TABLE_COLUMNS)}"
                                             ", any other kept as metadata), then a row per "
                                             "system")
            return []
        line, names = header
        at_header = ("systems", TableRow(shown, line))
        for i in tables.nameless(names, rows):
            self.problem(at_header, f"column {i} has no name")
        if columns is None or ("run" in entry and template is None):
            return []
        layout = tables.layout(names, columns, template, shown,
                               lambda place, reason: self.problem(at_header + place, reason),
                               at_entry)
        if layout is None:
            return []
        if not rows:
            self.problem(at_header, "no rows under the header")
        out = []
        for line, cells in rows:
            row_where = ("systems", TableRow(shown, line, layout.labels))
            if len(cells) > len(names):
                self.problem(row_where, f"{len(cells)} cells, the header names "
                                        f"{len(names)} columns")
                continue
            row = tables.row_entry(layout, cells, partial(self._row_problem, row_where))
            if row is None:
                continue
            row.setdefault("name", run_name(row["run"]))
            out.append((row_where, row, os.path.dirname(path)))
        return out

    def _row_problem(self, row_where: tuple, place: tuple, reason: str) -> None:
        self.problem(row_where + place, reason)

    def _table_name(self, value: str) -> str:
        """A run table's path as messages name it (relative when the config's path is)."""
        return os.path.normpath(os.path.join(os.path.dirname(self.path),
                                             os.path.expanduser(value)))

    def _table_paths(self) -> tuple[System, ...]:
        """With the systems left out (``load_config(systems=False)``): the run tables' paths
        alone, for the report's provenance; nothing checked, no table read."""
        value = self.data.get("systems")
        entries = [value] if isinstance(value, dict) else value if isinstance(value, list) \
            else []
        for entry in entries:
            table = entry.get("table") if isinstance(entry, dict) else None
            if isinstance(table, str) and table.strip() and not is_url(table):
                self.tables.append(os.path.normpath(os.path.join(
                    self.folder, os.path.expanduser(table))))
                self.table_names.append(self._table_name(table))
        return ()

    def _system(self, where: tuple, entry: dict, folder: str | None = None) -> list[System]:
        """The systems of one entry of ``systems:`` (or row of a run table, whose run path is
        relative to ``folder``), each problem reported at ``where``."""
        for key in entry:
            if key == "runs":
                self.problem(where + (key,), "a run file per collection: a mapping of "
                             "collection name: file, in a config with collections:")
            elif key not in SYSTEM_KEYS:
                self.problem(where + (key,), f"unknown key ({', '.join(sorted(SYSTEM_KEYS))})")
        meta = self._metadata(where, entry)
        if "command" in entry:
            return self._command(where, entry, meta)
        if given := [k for k in COMMAND_KEYS if k in entry]:
            self.problem(where + (given[0],), "goes with command: (a system given as a command)")
        if "answers" in entry:  # answers: FILE, the run file of a system of kind answers
            if "run" in entry or entry.get("kind", "answers") != "answers":
                self.problem(where + ("answers",), "answers: FILE declares a system of "
                                                   "kind answers (not with run: or another "
                                                   "kind)")
                return []
            entry = {**{k: v for k, v in entry.items() if k != "answers"},
                     "run": entry["answers"]}
            meta["kind"] = "answers"
        if ("run" in entry) == ("glob" in entry):
            self.problem(where, "give either run (one file), answers (one answer file) or "
                                "glob (many files)")
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

    def _command(self, where: tuple, entry: dict, meta: dict) -> list[System]:
        """A system given as a command (``command``, ``inputs``, ``env``, ``timeout``): its run
        is written by ``irbench run`` (:mod:`irbench.runner.produced`) at a path of the
        store's (set by the builder once the store is known)."""
        from ..runner.commands import CommandSpec, placeholders_used

        name = entry.get("name")
        if not isinstance(name, (str, int)) or not str(name).strip():
            self.problem(where + ("name",), "every system needs a name")
            return []
        if others := [k for k in ("run", "glob", "answers", "table") if k in entry]:
            self.problem(where + (others[0],), "a system given as a command writes its run "
                                               "({run}): not with run, glob, answers or table")
            return []
        inputs = self._names(where + ("inputs",), entry.get("inputs", []), "files and folders")
        for i, path in enumerate(inputs):
            full = self._resolve(where + ("inputs", i), path, must_exist=False)
            if full is not None and not os.path.exists(full):
                self.problem(where + ("inputs", i), f"no such file or folder '{path}'")
        env = self._names(where + ("env",), entry.get("env", []), "environment variable names")
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
                not 0 < timeout <= MAX_TIMEOUT:
            self.problem(where + ("timeout",), f"seconds, more than 0 and at most "
                                               f"{MAX_TIMEOUT:,}")
            timeout = DEFAULT_TIMEOUT
        try:
            spec = CommandSpec(command=entry["command"], inputs=tuple(inputs), env=tuple(env),
                               timeout=float(timeout), cwd=self.folder) \
                if isinstance(entry["command"], str) else None
        except CommandError as exc:
            self.problem(where + ("command",), str(exc))
            return []
        if spec is None:
            self.problem(where + ("command",), "a command line, e.g. python bm25.py --topics "
                                               "{topics} --out {run}")
            return []
        used = placeholders_used(spec.command)
        if "run" not in used:
            self.problem(where + ("command",), "the command must write its run to {run}")
        if "qrels" in used:  # tuned on the judgments: the report says so
            meta["metadata"] = {**meta.get("metadata", {}), "tuned_on_qrels": True}
        return [System(str(name), "", command=spec, **meta)]

    def _names(self, where: tuple, value: Any, what: str) -> list[str]:
        """A list of non-empty strings (``what`` in the message), or [] with the problem."""
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip()
                                                  for v in value):
            self.problem(where, f"a list of {what}")
            return []
        return value

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
            name = (run_name(path) if name_from == "file" else
                    answer_tag(path, meta.get("answer_format")) if meta.get("kind") == "answers"
                    else run_tag(path))
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
        meta.update(self._kind(where, entry))
        if "metadata" in entry:
            if not isinstance(entry["metadata"], dict):
                self.problem(where + ("metadata",), "must be a mapping")
            else:
                meta["metadata"] = entry["metadata"]
        return meta

    def _kind(self, where: tuple, entry: dict) -> dict:
        """``kind`` (run or answers; answers: FILE says answers) and ``format`` (an answer
        format's name, for answers)."""
        out: dict[str, Any] = {}
        kind = entry.get("kind", "run")
        if kind not in SYSTEM_KINDS:
            self.problem(where + ("kind",), f"must be {' or '.join(SYSTEM_KINDS)}, not "
                                            f"{shown_value(kind)}")
        elif kind != "run":
            out["kind"] = kind
        if "format" in entry:
            value = entry["format"]
            if "answers" not in entry and kind != "answers":
                self.problem(where + ("format",), "format is an answer run's (kind: answers)")
            elif not isinstance(value, str) or value not in answer_formats():
                self.problem(where + ("format",), f"must be one of "
                                                  f"{', '.join(answer_formats())}, not "
                                                  f"{shown_value(value)}")
            else:
                out["answer_format"] = value
        return out
