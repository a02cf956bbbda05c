"""Nugget lists and assignments (irbench/judgments/nuggets.py) and the nugget kernels
(irbench/measures/answers.py): hand-worked scores (partial, empty vital set, a topic not
answered), the plain reference on random assignments, problems with FILE:LINE, hostile files
bounded."""

from __future__ import annotations

import json

import numpy as np
import pytest
from answers_reference import nuggets as reference_nuggets

from irbench.errors import EvaluationError, FormatError
from irbench.judgments.nuggets import (
    PreparedNuggets,
    nugget_columns,
    read_assignments,
    read_nuggets,
)
from irbench.measures.answers import NUGGET_VARIANTS, nugget_measures, nugget_score
from irbench.trec import Loaded


def jsonl(*objects, raw=()) -> bytes:
    return "\n".join([json.dumps(o) for o in objects] + list(raw)).encode()


LISTS = jsonl(
    {"qid": "2024-1", "query": "q", "nuggets": [
        {"text": "n1", "importance": "vital"}, {"text": "n2", "importance": "vital"},
        {"text": "n3", "importance": "okay"}, {"text": "n4", "importance": "okay"}]},
    {"qid": "2024-2", "nuggets": [{"text": "m1", "importance": "okay"}]},
)
ASSIGNED = jsonl(
    {"qid": "2024-1", "run_id": "runA", "nuggets": [
        {"text": "n1", "importance": "vital", "assignment": "support"},
        {"text": "n2", "importance": "vital", "assignment": "partial_support"},
        {"text": "n3", "importance": "okay", "assignment": "support"},
        {"text": "n4", "importance": "okay", "assignment": "not_support"}]},
    {"qid": "2024-2", "run_id": "runA", "nuggets": [
        {"text": "m1", "importance": "okay", "assignment": "partial_support"}]},
)
TOPICS = np.array([b"2024-1", b"2024-2", b"2024-3"])


def test_scores_by_hand():
    columns = nugget_columns(read_assignments(Loaded("a.jsonl", ASSIGNED)), "runA", TOPICS,
                             read_nuggets(Loaded("n.jsonl", LISTS)))
    scores = nugget_measures(columns.offsets, columns.vital, columns.score)
    # 2024-1: s = 1, .5, 1, 0 (vital, vital, okay, okay)
    # A = 2.5 / 4; strict 2 / 4; V = 1.5 / 2; strict 1 / 2;
    # W = (1 + .5 + .5 * 1 + 0) / (1 + 1 + .5 + .5) = 2 / 3; strict (1 + .5) / 3 = .5
    # 2024-2: one okay nugget, partial: A .5, strict 0, V 0 (no vital nugget), W .5
    # 2024-3: no nuggets at all: 0
    assert scores["all", False].tolist() == [0.625, 0.5, 0.0]
    assert scores["all", True].tolist() == [0.5, 0.0, 0.0]
    assert scores["vital", False].tolist() == [0.75, 0.0, 0.0]
    assert scores["vital", True].tolist() == [0.5, 0.0, 0.0]
    assert scores["weighted", False].tolist() == pytest.approx([2 / 3, 0.5, 0.0])
    assert scores["weighted", True].tolist() == pytest.approx([0.5, 0.0, 0.0])


def test_topic_not_answered_scores_zero_over_its_list():
    lists = read_nuggets(Loaded("n.jsonl", LISTS))
    assigned = read_assignments(Loaded("a.jsonl", ASSIGNED.split(b"\n")[0]))
    columns = nugget_columns(assigned, "runA", TOPICS, lists)
    assert columns.offsets.tolist() == [0, 4, 5, 5]
    assert columns.unassigned == 1  # 2024-2's nugget: the run did not answer the topic
    assert nugget_score(columns.offsets, columns.vital, columns.score).tolist() == [
        0.625, 0.0, 0.0]
    other = nugget_columns(assigned, "runB", TOPICS, lists)
    assert nugget_score(other.offsets, other.vital, other.score,
                        importance="vital", strict=True).tolist() == [0.0, 0.0, 0.0]


def test_without_lists_the_assignments_carry_the_nuggets():
    prepared = PreparedNuggets(read_assignments(Loaded("a.jsonl", ASSIGNED)))
    columns = prepared.columns_for("runA", TOPICS)
    assert columns.offsets.tolist() == [0, 4, 5, 5]
    assert columns.vital.tolist() == [True, True, False, False, False]
    assert columns.score.tolist() == [1.0, 0.5, 1.0, 0.0, 0.5]


