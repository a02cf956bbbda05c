"""evaluate(qrels, run, measures) -> Evaluation: per-topic values for every qrels topic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .collection import EvalOptions, PreparedQrels, Ranked
from .measures import Measure, parse_measure, summarise
from .trec import Qrels, Run, _display, read_qrels, read_run


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
        key = parse_measure(measure) if isinstance(measure, str) else measure
        return self.summaries[key]

    def __getitem__(self, measure: Measure | str) -> np.ndarray:
        key = parse_measure(measure) if isinstance(measure, str) else measure
        return self.values[key]


def _as_measures(measures: Iterable[Measure | str]) -> list[Measure]:
    out: list[Measure] = []
    for m in measures:
        measure = parse_measure(m) if isinstance(m, str) else m
        if measure not in out:
            out.append(measure)
    return out


def compute(ranked: Ranked, measures: list[Measure]) -> tuple[dict, dict]:
    """Values and summaries of ``measures`` on an already ranked run."""
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
        summaries[measure] = summarise(measure, v, ranked)
    return values, summaries


def restrict(ranked: Ranked, keep: np.ndarray) -> Ranked:
    """The ranking of only the topics where ``keep`` is true (e.g. those a run answers)."""
    if keep.all():
        return ranked
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


def _is_prepared(qrels) -> bool:
    """Prepared judgments: a PreparedQrels, or another object that ranks runs and has topics."""
    return isinstance(qrels, PreparedQrels) or (
        hasattr(qrels, "rank") and hasattr(qrels, "topics") and not hasattr(qrels, "columns"))


def evaluate(
    qrels: Qrels | PreparedQrels | Any,
    run: Run | Any,
    measures: Iterable[Measure | str],
    options: EvalOptions | None = None,
    **option_values: Any,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` for ``measures`` (names or Measure values).

    ``qrels`` and ``run`` may be paths, in-memory data (see :func:`irbench.read_run`), or
    already read objects; pass a :class:`PreparedQrels` to reuse one qrels across many runs
    (or any prepared judgments with a ``rank(run, options)`` method:
    ``irbench.diversity.PreparedDiversity``, ``PreparedKnown``,
    ``irbench.judgment_groups.PreparedJudgmentGroups``).
    Options are :class:`EvalOptions` fields, e.g. ``relevance_level=2, complete=True``.
    """
    if options is None:
        options = EvalOptions(**option_values)
    elif option_values:
        raise TypeError("give either options= or option keywords, not both")
    prepared = qrels if _is_prepared(qrels) else PreparedQrels(
        qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    )
    run = run if isinstance(run, Run) else read_run(run)
    ranked = prepared.rank(run, options)
    wanted = _as_measures(measures)
    values, summaries = compute(ranked, wanted)
    return Evaluation(
        run_name=run.name,
        runid=run.runid,
        topics=tuple(_display(t) for t in ranked.topics),
        values=values,
        summaries=summaries,
        options=options,
    )
