"""One huge run: `irbench eval` against `trec_eval` side by side on the 7,000-topic, 264 MB run of
bench/make_data.py (bench/data/full/large), core measures: wall-clock time and peak RSS of each
process (the best of --reps runs), and whether irbench prints trec_eval's bytes.

    python bench/make_data.py && python bench/bench_huge_eval.py --trec-eval PATH

trec_eval: --trec-eval, else $TREC_EVAL, else `trec_eval` on PATH (build it from
github.com/usnistgov/trec_eval with `make`); without it only irbench is timed.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ["-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "bpref"]


def timed(argv: list[str], env: dict) -> tuple[float, float, bytes]:
    """(seconds, peak RSS in MiB, stdout) of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return time.perf_counter() - started, usage.ru_maxrss / 1024, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "full" / "large")
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL")
                        or shutil.which("trec_eval"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("-o", "--output", type=Path,
                        default=ROOT / "bench" / "results-huge-eval.md")
    args = parser.parse_args()
    qrels, run = args.data / "qrels.txt", args.data / "run.txt"
    if not run.exists():
        raise SystemExit(f"{run}: missing; run python bench/make_data.py first")
    compileall.compile_dir(ROOT / "irbench", quiet=1)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {"irbench eval": [sys.executable, "-m", "irbench", "eval", "--workers",
                                 str(args.workers), *MEASURES, str(qrels), str(run)]}
    if args.trec_eval:
        commands["trec_eval"] = [args.trec_eval, *MEASURES, str(qrels), str(run)]
    best: dict[str, tuple[float, float, bytes]] = {}
    for _ in range(args.reps):  # turns interleaved, the best of each kept
        for name, argv in commands.items():
            result = timed(argv, env)
            if name not in best or result[0] < best[name][0]:
                best[name] = result
    size = run.stat().st_size
    lines = ["# One huge run: `irbench eval` and `trec_eval` side by side", "",
             f"`python bench/bench_huge_eval.py`: {run.relative_to(ROOT) if run.is_relative_to(ROOT) else run} "
             f"({size / 2**20:.0f} MiB), measures {' '.join(MEASURES[1::2])}, irbench with "
             f"--workers {args.workers}; best of {args.reps} (turns interleaved), "
             f"{os.cpu_count()} CPUs.", "",
             "| command | seconds | peak RSS | vs trec_eval |", "|---|---:|---:|---:|"]
    reference = best.get("trec_eval")
    for name, (seconds, rss, _) in best.items():
        ratio = (f"{seconds / reference[0]:.2f}x time, {rss / reference[1]:.2f}x memory"
                 if reference else "")
        lines.append(f"| {name} | {seconds:.2f} s | {rss:.0f} MiB | {ratio} |")
    if reference:
        same = best["irbench eval"][2] == reference[2]
        lines += ["", f"irbench's output is {'byte-identical to' if same else 'NOT'} "
                  f"{'' if same else 'the same as '}trec_eval's."]
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
