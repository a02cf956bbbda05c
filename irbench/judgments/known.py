"""Documents the user already knows beside the qrels (``Coverage``, ``Novelty``; trec_eval
has neither): ``irbench eval --known FILE`` and a config's ``collection.known``.

A document is known for a topic when the known file (a qrels) lists it with a value >= 1.
The run is ranked once against the qrels with the known documents keyed beside them
(:class:`~irbench.judgments.diversity.KeyedQrels`), and which ranked documents are known is
attached for the two measures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..measures import Measure
from ..measures.compute import Evaluation, as_measures, score_run
from ..measures.textbook import KNOWN_KEY, KnownColumns
from ..ranked import EvalOptions
from ..trec import Qrels, Run, read_qrels, read_run
from .diversity import KeyedJudgments, KeyedQrels, index_in


class PreparedKnown(KeyedJudgments):
    """Qrels plus the documents the user already knows (a qrels: a document is known for a
    topic when listed with a value >= 1), prepared once for many runs."""

    def __init__(self, qrels: Qrels, known: Qrels):
        self.qrels = qrels
        listed = known.relevance >= 1
        self.keyed = KeyedQrels(qrels, known.query_id[listed], known.doc_id[listed])
        level = self.keyed.table_level
        topic = index_in(known.query_id[listed], self.keyed.topics)
        judged = (topic >= 0) & (level >= 0)
        width = self.keyed.prepared.level_counts.shape[1]
        T = len(self.keyed.topics)
        counts = np.bincount(topic[judged] * width + level[judged], minlength=T * width)
        self.level_counts = counts.reshape(T, width)

    column_key = KNOWN_KEY

    def columns(self, row: np.ndarray) -> KnownColumns:
        """Which ranked documents the user knows, with the known documents' level counts."""
        return KnownColumns(known=row >= 0, level_counts=self.level_counts)


def evaluate_known(qrels, known, run, measures: Iterable[Measure | str],
                   options: EvalOptions | None = None, **option_values: Any) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with ``known`` (a qrels of the documents the user
    already knows: a path, in-memory data or a :class:`Qrels`), for ``Coverage`` and
    ``Novelty`` and any other measure."""
    if options is None:
        options = EvalOptions(**option_values)
    elif option_values:
        raise TypeError("give either options= or option keywords, not both")
    qrels = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    known = known if isinstance(known, Qrels) else read_qrels(known)
    run = run if isinstance(run, Run) else read_run(run)
    return score_run(PreparedKnown(qrels, known), run, as_measures(measures), options)
