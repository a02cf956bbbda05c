"""Start-up of `irbench eval` as a drop-in for trec_eval: wall-clock time of one call on a
one-topic run, the median of many fresh processes, against trec_eval and the ir_measures
command line in the same run, with the interpreter alone and `import numpy` as floors.

    python bench/bench_startup.py [--calls 30] [--trec-eval PATH]   # writes results-startup.md

trec_eval: --trec-eval, else $TREC_EVAL, else `trec_eval` on PATH, else left out (Debian has no
package; build it from github.com/usnistgov/trec_eval with `make`). The checkout's modules are
byte-compiled first (as `pip install` does), since PYTHONDONTWRITEBYTECODE would otherwise
make every call compile irbench from source.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n"
RUN = "1 Q0 d1 1 2.0 r\n1 Q0 d4 2 1.5 r\n1 Q0 d3 3 1.0 r\n"


def _median_seconds(argv: list[str], calls: int, env: dict) -> float:
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)  # warm the page cache
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL")
                        or shutil.which("trec_eval"))
    parser.add_argument("-o", "--output", default=str(ROOT / "bench" / "results-startup.md"))
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "irbench", quiet=1)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = Path(tmp, "qrels"), Path(tmp, "run")
        qrels.write_text(QRELS)
        run.write_text(RUN)
        rows = [("python -c pass (the interpreter)", [sys.executable, "-c", "pass"]),
                ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"]),
                ("irbench eval", [sys.executable, "-m", "irbench", "eval", str(qrels), str(run)]),
                ("irbench eval -m P@10 -m AP", [sys.executable, "-m", "irbench", "eval", "-m",
                                                "P@10", "-m", "AP", str(qrels), str(run)])]
        if args.trec_eval:
            rows.append(("trec_eval", [args.trec_eval, str(qrels), str(run)]))
        if shutil.which("ir_measures"):
            rows.append(("ir_measures P@10 AP", [shutil.which("ir_measures"), str(qrels),
                                                 str(run), "P@10", "AP"]))
        results = [(name, _median_seconds(argv, args.calls, env)) for name, argv in rows]
    irbench = dict(results)["irbench eval"]
    lines = ["# Start-up: `irbench eval` on a one-topic run", "",
             f"Median wall-clock time of {args.calls} fresh processes each "
             f"(`python bench/bench_startup.py`; Python {sys.version.split()[0]}, "
             f"{os.cpu_count()} CPUs).", "",
             "| command | median | vs irbench eval |", "|---|---:|---:|"]
    for name, seconds in results:
        lines.append(f"| {name} | {seconds * 1000:.1f} ms | {seconds / irbench:.2f}x |")
    if not args.trec_eval:
        lines += ["", "trec_eval: not found (pass --trec-eval PATH)."]
    Path(args.output).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
