"""Benchmark of irbench beyond one process: a simulated campaign of many runs scored by local
worker processes and by a Dask LocalCluster of the same size (the engine's overhead), and one
run of a million topics scored in topic shards (against the same run scored whole where it
fits). Runs per second and peak RSS per process; writes bench/results-cluster.md.

    pip install -e '.[cluster]' && python bench/bench_cluster.py --runs 10000 --topics 1000000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from irbench.runner.shards import SHARD_PIECE  # noqa: E402

IRBENCH = [sys.executable, "-m", "irbench"]


CPU: dict[str, float] = {}  # irbench process CPU seconds (user + system) by command line


def timed(args: list[str], env: dict) -> tuple[float, float, str]:
    """(seconds, peak RSS of the irbench process in MiB, its stderr's last line); its CPU
    seconds go to CPU."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(IRBENCH + args, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"irbench {' '.join(args)} failed:\n{err[-2000:]}")
    CPU[" ".join(args)] = usage.ru_utime + usage.ru_stime
    return seconds, usage.ru_maxrss / 1024, err.strip().splitlines()[-1]


def campaign(runs: int, workers: int, env: dict) -> list[tuple]:
    """Rows (engine, seconds, runs/s, client MiB, per-worker MiB) for a simulated campaign."""
    import distributed

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(IRBENCH + ["simulate", tmp, "--groups", str(runs // 10),
                                  "--runs-per-group", "10", "--topics", "50", "--depth", "100",
                                  "--collection-size", "500000"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        import yaml

        config = Path(tmp) / "campaign.yaml"
        data = yaml.safe_load(config.read_text())
        data.pop("report", None)  # the engines are timed on scoring, not the pool-bias analysis
        config.write_text(yaml.safe_dump(data))
        store = Path(tmp) / "campaign.duckdb"
        for engine in ("local", "cluster"):
            if store.exists():
                store.unlink()
            if engine == "local":
                seconds, rss, line = timed(["run", "--quiet", "--workers", str(workers),
                                            str(config)], env)
                rows.append((f"local: --workers {workers}", seconds, runs / seconds, rss,
                             "", line))
                continue
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                          processes=True, dashboard_address=":0") as cluster, \
                    distributed.Client(cluster) as client:
                args = ["run", "--quiet", "--cluster", cluster.scheduler_address, str(config)]
                seconds, rss, line = timed(args, env)
                client_cpu = CPU[" ".join(args)]
                peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            worker = max(peaks.values()) / 1024
            rows.append((f"Dask LocalCluster: {workers} worker processes", seconds,
                         runs / seconds, rss, f"{worker:.0f}", line))
            rows.append(("the client alone (receives, writes the store): CPU seconds",
                         client_cpu, runs / client_cpu, rss, "", "the single writer's ceiling"))
    return rows


def write_big_run(folder: Path, topics: int, depth: int, seed: int = 7) -> tuple[Path, Path]:
    """A run of ``topics`` x ``depth`` lines and qrels with 5 judgments per topic (written in
    blocks of 20,000 topics)."""
    rng = np.random.default_rng(seed)
    run, qrels = folder / "huge.txt", folder / "qrels.txt"
    ranks = np.arange(1, depth + 1)
    with open(run, "w") as out, open(qrels, "w") as judged:
        for start in range(0, topics, 20_000):
            ids = np.arange(start, min(topics, start + 20_000))
            docs = rng.integers(0, 3, size=(len(ids), 1)) + 3 * ranks  # distinct per topic
            lines = [f"q{t} Q0 d{d} {r} {depth - r}.5 big\n"
                     for t, row in zip(ids.tolist(), docs.tolist())
                     for r, d in zip(ranks.tolist(), row)]
            out.write("".join(lines))
            rel = rng.integers(0, 3 * depth, size=(len(ids), 5))
            judged.write("".join(f"q{t} 0 d{d} {1 + (j % 2)}\n"
                                 for t, row in zip(ids.tolist(), rel.tolist())
                                 for j, d in enumerate(dict.fromkeys(row))))
    return run, qrels


def huge(topics: int, depth: int, env: dict, whole_up_to: int) -> list[tuple]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        # written by another process: a child's ru_maxrss starts at its parent's size when
        # forked, so this process stays small (writing 100,000 topics here took 440 MiB)
        subprocess.run([sys.executable, __file__, "--write", str(folder), str(topics),
                        str(depth)], check=True, env=env)
        run, qrels = folder / "huge.txt", folder / "qrels.txt"
        made = time.perf_counter() - t0
        config = folder / "huge.yaml"
        config.write_text(f"collection: {{qrels: {{official: {qrels}}}}}\n"
                          f"systems: {{huge: {run}}}\n"
                          "suites: {core: [AP, nDCG@10, P@10, RR, Bpref, R@100]}\n")
        size = run.stat().st_size
        shard = min(256 << 20, size // 4)  # at least 4 shards
        pieces = -(-size // min(shard, SHARD_PIECE))  # shards of at most SHARD_PIECE bytes
        variants = [(f"sharded ({pieces} shards)",
                     {"IRBENCH_SHARD_BYTES": str(shard)})]
        if topics <= whole_up_to:
            variants.append(("whole (IRBENCH_SHARD_BYTES=0)", {"IRBENCH_SHARD_BYTES": "0"}))
        for what, extra in variants:
            (folder / "huge.duckdb").unlink(missing_ok=True)
            seconds, rss, line = timed(["run", "--quiet", "--workers", "1", str(config)],
                                       dict(env, **extra))
            rows.append((f"{topics:,} topics x {depth}: {what}", seconds, rss, size, made, line))
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--write"]:  # the child writing a huge run (see huge)
        write_big_run(Path(argv[1]), int(argv[2]), int(argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--topics", type=int, default=1_000_000, help="topics of the huge run")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--whole-up-to", type=int, default=200_000,
                    help="also score the huge run whole when it has at most this many topics")
    ap.add_argument("--small-topics", type=int, default=100_000,
                    help="also a run of this many topics, scored both ways (0: skip)")
    ap.add_argument("--out", type=Path, default=HERE / "results-cluster.md")
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    text = (f"# irbench beyond one process\n\nProduced by `python bench/bench_cluster.py --runs "
            f"{args.runs} --topics {args.topics}` on {now} UTC, {os.cpu_count()} cores, one "
            "machine.\n\n")
    if args.runs:
        rows = campaign(args.runs, args.workers, env)
        text += (f"## {args.runs:,} simulated runs (50 topics x 100 documents, 12 measures)\n\n"
                 "| engine | seconds | runs/s | client peak RSS | worker peak RSS | summary |\n"
                 "|---|---:|---:|---:|---:|---|\n"
                 + "".join(f"| {e} | {s:.1f} | {r:.0f} | {c:.0f} MiB | "
                           f"{w + ' MiB' if w else '(not measured)'} | {line} |\n"
                           for e, s, r, c, w, line in rows) + "\n")
    rows = []
    if args.small_topics:
        rows += huge(args.small_topics, args.depth, env, args.whole_up_to)
    if args.topics:
        rows += huge(args.topics, args.depth, env, args.whole_up_to)
    if rows:
        text += ("## One huge run\n\n| run | seconds | peak RSS | file | written in |\n"
                 "|---|---:|---:|---:|---:|\n"
                 + "".join(f"| {w} | {s:.1f} | {r:.0f} MiB | {size / 2**20:,.0f} MiB | "
                           f"{made:.0f} s |\n" for w, s, r, size, made, _ in rows))
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
