"""Peak memory against input size: `irbench eval` against trec_eval on the same files, each a
fresh process measured by /usr/bin/time (maximum resident set size).

    python bench/bench_memory.py --trec-eval PATH    # writes bench/results-memory.md

Cases: runs of growing size (1,000 to 1,000,000 lines, 50 topics); one 1 MB docno in a
5,785-line run (irbench refuses it at its line; it once needed 5.65 GiB); many topics sharing
20 docnos (2,500 / 5,000 / 10,000 topics; a quadratic hash once); and the 7,000-topic run of
make_data.py when present. trec_eval: --trec-eval, $TREC_EVAL or PATH (build it from
github.com/usnistgov/trec_eval with make); without it only irbench is measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _peak_kib(argv: list[str], env: dict) -> tuple[int, int]:
    """(peak RSS in KiB, exit status) of one process."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env)
    return int(out.stderr.strip().splitlines()[-1]), out.returncode


def _write_run(path: Path, topics: int, per_topic: int, rng, docs: int = 100_000) -> None:
    q = np.repeat(np.arange(1, topics + 1), per_topic)
    d = np.argsort(rng.random((topics, docs)), axis=1)[:, :per_topic].ravel()  # no repeats
    rank = np.tile(np.arange(1, per_topic + 1), topics)
    with open(path, "w") as fh:
        fh.writelines(f"{a} Q0 D{b} {r} {1000 - r} run\n" for a, b, r in zip(q, d, rank))


def _write_qrels(path: Path, topics: int, per_topic: int, rng, docs: int = 100_000) -> None:
    with open(path, "w") as fh:
        for t in range(1, topics + 1):
            for d in rng.choice(docs, size=per_topic, replace=False):
                fh.write(f"{t} 0 D{d} {int(rng.integers(0, 3))}\n")


def _cases(tmp: Path, rng) -> list[tuple[str, Path, Path]]:
    cases = []
    for lines in (1_000, 10_000, 100_000, 1_000_000):
        run, qrels = tmp / f"run{lines}.txt", tmp / "qrels50.txt"
        if not qrels.exists():
            _write_qrels(qrels, 50, 200, rng)
        _write_run(run, 50, lines // 50, rng)
        cases.append((f"run of {lines:,} lines, 50 topics", qrels, run))
    long_run = tmp / "long.txt"
    rows = [f"1 Q0 D{i} {i + 1} {10000 - i} run\n" for i in range(5785)]
    rows[3000] = f"1 Q0 {'d' * (1 << 20)} 3001 1 run\n"
    long_run.write_text("".join(rows))
    short_qrels = tmp / "qrels1.txt"
    short_qrels.write_text("1 0 D1 1\n1 0 D2 0\n")
    cases.append(("one 1 MB docno in 5,785 lines", short_qrels, long_run))
    for topics in (2_500, 5_000, 10_000):
        qrels, run = tmp / f"shared_q{topics}.txt", tmp / f"shared_r{topics}.txt"
        with open(qrels, "w") as fq, open(run, "w") as fr:
            for t in range(topics):
                for d in range(20):
                    fq.write(f"T{t} 0 SHARED{d} {d % 2}\n")
                    fr.write(f"T{t} Q0 SHARED{d} {d + 1} {20 - d} run\n")
        cases.append((f"{topics:,} topics sharing 20 docnos", qrels, run))
    large = HERE / "data" / "full" / "large"
    if (large / "run.txt").exists():
        cases.append(("7,000 topics x 1,000 documents", large / "qrels.txt", large / "run.txt"))
    return cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL")
                    or shutil.which("trec_eval"))
    ap.add_argument("-o", "--output", type=Path, default=HERE / "results-memory.md")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, qrels, run in _cases(Path(tmp), np.random.default_rng(15)):
            size = run.stat().st_size + qrels.stat().st_size
            ours, ours_rc = _peak_kib([sys.executable, "-m", "irbench", "eval", "-m", "map",
                                       "-m", "P.10", str(qrels), str(run)], env)
            theirs = theirs_rc = None
            if args.trec_eval:
                theirs, theirs_rc = _peak_kib([args.trec_eval, "-m", "map", "-m", "P.10",
                                               str(qrels), str(run)], env)
            rows.append((name, size, ours, ours_rc, theirs, theirs_rc))
            print(rows[-1], file=sys.stderr)
    lines = ["# Peak memory against input size", "",
             "`python bench/bench_memory.py`: maximum resident set size of one `irbench eval -m "
             "map -m P.10` process (Python and numpy included: about 40 MiB before any "
             "input) and of trec_eval on the same files.", "",
             "| input | bytes | irbench MiB | exit | trec_eval MiB | exit | irbench / trec_eval |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, size, ours, ours_rc, theirs, theirs_rc in rows:
        ratio = f"{ours / theirs:.1f}x" if theirs else ""
        lines.append(f"| {name} | {size:,} | {ours / 1024:.1f} | {ours_rc} | "
                     + (f"{theirs / 1024:.1f} | {theirs_rc} | " if theirs else "n/a | | ")
                     + f"{ratio} |")
    lines += ["", "Exit status 2: irbench refuses the 1 MB docno at its line (`FILE:LINE: docno "
              "of 1,048,576 bytes: irbench takes topic ids and docnos of at most 1,024 bytes`)."]
    if not args.trec_eval:
        lines.append("trec_eval: not found (pass --trec-eval PATH).")
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
