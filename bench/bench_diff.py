"""Time irbench diffs of every pair of runs of workload (a) (129 runs x 50 topics x 1,000
documents; bench/make_data.py): tau_AP, RBO and Jaccard@10 of every topic of every pair.

    python bench/bench_diff.py [--runs N]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from irbench.stats.diffs import diff_scores, prepare_rankings
from irbench.trec import read_run

DATA = Path(__file__).resolve().parent / "data" / "full" / "campaign"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=129)
    args = parser.parse_args()
    paths = sorted((DATA / "runs").glob("*"))[:args.runs]
    t0 = time.perf_counter()
    runs = [read_run(p) for p in paths]
    t1 = time.perf_counter()
    rankings = prepare_rankings(runs)
    t2 = time.perf_counter()
    pairs = 0
    for a, b in itertools.combinations(rankings, 2):
        diff_scores(a, b)
        pairs += 1
    t3 = time.perf_counter()
    print(f"{len(runs)} runs read {t1 - t0:.1f} s, prepared {t2 - t1:.1f} s; {pairs} pairs "
          f"diffed in {t3 - t2:.1f} s ({(t3 - t2) / max(pairs, 1) * 1000:.2f} ms a pair)")


if __name__ == "__main__":
    main()
