"""HTML reports of a campaign: ``build_context`` computes, ``render`` prints (see context.py)."""

from .context import ReportContext, build_context, undocumented_fields
from .render import render, write_report

__all__ = ["ReportContext", "build_context", "render", "write_report", "undocumented_fields"]
