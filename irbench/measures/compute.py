"""Scoring: values and summaries of measures on a ranked run, and the result they make.

:func:`score_run` is the one path by which a run is scored: ``irbench.evaluate``, ``irbench
eval``, ``irbench run``, the topic shards of huge runs and the report's analyses call it with
prepared judgments of any kind, a read run and :class:`Measure` values. :func:`compute` takes
a :class:`~irbench.ranked.Ranked` run and gives one value per topic for each measure plus the
summary trec_eval prints; the judgment-group measures call it once per group
(:mod:`irbench.measures.avgjg`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..ranked import EvalOptions, Ranked
from ..trec import display
from .base import Measure, summarise
from .names import measure_list, parse_measure


@dataclass(frozen=True)
class Evaluation:
    """Per-topic values of one run, aligned to ``topics`` (the qrels topics in byte order).

    ``values[m]`` is a float64 array (an object array of str for text measures);
    ``summary(m)`` is the all-topics value as trec_eval reports it.
    """

    run_name: str
    runid: str
    topics: tuple[str, ...]
    values: dict[Measure, np.ndarray]
    summaries: dict[Measure, Any]
    options: EvalOptions

    def summary(self, measure: Measure | str) -> Any:
        """The all-topics value of ``measure`` (a name, Measure or ir_measures object)."""
        return self.summaries[parse_measure(measure)]

    def __getitem__(self, measure: Measure | str) -> np.ndarray:
        return self.values[parse_measure(measure)]


class Ranks(Protocol):
    """Prepared judgments of any kind (see :class:`irbench.judgments.Prepared`)."""

    def rank(self, run: Any, options: EvalOptions) -> Ranked: ...


class Scored(Protocol):
    """What judgments score: a ranked run (:class:`~irbench.trec.Run`) or an answer run
    (:class:`~irbench.answers.AnswerRun`), each with its name and run id."""

    @property
    def name(self) -> str: ...

    @property
    def runid(self) -> str: ...


def score_run(prepared: Ranks, run: Scored, measures: Sequence[Measure], options: EvalOptions,
              intersection: bool = False) -> Evaluation:
    """``run`` ranked against ``prepared`` judgments and scored for ``measures``: a value per
    judged topic (with ``intersection``: per judged topic the run answers) and each measure's
    summary as trec_eval computes it."""
    ranked = prepared.rank(run, options)
    if intersection:
        ranked = restrict(ranked, ~ranked.missing)
    return score_ranked(ranked, measures, run.name, run.runid, options)


def score_ranked(ranked: Ranked, measures: Sequence[Measure], run_name: str, runid: str,
                 options: EvalOptions) -> Evaluation:
    """The scores of a run already ranked against its judgments (see :func:`score_run`)."""
    values, summaries = compute(ranked, list(measures))
    return Evaluation(run_name=run_name, runid=runid,
                      topics=tuple(display(t) for t in ranked.topics), values=values,
                      summaries=summaries, options=options)


def as_measures(measures: Iterable[Measure | str]) -> list[Measure]:
    out: list[Measure] = []
    for m in measure_list(measures):
        measure = parse_measure(m)  # a name, a Measure or an ir_measures object
        if measure not in out:
            out.append(measure)
    return out


def compute(ranked: Ranked, measures: list[Measure],
            summarised: bool = True) -> tuple[dict, dict]:
    """Values and summaries of ``measures`` on an already ranked run (no summaries if not
    ``summarised``)."""
    values: dict[Measure, np.ndarray] = {}
    summaries: dict[Measure, Any] = {}
    missing = ranked.missing
    for measure in measures:
        family = measure.definition
        v = family.compute(ranked.at_level(measure.get("rel")), measure)
        if missing.any() and family.missing is not None:
            fill = family.missing(measure)
            if fill is not None:
                v = v.copy()
                v[missing] = fill
        values[measure] = v
        if summarised:
            summaries[measure] = summarise(measure, v, ranked)
    return values, summaries


def restrict(ranked: Ranked, keep: np.ndarray) -> Ranked:
    """The ranking of only the topics where ``keep`` is true (e.g. those a run answers); an
    answer run joined with its judgments restricts itself."""
    if keep.all():
        return ranked
    if not isinstance(ranked, Ranked):
        return ranked.restrict(keep)
    counts = ranked.num_ret[keep]
    lines = ranked.num_lines_rel_positive
    return Ranked(
        topics=ranked.topics[keep],
        offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        level=ranked.level[keep[ranked.topic_index]],
        missing=ranked.missing[keep],
        level_counts=ranked.level_counts[keep],
        options=ranked.options,
        runid=ranked.runid,
        name=ranked.name,
        num_lines_rel_positive=None if lines is None else lines[keep],
    )


def summary_needs_ranking(measure: Measure) -> bool:
    """Whether ``measure``'s summary needs the whole ranking (num_q, runid, micro averages),
    not only its per-topic values: a run scored in pieces cannot give it."""
    try:
        summarise(measure, np.zeros(1), None)
    except (AttributeError, TypeError):
        return True
    return False


def topic_values(ranked: Ranked, measures: list[Measure]) -> dict[Measure, np.ndarray]:
    """Per-topic values only (no summaries) of ``measures`` on ``ranked``: the values of a
    piece of a run, each topic's as in the whole run."""
    return compute(ranked, measures, summarised=False)[0]
