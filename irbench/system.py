"""A submitted run and what the campaign says of it: the record the config declares and the
store keeps (``Store.declared_systems``), shared by both without either knowing the other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class System:
    """A submitted run and what the config says about it."""

    name: str
    path: str
    group: str = ""
    type: str = ""
    description: str = ""
    baseline: bool = False
    official: bool = True
    priority: int | None = None  # pooling order within a group: 1 first
    pooled: bool | None = None  # its top documents were judged (None: not declared)
    metadata: dict = field(default_factory=dict, hash=False, compare=False)
