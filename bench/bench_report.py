"""Benchmark of `irbench report`: the 129-run campaign of bench/make_data.py (50 topics x 1,000
documents), with the judgment-reduction experiment of 10 fractions x 5 seeds (target: under
2 minutes, a page under 5 MB), and a simulated campaign of 1,000 systems (target: under
2 minutes, a page under 10 MB).

    python bench/make_data.py && python bench/bench_report.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_store_bench import write_config  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "full" / "campaign")
    ap.add_argument("--out", type=Path, default=HERE / "results-report.md")
    ap.add_argument("--large", type=int, default=1000, metavar="SYSTEMS",
                    help="also a simulated campaign of this many systems (0: skip)")
    args = ap.parse_args(argv)
    runs = sorted((args.data / "runs").iterdir())
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp), args.data, runs)
        cmd = [sys.executable, "-m", "irbench"]
        subprocess.run(cmd + ["run", "--quiet", str(config)], check=True, env=env)
        t0 = time.perf_counter()
        subprocess.run(cmd + ["report", str(config), "--out", f"{tmp}/report"], check=True,
                       env=env)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run(cmd + ["report", str(config), "--out", f"{tmp}/report"], check=True,
                       env=env)
        again = time.perf_counter() - t0
        size = os.path.getsize(f"{tmp}/report/index.html")
    large = _large(args.large, env) if args.large else None
    text = (f"# irbench report: time and size\n\nProduced by `python bench/bench_report.py` on "
            f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores.\n"
            f"Campaign: {len(runs)} runs x 50 topics x 1,000 documents, core suite of 10 "
            "measures, judgment reduction with 10 fractions x 5 seeds x 6 measures.\n\n"
            "| what | value | target |\n|---|---|---|\n"
            f"| `irbench report`, first (computes the experiment) | {first:.1f} s | < 120 s |\n"
            f"| `irbench report` again (experiment read from the store) | {again:.1f} s | |\n"
            f"| index.html | {size / 1e6:.2f} MB | < 5 MB |\n")
    if large is not None:
        systems, seconds, page, pairs = large
        text += (f"\nA simulated campaign of {systems:,} systems (`irbench simulate`, 25 topics x "
                 "100 documents, its campaign.yaml as written):\n\n"
                 "| what | value | target |\n|---|---|---|\n"
                 f"| `irbench report`, first | {seconds:.1f} s | < 120 s |\n"
                 f"| index.html | {page / 1e6:.2f} MB | < 10 MB |\n"
                 f"| significance.csv (every pair) | {pairs / 1e6:.1f} MB | |\n")
    args.out.write_text(text)
    print(text)
    return 0


def _large(systems: int, env: dict) -> tuple[int, float, int, int]:
    """(systems, seconds of the first report, page bytes, CSV bytes) on a simulated campaign
    of ``systems`` runs in groups of 10."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "irbench"]
        subprocess.run(cmd + ["simulate", tmp, "--groups", str(max(1, systems // 10)),
                              "--runs-per-group", "10", "--topics", "25", "--depth", "100",
                              "--collection-size", "200000"], check=True, env=env)
        subprocess.run(cmd + ["run", "--quiet", f"{tmp}/campaign.yaml"], check=True, env=env)
        t0 = time.perf_counter()
        subprocess.run(cmd + ["report", f"{tmp}/campaign.yaml", "--out", f"{tmp}/report"],
                       check=True, env=env)
        seconds = time.perf_counter() - t0
        return (systems, seconds, os.path.getsize(f"{tmp}/report/index.html"),
                os.path.getsize(f"{tmp}/report/significance.csv"))


if __name__ == "__main__":
    sys.exit(main())
