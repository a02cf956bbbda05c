"""Benchmark of `irbench report`: the 129-run campaign of bench/make_data.py (50 topics x 1,000
documents; target: the report under 20 s, a page under 5 MB), and a simulated campaign of
1,000 systems (target: under 2 minutes, a page under 10 MB).

The report is a function of the store: `irbench run` computes the judgment-reduction experiment
(10 fractions x 5 seeds x 6 measures, asked by report.reduction_design) and the profiles, and is
timed apart; the report is timed with the run files moved away. Peak RSS is per process.

    python bench/make_data.py && python bench/bench_report.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_store_bench import write_config  # noqa: E402

IRBENCH = [sys.executable, "-m", "irbench"]


def timed(args: list[str], env: dict) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(IRBENCH + args, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"irbench {' '.join(args)} exited {proc.returncode}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def best_of(times: int, args: list[str], env: dict) -> tuple[float, float]:
    """The fastest of ``times`` runs (seconds, and its peak RSS): what the code costs, less
    the noise of a shared machine."""
    return min(timed(args, env) for _ in range(times))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "full" / "campaign")
    ap.add_argument("--out", type=Path, default=HERE / "results-report.md")
    ap.add_argument("--large", type=int, default=1000, metavar="SYSTEMS",
                    help="also a simulated campaign of this many systems (0: skip)")
    args = ap.parse_args(argv)
    runs = sorted((args.data / "runs").iterdir())
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        copied = Path(tmp) / "runs"
        shutil.copytree(args.data / "runs", copied)
        config = write_config(Path(tmp), args.data, sorted(copied.iterdir()))
        config.write_text(config.read_text() + "report: {reduction_design: buckley-voorhees}\n")
        rows.append(("`irbench run`: scores, profiles and the reduction experiment",
                     *timed(["run", "--quiet", str(config)], env), ""))
        rows.append(("`irbench run` again (nothing to do)",
                     *timed(["run", "--quiet", str(config)], env), ""))
        shutil.move(copied, Path(tmp) / "moved")  # the report never reads a run file
        plain = ["report", str(config), "--out", f"{tmp}/report"]
        rows.append(("`irbench report` (run files moved away; best of 3)",
                     *best_of(3, plain, env), "< 20 s"))
        rows.append(("`irbench report --participants` (+ a page per run; best of 3)",
                     *best_of(3, plain + ["--participants"], env), ""))
        size = os.path.getsize(f"{tmp}/report/index.html")
        pages = sum(p.stat().st_size for p in Path(f"{tmp}/report/systems").glob("*.html"))
    added = rows[-1][1] - rows[-2][1]
    large = _large(args.large, env) if args.large else None
    text = (f"# irbench report: time and size\n\nProduced by `python bench/bench_report.py` on "
            f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores.\n"
            f"Campaign: {len(runs)} runs x 50 topics x 1,000 documents, core suite of 10 "
            "measures, judgment reduction with 10 fractions x 5 seeds x 6 measures.\n\n"
            "| what | seconds | peak RSS | target |\n|---|---:|---:|---|\n"
            + "".join(f"| {what} | {sec:.1f} s | {rss:.0f} MiB | {target} |\n"
                      for what, sec, rss, target in rows)
            + f"| run pages add | {added:.1f} s | | < 5 s |\n"
            + f"| index.html | {size / 1e6:.2f} MB | | < 5 MB |\n"
            + f"| the {len(runs)} run pages | {pages / 1e6:.2f} MB | | |\n")
    if large is not None:
        systems, run_s, report_s, rss, page, pairs, pages_s, pages_rss = large
        text += (f"\nA simulated campaign of {systems:,} systems (`irbench simulate`, 25 topics x "
                 "100 documents, its campaign.yaml as written):\n\n"
                 "| what | value | target |\n|---|---|---|\n"
                 f"| `irbench run` (scores, profiles, pool bias) | {run_s:.1f} s | |\n"
                 f"| `irbench report` | {report_s:.1f} s, {rss:.0f} MiB | < 120 s |\n"
                 f"| `irbench report --participants` | {pages_s:.1f} s, {pages_rss:.0f} MiB "
                 "| < 60 s, < 1.5 GB |\n"
                 f"| index.html | {page / 1e6:.2f} MB | < 10 MB |\n"
                 f"| significance.csv (every pair) | {pairs / 1e6:.1f} MB | |\n")
    args.out.write_text(text)
    print(text)
    return 0


def _large(systems: int, env: dict) -> tuple:
    """(systems, run seconds, report seconds, report peak RSS MiB, page bytes, CSV bytes) on a
    simulated campaign of ``systems`` runs in groups of 10."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(IRBENCH + ["simulate", tmp, "--groups", str(max(1, systems // 10)),
                                  "--runs-per-group", "10", "--topics", "25", "--depth", "100",
                                  "--collection-size", "200000"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        run_s, _ = timed(["run", "--quiet", f"{tmp}/campaign.yaml"], env)
        report_s, rss = timed(["report", f"{tmp}/campaign.yaml", "--out", f"{tmp}/report"], env)
        page, pairs = (os.path.getsize(f"{tmp}/report/index.html"),
                       os.path.getsize(f"{tmp}/report/significance.csv"))
        pages_s, pages_rss = timed(["report", f"{tmp}/campaign.yaml", "--out", f"{tmp}/report",
                                    "--participants"], env)
        return systems, run_s, report_s, rss, page, pairs, pages_s, pages_rss


if __name__ == "__main__":
    sys.exit(main())
