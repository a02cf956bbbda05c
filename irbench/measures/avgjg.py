"""Measures averaged over judgment groups: trec_eval's ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg`` (``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``).

A qrels_jg file (``-R qrels_jg``) holds several judgment groups per topic (one per user or
assessor). Each measure is the per-group measure (AP, P@k, trec_eval's Rprec_mult) computed
against each group's judgments alone, then averaged over the groups that judged the topic.
The groups' rankings are attached to the run by
:class:`irbench.judgments.groups.PreparedJudgmentGroups` under :data:`JG_KEY`; on ordinary
qrels these measures are an :class:`EvaluationError`.
"""

from __future__ import annotations

import numpy as np

from ..errors import EvaluationError
from .base import REGISTRY, Family, Param, register
from .compute import compute as evaluate_measures

JG_KEY = "judgment_groups"
JG_FAMILIES = ("AP_avgjg", "P_avgjg", "Rprec_mult_avgjg")


def _groups(ranked, measure):
    def refuse():
        raise EvaluationError(f"{measure} needs judgment-group qrels (qid jg docno rel): "
                              "irbench eval -R qrels_jg")

    return ranked.cached(JG_KEY, refuse)


def averaged(base: str, *params: str):
    """The compute function of ``base`` (with ``params`` copied from the measure) per group,
    averaged over the groups of each topic."""

    def compute(ranked, measure) -> np.ndarray:
        per_group = REGISTRY[base].make(**{p: measure.get(p) for p in params})
        total = np.zeros(ranked.num_topics)
        groups = np.zeros(ranked.num_topics)
        order = np.argsort(ranked.topics, kind="stable")
        for group in _groups(ranked, measure):  # a few groups per campaign, not topics
            values, _ = evaluate_measures(group, [per_group])
            where = order[np.searchsorted(ranked.topics[order], group.topics)]
            total[where] += values[per_group]
            groups[where] += 1
        return total / np.maximum(groups, 1)

    return compute


_P_CUTOFF = Param("cutoff", int, 10, "rank cutoff k")
_MULT = Param("mult", float, 1.0, "multiple x of R")

register(Family("AP_avgjg", "AP averaged over judgment groups (trec_eval map_avgjg)",
                averaged("AP"), needs="judgment_groups"))
register(Family("P_avgjg", "P@k averaged over judgment groups (trec_eval P_avgjg)",
                averaged("P", "cutoff"), (_P_CUTOFF,), cutoff="cutoff", needs="judgment_groups"))
register(Family("Rprec_mult_avgjg", "precision at rank (long)(x*R + 0.9) averaged over "
                "judgment groups (trec_eval Rprec_mult_avgjg)",
                averaged("Rprec_mult", "mult"), (_MULT,),
                canonical_fn=lambda m: f"Rprec_mult_avgjg_{m.get('mult'):3.2f}",
                needs="judgment_groups"))
