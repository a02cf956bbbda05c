"""One registry type for every kind irbench knows more than one of (judgment kinds, pooling
strategies, qrels rules, judge tasks, assessment screens, run sources): members by their one
canonical ``name``, added once (a second member of a name is a bug, found at import), looked
up with the closest name offered when one is unknown. See docs/extending.md. And
:func:`exported`: a package's names by the module that holds each, imported when first asked
for (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Generic, Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(dict[str, T], Generic[T]):
    """A ``dict`` of members by name (so ``in``, ``[name]`` and ``.values()`` read it, in
    registration order), with :meth:`add` the only way in. ``kind`` names the members in
    messages ("qrels rule", "run source" ...)."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def add(self, member: T) -> T:
        """Add ``member``; a second of the same name is a ValueError (a bug)."""
        name = member.name
        if name in self:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self[name] = member
        return member

    def closest(self, name: object) -> str | None:
        """The registered name closest to ``name`` (difflib), or None."""
        import difflib  # only when a name is unknown

        close = difflib.get_close_matches(str(name), list(self), n=1)
        return close[0] if close else None


def exported(package: str, exports: dict[str, str], name: str) -> Any:
    """The ``__getattr__`` of a package whose names live in its modules (``irbench``,
    ``irbench.runner``, ``irbench.documents`` ...), so that importing it imports none of them:
    ``name`` from its module ``exports[name]`` (imported now), bound in the package so the
    next use finds it there; AttributeError for a name it does not export."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", package), name)
    setattr(sys.modules[package], name, value)
    return value
