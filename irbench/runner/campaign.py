"""The runner: score every system of a config on every qrels set for every measure, into the store.

:func:`run_campaign` plans from content hashes (the store keeps sha256 per path, size and
mtime, so an unchanged file is not read again), evaluates only the (system, qrels set,
measure) results the store lacks, in worker processes when there is enough work, and writes
each system's results in one transaction as they arrive. Problems with one system or qrels set
become :class:`Failure` entries; everything else is still scored (``fail_fast`` stops at the
first instead).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

import numpy as np

from .. import __version__, judgments
from ..config import Config, QrelsSet, Settings, Validation
from ..errors import EvaluationError, FormatError, IrbenchError
from ..measures import PROFILE, Measure, parse_measure
from ..measures.compute import compute, restrict
from ..ranked import PreparedQrels
from ..store import Evaluated, Store, SystemRecord
from ..submissions import check_run, report_lines
from ..submissions.ir_metadata import find_ir_metadata, run_fields
from ..topics import Topics, read_topics
from ..trec import display, is_url, read_qrels, read_run, read_url, url_stat
from .parallel import die_with_parent

_PROFILE = "profile:"  # a task's measure name for a value kept for the report only
_PROFILE_NAMES = tuple(_PROFILE + name for name in PROFILE)
PARALLEL_MIN_BYTES = 8 << 20  # less run data than this is scored in the main process
FLUSH_SYSTEMS, FLUSH_SECONDS = 32, 2.0  # write the store at least this often


@dataclass(frozen=True)
class Failure:
    """What could not be scored, and why (the message names the file and line)."""

    subject: str  # "system 'x'", "qrels 'official'", "qrels 'official', measure ERR@20"
    message: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


@dataclass
class RunReport:
    """The outcome of :func:`run_campaign`."""

    store: str
    runner_id: int
    systems: int
    qrels: int
    measures: int
    evaluated: int = 0   # (system, qrels set) pairs computed now
    reused: int = 0      # pairs already in the store
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    analysed: list[str] = field(default_factory=list)  # the report analyses computed now
    seconds: float = 0.0


@dataclass(frozen=True)
class _Task:
    system: str
    path: str
    # qrels set -> canonical measure names to compute; "profile:NAME" for the report's profile
    measures: dict[str, tuple[str, ...]]
    hashed: bool = True  # False: the file's hash is unknown, so drop what the store has
    check_only: bool = False  # irbench check: rank against every set, compute nothing


@dataclass(frozen=True, kw_only=True)
class _Outcome:
    """What scoring one system gave: its file's facts, what it answers, its results or why it
    has none (built by keyword only)."""

    system: str
    path: str
    sha256: str = ""
    stat: tuple[int, int] = (0, 0)
    run_tag: str = ""
    topics: tuple[str, ...] = ()  # the topics the run answers
    num_docs: int = 0
    results: tuple[Evaluated, ...] = ()
    error: str | None = None
    reused: tuple[str, ...] = ()  # qrels sets whose results the store already had
    metadata: dict | None = None  # the run's ir_metadata block
    validation: tuple[str, str, tuple[str, ...]] | None = None  # verdict, problems JSON, lines


# ---- hashing -------------------------------------------------------------------------------


def _stat(path: str) -> tuple[int, int]:
    """(size, mtime in ns) of a file; of an object at a URL, (size, a version token)."""
    if is_url(path):
        return url_stat(path)
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def _known_hash(path: str, cache: dict, rehash: bool) -> str | None:
    """The file's sha256 from the store's cache if its size and mtime are unchanged."""
    if rehash or path not in cache:
        return None
    try:
        size, mtime = _stat(path)
    except OSError:
        return None
    cached = cache[path]
    if is_url(path) and mtime == 0:  # the object store gives no version: read it again
        return None
    return cached[2] if (cached[0], cached[1]) == (size, mtime) else None


def _sha256_file(path: str) -> tuple[str, bytes]:
    if is_url(path):
        data = read_url(path)
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    return hashlib.sha256(data).hexdigest(), data


class _Loaded:
    """A file already in memory, readable by the TREC readers under its own path."""

    def __init__(self, name: str, data: bytes):
        self.name = name
        self._data = data

    def read(self) -> bytes:
        return self._data


# ---- the work done per system (in a worker or in-process) ----------------------------------


@dataclass
class _Context:
    qrels: _QrelsSets | dict[str, PreparedQrels]
    qrels_sha: dict[str, str]
    topic_set: frozenset | None
    settings: Settings
    done: dict  # (run sha256, qrels sha256) -> measures the store has
    topics: Topics | None = None  # the Topics, for the submission checks
    validation: Validation | None = None  # None: no submission checks
    shard_bytes: int = 0  # a run file bigger than this is scored in topic shards (0: never)


_CONTEXT: _Context | None = None


def _init_worker(qrels_specs: dict[str, QrelsSet], qrels_sha: dict[str, str],
                 topic_set: frozenset | None, settings: Settings, done: dict, topics,
                 validation, known) -> None:
    global _CONTEXT
    die_with_parent()
    prepared = _QrelsSets(known)
    for spec in qrels_specs.values():
        prepared.add(spec)
    _CONTEXT = _Context(prepared, qrels_sha, topic_set, settings, done, topics, validation)


def _check_submission(ctx: _Context, path: str):
    """(verdict, problems as JSON, report lines) of the submission checks, or None."""
    if ctx.validation is None:
        return None
    check = check_run(path, ctx.validation.rules, ctx.topics)
    lines = tuple(report_lines(check, ctx.validation.rules.max_shown))
    problems = json.dumps([{"line": p.line, "check": p.check, "severity": p.severity,
                            "message": p.message} for p in check.problems])
    return check.verdict, problems, lines


def _score_system(task: _Task, ctx: _Context | None = None) -> _Outcome:
    """Read one run, check its topics, and evaluate it on every qrels set it needs (with
    ``ctx``, else this process's context)."""
    ctx = ctx if ctx is not None else _CONTEXT
    if ctx is None:
        raise RuntimeError("_score_system outside a worker initialised by _init_worker")
    stat = _stat(task.path)
    if ctx.shard_bytes and stat[0] > ctx.shard_bytes and not is_url(task.path) and all(
            isinstance(ctx.qrels[q], PreparedQrels) for q in task.measures):
        return _score_in_shards(task, ctx, stat)
    sha, data = _sha256_file(task.path)
    todo = task.measures
    reused: tuple[str, ...] = ()
    if not task.hashed:  # e.g. a touched file: compute only what the store lacks
        todo = {q: tuple(n for n in names if n not in ctx.done.get((sha, ctx.qrels_sha[q]), ()))
                for q, names in task.measures.items()}
        reused = tuple(q for q, names in todo.items() if not names)
        if len(reused) == len(todo):
            return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                            reused=reused)
    metadata = find_ir_metadata(data).data
    validation = _check_submission(ctx, task.path)
    if validation is not None and validation[0] == "rejected" and \
            ctx.validation is not None and ctx.validation.on_error == "fail":
        return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                        metadata=metadata,
                        validation=validation,
                        error="rejected by the submission checks:\n" + "\n".join(validation[2]))
    try:
        run = read_run(_Loaded(task.path, data), name=task.system)
    except FormatError as exc:
        return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat, error=str(exc),
                        metadata=metadata, validation=validation)
    topics = tuple(display(t) for t in np.unique(run.query_id))
    stray = _unknown_topics(task.path, run.query_id, run.line, ctx.topic_set)
    if stray is not None:
        return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                        run_tag=run.runid, topics=topics, num_docs=len(run),
                        error=stray)
    options = ctx.settings.options()
    results = []
    try:
        for qrels_name, names in todo.items():
            if not names and not task.check_only:
                continue
            ranked = ctx.qrels[qrels_name].rank(run, options)
            if ctx.settings.topics == "intersection":
                ranked = restrict(ranked, ~ranked.missing)
            if not names:  # checked: the run ranks against this set
                continue
            suite = [n for n in names if not n.startswith(_PROFILE)]
            kept = [n[len(_PROFILE):] for n in names if n.startswith(_PROFILE)]
            parsed = {n: parse_measure(n) for n in dict.fromkeys(suite + kept)}
            values, summaries = compute(ranked, list(parsed.values()))
            results.append(Evaluated(
                system=task.system, qrels=qrels_name, run_sha256=sha,
                qrels_sha256=ctx.qrels_sha[qrels_name],
                topics=tuple(display(t) for t in ranked.topics),
                values={n: np.asarray(values[parsed[n]], dtype=np.float64) for n in suite},
                summaries={n: float(summaries[parsed[n]]) for n in suite},
                profile={n: float(summaries[parsed[n]]) for n in kept}))
    except (FormatError, EvaluationError) as exc:
        return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                        run_tag=run.runid, topics=topics, num_docs=len(run),
                        error=str(exc))
    return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                    run_tag=run.runid, topics=topics, num_docs=len(run),
                    results=tuple(results), reused=reused, metadata=metadata,
                    validation=validation)


