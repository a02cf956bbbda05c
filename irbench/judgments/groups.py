"""Judgment groups: trec_eval's ``-R qrels_jg`` format and the measures averaged over groups.

A qrels_jg file has ``qid jg docno rel`` lines: the second column names a judgment group
(a user or assessor), and a topic may be judged by several groups, each with its own
judgments (a docno may appear once per group). :class:`PreparedJudgmentGroups` ranks a run
once against the union of the judgments (each document at its highest level: the topics,
``num_q`` and ``runid``) and once against each group's judgments, and attaches the groups'
rankings for the ``*_avgjg`` measures (:mod:`irbench.measures.avgjg`). Groups are few (a
handful of assessors), so they are taken one after the other; topics and documents are
columns as everywhere else.
"""

from __future__ import annotations

import numpy as np

from ..measures.avgjg import JG_KEY
from ..ranked import EvalOptions, PreparedQrels, Ranked, rank_run
from ..trec import Qrels, Run
from .diversity import DiversityQrels, collapse, read_diversity_qrels


def read_qrels_jg(source, name: str | None = None) -> DiversityQrels:
    """Read ``qid jg docno rel`` lines (``#`` comments, blank lines skipped); every problem is
    reported with its line, a docno judged twice by one group is a DuplicateError."""
    return read_diversity_qrels(source, name, second="jg")


class PreparedJudgmentGroups:
    """Qrels_jg prepared once for many runs: the union qrels and one PreparedQrels per group."""

    def __init__(self, qrels: DiversityQrels):
        self.qrels = qrels
        self.union = PreparedQrels(collapse(qrels))
        self.groups = []
        for label in np.unique(qrels.subtopic):
            rows = qrels.subtopic == label
            self.groups.append(PreparedQrels(Qrels(
                name=f"{qrels.name} jg {label.decode('utf-8', 'backslashreplace')}",
                query_id=qrels.query_id[rows], doc_id=qrels.doc_id[rows],
                relevance=qrels.relevance[rows], line=qrels.line[rows], path=qrels.path)))

    @property
    def topics(self) -> np.ndarray:
        return self.union.topics

    @property
    def adhoc(self) -> PreparedQrels:
        """The union of the groups' judgments, prepared (topics and level counts)."""
        return self.union

    def rank(self, run: Run, options: EvalOptions = EvalOptions()) -> Ranked:
        ranked = rank_run(run, self.union, options)
        groups = [rank_run(run, group, options) for group in self.groups]
        ranked.cached(JG_KEY, lambda: groups)
        return ranked
