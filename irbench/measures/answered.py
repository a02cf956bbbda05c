"""The measures of generated answers as registered families: citation support, nugget scores
and the shape of an answer, computed by the kernels of :mod:`irbench.measures.answers` from a
:class:`~irbench.answers.scored.ScoredAnswers` (an answer run joined with support labels or
nugget assignments over the set's topics).

Every family gives 0 to a topic the run did not answer (the tracks divide a run's sum by the
number of topics). Canonical names: ``support_precision``, ``support_recall`` (parameters
``weight=graded|hard``, ``citations=first|all``), ``nugget_score`` (``importance=all|vital|
weighted``, ``strict``; the track's headline is ``nugget_score(importance=vital,strict=true)``)
and the shape counts ``answer_sentences``, ``answer_words``, ``citations_per_sentence``,
``uncited_share``, ``distinct_references``.
"""

from __future__ import annotations

import numpy as np

from ..errors import EvaluationError
from . import answers as kernels
from .base import Family, Param, register

SUPPORT_CITATION = ("Thakur et al., Support Evaluation for the TREC 2024 RAG Track, "
                    "SIGIR 2025")
NUGGET_CITATION = ("Pradeep et al., Initial Nugget Evaluation Results for the TREC 2024 RAG "
                   "Track with the AutoNuggetizer Framework, arXiv:2411.09607")
WEIGHT = Param("weight", str, "graded", "graded: partial support counts 0.5; hard: 0",
               choices=("graded", "hard"))
CITATIONS = Param("citations", str, "first", "first: each sentence's first citation; all: "
                  "the mean over its judged citations", choices=("first", "all"))
IMPORTANCE = Param("importance", str, "all", "all nuggets (A), vital ones (V), or weighted "
                   "vital 1 and okay 0.5 (W)", choices=("all", "vital", "weighted"))
STRICT = Param("strict", bool, False, "count partial support as 0")


def _zero(measure) -> float:
    return 0.0


def _labels(scored) -> np.ndarray:
    if scored.label is None:
        raise EvaluationError("support measures need support labels (a qrels set of kind "
                              "support)")
    return scored.label


def _support_precision(scored, m) -> np.ndarray:
    return kernels.support_precision(_labels(scored), scored.citation_offsets,
                                     scored.sentence_topic, scored.num_topics,
                                     weight=m.get("weight"), citations=m.get("citations"))


def _support_recall(scored, m) -> np.ndarray:
    return kernels.support_recall(_labels(scored), scored.citation_offsets,
                                  scored.sentence_topic, scored.num_topics,
                                  weight=m.get("weight"), citations=m.get("citations"))


def _nugget_score(scored, m) -> np.ndarray:
    nuggets = scored.nuggets
    if nuggets is None:
        raise EvaluationError("nugget scores need nugget assignments (a qrels set of kind "
                              "nuggets)")
    return kernels.nugget_score(nuggets.offsets, nuggets.vital, nuggets.score,
                                importance=m.get("importance"), strict=m.get("strict"))


def _shape(field: str):
    def compute(scored, m) -> np.ndarray:
        shape = kernels.answer_shape(scored.sentence_text, scored.citation_offsets,
                                     scored.citation_ref, scored.sentence_topic,
                                     scored.num_topics)
        if field == "words":  # the reader's word counts (what the track's limit counts)
            return np.bincount(scored.sentence_topic, weights=scored.sentence_words,
                               minlength=scored.num_topics).astype(np.float64)
        return getattr(shape, field)

    return compute


register(Family("support_precision", "citation support precision: the support of each "
                "sentence's citation (full 1, partial 0.5 or 0) over sentences with a judged "
                "citation", _support_precision, (WEIGHT, CITATIONS), citation=SUPPORT_CITATION,
                missing=_zero, needs="support"))
register(Family("support_recall", "citation support recall: the support of each sentence's "
                "citation over all sentences but those whose citation is not judged",
                _support_recall, (WEIGHT, CITATIONS), citation=SUPPORT_CITATION, missing=_zero,
                needs="support"))
register(Family("nugget_score", "the share of a topic's nuggets the answer contains (support "
                "1, partial 0.5); an empty set scores 0", _nugget_score, (IMPORTANCE, STRICT),
                citation=NUGGET_CITATION, missing=_zero, needs="nuggets"))
for _name, _field, _what, _lower in (
        ("answer_sentences", "sentences", "sentences of the answer", False),
        ("answer_words", "words", "words of the answer (as the track's length limit counts "
         "them)", False),
        ("citations_per_sentence", "citations_per_sentence", "citations per sentence (mean)",
         False),
        ("uncited_share", "uncited_share", "the share of the answer's sentences that cite "
         "nothing", True),
        ("distinct_references", "distinct_references", "different references the answer "
         "cites", False)):
    register(Family(_name, _what, _shape(_field), missing=_zero, needs="answer",
                    lower_is_better=_lower))
