"""The support kernels (irbench/measures/answers.py) by hand-worked examples (partial, -1,
uncited sentences, a topic not answered) and against the plain reference on random answers."""

from __future__ import annotations

import numpy as np
import pytest
from answers_reference import support as reference_support

from irbench.measures.answers import (
    SUPPORT_VARIANTS,
    answer_shape,
    support_measures,
    support_precision,
    support_recall,
    word_counts,
)


def columns(answer: dict, topics: list):
    """The interface's arrays of an answer ``{topic: [[labels of a sentence], ...]}``."""
    sentence_topic, counts, labels = [], [], []
    for t, topic in enumerate(topics):
        for sentence in answer.get(topic, []):
            sentence_topic.append(t)
            counts.append(len(sentence))
            labels.extend(sentence)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return (np.array(labels, dtype=np.int8), offsets, np.array(sentence_topic, dtype=np.int64),
            len(topics))


# one topic, four sentences: first citations full, partial, none, not judged
WORKED = {"t1": [[2, 0], [1], [0, 2], [-1, 2]]}


def test_first_citation_graded_by_hand():
    args = columns(WORKED, ["t1"])
    # sum of w(first) = 1 + 0.5 + 0 = 1.5; judged first citations 3; sentences minus -1: 3
    assert support_precision(*args).tolist() == [0.5]
    assert support_recall(*args).tolist() == [0.5]


def test_hard_counts_partial_as_zero_by_hand():
    args = columns(WORKED, ["t1"])
    assert support_precision(*args, weight="hard").tolist() == pytest.approx([1 / 3])
    assert support_recall(*args, weight="hard").tolist() == pytest.approx([1 / 3])


def test_all_judged_citations_by_hand():
    args = columns(WORKED, ["t1"])
    # per sentence: mean(1, 0) = .5, .5, mean(0, 1) = .5, the judged one of (-1, 2) = 1
    assert support_precision(*args, citations="all").tolist() == [2.5 / 4]
    assert support_recall(*args, citations="all").tolist() == [2.5 / 4]


def test_uncited_sentence_counts_in_recall_not_precision():
    args = columns({"t1": [[2], []]}, ["t1"])
    assert support_precision(*args).tolist() == [1.0]
    assert support_recall(*args).tolist() == [0.5]


def test_sentence_never_judged_left_out_of_both():
    args = columns({"t1": [[2], [-1, -1]]}, ["t1"])
    for citations in ("first", "all"):
        assert support_precision(*args, citations=citations).tolist() == [1.0]
        assert support_recall(*args, citations=citations).tolist() == [1.0]


def test_topic_not_answered_or_all_unjudged_scores_zero():
    answer = {"t1": [[2]], "t3": [[-1]]}
    args = columns(answer, ["t1", "t2", "t3"])
    assert support_precision(*args).tolist() == [1.0, 0.0, 0.0]
    assert support_recall(*args).tolist() == [1.0, 0.0, 0.0]
    # the track's mean divides by the campaign's topics
    assert support_recall(*args).mean() == pytest.approx(1 / 3)


def test_empty_run():
    args = columns({}, ["t1", "t2"])
    for measure in (support_precision, support_recall):
        assert measure(*args).tolist() == [0.0, 0.0]


def test_bad_arrays_are_refused():
    label, offsets, topic, n = columns(WORKED, ["t1"])
    with pytest.raises(ValueError, match="sentences \\+ 1"):
        support_precision(label, offsets[:-1], topic, n)
    with pytest.raises(ValueError, match="labels for"):
        support_precision(label[:-1], offsets, topic, n)
    with pytest.raises(ValueError, match="outside"):
        support_precision(label, offsets, topic + 1, n)
    with pytest.raises(ValueError, match="-1, 0, 1 or 2"):
        support_precision(label + 3, offsets, topic, n)
    with pytest.raises(ValueError, match="'first' or 'all'"):
        support_precision(label, offsets, topic, n, citations="some")  # type: ignore[arg-type]


def random_answer(rng, topics, answered=0.8):
    answer = {}
    for topic in topics:
        if rng.random() > answered:
            continue
        answer[topic] = [list(rng.choice([-1, 0, 1, 2], size=rng.integers(0, 4),
                                         p=[0.15, 0.3, 0.2, 0.35]))
                         for _ in range(rng.integers(0, 8))]
    return answer


@pytest.mark.parametrize("seed", range(30))
def test_kernels_equal_the_plain_reference_on_random_answers(seed):
    rng = np.random.default_rng(seed)
    topics = [f"t{i}" for i in range(int(rng.integers(1, 12)))]
    answer = random_answer(rng, topics)
    args = columns(answer, topics)
    every = support_measures(*args)
    for weight, citations in SUPPORT_VARIANTS:
        for measure, kernel in (("precision", support_precision), ("recall", support_recall)):
            expected = reference_support(answer, topics, measure, weight, citations)
            got = kernel(*args, weight=weight, citations=citations)
            assert got == pytest.approx(expected, abs=1e-12), (measure, weight, citations)
            assert every[measure, weight, citations] == pytest.approx(expected, abs=1e-12)


def test_word_counts_like_str_split_and_missing_text():
    texts = ["two words", "", None, float("nan"), "  tabs\tand\nnewlines  ", "ünïcödé wörds"]
    assert word_counts(texts).tolist() == [2, 0, 0, 0, 3, 2]
    assert word_counts([]).tolist() == []


def test_answer_shape_by_hand():
    # topic 0: two sentences, one uncited; topic 1 not answered; topic 2: one sentence
    # citing the same segment twice
    shape = answer_shape(["a b c", "d", "e f"], np.array([0, 2, 2, 4]),
                         np.array(["x#1", "y", "z#2", "z#2"], dtype=object),
                         np.array([0, 0, 2]), 3)
    assert shape.sentences.tolist() == [2, 0, 1]
    assert shape.words.tolist() == [4, 0, 2]
    assert shape.citations_per_sentence.tolist() == [1.0, 0.0, 2.0]
    assert shape.uncited_share.tolist() == [0.5, 0.0, 0.0]
    assert shape.distinct_references.tolist() == [2, 0, 1]