def _score_in_shards(task: _Task, ctx: _Context, stat: tuple[int, int]) -> _Outcome:
    """A run file too big to hold: hashed as a stream and scored in topic shards
    (:func:`irbench.runner.parallel.evaluate_sharded`), one qrels set at a time. Its submission
    checks are not run (they read the whole file)."""
    from .parallel import evaluate_sharded

    digest = hashlib.sha256()
    with open(task.path, "rb") as fh:
        head = fh.read(1 << 20)
        digest.update(head)
        for block in iter(lambda: fh.read(1 << 24), b""):
            digest.update(block)
    sha = digest.hexdigest()
    metadata = find_ir_metadata(head).data
    todo = task.measures if task.hashed else {
        q: tuple(n for n in names if n not in ctx.done.get((sha, ctx.qrels_sha[q]), ()))
        for q, names in task.measures.items()}
    reused = tuple(q for q, names in todo.items() if not names)
    shards = -(-stat[0] // ctx.shard_bytes)
    results: list[Evaluated] = []
    answered: tuple[str, ...] = ()
    num_docs, runid = 0, ""
    try:
        for qrels_name, names in todo.items():
            if not names:
                continue
            suite = [n for n in names if not n.startswith(_PROFILE)]
            kept = [n[len(_PROFILE):] for n in names if n.startswith(_PROFILE)]
            parsed = {n: parse_measure(n) for n in dict.fromkeys(suite + kept)}
            done = evaluate_sharded(ctx.qrels[qrels_name].qrels, task.path,
                                    list(parsed.values()), ctx.settings.options(), shards,
                                    intersection=ctx.settings.topics == "intersection")
            answered = tuple(display(t) for t in done.answered)
            num_docs, runid = done.num_docs, done.runid
            stray = sorted(set(answered) - set(ctx.topic_set)) if ctx.topic_set else []
            if stray:
                return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                                run_tag=runid, topics=answered, num_docs=num_docs,
                                error=f"{task.path}: topics not in the topic set: "
                                f"{_listed(stray)}")
            results.append(Evaluated(
                system=task.system, qrels=qrels_name, run_sha256=sha,
                qrels_sha256=ctx.qrels_sha[qrels_name],
                topics=tuple(display(t) for t in done.topics),
                values={n: done.values[parsed[n]] for n in suite},
                summaries={n: float(done.summaries[parsed[n]]) for n in suite},
                profile={n: float(done.summaries[parsed[n]]) for n in kept}))
    except IrbenchError as exc:
        return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                                run_tag=runid, topics=answered, num_docs=num_docs,
                        error=str(exc), metadata=metadata)
    return _Outcome(system=task.system, path=task.path, sha256=sha, stat=stat,
                    run_tag=runid, topics=answered, num_docs=num_docs,
                    results=tuple(results), reused=reused, metadata=metadata)


