"""Data frames in: `irbench.evaluate` on pandas frames against ir_measures and ranx on the same
frames, the 7,000-topic run (workload (b) of make_data.py: 7,000 topics x 1,000 documents,
~20 judgments per topic), in one process.

    python bench/make_data.py            # once: bench/data/full/large/
    python bench/bench_frames.py         # writes bench/results-frames.md

The frames are read with pandas before timing (the same frames for every tool); each tool is
timed from the frames to the per-topic values, best of --repeat. ranx is timed warm (after a
call on a tiny run, so numba's compilation is not counted) and cold. MAP, RR@10, P@10 and
nDCG@10 are checked to agree across the tools before anything is reported.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import irbench  # noqa: E402

MEASURES = ("AP", "RR@10", "P@10", "nDCG@10")
RANX = {"AP": "map", "RR@10": "mrr@10", "P@10": "precision@10", "nDCG@10": "ndcg@10"}


def _frames(folder: Path):
    import pandas as pd

    run = pd.read_csv(folder / "run.txt", sep=r"\s+", header=None, dtype={0: str, 2: str},
                      names=["query_id", "q0", "doc_id", "rank", "score", "tag"])
    qrels = pd.read_csv(folder / "qrels.txt", sep=r"\s+", header=None, dtype={0: str, 2: str},
                        names=["query_id", "iteration", "doc_id", "relevance"])
    return run[["query_id", "doc_id", "score"]], qrels[["query_id", "doc_id", "relevance"]]


def _best(fn, repeat: int) -> tuple[float, dict]:
    best, out = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
    return best, out


def run_irbench(run, qrels) -> dict:
    ev = irbench.evaluate(qrels, run, MEASURES)
    return {m: float(ev.summary(m)) for m in MEASURES}


def run_ir_measures(run, qrels) -> dict:
    import ir_measures

    result = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in MEASURES],
                                        qrels, run)
    return {m: float(result[ir_measures.parse_measure(m)]) for m in MEASURES}


def run_ranx(run, qrels) -> dict:
    from ranx import Qrels, Run, evaluate

    q = Qrels.from_df(qrels, q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
    r = Run.from_df(run, q_id_col="query_id", doc_id_col="doc_id", score_col="score")
    values = evaluate(q, r, list(RANX.values()))
    return {m: float(values[RANX[m]]) for m in MEASURES}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "full" / "large")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-o", "--output", type=Path, default=HERE / "results-frames.md")
    args = ap.parse_args()
    if not (args.data / "run.txt").exists():
        print(f"no {args.data / 'run.txt'}: run python bench/make_data.py first", file=sys.stderr)
        return 1
    run, qrels = _frames(args.data)
    rows = []
    t, ours = _best(lambda: run_irbench(run, qrels), args.repeat)
    rows.append(("irbench.evaluate", t, ours))
    try:
        t, theirs = _best(lambda: run_ir_measures(run, qrels), args.repeat)
        rows.append(("ir_measures.calc_aggregate", t, theirs))
    except ImportError:
        pass
    try:
        import pandas as pd

        tiny = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]})
        tiny = tiny.astype({"query_id": object, "doc_id": object})
        tiny_q = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [1]})
        tiny_q = tiny_q.astype({"query_id": object, "doc_id": object})
        started = time.perf_counter()
        run_ranx(tiny, tiny_q)  # numba compiles here
        cold_extra = time.perf_counter() - started
        # ranx asserts object (not pandas 3's string) id columns: converted before timing
        run_o = run.astype({"query_id": object, "doc_id": object})
        qrels_o = qrels.astype({"query_id": object, "doc_id": object})
        t, theirs = _best(lambda: run_ranx(run_o, qrels_o), args.repeat)
        rows.append(("ranx (warm)", t, theirs))
        rows.append(("ranx (cold: + numba compilation)", t + cold_extra, theirs))
    except ImportError:
        pass
    notes = []
    for name, _, values in rows[1:]:  # the tools must agree before any time is reported
        off = [m for m in MEASURES if not np.isclose(values[m], ours[m], rtol=1e-6, atol=1e-9)]
        if any(abs(values[m] - ours[m]) > 1e-3 for m in off):
            raise SystemExit(f"{name} disagrees with irbench on {', '.join(off)}")
        if off:  # e.g. topic 218111: two documents at 22.270, trec_eval puts 5583173 first
            notes.append(f"{name} orders tied scores otherwise than trec_eval (score, then "
                         "docno descending), which irbench follows: "
                         + ", ".join(f"{m} {values[m]:.6f} vs {ours[m]:.6f}" for m in off))
    ref = rows[0][1]
    lines = ["# Data frames in: the 7,000-topic run", "",
             f"{len(run):,} run rows, {len(qrels):,} qrels rows, pandas frames read before "
             f"timing; best of {args.repeat}; measures {', '.join(MEASURES)} "
             "(`python bench/bench_frames.py`).", "",
             "| tool | seconds | vs irbench | " + " | ".join(MEASURES) + " |",
             "|---|---:|---:|" + "---:|" * len(MEASURES)]
    for name, seconds, values in rows:
        lines.append(f"| {name} | {seconds:.2f} | {seconds / ref:.1f}x | "
                     + " | ".join(f"{values[m]:.4f}" for m in MEASURES) + " |")
    lines += [""] + [f"- {n}" for n in dict.fromkeys(notes)]
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
