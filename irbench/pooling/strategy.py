"""The registry of pooling strategies and their declared parameters.

A strategy is looked up by name in :data:`STRATEGIES`, never through an if/elif chain. Each
declares its parameters as data (:class:`Param`), so validation, help text and docs come from
one place. Static strategies compute a :class:`StaticPlan` (which candidates, in which order);
adaptive ones provide a policy that chooses, at every judging step and for every topic at once,
the run (arm) whose next unjudged document is judged next.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import PoolingError, UnknownStrategyError
from ..registry import Registry


@dataclass(frozen=True)
class Param:
    """One strategy parameter: its type, default, meaning and bounds."""

    dtype: type
    default: Any
    desc: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None


@dataclass(frozen=True)
class StaticPlan:
    """What a static strategy pools, over the table's candidates.

    pooled: candidates in the pool when no budget cuts it (for sampling strategies: the
        depth-k pool the sample is drawn from);
    priority: judging order within a topic, lower first (only read where ``sampled``);
    level: pacing under a total budget, lower first across all topics (depth for depth-k);
    sampled: the candidates to judge; None means every pooled candidate;
    stratum: a stratum number per candidate (sampling) or None;
    depth: the deepest rank the plan takes from any run (caps provenance), None: no cap.
    """

    pooled: np.ndarray
    priority: np.ndarray
    level: np.ndarray
    sampled: np.ndarray | None = None
    stratum: np.ndarray | None = None
    depth: int | None = None


@dataclass(frozen=True)
class Strategy:
    """A registered pooling strategy (see :func:`describe` for a readable summary)."""

    name: str
    summary: str
    reference: str
    params: dict[str, Param]
    adaptive: bool
    scope: str                       # "topic": budgets per topic; "global": across topics
    plan: Callable | None = None     # static: (table, contributing, params, rng) -> StaticPlan
    policy: type | None = None       # adaptive: a policy class (see adaptive.py)
    fixed: dict = field(default_factory=dict)  # parameter values implied by the name


STRATEGIES: Registry[Strategy] = Registry("pooling strategy")

#: Parameters every strategy takes (besides its own).
COMMON_PARAMS = {
    "max_depth": Param(int, None, "only documents a contributing run ranked at or above this "
                       "depth are candidates (None: every retrieved document)", minimum=1),
}


def register(strategy: Strategy) -> Strategy:
    """Add ``strategy`` to :data:`STRATEGIES`; a second strategy of the same name is a bug."""
    if strategy.scope not in ("topic", "global"):
        raise ValueError(f"scope must be 'topic' or 'global', not {strategy.scope!r}")
    if (strategy.plan is None) == (strategy.policy is None):
        raise ValueError("a strategy has either a plan (static) or a policy (adaptive)")
    return STRATEGIES.add(strategy)


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``, or :class:`UnknownStrategyError` listing the known ones."""
    try:
        return STRATEGIES[name]
    except KeyError:
        close = STRATEGIES.closest(name)
        hint = f" (did you mean {close}?)" if close else ""
        raise UnknownStrategyError(f"unknown pooling strategy {name!r}{hint}; known: "
                                   f"{', '.join(sorted(STRATEGIES))}") from None


def resolve_params(strategy: Strategy, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` checked against the declaration, with defaults filled in.

    Every problem is reported at once in one :class:`PoolingError`.
    """
    declared = {**COMMON_PARAMS, **strategy.params}
    problems = []
    out: dict[str, Any] = {}
    for key in given:
        if key not in declared:
            close = difflib.get_close_matches(key, declared, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"unknown parameter {key!r}{hint}; {strategy.name} takes "
                            f"{', '.join(sorted(declared)) or 'none'}")
    for key, param in declared.items():
        value = given.get(key, strategy.fixed.get(key, param.default))
        if value is None:
            out[key] = None
            continue
        try:
            value = _coerce(param, value)
        except (TypeError, ValueError):
            problems.append(f"{key} must be {param.dtype.__name__} (got {value!r})")
            continue
        low, high = param.minimum, param.maximum  # bound now: the lambdas run at once
        if low is not None and _compare(value, lambda v, low=low: v < low):
            problems.append(f"{key} must be >= {param.minimum} (got {value!r})")
        if high is not None and _compare(value, lambda v, high=high: v > high):
            problems.append(f"{key} must be <= {param.maximum} (got {value!r})")
        if param.choices is not None and value not in param.choices:
            problems.append(f"{key} must be one of {', '.join(map(str, param.choices))} "
                            f"(got {value!r})")
        out[key] = value
    if problems:
        raise PoolingError(f"{strategy.name}: " + "; ".join(problems))
    return out


def _coerce(param: Param, value: Any) -> Any:
    if param.dtype is tuple:
        return tuple(tuple(float(x) for x in item) if isinstance(item, (list, tuple)) else item
                     for item in value)
    if param.dtype is int:
        if isinstance(value, bool) or int(value) != value:
            raise ValueError
        return int(value)
    if param.dtype is float:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    if param.dtype is str:
        if not isinstance(value, str):
            raise TypeError
        return value
    return param.dtype(value)


def _compare(value: Any, bad: Callable) -> bool:
    return isinstance(value, (int, float)) and bad(value)


def describe(name: str | None = None) -> str:
    """Readable help for one strategy or all of them: summary, reference, parameters."""
    names = [name] if name else sorted(STRATEGIES)
    blocks = []
    for n in names:
        s = get_strategy(n)
        lines = [f"{s.name}: {s.summary}", f"  reference: {s.reference}",
                 f"  {'adaptive' if s.adaptive else 'static'}, budget per "
                 f"{'topic' if s.scope == 'topic' else 'campaign (all topics)'}"]
        for key, p in {**s.params, **COMMON_PARAMS}.items():
            default = s.fixed.get(key, p.default)
            lines.append(f"  {key} ({p.dtype.__name__}, default {default!r}): {p.desc}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