# ---- the campaign --------------------------------------------------------------------------


def _environment() -> dict:
    import duckdb

    return {"python": platform.python_version(), "numpy": np.__version__,
            "duckdb": duckdb.__version__, "platform": platform.platform(),
            "host": platform.node(), "pid": os.getpid(), "argv": sys.argv[1:]}


class _QrelsSets:
    """Qrels sets by name, read and prepared on first use (a rerun with nothing to compute
    never reads them) by the judgments registry; a set of a kind that serves the known
    documents gets them attached when the config has them."""

    def __init__(self, known=None):
        self.specs: dict[str, QrelsSet] = {}
        self.known = known  # qrels of the documents users already know, or None
        self._prepared: dict[str, judgments.Prepared] = {}

    def add(self, spec: QrelsSet, prepared=None) -> None:
        self.specs[spec.name] = spec
        if prepared is not None:
            self._prepared[spec.name] = self._with_known(spec, prepared)

    def _with_known(self, spec: QrelsSet, prepared: judgments.Prepared) -> judgments.Prepared:
        if self.known is None or "known" not in judgments.kind(spec.kind).serves:
            return prepared
        return judgments.with_known(prepared, self.known)

    def __getitem__(self, name: str):
        if name not in self._prepared:
            spec = self.specs[name]
            self._prepared[name] = self._with_known(spec, _prepare(spec))
        return self._prepared[name]


def _prepare(spec: QrelsSet, source=None, weights=None):
    """A qrels set prepared for ranking runs (from ``source``, loaded bytes, if given; a URL
    is read here, as the readers take local paths)."""
    def loaded(path):
        return _Loaded(path, read_url(path)) if is_url(path) else path

    return judgments.prepare(spec.kind, source or loaded(spec.path), spec.name,
                             weights or (spec.intent_weights and loaded(spec.intent_weights)))


def _result_key(sha: str, kind: str, weights_sha: str | None) -> str:
    """What stored results of a qrels set are keyed by: its file's sha256 for ad hoc qrels;
    otherwise the sha256 of that joined with the kind (one file read as qrels and as
    preferences gives different judgments) and the intent weights' sha256."""
    if kind == judgments.DEFAULT_KIND and weights_sha is None:
        return sha
    return hashlib.sha256(f"{sha}+kind:{kind}+intent_weights:{weights_sha or ''}".encode()
                          ).hexdigest()


