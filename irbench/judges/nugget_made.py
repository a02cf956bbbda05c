"""Nugget lists and assignments from the store, as nuggetizer writes them: ``irbench qrels
--nuggets``.

The list is a nugget judge's as it stands in the store (its live nuggets,
:meth:`irbench.store.Store.live_nuggets`, a desk's edits included). Each (topic, run) with a
label for one of its nuggets gets an assignments object over the whole list: each nugget's
labels (``answer_labels``, task ``nugget``) combined by a qrels rule
(:func:`irbench.judgments.combine`: each judge's latest label, then the rule across judges);
a nugget without a label is written as not_support (AutoNuggetizer's "failed", which scores
0 as not_support does) and counted. A qrels set ``{path: assignments.jsonl, kind: nuggets}``
then scores every answer run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..judgments import combine
from .nugget_records import AssignedNugget, Assignments, NuggetList, ScoredNugget
from .nugget_tasks import ASSIGNMENT_NAMES


@dataclass(frozen=True)
class NuggetsMade:
    """The lists and assignments to write, and how many nuggets had no label."""

    lists: list[NuggetList]
    assignments: list[Assignments]
    unlabelled: int


def nuggets_made(live: Mapping[str, Sequence], queries: Mapping[str, str],
                 columns: Mapping[str, np.ndarray], rule_name: str,
                 order: Sequence[str] = ()) -> NuggetsMade:
    """The lists of ``live`` ({topic: stored nuggets, in order}) and the assignments the
    labels ``columns`` (as :meth:`Store.answer_label_columns` gives them) make by
    ``rule_name`` (see the module docstring)."""
    ids = {n.nugget_id for nuggets in live.values() for n in nuggets}
    keep = np.array([r in ids for r in columns["reference"].tolist()], dtype=bool)
    runs = columns["run_id"][keep].astype(str)
    refs = columns["reference"][keep].astype(str)
    q, d, label = combine({"query_id": columns["query_id"][keep],
                           "doc_id": np.char.add(np.char.add(runs, "\t"), refs)
                           if len(runs) else runs,
                           "relevance": columns["label"][keep].astype(np.int64),
                           "judge": columns["judge"][keep],
                           "judge_kind": columns["judge_kind"][keep],
                           "position": columns["position"][keep].astype(np.int64)},
                          rule_name, order)
    given: dict[tuple[str, str], dict[str, int]] = {}
    for qid, key, value in zip(q.tolist(), d.tolist(), label.tolist()):
        run, ref = str(key).split("\t", 1)
        given.setdefault((str(qid), run), {})[ref] = int(value)
    lists = [NuggetList(qid=qid, query=queries.get(qid, ""), nuggets=tuple(
        ScoredNugget(text=n.text, importance=n.importance, nugget_id=n.nugget_id)
        for n in live[qid])) for qid in sorted(live)]
    out, unlabelled = [], 0
    for (qid, run), labels in sorted(given.items()):
        if qid not in live:
            continue
        unlabelled += sum(n.nugget_id not in labels for n in live[qid])
        out.append(Assignments(qid=qid, run_id=run, nuggets=tuple(
            AssignedNugget(text=n.text, importance=n.importance, nugget_id=n.nugget_id,
                           assignment=ASSIGNMENT_NAMES.get(labels.get(n.nugget_id, -1)))
            for n in live[qid])))
    return NuggetsMade(lists=lists, assignments=out, unlabelled=unlabelled)
