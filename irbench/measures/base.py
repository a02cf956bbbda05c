"""Measures as values: a registry of families, declared parameters, one canonical name each.

A :class:`Measure` is a frozen value (family + normalised parameters). ``str(measure)`` is its
canonical name and its identity everywhere (the store's ``measure`` column, reports). Names follow
ir_measures where a measure has a common name (``AP``, ``P@10``, ``nDCG@10``, ``RBP(p=0.8)``);
trec_eval-only measures keep trec_eval's output name (``relative_P_5``, ``utility``, ``binG``).

:func:`irbench.measures.names.parse_measure` is the only parser of measure names.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import MeasureParameterError

GEO_MEAN_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN
NEEDS = ("adhoc", "diversity", "judgment_groups", "preferences", "known", "none", "support",
         "nuggets", "answer")


@dataclass(frozen=True)
class Param:
    """A declared measure parameter: its type, default, allowed values and description."""

    name: str
    type: type
    default: Any
    desc: str
    choices: tuple = ()
    positional: bool = False  # written bare, e.g. AP(condensed)

    def convert(self, family: str, raw: Any) -> Any:
        if self.type is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).lower()
            if text in ("1", "true", "yes"):
                return True
            if text in ("0", "false", "no"):
                return False
            raise MeasureParameterError(f"{family}: {self.name} must be true or false, not {raw!r}")
        try:
            value = self.type(raw)
        except (TypeError, ValueError):
            raise MeasureParameterError(
                f"{family}: {self.name} must be {self.type.__name__}, not {raw!r}"
            ) from None
        if self.type is float and not math.isfinite(value):
            raise MeasureParameterError(f"{family}: {self.name} must be finite, not {raw!r}")
        if self.choices and value not in self.choices:
            raise MeasureParameterError(
                f"{family}: {self.name} must be one of {', '.join(map(str, self.choices))}, "
                f"not {raw!r}"
            )
        return value


@dataclass(frozen=True, order=True)
class Measure:
    """A measure family with all its parameters set; ``str()`` gives the canonical name."""

    family: str
    params: tuple = ()

    @cached_property
    def canonical_name(self) -> str:
        """The canonical name, computed once (stores and reports ask for it often)."""
        return REGISTRY[self.family].canonical(self)

    def __str__(self) -> str:
        return self.canonical_name

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def get(self, name: str, default: Any = None) -> Any:
        """The value of parameter ``name`` (``default`` when the family has no such parameter)."""
        for key, value in self.params:
            if key == name:
                return value
        return default

    @property
    def definition(self) -> Family:
        return REGISTRY[self.family]


@dataclass(frozen=True)
class LevelProblem:
    """A measure that does not suit the judgments' levels: ``fatal`` (refused) or a warning."""

    fatal: bool
    text: str


