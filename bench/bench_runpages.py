"""Benchmark of the run pages and the appendix PDF (issue 38): a simulated campaign of TREC-8's
size (43 groups x 3 runs = 129 runs, 50 topics, depth 100, a depth-20 pool), scored once by
`irbench run`; then, each a fresh process timed by wall clock:

- `irbench report` without run pages,
- `irbench report --participants` (129 HTML run pages, and their diff pages: each run against
  the baseline and against the run ranked just above it, issue 42),
- `irbench report --appendix-pdf FILE` (the run pages printed by headless Chromium, a few at a
  time, and bound after a contents page), with its page count.

    python bench/bench_runpages.py [--keep DIR]     # writes bench/results-runpages.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
IRBENCH = [sys.executable, "-m", "irbench"]
CPU: list[float] = []  # CPU seconds of each timed process, in order


def timed(*args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    start, cpu = time.perf_counter(), os.times()
    proc = subprocess.run([*IRBENCH, *args], capture_output=True, text=True, env=env,
                          timeout=3600)
    seconds = time.perf_counter() - start
    after = os.times()
    CPU.append(after.children_user + after.children_system - cpu.children_user
               - cpu.children_system)
    if proc.returncode != 0:
        sys.exit(f"irbench {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return seconds


def diff_pages(folder: Path) -> int:
    return len(list((folder / "systems").glob("diff-*.html")))


def pdf_pages(path: Path) -> int:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", default=None, help="work in DIR and keep it")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="irbench-runpages-"))
    sim, config = work / "sim", work / "sim" / "campaign.yaml"
    if not config.exists():
        timed("simulate", str(sim), "--groups", "43", "--runs-per-group", "3", "--topics",
              "50", "--depth", "100", "--pool-depth", "20")
    scored = timed("run", "--quiet", str(config))
    rows = [("irbench run (scores, profiles, analyses)", scored, "")]
    rows.append(("irbench report, no run pages",
                 timed("report", str(config), "--out", str(work / "plain")), ""))
    rows.append(("irbench report --participants (129 HTML run pages and their diff pages)",
                 timed("report", str(config), "--out", str(work / "pages"),
                       "--participants"), f"{diff_pages(work / 'pages')} diff pages"))
    appendix = work / "appendix.pdf"
    seconds = timed("report", str(config), "--out", str(work / "pdf"), "--appendix-pdf",
                    str(appendix))
    rows.append(("irbench report --appendix-pdf FILE", seconds,
                 f"{pdf_pages(appendix)} pages, {appendix.stat().st_size / 1e6:.1f} MB"))
    lines = ["# Run pages and the appendix PDF (bench/bench_runpages.py)", "",
             f"{dt.date.today()}, {os.cpu_count()} cores; a simulated campaign of 129 runs "
             "(43 groups x 3) x 50 topics, depth 100; wall clock of one fresh process each.",
             "", "| step | seconds | output |", "|---|---:|---|"]
    lines += [f"| {what} | {s:.1f} | {note} |" for what, s, note in rows]
    lines += ["", "CPU seconds (user + system) of each step, in order: "
              + ", ".join(f"{c:.1f}" for c in CPU[-len(rows):])
              + f"; load average at the end {os.getloadavg()[0]:.2f}."]
    text = "\n".join(lines) + "\n"
    (HERE / "results-runpages.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
