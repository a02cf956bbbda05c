"""Benchmark of the reproducibility measures (issue 42): 100 run pairs (an original run and its
reproduction), 50 topics x 1000 documents each, scores rounded so ties are common, 10% of a
reproduction's ranks holding other documents.

Times, in one process, best of --reps after a warm-up (wall clock), target < 2 s:

1. irbench.stats.repro for the 100 pairs: ranking each pair once (:func:`rank_pair`), KTU at
   cutoffs 10, 100 and 1000, RBO (p = 0.95) at the same cutoffs, and, from the per-topic scores
   of 4 measures, RMSE and nRMSE, the paired and the unpaired t-test for every pair and ER and
   Delta RI for the 50 (baseline, advanced) experiments the pairs make (pair 2i the baseline,
   2i + 1 the advanced run). Scoring the runs (``irbench.evaluate``) is not timed here;
2. repro_eval 0.5.0 on the same values for the first --oracle-pairs pairs (its RBO is a Python
   loop over ranks with set intersections: hours for 100 pairs), run files read with its
   ``load_run`` untimed, then scaled to 100 pairs.

Writes bench/results-repro.md.

    python bench/bench_repro.py            # ~1-2 min on 2 cores
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import irbench
from irbench.stats import repro
from irbench.trec import Run

PAIRS, TOPICS, DOCS, POOL = 100, 50, 1000, 3000
CUTOFFS = (10, 100, 1000)
MEASURES = ("P@10", "nDCG@20", "AP", "RR")
HERE = Path(__file__).parent


def _run(name: str, topic_ids: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> Run:
    order = np.argsort(-scores, axis=1, kind="stable")  # each topic by descending score
    docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    n = scores.size
    return Run(name=name, runid=name, query_id=np.repeat(topic_ids, docs.shape[1]),
               doc_id=docs.ravel(), score=scores.ravel(), line=np.arange(1, n + 1))


def make_pairs(seed: int = 0, decimals: int = 3):
    """(qrels, [(original Run, reproduced Run)] * PAIRS), made with whole arrays; scores
    rounded to ``decimals`` (1: most documents tie with another)."""
    rng = np.random.default_rng(seed)
    topic_ids = np.array([f"{400 + t}".encode() for t in range(TOPICS)])
    vocab = np.array([f"clueweb-{j:07d}".encode() for j in range(POOL)])
    gain = rng.integers(0, 3, (TOPICS, POOL)) * (rng.random((TOPICS, POOL)) < 0.15)
    judged = rng.random((TOPICS, POOL)) < 0.4
    t, j = np.nonzero(judged)
    qrels = irbench.read_qrels([(topic_ids[a].decode(), vocab[b].decode(), int(gain[a, b]))
                                for a, b in zip(t, j)])
    pairs = []
    for p in range(PAIRS):
        score = gain + rng.normal(0, 1.0 + (p % 2) * 0.5, (TOPICS, POOL))
        ranked = np.argsort(-score, axis=1)
        picked, others = ranked[:, :DOCS], ranked[:, DOCS:]
        again = picked.copy()
        swap = rng.random(picked.shape) < 0.1  # other documents (unretrieved ones) there
        nth = np.cumsum(swap, axis=1) - 1
        again[swap] = others[np.nonzero(swap)[0], nth[swap]]
        original = _run(f"o{p}", topic_ids, vocab[picked],
                        np.round(np.take_along_axis(score, picked, 1), decimals))
        noisy = np.take_along_axis(score, again, 1) + rng.normal(0, 0.3, again.shape)
        reproduced = _run(f"r{p}", topic_ids, vocab[again], np.round(noisy, decimals))
        pairs.append((original, reproduced))
    return qrels, pairs


def irbench_measures(pairs, scores) -> int:
    n = 0
    for original, reproduced in pairs:
        pair = repro.rank_pair(original, reproduced)
        for depth in CUTOFFS:
            n += len(repro.ktu(pair, depth).values) + len(repro.rbo(pair, depth).values)
    for i in range(len(pairs)):
        o, r = scores[i]
        for m in MEASURES:
            repro.closeness(o, r, m)
            repro.t_test(o, r, m)
            repro.t_test(o, r, m, paired=False)
            n += 3
    for i in range(0, len(pairs) - 1, 2):
        for m in MEASURES:
            repro.effect(scores[i][0], scores[i + 1][0], scores[i][1], scores[i + 1][1], m)
            n += 1
    return n


def _write(run: Run, path: Path) -> None:
    with path.open("w") as out:
        out.writelines(f"{q.decode()} Q0 {d.decode()} 0 {s} x\n"
                       for q, d, s in zip(run.query_id, run.doc_id, run.score))


def _nested(ev) -> dict:
    columns = {m: ev[m] for m in MEASURES}
    return {t: {m: float(v[i]) for m, v in columns.items()} for i, t in enumerate(ev.topics)}


def repro_eval_measures(paths, scores) -> float:
    """Seconds repro_eval takes for the same values on len(paths) pairs (reading untimed)."""
    from repro_eval.measure import document_order, effectiveness, overall_effects
    from repro_eval.measure import statistics as re_stats
    from repro_eval.util import load_run

    took = 0.0
    for (po, pr), (o, r) in zip(paths, scores):
        for depth in CUTOFFS:
            runs = [load_run(str(po)), load_run(str(pr)), load_run(str(po)), load_run(str(pr))]
            start = time.perf_counter()
            document_order.KTU(runs[0], runs[1], trim_thresh=depth, per_topic=True)
            document_order.RBO(runs[2], runs[3], p=0.95, depth=depth, pbar=False, per_topic=True)
            took += time.perf_counter() - start
        no, nr = _nested(o), _nested(r)
        start = time.perf_counter()
        effectiveness.RMSE(no, nr)
        effectiveness.nRMSE(no, nr)
        re_stats.ttest(no, nr, rpd=True)
        re_stats.ttest(no, nr, rpd=False)
        overall_effects.ER(no, no, nr, nr)  # half the experiments' count: one per two pairs
        overall_effects.DRI(no, no, nr, nr)
        took += time.perf_counter() - start
    return took


def _best(reps: int, work) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--oracle-pairs", type=int, default=3)
    args = parser.parse_args()
    timed = {}
    for decimals in (3, 1):
        qrels, pairs = make_pairs(decimals=decimals)
        prepared = irbench.PreparedQrels(qrels)
        scores = [tuple(irbench.evaluate(prepared, run, MEASURES) for run in pair)
                  for pair in pairs]
        irbench_measures(pairs[:2], scores[:2])  # warm-up
        timed[decimals] = (_best(args.reps, lambda: irbench_measures(pairs, scores)),
                           _best(args.reps, lambda: [repro.rank_pair(o, r) for o, r in pairs]))
    best, rank_best = timed[3]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = []
        for i, (o, r) in enumerate(pairs[:args.oracle_pairs]):
            paths.append((Path(tmp) / f"o{i}", Path(tmp) / f"r{i}"))
            _write(o, paths[-1][0])
            _write(r, paths[-1][1])
        oracle = repro_eval_measures(paths, scores[:args.oracle_pairs])
    scaled = oracle / args.oracle_pairs * PAIRS
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Reproducibility measures (issue 42)", "",
        f"Produced by `python bench/bench_repro.py` on {now}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}.", "",
        f"{PAIRS} run pairs (original, reproduction), {TOPICS} topics x {DOCS} documents; "
        f"KTU and RBO (p = 0.95) at cutoffs {', '.join(map(str, CUTOFFS))}; RMSE, nRMSE, "
        f"paired and unpaired t-tests of {len(MEASURES)} measures per pair; ER and Delta RI "
        f"of {PAIRS // 2} (baseline, advanced) experiments; scores to 3 decimals (ties remain) unless said. Best of {args.reps}, wall clock.", "",
        "| what | seconds |", "|---|---:|",
        f"| irbench.stats.repro, everything (target < 2 s) | {best:.3f} |",
        f"| of which ranking the pairs once (rank_pair) | {rank_best:.3f} |",
        f"| the same, scores to 1 decimal (most documents tied) | {timed[1][0]:.3f} |",
        f"| of which rank_pair | {timed[1][1]:.3f} |",
        f"| repro_eval 0.5.0, the same on {args.oracle_pairs} pairs | {oracle:.2f} |",
        f"| repro_eval 0.5.0 scaled to {PAIRS} pairs | {scaled:.0f} |", "",
        "repro_eval's times exclude reading the run files (its `load_run`); most of its time "
        "is RBO's loop over ranks with set intersections (quadratic in the depth).", "",
        f"Target < 2 s: {'met' if best < 2 else 'missed'}. Per pair, ranking both runs and "
        "keying their docnos (one sort of the 100,000 docnos by topic and bytes, the tied "
        "scores' docnos sorted) is about half; KTU at 1000 (the discordant pairs, one pass per "
        "bit of the ranks) most of the rest. Load average (1 min) at the end: "
        f"{os.getloadavg()[0]:.2f}.", ""]
    (HERE / "results-repro.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
