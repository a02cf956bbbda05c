"""Benchmark of `irbench report`: the 129-run campaign of bench/make_data.py (50 topics x 1,000
documents), with the judgment-reduction experiment of 10 fractions x 5 seeds. Target: under
2 minutes on this machine, and an HTML page under 5 MB.

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
    text = (f"# irbench report: time and size\n\nProduced by `python bench/bench_report.py` on "
            f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores.\n"
            f"Campaign: {len(runs)} runs x 50 topics x 1,000 documents, core suite of 10 "
            "measures, judgment reduction with 10 fractions x 5 seeds x 6 measures.\n\n"
            "| what | value | target |\n|---|---|---|\n"
            f"| `irbench report`, first (computes the experiment) | {first:.1f} s | < 120 s |\n"
            f"| `irbench report` again (experiment read from the store) | {again:.1f} s | |\n"
            f"| index.html | {size / 1e6:.2f} MB | < 5 MB |\n")
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
