"""Benchmark of the runner and its store: `irbench run` against `irbench eval` on one campaign.

Times, as whole fresh processes (median of --reps):

1. `irbench eval -c` of every run of the campaign with the 10-measure core set (output to
   /dev/null): the evaluation alone;
2. `irbench run CONFIG` from scratch (a new store): the same evaluation plus hashing, the
   store's transactions and the leaderboard (target: at most 25% over 1);
3. `irbench run CONFIG` again with nothing changed (target: under 5% of 2): answered from the
   run stamp (irbench/runner/stamp.py) without importing numpy or DuckDB;
4. the same without the stamp (as after another command wrote the store): the store is opened
   and the sha256 cache (path, size, mtime) decides, nothing is read;
5. the same with ``--rehash``: every input hashed again (what a rerun costs after touching
   every file);

and the store's size on disk. Data: workload (a) of bench/make_data.py (129 runs x 50 topics x
1,000 documents), or any folder with qrels.txt and runs/ (--data).

    python bench/make_data.py && python bench/run_store_bench.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORE = ["AP", "GMAP", "Bpref", "infAP", "Rprec", "RR", "P@10", "nDCG", "nDCG@10", "R@1000"]


def timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          cwd=ROOT, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{proc.stderr}")
    return seconds


def write_config(folder: Path, data: Path, runs: list[Path]) -> Path:
    lines = ["collection:", f"  qrels: {{official: '{data / 'qrels.txt'}'}}", "systems:"]
    lines += [f"  - {{name: '{r.name}', run: '{r}'}}" for r in runs]
    lines += ["suites:", f"  core: [{', '.join(CORE)}]", f"store: '{folder / 'bench.duckdb'}'"]
    path = folder / "bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "full" / "campaign")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results-store.md")
    args = ap.parse_args(argv)
    runs = sorted((args.data / "runs").iterdir())
    if not runs:
        sys.exit(f"no runs under {args.data / 'runs'}: run bench/make_data.py first")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    py = sys.executable
    trec_core = ["map", "gm_map", "bpref", "infAP", "Rprec", "recip_rank", "P.10", "ndcg",
                 "ndcg_cut.10", "recall.1000"]
    eval_cmd = [py, "-m", "irbench", "eval", "-c", *[a for m in trec_core for a in ("-m", m)],
                str(args.data / "qrels.txt"), *map(str, runs)]
    evals, firsts, reruns, unstamped, rehashes, sizes = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env["IRBENCH_CACHE_DIR"] = str(folder / "cache")  # run stamps of this benchmark only
        config = write_config(folder, args.data, runs)
        run_cmd = [py, "-m", "irbench", "run", "--quiet", str(config)]
        for _ in range(args.reps):
            evals.append(timed(eval_cmd, env))
            store = folder / "bench.duckdb"
            if store.exists():
                store.unlink()
            firsts.append(timed(run_cmd, env))
            sizes.append(store.stat().st_size)
            reruns.append(timed(run_cmd, env))
            shutil.rmtree(folder / "cache")
            unstamped.append(timed(run_cmd, env))
            rehashes.append(timed([*run_cmd, "--rehash"], env))
    total_mb = sum(r.stat().st_size for r in runs) / 1e6
    e, f, r, u, h = (statistics.median(x)
                     for x in (evals, firsts, reruns, unstamped, rehashes))
    text = f"""# irbench run: the store's cost

Produced by `python bench/run_store_bench.py` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC,
{os.cpu_count()} cores, Python {platform.python_version()}; median of {args.reps} fresh processes each.
Data: {len(runs)} runs ({total_mb:.0f} MB) against one qrels, the 10-measure core suite
({', '.join(CORE)}).

| what | seconds | ratio | target |
|---|---|---|---|
| `irbench eval -c` of all runs (evaluation only) | {e:.2f} | 1.00 | |
| `irbench run` from scratch (new store) | {f:.2f} | {f / e:.2f} x eval | <= 1.25 |
| `irbench run` again, nothing changed | {r:.3f} | {r / f:.3f} x first run | < 0.05 |
| the same without a run stamp (store opened, hash cache) | {u:.2f} | {u / f:.3f} x first run | |
| `irbench run --rehash` again, nothing changed (every input hashed) | {h:.2f} | {h / f:.3f} x first run | |

Store size on disk: {statistics.median(sizes) / 1e6:.1f} MB for {len(runs)} systems x 50 topics x
{len(CORE)} measures.

The unchanged rerun is answered from the run stamp that the first run left (irbench/runner/stamp.py):
the config's sha256 and the size, mtime, ctime and inode of all {len(runs) + 1} inputs and of the
store are compared, with the standard library only. Without a stamp (or when a fact differs),
`irbench run` opens the store and takes each file's sha256 from its cache when size and mtime
are unchanged; `--rehash` hashes every input again.
"""
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