def test_assignment_that_is_not_the_lists_nugget_is_refused():
    lists = read_nuggets(Loaded("n.jsonl", LISTS))
    wrong = jsonl({"qid": "2024-2", "run_id": "runA", "nuggets": [
        {"text": "other", "importance": "okay", "assignment": "support"}]})
    with pytest.raises(EvaluationError, match="a.jsonl:1: run 'runA' nugget 0 is not the "
                       "list's nugget at that position"):
        nugget_columns(read_assignments(Loaded("a.jsonl", wrong)), "runA", TOPICS, lists)


@pytest.mark.parametrize("seed", range(30))
def test_kernels_equal_the_plain_reference_on_random_assignments(seed):
    rng = np.random.default_rng(seed)
    topics = [f"t{i}" for i in range(int(rng.integers(1, 10)))]
    assigned = {t: [(bool(rng.random() < 0.4), float(rng.choice([0.0, 0.5, 1.0])))
                    for _ in range(int(rng.integers(0, 12)))] for t in topics}
    counts = [len(assigned[t]) for t in topics]
    offsets = np.concatenate(([0], np.cumsum(counts)))
    vital = np.array([v for t in topics for v, _ in assigned[t]], dtype=bool)
    score = np.array([s for t in topics for _, s in assigned[t]], dtype=np.float64)
    every = nugget_measures(offsets, vital, score)
    for importance, strict in NUGGET_VARIANTS:
        expected = reference_nuggets(assigned, topics, importance, strict)
        assert every[importance, strict] == pytest.approx(expected, abs=1e-12)


def test_kernel_refuses_bad_arrays():
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        nugget_score(np.array([0, 1]), np.array([True]), np.array([0.7]))
    with pytest.raises(ValueError, match="for 2 nuggets"):
        nugget_score(np.array([0, 2]), np.array([True]), np.array([1.0]))
    with pytest.raises(ValueError, match="'all', 'vital' or 'weighted'"):
        nugget_score(np.array([0, 1]), np.array([True]), np.array([1.0]),
                     importance="some")  # type: ignore[arg-type]


def test_lists_read_sorted_with_whole_ids_and_ok_warned():
    data = jsonl({"qid": "b#2", "nuggets": [{"text": "x", "importance": "ok"}]},
                 {"topic_id": "a#1", "nuggets": [{"text": "y", "importance": "Vital"}]})
    lists = read_nuggets(Loaded("n.jsonl", data))
    assert lists.topics.tolist() == [b"a#1", b"b#2"]
    assert lists.text.tolist() == ["y", "x"]
    assert lists.vital.tolist() == [True, False]
    assert lists.line.tolist() == [2, 1]
    assert lists.warnings == ("n.jsonl:1: nugget 0: importance 'ok' read as okay",)


def test_problems_collected_with_file_and_line():
    data = jsonl(
        {"qid": "t", "run_id": "r", "nuggets": [{"text": "x", "importance": "vital",
                                                 "assignment": "support"}]},
        {"qid": "t", "run_id": "r", "nuggets": []},
        {"run_id": "r", "nuggets": []},
        {"qid": "t2", "nuggets": []},
        {"qid": "t3", "run_id": "r", "nuggets": [{"text": "x", "importance": "high",
                                                  "assignment": "support"}]},
        {"qid": "t4", "run_id": "r", "nuggets": [{"text": "x", "importance": "okay",
                                                  "assignment": "maybe"}]},
        {"qid": "t5", "run_id": "r", "nuggets": "x"},
        raw=["NaN"],
    )
    with pytest.raises(FormatError) as err:
        read_assignments(Loaded("a.jsonl", data))
    assert err.value.problems == [
        "a.jsonl:2: topic 't' of run 'r' again (first at line 1)",
        "a.jsonl:3: no qid (or topic_id)",
        "a.jsonl:4: no run_id",
        "a.jsonl:5: nugget 0: importance 'high' is not vital or okay",
        "a.jsonl:6: nugget 0: assignment 'maybe' is not support, partial_support or "
        "not_support",
        "a.jsonl:7: no 'nuggets' list",
        "a.jsonl:8: expected a JSON object, got JsonConstant",
    ]


@pytest.mark.timeout(30)
def test_hostile_nugget_files_bounded():
    many = {"qid": "t", "nuggets": [{"text": "x", "importance": "okay"}] * 10_001}
    deep = '{"qid": "t", "nuggets": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(FormatError) as err:
        read_nuggets(Loaded("n.jsonl", jsonl(many, raw=[deep])))
    assert err.value.problems == ["n.jsonl:1: 10,001 nuggets (at most 10,000)",
                                  "n.jsonl:2: JSON nested too deep"]
    with pytest.raises(FormatError, match="n.jsonl:1: no nugget lists"):
        read_nuggets(Loaded("n.jsonl", b""))
