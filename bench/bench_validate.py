"""Benchmark of the submission checker: ``check_run`` on a run of 1000 topics x 1000 documents.

Generates, in a temporary folder and from a fixed seed, a valid run (1,000,000 lines, ~50 MB,
TREC-style docnos ``FBIS3-12345``), the same run gzipped, and a copy with 1000 malformed lines
spread over the file (bad scores, missing columns, duplicates), then times ``check_run`` with
the 1000-topic set (best of --reps after one warm-up). The issue's target is "a few seconds".

    python bench/bench_validate.py             # prints a table; ~1 min
    python bench/bench_validate.py --reps 1
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import tempfile
import time

import numpy as np

from irbench.submissions import check_run
from irbench.topics import read_topics

TOPICS, DEPTH = 1000, 1000


def make_run(folder: str, seed: int = 7) -> tuple[str, str, str, str]:
    """(run, run.gz, malformed run, topics) paths."""
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.arange(1, TOPICS + 1), DEPTH)
    prefixes = np.array(["FBIS3", "FT934", "LA0101", "FR9401"])
    docs = np.char.add(np.char.add(prefixes[rng.integers(0, 4, TOPICS * DEPTH)], "-"),
                       rng.permutation(TOPICS * DEPTH).astype(str))
    ranks = np.tile(np.arange(1, DEPTH + 1), TOPICS)
    scores = np.tile(np.linspace(30, 1, DEPTH), TOPICS) + rng.random(TOPICS * DEPTH) * 1e-3
    scores = np.sort(scores.reshape(TOPICS, DEPTH), axis=1)[:, ::-1].ravel()
    lines = [f"{q} Q0 {d} {r} {s:.4f} benchRun-1\n"
             for q, d, r, s in zip(qids.tolist(), docs.tolist(), ranks.tolist(), scores.tolist())]
    run = os.path.join(folder, "benchRun-1.txt")
    with open(run, "w") as fh:
        fh.writelines(lines)
    with open(run, "rb") as fh, gzip.open(run + ".gz", "wb", compresslevel=1) as gz:
        gz.write(fh.read())
    bad = lines.copy()
    for k, i in enumerate(rng.choice(len(bad), 1000, replace=False)):
        fields = bad[i].split()
        kind = k % 4
        if kind == 0:
            fields[4] = "NaN"
        elif kind == 1:
            fields = fields[:5]
        elif kind == 2:
            fields[3] = "1.5"
        else:
            fields[2] = lines[i + 1 if i % DEPTH == 0 else i - 1].split()[2]  # a duplicate
        bad[i] = " ".join(fields) + "\n"
    malformed = os.path.join(folder, "malformed.txt")
    with open(malformed, "w") as fh:
        fh.writelines(bad)
    topics = os.path.join(folder, "topics.tsv")
    with open(topics, "w") as fh:
        fh.writelines(f"{q}\ttopic {q}\n" for q in range(1, TOPICS + 1))
    return run, run + ".gz", malformed, topics


def best(fn, reps: int) -> tuple[float, object]:
    result = fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        run, run_gz, malformed, topics_path = make_run(folder)
        print(f"generated in {time.perf_counter() - t:.1f} s: {os.path.getsize(run) / 1e6:.1f} MB"
              f" ({os.path.getsize(run_gz) / 1e6:.1f} MB gzipped)")
        topics = read_topics(topics_path)
        print(f"{platform.python_implementation()} {platform.python_version()}, numpy "
              f"{np.__version__}, {os.cpu_count()} CPUs; best of {args.reps}")
        print(f"{'file':<28} {'seconds':>8} {'verdict':>9} {'errors':>7} {'warnings':>9}")
        for label, path in (("valid, 1M lines", run), ("valid, gzipped", run_gz),
                            ("1000 malformed lines", malformed)):
            seconds, check = best(lambda: check_run(path, topics=topics), args.reps)
            print(f"{label:<28} {seconds:>8.2f} {check.verdict:>9} {check.num_errors:>7} "
                  f"{check.num_warnings:>9}")


if __name__ == "__main__":
    main()
