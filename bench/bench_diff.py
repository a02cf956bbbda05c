"""Time irbench diffs of every pair of runs of workload (a) (129 runs x 50 topics x 1,000
documents; bench/make_data.py): tau_AP, RBO and Jaccard@10 of every topic of every pair
(irbench.stats.diffs.diff_all_pairs), in one process and split over --workers processes
(forked after the runs are prepared: each takes every n-th run as run A).

    python bench/bench_diff.py [--runs N] [--workers W]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from pathlib import Path

from irbench.stats.diffs import diff_against, diff_all_pairs, prepare_rankings
from irbench.trec import read_run

DATA = Path(__file__).resolve().parent / "data" / "full" / "campaign"
RANKINGS: list = []


def _share(worker_and_count: tuple[int, int]) -> int:
    worker, count = worker_and_count
    pairs = 0
    for i in range(worker, len(RANKINGS), count):
        others = RANKINGS[i + 1:]
        for at in range(0, len(others), 32):
            pairs += len(diff_against(RANKINGS[i], others[at:at + 32]))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=129)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    paths = sorted((DATA / "runs").glob("*"))[:args.runs]
    t0 = time.perf_counter()
    runs = [read_run(p) for p in paths]
    t1 = time.perf_counter()
    RANKINGS[:] = prepare_rankings(runs)
    for r in RANKINGS:  # the per-run lookups, built once
        _ = (r.rank_of, r.row_topic, r.row_rank)
    t2 = time.perf_counter()
    pairs = sum(1 for _ in diff_all_pairs(RANKINGS))
    t3 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        split = sum(pool.map(_share, [(w, args.workers) for w in range(args.workers)]))
    t4 = time.perf_counter()
    assert split == pairs
    print(f"{len(runs)} runs x {len(RANKINGS[0].offsets) - 1} topics: read {t1 - t0:.1f} s, "
          f"prepared {t2 - t1:.1f} s; {pairs} pairs diffed in {t3 - t2:.1f} s in one process "
          f"({(t3 - t2) / max(pairs, 1) * 1000:.2f} ms a pair), {t4 - t3:.1f} s in "
          f"{args.workers} processes")


if __name__ == "__main__":
    main()
