"""A config's ``reproductions:``: original systems and their reproductions, compared by the
reproducibility measures (:mod:`irbench.measures.reproduction`)::

    reproductions:
      - name: rm3-again
        baseline: {original: bm25, reproduced: bm25-ours}
        advanced: {original: rm3, reproduced: rm3-ours}     # optional
        measures: [AP, P@10, KTU@100]                      # default: the first suite's first
      - name: rm3-elsewhere
        kind: replicated                                   # other topics
        baseline: {original: bm25, reproduced: bm25-ours}
        qrels: {original: official, reproduced: other}     # qrels sets of the collection
        # or, in a config with collections:, collections: {original: dl19, reproduced: dl20}

``kind: reproduced`` (the default) compares runs on the same topics and qrels; ``replicated``
compares runs on other topics: another qrels set of the collection (``qrels:``) or, in a
config with ``collections:``, another collection (``collections:``; each side's systems are
those of its collection). A reproduced reproduction of a config with collections is computed
on each collection. Every problem is placed FILE:LINE by the builder's ``problem``; the
collections' names, known only to all the views together, are checked by
:func:`collection_problems`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import IrbenchError
from ..yamlfile import yaml_path

KEYS = ("name", "kind", "baseline", "advanced", "measures", "qrels", "collections")
SIDES = ("original", "reproduced")
Problem = Callable[[tuple, str], None]


@dataclass(frozen=True)
class RunPair:
    """An original system and the system reproducing it (names of the config's systems)."""

    original: str
    reproduced: str


@dataclass(frozen=True, kw_only=True)
class Reproduction:
    """One entry of ``reproductions:``.

    name: its name; kind: ``reproduced`` or ``replicated``; baseline, advanced: the run pairs
    (advanced None: only the baseline's measures); measures: the names as written (effectiveness
    measures, which stand for every reproducibility family of their kind, or reproducibility
    names); qrels: the qrels sets of the (original, reproduced) runs, None for the collection's
    first; collections: the collections of the (original, reproduced) runs, None for the view's
    own; line: where it starts in the config."""

    name: str
    kind: str
    baseline: RunPair
    advanced: RunPair | None
    measures: tuple[str, ...]
    qrels: tuple[str | None, str | None] = (None, None)
    collections: tuple[str | None, str | None] = (None, None)
    line: int = 0

    def sides_on(self, collection: str) -> tuple[str, ...]:
        """Which sides' runs are on ``collection`` (both, unless collections says)."""
        return tuple(side for side, c in zip(SIDES, self.collections)
                     if c is None or c == collection)


def build_reproductions(value: Any, *, systems: Iterable[str] | None, qrels: Iterable[str],
                        default_measures: tuple[str, ...], collection: str, several: bool,
                        problem: Problem, line: Callable[[tuple], int]) -> tuple:
    """The checked :class:`Reproduction` s of ``value`` (the ``reproductions:`` section).

    systems: the names of the systems of this collection (None: not read, not checked);
    qrels: its qrels sets' names; collection: its name; several: the config has
    ``collections:``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        problem(("reproductions",), "a list of {name, baseline: {original, reproduced}, ...}")
        return ()
    known = None if systems is None else set(systems)
    out, names = [], set()
    for i, entry in enumerate(value):
        where = ("reproductions", i)
        if not isinstance(entry, dict):
            problem(where, "a mapping with name, baseline: {original: SYSTEM, reproduced: "
                           "SYSTEM}, and optionally kind, advanced, measures, qrels, collections")
            continue
        built = _entry(entry, where, known, tuple(qrels), default_measures, collection,
                       several, problem)
        if built is None:
            continue
        if built.name in names:
            problem(where + ("name",), f"a second reproduction named '{built.name}'")
            continue
        names.add(built.name)
        out.append(Reproduction(name=built.name, kind=built.kind, baseline=built.baseline,
                                advanced=built.advanced, measures=built.measures,
                                qrels=built.qrels, collections=built.collections,
                                line=line(where)))
    return tuple(out)


def _entry(entry: dict, where: tuple, known: set | None, qrels: tuple, default_measures,
           collection: str, several: bool, problem: Problem) -> Reproduction | None:
    from ..measures.reproduction import KINDS

    before = _Counter(problem)
    for key in entry:
        if key not in KEYS:
            before(where + (key,), f"unknown key ({', '.join(KEYS)})")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > 128:
        before(where + ("name",), "a reproduction's name: 1 to 128 printable characters")
    kind = entry.get("kind", "reproduced")
    if kind not in KINDS:
        before(where + ("kind",), f"must be {' or '.join(KINDS)}")
        kind = "reproduced"
    baseline = _pair(entry, "baseline", where, before, required=True)
    advanced = _pair(entry, "advanced", where, before, required=False)
    sets = _names(entry, "qrels", where, before)
    colls = _names(entry, "collections", where, before)
    _topics(kind, sets, colls, where, qrels, several, before)
    if known is not None:
        sides = [side for side, c in zip(SIDES, colls) if c is None or c == collection]
        for label, pair in (("baseline", baseline), ("advanced", advanced)):
            for side in sides:
                system = getattr(pair, side) if pair else None
                if system is not None and system not in known:
                    before(where + (label, side), f"no system '{system}' in the config"
                           + (f"'s collection {collection}" if several else ""))
    _same(kind, sets, colls, baseline, advanced, where, before)
    measures = _measures(entry, where, kind, advanced is not None, default_measures, before)
    if before.count or baseline is None:
        return None
    return Reproduction(name=str(name), kind=kind, baseline=baseline, advanced=advanced,
                        measures=measures, qrels=sets, collections=colls)


class _Counter:
    """A problem function that counts the problems it passes on."""

    def __init__(self, problem: Problem):
        self.problem, self.count = problem, 0

    def __call__(self, where: tuple, reason: str) -> None:
        self.count += 1
        self.problem(where, reason)


def _pair(entry: dict, key: str, where: tuple, problem: Problem,
          required: bool) -> RunPair | None:
    value = entry.get(key)
    if value is None:
        if required:
            problem(where, f"'{key}' is missing: {{original: SYSTEM, reproduced: SYSTEM}}")
        return None
    if not isinstance(value, dict):
        problem(where + (key,), "a mapping {original: SYSTEM, reproduced: SYSTEM}")
        return None
    for k in value:
        if k not in SIDES:
            problem(where + (key, k), "unknown key (original, reproduced)")
    names = []
    for side in SIDES:
        system = value.get(side)
        if not isinstance(system, str) or not system:
            problem(where + (key,) if side not in value else where + (key, side),
                    f"'{side}' is missing: the name of a system" if side not in value
                    else "the name of a system")
            return None
        names.append(system)
    return RunPair(*names)


def _names(entry: dict, key: str, where: tuple, problem: Problem) -> tuple:
    value = entry.get(key)
    if value is None:
        return (None, None)
    if not isinstance(value, dict) or any(k not in SIDES for k in value) or not all(
            isinstance(v, str) and v for v in value.values()):
        problem(where + (key,), f"a mapping {{original: NAME, reproduced: NAME}} of "
                                f"{'qrels sets' if key == 'qrels' else 'collections'}")
        return (None, None)
    return (value.get("original"), value.get("reproduced"))


def _topics(kind: str, sets: tuple, colls: tuple, where: tuple, qrels: tuple, several: bool,
            problem: Problem) -> None:
    for side, name in zip(SIDES, sets):
        if name is not None and name not in qrels:
            problem(where + ("qrels", side), f"no qrels set '{name}' in the collection (it has "
                                             f"{', '.join(qrels) or 'none'})")
    if colls != (None, None) and not several:
        problem(where + ("collections",), "only a config with collections: names collections; "
                                          "use qrels: for another qrels set of this one")
    other = (sets[0] or (qrels[0] if qrels else None)) != (sets[1] or (qrels[0] if qrels
                                                                       else None)) or \
        colls[0] != colls[1]
    if kind == "replicated" and not other:
        problem(where + ("kind",), "a replicated reproduction is on other topics: give "
                                   "qrels: {original: SET, reproduced: OTHER} or, in a config "
                                   "with collections:, collections: {original: C, reproduced: "
                                   "OTHER}")
    if kind == "reproduced" and other:
        problem(where + ("kind",), "these runs are scored on other topics or qrels: "
                                   "kind: replicated")


def _same(kind: str, sets: tuple, colls: tuple, baseline: RunPair | None,
          advanced: RunPair | None, where: tuple, problem: Problem) -> None:
    if kind == "reproduced":
        for label, pair in (("baseline", baseline), ("advanced", advanced)):
            if pair is not None and pair.original == pair.reproduced:
                problem(where + (label, "reproduced"), f"the same system '{pair.original}' "
                                                       "twice: a run does not reproduce itself")
    if baseline is not None and advanced is not None:
        for side in SIDES:
            if getattr(baseline, side) == getattr(advanced, side):
                problem(where + ("advanced", side), f"the same system "
                                                    f"'{getattr(baseline, side)}' as the "
                                                    "baseline's")


def _measures(entry: dict, where: tuple, kind: str, advanced: bool, default: tuple,
              problem: Problem) -> tuple[str, ...]:
    value = entry.get("measures")
    if value is None:
        return default
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problem(where + ("measures",), "a list of measure names (AP, P@10, KTU@100, RMSE(AP))")
        return ()
    from ..measures.reproduction import expand, is_repro_name, parse_repro_measure

    out = []
    for i, text in enumerate(value):
        try:
            expand([text], kind, advanced=advanced)
            if is_repro_name(text) and parse_repro_measure(text).definition.effect \
                    and not advanced:
                raise IrbenchError(f"{text} compares the advanced run's improvement: give "
                                   "advanced: {original, reproduced}")
        except IrbenchError as exc:
            problem(where + ("measures", i), str(exc))
            continue
        out.append(text)
    return tuple(out)


def collection_problems(reproductions, collections: tuple[str, ...], path: str,
                        line: Callable[[tuple], int]) -> list[str]:
    """``FILE:LINE`` problems of collections: naming no collection of the config."""
    out = []
    for i, r in enumerate(reproductions):
        for side, name in zip(SIDES, r.collections):
            if name is not None and name not in collections:
                at = ("reproductions", i, "collections", side)
                out.append(f"{path}:{line(at)}: {yaml_path(at)}: no collection '{name}' (it "
                           f"has {', '.join(collections)})")
    return out
