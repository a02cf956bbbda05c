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
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from .. import trec
from ..errors import ClusterError, FormatError, IrbenchError
from ..measures import Measure
from ..measures.compute import Evaluation, compute
from ..ranked import EvalOptions, PreparedQrels, Ranked
from ..trec import display

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
            if size < _PARALLEL_READ_BYTES or fh.read(2) == trec.GZIP_MAGIC:
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
    return trec.run_of_parts(path, parts, name)


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
        return trec.parse_run(_range_pieces(path, start, end))
    except FormatError as exc:  # returned, not raised: the parent joins the parts' problems
        return exc
    except OSError as exc:
        return FormatError([f"{path}: cannot read ({exc.strerror})"])


def _range_pieces(path: str, start: int, end: int):
    """Whole-line pieces of about ``trec.text.CHUNK`` bytes of bytes ``[start, end)`` of
    ``path``."""
    with open(path, "rb") as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            piece = fh.read(min(trec.text.CHUNK, end - pos))
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
    topics = tuple(display(t) for t in ranked.topics)
    evaluation = Evaluation(name, runid, topics, values, summaries, options)
    return RunResult(path, evaluation, ranked if keep_ranked else None)


_STATE: tuple | None = None


def _init_worker(state: tuple) -> None:
    global _STATE
    die_with_parent()
    _STATE = state


def _evaluate_in_worker(path: str) -> RunResult:
    """:func:`_evaluate` in a worker (its errors pickle whole: see :mod:`irbench.errors`)."""
    if _STATE is None:
        raise RuntimeError("_evaluate_in_worker outside a worker initialised by _init_worker")
    return _evaluate(_STATE, path)


# ---- one huge run in topic shards ----------------------------------------------------------

# a run file bigger than this is evaluated in topic shards (IRBENCH_SHARD_BYTES; 0: never)
SHARD_BYTES = int(os.environ.get("IRBENCH_SHARD_BYTES") or 256 << 20)
_SPILL_BYTES = 64 << 20  # parsed run data kept in memory before it is spilled to the shards
_HASH_PRIME = np.uint64(1099511628211)


def topic_shards(query_id: np.ndarray, shards: int) -> np.ndarray:
    """The shard of each topic id (a fixed-width bytes array): a polynomial hash of its bytes,
    the same whatever the array's width (NUL padding adds nothing), modulo ``shards``."""
    width = query_id.dtype.itemsize
    raw = np.ascontiguousarray(query_id).view(np.uint8).reshape(len(query_id), width)
    h = np.zeros(len(query_id), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width - 1, -1, -1):  # over an id's bytes, last first: padding adds 0
            h = h * _HASH_PRIME + raw[:, j].astype(np.uint64)
    return (h % np.uint64(shards)).astype(np.int64)


@dataclass
class Sharded:
    """A run evaluated in topic shards: per-topic values in topic order, and summaries."""

    topics: np.ndarray                # the qrels topics scored, sorted (as one ranking has them)
    values: dict                      # Measure -> per-topic float64
    summaries: dict                   # Measure -> summary, as trec_eval computes it
    answered: np.ndarray              # the topics the run answers, sorted
    num_docs: int                     # result lines
    runid: str                        # the tag of the last result line
    shards: int


def _pieces(path: str):
    """Whole-line pieces of about ``trec.text.CHUNK`` bytes of a (possibly gzip) run file."""
    import gzip

    with open(path, "rb") as raw:
        fh = gzip.open(raw) if raw.read(2) == trec.GZIP_MAGIC else raw
        raw.seek(0)
        first = True
        while True:
            piece = fh.read(trec.text.CHUNK)
            if not piece:
                return
            if not piece.endswith(b"\n"):
                piece += fh.readline()
            yield trec.without_bom(piece) if first else piece
            first = False


