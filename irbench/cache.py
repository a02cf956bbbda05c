"""Where irbench keeps what it can make again: run stamps and ir_datasets files in
``$IRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/irbench``, else ``~/.cache/irbench``; the spill
folders of huge runs in the temporary folder, named by :func:`spill_prefix`. Imports nothing
heavy: the run stamp and ``irbench eval`` read it at start-up."""

from __future__ import annotations

import os
import re
from typing import Any

SPILL_PREFIX = "irbench-shards-"


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (owned by anyone): a stray file or spill folder named
    by a pid is removed only once its process is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process; a pid no process can have
        return True
    return True


def spill_prefix() -> str:
    """``irbench-shards-HOST-PID-``: whose spill folder it is, so that only this host's sweep
    (irbench.runner.shards.sweep_spills) judges it: a temporary folder may be shared by
    hosts or containers."""
    node = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
    host = re.sub(r"[^A-Za-z0-9.]", "_", node)[:64] or "host"
    return f"{SPILL_PREFIX}{host}-{os.getpid()}-"


def cache_folder() -> str:
    explicit = os.environ.get("IRBENCH_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irbench")


class SpillFolder:
    """A spill folder (``with SpillFolder(kind) as path``) that its own process removes however
    scoring ends short of SIGKILL: made and registered for removal with Ctrl-C and SIGTERM
    held (:class:`SignalsHeld`), so no signal lands between the folder's creation and its
    cleanup's registration; removed in ``__exit__`` with them held again, so a signal cannot
    cut the removal short; and, through :class:`tempfile.TemporaryDirectory`'s finalizer, at
    interpreter exit should nothing else have run. ``optional``: no folder (``None``) when
    none can be made (no room, no temporary folder)."""

    def __init__(self, kind: str = "", optional: bool = False):
        self.kind, self.optional = kind, optional
        self.holder: Any = None

    def __enter__(self) -> str | None:
        import tempfile  # here: a big run needs it, irbench eval's start-up does not

        with SignalsHeld():
            try:
                self.holder = tempfile.TemporaryDirectory(prefix=spill_prefix() + self.kind)
            except OSError:
                if not self.optional:
                    raise
                return None
        return self.holder.name

    def __exit__(self, *exc: object) -> None:
        if self.holder is not None:
            with SignalsHeld():
                self.holder.cleanup()


class SignalsHeld:
    """Ctrl-C and SIGTERM held while the block runs (in the main thread; elsewhere signals
    are not this code's to handle): one that arrives is acted on as the block ends, by the
    handler that was in place, so a folder is never made without its removal registered nor
    half removed. Held at Python level, not by the signal mask: Python runs handlers in the
    main thread whichever thread the kernel chose."""

    def __init__(self) -> None:
        self.got: list[int] = []
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> SignalsHeld:
        import signal  # here: 0.5 ms of irbench eval's start-up

        self.signal = signal
        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.saved[signum] = signal.signal(signum, self._hold)
        except ValueError:  # not the main thread
            self._restore()
        return self

    def _hold(self, signum: int, frame: object) -> None:
        self.got.append(signum)

    def _restore(self) -> None:
        for signum, handler in self.saved.items():
            self.signal.signal(signum, handler if handler is not None else self.signal.SIG_DFL)
        self.saved = {}

    def __exit__(self, *exc: object) -> None:
        self._restore()
        for signum in dict.fromkeys(self.got):  # each once, as the handler in place would
            self.signal.raise_signal(signum)
