"""The plan of a campaign run: from the store's file facts and stored measures, the systems
to score (and what each qrels set needs of them) and the results to reuse as they are."""

from __future__ import annotations

from typing import TypeVar

from .. import judgments
from ..config import Config
from ..measures import PROFILE, Measure, parse_measure
from ..store import FileFacts
from ..system import System
from .inputs import known_hash
from .score import Task, Wanted

T = TypeVar("T")
_PROFILE = tuple(parse_measure(name) for name in PROFILE)


def wanted_by_set(config: Config, measures: dict[str, tuple[Measure, ...]]
                  ) -> dict[str, Wanted]:
    """What each usable qrels set needs: its measures, and the report's profile for ad hoc
    judgments."""
    kinds = {spec.name: spec.kind for spec in config.qrels}
    return {q: Wanted(ms, _PROFILE if kinds[q] == judgments.DEFAULT_KIND else ())
            for q, ms in measures.items()}


def plan(config: Config, wanted: dict[str, Wanted], shas: dict[str, str],
         cache: dict[str, FileFacts], done: dict, rehash: bool
         ) -> tuple[list[Task], list[tuple[str, str, str, str]]]:
    """(the systems to score, in the config's order; (system, qrels set, run sha256, qrels
    sha256) whose stored results stand). A system whose file is unchanged computes only the
    measures the store lacks; one whose hash is unknown is hashed by its task, which then
    drops what the store has."""
    tasks, reuse = [], []
    for system in config.systems:
        if system.name in config.missing_runs:
            continue
        mine = for_system(config, system, wanted)
        sha = known_hash(system.path, cache, rehash)
        if sha is None:
            tasks.append(task_of(system, mine, hashed=False))
            continue
        todo = {}
        for qrels_name, needs in mine.items():
            missing = needs.missing(done.get((sha, shas[qrels_name]), set()))
            if missing:
                todo[qrels_name] = missing
            else:
                reuse.append((system.name, qrels_name, sha, shas[qrels_name]))
        if todo:
            tasks.append(task_of(system, todo))
    return tasks, reuse


def for_system(config: Config, system: System, wanted: dict[str, T]) -> dict[str, T]:
    """Of ``wanted`` (by qrels set), the sets whose kind scores ``system``'s kind: a ranked
    run is not scored on support labels or nugget assignments."""
    kinds = {spec.name: judgments.kind(spec.kind) for spec in config.qrels}
    return {q: w for q, w in wanted.items() if system.kind in kinds[q].scores}


def task_of(system: System, wanted: dict[str, Wanted], **fields) -> Task:
    """The task scoring ``system`` for ``wanted``."""
    return Task(system=system.name, path=system.path, wanted=wanted, kind=system.kind,
                answer_format=system.answer_format, **fields)
