"""What a campaign config holds, once checked: Config and its parts (qrels sets, settings,
validation), the keys and limits a config may use."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import judgments
from ..documents.spec import DocumentsSpec
from ..errors import ConfigError, MissingRunsError, UnknownQrelsSetError
from ..measures import Measure
from ..ranked import EvalOptions
from ..system import System, read_system_run
from ..yamlfile import line_of, yaml_path
from .report import ReportSpec
from .reproductions import Reproduction

if TYPE_CHECKING:
    from ..judges.spec import JudgeSpec
    from ..pooling import RunTable

TOPIC_MODES = ("qrels", "intersection")
SYSTEM_KEYS = {"name", "run", "glob", "name_from", "group", "type", "description", "baseline",
               "official", "priority", "pooled", "metadata", "answers", "kind", "format",
               "command", "inputs", "env", "timeout"}
COMMAND_KEYS = ("command", "inputs", "env", "timeout")  # a system given as a command
# PyYAML's safe loader, in C (libyaml) when PyYAML was built with it: the same documents, faster
NAME_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
TOP_KEYS = {"name", "collection", "collections", "systems", "suites", "evaluation", "store",
            "report", "validation", "execution", "judges", "reproductions"}
ENGINES = ("local", "dask")
# the system fields a run table's columns give (systems: {table: FILE}): by their own name or
# mapped (columns: {pooled: judged_depth100}); run is required (a column, or the run template);
# every other column is the system's metadata
TABLE_COLUMNS = ("run", "name", "group", "type", "description", "baseline", "official",
                 "priority", "pooled", "kind", "format")
TABLE_KEYS = ("table", "columns", "run")  # the keys of a run table entry
# what a yes-or-no cell of a run table may say (any letter case): YAML 1.1's words, y/n, 1/0
TABLE_BOOLEANS = {"true": True, "yes": True, "y": True, "on": True, "1": True,
                  "false": False, "no": False, "n": False, "off": False, "0": False}
MAX_TABLE_ROWS = 100_000  # rows in one run table (a campaign has hundreds)
MAX_TABLE_BYTES = 32 * 2**20
MISSING_RUNS = ("refuse", "drop")  # what Config.run_table does with a missing run file


@dataclass(frozen=True)
class QrelsSet:
    """A named qrels file (``official``, ``depth10`` ...) of a kind of judgments
    (:data:`irbench.judgments.KINDS`): ``adhoc`` (``qid iter docno rel``, the default),
    ``diversity`` (ndeval's ``topic subtopic docno rel``, with optional ``intent_weights``:
    ``topic subtopic weight`` lines, default uniform), or trec_eval's ``-R`` formats
    ``qrels_jg``, ``prefs`` and ``qrels_prefs``. The kind decides which measures it scores.
    ``model``: the model whose labels the set holds, alone (an LLM judge's qrels), for the
    report's warnings; a set written by ``irbench qrels`` is known by its sha256 instead."""

    name: str
    path: str
    kind: str = judgments.DEFAULT_KIND
    intent_weights: str | None = None
    model: str | None = None

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


DEFAULT_COLLECTION = "default"  # the name of the config's one collection: section


@dataclass(frozen=True, kw_only=True)
class Collection:
    """What a campaign is evaluated on: its topic file (None when the config gives none), its
    qrels sets (named, in config order), the qrels of the documents users already know
    (``known``, for Coverage and Novelty) and where document text comes from (``documents``,
    for judges and assessors). A config holds one today (``collection:``, named
    :data:`DEFAULT_COLLECTION`); :attr:`Config.collections` is where the next go."""

    name: str = DEFAULT_COLLECTION
    topics: str | None = None
    qrels: tuple[QrelsSet, ...] = ()
    known: str | None = None
    documents: DocumentsSpec | None = None
    grades: tuple[tuple[int, str], ...] = ()  # (level, its name), by level: the grading scheme


@dataclass(frozen=True)
class TableRow:
    """Where a system of a run table was declared: the table as messages name it (relative to
    the working folder when the config's path is) and the row's first line. Inside a
    ``where`` tuple it stands for the row, so that problems read ``runs.tsv:7: pooled: ...``
    (``runs.tsv:7: judged_depth100 (pooled): ...`` for a mapped column)."""

    file: str
    line: int
    # (system field, how a message names its column) where the column is not called by the
    # field's name: ("pooled", "judged_depth100 (pooled)")
    labels: tuple[tuple[str, str], ...] = ()

    def label(self, part):
        """How a message names ``part`` of a place in this row: a field by its column."""
        return dict(self.labels).get(part, part) if isinstance(part, str) else part


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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class Config:
    path: str
    name: str
    sha256: str
    root: str
    # the collections the config evaluates on (the collection: section: one today)
    collections: tuple[Collection, ...]
    systems: tuple[System, ...]
    suites: dict[str, tuple[Measure, ...]]
    settings: Settings
    store: str
    report: ReportSpec
    missing_runs: dict = field(default_factory=dict, hash=False, compare=False)
    validation: Validation | None = None
    # the systems' glob patterns (absolute) with the files each matched when the config was read
    globs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # where runs are scored (the execution: section): None, this machine's worker processes;
    # else a Dask scheduler's address, or "local" / "local:N" (a LocalCluster for the run)
    cluster: str | None = None
    # the run tables the systems were read from (absolute paths), in config order
    tables: tuple[str, ...] = ()
    # the line of every value of the config, by YAML path (for problems found after loading)
    lines: dict = field(default_factory=dict, hash=False, compare=False, repr=False)
    # model judges by name (the judges: section)
    judges: dict[str, JudgeSpec] = field(default_factory=dict, hash=False)
    # the part of the store this config's scores are in: "main" for a config with one
    # collection; a collections: config's view of collection NAME, NAME (a schema of the store
    # file: irbench.config.collections)
    scope: str = "main"
    # every collection of a collections: config, in order (empty: one collection:)
    collections_named: tuple[str, ...] = ()
    # original systems and their reproductions (the reproductions: section)
    reproductions: tuple[Reproduction, ...] = ()

    @property
    def several(self) -> bool:
        """Whether this is one collection's view of a config with ``collections:``."""
        return bool(self.collections_named)

    def collection(self, name: str | None = None) -> Collection:
        """The collection called ``name`` (None: the first, today the only one); an unknown
        name is a ConfigError naming the collections."""
        for collection in self.collections:
            if name is None or collection.name == name:
                return collection
        raise ConfigError([f"no collection '{name}' in {self.path} (it has "
                           f"{', '.join(c.name for c in self.collections) or 'none'})"])

    @property
    def topics(self) -> str | None:
        """The topic file of the collection (collection.topics), or None."""
        return self.collection().topics

    @property
    def qrels(self) -> tuple[QrelsSet, ...]:
        """The qrels sets of the collection, in config order."""
        return self.collection().qrels

    @property
    def known(self) -> str | None:
        """The qrels of the documents users already know (collection.known: Coverage,
        Novelty), or None."""
        return self.collection().known

    @property
    def documents(self) -> DocumentsSpec | None:
        """Where the collection's document text comes from (collection.documents), for
        judges and assessors; None when the config does not say."""
        return self.collection().documents

    @property
    def grades(self) -> tuple[tuple[int, str], ...]:
        """The collection's grading scheme (collection.grades): (level, its name), by level;
        empty when the config does not say (the assessment desk's keys, ...)."""
        return self.collection().grades

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

    def qrels_set(self, name: str | None = None) -> QrelsSet:
        """The qrels set called ``name`` of the collection (None: the first the config
        declares, the default of every command). An unknown name is an
        :class:`UnknownQrelsSetError` (a ConfigError of exit status 1) naming the config, its
        sets and the closest name."""
        sets = {q.name: q for q in self.qrels}
        wanted = next(iter(sets), None) if name is None else name
        if wanted is not None and wanted in sets:
            return sets[wanted]
        import difflib

        close = difflib.get_close_matches(str(wanted), list(sets), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownQrelsSetError([f"no qrels set '{wanted}' in {self.path} (it has "
                                    f"{', '.join(sets) or 'none'}{hint})"])

    def run_table(self, missing: str = "refuse", *, topics: Iterable[str | bytes] | None = None,
                  depth: int | None = None) -> RunTable:
        """The pooling :class:`~irbench.pooling.RunTable` of the config's systems in
        :func:`priority_order`, each run read through its source (:mod:`irbench.system`).

        ``missing`` says what a system whose run file is missing (``missing_runs``, only in a
        config loaded with ``strict=False``) does: ``"refuse"`` (the default: a pool, the
        assessment desk and ``irbench pool`` number candidates over every system, so one
        run less would make another table) raises :class:`MissingRunsError` naming each at
        its config line; ``"drop"`` leaves those systems out (a model judge labels what the
        present runs retrieved). ``topics`` and ``depth`` are :func:`build_table`'s."""
        from ..pooling import build_table

        if missing not in MISSING_RUNS:
            raise ValueError(f"missing must be one of {', '.join(MISSING_RUNS)}, "
                             f"not {missing!r}")
        absent = [s.name for s in self.systems if s.name in self.missing_runs]
        if absent and missing == "refuse":
            raise MissingRunsError(["run files missing: " + "; ".join(
                self.missing_runs[n] for n in absent)])
        systems = [s for s in priority_order(self.systems) if s.name not in self.missing_runs]
        return build_table([(s.name, s.group or s.name, read_system_run(s)) for s in systems],
                           topics=topics, depth=depth)

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
