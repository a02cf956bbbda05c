"""The interpolated precision curve (trec_eval's iprec_at_recall, 11pt_avg, the textbook
IPrec) against a per-topic loop that follows the definitions word for word, on seeded random
rankings: topics with nothing relevant retrieved, nothing retrieved, ties of precision, and
points given in any order."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irbench
from irbench.measures.ranking import iprec_curve


def _campaign(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(12):
        docs = [f"d{i}" for i in range(40)]
        qrels[f"q{t}"] = {d: int(rng.integers(-1, 3)) for d in docs if rng.random() < 0.6}
        if t == 3:
            qrels[f"q{t}"] = {"d0": 0}  # nothing relevant
        depth = 0 if t == 5 else int(rng.integers(1, 40))  # q5 retrieves nothing
        if depth:
            run[f"q{t}"] = {d: float(rng.integers(0, 8)) for d in rng.choice(docs, depth,
                                                                            replace=False)}
    return qrels, run


def _oracle(levels: list[int], num_rel: int, count_for) -> float:
    """The highest precision at or below the rank of the c-th relevant retrieved document."""
    rel = [lv >= 1 for lv in levels]
    precisions = [sum(rel[:i + 1]) / (i + 1) for i in range(len(rel)) if rel[i]]
    c = count_for(num_rel)
    if not levels and c == 0:
        return math.nan
    if c > len(precisions) or not precisions:
        return 0.0
    return max(precisions[max(c, 1) - 1:])


def _ranked(qrels, run):
    return irbench.rank_run(irbench.read_run(run), irbench.PreparedQrels(irbench.read_qrels(qrels)),
                            irbench.EvalOptions(complete=True))  # q5 scored as retrieving nothing


def _rows(ranked):
    levels = ranked.level.tolist()
    offsets = ranked.offsets.tolist()
    return [(levels[offsets[t]:offsets[t + 1]], int(ranked.num_rel[t]))
            for t in range(ranked.num_topics)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_curve_at_points_in_any_order_is_the_definition(seed):
    qrels, run = _campaign(seed)
    ranked = _ranked(qrels, run)
    points = (0.7, 0.0, 1.0, 0.35, 0.1, 0.7, 0.5)  # unsorted, one repeated
    got = iprec_curve(ranked, points)
    for i, x in enumerate(points):
        want = [_oracle(lv, r, lambda num_rel: int(math.floor(x * num_rel + 0.5)))
                for lv, r in _rows(ranked)]
        np.testing.assert_array_equal(got[i], want)


@pytest.mark.parametrize("seed", [4, 5])
def test_textbook_iprec_is_the_definition(seed):
    qrels, run = _campaign(seed)
    ranked = _ranked(qrels, run)
    for x in (0.0, 0.3, 0.6, 1.0):
        ev = irbench.evaluate(irbench.read_qrels(qrels), irbench.read_run(run), [f"IPrec@{x}"],
                              complete=True)
        want = [_oracle(lv, r, lambda num_rel: max(math.ceil(x * num_rel - 1e-9), 0))
                for lv, r in _rows(ranked)]
        want = [0.0 if math.isnan(w) else w for w in want]  # nothing retrieved: 0 here
        got = dict(zip(ev.topics, ev[f"IPrec@{x}"]))
        assert [got[t] for t in ranked.topics.astype(str)] == want


def test_num_rel_ret_counts_the_relevant_retrieved():
    qrels, run = _campaign(6)
    ranked = _ranked(qrels, run)
    want = [sum(lv >= 1 for lv in levels) for levels, _ in _rows(ranked)]
    assert ranked.num_rel_ret.dtype == np.float64
    assert ranked.num_rel_ret.tolist() == want
