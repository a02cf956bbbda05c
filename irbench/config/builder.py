"""The config builder: YAML to a checked :class:`~irbench.config.types.Config`, every
problem at once with its file, line and YAML path."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import judgments
from ..errors import ConfigError, IrbenchError
from ..measures import Measure, parse_measure
from ..yamlfile import parse_yaml, read_text, yaml_path
from .collections import collection_names, view_data
from .documents import build_documents
from .report import ReportSpec, build_report
from .reproductions import build_reproductions
from .systems import SystemsBuilder
from .types import (
    DEFAULT_COLLECTION,
    ENGINES,
    NAME_RE,
    TOP_KEYS,
    TOPIC_MODES,
    Collection,
    Config,
    QrelsSet,
    Settings,
    Validation,
    cluster_address_problem,
    default_store,
)

if TYPE_CHECKING:  # imported by _judges when a config has judges
    from ..judges.spec import JudgeSpec


def file_name(name: str) -> str:
    """A system's name as a file name: itself when it is letters, digits, '.', '_' and '-'
    (not starting with '.'), else those kept and a hash of the name added."""
    if NAME_RE.fullmatch(name):
        return name
    kept = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")[:80]
    return f"{kept}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def load_config(path: str | os.PathLike, strict: bool = True, systems: bool = True,
                collection: str | None = None) -> Config:
    """Read and validate a campaign config; every problem is reported in one ConfigError.

    ``strict=False`` lets a system whose run file is missing through (listed in
    ``missing_runs``), so that the runner scores the others and reports it at the end.
    ``systems=False`` leaves the systems out (no run file, glob or run tag is looked at): for
    the report, which takes the systems from the store. A config with ``collections:`` is
    read as the view of the collection ``collection`` (:mod:`irbench.config.collections`);
    without one it is a ConfigError naming them (:func:`load_configs` reads every view). A
    ``collection`` given for a one-collection config must be its name (``default``).
    """
    views = load_configs(path, strict, systems, collection)
    if len(views) > 1:
        names = ", ".join(v.collection().name for v in views)
        raise ConfigError([f"{os.fspath(path)} has several collections ({names}): give "
                           "--collection NAME"])
    return views[0]


def load_configs(path: str | os.PathLike, strict: bool = True, systems: bool = True,
                 collection: str | None = None) -> list[Config]:
    """Every collection's view of the config (one for a config with ``collection:``), or
    that of ``collection`` alone; the problems of every view in one ConfigError, each once."""
    path = os.fspath(path)
    raw, text = read_text(path, "the config")
    data, reader = parse_yaml(path, text)
    if not isinstance(data, dict):
        raise ConfigError([f"{path}:1: a config is a mapping with collection, systems, suites"])
    sha256 = hashlib.sha256(raw).hexdigest()
    names = collection_names(data, lambda where, reason: reader.problems.append(
        f"{path}:{reader.line(where)}: {yaml_path(where)}: {reason}"))
    if names is None:  # one collection
        if collection not in (None, DEFAULT_COLLECTION):
            raise ConfigError([f"{path}: has one collection (collection:), not '{collection}'"])
        return [Builder(path, data, reader, sha256=sha256, strict=strict,
                        systems=systems).build()]
    if reader.problems:
        raise ConfigError(list(reader.problems))
    if collection is not None and collection not in names:
        raise ConfigError([f"{path}: no collection '{collection}' (it has {', '.join(names)})"])
    views, problems = [], []
    for name in [collection] if collection is not None else names:
        reader.problems = []
        view, rename = view_data(data, name)
        builder = Builder(path, view, reader, sha256=sha256, strict=strict, systems=systems)
        builder.rename = rename
        try:
            views.append(replace(builder.build(), scope=name, collections_named=tuple(names)))
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(list(dict.fromkeys(problems)))
    return views


class Builder(SystemsBuilder):
    def build(self) -> Config:
        for key in self.data:
            if key not in TOP_KEYS:
                self.problem((key,), f"unknown key (a config has {', '.join(sorted(TOP_KEYS))})")
        for key in ("collection", "systems", "suites"):
            if key not in self.data:
                self.problem((), f"'{key}' is missing")
        topics, qrels, size = self._collection()
        systems = self._systems() if self.with_systems else self._table_paths()
        suites = self._suites()
        settings = self._settings(size)
        store = self._store()
        systems = self._produced_paths(systems, store)
        validation = self._validation()
        cluster = self._execution()
        report = self._report(suites)
        judges = self._judges()
        reproductions = self._reproductions(systems, qrels, suites)
        name = self.data.get("name", os.path.splitext(os.path.basename(self.path))[0])
        if "name" in self.data and not (isinstance(name, str) and NAME_RE.fullmatch(name)):
            self.problem(("name",), "a campaign name is letters, digits, '.', '_' and '-', "
                                    "not starting with '.' (it names the report folder)")
        problems = self.reader.problems + (list(self.missing_runs.values()) if self.strict else [])
        if problems:
            raise ConfigError(sorted(problems, key=self._order))
        return Config(path=self.path, name=str(name), sha256=self.sha256, root=self.root,
                      collections=(Collection(name=self._collection_name(), topics=topics,
                                              qrels=qrels, known=self.known,
                                              documents=self.documents,
                                              grades=self.grades),),
                      systems=systems, suites=suites,
                      settings=settings, store=store, report=report,
                      missing_runs=self.missing_runs, validation=validation,
                      globs=tuple(self.globs), cluster=cluster, tables=tuple(self.tables),
                      lines=dict(self.reader.lines), judges=judges,
                      reproductions=reproductions)

    def _reproductions(self, systems: tuple, qrels: tuple, suites: dict) -> tuple:
        """The ``reproductions:`` section (:mod:`irbench.config.reproductions`)."""
        first = next((str(ms[0]) for ms in suites.values() if ms), "AP")
        return build_reproductions(
            self.data.get("reproductions"), qrels=[q.name for q in qrels],
            systems=[s.name for s in systems] if self.with_systems else None,
            default_measures=(first,), collection=self._collection_name(),
            several=self.rename(("collection",))[0] == "collections",
            problem=self.problem, line=lambda where: self.reader.line(self.rename(where)))

    def _produced_paths(self, systems: tuple, store: str) -> tuple:
        """Systems given as commands write their run beside the store:
        ``STORE.commands/<collection>/<system>.run``."""
        folder = os.path.join(os.path.splitext(store)[0] + ".commands", self._collection_name())
        return tuple(replace(s, path=os.path.join(folder, file_name(s.name) + ".run"))
                     if s.command is not None else s for s in systems)

    def _collection_name(self) -> str:
        """The collection's name: of a collections: config's view, its own; else default."""
        renamed = self.rename(("collection",))
        return str(renamed[1]) if renamed[0] == "collections" else DEFAULT_COLLECTION

    def _report(self, suites: dict[str, tuple[Measure, ...]]) -> ReportSpec:
        """The ``report:`` section; its problems are the report's (see
        :mod:`irbench.config.report`), not the config's."""
        value = self.data.get("report") or {}
        if not isinstance(value, dict):
            self.problem(("report",), "must be a mapping of report options")
            return ReportSpec()
        found: list[tuple[int, str]] = []

        def problem(where: tuple, reason: str) -> None:
            found.append((self.reader.line(where), f"{self._at(where)}: {reason}"))

        measures = tuple(dict.fromkeys(m for ms in suites.values() for m in ms))
        spec = build_report(value, measures, problem, tuple(suites))
        return replace(spec, problems=tuple(text for _, text in
                                            sorted(found, key=lambda p: p[0])))

    def _judges(self) -> dict[str, JudgeSpec]:
        """``judges: {NAME: {base_url, model, ...}}``: model judges (see
        :mod:`irbench.judges.spec`); a prompt template file is read relative to the config."""
        value = self.data.get("judges")
        if value is None:
            return {}
        from ..judges.spec import build_judge  # 22 ms (certifi, the prompts): judges' configs
        if not isinstance(value, dict):
            self.problem(("judges",), "a mapping of judge name: {base_url, model, ...}")
            return {}

        def template(where: tuple, path: str) -> str | None:
            full = self._resolve(where, path)
            if full is None:
                return None
            try:
                return read_text(full, "the prompt template")[1]
            except IrbenchError as exc:
                self.problem(where, str(exc))
                return None

        judges = {}
        for name, spec in value.items():
            if not (isinstance(name, str) and NAME_RE.fullmatch(name)):
                self.problem(("judges", name), "a judge name is letters, digits, '.', '_' "
                                               "and '-'")
                continue
            built = build_judge(name, spec, self.problem, template)
            if built is not None:
                judges[name] = built
        return judges

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

    # -- sections

    def _collection(self):
        section = self.data.get("collection")
        if section is None:
            return None, (), 0
        if not isinstance(section, dict):
            self.problem(("collection",), "must be a mapping with topics and qrels")
            return None, (), 0
        for key in section:
            if key not in ("topics", "qrels", "size", "known", "documents", "grades"):
                self.problem(("collection", key),
                             "unknown key (topics, qrels, size, known, documents, grades)")
        if "grades" in section:
            self.grades = self._grades(section["grades"])
        if "documents" in section:
            self.documents = build_documents(section["documents"], self._resolve,
                                             self.problem)
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

    def _grades(self, value: Any) -> tuple[tuple[int, str], ...]:
        """``collection.grades``: {level: name}, levels 0 to 9 (an assessor's key each), names
        of at most 40 printable characters; (level, name) by level."""
        where = ("collection", "grades")
        if not isinstance(value, dict) or not value:
            self.problem(where, "a mapping of level: name, e.g. {0: not relevant, 1: relevant, "
                                "2: highly relevant}")
            return ()
        grades = []
        for key, name in value.items():  # keys as the reader gives them: text
            level = int(key) if str(key).isascii() and str(key).isdigit() else -1
            if isinstance(key, bool) or not 0 <= level <= 9:
                self.problem(where + (key,), "a level is a whole number from 0 to 9")
            elif not isinstance(name, str) or not name.strip() or len(name) > 40 \
                    or not name.isprintable():
                self.problem(where + (key,), "a level's name is text of 1 to 40 printable "
                                               "characters")
            else:
                grades.append((level, " ".join(name.split())))
        return tuple(sorted(grades))

    def _qrels_set(self, where: tuple, name: str, value: Any) -> QrelsSet | None:
        if not isinstance(value, dict):
            resolved = self._resolve(where, value)
            return None if resolved is None else QrelsSet(name, resolved)
        for key in value:
            if key not in ("path", "kind", "intent_weights", "model"):
                self.problem(where + (key,), "unknown key (path, kind, intent_weights, model)")
        model = value.get("model")
        if model is not None and not (isinstance(model, str) and model.strip()):
            self.problem(where + ("model",), "the model whose labels these are (a name)")
            model = None
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
        return None if path is None else QrelsSet(name, path, kind, weights, model)

    def _has_set_of(self, kinds: tuple[str, ...]) -> bool:
        qrels = (self.data.get("collection") or {}).get("qrels") if isinstance(
            self.data.get("collection"), dict) else None
        return isinstance(qrels, dict) and any(
            isinstance(v, dict) and v.get("kind") in kinds for v in qrels.values())

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
        return Settings(topics=topics, relevance_level=level, depth=depth,
                        judged_only=judged_only, duplicates=duplicates, collection_size=size)

    def _validation(self) -> Validation | None:
        value = self.data.get("validation")
        if value is None:
            return None
        from ..submissions import Rules, build_rules, load_rules

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
