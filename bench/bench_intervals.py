"""Benchmark of the leaderboard's bootstrap intervals (issue 38): 129 runs x 50 topics x 10
measures, every interval a 95% BCa interval from scipy.stats.bootstrap with 10,000 resamples.

Times, in one process, best of --reps after a warm-up (wall clock):

1. ``irbench.stats.mean_intervals`` on a 1,290 x 50 matrix of seeded per-topic values shaped
   like real measures (AP-like skewed continuous values, P@10's tenths, RR's reciprocal ranks,
   some all-zero runs);
2. for reference, ``scipy.stats.bootstrap`` itself on the same matrix (the resamples drawn and
   averaged by scipy, in row chunks of the same memory), which irbench replaces with one matrix
   product handed to scipy as its ``bootstrap_result``;
3. on a simulated campaign of the same size (``irbench simulate``: 43 groups x 3 runs, 50
   topics, a 10-measure suite, scored by ``irbench run``): the leaderboard section from the
   store with and without the intervals, and ``irbench report`` as a whole (a fresh process).

Writes bench/results-intervals.md.

    python bench/bench_intervals.py          # ~2 min on 2 cores
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SUITE = ["AP", "nDCG@10", "P@10", "P@20", "RR", "Rprec", "R@100", "Bpref", "infAP", "GMAP"]


def per_topic(systems: int = 129, topics: int = 50, measures: int = 10, seed: int = 0
              ) -> np.ndarray:
    """(systems x measures) rows of per-topic values shaped like real measures."""
    rng = np.random.default_rng(seed)
    kinds = [lambda: rng.beta(0.6, 1.4, topics),                      # AP-like
             lambda: rng.binomial(10, rng.beta(1, 1.5), topics) / 10,  # P@10
             lambda: 1 / rng.geometric(0.5, topics),                  # RR
             lambda: np.zeros(topics) if rng.random() < 0.05 else rng.beta(2, 2, topics)]
    return np.array([kinds[m % len(kinds)]() for _ in range(systems) for m in range(measures)])


def best(reps: int, fn) -> float:
    fn()  # warm-up: imports, caches
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def scipy_alone(values: np.ndarray) -> None:
    """scipy.stats.bootstrap drawing and averaging the resamples itself (its warnings about
    the all-zero rows, where BCa is undefined, silenced)."""
    from scipy import stats

    step = max(1, 16 * 2**20 // (8 * 10_000 * values.shape[1]))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for start in range(0, len(values), step):
            stats.bootstrap((values[start:start + step],), np.mean, axis=-1, n_resamples=10_000,
                            method="BCa", rng=np.random.default_rng(0))


def campaign(folder: Path, reps: int) -> tuple[float, float, float, float]:
    """(intervals alone, leaderboard, leaderboard without intervals, irbench report) seconds."""
    from irbench.config import load_config
    from irbench.report import intervals as report_intervals
    from irbench.report import leaderboard as board
    from irbench.store import Store

    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    irbench = [sys.executable, "-m", "irbench"]
    subprocess.run(irbench + ["simulate", str(folder), "--groups", "43", "--runs-per-group", "3",
                              "--topics", "50", "--depth", "200"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    path = folder / "campaign.yaml"
    data = yaml.safe_load(path.read_text())
    data["suites"] = {"core": SUITE}
    data["systems"][0]["baseline"] = True  # the leaderboard's tests against it, timed too
    data.pop("report", None)  # no pool-bias analysis: not what is timed
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    subprocess.run(irbench + ["run", "--quiet", str(path)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    config = load_config(str(path), strict=False, systems=False)
    with Store(config.store, read_only=True) as store:
        qrels = config.qrels[0].name
        matrices = {m: store.score_matrix(qrels, m) for m in SUITE}
        assert all(len(matrices[m][0]) == 129 for m in SUITE)
        alone = best(reps, lambda: report_intervals.intervals(matrices, 0))
        with_ci = best(reps, lambda: board.leaderboard_on(config, store, qrels, 0))
        real = board.intervals
        board.intervals = lambda matrices, seed: {}
        try:
            without = best(reps, lambda: board.leaderboard_on(config, store, qrels, 0))
        finally:
            board.intervals = real
    report = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(irbench + ["report", str(path), "--out", str(folder / "report")],
                       check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report.append(time.perf_counter() - t0)
    return alone, with_ci, without, min(report)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results-intervals.md")
    args = ap.parse_args(argv)
    from irbench.stats import mean_intervals

    values = per_topic()
    kernel = best(args.reps, lambda: mean_intervals(values, seed=0))
    found = mean_intervals(values, seed=0)
    assert ((found.low >= values.min(axis=1)) & (found.high <= values.max(axis=1))).all()
    reference = best(1, lambda: scipy_alone(values))
    with tempfile.TemporaryDirectory() as tmp:
        alone, with_ci, without, report = campaign(Path(tmp), args.reps)
    methods = ", ".join(f"{found.methods.count(m)} {m}" for m in sorted(set(found.methods)))
    text = (f"# The leaderboard's bootstrap intervals: time\n\nProduced by `python "
            f"bench/bench_intervals.py` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{os.cpu_count()} cores. 95% BCa intervals (scipy.stats.bootstrap, 10,000 resamples) "
            "of 129 runs x 10 measures (1,290 means) over 50 topics; wall clock, best of "
            f"{args.reps} after a warm-up.\n\n| what | seconds |\n|---|---:|\n"
            f"| `mean_intervals`, 1,290 x 50 seeded values ({methods}) | {kernel:.2f} s |\n"
            f"| for reference: scipy.stats.bootstrap resampling itself, same rows | "
            f"{reference:.2f} s |\n"
            f"| simulated campaign (129 runs, 50 topics, 10 measures): the intervals "
            f"(9 measures; GMAP has none) | {alone:.2f} s |\n"
            f"| its leaderboard section (means, baseline tests, intervals) | {with_ci:.2f} s |\n"
            f"| its leaderboard section without the intervals | {without:.2f} s |\n"
            f"| `irbench report` on it (a fresh process) | {report:.2f} s |\n")
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