def _level_counts(prepared) -> list[int]:
    """Judgments per relevance level (of the ad hoc judgments of a diversity, judgment-group
    or preference set)."""
    return prepared.adhoc.level_counts.sum(axis=0).tolist()


class _Campaign:
    def __init__(self, config: Config, store: Store | None, workers: int | None, fail_fast: bool,
                 progress: Callable[[int, int, str], None] | None, rehash: bool):
        self.config = config
        self.store = store
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self.fail_fast = fail_fast
        self.progress = progress
        self.rehash = rehash
        self.settings = config.settings
        self.options_key, self.known = self._options_key(config)
        self.failures: list[Failure] = []
        self.warnings: list[str] = []
        self.new_hashes: list[tuple[str, int, int, str]] = []
        self.client = None  # a distributed.Client when runs are scored on a Dask cluster

    @staticmethod
    def _options_key(config: Config):
        """The evaluation options as stored with every result (with the known documents'
        sha256 when the config has them), and the known documents' qrels or None."""
        key = json.loads(config.settings.key())
        if config.known is None:
            return config.settings.key(), None
        try:
            sha, data = _sha256_file(config.known)
        except OSError as exc:
            raise IrbenchError(f"{config.known}: cannot read ({exc.strerror})") from None
        key["known_sha256"] = sha
        known = read_qrels(_Loaded(config.known, data), name="known")
        return json.dumps(key, sort_keys=True, separators=(",", ":")), known

    def fail(self, subject: str, message: str) -> None:
        self.failures.append(Failure(subject, message))
        if self.fail_fast:
            raise IrbenchError(f"{subject}: {message}")

    # -- inputs

    def read_topics(self):
        """(topics with their text, the topic set or None, sha256 of the topic file or '',
        the Topics or None)."""
        if self.config.topics is None:
            return [], None, "", None
        try:
            stat = _stat(self.config.topics)
            sha, data = _sha256_file(self.config.topics)
            self.new_hashes.append((self.config.topics, *stat, sha))
            topics = read_topics(_Loaded(self.config.topics, data))
        except OSError as exc:
            self.fail("topics", f"{self.config.topics}: cannot read ({exc.strerror})")
            return [], None, "", None
        except FormatError as exc:
            self.fail("topics", str(exc))
            return [], None, "", None
        return (list(zip(topics.query_id, topics.text)), frozenset(topics.query_id), sha,
                topics)

    def read_qrels(self, topic_set, topics_sha: str, cache: dict):
        """Check every qrels set; returns (lazily prepared qrels, result key by usable set, rows).

        A qrels file (and intent weights file) whose size and mtime are unchanged since it was
        last found usable (with the same topic file) is not read again: its counts come from
        the store. The result key of a set: see :func:`_result_key`."""
        stored = self.store.qrels_records() if self.store is not None else {}
        prepared = _QrelsSets(self.known)
        shas, rows = {}, []
        for spec in self.config.qrels:
            row: dict[str, Any] = {"name": spec.name, "path": spec.path, "kind": spec.kind,
                   "intent_weights": spec.intent_weights}
            rows.append(row)
            sha = _known_hash(spec.path, cache, self.rehash)
            weights_sha = (_known_hash(spec.intent_weights, cache, self.rehash)
                           if spec.intent_weights else None)
            prev = stored.get(spec.name)
            if (sha is not None and (weights_sha is not None or not spec.intent_weights)
                    and prev is not None and prev["status"] == "ok"
                    and (prev["path"], prev["sha256"], prev["topics_sha256"], prev["kind"],
                         prev["intent_weights_sha256"])
                    == (spec.path, sha, topics_sha, spec.kind, weights_sha)):
                level_counts, topics = list(prev["level_counts"]), list(prev["topics"])
                prepared.add(spec)
            else:
                loaded = self._read_one_qrels(spec, topic_set)
                if loaded is None:
                    continue
                sha, weights_sha, prep = loaded
                prepared.add(spec, prep)
                level_counts = _level_counts(prep)
                topics = [display(t) for t in prep.topics]
            levels = [i for i, n in enumerate(level_counts) if n]
            row.update(sha256=sha, intent_weights_sha256=weights_sha, num_topics=len(topics),
                       num_judged=int(sum(level_counts)),
                       num_relevant=int(sum(level_counts[self.settings.relevance_level:])),
                       max_level=max(levels) if levels else 0, level_counts=level_counts,
                       topics=topics, topics_sha256=topics_sha)
            if row["num_relevant"] == 0:
                self.fail(f"qrels '{spec.name}'", f"{spec.path}: no judgment reaches relevance "
                          f"level {self.settings.relevance_level}")
                continue
            shas[spec.name] = _result_key(sha, spec.kind, weights_sha)
        return prepared, shas, rows

    def _read_one_qrels(self, spec: QrelsSet, topic_set):
        """(sha256, intent weights' sha256 or None, prepared qrels), or None on a failure."""
        subject = f"qrels '{spec.name}'"
        try:
            stat = _stat(spec.path)
            sha, data = _sha256_file(spec.path)
            weights_sha = weights = None
            if spec.intent_weights:
                weights_stat = _stat(spec.intent_weights)
                weights_sha, weights_data = _sha256_file(spec.intent_weights)
                weights = _Loaded(spec.intent_weights, weights_data)
            prep = _prepare(spec, _Loaded(spec.path, data), weights)
        except OSError as exc:
            self.fail(subject, f"{exc.filename or spec.path}: cannot read ({exc.strerror})")
            return None
        except FormatError as exc:
            self.fail(subject, str(exc))
            return None
        self.new_hashes.append((spec.path, *stat, sha))
        if weights_sha is not None and spec.intent_weights is not None:
            self.new_hashes.append((spec.intent_weights, *weights_stat, weights_sha))
        qrels = prep.qrels
        stray = _unknown_topics(spec.path, qrels.query_id, qrels.line, topic_set)
        if stray is not None:
            self.fail(subject, stray)
            return None
        return sha, weights_sha, prep

    def measures_for(self, qrels_rows: list[dict], shas: dict) -> dict[str, tuple[Measure, ...]]:
        """The measures each usable qrels set can take (see Family.level_problem, which
        ``irbench eval`` asks too); diversity measures are taken by diversity sets only, Coverage
        and Novelty (which need the known documents) by ad hoc sets only."""
        out = {}
        specs = {spec.name: spec for spec in self.config.qrels}
        for row in qrels_rows:
            if row["name"] not in shas:
                continue
            usable = []
            for m in specs[row["name"]].measures(self.config.measures):
                problem = m.definition.level_problem(m, row["max_level"])
                if problem is not None and problem.fatal:
                    self.fail(f"qrels '{row['name']}', measure {m}",
                              f"{row['path']}: {problem.text}")
                    continue
                if problem is not None:
                    self.warnings.append(f"qrels '{row['name']}': {row['path']}: "
                                         f"{problem.text}")
                usable.append(m)
            out[row["name"]] = tuple(usable)
        return out

    # -- the plan

    def plan(self, measures: dict, shas: dict, cache: dict, done: dict):
        kinds = {spec.name: spec.kind for spec in self.config.qrels}
        measures = {q: tuple(map(str, ms)) + (_PROFILE_NAMES if kinds[q] == judgments.DEFAULT_KIND
                                              else ()) for q, ms in measures.items()}
        tasks, reuse = [], []
        for system in self.config.systems:
            if system.name in self.config.missing_runs:
                continue
            sha = _known_hash(system.path, cache, self.rehash)
            if sha is None:
                tasks.append(_Task(system.name, system.path, measures, hashed=False))
                continue
            todo = {}
            for qrels_name, ms in measures.items():
                have = done.get((sha, shas[qrels_name]), set())
                missing = tuple(m for m in ms if m not in have)
                if missing:
                    todo[qrels_name] = missing
                else:
                    reuse.append((system.name, qrels_name, sha, shas[qrels_name]))
            if todo:
                tasks.append(_Task(system.name, system.path, todo))
        return tasks, reuse

    def execute(self, tasks: list[_Task], context: _Context, on_outcome) -> None:
        if self.client is not None:
            return self._on_cluster(tasks, context, on_outcome)
        total_bytes = sum(os.path.getsize(t.path) for t in tasks if os.path.exists(t.path))
        workers = min(self.workers, len(tasks))
        global _CONTEXT
        if workers <= 1 or total_bytes < PARALLEL_MIN_BYTES:
            _CONTEXT = context
            try:
                for task in tasks:
                    on_outcome(self._safe(task))
            finally:
                _CONTEXT = None
            return
        if sys.platform.startswith("linux"):  # forked workers inherit the prepared qrels
            for name in context.qrels_sha:
                context.qrels[name]
            _CONTEXT = context
            kwargs = {"mp_context": get_context("fork"), "initializer": die_with_parent,
                      "initargs": (os.getpid(),)}
        else:
            specs = {name: context.qrels.specs[name] for name in context.qrels_sha}
            kwargs = {"mp_context": get_context("spawn"), "initializer": _init_worker,
                      "initargs": (specs, context.qrels_sha, context.topic_set,
                                   context.settings, context.done, context.topics,
                                   context.validation, context.qrels.known)}
        try:
            self._in_pool(tasks, workers, kwargs, on_outcome)
        finally:
            _CONTEXT = None

    def _in_pool(self, tasks: list[_Task], workers: int, kwargs: dict, on_outcome) -> None:
        with ProcessPoolExecutor(workers, **kwargs) as pool:
            pending = {pool.submit(_score_system, t): t for t in tasks}
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        task = pending.pop(future)
                        on_outcome(self._result(future, task))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise

    @staticmethod
    def _safe(task: _Task, ctx: _Context | None = None) -> _Outcome:
        try:
            return _score_system(task, ctx)
        except OSError as exc:
            return _Outcome(system=task.system, path=task.path,
                            error=f"{task.path}: cannot read ({exc.strerror})")

    def _on_cluster(self, tasks: list[_Task], context: _Context, on_outcome) -> None:
        """Each system a task on the Dask cluster of ``self.client``: the context, with every
        qrels set prepared here, goes to each worker once; outcomes come back as they finish
        and are written here (the store's single writer)."""
        from .parallel import map_on_cluster

        for name in context.qrels_sha:
            context.qrels[name]  # prepared once, here: workers need no qrels files

        def lost(task: _Task, exc: BaseException) -> _Outcome:
            return _Outcome(system=task.system, path=task.path, error=(
                f"{task.path}: not scored: Dask workers died while scoring it, more often "
                f"than the cluster retries a task ({exc}); nothing of it was stored, and the "
                "next 'irbench run' tries again"))

        map_on_cluster(self.client, _Campaign._safe, tasks, context,
                       lambda task, outcome: on_outcome(outcome), lost)

    @staticmethod
    def _result(future, task: _Task) -> _Outcome:
        try:
            return future.result()
        except OSError as exc:
            return _Outcome(system=task.system, path=task.path,
                            error=f"{task.path}: cannot read ({exc.strerror})")
        except BrokenProcessPool:  # a worker was killed: by the OOM killer, most often
            return _Outcome(system=task.system, path=task.path, error=(
                f"{task.path}: not scored: a worker process was killed while runs were being "
                f"scored (out of memory? {_memory_note()}); nothing of it was stored, and "
                "the next 'irbench run' tries again"))


