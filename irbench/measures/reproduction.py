"""The reproducibility measures (Breuer et al., SIGIR 2020) as named measures: a registry of
families that compare an original run with its reproduction (or an original (baseline,
advanced) pair with the reproduced pair), computed by :mod:`irbench.stats.repro` as
repro_eval 0.5.0 computes them.

Names follow irbench's measure names (:mod:`irbench.measures.base`): the family, its
parameters that differ from their defaults, a cutoff written ``@k``: ``KTU@1000``,
``RBO(p=0.95)@1000`` (RBO always names its persistence), ``RBO(p=0.8,variant=truncated)@100``.
A family computed from an effectiveness measure's per-topic scores takes that measure's
canonical name in parentheses: ``RMSE(AP)``, ``nRMSE(nDCG@10)``, ``ER(P@10)``,
``DeltaRI(AP)``, ``p_paired(AP)``, ``p_unpaired(AP)``. :func:`parse_repro_measure` is their
parser; the effectiveness measure inside is parsed by :func:`irbench.measures.parse_measure`.
A bare effectiveness measure stands for every family of its kind (:func:`expand`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MeasureParameterError, StatisticsError, UnknownMeasureError
from ..trec import Run
from .base import REGISTRY, Measure, Param, format_value
from .compute import Evaluation
from .names import parse_measure

if TYPE_CHECKING:
    from ..stats.repro import RankedPair

# the computations (irbench.stats.repro) are imported when a value is computed: they import
# scipy, and every config with reproductions: parses these names
DEFAULT_DEPTH = 1000  # repro_eval's RUN_LENGTH and RBO_DEPTH (irbench.stats.repro's defaults)
DEFAULT_P = 0.95  # repro_eval's RBO_P

KINDS = ("reproduced", "replicated")
LEVELS = {"rankings": "how alike the two rankings are, topic by topic",
          "scores": "how close the per-topic scores are",
          "effect": "whether the advanced run's improvement over the baseline came back",
          "test": "whether the reproduced scores differ significantly from the original's"}


@dataclass(frozen=True, eq=False)
class Sides:
    """One original run and its reproduction, each with its per-topic scores (scored on
    every topic of its qrels, a topic the run misses scoring 0: trec_eval -c)."""

    original: Run
    reproduced: Run
    original_scores: Evaluation
    reproduced_scores: Evaluation

    @cached_property
    def pair(self) -> RankedPair:
        from ..stats.repro import rank_pair

        return rank_pair(self.original, self.reproduced)


@dataclass(frozen=True, eq=False)
class Case:
    """What a reproduction's measures see: ``kind`` (reproduced: same topics; replicated:
    other topics), the baseline's :class:`Sides` and the advanced run's (or None)."""

    kind: str
    baseline: Sides
    advanced: Sides | None = None

    def sides(self) -> tuple[tuple[str, Sides], ...]:
        both = (("baseline", self.baseline), ("advanced", self.advanced))
        return tuple((name, s) for name, s in both if s is not None)


@dataclass(frozen=True, kw_only=True, eq=False)
class ReproValue:
    """One value of a reproducibility measure.

    measure: its canonical name; run: ``baseline`` or ``advanced`` (a measure of one run and
    its reproduction) or ``effect`` (of the pair); value: the number (the mean over topics
    for KTU and RBO; NaN where undefined). topics, per_topic: the per-topic values (KTU,
    RBO: the measure per topic; RMSE, nRMSE: original - reproduced) or empty; original,
    reproduced: the per-topic effectiveness scores RMSE compares (else empty)."""

    measure: str
    run: str
    value: float
    topics: tuple[str, ...] = ()
    per_topic: np.ndarray = field(default_factory=lambda: np.zeros(0))
    original: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reproduced: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True, order=True)
class ReproMeasure:
    """A reproducibility family with its parameters set (and its effectiveness measure, for
    the families of per-topic scores); ``str()`` gives the canonical name."""

    family: str
    params: tuple = ()
    measure: Measure | None = None

    def __str__(self) -> str:
        return REPRO[self.family].canonical(self)

    def __repr__(self) -> str:
        return f"ReproMeasure({str(self)!r})"

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    @property
    def definition(self) -> ReproFamily:
        return REPRO[self.family]


@dataclass(frozen=True, kw_only=True)
class ReproFamily:
    """A registered reproducibility family.

    ``compute(case, measure)`` gives its :class:`ReproValue` s; ``level``: one of
    :data:`LEVELS`; ``better``: which values say the reproduction succeeded; ``kinds``: the
    kinds of reproduction it is defined for; ``of_measure``: computed from an effectiveness
    measure's scores (written ``RMSE(AP)``); ``effect``: needs the advanced pair too;
    ``always``: parameters written even at their default."""

    name: str
    description: str
    better: str
    level: str
    compute: Callable[[Case, ReproMeasure], tuple[ReproValue, ...]]
    params: tuple[Param, ...] = ()
    cutoff: str | None = None
    of_measure: bool = False
    effect: bool = False
    kinds: tuple[str, ...] = KINDS
    always: tuple[str, ...] = ()
    expanded_in: tuple[str, ...] | None = None  # kinds a bare measure brings it in (None: kinds)
    check: Callable[[ReproMeasure], str | None] = lambda m: None  # what is wrong, or None
    citation: str = "Breuer et al., SIGIR 2020; repro_eval 0.5.0"

    def make(self, measure: Measure | None = None, **values: Any) -> ReproMeasure:
        known = {p.name: p for p in self.params}
        for key in values:
            if key not in known:
                raise MeasureParameterError(
                    f"{self.name} takes no parameter {key!r}"
                    + (f" (it takes {', '.join(known)})" if known else ""))
        params = tuple((p.name, p.convert(self.name, values[p.name]) if p.name in values
                        else p.default) for p in self.params)
        made = ReproMeasure(self.name, params, measure)
        problem = self.check(made)
        if problem:
            raise MeasureParameterError(f"{self.name}: {problem}")
        return made

    def canonical(self, m: ReproMeasure) -> str:
        if self.of_measure:
            return f"{self.name}({m.measure})"
        named, at = [], ""
        for p in self.params:
            value = m.get(p.name)
            if p.name == self.cutoff:
                at = f"@{format_value(value)}"
            elif value != p.default or p.name in self.always:
                named.append(f"{p.name}={format_value(value)}")
        return f"{self.name}({','.join(named)}){at}" if named else f"{self.name}{at}"


REPRO: dict[str, ReproFamily] = {}


def register(family: ReproFamily) -> ReproFamily:
    """Add a family; a name taken by a measure family or another reproducibility family is a
    bug (one parser reads both kinds of names)."""
    if family.name in REPRO or family.name in REGISTRY:
        raise ValueError(f"reproducibility measure {family.name!r} registered twice")
    if family.level not in LEVELS:
        raise ValueError(f"{family.name}: level {family.level!r}, not one of {', '.join(LEVELS)}")
    REPRO[family.name] = family
    return family


# ---- the families ----------------------------------------------------------------------------

def _agreement(case: Case, m: ReproMeasure, fn) -> tuple[ReproValue, ...]:
    out = []
    for run, sides in case.sides():
        got = fn(sides.pair, m)
        out.append(ReproValue(measure=str(m), run=run, value=got.mean, topics=got.topics,
                              per_topic=got.values))
    return tuple(out)


def _ktu(case: Case, m: ReproMeasure) -> tuple[ReproValue, ...]:
    from ..stats.repro import ktu

    return _agreement(case, m, lambda pair, m: ktu(pair, m.get("depth"),
                                                         variant=m.get("variant")))


def _rbo(case: Case, m: ReproMeasure) -> tuple[ReproValue, ...]:
    from ..stats.repro import rbo

    return _agreement(case, m, lambda pair, m: rbo(pair, m.get("depth"), m.get("p"),
                                                         variant=m.get("variant")))


def _closeness(case: Case, m: ReproMeasure, normalised: bool) -> tuple[ReproValue, ...]:
    from ..stats.repro import closeness

    out = []
    for run, s in case.sides():
        got = closeness(s.original_scores, s.reproduced_scores, m.measure or "")
        measure = m.measure or ""
        out.append(ReproValue(
            measure=str(m), run=run, value=got.nrmse if normalised else got.rmse,
            topics=got.topics, per_topic=got.differences,
            original=np.asarray(s.original_scores[measure], dtype=np.float64),
            reproduced=np.asarray(s.reproduced_scores[measure], dtype=np.float64)))
    return tuple(out)


def _effect(case: Case, m: ReproMeasure, what: str) -> tuple[ReproValue, ...]:
    if case.advanced is None:
        raise StatisticsError(f"{m} compares the advanced run's improvement over the "
                              "baseline: it needs the advanced runs (original and reproduced)")
    from ..stats.repro import effect

    b, a = case.baseline, case.advanced
    got = effect(b.original_scores, a.original_scores, b.reproduced_scores,
                       a.reproduced_scores, m.measure or "")
    return (ReproValue(measure=str(m), run="effect", value=getattr(got, what)),)


def _test(case: Case, m: ReproMeasure, paired: bool) -> tuple[ReproValue, ...]:
    from ..stats.repro import t_test

    return tuple(ReproValue(measure=str(m), run=run,
                            value=t_test(s.original_scores, s.reproduced_scores,
                                               m.measure or "", paired=paired).p_value)
                 for run, s in case.sides())


def _depth_problem(m: ReproMeasure) -> str | None:
    return None if m.get("depth") >= 1 else f"the depth must be >= 1, not {m.get('depth')}"


def _rbo_problem(m: ReproMeasure) -> str | None:
    if not 0 < m.get("p") < 1:
        return f"the persistence p must be between 0 and 1, not {format_value(m.get('p'))}"
    return _depth_problem(m)


_DEPTH = Param("depth", int, DEFAULT_DEPTH, "the cutoff: each ranking's first k "
               "documents (repro_eval's RUN_LENGTH / RBO_DEPTH)")

register(ReproFamily(
    name="KTU", level="rankings", compute=_ktu, cutoff="depth", kinds=("reproduced",),
    check=_depth_problem,
    description="Kendall's tau Union of the original ranking and its reproduction at depth "
    "k, per topic, averaged over the topics both runs rank",
    better="1: the same order; 0: unrelated; -1: reversed",
    params=(Param("variant", str, "repro_eval", "how KTU is computed: a name of "
                  "irbench.stats.repro.KTU_VARIANTS (the table of variants below)"), _DEPTH)))
register(ReproFamily(
    name="RBO", level="rankings", compute=_rbo, cutoff="depth", kinds=("reproduced",),
    always=("p",), check=_rbo_problem,
    description="rank-biased overlap of the original ranking and its reproduction at depth "
    "k with persistence p, per topic, averaged over the topics both runs rank",
    better="1: the same documents in the same order; 0: no document shared",
    params=(Param("p", float, DEFAULT_P, "persistence: the weight of rank d is p^(d-1)"),
            Param("variant", str, "repro_eval", "how the overlaps are weighed: a name of "
                  "irbench.stats.repro.RBO_VARIANTS (the table of variants below)"), _DEPTH)))
register(ReproFamily(
    name="RMSE", level="scores", of_measure=True, kinds=("reproduced",),
    compute=lambda case, m: _closeness(case, m, False),
    description="root mean square of the per-topic differences original - reproduced of an "
    "effectiveness measure (same topics)",
    better="0: every topic scored as in the original; larger: further apart"))
register(ReproFamily(
    name="nRMSE", level="scores", of_measure=True, kinds=("reproduced",),
    compute=lambda case, m: _closeness(case, m, True),
    description="RMSE divided by the largest RMSE the original scores allow, "
    "sqrt(mean(max(x, 1 - x)^2)) (repro_eval's normalisation)",
    better="0: the same scores; 1: as far apart as scores in [0, 1] can be"))
register(ReproFamily(
    name="ER", level="effect", of_measure=True, effect=True,
    compute=lambda case, m: _effect(case, m, "effect_ratio"),
    description="effect ratio: the reproduced mean per-topic improvement of advanced over "
    "baseline divided by the original's",
    better="1: the same effect; below 1: smaller; 0: none; negative: reversed; above 1: "
    "larger"))
register(ReproFamily(
    name="DeltaRI", level="effect", of_measure=True, effect=True,
    compute=lambda case, m: _effect(case, m, "delta_ri"),
    description="Delta relative improvement: the original relative improvement of the "
    "advanced run's mean over the baseline's minus the reproduced one",
    better="0: the same relative improvement; positive: smaller in the reproduction; "
    "negative: larger"))
register(ReproFamily(
    name="p_paired", level="test", of_measure=True, kinds=("reproduced",),
    compute=lambda case, m: _test(case, m, True),
    description="two-sided paired t-test p-value of the original against the reproduced "
    "per-topic scores (same topics)",
    better="large: no evidence the reproduction scores differently; small (< 0.05): it does"))
register(ReproFamily(
    name="p_unpaired", level="test", of_measure=True, expanded_in=("replicated",),
    compute=lambda case, m: _test(case, m, False),
    description="two-sided Student's t-test (equal variances) p-value of the original "
    "against the reproduced per-topic scores (other topics: replicated)",
    better="large: no evidence the reproduction scores differently; small (< 0.05): it does"))


# ---- names -----------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?:\((?P<inner>.*)\))?(?:@(?P<at>[^@()]+))?$",
                      re.DOTALL)


def is_repro_name(text: Any) -> bool:
    """Whether ``text`` names a reproducibility family (``KTU@10``, ``RMSE(AP)``)."""
    if isinstance(text, ReproMeasure):
        return True
    match = _NAME_RE.match(text.strip()) if isinstance(text, str) else None
    return bool(match and match.group("name") in REPRO)


def parse_repro_measure(text: Any) -> ReproMeasure:
    """A reproducibility measure from its name (see the module's docstring)."""
    if isinstance(text, ReproMeasure):
        return text
    if not isinstance(text, str):
        raise UnknownMeasureError(f"not a reproducibility measure name: {text!r}")
    match = _NAME_RE.match(text.strip())
    if not match or match.group("name") not in REPRO:
        raise UnknownMeasureError(f"unknown reproducibility measure {text!r} (known: "
                                  f"{', '.join(REPRO)})")
    family = REPRO[match.group("name")]
    inner, at = match.group("inner"), match.group("at")
    if family.of_measure:
        if not inner or not inner.strip():
            raise MeasureParameterError(f"{family.name} needs an effectiveness measure: "
                                        f"{family.name}(AP), {family.name}(nDCG@10)")
        if at is not None:
            raise MeasureParameterError(f"{family.name} takes no @cutoff: write the cutoff "
                                        f"in its measure, {family.name}(P@{at})")
        return family.make(parse_measure(inner))
    values: dict[str, Any] = {}
    for item in (inner or "").split(","):
        if item.strip():
            key, sep, value = item.partition("=")
            if not sep:
                raise MeasureParameterError(f"{family.name}: expected name=value, not "
                                            f"{item.strip()!r}")
            values[key.strip()] = value.strip()
    if at is not None:
        values[family.cutoff or "@"] = at
    return family.make(**values)


def expand(names, kind: str = "reproduced", *, depths=None, persistences=(DEFAULT_P,),
           advanced: bool = True) -> tuple[ReproMeasure, ...]:
    """The reproducibility measures ``names`` stand for in a reproduction of ``kind``: a
    reproducibility name itself; an effectiveness measure (``AP``) every family of per-topic
    scores defined for the kind (the effect's only with ``advanced``); first, for a
    reproduced kind, KTU at each of ``depths`` and RBO at each depth and persistence
    (``depths`` None: 1000, unless ``names`` name KTU or RBO themselves). A
    family not defined for the kind is a StatisticsError. Each measure once, in order."""
    if kind not in KINDS:
        raise StatisticsError(f"a reproduction is {' or '.join(KINDS)}, not {kind!r}")
    out: list[ReproMeasure] = []
    names = list(names)
    if depths is None:
        ranked = any(is_repro_name(n) and parse_repro_measure(n).definition.level == "rankings"
                     for n in names)
        depths = () if ranked else (DEFAULT_DEPTH,)
    if kind == "reproduced":
        out += [REPRO["KTU"].make(depth=d) for d in depths]
        out += [REPRO["RBO"].make(depth=d, p=p) for d in depths for p in persistences]
    for name in names:
        if is_repro_name(name):
            m = parse_repro_measure(name)
            if kind not in m.definition.kinds:
                raise StatisticsError(f"{m} is not defined for a {kind} reproduction (only "
                                      f"{', '.join(m.definition.kinds)}): the runs are scored "
                                      "on other topics")
            out.append(m)
            continue
        measure = parse_measure(name)
        out += [f.make(measure) for f in REPRO.values()
                if f.of_measure and kind in (f.kinds if f.expanded_in is None else f.expanded_in)
                and (advanced or not f.effect)]
    return tuple(dict.fromkeys(out))


def compute(case: Case, measures) -> tuple[ReproValue, ...]:
    """Every value of ``measures`` (:class:`ReproMeasure` s or names) for ``case``."""
    out: list[ReproValue] = []
    for m in measures:
        m = parse_repro_measure(m)
        if case.kind not in m.definition.kinds:
            raise StatisticsError(f"{m} is not defined for a {case.kind} reproduction")
        out += m.definition.compute(case, m)
    return tuple(out)


def score_measures(measures) -> tuple[Measure, ...]:
    """The effectiveness measures ``measures`` are computed from (each once)."""
    return tuple(dict.fromkeys(m.measure for m in map(parse_repro_measure, measures)
                               if m.measure is not None))
