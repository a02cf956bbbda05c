"""evaluate(qrels, run, measures) -> Evaluation: what a user has (paths, in-memory data,
measure names) scored by :func:`irbench.measures.compute.score_run`, the one scoring path."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .answers import AnswerRun
from .judgments import Prepared
from .measures import Measure
from .measures.compute import Evaluation, as_measures, score_run
from .ranked import EvalOptions, PreparedQrels
from .trec import Qrels, Run, is_frame, pandas_module, read_qrels, read_run


def _prepared(qrels) -> Prepared:
    """``qrels`` itself when prepared judgments of any kind, else ad hoc qrels read and
    prepared; an object that ranks runs but lacks part of the protocol is a TypeError."""
    if isinstance(qrels, Prepared):
        return qrels
    if hasattr(qrels, "rank") and not is_frame(qrels):  # a DataFrame has a rank method too
        lacking = [name for name in ("topics", "adhoc", "rank") if not hasattr(qrels, name)]
        raise TypeError(f"{type(qrels).__name__} is not prepared judgments "
                        f"(irbench.judgments.Prepared): it lacks {', '.join(lacking)}")
    return PreparedQrels(qrels if isinstance(qrels, Qrels) else read_qrels(qrels))


def evaluate(
    qrels: Qrels | Prepared | Any,
    run: Run | Any,
    measures: Iterable[Measure | str],
    options: EvalOptions | None = None,
    **option_values: Any,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` for ``measures`` (names or Measure values).

    ``qrels`` and ``run`` may be paths, in-memory data (see :func:`irbench.read_run`), or
    already read objects; pass a :class:`PreparedQrels` to reuse one qrels across many runs
    (or any prepared judgments with a ``rank(run, options)`` method:
    ``irbench.judgments.diversity.PreparedDiversity``, ``PreparedKnown``,
    ``irbench.judgments.groups.PreparedJudgmentGroups``).
    Options are :class:`EvalOptions` fields, e.g. ``relevance_level=2, complete=True``.
    An answer run (:func:`irbench.answers.read_answers`) is scored by prepared answer
    judgments (``irbench.judgments.prepare("support", path)``; docs/answers.md).
    """
    if options is None:
        options = EvalOptions(**option_values)
    elif option_values:
        raise TypeError("give either options= or option keywords, not both")
    run = run if isinstance(run, (Run, AnswerRun)) else read_run(run)
    return score_run(_prepared(qrels), run, as_measures(measures), options)


def to_frame(results):
    """Per-topic values as a tidy pandas DataFrame: columns ``query_id``, ``measure``, ``value``
    for one :class:`Evaluation`; with ``system`` first for several (a list: each run's name;
    a mapping: its keys). Text measures (runid, relstring) are left out. pandas is imported
    here only (``pip install 'irbench[pandas]'``)."""
    pd = pandas_module("irbench.to_frame")

    named = (results.items() if isinstance(results, dict) else
             [(None, results)] if isinstance(results, Evaluation) else
             [(r.run_name, r) for r in results])
    parts = []
    for system, ev in named:
        for measure, values in ev.values.items():
            if measure.definition.kind == "str":  # RunId, relstring: text, not per-topic values
                continue
            part = {"query_id": list(ev.topics), "measure": str(measure), "value": values}
            parts.append(pd.DataFrame(part if system is None else {"system": system, **part}))
    columns = (["query_id", "measure", "value"] if isinstance(results, Evaluation)
               else ["system", "query_id", "measure", "value"])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