def _memory_note() -> str:
    """This machine's memory, for messages about workers killed for want of it."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return "fewer --workers need less memory"
    return f"this machine has {pages * size / 2**30:.1f} GiB; fewer --workers need less"


def run_campaign(config: Config, workers: int | None = None, fail_fast: bool = False,
                 progress: Callable[[int, int, str], None] | None = None, wait: float = 0.0,
                 rehash: bool = False, cluster: str | None = None) -> RunReport:
    """Score ``config`` into its store; see the module docstring. Returns a :class:`RunReport`.

    ``cluster`` (else the config's ``execution:`` address): score the runs on that Dask
    cluster (a scheduler's address, or ``local`` / ``local:N``); the store is written here."""
    from contextlib import AbstractContextManager, nullcontext

    cluster = cluster or config.cluster
    engine: AbstractContextManager[Any]
    if cluster is not None:
        from .parallel import dask_client

        engine = dask_client(cluster)
    else:
        engine = nullcontext()
    with engine as client:
        return _run_campaign(config, workers, fail_fast, progress, wait, rehash, client,
                             cluster)


def _run_campaign(config, workers, fail_fast, progress, wait, rehash, client,
                  cluster) -> RunReport:
    started = time.perf_counter()
    with Store(config.store, wait=wait) as store:
        store.claim(config.name, os.path.abspath(config.path))
        camp = _Campaign(config, store, workers, fail_fast, progress, rehash)
        camp.client = client
        environment = _environment()
        environment["engine"] = {"name": "local", "workers": camp.workers} if client is None \
            else {"name": "dask", "address": cluster, "scheduler": client.scheduler.address,
                  "worker_threads": sum(client.nthreads().values())}
        runner_id = store.start_runner(os.path.abspath(config.path), config.sha256, __version__,
                                       camp.options_key, environment)
        report = RunReport(config.store, runner_id, len(config.systems), len(config.qrels),
                           len(config.measures))
        status = "interrupted"
        try:
            _run(camp, store, runner_id, report)
            status = "ok" if not camp.failures else "failed"
        except IrbenchError:
            status = "failed"
            raise
        finally:
            report.failures, report.warnings = camp.failures, camp.warnings
            store.finish_runner(runner_id, status, report.evaluated, report.reused,
                                len(camp.failures))
    report.seconds = time.perf_counter() - started
    return report


def check_campaign(config: Config, workers: int | None = None) -> tuple[list[Failure],
                                                                          list[str]]:
    """(failures, warnings): what ``irbench run`` would refuse or warn about, found by the
    very functions it uses, without a store: the known documents, the topics, every qrels set
    and measure, every run (read, its topics, the submission checks, ranked against every
    usable qrels set, which finds duplicates). Nothing is scored or written."""
    try:
        camp = _Campaign(config, None, workers, False, None, rehash=True)
    except IrbenchError as exc:
        return [Failure("known documents", str(exc))], []
    _, topic_set, topics_sha, topics_obj = camp.read_topics()
    prepared, shas, qrels_rows = camp.read_qrels(topic_set, topics_sha, {})
    camp.measures_for(qrels_rows, shas)
    for name, message in config.missing_runs.items():
        camp.fail(f"system '{name}'", message)

    def on_outcome(outcome: _Outcome) -> None:
        camp.warnings.extend(_validation_warnings(outcome))
        if outcome.error is not None:
            camp.fail(f"system '{outcome.system}'", outcome.error)

    tasks = [_Task(s.name, s.path, {q: () for q in shas}, check_only=True)
             for s in config.systems if s.name not in config.missing_runs]
    camp.execute(tasks, _Context(prepared, shas, topic_set, camp.settings, {}, topics_obj,
                                 config.validation), on_outcome)
    return camp.failures, camp.warnings


def _run(camp: _Campaign, store: Store, runner_id: int, report: RunReport) -> None:
    config = camp.config
    cache = store.cached_hashes()
    topics, topic_set, topics_sha, topics_obj = camp.read_topics()
    prepared, shas, qrels_rows = camp.read_qrels(topic_set, topics_sha, cache)
    measures = camp.measures_for(qrels_rows, shas)
    store.sync_declarations(
        topics,
        [(str(m), m.family, m.definition.aggregate, m.definition.description)
         for m in config.measures],
        [(suite, str(m), i) for suite, ms in config.suites.items() for i, m in enumerate(ms)],
        [_system_row(s, i) for i, s in enumerate(config.systems)],
        [{k: row.get(k) for k in ("name", "path", "kind", "intent_weights", "sha256",
                                  "intent_weights_sha256", "num_topics", "num_judged",
                                  "num_relevant", "max_level", "level_counts", "topics",
                                  "topics_sha256")} for row in qrels_rows])
    for row in qrels_rows:
        ok = row["name"] in shas
        failure = next((f.message for f in camp.failures
                        if f.subject == f"qrels '{row['name']}'"), None)
        store.set_status("qrels_sets", row["name"], "ok" if ok else "failed", failure, runner_id)
        # a failed set keeps its last good results (reported as stale): they are replaced
        # only once the set reads again, never deleted by a typo in the topics or options
    for name, message in config.missing_runs.items():
        store.record_system(SystemRecord(name=name, status="failed", error=message,
                                         options=camp.options_key, version=__version__,
                                         runner_id=runner_id, keep_current=True))
        camp.fail(f"system '{name}'", message)
    done = store.done_measures(camp.options_key, __version__)
    tasks, reuse = camp.plan(measures, shas, cache, done)
    store.point_many(reuse, camp.options_key, __version__, runner_id)
    report.reused = len(reuse)
    answered: dict[str, tuple[str, ...]] = {}
    total, finished = len(tasks), 0

    def on_outcome(outcome: _Outcome) -> None:
        nonlocal finished
        finished += 1
        if outcome.sha256:
            camp.new_hashes.append((outcome.path, *outcome.stat, outcome.sha256))
        extra = _provenance(outcome)
        camp.warnings.extend(_validation_warnings(outcome))
        if outcome.error is not None:
            writes.add(SystemRecord(name=outcome.system, status="failed", error=outcome.error,
                                    sha256=outcome.sha256, run_tag=outcome.run_tag,
                                    options=camp.options_key, version=__version__,
                                    runner_id=runner_id,
                                    keep_current=_unchanged(outcome, cache), **extra))
            writes.flush()
            camp.fail(f"system '{outcome.system}'", outcome.error)
        else:
            computed = bool(outcome.results) or not outcome.reused
            writes.add(SystemRecord(
                name=outcome.system, status="ok", results=outcome.results,
                sha256=outcome.sha256, run_tag=outcome.run_tag, options=camp.options_key,
                version=__version__, runner_id=runner_id,
                num_topics=len(outcome.topics) if computed else None,
                num_docs=outcome.num_docs if computed else None,
                answered=outcome.topics if computed else None,
                reuse=[(q, outcome.sha256, shas[q]) for q in outcome.reused], **extra))
            report.evaluated += len(outcome.results)
            report.reused += len(outcome.reused)
            if computed:
                answered[outcome.system] = outcome.topics
        if camp.progress is not None:
            camp.progress(finished, total, outcome.system)

    writes = _Writes(store)
    if tasks:
        from . import parallel

        context = _Context(prepared, shas, topic_set, camp.settings, done, topics_obj,
                           config.validation, parallel.SHARD_BYTES)
        try:
            camp.execute(tasks, context, on_outcome)
        finally:
            writes.flush()  # what is complete is kept, even on an interrupt
    store.remember_hashes(camp.new_hashes)
    _check_unanswered(camp, store, qrels_rows, shas, answered)
    store.collect_garbage()
    report.analysed = _analyse(camp, store)


def _analyse(camp: _Campaign, store: Store) -> list[str]:
    """The report analyses the config's ``report:`` asks for, computed when the store lacks
    them for its current inputs (see irbench.analyses); a failure is the campaign's."""
    from .. import analyses

    try:
        return analyses.compute_missing(camp.config, store, progress=camp.progress)
    except IrbenchError as exc:
        camp.fail("report analyses", str(exc))
        return []


class _Writes:
    """Systems' outcomes written a few at a time: each flush is one transaction holding whole
    systems, so a kill loses at most the systems since the last flush (scored again next time)
    and never half a system."""

    def __init__(self, store: Store):
        self.store = store
        self.pending: list[SystemRecord] = []
        self.since = time.monotonic()

    def add(self, record: SystemRecord) -> None:
        self.pending.append(record)
        if len(self.pending) >= FLUSH_SYSTEMS or time.monotonic() - self.since > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            with self.store.transaction():
                for record in self.pending:
                    self.store.record_system(record)
            self.pending.clear()
        self.since = time.monotonic()


def _validation_warnings(outcome: _Outcome) -> list[str]:
    """The submission checks' problems of a run that was not rejected for them (a rejected
    run's failure already lists them), as warnings: the same for ``run`` and ``check``."""
    rejected = (outcome.error or "").startswith("rejected by the submission checks")
    if outcome.validation is None or rejected:
        return []
    return [f"system '{outcome.system}': {line}" for line in outcome.validation[2]
            if ": warning: " in line or ": error: " in line]


def _provenance(outcome: _Outcome) -> dict:
    """What a run says about itself (ir_metadata) and what the checks said of it, for the store."""
    extra: dict = {}
    if outcome.metadata is not None:
        extra["ir_metadata"] = json.dumps(outcome.metadata, sort_keys=True, default=str)
        fields, _ = run_fields(outcome.metadata)
        extra["fields"] = {k: v for k, v in fields.items() if k in ("group", "type")}
    if outcome.validation is not None:
        extra["validation"], extra["problems"] = outcome.validation[0], outcome.validation[1]
    return extra


def _listed(items: list[str], shown: int = 5) -> str:
    """'a', 'b' ... and N more."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(f"'{t}'" for t in items[:shown]) + more


def _unknown_topics(path: str, query_id: np.ndarray, line: np.ndarray,
                    topic_set: frozenset | None) -> str | None:
    """'PATH:LINE: topics not in the topic set: ...' (the line of the first), or None."""
    if topic_set is None:
        return None
    unknown = [t for t in np.unique(query_id) if display(t) not in topic_set]
    if not unknown:
        return None
    first = int(line[np.argmax(query_id == unknown[0])])
    return (f"{path}:{first}: topics not in the topic set: "
            f"{_listed([display(t) for t in unknown])}")


def _unchanged(outcome: _Outcome, cache: dict) -> bool:
    """Whether a failing system's stored results stay: its file could not be read at all, or
    it is the very file they were computed from."""
    if not outcome.sha256:
        return True
    cached = cache.get(outcome.path)
    return cached is not None and cached[2] == outcome.sha256


def _system_row(system, position: int) -> dict:
    return {"name": system.name, "path": system.path, "group": system.group,
            "type": system.type, "description": system.description,
            "baseline": system.baseline, "official": system.official,
            "priority": system.priority, "pooled": system.pooled,
            "metadata": json.dumps(system.metadata, sort_keys=True, default=str),
            "position": position}


def _check_unanswered(camp: _Campaign, store: Store, qrels_rows: list[dict], shas: dict,
                      answered: dict) -> None:
    """A qrels topic that no system answers is a failure of the qrels set (usually topic ids
    that do not match); its scores are stored all the same."""
    stored = store.answered_topics()
    union = set().union(*answered.values(), *stored.values()) if (answered or stored) else set()
    if not union:
        return
    for row in qrels_rows:
        name = row["name"]
        if name not in shas:
            continue
        lonely = [t for t in row["topics"] if t not in union]
        if lonely:
            camp.fail(f"qrels '{name}'", f"{camp.config.qrels_path(name)}: no system answers "
                      f"topic{'s' if len(lonely) > 1 else ''} {_listed(lonely)}")
