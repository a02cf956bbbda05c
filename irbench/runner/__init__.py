"""``irbench run``: a campaign's config scored into its store, incrementally.

- ``campaign.py``: the plan (what the store lacks), the submission checks, scoring and the
  batched writes of every system's outcome (``run_campaign``, ``check_campaign``);
- ``parallel.py``: the worker processes, the topic shards of huge runs and the Dask cluster;
- ``stamp.py``: the run stamp that answers an unchanged rerun before any heavy import.

Submodules are imported when first used: the command line's fast path imports ``stamp`` alone.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"run_campaign": "campaign", "check_campaign": "campaign",
            "RunReport": "campaign"}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'irbench.runner' has no attribute '{name}'")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
