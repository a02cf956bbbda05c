"""Benchmark: depth-100 pooling of 70 runs x 50 topics x 1,000 documents, and a budget
simulation of 5 strategies x 10 budgets on the same campaign; trectools' TrecPoolMaker
(depth-k, "topX") measured in the same process when it is installed.

    python bench/bench_pooling.py [--out bench/results-pooling.md] [--keep DIR]

The campaign comes from irbench.simulate (35 groups x 2 runs, all pooled to depth 100, seed 7)
into a temporary folder. Times are wall-clock medians of 3 repetitions (1 for the simulation
and for trectools' reading), on whatever machine runs this. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from irbench import read_qrels, read_run  # noqa: E402
from irbench.pooling import build_pool, build_table, simulate_budgets  # noqa: E402
from irbench.pooling.simulation import format_simulation  # noqa: E402
from irbench.simulate import CampaignSpec, simulate  # noqa: E402

SPEC = CampaignSpec(groups=35, runs_per_group=2, topics=50, depth=1000, pool_depth=100,
                    pooled_runs=2, collection_size=500_000, seed=7)
STRATEGIES = ("budgeted", "mtf", "mtf-global", "mm-ns", "thompson")


def timed(fn, repeat=3):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("results-pooling.md")))
    ap.add_argument("--keep", help="write the campaign here instead of a temporary folder")
    args = ap.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="irbench-pool-"))
    start = time.perf_counter()
    result = simulate(SPEC, folder)
    gen = time.perf_counter() - start
    paths = [r.path for r in result.runs]
    lines = ["# Pooling benchmark\n",
             f"Machine: {platform.machine()}, Python {platform.python_version()}, "
             f"numpy {np.__version__}. Campaign: {len(paths)} runs x {SPEC.topics} topics x "
             f"{SPEC.depth} documents ({sum(p.stat().st_size for p in paths) / 1e6:.0f} MB), "
             f"irbench.simulate seed {SPEC.seed}, generated in {gen:.1f} s; official qrels: a "
             f"depth-{SPEC.pool_depth} pool of every run ({result.pool_size} judgments).\n"]

    read_s, runs = timed(lambda: [read_run(p) for p in paths], repeat=1)
    entries = [(r.name, r.group, run) for r, run in zip(result.runs, runs)]
    table_s, table = timed(lambda: build_table(entries))
    pool_s, pool = timed(lambda: build_pool(table, "depth", k=SPEC.pool_depth))
    qrels = read_qrels(result.qrels_path)
    official = set(zip(qrels.query_id.tolist(), qrels.doc_id.tolist()))
    mine = set(zip(pool.query_id.tolist(), pool.doc_id.tolist()))
    assert mine == official, "depth-100 pool differs from the official judged set"
    rows = [("irbench: read 70 runs (read_run)", read_s),
            ("irbench: build_table (rank all runs once, intern docnos)", table_s),
            ("irbench: build_pool depth-100 (with provenance)", pool_s),
            ("irbench: total, files to pool", read_s + table_s + pool_s)]
    tt_note = ""
    try:
        from trectools import TrecPoolMaker, TrecRun
    except ImportError:
        tt_note = "trectools is not installed: no comparison."
    else:
        tread_s, truns = timed(lambda: [TrecRun(str(p)) for p in paths], repeat=1)
        tpool_s, tpool = timed(lambda: TrecPoolMaker().make_pool(truns, strategy="topX",
                                                                 topX=SPEC.pool_depth))
        theirs = {(str(q).encode(), d.encode()) for q, docs in tpool.pool.items() for d in docs}
        rows += [("trectools: read 70 runs (TrecRun)", tread_s),
                 ("trectools: TrecPoolMaker.make_pool topX=100", tpool_s),
                 ("trectools: total, files to pool", tread_s + tpool_s)]
        diff = len(theirs ^ official)
        tt_note = (f"trectools' pool has {len(theirs)} documents; it differs from the official "
                   f"judged set in {diff} (topic, docno) pairs (trectools breaks score ties by "
                   "docno ascending, trec_eval descending). Ratio trectools / irbench: "
                   f"pooling {tpool_s / pool_s:.1f}x, files to pool "
                   f"{(tread_s + tpool_s) / (read_s + table_s + pool_s):.1f}x.")
    lines += ["| step | seconds |", "| --- | ---: |"]
    lines += [f"| {name} | {sec:.3f} |" for name, sec in rows]
    lines += ["", tt_note, ""]

    fractions = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0)
    sim_s, sim = timed(lambda: simulate_budgets(table, qrels, strategies=STRATEGIES,
                                                fractions=fractions, measures=("AP",
                                                                               "nDCG@10"),
                                                max_depth=SPEC.pool_depth, seed=1), repeat=1)
    lines += [f"## Simulation: {len(STRATEGIES)} strategies x {len(fractions)} budgets\n",
              f"Total {sim_s:.2f} s (oracle loop per strategy: "
              + ", ".join(f"{k} {v:.2f} s" for k, v in sim.seconds.items())
              + f"; the rest is re-scoring {table.num_runs} runs under "
              f"{len(STRATEGIES) * len(fractions)} reduced qrels, 2 measures).\n",
              "```", format_simulation(sim, "AP"), "```", ""]
    text = "\n".join(lines)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