def evaluate_sharded(qrels, path: str, measures: Sequence[Measure],
                     options: EvalOptions = EvalOptions(), shards: int | None = None,
                     intersection: bool = False) -> Sharded:
    """Evaluate the run file at ``path`` on ad hoc ``qrels`` (a :class:`~irbench.trec.Qrels`)
    one topic shard at a time, so memory is bounded by a shard, not the run: the file is read
    once in pieces, each result line spilled to its topic's shard (:func:`topic_shards`) in a
    temporary folder, then each shard is read, ranked against the qrels of its topics and
    scored. The per-topic values are those of one whole evaluation, and the summaries are
    computed from all of them in topic order as one evaluation computes them: the numbers are
    identical. Problems in the file are reported with its own line numbers (a
    :class:`FormatError`). ``intersection``: score only the topics the run answers."""
    import tempfile

    from ..measures.base import summarise
    from ..measures.compute import restrict
    from ..ranked import rank_run

    for m in measures:
        try:  # a summary that needs the whole ranking (num_q, runid, micro averages) fails
            summarise(m, np.zeros(1), None)
        except (AttributeError, TypeError):
            raise IrbenchError(f"{m} cannot be computed in topic shards (its summary needs "
                               "the whole run)") from None
    size = os.path.getsize(path)
    shards = shards or max(1, -(-size // SHARD_BYTES))
    joined = trec.PartJoiner(path)
    num_docs, answered = 0, []
    with tempfile.TemporaryDirectory(prefix="irbench-shards-") as spill:
        held: list[list] = [[] for _ in range(shards)]
        held_bytes, flushes = 0, 0

        def flush():
            nonlocal held_bytes, flushes
            for k, parts in enumerate(held):
                if parts:
                    q, d, sc, ln = (trec.concat(list(c)) for c in zip(*parts))
                    np.savez(os.path.join(spill, f"{k}-{flushes}.npz"), q=q, d=d, s=sc, ln=ln)
                    parts.clear()
            held_bytes, flushes = 0, flushes + 1

        for piece in _pieces(path):
            columns = joined.add(trec.parse_run([piece]))
            if columns is not None:
                q, d, sc, ln = columns
                shard = topic_shards(q, shards)
                order = np.argsort(shard, kind="stable")
                bounds = np.searchsorted(shard[order], np.arange(shards + 1))
                for k in range(shards):  # a loop over shards, not topics
                    rows = order[bounds[k]:bounds[k + 1]]
                    if len(rows):
                        held[k].append((q[rows], d[rows], sc[rows], ln[rows]))
                held_bytes += len(piece)
                num_docs += len(sc)
                answered.append(np.unique(q))
            if held_bytes >= _SPILL_BYTES:
                flush()
        flush()
        joined.problems.raise_if_any()
        runid = joined.runid
        if num_docs == 0:
            raise FormatError([f"{path}:1: empty run: no result lines"])
        qrels_shard = topic_shards(qrels.query_id, shards)
        topics = []
        values: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
        for k in range(shards):
            parts = [np.load(os.path.join(spill, f"{k}-{f}.npz")) for f in range(flushes)
                     if os.path.exists(os.path.join(spill, f"{k}-{f}.npz"))]
            keep = qrels_shard == k
            if not keep.any():
                continue  # no judged topic here: nothing of these lines is scored
            sub = trec.Qrels(qrels.name, qrels.query_id[keep], qrels.doc_id[keep],
                             qrels.relevance[keep], qrels.line[keep], qrels.path)
            if parts:
                columns = [trec.concat([p[c] for p in parts]) for c in ("q", "d", "s", "ln")]
            else:  # every judged topic of this shard is missing from the run
                empty = np.zeros(0, dtype="S1")
                columns = [empty, empty, np.zeros(0), np.zeros(0, np.int64)]
            q, d, sc, ln = columns
            run = trec.Run(os.path.basename(path), trec.display(runid), q, d, sc, ln, path=path)
            ranked = rank_run(run, PreparedQrels(sub), options)
            if intersection:
                ranked = restrict(ranked, ~ranked.missing)
            part_values, _ = compute(ranked, list(measures))
            topics.append(ranked.topics)
            for m in measures:
                values[m].append(np.asarray(part_values[m], dtype=np.float64))
    all_topics = trec.concat(topics) if topics else np.zeros(0, dtype="S1")
    order = np.argsort(all_topics, kind="stable")
    merged = {m: (np.concatenate(values[m]) if values[m] else np.zeros(0))[order]
              for m in measures}
    return Sharded(all_topics[order], merged,
                   {m: summarise(m, merged[m], None) for m in measures},
                   np.unique(trec.concat(answered)), num_docs, trec.display(runid), shards)


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


def map_on_cluster(client, fn: Callable, items: Sequence, shared: Any,
                   on_result: Callable[[Any, Any], None],
                   on_lost: Callable[[Any, BaseException], Any]) -> None:
    """``fn(item, shared)`` for every item on the cluster of ``client``; ``on_result(item,
    result)`` runs here as each finishes (any order). ``shared`` goes to every worker once.
    Items travel in batches (a few per worker thread in flight, so the scheduler's per-task
    cost is paid per batch); every item of a batch whose task killed its workers more often
    than Dask allows gets ``on_result(item, on_lost(item, error))``."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    threads = sum(client.nthreads().values()) or 1
    size = max(1, min(BATCH_MAX, len(items) // (threads * IN_FLIGHT_PER_THREAD * 4)))
    batches = iter([items[i:i + size] for i in range(0, len(items), size)])
    state = client.scatter(shared, broadcast=True, hash=False)
    items_of = {}

    def submit(batch):
        future = client.submit(_batch, fn, batch, state, pure=False)
        items_of[future] = batch
        return future

    finished = as_completed([submit(b) for b in
                             islice(batches, threads * IN_FLIGHT_PER_THREAD)])
    try:
        for future in finished:
            batch = items_of.pop(future)
            try:
                results = future.result()
            except KilledWorker as exc:
                results = [on_lost(item, exc) for item in batch]
            future.release()
            for more in islice(batches, 1):
                finished.add(submit(more))
            for item, result in zip(batch, results):
                on_result(item, result)
    except BaseException:
        client.cancel(list(items_of))
        raise
    finally:
        client.cancel(state)


BATCH_MAX = 16  # items per cluster task at most


def _batch(fn: Callable, items: Sequence, shared: Any) -> list:
    """A cluster task: ``fn`` on each item of a batch, on one worker."""
    return [fn(item, shared) for item in items]


__all__ = ["RunResult", "evaluate_paths", "read_run", "dask_client", "map_on_cluster",
           "evaluate_sharded", "Sharded"]
