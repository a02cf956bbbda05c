"""The runner: score every system of a config on every qrels set for every measure, into the store.

:func:`run_campaign` plans from content hashes (the store keeps sha256 per path, size and
mtime, so an unchanged file is not read again: :mod:`.plan`), scores only the (system, qrels
set, measure) results the store lacks (:mod:`.score`) on an engine (:mod:`.engine`: in this
process, worker processes when there is enough work, or a Dask cluster), and writes each
system's results in one transaction as they arrive (:mod:`.record`). Problems with one system
or qrels set become :class:`Failure` entries; everything else is still scored (``fail_fast``
stops at the first instead). A store that did not exist when the command began has nothing to
plan from: it is opened and told the campaign while the first runs are scored (the engine's
``meanwhile``; DuckDB is imported then too). :func:`check_campaign` runs the same functions
without a store.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from typing import Any

import numpy as np

from .. import __version__, analyses
from ..config import Config
from ..documents.spec import DocumentsSpec
from ..errors import FormatError, IrbenchError, StoreError
from ..store import Store, SystemRecord
from . import shards
from .engine import Cluster, Engine, InProcess, Processes, dask_client
from .inputs import Inputs, options_key
from .plan import for_system, plan, task_of, wanted_by_set
from .record import (
    FLUSH_VALUES,
    Writes,
    check_unanswered,
    outcome_record,
    system_row,
    validation_warnings,
)
from .results import Failure, Findings, RunReport
from .score import NOTHING, Context, Outcome, Task, in_shards, score_safely

PARALLEL_MIN_BYTES = 8 << 20  # less run data than this is scored in the main process

Progress = Callable[[int, int, str], None]


def run_campaign(config: Config, workers: int | None = None, fail_fast: bool = False,
                 progress: Progress | None = None, wait: float = 0.0,
                 rehash: bool = False, cluster: str | None = None,
                 fresh: bool = False) -> RunReport:
    """Score ``config`` into its store; see the module docstring. Returns a :class:`RunReport`.

    ``cluster`` (else the config's ``execution:`` address): score the runs on that Dask
    cluster (a scheduler's address, or ``local`` / ``local:N``); the store is written here.
    ``fresh``: the store did not exist when this ``irbench run`` began, so it holds nothing
    to plan from: for a config without commands scored on this machine, every run is
    planned, and the store is opened while the first runs are scored (should another process
    have made it meanwhile, its results are computed again, and are the same)."""
    address = cluster or config.cluster
    started = time.perf_counter()
    shards.sweep_spills()  # what a killed run left in the temporary folder
    early = fresh and address is None and all(s.command is None for s in config.systems)
    with (dask_client(address) if address is not None else nullcontext()) as client, \
            ExitStack() as stack:
        camp = _Campaign(config, None, Findings(fail_fast), workers=workers,
                         progress=progress, rehash=rehash,
                         cluster=Cluster(client, address or "") if client is not None else None)
        report = RunReport(config.store, 0, len(config.systems), len(config.qrels),
                           len(config.measures))

        def open_store() -> Store:
            store = stack.enter_context(Store(config.store, scope=config.scope, wait=wait))
            with store.transaction():  # one commit
                store.claim(config.name, os.path.abspath(config.path))
                report.runner_id = store.start_runner(os.path.abspath(config.path),
                                                      config.sha256, __version__,
                                                      camp.options_key, _environment(camp))
            return store

        opened = _once(open_store) if early else _now(open_store)
        status = "interrupted"
        try:
            if not early:  # the store's facts first: an unchanged qrels file is not read
                camp.store = camp.inputs.store = opened()
                from .produced import produce_runs

                camp.config, report.executed = produce_runs(
                    config, camp.store, report.runner_id, progress, workers=workers,
                    client=client)
            _run(camp, opened, report, early)
            status = "ok" if not camp.findings.failures else "failed"
        except IrbenchError:
            status = "failed"
            raise
        finally:
            report.failures, report.warnings = camp.findings.failures, camp.findings.warnings
            in_flight = sys.exc_info()[0] is not None
            try:
                opened().finish_runner(report.runner_id, status, report.evaluated,
                                       report.reused, len(camp.findings.failures))
            except StoreError:
                if not in_flight:
                    raise  # else the error in flight is what happened (a full disk ...)
    report.seconds = time.perf_counter() - started
    return report


def _now(open_store: Callable[[], Store]) -> Callable[[], Store]:
    store = open_store()
    return lambda: store


def _once(open_store: Callable[[], Store]) -> Callable[[], Store]:
    """``open_store`` called when the store is first asked for; then its store, or what it
    raised, again (a store another process holds is waited for once)."""
    box: list = []

    def opened() -> Store:
        if not box:
            try:
                box.append(open_store())
            except BaseException as exc:
                box.append(exc)
                raise
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]
    return opened


def check_campaign(config: Config, workers: int | None = None
                   ) -> tuple[list[Failure], list[str]]:
    """(failures, warnings): what ``irbench run`` would refuse or warn about, found by the
    very functions it uses, without a store: the known documents, the topics, every qrels set
    and measure, every run (read, its topics, the submission checks, ranked against every
    usable qrels set, which finds duplicates). Nothing is scored or written."""
    from .produced import unproduced

    findings = Findings()
    config, waiting = unproduced(config)
    findings.warnings.extend(waiting)
    try:
        camp = _Campaign(config, None, findings, workers=workers, rehash=True)
    except IrbenchError as exc:
        return [Failure("known documents", str(exc))], []
    _, topic_set, topics_sha, topics = camp.inputs.read_topics()
    prepared, shas, records = camp.inputs.read_qrels(topic_set, topics_sha, {})
    camp.inputs.measures_for(records, shas)
    for name, message in config.missing_runs.items():
        findings.fail(f"system '{name}'", message)

    def on_outcome(outcome: Outcome) -> None:
        findings.warnings.extend(validation_warnings(outcome))
        if outcome.error is not None:
            findings.fail(f"system '{outcome.system}'", outcome.error)

    tasks = [task_of(s, for_system(config, s, dict.fromkeys(shas, NOTHING)), check_only=True)
             for s in config.systems if s.name not in config.missing_runs]
    camp.execute(tasks, Context(qrels=prepared, qrels_sha=shas, topic_set=topic_set,
                                settings=config.settings, topics=topics,
                                validation=config.validation,
                                shard_bytes=shards.shard_bytes(),
                                documents=answer_documents(config, findings)), on_outcome)
    return findings.failures, findings.warnings


def answer_documents(config: Config, findings: Findings,
                     tasks: list[Task] | None = None) -> DocumentsSpec | None:
    """The collection's documents, against which answer runs' ids are checked (the tracks'
    checkers refuse an unknown segment id), when the config declares them and some answer
    run is to be read (of ``tasks``, or of the config); their index is built here, once,
    before workers open it. Documents that do not read are a failure, and no id is checked."""
    spec = config.documents
    kinds = {t.kind for t in tasks} if tasks is not None else {s.kind for s in config.systems}
    if spec is None or "answers" not in kinds:
        return None
    from ..documents import open_documents

    try:
        open_documents(spec).close()
    except FormatError as exc:
        findings.fail("documents", str(exc))
        return None
    return spec


class _Campaign:
    """One run of a campaign: its config, store (None for ``check``), findings and engine."""

    def __init__(self, config: Config, store: Store | None, findings: Findings, *,
                 workers: int | None = None, progress: Progress | None = None,
                 rehash: bool = False, cluster: Cluster | None = None):
        self.config = config
        self.store = store
        self.findings = findings
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self.progress = progress
        self.rehash = rehash
        self.cluster = cluster
        self.options_key, known = options_key(config)
        self.inputs = Inputs(config, store, findings, rehash, known)

    def engine(self, tasks: list[Task]) -> Engine:
        """The cluster if there is one; else worker processes when there is enough run data
        for them to pay off, else this process."""
        if self.cluster is not None:
            return self.cluster
        total = sum(os.path.getsize(t.path) for t in tasks if os.path.exists(t.path))
        workers = min(self.workers, len(tasks))
        if workers <= 1 or total < PARALLEL_MIN_BYTES:
            return InProcess()
        return Processes(workers)

    def execute(self, tasks: list[Task], context: Context,
                on_outcome: Callable[[Outcome], None],
                meanwhile: Callable[[], None] | None = None) -> None:
        """Score every task on the engine; ``on_outcome`` runs here as each finishes;
        ``meanwhile()`` once the first tasks are under way, before any ``on_outcome``."""
        engine = self.engine(tasks)
        if not isinstance(engine, InProcess):
            whole = any(not os.path.exists(t.path)
                        or not in_shards(os.path.getsize(t.path), context.shard_bytes)
                        for t in tasks)
            for name in context.qrels_sha:  # prepared once, here: workers read no qrels
                prepared = context.qrels[name]
                if whole and isinstance(engine, Processes):  # forked: its table is shared
                    prepared.adhoc.ready()
        engine.map(score_safely, tasks, context, lambda task, outcome: on_outcome(outcome),
                   lambda task, exc: _lost(task, exc, engine), meanwhile)


def _lost(task: Task, exc: BaseException, engine: Engine) -> Outcome:
    """The outcome of a system whose worker died while scoring it."""
    if isinstance(engine, Cluster):
        why = (f"Dask workers died while scoring it, more often than the cluster retries a "
               f"task ({exc})")
    else:  # by the OOM killer, most often
        why = f"a worker process was killed while scoring it (out of memory? {_memory_note()})"
    return Outcome(system=task.system, path=task.path, error=(
        f"{task.path}: not scored: {why}; nothing of it was stored, and the next 'irbench "
        "run' tries again"))


def _memory_note() -> str:
    """This machine's memory, for messages about workers killed for want of it."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return "fewer --workers need less memory"
    return f"this machine has {pages * size / 2**30:.1f} GiB; fewer --workers need less"


def _environment(camp: _Campaign) -> dict:
    import duckdb  # opened by then: the store was (see irbench.store.connection)

    engine: dict[str, Any] = ({"name": "local", "workers": camp.workers} if camp.cluster is None
                              else camp.cluster.describe())
    return {"python": platform.python_version(), "numpy": np.__version__,
            "duckdb": duckdb.__version__, "platform": platform.platform(),
            "host": platform.node(), "pid": os.getpid(), "argv": sys.argv[1:],
            "engine": engine}


def _run(camp: _Campaign, opened: Callable[[], Store], report: RunReport,
         early: bool = False) -> None:
    """Read the inputs, tell the store the campaign, plan, score and record. ``early``: the
    store is new (``camp.store`` None), so it has nothing to plan from: it is opened and told
    the campaign while the first runs are scored."""
    config, findings = camp.config, camp.findings
    cache = camp.store.cached_hashes() if camp.store is not None else {}
    topics, topic_set, topics_sha, topics_obj = camp.inputs.read_topics()
    camp.inputs.hash_tables()
    prepared, shas, records = camp.inputs.read_qrels(topic_set, topics_sha, cache)
    measures = camp.inputs.measures_for(records, shas)
    qrels_names = [record.name for record in records]
    declared: dict[str, list] = {"topics": topics, "records": records}
    del topics, records  # their topic lists (1,000,000 names: 65 MB) go to the store, then

    def declare() -> None:
        store = camp.store = camp.inputs.store = opened()
        _declare(camp, store, report.runner_id, declared.pop("topics"),
                 declared.pop("records"), shas)

    done: dict = {}  # a new store has nothing
    if not early:
        declare()
        done = opened().done_measures(camp.options_key, __version__)
    tasks, reuse = plan(config, wanted_by_set(config, measures), shas, cache, done,
                        camp.rehash)
    if not early:
        opened().point_many(reuse, camp.options_key, __version__, report.runner_id)
    elif not tasks:
        declare()
    report.reused = len(reuse)
    finished = 0
    writes = Writes(opened)

    def on_outcome(outcome: Outcome) -> None:
        nonlocal finished
        finished += 1
        if outcome.facts is not None:
            camp.inputs.new_hashes.append(outcome.facts)
        findings.warnings.extend(validation_warnings(outcome))
        writes.add(outcome_record(outcome, camp.options_key, report.runner_id, shas, cache))
        if outcome.error is not None:
            writes.flush()
            findings.fail(f"system '{outcome.system}'", outcome.error)
        else:
            report.evaluated += len(outcome.results)
            report.reused += len(outcome.reused)
        if camp.progress is not None:
            camp.progress(finished, len(tasks), outcome.system)

    if tasks:
        context = Context(qrels=prepared, qrels_sha=shas, topic_set=topic_set,
                          settings=camp.config.settings, done=done, topics=topics_obj,
                          validation=config.validation, shard_bytes=shards.shard_bytes(),
                          documents=answer_documents(config, findings, tasks))
        try:
            camp.execute(tasks, context, on_outcome, meanwhile=declare if early else None)
        except BaseException:
            if camp.store is not None:
                writes.flush()  # what is complete is kept, even on an interrupt
            raise
    _conclude(camp, opened(), writes, qrels_names, shas, report)


def _conclude(camp: _Campaign, store: Store, writes: Writes, qrels_names: list[str],
              shas: dict[str, str], report: RunReport) -> None:
    """Once every system is scored: the last systems and the files' hashes written (one
    commit), the checks of the whole, the garbage collected, the report's analyses."""
    with store.transaction():
        writes.flush()
        store.remember_hashes(camp.inputs.new_hashes)
    if writes.written >= FLUSH_VALUES:  # DuckDB's cache of the results is not read again: a
        store.release_memory()  # big one handed back (a small one costs more to hand back)
    check_unanswered(camp.findings, camp.config, store, qrels_names, shas)
    store.collect_garbage()
    report.analysed = _analyse(camp, store)


def _declare(camp: _Campaign, store: Store, runner_id: int, topics: list, records: list,
             shas: dict[str, str]) -> None:
    """The campaign told to the store in one commit: its topics, measures, suites, systems
    and qrels sets, each set's status, and each system whose run file is missing as failed."""
    config, findings = camp.config, camp.findings
    with store.transaction():
        store.sync_declarations(
            topics,
            [(str(m), m.family, m.definition.aggregate, m.definition.description)
             for m in config.measures],
            [(suite, str(m), i) for suite, ms in config.suites.items()
             for i, m in enumerate(ms)],
            [system_row(s, i) for i, s in enumerate(config.systems)],
            records)
        for record in records:
            failure = findings.failure_of(f"qrels '{record.name}'")
            store.set_status("qrels_sets", record.name, "ok" if record.name in shas
                             else "failed", failure, runner_id)
            # a failed set keeps its last good results (reported as stale): they are
            # replaced only once the set reads again, never deleted by a typo in the topics
        for name, message in config.missing_runs.items():
            store.record_system(SystemRecord(name=name, status="failed", error=message,
                                             options=camp.options_key, version=__version__,
                                             runner_id=runner_id, keep_current=True))
            findings.fail(f"system '{name}'", message)
    store.release_memory()  # DuckDB's cache of the declarations is not needed while scoring


def _analyse(camp: _Campaign, store: Store) -> list[str]:
    """The report analyses the config's ``report:`` asks for, computed when the store lacks
    them for its current inputs (see irbench.analyses); a failure is the campaign's."""
    try:
        return analyses.compute_missing(camp.config, store, progress=camp.progress)
    except IrbenchError as exc:
        camp.findings.fail("report analyses", str(exc))
        return []
