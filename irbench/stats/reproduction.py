"""Reproductions computed: an original baseline (and advanced) run and their reproductions,
scored and compared by the reproducibility measures (:mod:`irbench.measures.reproduction`),
from files (:func:`reproduce`, ``irbench repro --qrels ...``) or from a config's
``reproductions:`` (:func:`config_reproductions`, ``irbench repro CONFIG``, the report).

Each run is scored on every topic of its qrels, a topic it misses scoring 0 (trec_eval -c,
as repro_eval's scores of a reproduction that misses a topic); the rankings are the run
files'."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..config.reproductions import collection_problems
from ..errors import ConfigError, StatisticsError
from ..evaluation import evaluate
from ..measures.reproduction import Case, ReproValue, Sides, compute, expand, score_measures
from ..ranked import EvalOptions
from ..trec import read_qrels, read_run


@dataclass(frozen=True, kw_only=True)
class ReproResult:
    """One reproduction's values.

    name: the reproduction's name; kind: reproduced or replicated; collection: the
    collection of a config with collections ('' otherwise); baseline, advanced: (original,
    reproduced) run names (advanced None without advanced runs); measures: the canonical
    names computed, in order; values: every value (see
    :class:`~irbench.measures.reproduction.ReproValue`)."""

    name: str
    kind: str
    collection: str
    baseline: tuple[str, str]
    advanced: tuple[str, str] | None
    measures: tuple[str, ...]
    values: tuple[ReproValue, ...]


def reproduce(qrels: Any, baseline: tuple[Any, Any], advanced: tuple[Any, Any] | None = None,
              *, measures=("AP",), kind: str = "reproduced", qrels_reproduced: Any = None,
              depths=None, persistences=(0.95,), options: EvalOptions | None = None,
              name: str = "", collection: str = "") -> ReproResult:
    """The reproducibility measures of ``baseline`` = (original, reproduced) runs (paths or
    runs) and, given, ``advanced``; ``measures``: effectiveness measures (each standing for
    every family of the kind) or reproducibility names (see
    :func:`~irbench.measures.reproduction.expand`, with ``depths`` and ``persistences``);
    ``kind`` replicated: the reproduced runs are scored on ``qrels_reproduced``."""
    if kind == "replicated" and qrels_reproduced is None:
        raise StatisticsError("a replicated reproduction is scored on other topics: give the "
                         "reproduced runs' qrels")
    chosen = expand(measures, kind, depths=depths, persistences=persistences,
                    advanced=advanced is not None)
    options = replace(options or EvalOptions(), complete=True)
    scored = score_measures(chosen)
    original_qrels = qrels if not isinstance(qrels, str) else read_qrels(qrels)
    other = original_qrels if qrels_reproduced is None else (
        read_qrels(qrels_reproduced) if isinstance(qrels_reproduced, str) else qrels_reproduced)

    def sides(pair: tuple[Any, Any]) -> Sides:
        original, reproduced = (r if not isinstance(r, str) else read_run(r) for r in pair)
        return Sides(original=original, reproduced=reproduced,
                     original_scores=evaluate(original_qrels, original, scored, options),
                     reproduced_scores=evaluate(other, reproduced, scored, options))

    b = sides(baseline)
    case = Case(kind=kind, baseline=b, advanced=sides(advanced) if advanced else None)
    names = (b.original.name, b.reproduced.name)
    adv = case.advanced
    return ReproResult(name=name or f"{names[0]} -> {names[1]}", kind=kind,
                       collection=collection, baseline=names,
                       advanced=(adv.original.name, adv.reproduced.name) if adv else None,
                       measures=tuple(map(str, chosen)), values=compute(case, chosen))


def config_reproductions(views, name: str | None = None) -> list[ReproResult]:
    """Every reproduction of a config (``views``: :func:`irbench.config.load_configs` with
    systems), or the one called ``name``: on each collection for a config with collections,
    unless its ``collections:`` names the two."""
    first = views[0]
    named = first.collections_named or ()
    problems = collection_problems(first.reproductions, named, first.path,
                                   lambda where: first.lines.get(where, 0)) if named else []
    if problems:
        raise ConfigError(problems)
    known = {r.name for r in first.reproductions}
    if name is not None and name not in known:
        raise ConfigError([f"{first.path}: no reproduction '{name}' (it has "
                           f"{', '.join(sorted(known)) or 'none'})"])
    by_scope = {v.scope: v for v in views}
    out = []
    for view in views:
        for r in view.reproductions:
            if (name is not None and r.name != name) or r.collections[0] not in (None,
                                                                                  view.scope):
                continue
            other = by_scope.get(r.collections[1] or view.scope)
            if other is None:
                continue  # that collection's view was not loaded (--collection)
            out.append(_one(view, other, r))
    return out


def _one(view, other, r) -> ReproResult:
    def run(config, system: str):
        systems = {s.name: s for s in config.systems}
        if system not in systems:
            raise ConfigError([f"{config.path}: reproduction '{r.name}': no system '{system}'"
                               f" on collection {config.scope}"])
        return read_run(systems[system].path, name=system)

    def qrels(config, set_name):
        sets = {q.name: q for q in config.qrels}
        chosen = sets[set_name] if set_name else config.qrels[0]
        return chosen.read()

    def pair(p):
        return (run(view, p.original), run(other, p.reproduced)) if p else None

    return reproduce(qrels(view, r.qrels[0]), pair(r.baseline), pair(r.advanced),
                     measures=r.measures, kind=r.kind,
                     qrels_reproduced=qrels(other, r.qrels[1]) if r.kind == "replicated"
                     else None,
                     options=view.settings.options(), name=r.name,
                     collection=view.scope if view.several else "")
