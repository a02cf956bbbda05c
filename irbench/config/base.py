"""The config builder's base: where each problem is (file, line, YAML path or run table
line) and how paths are resolved inside the campaign folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..documents.spec import DocumentsSpec
from ..errors import FormatError
from ..judgments.irds import is_irds, materialise
from ..trec import is_url
from ..yamlfile import LineReader, yaml_path
from .types import TableRow, campaign_root


class BuilderBase:
    """Problems collected with their place; paths resolved and checked."""

    def __init__(self, path: str, data: dict, reader: LineReader, sha256: str, strict: bool,
                 systems: bool = True):
        self.strict = strict
        self.with_systems = systems
        self.path = path
        self.data = data
        self.reader = reader
        self.sha256 = sha256
        self.folder = os.path.dirname(os.path.abspath(path))
        self.root = campaign_root(path)
        self.missing_runs: dict[str, str] = {}
        self.known: str | None = None
        self.documents: DocumentsSpec | None = None
        self.grades: tuple[tuple[int, str], ...] = ()
        self.globs: list[tuple[str, tuple[str, ...]]] = []
        self.tables: list[str] = []  # run tables read, absolute
        self.table_names: list[str] = []  # ... as messages name them
        # where a place of the config the builder reads was written (a collection's view of a
        # config with collections: its collection section and runs, irbench.config.collections)
        self.rename: Callable[[tuple], tuple] = lambda where: where

    def problem(self, where: tuple, reason: str) -> None:
        self.reader.problems.append(f"{self._at(where)}: {reason}")

    def _at(self, where: tuple) -> str:
        """``FILE:LINE: yaml.path`` of a place in the config, or ``TABLE:LINE: column`` of a
        place in a run table (a :class:`TableRow` in ``where``)."""
        where = self.rename(where)
        row = next((i for i, part in enumerate(where) if isinstance(part, TableRow)), None)
        if row is None:
            return f"{self.path}:{self.reader.line(where)}: {yaml_path(where)}"
        rest = tuple(where[row].label(part) for part in where[row + 1:])
        return f"{where[row].file}:{where[row].line}" + (f": {yaml_path(rest)}" if rest else "")

    def _named(self, where: tuple) -> str:
        """How a message names another place: its YAML path, or ``TABLE:LINE``."""
        where = self.rename(where)
        row = next((part for part in where if isinstance(part, TableRow)), None)
        return yaml_path(where) if row is None else f"{row.file}:{row.line}"

    def _order(self, message: str) -> tuple[int, int]:
        """Problems in file order (the config, then each run table), then line order."""
        for i, file in enumerate([self.path, *self.table_names]):
            if message.startswith(file + ":"):
                head = message[len(file) + 1:].split(":", 1)[0]
                return i, int(head) if head.isdigit() else 0
        return 0, 0

    def _resolve(self, where: tuple, value: Any, must_exist: bool = True,
                 folder: str | None = None) -> str | None:
        """The absolute path of a file the config names (relative to ``folder``, by default
        the config's), or None with the problem reported: outside the campaign folder unless
        written absolute, a link leading out of it, or (``must_exist``) not a file."""
        if not isinstance(value, str) or not value.strip():
            self.problem(where, "must be a file path")
            return None
        if is_irds(value) and where[:2] in (("collection", "topics"), ("collection", "qrels"),
                                           ("collection", "known")) \
                and where[-1] != "intent_weights":
            try:  # an ir_datasets dataset's topics or qrels, written once as a plain file
                return materialise(value, "topics" if where[1] == "topics" else "qrels")
            except FormatError as exc:
                for problem in exc.problems:
                    self.problem(where, problem)
                return None
        if is_url(value):  # read through fsspec, taken as written
            if where[0] not in ("collection", "systems"):
                self.problem(where, "a URL is taken for topics, qrels and run files only")
                return None
            return value
        expanded = os.path.expanduser(value)
        if os.path.isabs(expanded):
            full = os.path.normpath(expanded)
        else:
            full = os.path.normpath(os.path.join(folder or self.folder, expanded))
            if os.path.commonpath([full, self.root]) != self.root:
                self.problem(where, f"'{value}' leaves the campaign folder {self.root} "
                                    "(write an absolute path to allow it)")
                return None
        if not os.path.isabs(expanded) and self._escapes(full):
            self.problem(where, f"'{value}' is a link leading out of the campaign folder "
                                f"{self.root} (write the absolute path to allow it)")
            return None
        if must_exist and not os.path.isfile(full):
            self.problem(where, f"{not_a_file(full)} '{value}'")
            return None
        return full

    def _escapes(self, path: str) -> bool:
        """Whether ``path`` (inside the campaign folder as written) resolves outside it
        through a symbolic link."""
        real_root = os.path.realpath(self.root)
        return os.path.commonpath([os.path.realpath(path), real_root]) != real_root


def not_a_file(path: str) -> str:
    """Why ``path`` cannot be read as an input file."""
    if os.path.isdir(path):
        return "is a folder, not a file"
    if os.path.exists(path):
        return "is not a regular file (a pipe, device or socket)"
    return "no such file"
