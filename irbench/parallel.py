"""Evaluate run files with worker processes: many runs at once, or one big run read in parts.

:func:`evaluate_paths` gives each worker whole runs to read, rank and score
(:func:`irbench.read_run`, :func:`irbench.rank_run`, then every measure), so only the small
per-topic results travel back; results come in input order. The prepared qrels reach the
workers by ``fork`` where the platform has it (no copy until written), else by pickling once
per worker. With a single run, :func:`read_run` parses a big file in byte ranges, one per
worker, and the run is ranked and scored here.

Every worker process dies with the process that started it (:func:`die_with_parent`): a
``kill -9``, SIGTERM or SIGHUP of ``irbench`` leaves no worker behind holding the store's
descriptors or the caller's stdout.

On a Dask cluster (:func:`dask_client`, :func:`map_on_cluster`: ``irbench run --cluster``),
the shared state is scattered to every worker once and each task gets it from the worker's
memory; at most a few tasks per worker thread are in flight, and each result is handed to the
caller as it arrives, so the caller's memory stays bounded. A task whose worker dies is
retried by Dask on another worker.

Errors do not stop the other runs: each :class:`RunResult` carries either an evaluation or
the error its run raised, and whether that happened while reading the file (``"read"``: a
:class:`FormatError` listing the file's problems) or afterwards (``"evaluate"``: a missing
topic, a duplicate docno). A caller that must report every file's problems before any output,
as ``irbench eval`` does, can look at all results first.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Iterable, Sequence

from .ranked import EvalOptions, PreparedQrels, Ranked
from .errors import ClusterError, FormatError, IrbenchError
from .measures.compute import Evaluation, compute
from .measures import Measure
from . import trec
from .trec import _display

_PARALLEL_READ_BYTES = 1 << 25  # plain run files this big are read in parts by workers


@dataclass
class RunResult:
    """What became of one run file: ``evaluation`` (and ``ranked`` if asked for) or ``error``.

    ``stage`` is ``"read"`` when reading the file failed (``error`` is a :class:`FormatError`),
    ``"evaluate"`` when ranking or scoring it did, and ``""`` on success.
    """

    path: str
    evaluation: Evaluation | None = None
    ranked: Ranked | None = None
    error: IrbenchError | None = None
    stage: str = ""


def evaluate_paths(
    prepared: PreparedQrels,
    paths: Sequence[str],
    measures: Sequence[Measure],
    options: EvalOptions = EvalOptions(),
    workers: int | None = None,
    keep_ranked: bool = False,
) -> list[RunResult]:
    """Read, rank and score each run file in ``paths``; one :class:`RunResult` per path, in order.

    ``workers``: processes to use (default: one per CPU, at most one per run); 1, or a single
    path, evaluates in this process. ``keep_ranked`` also returns each run's :class:`Ranked`
    (needed for z-scores; it is as large as the run, so off by default).
    """
    paths = [os.fspath(p) for p in paths]
    state = (prepared, list(measures), options, keep_ranked)
    if len(paths) == 1:
        return [_evaluate(state, paths[0], lambda path: read_run(path, workers=workers))]
    count = _worker_count(workers, len(paths))
    if count <= 1:
        return [_evaluate(state, path) for path in paths]
    with _context().Pool(count, initializer=_init_worker, initargs=(state,)) as pool:
        return list(pool.imap(_evaluate_in_worker, paths, chunksize=1))


def read_run(source, name: str | None = None, workers: int | None = None) -> trec.Run:
    """:func:`irbench.read_run`, with a big plain run file parsed in parts by worker processes.

    The file is cut at line starts into one byte range per worker; the parts' line numbers,
    problems and columns are joined as if one process had read the file. Small files, gzip
    files, stdin, file objects and in-memory data are read here as usual.
    """
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    count = _worker_count(workers, 1 << 30)
    if path is None or path == "-" or count <= 1 or path.endswith(".gz"):
        return trec.read_run(source, name)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            if size < _PARALLEL_READ_BYTES or fh.read(2) == trec._GZIP_MAGIC:
                return trec.read_run(source, name)
            bounds = _line_starts(fh, size, count)
    except OSError:
        return trec.read_run(source, name)  # reports the problem as usual
    ranges = [(path, a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    with _context().Pool(len(ranges), initializer=die_with_parent) as pool:
        parts = pool.starmap(_parse_range, ranges)
    for part in parts:
        if isinstance(part, FormatError):
            raise part
    return trec._run_of_parts(path, parts, name)


def _line_starts(fh, size: int, count: int) -> list[int]:
    """0, ``count - 1`` offsets of line starts spread evenly over the file, and ``size``."""
    bounds = [0]
    for k in range(1, count):
        fh.seek(max(bounds[-1], k * size // count))
        fh.readline()  # to the start of the next line
        bounds.append(min(fh.tell(), size))
    return bounds + [size]


def _parse_range(path: str, start: int, end: int):
    """Parse the whole lines in bytes ``[start, end)`` of ``path`` (a worker's part)."""
    try:
        return trec._parse_run(_range_pieces(path, start, end))
    except FormatError as exc:  # returned, not raised: the parent joins the parts' problems
        return exc
    except OSError as exc:
        return FormatError([f"{path}: cannot read ({exc.strerror})"])


def _range_pieces(path: str, start: int, end: int):
    """Whole-line pieces of about ``trec._CHUNK`` bytes of bytes ``[start, end)`` of ``path``."""
    with open(path, "rb") as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            piece = fh.read(min(trec._CHUNK, end - pos))
            if not piece:
                return
            if not piece.endswith(b"\n") and pos + len(piece) < end:
                piece += fh.readline()  # ranges end at line starts: this stays inside
            first = pos == 0
            pos += len(piece)
            yield trec.without_bom(piece) if first else piece


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel kill this (worker) process when its parent dies, however the parent
    dies (Linux ``PR_SET_PDEATHSIG``; elsewhere nothing is done). ``parent``: the pid the
    worker was started by, default the current parent; if it is already gone, exit now."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here: one run in the calling process needs neither ctypes nor processes

    parent = os.getppid() if parent is None else parent
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: workers end when their queue closes
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _worker_count(workers: int | None, jobs: int) -> int:
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    return max(1, min(workers, jobs))


def _evaluate(state: tuple, path: str, read=trec.read_run) -> RunResult:
    """Read, rank and score one run file (in whichever process calls this)."""
    prepared, measures, options, keep_ranked = state
    try:
        run = read(path)
    except FormatError as exc:
        return RunResult(path, error=exc, stage="read")
    try:
        ranked = prepared.rank(run, options)
        name, runid = run.name, run.runid
        del run  # the columns are not needed while scoring
        values, summaries = compute(ranked, measures)
    except IrbenchError as exc:
        return RunResult(path, error=exc, stage="evaluate")
    topics = tuple(_display(t) for t in ranked.topics)
    evaluation = Evaluation(name, runid, topics, values, summaries, options)
    return RunResult(path, evaluation, ranked if keep_ranked else None)


_STATE: tuple | None = None


def _init_worker(state: tuple) -> None:
    global _STATE
    die_with_parent()
    _STATE = state


def _evaluate_in_worker(path: str) -> RunResult:
    """:func:`_evaluate` in a worker (its errors pickle whole: see :mod:`irbench.errors`)."""
    return _evaluate(_STATE, path)


# ---- on a Dask cluster --------------------------------------------------------------------

CONNECT_TIMEOUT = 10.0  # seconds to reach a Dask scheduler before giving up
IN_FLIGHT_PER_THREAD = 4  # tasks submitted ahead per worker thread


@contextmanager
def dask_client(address: str, connect_timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client`` of the scheduler at ``address``; ``local`` or ``local:N``
    starts a ``LocalCluster`` of N worker processes (one thread each; default one per CPU)
    for the duration. An unreachable scheduler is a :class:`ClusterError`."""
    try:
        import distributed
    except ModuleNotFoundError:
        raise ClusterError("the Dask engine needs the cluster extra: pip install "
                           "'irbench[cluster]'") from None
    cluster = None
    try:
        if address == "local" or address.startswith("local:"):
            n = int(address[len("local:"):]) if ":" in address else (os.cpu_count() or 1)
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                               processes=True, dashboard_address=":0")
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(address, timeout=connect_timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {address} ({exc}): is "
                           "'dask scheduler' running there, and is its port open?") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def map_on_cluster(client, fn: Callable, items: Iterable, shared: Any,
                   on_result: Callable[[Any, Any], None],
                   on_lost: Callable[[Any, BaseException], Any]) -> None:
    """``fn(item, shared)`` for every item on the cluster of ``client``; ``on_result(item,
    result)`` runs here as each finishes (any order). ``shared`` goes to every worker once.
    An item whose task killed its workers more often than Dask allows gets
    ``on_result(item, on_lost(item, error))``."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    threads = sum(client.nthreads().values()) or 1
    state = client.scatter(shared, broadcast=True, hash=False)
    pending = iter(items)
    items_of = {}

    def submit(item):
        future = client.submit(fn, item, state, pure=False)
        items_of[future] = item
        return future

    finished = as_completed([submit(i) for i in islice(pending, threads * IN_FLIGHT_PER_THREAD)])
    try:
        for future in finished:
            item = items_of.pop(future)
            try:
                result = future.result()
            except KilledWorker as exc:
                result = on_lost(item, exc)
            future.release()
            for more in islice(pending, 1):
                finished.add(submit(more))
            on_result(item, result)
    except BaseException:
        client.cancel(list(items_of))
        raise
    finally:
        client.cancel(state)


__all__ = ["RunResult", "evaluate_paths", "read_run", "dask_client", "map_on_cluster"]
