"""A new store made in a thread (:func:`create_soon`), for ``irbench run`` to go on with its
imports and reads meanwhile."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..errors import StoreError
from . import create


def create_soon(path: str) -> Callable[[], None]:
    """Begin making the store at ``path`` (if there is none) in a thread; returns the wait for
    it. DuckDB works without the GIL, so the caller's imports and reads go on beside it (0.1-0.2
    s of a new store); a failure is left for ``Store(path)`` to meet again and report."""
    def make() -> None:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            create(path)
        except (StoreError, OSError):
            pass

    thread = threading.Thread(target=make, name="irbench-new-store", daemon=True)
    if not os.path.exists(path):
        thread.start()
    return lambda: thread.join() if thread.ident is not None else None
