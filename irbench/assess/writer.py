"""The assessment server's writes to the store: one thread, in the order they were made, in
group commits.

A judgment is acknowledged (the assessor's page moves on) only once it is committed, so a
server killed at any moment loses nothing acknowledged. Clicks that arrive while a commit is
under way are written together in the next one (one statement, one commit): under load the cost
of a commit is shared, and the desk's lock is never held while the disk is written. The pool's
state, saved at hand-outs, goes through the same queue, so it is stored after exactly the
clicks it has applied (and is compressed here, not under the desk's lock).

The writer has a connection of its own (:meth:`Store.for_thread`); the server's readers use
the store's.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from ..errors import IrbenchError
from ..pooling.persist import encode_state
from ..store import AnswerLabel, Click, Store

GROUP = 256  # at most this many writes in one commit


class WriteFailed(IrbenchError):
    """The store could not be written: the server takes no more judgments."""


@dataclass(frozen=True)
class _State:
    strategy: str
    data: dict  # PoolingState.to_dict() of a copy, encoded here (off the desk's lock)
    applied: int


_STOP = object()


class Writer:
    """See the module docstring. Use as a context manager (the thread stops, after writing
    everything queued, at the end of the block)."""

    def __init__(self, store: Store, pool: str):
        self.store, self.pool, self.path = store.for_thread(), pool, store.path
        self.failed: str | None = None
        self.commits = 0  # how many commits wrote the writes so far (for tests and benches)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="irbench-assess-writer",
                                        daemon=True)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._queue.put(_STOP)
        self._thread.join()
        self.store.close()

    def click(self, click: Click) -> Future:
        """Queue a judgment; the future is done when it is committed."""
        return self._put(click)

    def label(self, row: AnswerLabel) -> Future:
        """Queue an answer's label (the support screen's); the future is done when it is
        committed (in ``answer_labels``)."""
        return self._put(row)

    def state(self, strategy: str, data: dict, applied: int) -> Future:
        """Queue the pool's state (``data``: ``PoolingState.to_dict()``, not changed after;
        ``applied``: the clicks queued before it)."""
        return self._put(_State(strategy, data, applied))

    def _put(self, what: Click | AnswerLabel | _State) -> Future:
        done: Future = Future()
        if self.failed is not None:
            done.set_exception(WriteFailed(self.failed))
        else:
            self._queue.put((what, done))
        return done

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            group = [first]
            stop = False
            while len(group) < GROUP:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                group.append(more)
            self._write(group)
            if stop:
                return

    def _write(self, group: list[tuple[Click | AnswerLabel | _State, Future]]) -> None:
        if self.failed is not None:
            for _, done in group:
                done.set_exception(WriteFailed(self.failed))
            return
        try:
            clicks = [what for what, _ in group if isinstance(what, Click)]
            if len(clicks) == len(group):  # one statement commits
                self.store.save_clicks(self.pool, clicks)
            else:
                self._together(group)
            self.commits += 1
        except Exception as exc:  # the disk, the store: nothing of the group was written
            self.failed = (f"the store {self.path} could not be written ({exc}); "
                           "nothing after the last acknowledged judgment was saved: stop the "
                           "server and start it again")
            for _, done in group:
                done.set_exception(WriteFailed(self.failed))
            return
        for _, done in group:
            done.set_result(None)

    def _together(self, group: list[tuple[Click | AnswerLabel | _State, Future]]) -> None:
        """Clicks, answer labels and states, one transaction: every click and label, in the
        order queued, and the last state only (the group commits as one: the states before it
        would be replaced within the transaction; the last holds every hand-out a click of the
        group can be of, as a document is handed out, and its state queued, before it can be
        clicked)."""
        states = [what for what, _ in group if isinstance(what, _State)]
        clicks = [what for what, _ in group if isinstance(what, Click)]
        labels = [what for what, _ in group if isinstance(what, AnswerLabel)]
        with self.store.transaction():
            if clicks:
                self.store.save_clicks(self.pool, clicks)
            if labels:  # the support screen's, in the order queued
                self.store.record_answer_labels(labels)
            if states:
                last = states[-1]
                self.store.save_pool_state(self.pool, last.strategy,
                                           *encode_state(last.data), last.applied)
