"""Kernels of the measures of generated answers: citation support, nugget scores and the
shape of an answer, on whole columns (no loop over topics, sentences or citations).

**Inputs** (the interface of issue 39: an answer run as columns, ``irbench.answers``):

- ``citation_offsets`` (int64, len sentences + 1): sentence ``s`` cites citations
  ``offsets[s]:offsets[s + 1]``, in the answer's order (its first citation first);
- ``sentence_topic`` (int64): each sentence's topic, an index into the run's topics;
- ``label`` (int8, aligned with the citations): the support label of each citation,
  :data:`FULL` 2, :data:`PARTIAL` 1, :data:`NO_SUPPORT` 0, :data:`NOT_JUDGED` -1;
- ``num_topics``: how many topics the per-topic arrays have. A topic with no sentence (not
  answered, or an empty answer) scores 0: the tracks divide a run's sum by the number of
  topics of the campaign, so the mean over these arrays is the track's mean.

**Support** (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human
versus LLM Judges", SIGIR 2025, arXiv:2504.15205; the formulas are issue 39's). Weights
``w`` = 1 / 0.5 / 0 for full / partial / no support (``weight="graded"``); ``"hard"`` counts
partial support as 0. With ``citations="first"``, a sentence's value is ``w`` of its first
citation; with ``citations="all"``, the mean of ``w`` over its judged citations. Per topic:

- precision = sum of the values / sentences with a judged value (a judged first citation, or
  at least one judged citation);
- recall = the same sum / (all sentences - sentences whose citations are cited but not
  judged: a first citation of -1, or, for ``"all"``, no judged citation among them).

An uncited sentence counts in recall's denominator (it is not supported) and not in
precision's; a 0/0 is 0.

**Nuggets** (Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024 RAG Track
with the AutoNuggetizer Framework", arXiv:2411.09607; nuggetizer's ``calculate_nugget_scores``
for A and V). Per topic, a CSR of nuggets (``nugget_offsets``), each with ``vital`` (bool:
vital or okay) and its assignment ``score`` in the run's answer (1 support, 0.5 partial, 0
not). ``importance="all"``: the mean of the scores over the topic's nuggets (A);
``"vital"``: over its vital nuggets (V); ``"weighted"``: weighted by importance, vital 1 and
okay 0.5 (W). ``strict=True`` counts partial support as 0. An empty set (no nuggets, no vital
nugget) scores 0. Vital-strict is the track's headline.

**Shape**: sentences, words, citations per sentence, the share of uncited sentences and the
number of distinct references cited, per topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

FULL, PARTIAL, NO_SUPPORT, NOT_JUDGED = 2, 1, 0, -1
_NO_CITATION = -2  # a sentence's "first label" when it cites nothing

# weight of a label, indexed by label + 2 (-2 no citation, -1 not judged, 0, 1, 2)
WEIGHTS = {"graded": np.array([0.0, 0.0, 0.0, 0.5, 1.0]),
           "hard": np.array([0.0, 0.0, 0.0, 0.0, 1.0])}

Weight = Literal["graded", "hard"]
Citations = Literal["first", "all"]
Importance = Literal["all", "vital", "weighted"]


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is 0 (an empty set scores 0)."""
    out = np.zeros(len(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _per_topic(sentence_topic: np.ndarray, values: np.ndarray, num_topics: int) -> np.ndarray:
    return np.bincount(sentence_topic, weights=values, minlength=num_topics)[:num_topics]


def first_labels(label: np.ndarray, citation_offsets: np.ndarray) -> np.ndarray:
    """Each sentence's first citation label, -2 for a sentence that cites nothing."""
    starts = np.asarray(citation_offsets[:-1])
    cited = np.asarray(citation_offsets[1:]) > starts
    first = np.full(len(starts), _NO_CITATION, dtype=np.int8)
    first[cited] = np.asarray(label)[starts[cited]]
    return first


def _check(label, citation_offsets, sentence_topic, num_topics) -> None:
    if len(citation_offsets) != len(sentence_topic) + 1:
        raise ValueError(f"citation_offsets has {len(citation_offsets)} values for "
                         f"{len(sentence_topic)} sentences (sentences + 1 expected)")
    if len(label) != (int(citation_offsets[-1]) if len(citation_offsets) else 0):
        raise ValueError(f"{len(label)} labels for {int(citation_offsets[-1])} citations")
    if len(sentence_topic) and (sentence_topic.min() < 0 or sentence_topic.max() >= num_topics):
        raise ValueError(f"a sentence's topic is outside 0..{num_topics - 1}")
    if len(label) and (label.min() < NOT_JUDGED or label.max() > FULL):
        raise ValueError("support labels are -1, 0, 1 or 2")


@dataclass(frozen=True)
class SentenceSupport:
    """Per sentence: ``value`` (the weighted support), ``judged`` (it has a judged value: the
    precision denominator counts it) and ``counted`` (the recall denominator counts it)."""

    value: np.ndarray
    judged: np.ndarray
    counted: np.ndarray


def sentence_support(label: np.ndarray, citation_offsets: np.ndarray,
                     weight: Weight = "graded", citations: Citations = "first"
                     ) -> SentenceSupport:
    """The per-sentence terms of support precision and recall (see the module docstring)."""
    w = WEIGHTS[weight]
    label = np.asarray(label, dtype=np.int8)
    offsets = np.asarray(citation_offsets, dtype=np.int64)
    if citations == "first":
        first = first_labels(label, offsets)
        return SentenceSupport(value=w[first + 2], judged=first >= 0,
                               counted=first != NOT_JUDGED)
    if citations != "all":
        raise ValueError(f"citations is 'first' or 'all', not {citations!r}")
    counts = np.diff(offsets)
    sentence = np.repeat(np.arange(len(counts)), counts)
    judged_citation = label >= 0
    n_judged = np.bincount(sentence, weights=judged_citation, minlength=len(counts))
    total = np.bincount(sentence, weights=w[label + 2], minlength=len(counts))
    judged = n_judged > 0
    return SentenceSupport(value=ratio(total, n_judged), judged=judged,
                           counted=judged | (counts == 0))


def support_precision(label: np.ndarray, citation_offsets: np.ndarray,
                      sentence_topic: np.ndarray, num_topics: int, *,
                      weight: Weight = "graded", citations: Citations = "first") -> np.ndarray:
    """Per topic: the sum of the sentences' support values / the sentences with a judged
    value (first citation judged, or for ``citations="all"`` at least one judged)."""
    _check(label, citation_offsets, sentence_topic, num_topics)
    s = sentence_support(label, citation_offsets, weight, citations)
    return ratio(_per_topic(sentence_topic, s.value, num_topics),
                 _per_topic(sentence_topic, s.judged, num_topics))


def support_recall(label: np.ndarray, citation_offsets: np.ndarray,
                   sentence_topic: np.ndarray, num_topics: int, *,
                   weight: Weight = "graded", citations: Citations = "first") -> np.ndarray:
    """Per topic: the sum of the sentences' support values / (all sentences - those cited
    but not judged: a first citation of -1, or for ``"all"`` no judged citation)."""
    _check(label, citation_offsets, sentence_topic, num_topics)
    s = sentence_support(label, citation_offsets, weight, citations)
    return ratio(_per_topic(sentence_topic, s.value, num_topics),
                 _per_topic(sentence_topic, s.counted, num_topics))


SUPPORT_VARIANTS: tuple[tuple[Weight, Citations], ...] = (
    ("graded", "first"), ("hard", "first"), ("graded", "all"), ("hard", "all"))


def support_measures(label: np.ndarray, citation_offsets: np.ndarray,
                     sentence_topic: np.ndarray, num_topics: int
                     ) -> dict[tuple[str, str, str], np.ndarray]:
    """Every support measure per topic, keyed ``(precision|recall, weight, citations)``:
    each sentence term computed once per (weight, citations) and shared by both."""
    _check(label, citation_offsets, sentence_topic, num_topics)
    out: dict[tuple[str, str, str], np.ndarray] = {}
    for weight, citations in SUPPORT_VARIANTS:  # four variants, each on whole columns
        s = sentence_support(label, citation_offsets, weight, citations)
        total = _per_topic(sentence_topic, s.value, num_topics)
        out[("precision", weight, citations)] = ratio(
            total, _per_topic(sentence_topic, s.judged, num_topics))
        out[("recall", weight, citations)] = ratio(
            total, _per_topic(sentence_topic, s.counted, num_topics))
    return out


# ---- nuggets ------------------------------------------------------------------------------


def nugget_score(nugget_offsets: np.ndarray, vital: np.ndarray, score: np.ndarray, *,
                 importance: Importance = "all", strict: bool = False) -> np.ndarray:
    """Per topic: the nugget score A (``"all"``), V (``"vital"``) or W (``"weighted"``) of one
    run's answers, strict or not (see the module docstring). ``nugget_offsets`` (len topics
    + 1) delimits each topic's nuggets; ``vital`` and ``score`` are per nugget."""
    offsets = np.asarray(nugget_offsets, dtype=np.int64)
    vital = np.asarray(vital, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    if len(vital) != offsets[-1] or len(s) != offsets[-1]:
        raise ValueError(f"{len(vital)} importances and {len(s)} scores for "
                         f"{int(offsets[-1])} nuggets")
    if len(s) and not np.isin(s, (0.0, 0.5, 1.0)).all():
        raise ValueError("nugget assignment scores are 0, 0.5 or 1")
    if strict:
        s = (s == 1.0).astype(np.float64)
    if importance == "all":
        w = np.ones(len(s))
    elif importance == "vital":
        w = vital.astype(np.float64)
    elif importance == "weighted":
        w = np.where(vital, 1.0, 0.5)
    else:
        raise ValueError(f"importance is 'all', 'vital' or 'weighted', not {importance!r}")
    num_topics = len(offsets) - 1
    topic = np.repeat(np.arange(num_topics), np.diff(offsets))
    return ratio(np.bincount(topic, weights=w * s, minlength=num_topics),
                 np.bincount(topic, weights=w, minlength=num_topics))


NUGGET_VARIANTS: tuple[tuple[Importance, bool], ...] = (
    ("all", False), ("all", True), ("vital", False), ("vital", True), ("weighted", False),
    ("weighted", True))


def nugget_measures(nugget_offsets: np.ndarray, vital: np.ndarray, score: np.ndarray
                    ) -> dict[tuple[str, bool], np.ndarray]:
    """Every nugget score per topic, keyed ``(importance, strict)``."""
    return {(i, strict): nugget_score(nugget_offsets, vital, score, importance=i,
                                      strict=strict)
            for i, strict in NUGGET_VARIANTS}


# ---- the shape of an answer ---------------------------------------------------------------


_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\n\r\x0b\x0c")] = True


def word_counts(texts) -> np.ndarray:
    """Words (runs of non-whitespace, as ``str.split()`` counts them for ASCII whitespace) in
    each text; a missing text (None, or NaN read from a JSON file) has none."""
    texts = ["" if not isinstance(t, str) else t for t in texts]
    if not texts:
        return np.zeros(0, dtype=np.int64)
    data = np.frombuffer("\n".join(texts).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    space = _SPACE[data]
    starts = ~space & np.concatenate(([True], space[:-1]))
    # each byte's text: texts are joined by one newline, so count the newlines before it
    separator = np.zeros(len(data), dtype=np.int64)
    lengths = np.fromiter((len(t.encode("utf-8", "surrogatepass")) for t in texts),
                          dtype=np.int64, count=len(texts))
    separator[np.cumsum(lengths + 1)[:-1] - 1] = 1
    which = np.cumsum(separator) - separator
    return np.bincount(which[starts], minlength=len(texts)).astype(np.int64)


@dataclass(frozen=True)
class AnswerShape:
    """Per topic: ``sentences``, ``words``, ``citations_per_sentence`` (mean),
    ``uncited_share`` (sentences without a citation / sentences) and
    ``distinct_references`` (different references cited). A topic with no sentence has 0."""

    sentences: np.ndarray
    words: np.ndarray
    citations_per_sentence: np.ndarray
    uncited_share: np.ndarray
    distinct_references: np.ndarray


def answer_shape(sentence_text, citation_offsets: np.ndarray, citation_ref: np.ndarray,
                 sentence_topic: np.ndarray, num_topics: int) -> AnswerShape:
    """The shape counts of one run's answers, per topic."""
    offsets = np.asarray(citation_offsets, dtype=np.int64)
    topic = np.asarray(sentence_topic, dtype=np.int64)
    counts = np.diff(offsets)
    sentences = np.bincount(topic, minlength=num_topics).astype(np.float64)
    words = _per_topic(topic, word_counts(sentence_text).astype(np.float64), num_topics)
    cited = _per_topic(topic, counts.astype(np.float64), num_topics)
    uncited = _per_topic(topic, (counts == 0).astype(np.float64), num_topics)
    citation_topic = np.repeat(topic, counts)
    distinct = np.zeros(num_topics)
    if len(citation_ref):
        refs = np.unique(np.asarray(citation_ref, dtype=str), return_inverse=True)[1].ravel()
        pairs = np.unique(citation_topic * (int(refs.max()) + 1) + refs)
        distinct = np.bincount(pairs // (int(refs.max()) + 1),
                               minlength=num_topics).astype(np.float64)
    return AnswerShape(sentences=sentences, words=words,
                       citations_per_sentence=ratio(cited, sentences),
                       uncited_share=ratio(uncited, sentences),
                       distinct_references=distinct)
