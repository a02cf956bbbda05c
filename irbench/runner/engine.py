"""One way to compute ``fn(item, shared)`` for many items: :class:`InProcess`, :class:`Processes`
(worker processes of this machine) and :class:`Cluster` (a Dask cluster), behind one
``Engine.map(fn, items, shared, on_result, on_lost)``.

``shared`` is what every item needs (prepared qrels, settings): it reaches each worker once,
and ``fn`` receives it as an argument, so no worker keeps it in a module global. Results are
handed to ``on_result(item, result)`` in this process as they finish (any order), so the
caller writes them (the store has a single writer) and its memory stays bounded. An item whose
worker dies (killed by the OOM killer, a crash in native code) gets
``on_result(item, on_lost(item, error))``; the other items are still computed.

Worker processes die with the process that started them (:func:`die_with_parent`) and ignore
Ctrl-C, which the parent handles: a ``kill -9``, SIGTERM, SIGHUP or SIGINT of ``irbench``
leaves no worker behind holding the store's descriptors or the caller's stdout.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ClusterError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

Fn = Callable[[Any, Any], Any]
OnResult = Callable[[Any, Any], None]
OnLost = Callable[[Any, BaseException], Any]


class WorkerDied(Exception):
    """The process computing an item ended before returning its result."""


class Engine(Protocol):
    def map(self, fn: Fn, items: Sequence, shared: Any, on_result: OnResult,
            on_lost: OnLost | None = None, meanwhile: Callable[[], None] | None = None
            ) -> None:
        """``on_result(item, fn(item, shared))`` for every item (see the module docstring);
        ``meanwhile()`` runs here once the first items are under way, before any
        ``on_result`` (a new store opened while the workers score)."""


def _raise(item: Any, error: BaseException) -> Any:
    raise error


# The engines are plain classes, not dataclasses: each dataclass costs irbench eval's start-up
# most of a millisecond (tests/test_cli_eval_startup.py, bench/bench_startup.py).


class InProcess:
    """Every item computed here, in order."""

    def map(self, fn: Fn, items: Sequence, shared: Any, on_result: OnResult,
            on_lost: OnLost | None = None, meanwhile: Callable[[], None] | None = None
            ) -> None:
        if meanwhile is not None:
            meanwhile()
        for item in items:
            on_result(item, fn(item, shared))


class Processes:
    """Items computed by ``workers`` processes of this machine, one item at a time each.

    Workers are forked where the platform can (they inherit ``shared`` without a copy until
    written), else spawned with ``shared`` pickled once per worker; each has its own pipe, so
    a worker that dies takes nothing but the item it was computing with it (the items it was
    given to do next are given again), and a new worker takes its place while items remain.
    An exception raised by ``fn`` is raised here (``fn`` is expected to turn a user's mistakes
    into results). Each worker is given one item at a time, except while ``meanwhile`` runs:
    then up to :data:`AHEAD` each, so no worker waits for this process."""

    def __init__(self, workers: int):
        self.workers = workers

    def __repr__(self) -> str:
        return f"Processes({self.workers})"

    def map(self, fn: Fn, items: Sequence, shared: Any, on_result: OnResult,
            on_lost: OnLost | None = None, meanwhile: Callable[[], None] | None = None
            ) -> None:
        import multiprocessing  # here: 8 ms of start-up that one run in-process never needs

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pending = deque(items)
        workers: list[_Worker] = []
        count = max(1, min(self.workers, len(pending)))
        # while ``meanwhile`` runs, at most half of the items are handed out ahead
        ahead = max(1, min(AHEAD, len(pending) // (2 * count))) if meanwhile else 1

        def start() -> _Worker:  # a forked worker closes the pipe ends of this process
            ours = [w.pipe for w in workers]
            worker = _Worker.start(context, fn, shared, ours if context.get_start_method()
                                   == "fork" else None)
            workers.append(worker)
            return worker

        try:
            for _ in range(count):
                start()
            _give(workers, pending, ahead, start)
            if meanwhile is not None:
                meanwhile()
            while pending or any(w.items for w in workers):
                _give(workers, pending, 1, start)
                arrived, failed = _collect(workers, pending, start, on_lost or _raise)
                if failed is None:
                    _give(workers, pending, 1, start)  # the next items out before the
                for item, result in arrived:  # results are handled here
                    on_result(item, result)
                if failed is not None:
                    raise failed
        finally:
            for worker in workers:
                worker.stop()


AHEAD = 12  # items a worker is given ahead while ``meanwhile`` runs (a run: ~20-30 ms; a new
# store opened and told a campaign of 129 systems: 0.3 s)


def _give(workers: list[_Worker], pending: deque, depth: int, start: Callable) -> None:
    """Hand out ``pending`` items in turns until each worker has ``depth`` to do (a worker
    found gone while it had nothing to do is replaced; one gone while it had items is left
    for :func:`_collect` to see)."""
    while pending:
        given = False
        for worker in sorted(workers, key=lambda w: len(w.items)):
            if not pending or len(worker.items) >= depth or worker.gone:
                continue
            if worker.give(pending[0]):
                pending.popleft()
                given = True
            elif not worker.items:  # killed while it had nothing to do: it did nothing
                workers.remove(worker)
                worker.stop()
                start()
                given = True
        if not given:
            return


def _collect(workers: list[_Worker], pending: deque, start: Callable, on_lost: OnLost
             ) -> tuple[list, BaseException | None]:
    """Wait for results: ([(item, result)] that arrived, the exception a worker's ``fn``
    raised, if one did). A worker that died loses the item it was computing (its result is
    ``on_lost``'s) and its other items go back to ``pending``; a new worker takes its place
    while items remain."""
    from multiprocessing.connection import wait

    busy: dict[Any, _Worker] = {}
    for worker in workers:
        if worker.items:
            busy[worker.pipe] = busy[worker.process.sentinel] = worker
    arrived: list = []
    seen: set[int] = set()
    for ready in wait(list(busy)):
        worker = busy[ready]
        if id(worker) in seen:
            continue  # its pipe and sentinel were both ready: one result taken per wait
        seen.add(id(worker))
        ok, result = worker.take()
        item = worker.items.popleft()
        if ok is None:  # the worker died: its next items are given again
            pending.extendleft(reversed(worker.items))
            worker.items.clear()
            workers.remove(worker)
            worker.stop()
            result = on_lost(item, result)
            if pending:
                start()
        elif not ok:
            return arrived, result  # stopped with the others
        elif not worker.items and not worker.process.is_alive():
            workers.remove(worker)  # it answered, then died: another takes its place
            worker.stop()
            if pending:
                start()
        arrived.append((item, result))
    return arrived, None


class _Worker:
    """A worker process, the pipe to it, and the items it was given and has not answered
    (the first is the one it computes)."""

    def __init__(self, process: Any, pipe: Connection):
        self.process, self.pipe = process, pipe
        self.items: deque = deque()
        self.gone = False  # a give found its pipe broken: it died

    @classmethod
    def start(cls, context, fn: Fn, shared: Any, ours: list | None) -> _Worker:
        """A new worker; ``ours``: this process's ends of the other workers' pipes, which a
        forked worker closes (else a worker never sees its pipe close when this process
        ends, nor another worker's); None for a spawned worker, which inherits none."""
        here, there = context.Pipe()
        inherited = [here, *ours] if ours is not None else []
        process = context.Process(target=_serve,
                                  args=(fn, shared, there, os.getpid(), inherited),
                                  daemon=True)
        with stops_blocked():  # the worker starts with them blocked: see _serve
            process.start()
        there.close()
        return cls(process, here)

    def give(self, item: Any) -> bool:
        """Hand the worker ``item`` (after those it has); False when it is gone."""
        try:
            self.pipe.send(item)
        except OSError:  # BrokenPipeError: nothing reads the pipe any more
            self.gone = True
            return False
        self.items.append(item)
        return True

    def take(self) -> tuple[bool | None, Any]:
        """(True, result), (False, the exception ``fn`` raised) or (None, WorkerDied)."""
        try:
            if self.pipe.poll():
                return self.pipe.recv()
        except (EOFError, OSError):
            pass
        except Exception as exc:  # an answer that cannot be unpickled here
            return False, RuntimeError(f"a worker's answer could not be read: "
                                       f"{type(exc).__name__}: {exc}")
        self.process.join()
        return None, WorkerDied(f"worker process {self.process.pid} ended "
                                f"(exit code {self.process.exitcode})")

    def stop(self) -> None:
        try:
            self.pipe.send(None)
        except OSError:
            pass
        self.pipe.close()
        self.process.join(timeout=0)
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()


def _serve(fn: Fn, shared: Any, pipe: Connection, parent: int, inherited: list) -> None:
    """A worker: ``fn(item, shared)`` for every item received, until ``None``. ``inherited``:
    the parent's pipe ends a forked worker holds copies of, closed first."""
    import signal  # here, as in die_with_parent: worker processes only

    for end in inherited:
        try:
            end.close()
        except OSError:
            pass
    die_with_parent(parent)
    # Ctrl-C and SIGTERM were blocked from the fork until here (stops_blocked), so neither
    # lands in what a child runs first (random's reseeding, multiprocessing's bootstrap) with
    # the parent's handlers, as a traceback; now Ctrl-C is ignored (the parent's to handle)
    # and SIGTERM ends the worker through every ``finally`` (its spill folder removed), then
    # the signals are let in.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))
    for item in iter(_receiver(pipe), None):
        try:
            reply: tuple[bool, Any] = (True, fn(item, shared))
        except Exception as exc:
            reply = (False, exc)
        try:
            pipe.send(reply)
        except OSError:  # the parent is gone: nobody to answer
            return
        except Exception as exc:  # e.g. an unpicklable exception
            try:
                pipe.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            except OSError:
                return


TERMINATED = 143  # a worker's exit status after SIGTERM: 128 + 15, as a shell reports


def _worker_terminated(signum: int, frame: Any) -> None:
    raise SystemExit(TERMINATED)  # quiet in multiprocessing's bootstrap: no traceback


@contextmanager
def stops_blocked() -> Iterator[None]:
    """SIGINT and SIGTERM blocked in this thread while a worker is started (the worker
    inherits the mask and lets them in once its own handlers are set) or a native extension
    is imported (a handler's exception raised inside its set-up aborts the process); one that
    came for this process meanwhile is delivered as the block ends. Nothing where there is no
    signal mask."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _receiver(pipe: Connection) -> Callable[[], Any]:
    def receive():
        try:
            return pipe.recv()
        except (EOFError, OSError):  # the parent is gone
            return None
    return receive


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel kill this (worker) process when its parent dies, however the parent
    dies (Linux ``PR_SET_PDEATHSIG``; elsewhere nothing is done). ``parent``: the pid the
    worker was started by, default the current parent; if it is already gone, exit now."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here: only worker processes need it
    import signal

    parent = os.getppid() if parent is None else parent
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: workers end when their pipe closes
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_KEEP_FREED = 128 << 20  # bytes of freed memory a process keeps for its next arrays


def reuse_freed_memory() -> None:
    """Have glibc keep freed memory for the next arrays instead of handing every big block
    back to the kernel (arrays up to 64 MiB come from the heap, up to 128 MiB of it kept
    free). By default each array over a few MiB is a fresh mapping that the kernel faults in
    and zeroes page by page: reading 129 run files of 2 MB spent 0.84 s of its 1.23 s of
    tokenising in the kernel. For irbench's own processes (the command line and the workers
    it forks), not a library's caller; elsewhere than glibc nothing is done."""
    mallopt = _glibc("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, _KEEP_FREED // 2)
        mallopt(_M_TRIM_THRESHOLD, _KEEP_FREED)


def release_freed_memory() -> None:
    """Hand the freed memory inside glibc's heap back to the kernel (``malloc_trim``): after
    each topic shard of a huge run, whose arrays of tens of MiB are freed between chunks still
    in use, the heap's holes would otherwise stay resident and grow shard after shard (400 MB
    over the shards of a 2.6 GB run). Elsewhere than glibc nothing is done."""
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)


def _glibc(function: str) -> Callable[..., int] | None:
    """glibc's ``function`` (mallopt, malloc_trim), or None where there is none (not Linux;
    musl has neither)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: numpy has imported it already

    try:
        return getattr(ctypes.CDLL(None), function)
    except (OSError, AttributeError):
        return None


def worker_count(workers: int | None, jobs: int) -> int:
    """``workers`` (default: the CPUs this process may use), at most ``jobs``, at least 1."""
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    return max(1, min(workers, jobs))


# ---- a Dask cluster -----------------------------------------------------------------------

CONNECT_TIMEOUT = 10.0  # seconds to reach a Dask scheduler before giving up
CLOSE_TIMEOUT = 5.0  # seconds to say goodbye to it
IN_FLIGHT_PER_THREAD = 4  # tasks submitted ahead per worker thread
BATCH_MAX = 16  # items per cluster task at most


class Cluster:
    """Items computed on the Dask cluster of ``client`` (a ``distributed.Client``).

    ``shared`` is a task's result (see :func:`_keep`), copied to each worker once; items
    travel in batches (a few per worker thread in flight, so the scheduler's per-task cost is
    paid per batch); a task whose worker dies is retried by Dask on another worker. Dask
    counts a death against every task assigned to the worker, so a batch that "killed" its
    workers more often than Dask allows may be innocent: its items are tried again at the
    end, one at a time, alone on the cluster, and only an item that kills its workers on its
    own goes to ``on_lost``. A scheduler that is lost is a :class:`ClusterError`."""

    def __init__(self, client: Any, address: str = ""):
        self.client, self.address = client, address

    def map(self, fn: Fn, items: Sequence, shared: Any, on_result: OnResult,
            on_lost: OnLost | None = None, meanwhile: Callable[[], None] | None = None
            ) -> None:
        from distributed import as_completed
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker

        on_lost = on_lost or _raise
        client = self.client
        threads = sum(client.nthreads().values()) or 1
        size = max(1, min(BATCH_MAX, len(items) // (threads * IN_FLIGHT_PER_THREAD * 4)))
        batches = iter([items[i:i + size] for i in range(0, len(items), size)])
        with warnings.catch_warnings():  # "large object in the task graph": meant, see _keep
            warnings.simplefilter("ignore", UserWarning)
            state = client.submit(_keep, shared, pure=False)
        items_of: dict = {}

        def submit(batch):
            future = client.submit(_batch, fn, batch, state, pure=False)
            items_of[future] = batch
            return future

        def outcome(future, batch: Sequence, alone: bool) -> list | None:
            """The batch's results; None when it killed its workers and is to be tried
            again alone; an item that killed them when alone on the cluster is lost."""
            try:
                results = future.result()
            except KilledWorker as exc:
                if not alone:
                    return None
                results = [on_lost(item, exc) for item in batch]
            except (OSError, TimeoutError, FutureCancelledError) as exc:  # scheduler gone
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ClusterError(
                    f"lost the Dask scheduler at {self.address or 'the cluster'} ({reason}); "
                    "what was scored before is stored, and the next 'irbench run' scores the "
                    "rest") from None
            finally:
                future.release()
            return results

        suspects: list = []  # items of batches that died with their workers
        finished = as_completed([submit(b) for b in
                                 islice(batches, threads * IN_FLIGHT_PER_THREAD)])
        try:
            if meanwhile is not None:
                meanwhile()
            for future in finished:
                batch = items_of.pop(future)
                results = outcome(future, batch, alone=False)
                for more in islice(batches, 1):
                    finished.add(submit(more))
                if results is None:  # a worker died with tasks assigned: each was suspected
                    suspects.extend(batch)
                    continue
                for item, result in zip(batch, results):
                    on_result(item, result)
            for item in suspects:  # then one at a time, alone on the cluster: only the
                future = submit([item])  # item that kills its workers on its own is lost
                results = outcome(future, [item], alone=True)
                items_of.pop(future, None)
                on_result(item, results[0] if results else None)
        except BaseException:
            _quietly(client.cancel, list(items_of))
            raise
        finally:
            _quietly(client.cancel, state)

    def describe(self) -> dict:
        return {"name": "dask", "address": self.address,
                "scheduler": self.client.scheduler.address,
                "worker_threads": sum(self.client.nthreads().values())}


def _quietly(call: Callable, *args: Any) -> None:
    """``call(*args)``, whose failure (a scheduler already gone) adds nothing to the error
    in flight."""
    try:
        call(*args)
    except Exception:
        pass


def _keep(shared: Any) -> Any:
    """The shared value as a task's result: the scheduler holds the task, so when every
    worker holding the value dies it is computed again elsewhere (scattered data would be
    lost for good, and every task needing it with it)."""
    return shared


def _batch(fn: Fn, items: Sequence, shared: Any) -> list:
    """A cluster task: ``fn`` on each item of a batch, on one worker."""
    return [fn(item, shared) for item in items]


@contextmanager
def dask_client(address: str, connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
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
            cluster = distributed.LocalCluster(n_workers=local_workers(address),
                                               threads_per_worker=1, processes=True,
                                               dashboard_address=":0")
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(address, timeout=connect_timeout)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        if cluster is not None:
            _quietly(cluster.close)
        hint = ("a tls:// scheduler needs the certificates of Dask's configuration "
                "(distributed.comm.tls)" if address.startswith("tls://") else
                "is 'dask scheduler' running there, and is its port open?")
        raise ClusterError(f"cannot reach the Dask scheduler at {address} "
                           f"({type(exc).__name__}: {exc}): {hint}") from None
    try:
        yield client
    finally:
        _quietly(client.close, CLOSE_TIMEOUT)  # a scheduler that is gone does not answer
        if cluster is not None:
            _quietly(cluster.close)


MAX_LOCAL_WORKERS = "IRBENCH_MAX_LOCAL_WORKERS"  # overrides the bound of local:N


def local_workers(address: str) -> int:
    """N of ``local:N`` (default: one per CPU), at most the CPUs this machine has unless
    ``IRBENCH_MAX_LOCAL_WORKERS`` allows more: a :class:`ClusterError` otherwise."""
    cpus = os.cpu_count() or 1
    if ":" not in address:
        return cpus
    text = address[len("local:"):]
    limit_text = os.environ.get(MAX_LOCAL_WORKERS, "").strip()
    limit = int(limit_text) if limit_text.isdigit() else cpus
    if not text.isdigit() or not 1 <= int(text) <= limit:
        raise ClusterError(f"{address}: local:N takes N from 1 to {limit} (this machine's "
                           f"CPUs; {MAX_LOCAL_WORKERS} allows more)")
    return int(text)


__all__ = ["Engine", "InProcess", "Processes", "Cluster", "WorkerDied", "dask_client",
           "die_with_parent", "worker_count"]
