"""HTML reports of a campaign: ``build_context`` computes, ``render`` prints (see context.py);
``analyses`` computes and stores the experiments that need the run files (``irbench run``,
``irbench analyse``). Submodules are imported when first used: ``irbench run`` asks
``analyses`` what the config wants without importing the report's statistics and charts."""

from typing import Any

from ..registry import exported

_EXPORTS = {"ReportContext": "contract", "build_context": "context",
            "undocumented_fields": "contract", "render": "render", "write_report": "render"}

__all__ = ["ReportContext", "build_context", "render", "write_report", "undocumented_fields"]


def __getattr__(name: str) -> Any:
    return exported(__name__, _EXPORTS, name)