@dataclass(frozen=True)
class Family:
    """A registered measure family.

    ``compute(ranked, measure) -> np.ndarray`` gives one value per evaluated topic.
    ``aggregate`` names how topics combine: ``mean``, ``sum`` (counts), ``gmean``
    (geometric mean with trec_eval's 1e-5 floor), ``none`` (per-topic only) or ``summary``
    (a single value computed by ``summary(values, ranked, measure)``, a hook that, when set,
    replaces the aggregate for every family). ``kind`` is ``float``, ``int`` or ``str``.
    ``missing`` is the value trec_eval -c gives a topic absent from the run, or None to keep
    what the one fake document gives. ``graded``: the measure is meant for graded judgments
    (the runner refuses it on binary qrels). ``needs`` names the judgments it is computed
    from, one of :data:`NEEDS`: ``adhoc`` (any ad hoc judgments), ``diversity`` (subtopics),
    ``judgment_groups``, ``preferences``, ``known`` (ad hoc judgments and the documents the
    user knows), ``none`` (a fact of the run), ``support`` (support labels of an answer's
    citations), ``nuggets`` (nugget assignments) or ``answer`` (a fact of a generated answer);
    :mod:`irbench.judgments` says which kinds of
    judgments serve which. ``lower_is_better``: the smaller value is the better one (E, the
    unjudged share, the RBP residual, judged non-relevant retrieved), so a leaderboard ranks
    and sorts by it smallest first.
    """

    name: str
    description: str
    compute: Callable
    params: tuple[Param, ...] = ()
    cutoff: str | None = None
    aggregate: str = "mean"
    kind: str = "float"
    citation: str = ""
    canonical_fn: Callable | None = None
    summary: Callable | None = None
    missing: Callable | None = None
    graded: bool = False
    needs: str = "adhoc"
    lower_is_better: bool = False

    def level_problem(self, measure: Measure, max_level: int) -> LevelProblem | None:
        """What is wrong with ``measure`` on judgments whose highest level is ``max_level``:
        a ``rel`` above it (every value would be 0: refused), or a family defined on graded
        judgments, or exponential gain, on binary judgments (computed, with a warning).
        ``irbench eval`` and ``irbench run`` both ask this, so they accept and refuse alike;
        a relevance level no judgment reaches is a fact of the qrels, checked apart."""
        level = measure.get("rel")
        if level is not None and level > max_level:
            return LevelProblem(True, f"{measure} counts judgments of level {level} or more as "
                                f"relevant, but the highest level is {max_level}: every value "
                                "would be 0")
        if (self.graded or measure.get("gain") == "exp") and max_level < 2:
            return LevelProblem(False, f"{measure} is meant for graded judgments, but the "
                                f"highest level is {max_level}")
        return None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise MeasureParameterError(
            f"{self.name} takes no parameter {name!r}"
            + (f" (it takes {', '.join(p.name for p in self.params)})" if self.params else "")
        )

    def make(self, **values: Any) -> Measure:
        """Build a measure, converting and validating parameters; defaults fill the rest."""
        for key in values:
            self.param(key)
        params = tuple(
            (p.name, p.convert(self.name, values[p.name]) if p.name in values else p.default)
            for p in self.params
        )
        return Measure(self.name, params)

    def canonical(self, measure: Measure) -> str:
        if self.canonical_fn is not None:
            return self.canonical_fn(measure)
        bare, named, at = [], [], ""
        for p in self.params:
            value = measure.get(p.name)
            if p.name == self.cutoff:
                if value is not None:
                    at = f"@{format_value(value)}"
            elif value != p.default:
                if p.positional:
                    bare.append(format_value(value))
                else:
                    named.append(f"{p.name}={format_value(value)}")
        inner = ",".join(bare + named)
        return f"{self.name}({inner}){at}" if inner else f"{self.name}{at}"


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


REGISTRY: dict[str, Family] = {}
SPELLINGS: dict[str, str] = {}  # other spellings of family names: "alpha-nDCG" -> "alpha_nDCG"


def register(family: Family) -> Family:
    """Add a family to the registry; a second family with the same name is a bug."""
    if family.name in REGISTRY:
        raise ValueError(f"measure family {family.name!r} registered twice")
    if family.needs not in NEEDS:
        raise ValueError(f"measure family {family.name!r}: needs {family.needs!r}, not one of "
                         f"{', '.join(NEEDS)}")
    REGISTRY[family.name] = family
    return family


def register_spelling(spelling: str, name: str) -> None:
    """Accept ``spelling`` for family ``name`` in measure names (``alpha-nDCG@10``); the
    canonical name keeps the family's own spelling (``alpha_nDCG@10``)."""
    if spelling in SPELLINGS or spelling in REGISTRY or name not in REGISTRY:
        raise ValueError(f"measure spelling {spelling!r} for {name!r}: taken or no such family")
    SPELLINGS[spelling] = name


# ---- aggregation -------------------------------------------------------------------------


def summarise(measure: Measure, values: np.ndarray, ranked) -> Any:
    """The summary value of ``measure``'s per-topic ``values`` as trec_eval computes it."""
    family = measure.definition
    if family.summary is not None:
        return family.summary(values, ranked, measure)
    if family.aggregate == "none":
        return None
    if len(values) == 0:
        return 0 if family.aggregate == "sum" else 0.0
    if family.aggregate == "sum":
        return int(np.sum(values))
    if family.aggregate == "gmean":
        logs = np.log(np.maximum(values, GEO_MEAN_FLOOR))
        return float(np.exp(sequential_sum(logs) / len(values)))
    return float(sequential_sum(values) / len(values))


def sequential_sum(values: np.ndarray) -> float:
    """Left-to-right float64 sum, as trec_eval accumulates (np.sum is pairwise)."""
    return float(np.cumsum(values, dtype=np.float64)[-1]) if len(values) else 0.0
