"""A deliberately plain reference of the answer measures (issue 39's formulas), one sentence,
citation and nugget at a time in Python, as the tracks' scripts compute them: the kernels of
irbench/measures/answers.py are checked against it. Inputs are plain lists:

- an answer: ``{topic: [[label of each citation of the sentence], ...]}``;
- nuggets: ``{topic: [(vital, score), ...]}``.
"""

from __future__ import annotations

GRADED = {2: 1.0, 1: 0.5, 0: 0.0}
HARD = {2: 1.0, 1: 0.0, 0: 0.0}


def sentence_value(labels: list[int], weight: dict, citations: str):
    """(value, judged, counted) of one sentence."""
    if citations == "first":
        if not labels:
            return 0.0, False, True
        first = labels[0]
        if first == -1:
            return 0.0, False, False
        return weight[first], True, True
    judged = [weight[label] for label in labels if label != -1]
    if not labels:
        return 0.0, False, True
    if not judged:
        return 0.0, False, False
    return sum(judged) / len(judged), True, True


def support(answer: dict, topics: list, measure: str, weight: str, citations: str) -> list:
    """Per topic of ``topics``: support precision or recall."""
    w = GRADED if weight == "graded" else HARD
    out = []
    for topic in topics:
        total = 0.0
        judged = 0
        counted = 0
        for labels in answer.get(topic, []):
            value, is_judged, is_counted = sentence_value(labels, w, citations)
            total += value
            if is_judged:
                judged += 1
            if is_counted:
                counted += 1
        denominator = judged if measure == "precision" else counted
        out.append(total / denominator if denominator else 0.0)
    return out


def nuggets(assigned: dict, topics: list, importance: str, strict: bool) -> list:
    """Per topic of ``topics``: the nugget score A, V or W."""
    out = []
    for topic in topics:
        top = 0.0
        bottom = 0.0
        for vital, score in assigned.get(topic, []):
            if strict and score != 1.0:
                score = 0.0
            if importance == "all":
                w = 1.0
            elif importance == "vital":
                w = 1.0 if vital else 0.0
            else:
                w = 1.0 if vital else 0.5
            top += w * score
            bottom += w
        out.append(top / bottom if bottom else 0.0)
    return out
