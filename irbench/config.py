"""Campaign configs: a YAML file declaring topics, qrels sets, systems, measure suites, options.

``load_config(path)`` returns a :class:`Config` or raises one :class:`ConfigError` listing
every problem with its file, line and YAML path (``systems[3].run: no such file 'runs/x.txt'``).
YAML is read with PyYAML's safe loader only (``yaml.compose`` with ``SafeLoader``, then the
safe constructor for scalars), which also gives each value's line.

Paths are relative to the config file. They may not leave the campaign folder, unless written
as absolute paths: the campaign folder is the config's folder, or its parent when the config
sits in a folder named ``configs`` (the layout ``configs/`` beside ``runs/``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from . import judgments
from .errors import ConfigError, FormatError, IrbenchError
from .judgments.irds import is_irds, materialise
from .measures import Measure, parse_measure
from .ranked import EvalOptions
from .runner.stamp import glob_matches
from .submissions import Rules, build_rules, load_rules
from .system import System
from .trec import glob_url, is_url, run_name, run_tag
from .yamlfile import LineReader, line_of, parse_yaml, read_text, yaml_path

TOPIC_MODES = ("qrels", "intersection")
SYSTEM_KEYS = {"name", "run", "glob", "name_from", "group", "type", "description", "baseline",
               "official", "priority", "pooled", "metadata"}
# PyYAML's safe loader, in C (libyaml) when PyYAML was built with it: the same documents, faster
NAME_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
TOP_KEYS = {"name", "collection", "systems", "suites", "evaluation", "store", "report",
            "validation", "execution"}
ENGINES = ("local", "dask")
# the columns of a run table (systems: {table: FILE}); run is required
TABLE_COLUMNS = ("run", "name", "group", "type", "description", "baseline", "official",
                 "priority", "pooled")
MAX_TABLE_ROWS = 100_000  # rows in one run table (a campaign has hundreds)
MAX_TABLE_BYTES = 32 * 2**20




@dataclass(frozen=True)
class QrelsSet:
    """A named qrels file (``official``, ``depth10`` ...) of a kind of judgments
    (:data:`irbench.judgments.KINDS`): ``adhoc`` (``qid iter docno rel``, the default),
    ``diversity`` (ndeval's ``topic subtopic docno rel``, with optional ``intent_weights``:
    ``topic subtopic weight`` lines, default uniform), or trec_eval's ``-R`` formats
    ``qrels_jg``, ``prefs`` and ``qrels_prefs``. The kind decides which measures it scores."""

    name: str
    path: str
    kind: str = judgments.DEFAULT_KIND
    intent_weights: str | None = None

    def read(self):
        """The ad hoc judgments (a :class:`~irbench.trec.Qrels`): the file itself, or each
        document at its highest level over subtopics or judgment groups (for preferences:
        1 when some judgment gives it a positive level, else 0)."""
        return judgments.kind(self.kind).read_adhoc(self.path, name=self.name)

    def takes(self, measure: Measure) -> bool:
        """Whether this set scores ``measure`` (its kind computes it)."""
        return judgments.takes(self.kind, measure)

    def measures(self, measures) -> list[Measure]:
        """Those of ``measures`` this set scores, in their order."""
        return [m for m in measures if self.takes(m)]


@dataclass(frozen=True)
class TableRow:
    """Where a system of a run table was declared: the table as messages name it (relative to
    the working folder when the config's path is) and the row's first line. Inside a
    ``where`` tuple it stands for the row, so that problems read ``runs.tsv:7: pooled: ...``."""

    file: str
    line: int


def cluster_address_problem(address) -> str | None:
    """Why ``address`` is not a Dask scheduler address (``tcp://host:port``, ``tls://...``,
    ``host:port``) nor ``local`` / ``local:N``; None when it is one."""
    if not isinstance(address, str) or not address.strip():
        return "a Dask scheduler's address (tcp://host:8786), or local / local:N"
    if address == "local":
        return None
    if address.startswith("local:"):
        n = address[len("local:"):]
        return None if n.isdigit() and int(n) >= 1 else \
            f"local:N takes a number of workers >= 1, not {n!r}"
    if any(c.isspace() for c in address) or ":" not in address:
        return f"{address!r} is not a scheduler address (tcp://host:port)"
    return None


def pooled_systems(systems) -> tuple[str, ...] | None:
    """The systems the judgments were pooled from, when ``systems`` declare it (any with
    ``pooled:``; then exactly those with ``pooled: true``), else None."""
    if all(s.pooled is None for s in systems):
        return None
    return tuple(s.name for s in systems if s.pooled)


def priority_order(systems) -> list:
    """``systems`` as pooling takes them: by group (a system without one is its own group),
    then ``priority`` (1 first; none last), then the order given."""
    return [s for _, s in sorted(enumerate(systems), key=lambda item: (
        item[1].group or item[1].name,
        item[1].priority if item[1].priority is not None else float("inf"), item[0]))]


@dataclass(frozen=True)
class Settings:
    """Evaluation options of a campaign; :meth:`key` is recorded with every stored score.

    topics: ``qrels`` scores every qrels topic, a topic missing from a run scoring 0 as
    trec_eval ``-c`` does; ``intersection`` scores only the topics a run answers.
    relevance_level (``-l``), depth (``-M``, None: no cap), judged_only (``-J``), duplicates
    (``error`` or ``first``), collection_size (``-N``, from ``collection.size``).
    """

    topics: str = "qrels"
    relevance_level: int = 1
    depth: int | None = None
    judged_only: bool = False
    duplicates: str = "error"
    collection_size: int = 0

    def options(self) -> EvalOptions:
        return EvalOptions(relevance_level=self.relevance_level, max_docs=self.depth,
                           judged_only=self.judged_only, complete=True,
                           collection_size=self.collection_size, duplicates=self.duplicates)

    def key(self) -> str:
        """Canonical JSON of the options (sorted keys), part of every stored result's key."""
        return json.dumps(self.__dict__, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Validation:
    """Submission checks inside ``irbench run`` (the ``validation:`` section): ``rules`` as
    ``irbench validate`` takes them; ``on_error``: ``fail`` (a rejected run is not scored) or
    ``warn`` (its problems are printed, it is scored)."""

    rules: Any
    on_error: str = "fail"


@dataclass(frozen=True)
class Config:
    path: str
    name: str
    sha256: str
    root: str
    topics: str | None
    qrels: tuple[QrelsSet, ...]
    systems: tuple[System, ...]
    suites: dict[str, tuple[Measure, ...]]
    settings: Settings
    store: str
    report: dict
    missing_runs: dict = field(default_factory=dict, hash=False, compare=False)
    validation: Validation | None = None
    known: str | None = None  # qrels of the documents users already know (Coverage, Novelty)
    # the systems' glob patterns (absolute) with the files each matched when the config was read
    globs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # where runs are scored (the execution: section): None, this machine's worker processes;
    # else a Dask scheduler's address, or "local" / "local:N" (a LocalCluster for the run)
    cluster: str | None = None
    # the run tables the systems were read from (absolute paths), in config order
    tables: tuple[str, ...] = ()
    # the line of every value of the config, by YAML path (for problems found after loading)
    lines: dict = field(default_factory=dict, hash=False, compare=False, repr=False)

    def inputs(self) -> tuple[str, ...]:
        """Every file a run of this config reads besides the config: topics, qrels sets, the
        known-documents qrels, run tables, runs, validation rules and their docnos list
        (sorted, once)."""
        paths = {self.topics, self.known, *self.tables, *(q.path for q in self.qrels),
                 *(q.intent_weights for q in self.qrels), *(s.path for s in self.systems)}
        rules = self.validation.rules if self.validation is not None else None
        paths |= {getattr(rules, "path", None), getattr(rules, "docnos", None)}
        return tuple(sorted(p for p in paths if isinstance(p, str)))

    def line(self, *path) -> int:
        """The line of a value of the config (``config.line("report", "measure")``): its
        own, else its nearest parent's, else 1."""
        return line_of(self.lines, path)

    def at(self, *path) -> str:
        """``FILE:LINE: yaml.path`` of a value of the config, for problems found after
        loading, in the form of the config's own."""
        return f"{self.path}:{self.line(*path)}: {yaml_path(path)}"

    def qrels_path(self, name: str) -> str:
        return next(q.path for q in self.qrels if q.name == name)

    def pooled_systems(self) -> tuple[str, ...] | None:
        """The systems the judgments were pooled from (see :func:`pooled_systems`)."""
        return pooled_systems(self.systems)

    @property
    def measures(self) -> tuple[Measure, ...]:
        """Every measure of every suite, once, in suite order."""
        out: list[Measure] = []
        for measures in self.suites.values():
            out.extend(m for m in measures if m not in out)
        return tuple(out)


# ---- loading -------------------------------------------------------------------------------


def campaign_root(config_path: str) -> str:
    """The folder a config's relative paths must stay in (see the module docstring)."""
    folder = os.path.dirname(os.path.abspath(config_path))
    return os.path.dirname(folder) if os.path.basename(folder) == "configs" else folder


def default_store(config_path: str) -> str:
    """``runs/<config name>.duckdb`` beside ``configs/``, else ``<config name>.duckdb`` beside
    the config."""
    folder = os.path.dirname(os.path.abspath(config_path))
    stem = os.path.splitext(os.path.basename(config_path))[0]
    if os.path.basename(folder) == "configs":
        return os.path.join(os.path.dirname(folder), "runs", f"{stem}.duckdb")
    return os.path.join(folder, f"{stem}.duckdb")


def load_config(path: str | os.PathLike, strict: bool = True, systems: bool = True) -> Config:
    """Read and validate a campaign config; every problem is reported in one ConfigError.

    ``strict=False`` lets a system whose run file is missing through (listed in
    ``missing_runs``), so that the runner scores the others and reports it at the end.
    ``systems=False`` leaves the systems out (no run file, glob or run tag is looked at): for
    the report, which takes the systems from the store.
    """
    path = os.fspath(path)
    raw, text = read_text(path, "the config")
    data, reader = parse_yaml(path, text)
    if not isinstance(data, dict):
        raise ConfigError([f"{path}:1: a config is a mapping with collection, systems, suites"])
    return _Builder(path, data, reader, hashlib.sha256(raw).hexdigest(), strict,
                    systems).build()


class _Builder:
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
        self.globs: list[tuple[str, tuple[str, ...]]] = []
        self.tables: list[str] = []  # run tables read, absolute
        self.table_names: list[str] = []  # ... as messages name them

    def problem(self, where: tuple, reason: str) -> None:
        self.reader.problems.append(f"{self._at(where)}: {reason}")

    def _at(self, where: tuple) -> str:
        """``FILE:LINE: yaml.path`` of a place in the config, or ``TABLE:LINE: column`` of a
        place in a run table (a :class:`TableRow` in ``where``)."""
        row = next((i for i, part in enumerate(where) if isinstance(part, TableRow)), None)
        if row is None:
            return f"{self.path}:{self.reader.line(where)}: {yaml_path(where)}"
        rest = where[row + 1:]
        return f"{where[row].file}:{where[row].line}" + (f": {yaml_path(rest)}" if rest else "")

    def _named(self, where: tuple) -> str:
        """How a message names another place: its YAML path, or ``TABLE:LINE``."""
        row = next((part for part in where if isinstance(part, TableRow)), None)
        return yaml_path(where) if row is None else f"{row.file}:{row.line}"

    def _order(self, message: str) -> tuple[int, int]:
        """Problems in file order (the config, then each run table), then line order."""
        for i, file in enumerate([self.path, *self.table_names]):
            if message.startswith(file + ":"):
                head = message[len(file) + 1:].split(":", 1)[0]
                return i, int(head) if head.isdigit() else 0
        return 0, 0

    def build(self) -> Config:
        for key in self.data:
            if key not in TOP_KEYS:
                self.problem((key,), f"unknown key (a config has {', '.join(sorted(TOP_KEYS))})")
        for key in ("collection", "systems", "suites"):
            if key not in self.data:
                self.problem((), f"'{key}' is missing")
        topics, qrels, size = self._collection()
        systems = self._systems() if self.with_systems else ()
        suites = self._suites()
        settings = self._settings(size)
        store = self._store()
        validation = self._validation()
        cluster = self._execution()
        report = self.data.get("report") or {}
        if not isinstance(report, dict):
            self.problem(("report",), "must be a mapping of report options")
            report = {}
        name = self.data.get("name", os.path.splitext(os.path.basename(self.path))[0])
        if "name" in self.data and not (isinstance(name, str) and NAME_RE.fullmatch(name)):
            self.problem(("name",), "a campaign name is letters, digits, '.', '_' and '-', "
                                    "not starting with '.' (it names the report folder)")
        problems = self.reader.problems + (list(self.missing_runs.values()) if self.strict else [])
        if problems:
            raise ConfigError(sorted(problems, key=self._order))
        return Config(self.path, str(name), self.sha256, self.root, topics, qrels, systems,
                      suites, settings, store, report, self.missing_runs, validation,
                      self.known, tuple(self.globs), cluster, tuple(self.tables),
                      dict(self.reader.lines))

    def _execution(self) -> str | None:
        """``execution: {engine: local | dask, address: ...}``: the Dask scheduler's address
        (``tcp://host:port``, or ``local`` / ``local:N`` for a LocalCluster of N workers)."""
        value = self.data.get("execution")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem(("execution",), "a mapping with engine (local or dask) and address")
            return None
        for key in value:
            if key not in ("engine", "address"):
                self.problem(("execution", key), "unknown key (engine, address)")
        engine = value.get("engine", "local")
        if engine not in ENGINES:
            self.problem(("execution", "engine"), f"must be one of {', '.join(ENGINES)}")
            return None
        address = value.get("address")
        if engine == "local":
            if address is not None:
                self.problem(("execution", "address"), "only the dask engine takes an address")
            return None
        problem = cluster_address_problem(address)
        if problem:
            self.problem(("execution", "address"), problem)
            return None
        return address

    # -- paths

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
            self.problem(where, f"{_not_a_file(full)} '{value}'")
            return None
        return full

    def _escapes(self, path: str) -> bool:
        """Whether ``path`` (inside the campaign folder as written) resolves outside it
        through a symbolic link."""
        real_root = os.path.realpath(self.root)
        return os.path.commonpath([os.path.realpath(path), real_root]) != real_root

    # -- sections

    def _collection(self):
        section = self.data.get("collection")
        if section is None:
            return None, (), 0
        if not isinstance(section, dict):
            self.problem(("collection",), "must be a mapping with topics and qrels")
            return None, (), 0
        for key in section:
            if key not in ("topics", "qrels", "size", "known"):
                self.problem(("collection", key), "unknown key (topics, qrels, size, known)")
        topics = None
        if "topics" in section:
            topics = self._resolve(("collection", "topics"), section["topics"])
        if "known" in section:
            self.known = self._resolve(("collection", "known"), section["known"])
        qrels_value = section.get("qrels")
        entries: list[tuple[tuple, str, Any]] = []
        if qrels_value is None:
            self.problem(("collection",), "'qrels' is missing")
        elif isinstance(qrels_value, str):
            entries.append((("collection", "qrels"), "official", qrels_value))
        elif isinstance(qrels_value, dict) and qrels_value:
            entries = [(("collection", "qrels", k), k, v) for k, v in qrels_value.items()]
        else:
            self.problem(("collection", "qrels"), "a path, or a mapping of name: path")
        qrels = []
        for where, name, value in entries:
            spec = self._qrels_set(where, str(name), value)
            if spec is not None:
                qrels.append(spec)
        size = section.get("size", 0)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            self.problem(("collection", "size"), "must be a whole number of documents")
            size = 0
        return topics, tuple(qrels), size

    def _qrels_set(self, where: tuple, name: str, value: Any) -> QrelsSet | None:
        if not isinstance(value, dict):
            resolved = self._resolve(where, value)
            return None if resolved is None else QrelsSet(name, resolved)
        for key in value:
            if key not in ("path", "kind", "intent_weights"):
                self.problem(where + (key,), "unknown key (path, kind, intent_weights)")
        kind = value.get("kind", judgments.DEFAULT_KIND)
        kinds = list(judgments.KINDS)
        if kind not in kinds:
            self.problem(where + ("kind",), f"must be {', '.join(kinds[:-1])} or {kinds[-1]}")
            return None
        if "path" not in value:
            self.problem(where, "'path' is missing")
            return None
        path = self._resolve(where + ("path",), value["path"])
        weights = None
        if "intent_weights" in value:
            if not judgments.kind(kind).intent_weights:
                takers = [k.name for k in judgments.KINDS.values() if k.intent_weights]
                self.problem(where + ("intent_weights",), f"only a {takers[0]} qrels set has "
                                                          f"intent weights (kind: {takers[0]})")
                return None
            weights = self._resolve(where + ("intent_weights",), value["intent_weights"])
            if weights is None:
                return None
        return None if path is None else QrelsSet(name, path, kind, weights)

    def _has_set_of(self, kinds: tuple[str, ...]) -> bool:
        qrels = (self.data.get("collection") or {}).get("qrels") if isinstance(
            self.data.get("collection"), dict) else None
        return isinstance(qrels, dict) and any(
            isinstance(v, dict) and v.get("kind") in kinds for v in qrels.values())

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
                self.problem(at_header, f"column {i}: unknown column {_shown(written.strip())} "
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
            if not is_url(path) and not os.path.isfile(path):  # a URL: the run tells
                self.missing_runs[str(name)] = (f"{self._at(where + ('run',))}: "
                                                f"{_not_a_file(path)} '{entry['run']}'")
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
                                 f"must be true or false, not {_shown(entry[key])}")
                else:
                    meta[key] = entry[key]
        if "priority" in entry:
            value = entry["priority"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                self.problem(where + ("priority",), f"must be a whole number >= 1 (1 first), "
                                                    f"not {_shown(value)}")
            else:
                meta["priority"] = value
        if "metadata" in entry:
            if not isinstance(entry["metadata"], dict):
                self.problem(where + ("metadata",), "must be a mapping")
            else:
                meta["metadata"] = entry["metadata"]
        return meta

    def _suites(self) -> dict[str, tuple[Measure, ...]]:
        value = self.data.get("suites")
        if value is None:
            return {}
        if not isinstance(value, dict) or not value:
            self.problem(("suites",), "a mapping of suite name: [measures]")
            return {}
        suites = {}
        for name, measures in value.items():
            where = ("suites", name)
            if not isinstance(measures, list) or not measures:
                self.problem(where, "a list of measure names")
                continue
            parsed = []
            for i, text in enumerate(measures):
                measure = self._measure(where + (i,), text)
                if measure is not None and measure not in parsed:
                    parsed.append(measure)
            suites[str(name)] = tuple(parsed)
        return suites

    def _measure(self, where: tuple, text: Any) -> Measure | None:
        if not isinstance(text, str):
            self.problem(where, "a measure name, e.g. nDCG@10")
            return None
        try:
            measure = parse_measure(text)
        except IrbenchError as exc:
            self.problem(where, str(exc))
            return None
        family = measure.definition
        if family.kind == "str" or family.aggregate in ("none", "summary"):
            self.problem(where, f"'{text}' is not a number per topic, so it cannot be stored")
            return None
        serving = judgments.serving(measure)
        if not any(k.name == judgments.DEFAULT_KIND for k in serving) and not any(
                self._has_set_of((k.name,)) for k in serving):
            self.problem(where, f"'{text}' needs {serving[0].set_phrase}: give one in "
                                f"collection.qrels as {{path: FILE, kind: {serving[0].name}}}")
            return None
        if family.needs == "known":
            if "known" not in (self.data.get("collection") or {}):
                self.problem(where, f"'{text}' needs the documents the user already knows: "
                                    "give their qrels as collection.known")
                return None
            if (self.data.get("evaluation") or {}).get("topics") == "intersection":
                self.problem(where, f"'{text}' is not available with topics: intersection")
                return None
        return measure

    def _settings(self, size: int) -> Settings:
        value = self.data.get("evaluation") or {}
        if not isinstance(value, dict):
            self.problem(("evaluation",), "a mapping of evaluation options")
            return Settings(collection_size=size)
        known = {"topics", "relevance_level", "depth", "judged_only", "duplicates"}
        for key in value:
            if key not in known:
                self.problem(("evaluation", key), f"unknown option ({', '.join(sorted(known))})")
        topics = value.get("topics", "qrels")
        if topics not in TOPIC_MODES:
            self.problem(("evaluation", "topics"), "must be qrels (trec_eval -c) or intersection")
            topics = "qrels"
        level = value.get("relevance_level", 1)
        if not isinstance(level, int) or isinstance(level, bool) or level < 0:
            self.problem(("evaluation", "relevance_level"), "must be a whole number >= 0")
            level = 1
        depth = value.get("depth")
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool)
                                  or depth < 1):
            self.problem(("evaluation", "depth"), "must be a positive whole number (or null)")
            depth = None
        judged_only = value.get("judged_only", False)
        if not isinstance(judged_only, bool):
            self.problem(("evaluation", "judged_only"), "must be true or false")
            judged_only = False
        duplicates = value.get("duplicates", "error")
        if duplicates not in ("error", "first"):
            self.problem(("evaluation", "duplicates"), "must be error or first")
            duplicates = "error"
        return Settings(topics, level, depth, judged_only, duplicates, size)

    def _validation(self) -> Validation | None:
        value = self.data.get("validation")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem(("validation",), "a mapping with rules (a file or a mapping) and "
                                          "on_error (fail or warn)")
            return None
        for key in value:
            if key not in ("rules", "on_error"):
                self.problem(("validation", key), "unknown key (rules, on_error)")
        on_error = value.get("on_error", "fail")
        if on_error not in ("fail", "warn"):
            self.problem(("validation", "on_error"), "must be fail or warn")
            on_error = "fail"
        rules = value.get("rules", {})
        if isinstance(rules, str):
            path = self._resolve(("validation", "rules"), rules)
            if path is None:
                return None
            try:
                return Validation(load_rules(path), on_error)
            except ConfigError as exc:
                self.reader.problems.extend(exc.problems)
                return None
        if not isinstance(rules, dict):
            self.problem(("validation", "rules"), "a rules file, or a mapping of rules")
            return None
        built = build_rules(rules, lambda where, reason: self.problem(
            ("validation", "rules") + tuple(where), reason), self.folder)
        return Validation(built if isinstance(built, Rules) else Rules(), on_error)

    def _store(self) -> str:
        if "store" not in self.data:
            return default_store(self.path)
        value = self.data["store"]
        path = self._resolve(("store",), value, must_exist=False)
        if path is None:
            return default_store(self.path)
        folder = os.path.dirname(path)
        while folder and not os.path.exists(folder):
            folder = os.path.dirname(folder)
        if os.path.isdir(path) or (folder and not os.path.isdir(folder)):
            self.problem(("store",), f"'{value}' cannot hold the store: "
                                     + ("it is a folder" if os.path.isdir(path)
                                        else f"{folder} is a file, not a folder"))
        return path


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


def _shown(value: Any) -> str:
    """``repr(value)`` for a message, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _not_a_file(path: str) -> str:
    """Why ``path`` cannot be read as an input file."""
    if os.path.isdir(path):
        return "is a folder, not a file"
    if os.path.exists(path):
        return "is not a regular file (a pipe, device or socket)"
    return "no such file"
