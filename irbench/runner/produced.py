"""Runs produced by systems given as commands (``command:`` in a config), before scoring.

For each such system of a collection, :func:`produce_runs` computes the command's key
(:func:`irbench.runner.commands.command_key`: the command, its ``inputs``' contents, the
environment variables it names, and the collection's files its placeholders name) and
executes the command (:func:`irbench.runner.commands.execute`) only when the store holds no ok
execution under that key whose run file is still the one it wrote. Each execution is one row
of the store's ``commands`` table (:class:`irbench.store.CommandRun`), written after the run
file is in place: a run killed between the two executes the command again, never scores a
half-written run. A command that fails, runs past its timeout or writes nothing is that
system's failure on that collection (its last good results stay, marked, as for a run file
that went missing); the other systems go on. The run it writes is then read, checked and
scored like a submitted one.

Commands run ``workers`` at a time (``irbench run --workers N``; default one after the other: a
command may use every core itself), each in its own process group, from threads of this
process; with a Dask cluster (``irbench run --cluster``, the config's ``execution:``) each is
a task on the cluster's workers instead, as many at a time as it has threads (its workers
must see the config's folder at the same path), and where it ran is what its record says.
The store is written from this process only."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ..config import Config
from ..errors import CommandError
from ..escaping import terminal
from ..store import CommandRun, Store
from .commands import CommandOutcome, command_key, execute, file_sha256, placeholders_used

INPUTS = ("topics", "qrels", "documents")  # the collection's files a command may name

Progress = Callable[[int, int, str], None]


def collection_inputs(config: Config) -> dict[str, str]:
    """The collection's files a command's placeholders may name: its topics, its first qrels
    set, its documents (when the config gives them, as one file)."""
    documents = config.documents.paths if config.documents is not None else ()
    found = {"topics": config.topics, "qrels": config.qrels[0].path if config.qrels else None,
             "documents": documents[0] if len(documents) == 1 else None}
    return {k: v for k, v in found.items() if isinstance(v, str)}


def produce_runs(config: Config, store: Store, runner_id: int | None = None,
                 progress: Progress | None = None, workers: int | None = None,
                 client: Any = None) -> tuple[Config, int]:
    """Execute the commands whose key changed (see the module docstring), ``workers`` at a
    time (default 1: a command may use every core itself) or on the Dask cluster of
    ``client``; (the config with each system whose command failed among its
    ``missing_runs``, commands executed)."""
    missing = dict(config.missing_runs)
    inputs = collection_inputs(config)
    collection = config.collection().name
    todo = []
    for system in (s for s in config.systems if s.command is not None):
        used = placeholders_used(system.command.command)
        lacking = [k for k in INPUTS if k in used and k not in inputs]
        if lacking:
            missing[system.name] = (f"system '{system.name}': its command names {{{lacking[0]}}} "
                                    f"but collection '{collection}' gives no {lacking[0]}")
            continue
        try:
            key = command_key(system.command, {k: inputs[k] for k in INPUTS if k in used})
        except CommandError as exc:
            missing[system.name] = f"system '{system.name}': {exc}"
            continue
        if not _done(store, system.name, key, system.path):
            todo.append((system, key))
    values = {**{k: inputs[k] for k in INPUTS if k in inputs}, "collection": collection}
    executions = (_on_cluster(client, todo, values) if client is not None
                  else _in_threads(workers, todo, values))
    for done, (system, key, (outcome, where)) in enumerate(executions, 1):
        _record(store, system, key, outcome, where, runner_id)  # the store: this thread only
        if not outcome.ok:
            missing[system.name] = _failure(system.name, system.command.timeout, outcome)
        if progress is not None:
            progress(done, len(todo), f"{system.name} (command)")
    return replace(config, missing_runs=missing), len(todo)


Execution = tuple[CommandOutcome, dict]  # an execution and where it ran (ir_metadata fields)


def execute_here(spec, values: dict[str, str], path: str) -> Execution:
    """:func:`~irbench.runner.commands.execute` and the platform it ran on, in whichever
    process runs it (a thread here, a Dask worker)."""
    outcome = execute(spec, values, path)
    return outcome, outcome.environment()


def _in_threads(workers: int | None, todo: list, values: dict[str, str]
                ) -> Iterator[tuple[Any, str, Execution]]:
    from concurrent.futures import ThreadPoolExecutor, as_completed  # 9 ms: commands only

    with ThreadPoolExecutor(max_workers=max(1, workers or 1)) as pool:  # subprocesses: threads
        running = {pool.submit(execute_here, s.command, values, s.path): (s, key)
                   for s, key in todo}
        for future in as_completed(running):
            yield (*running[future], future.result())


def _on_cluster(client: Any, todo: list, values: dict[str, str]
                ) -> Iterator[tuple[Any, str, Execution]]:
    """Each command a task of the cluster (never deduplicated: ``pure=False``); a task lost
    with its worker past Dask's own retries is that command's failure."""
    from distributed import as_completed as finished

    running = {client.submit(execute_here, s.command, values, s.path, pure=False): (s, key)
               for s, key in todo}
    try:
        for future in finished(list(running)):
            system, key = running[future]
            try:
                yield system, key, future.result()
            except Exception as exc:  # KilledWorker, a scheduler gone: no execution to show
                reason = f"irbench: the Dask task running it was lost ({type(exc).__name__})"
                yield system, key, (CommandOutcome(
                    status="failed", exit_code=None, wall_seconds=0.0, cpu_seconds=0.0,
                    peak_rss_bytes=0, stderr_tail=reason, argv=(), started_at=_now()), {})
    finally:
        try:
            client.cancel([f for f in running if not f.done()])
        except Exception:  # a scheduler already gone: nothing left to cancel
            pass


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _record(store: Store, system, key: str, outcome: CommandOutcome, where: dict,
            runner_id: int | None) -> None:
    """One execution, a row of ``commands`` (after its run file is in place)."""
    store.record_command(CommandRun(
        system=system.name, key=key, status=outcome.status, exit_code=outcome.exit_code,
        run_path=system.path if outcome.ok else None,
        run_sha256=file_sha256(system.path) if outcome.ok else None,
        wall_seconds=outcome.wall_seconds, cpu_seconds=outcome.cpu_seconds,
        peak_rss_bytes=outcome.peak_rss_bytes, stderr_tail=outcome.stderr_tail,
        argv=json.dumps(list(outcome.argv)),
        environment=json.dumps(where, sort_keys=True, default=str),
        started_at=datetime.fromisoformat(outcome.started_at).replace(tzinfo=None),
        finished_at=datetime.now(timezone.utc).replace(tzinfo=None), runner_id=runner_id))


def _done(store: Store, system: str, key: str, path: str) -> bool:
    """Whether the store holds an ok execution under ``key`` whose run is still at ``path``."""
    last = store.last_command(system)
    if last is None or last.status != "ok" or last.key != key or not os.path.isfile(path):
        return False
    return file_sha256(path) == last.run_sha256


def _failure(name: str, timeout: float, outcome) -> str:
    """What a failed execution tells: its status, exit code and the last line of stderr."""
    what = {"timeout": f"ran past its timeout ({timeout:g} s) and was stopped",
            "no-output": "exited 0 but wrote no run to {run}",
            "failed": f"failed (exit status {outcome.exit_code})"}[outcome.status]
    lines = [line for line in outcome.stderr_tail.splitlines() if line.strip()]
    said = f": {terminal(lines[-1][-300:])}" if lines else ""
    return f"system '{name}': its command {what}{said}"


def unproduced(config: Config) -> tuple[Config, list[str]]:
    """For ``irbench check``: the config without the systems given as commands whose run is
    not written yet (``irbench run`` executes them), and a warning for each."""
    waiting = [s.name for s in config.systems
               if s.command is not None and not os.path.isfile(s.path)]
    if not waiting:
        return config, []
    return (replace(config, systems=tuple(s for s in config.systems if s.name not in waiting)),
            [f"system '{n}': given as a command; irbench run executes it, then checks its "
             "run" for n in waiting])
