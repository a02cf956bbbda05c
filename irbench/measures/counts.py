"""Counting measures and run-level facts: NumRet, NumRel, NumRelRet, NumQ, RunId, ...

Summaries of counts are sums, as in trec_eval (``m_num_*.c``).
"""

from __future__ import annotations

import numpy as np

from .base import Family, Param, register


def _num_ret(r, m):
    return r.num_ret.astype(np.float64)


def _num_rel(r, m):
    return r.num_rel.astype(np.float64)


def _num_rel_summary(values, r, m):
    # trec_eval -c recounts num_rel from the qrels lines with rel > 0, ignoring -l (m_num_rel.c)
    if r.options.complete and r.num_lines_rel_positive is not None:
        return int(np.sum(r.num_lines_rel_positive))
    return int(np.sum(values))


def _num_rel_ret(r, m):
    return r.num_rel_ret


def _num_nonrel_judged_ret(r, m):
    # N - (#not in qrels) - (#negative judgments) - relevant retrieved
    return r.per_topic_count(r.judged & ~r.rel).astype(np.float64)


def _num_q(r, m):
    return np.ones(r.num_topics)


def _num_q_summary(values, r, m):
    return int(r.num_topics)


def _runid(r, m):
    return np.zeros(r.num_topics)


def _runid_summary(values, r, m):
    return r.runid


def _zero(m):
    return 0.0


register(Family("NumRet", "number of documents retrieved", _num_ret, aggregate="sum",
                kind="int", missing=_zero))
register(Family("NumRel", "number of relevant documents in the qrels (R)", _num_rel,
                aggregate="sum", kind="int", summary=_num_rel_summary))
register(Family("NumRelRet", "number of relevant documents retrieved", _num_rel_ret,
                aggregate="sum", kind="int"))
register(Family("num_nonrel_judged_ret", "number of judged non-relevant documents retrieved",
                _num_nonrel_judged_ret, aggregate="sum", kind="int",
                lower_is_better=True))
register(Family("NumQ", "number of topics evaluated (summary only)", _num_q,
                aggregate="summary", kind="int", summary=_num_q_summary, needs="none"))
register(Family("RunId", "the run's tag, from its last line (summary only)", _runid,
                aggregate="summary", kind="str", summary=_runid_summary, needs="none"))

__all__ = ["Param"]
