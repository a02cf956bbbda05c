"""Where irbench keeps what it can make again: run stamps and ir_datasets files in
``$IRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/irbench``, else ``~/.cache/irbench``; the spill
folders of huge runs in the temporary folder, named by :func:`spill_prefix`. Imports nothing
heavy: the run stamp and ``irbench eval`` read it at start-up."""

from __future__ import annotations

import os
import re

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
