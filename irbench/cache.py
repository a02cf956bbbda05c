"""Where irbench keeps what it can make again (run stamps, ir_datasets files):
``$IRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/irbench``, else ``~/.cache/irbench``. Imports
nothing heavy: the run stamp and ``irbench eval`` read it at start-up."""

from __future__ import annotations

import os


def cache_folder() -> str:
    explicit = os.environ.get("IRBENCH_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irbench")
