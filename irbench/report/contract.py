"""The report contexts' contract: every field of every dataclass a template reads says what it
holds (``metadata["help"]``); a test fails on any that does not."""

from __future__ import annotations

from dataclasses import fields

from .context import CONTEXT_TYPES
from .overview import OVERVIEW_TYPES
from .runpages import PAGE_TYPES
from .svg import SVG_TYPES


def undocumented_fields() -> list[str]:
    """Fields without help text (the contract test expects none)."""
    return [f"{t.__name__}.{f.name}"
            for t in (*CONTEXT_TYPES, *OVERVIEW_TYPES, *PAGE_TYPES, *SVG_TYPES)
            for f in fields(t) if not f.metadata.get("help")]
