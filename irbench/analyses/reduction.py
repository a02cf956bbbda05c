"""Judgment reduction: how measures hold up when each topic keeps only part of its judgments.

The question of Buckley & Voorhees ("Retrieval evaluation with incomplete information", SIGIR
2004) and Yilmaz & Aslam ("Estimating average precision with incomplete and imperfect
judgments", CIKM 2006): rank the systems with each measure on reduced judgments and compare
that ranking (Kendall's tau) with the ranking by the same measure on the full judgments, and
with the ranking by MAP on the full judgments (the official ranking the reduced measure should
reproduce). Two published designs, in :data:`DESIGNS`:

- ``buckley-voorhees`` (the default): per topic, the same fraction of the relevant and of the
  non-relevant judgments is kept (each count rounded half up, and at least one relevant
  document kept when the topic has any), the other judgments are *removed*: a reduced qrels,
  as a smaller pool would give.
- ``sampled`` (Yilmaz & Aslam): per topic, a uniform random sample of the judgments is kept
  (``ceil(fraction * n)``, relevance ignored) and the others are marked ``-1``, pooled but not
  judged, which turns infAP into its sampling estimator (every other measure reads ``-1`` as
  unjudged).

Relevant means a level >= the campaign's relevance level; negative levels (already unjudged)
are kept as they are. For one seed the subsets are nested over the fractions (each topic's
judgments, relevant and non-relevant apart, are put in one seeded random order and a prefix is
kept). Every run is ranked once per reduced qrels and scored; tau and the RMS error of the
systems' means are averaged over the seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..measures import parse_measure
from ..measures.compute import score_run
from ..ranked import EvalOptions, PreparedQrels
from ..stats import rank_agreement
from ..trec import Qrels

FRACTIONS = (1.0, 0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.03)
SEEDS = (0, 1, 2, 3, 4)
MEASURES = ("AP", "Bpref", "Bpref(ten)", "infAP", "AP(condensed)", "nDCG(condensed)")
REFERENCE = "AP"  # MAP on the full judgments: the ranking every reduced measure is held to


@dataclass(frozen=True)
class Design:
    """A way of reducing judgments: ``reduce(qrels, fraction, seed, relevance_level)``."""

    name: str
    reduce: Callable[[Qrels, float, int, int], Qrels]
    description: str
    citation: str


@dataclass(frozen=True, kw_only=True)
class Reduction:
    """Means over seeds for MEASURES x FRACTIONS: ``tau`` against the same measure on the full
    judgments, ``tau_map`` against MAP on the full judgments, ``rmse`` of the systems' means
    against the same measure's full-judgment means."""

    design: str
    measures: tuple[str, ...]
    fractions: tuple[float, ...]
    seeds: tuple[int, ...]
    tau: np.ndarray
    tau_map: np.ndarray
    rmse: np.ndarray

    def to_json(self) -> dict:
        return {"design": self.design, "measures": list(self.measures),
                "fractions": list(self.fractions), "seeds": list(self.seeds),
                "tau": self.tau.tolist(), "tau_map": self.tau_map.tolist(),
                "rmse": self.rmse.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> Reduction:
        return cls(design=data["design"], measures=tuple(data["measures"]),
                   fractions=tuple(data["fractions"]), seeds=tuple(data["seeds"]),
                   tau=np.array(data["tau"], dtype=float),
                   tau_map=np.array(data["tau_map"], dtype=float),
                   rmse=np.array(data["rmse"], dtype=float))


def _positions(qrels: Qrels, cls: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each judgment's position in a seeded random order within its (topic, class) cell, and
    the size of that cell."""
    key = np.random.default_rng(seed).random(len(qrels))
    order = np.lexsort((key, cls, qrels.query_id))
    topic, group = qrels.query_id[order], cls[order]
    start = np.concatenate(([True], (topic[1:] != topic[:-1]) | (group[1:] != group[:-1])))
    first = np.maximum.accumulate(np.where(start, np.arange(len(order)), 0))
    sizes = np.diff(np.concatenate((np.flatnonzero(start), [len(order)])))
    position, size = np.empty(len(order), np.int64), np.empty(len(order), np.int64)
    position[order] = np.arange(len(order)) - first
    size[order] = np.repeat(sizes, sizes)
    return position, size


def _with(qrels: Qrels, fraction: float, keep: np.ndarray, relevance=None) -> Qrels:
    rel = qrels.relevance if relevance is None else relevance
    return Qrels(name=f"{qrels.name}@{fraction:g}", query_id=qrels.query_id[keep],
                 doc_id=qrels.doc_id[keep], relevance=rel[keep], line=qrels.line[keep])


def buckley_voorhees(qrels: Qrels, fraction: float, seed: int,
                     relevance_level: int = 1) -> Qrels:
    """The same fraction of each topic's relevant and non-relevant judgments, at least one
    relevant kept, the rest removed (nested over fractions for one seed)."""
    judged = qrels.relevance >= 0
    relevant = qrels.relevance >= relevance_level
    cls = np.where(relevant, 1, np.where(judged, 0, 2))
    position, size = _positions(qrels, cls, seed)
    quota = np.floor(fraction * size + 0.5 + 1e-9).astype(np.int64)  # rounded half up
    quota = np.where(relevant, np.maximum(quota, 1), quota)
    keep = ~judged | (position < quota)
    return _with(qrels, fraction, keep)


def sampled(qrels: Qrels, fraction: float, seed: int, relevance_level: int = 1) -> Qrels:
    """A uniform sample of ``ceil(fraction * n)`` of each topic's judgments; the others become
    -1, pooled but not judged (infAP's sampling design)."""
    judged = qrels.relevance >= 0
    position, size = _positions(qrels, np.where(judged, 0, 1), seed)
    dropped = judged & (position >= np.ceil(fraction * size - 1e-9))
    return _with(qrels, fraction, np.ones(len(qrels), dtype=bool),
                 np.where(dropped, -1, qrels.relevance))


DESIGNS = {d.name: d for d in (
    Design("buckley-voorhees", buckley_voorhees,
           "per topic the same fraction of the relevant and of the non-relevant judgments, "
           "at least one relevant kept, the rest removed",
           "Buckley & Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004"),
    Design("sampled", sampled,
           "a uniform sample of each topic's judgments kept, the rest marked -1 (pooled, not "
           "judged: infAP's sampling estimator)",
           "Yilmaz & Aslam, Estimating average precision with incomplete and imperfect "
           "judgments, CIKM 2006"),
)}
DEFAULT_DESIGN = "buckley-voorhees"  # analyses.DEFAULT_DESIGN names it too (a test checks)


def reduced_qrels(qrels: Qrels, fraction: float, seed: int, design: str = DEFAULT_DESIGN,
                  relevance_level: int = 1) -> Qrels:
    """``qrels`` reduced to ``fraction`` by the named design (see :data:`DESIGNS`)."""
    return DESIGNS[design].reduce(qrels, fraction, seed, relevance_level)


def _means(runs, qrels: Qrels, measures, options: EvalOptions) -> np.ndarray:
    prepared = PreparedQrels(qrels)
    out = np.zeros((len(measures), len(runs)))
    for j, run in enumerate(runs):  # a loop over runs; each is scored on whole columns
        summaries = score_run(prepared, run, measures, options).summaries
        out[:, j] = [summaries[m] for m in measures]
    return out


def judgment_reduction(runs, qrels: Qrels, options: EvalOptions, fractions=FRACTIONS,
                       seeds=SEEDS, measures=MEASURES, design: str = DEFAULT_DESIGN,
                       progress=None) -> Reduction:
    """The experiment over ``runs`` (read :class:`~irbench.trec.Run` objects);
    ``progress(done, total, what)`` is told of each (seed, fraction) done."""
    parsed = [parse_measure(m) for m in measures]
    reference = parse_measure(REFERENCE)
    scored = parsed if reference in parsed else parsed + [reference]
    full = _means(runs, qrels, scored, options)
    full_map = full[scored.index(reference)]
    tau, tau_map, rmse = (np.zeros((len(parsed), len(fractions))) for _ in range(3))
    total, done = len(seeds) * len(fractions), 0
    for seed in seeds:
        for k, fraction in enumerate(fractions):
            done += 1
            if progress is not None:
                progress(done, total, f"fewer judgments: seed {seed}, {fraction:.0%}")
            reduced = full if fraction >= 1 else _means(
                runs, reduced_qrels(qrels, fraction, seed, design, options.relevance_level),
                scored, options)
            for i in range(len(parsed)):
                tau[i, k] += (1.0 if fraction >= 1 else
                              rank_agreement(full[i], reduced[i]).tau) / len(seeds)
                tau_map[i, k] += rank_agreement(full_map, reduced[i]).tau / len(seeds)
                rmse[i, k] += math.sqrt(float(np.mean((reduced[i] - full[i]) ** 2))) / len(seeds)
    return Reduction(design=design, measures=tuple(str(m) for m in parsed),
                     fractions=tuple(fractions), seeds=tuple(seeds), tau=tau, tau_map=tau_map,
                     rmse=rmse)
