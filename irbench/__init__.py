"""irbench: TREC-style retrieval evaluation campaigns, from submitted runs to the published
comparison.

The names below are imported on first use, so ``import irbench`` (and the command line's start)
does not pay for numpy and the measures until something needs them.
"""

from __future__ import annotations

import importlib

from .registry import exported

__version__ = "0.1.0"

_EXPORTS = {
    "EvalOptions": "ranked", "PreparedQrels": "ranked", "rank_run": "ranked",
    "EvaluationError": "errors", "FormatError": "errors", "IrbenchError": "errors",
    "MeasureParameterError": "errors", "UnknownMeasureError": "errors",
    "Evaluation": "evaluation", "evaluate": "evaluation", "to_frame": "evaluation",
    "open_store": "notebook",
    "Measure": "measures", "parse_measure": "measures",
    "Qrels": "trec", "Run": "trec", "read_qrels": "trec", "read_run": "trec",
    "agreement": "judgments.agreement",
    "diff": "stats.diffs",
}

SUBPACKAGES = ("stats",)  # irbench.stats after a bare 'import irbench', imported on first use

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name in SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)  # the import binds it here
    return exported(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | set(SUBPACKAGES))
