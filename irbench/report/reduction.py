"""Judgment reduction in the manner of Buckley & Voorhees (2004): how measures hold up when each
topic keeps only a random fraction of its judgments.

For each seed, every topic's judgments are put in one random order and the first
``ceil(f * n)`` kept for each fraction f, so the subsets are nested. Every run is read and
ranked once per reduced qrels and scored; the result per (measure, fraction) is Kendall's tau
between the system ranking under the reduced and under the full judgments, and the RMS error
of the systems' means, averaged over seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ranked import EvalOptions, PreparedQrels, rank_run
from ..measures.compute import compute
from ..measures import parse_measure
from ..trec import Qrels
from ..stats import rank_agreement

FRACTIONS = (1.0, 0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.03)
SEEDS = (0, 1, 2, 3, 4)
MEASURES = ("AP", "Bpref", "Bpref(ten)", "infAP", "AP(condensed)", "nDCG(condensed)")


@dataclass(frozen=True)
class Reduction:
    """tau[m, f] and rmse[m, f]: mean over seeds, for MEASURES x FRACTIONS."""

    measures: tuple[str, ...]
    fractions: tuple[float, ...]
    seeds: tuple[int, ...]
    tau: np.ndarray
    rmse: np.ndarray

    def to_json(self) -> dict:
        return {"measures": list(self.measures), "fractions": list(self.fractions),
                "seeds": list(self.seeds), "tau": self.tau.tolist(),
                "rmse": self.rmse.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> "Reduction":
        return cls(tuple(data["measures"]), tuple(data["fractions"]), tuple(data["seeds"]),
                   np.array(data["tau"], dtype=float), np.array(data["rmse"], dtype=float))


def reduced_qrels(qrels: Qrels, fraction: float, seed: int) -> Qrels:
    """Each topic keeps its first ceil(fraction * n) judgments in a seeded random order (nested
    over fractions for one seed); the others become -1, pooled but not judged, which is what
    infAP's sampling design reads (every other measure treats -1 like a missing judgment)."""
    rng = np.random.default_rng(seed)
    key = rng.random(len(qrels))
    order = np.lexsort((key, qrels.query_id))
    topic = qrels.query_id[order]
    start = np.concatenate(([True], topic[1:] != topic[:-1]))
    first = np.maximum.accumulate(np.where(start, np.arange(len(order)), 0))
    position = np.arange(len(order)) - first
    sizes = np.diff(np.concatenate((np.flatnonzero(start), [len(order)])))
    size = np.repeat(sizes, sizes)
    dropped = order[position >= np.ceil(fraction * size - 1e-9)]
    relevance = qrels.relevance.copy()
    relevance[dropped] = -1
    return Qrels(name=f"{qrels.name}@{fraction}", query_id=qrels.query_id,
                 doc_id=qrels.doc_id, relevance=relevance, line=qrels.line)


def _means(runs, qrels: Qrels, measures, options: EvalOptions) -> np.ndarray:
    prepared = PreparedQrels(qrels)
    out = np.zeros((len(measures), len(runs)))
    for j, run in enumerate(runs):  # a loop over runs; each is scored on whole columns
        _, summaries = compute(rank_run(run, prepared, options), measures)
        out[:, j] = [summaries[m] for m in measures]
    return out


def judgment_reduction(runs, qrels: Qrels, options: EvalOptions, fractions=FRACTIONS,
                       seeds=SEEDS, measures=MEASURES) -> Reduction:
    """The experiment over ``runs`` (read :class:`~irbench.trec.Run` objects)."""

    parsed = [parse_measure(m) for m in measures]
    full = _means(runs, qrels, parsed, options)
    tau = np.zeros((len(parsed), len(fractions)))
    rmse = np.zeros_like(tau)
    for seed in seeds:
        for k, fraction in enumerate(fractions):
            reduced = full if fraction >= 1 else _means(
                runs, reduced_qrels(qrels, fraction, seed), parsed, options)
            for i in range(len(parsed)):
                tau[i, k] += (1.0 if fraction >= 1 else
                              rank_agreement(full[i], reduced[i]).tau) / len(seeds)
                rmse[i, k] += math.sqrt(float(np.mean((reduced[i] - full[i]) ** 2))) / len(seeds)
    return Reduction(tuple(str(m) for m in parsed), tuple(fractions), tuple(seeds), tau, rmse)
