"""Time irbench diffs of every pair of runs of workload (a) (129 runs x 50 topics x 1,000
documents; bench/make_data.py): tau_AP, RBO and Jaccard@10 of every topic of every pair
(irbench.stats.diffs.diff_all_pairs), in one process and split over --workers processes
(forked after the runs are prepared: worker w takes every n-th run as run A). The time that
counts is everything after the runs are read: preparing them and every pair. Wall and CPU
seconds (the CPU of the workers included) and the load average are printed.

    python bench/bench_diff.py [--runs N] [--workers W] [--batch B]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
from pathlib import Path

from irbench.stats.diffs import diff_all_pairs, prepare_rankings
from irbench.trec import read_run

DATA = Path(__file__).resolve().parent / "data" / "full" / "campaign"
RANKINGS: list = []


def _share(worker_count_batch: tuple[int, int, int]) -> int:
    worker, count, batch = worker_count_batch
    return sum(1 for _ in diff_all_pairs(RANKINGS, batch=batch, share=(worker, count)))


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=129)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=24)
    args = parser.parse_args()
    paths = sorted((DATA / "runs").glob("*"))[:args.runs]
    t0 = time.perf_counter()
    runs = [read_run(p) for p in paths]
    t1, c1 = time.perf_counter(), _cpu()
    RANKINGS[:] = prepare_rankings(runs)
    t2, c2 = time.perf_counter(), _cpu()
    pairs = sum(1 for _ in diff_all_pairs(RANKINGS, batch=args.batch))
    t3, c3 = time.perf_counter(), _cpu()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        split = sum(pool.map(_share, [(w, args.workers, args.batch)
                                      for w in range(args.workers)]))
    t4, c4 = time.perf_counter(), _cpu()
    assert split == pairs
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{len(runs)} runs x {len(RANKINGS[0].offsets) - 1} topics, {pairs} pairs")
    print(f"read      {t1 - t0:6.2f} s wall")
    print(f"prepare   {t2 - t1:6.2f} s wall {c2 - c1:6.2f} s CPU")
    print(f"pairs, 1 process   {t3 - t2:6.2f} s wall {c3 - c2:6.2f} s CPU "
          f"({(t3 - t2) / max(pairs, 1) * 1000:.2f} ms a pair)")
    print(f"pairs, {args.workers} processes {t4 - t3:6.2f} s wall {c4 - c3:6.2f} s CPU")
    print(f"the time (prepare + pairs): {t2 - t1 + t3 - t2:.2f} s in one process, "
          f"{t2 - t1 + t4 - t3:.2f} s with {args.workers} processes")


if __name__ == "__main__":
    main()
