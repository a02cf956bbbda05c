"""The plan of a campaign run: from the store's file facts and stored measures, the systems
to score (and what each qrels set needs of them) and the results to reuse as they are."""

from __future__ import annotations

from .. import judgments
from ..config import Config
from ..measures import PROFILE, Measure, parse_measure
from ..store import FileFacts
from .inputs import known_hash
from .score import Task, Wanted

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
        sha = known_hash(system.path, cache, rehash)
        if sha is None:
            tasks.append(Task(system=system.name, path=system.path, wanted=wanted,
                              hashed=False))
            continue
        todo = {}
        for qrels_name, needs in wanted.items():
            missing = needs.missing(done.get((sha, shas[qrels_name]), set()))
            if missing:
                todo[qrels_name] = missing
            else:
                reuse.append((system.name, qrels_name, sha, shas[qrels_name]))
        if todo:
            tasks.append(Task(system=system.name, path=system.path, wanted=todo))
    return tasks, reuse
