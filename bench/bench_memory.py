"""Peak memory against input size: `irbench eval` against trec_eval on the same files, each a
fresh process measured by /usr/bin/time (maximum resident set size).

    python bench/bench_memory.py --trec-eval PATH    # writes bench/results-memory.md

Cases: runs of growing size (1,000 to 1,000,000 lines, 50 topics); one 1 MB and one 64 MB
docno in a 5,785-line run (irbench refuses them at their line; the 1 MB one once needed
5.65 GiB); a valid 100,000-line run with one docno at the 1,024-byte limit; many topics sharing
20 docnos (2,500 / 5,000 / 10,000 topics; a quadratic hash once); and the 7,000-topic run of
make_data.py when present. trec_eval: --trec-eval, $TREC_EVAL or PATH (build it from
github.com/usnistgov/trec_eval with make); without it that column is empty. pytrec_eval
is measured when importable (--no-pytrec-eval to skip).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PYTREC_EVAL = f"""import sys
import pytrec_eval
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from workers import read_qrels_dict, read_run_dict
evaluator = pytrec_eval.RelevanceEvaluator(read_qrels_dict(sys.argv[1]), {{"map", "P_10"}})
evaluator.evaluate(read_run_dict(sys.argv[2]))
"""
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


def _cases(tmp: Path, rng, large: Path) -> list[tuple[str, Path, Path]]:
    cases = []
    for lines in (1_000, 10_000, 100_000, 1_000_000):
        run, qrels = tmp / f"run{lines}.txt", tmp / "qrels50.txt"
        if not qrels.exists():
            _write_qrels(qrels, 50, 200, rng)
        _write_run(run, 50, lines // 50, rng)
        cases.append((f"run of {lines:,} lines, 50 topics", qrels, run))
    short_qrels = tmp / "qrels1.txt"
    short_qrels.write_text("1 0 D1 1\n1 0 D2 0\n")
    for size, label in ((1 << 20, "1 MB"), (64 << 20, "64 MB")):
        long_run = tmp / f"long{size}.txt"
        rows = [f"1 Q0 D{i} {i + 1} {10000 - i} run\n" for i in range(5785)]
        rows[3000] = f"1 Q0 {'d' * size} 3001 1 run\n"
        long_run.write_text("".join(rows))
        cases.append((f"one {label} docno in 5,785 lines (refused)", short_qrels, long_run))
    widest = tmp / "widest.txt"  # valid: one docno at the limit widens the docno column
    rows = [f"1 Q0 D{i} {i + 1} {200_000 - i} run\n" for i in range(100_000)]
    rows[50_000] = f"1 Q0 {'d' * 1024} 50001 1 run\n"
    widest.write_text("".join(rows))
    cases.append(("one 1,024-byte docno in 100,000 lines (valid)", short_qrels, widest))
    for topics in (2_500, 5_000, 10_000):
        qrels, run = tmp / f"shared_q{topics}.txt", tmp / f"shared_r{topics}.txt"
        with open(qrels, "w") as fq, open(run, "w") as fr:
            for t in range(topics):
                for d in range(20):
                    fq.write(f"T{t} 0 SHARED{d} {d % 2}\n")
                    fr.write(f"T{t} Q0 SHARED{d} {d + 1} {20 - d} run\n")
        cases.append((f"{topics:,} topics sharing 20 docnos", qrels, run))
    if (large / "run.txt").exists():
        cases.append(("7,000 topics x 1,000 documents", large / "qrels.txt", large / "run.txt"))
    return cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL")
                    or shutil.which("trec_eval"))
    ap.add_argument("--no-pytrec-eval", action="store_true",
                    help="leave pytrec_eval out (it is measured when importable)")
    ap.add_argument("--large", type=Path, default=HERE / "data" / "full" / "large",
                    help="folder of make_data.py's 7,000-topic run (run.txt, qrels.txt)")
    ap.add_argument("-o", "--output", type=Path, default=HERE / "results-memory.md")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    pytrec = not args.no_pytrec_eval and importlib.util.find_spec("pytrec_eval") is not None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, qrels, run in _cases(Path(tmp), np.random.default_rng(15), args.large):
            size = run.stat().st_size + qrels.stat().st_size
            ours, ours_rc = _peak_kib([sys.executable, "-m", "irbench", "eval", "-m", "map",
                                       "-m", "P.10", str(qrels), str(run)], env)
            theirs = theirs_rc = None
            if args.trec_eval:
                theirs, theirs_rc = _peak_kib([args.trec_eval, "-m", "map", "-m", "P.10",
                                               str(qrels), str(run)], env)
            peer = peer_rc = None
            if pytrec:
                peer, peer_rc = _peak_kib([sys.executable, "-c", PYTREC_EVAL, str(qrels),
                                           str(run)], env)
            rows.append((name, size, ours, ours_rc, theirs, theirs_rc, peer, peer_rc))
            print(rows[-1], file=sys.stderr)
    lines = ["# Peak memory against input size", "",
             "`python bench/bench_memory.py`: maximum resident set size of one `irbench eval -m "
             "map -m P.10` process (Python and numpy included: about 40 MiB before any "
             "input), of trec_eval and of pytrec_eval (the files read into dicts by the usual "
             "Python loop, as bench/workers.py does; about 20 MiB before any input) on the "
             "same files.", "",
             "| input | bytes | irbench MiB | exit | trec_eval MiB | exit | irbench / trec_eval "
             "| pytrec_eval MiB | irbench / pytrec_eval |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, size, ours, ours_rc, theirs, theirs_rc, peer, peer_rc in rows:
        ratio = f"{ours / theirs:.1f}x" if theirs else ""
        lines.append(f"| {name} | {size:,} | {ours / 1024:.1f} | {ours_rc} | "
                     + (f"{theirs / 1024:.1f} | {theirs_rc} | " if theirs else "n/a | | ")
                     + f"{ratio} | "
                     + (f"{peer / 1024:.1f}{'' if peer_rc == 0 else f' (exit {peer_rc})'} | "
                        f"{ours / peer:.1f}x |" if peer else "n/a | |"))
    lines += ["", "Exit status 2: irbench refuses the 1 MB and 64 MB docnos at their line "
              "(`FILE:LINE: docno of 1,048,576 bytes: irbench takes topic ids and docnos of at "
              "most 1,024 bytes`); trec_eval and pytrec_eval read them. A docno at the limit "
              "is read, and every docno of the run then takes 1,024 bytes in its column "
              "(numpy byte columns are as wide as their widest value)."]
    if not args.trec_eval:
        lines.append("trec_eval: not found (pass --trec-eval PATH).")
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
