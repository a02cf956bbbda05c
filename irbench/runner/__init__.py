"""``irbench run``: a campaign's config scored into its store, incrementally.

- ``campaign.py``: one campaign run, stage by stage (``run_campaign``, ``check_campaign``);
- ``inputs.py``: files hashed, topics and qrels sets read and checked, measures per set;
- ``plan.py``: what the store lacks, as one :class:`~.score.Task` per system;
- ``score.py``: one system scored (its checks, then ``score_run`` per qrels set);
- ``record.py``: outcomes written to the store in batches, and the final checks;
- ``results.py``: failures, warnings and the ``RunReport``;
- ``engine.py``: ``Engine.map`` in this process, in worker processes or on a Dask cluster;
- ``shards.py``: a huge run scored in topic shards; ``parallel.py``: ``irbench eval``'s
  runs on worker processes, a big file read in parts;
- ``stamp.py``: the run stamp that answers an unchanged rerun before any heavy import.

Submodules are imported when first used: the command line's fast path imports ``stamp`` alone.
"""

from __future__ import annotations

from typing import Any

from ..registry import exported

_EXPORTS = {"run_campaign": "campaign", "check_campaign": "campaign",
            "RunReport": "results", "Failure": "results"}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    return exported(__name__, _EXPORTS, name)
