"""Benchmark of the collection key (issue 41): one config of 5 collections against 5 configs.

Data: workload (a) of bench/make_data.py (129 runs x 50 topics x 1,000 documents) split by topic
into 5 collections of 10 topics each (topics in sorted order: the first 10 are c1, ...), each
with its own qrels and its 129 runs holding only its topics. A lab config names the 5 under
``collections:`` (systems: ``glob: "{collection}/runs/*.txt"``); each collection also has its
own one-collection config over the same files. Every config scores the 10-measure core suite.

Times, as whole fresh processes (median of --reps; (3)'s two commands in turns, each first
every other repetition, and their ratio per repetition too):

1. ``irbench run LAB.yaml`` from scratch (a new store) against the sum of ``irbench run`` of the
   5 one-collection configs, each from scratch (5 x one collection's time; target <= 1.1x);
2. ``irbench run LAB.yaml`` again with nothing changed (target: under 1 s);
3. ``irbench run`` from scratch of a one-collection config over the whole of workload (a)
   against ``irbench eval -c`` of the same runs and measures (target <= 1.25x).

    python bench/make_data.py && python bench/bench_collections.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORE = ["AP", "GMAP", "Bpref", "infAP", "Rprec", "RR", "P@10", "nDCG", "nDCG@10", "R@1000"]
TREC_CORE = ["map", "gm_map", "bpref", "infAP", "Rprec", "recip_rank", "P.10", "ndcg",
             "ndcg_cut.10", "recall.1000"]
PARTS = 5
SUITE = f"suites:\n  core: [{', '.join(CORE)}]\n"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # with their waited-for workers
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict, cpu: list[float] | None = None) -> float:
    """Wall seconds of ``cmd``; its CPU seconds (user + system, its workers' included) added
    to ``cpu[0]`` when given."""
    t0, c0 = time.perf_counter(), _cpu()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          cwd=ROOT, text=True)
    seconds = time.perf_counter() - t0
    if cpu is not None:
        cpu[0] += _cpu() - c0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{proc.stderr}")
    return seconds


def split(data: Path, folder: Path) -> list[str]:
    """Workload (a)'s qrels and runs split by topic into ``PARTS`` collections c1..c5 under
    ``folder``, each with its one-collection config; the collections' names."""
    qrels = (data / "qrels.txt").read_text().splitlines(keepends=True)
    topics = sorted({line.split()[0] for line in qrels}, key=lambda t: (len(t), t))
    size = -(-len(topics) // PARTS)
    names = [f"c{i + 1}" for i in range(PARTS)]
    part_of = {t: names[i // size] for i, t in enumerate(topics)}
    for name in names:
        (folder / name / "runs").mkdir(parents=True)
    buckets: dict[str, list[str]] = {name: [] for name in names}
    for line in qrels:
        buckets[part_of[line.split(None, 1)[0]]].append(line)
    for name in names:
        (folder / name / "qrels.txt").write_text("".join(buckets[name]))
    for run in sorted((data / "runs").iterdir()):
        buckets = {name: [] for name in names}
        with open(run, encoding="utf-8") as f:
            for line in f:
                buckets[part_of[line.split(None, 1)[0]]].append(line)
        for name in names:
            (folder / name / "runs" / run.name).write_text("".join(buckets[name]))
    for name in names:
        (folder / f"{name}.yaml").write_text(
            f"name: {name}\ncollection:\n  qrels: {name}/qrels.txt\nsystems:\n"
            f"  - {{glob: \"{name}/runs/*\"}}\n{SUITE}store: {name}.duckdb\n")
    (folder / "lab.yaml").write_text(
        "name: lab\ncollections:\n"
        + "".join(f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in names)
        + "systems:\n  - {glob: \"{collection}/runs/*\"}\n" + SUITE + "store: lab.duckdb\n")
    return names


def whole_config(folder: Path, data: Path) -> Path:
    """One collection: the whole of workload (a), as bench/run_store_bench.py writes it."""
    runs = sorted((data / "runs").iterdir())
    lines = ["collection:", f"  qrels: {{official: '{data / 'qrels.txt'}'}}", "systems:"]
    lines += [f"  - {{name: '{r.name}', run: '{r}'}}" for r in runs]
    lines += ["suites:", f"  core: [{', '.join(CORE)}]", f"store: '{folder / 'whole.duckdb'}'"]
    path = folder / "whole.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def fresh(store: Path) -> None:
    for path in (store, Path(f"{store}.wal")):
        if path.exists():
            path.unlink()


def load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data" / "full" / "campaign")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "results-collections.md")
    args = ap.parse_args(argv)
    runs = sorted((args.data / "runs").iterdir()) if (args.data / "runs").is_dir() else []
    if not runs:
        sys.exit(f"no runs under {args.data / 'runs'}: run bench/make_data.py first")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules compiled once, not per run
    py = sys.executable
    irbench = [py, "-m", "irbench"]
    eval_cmd = [*irbench, "eval", "-c", *[a for m in TREC_CORE for a in ("-m", m)],
                str(args.data / "qrels.txt"), *map(str, runs)]
    keys = ("alone", "lab", "rerun", "eval", "whole")
    times: dict[str, list[float]] = {k: [] for k in keys}
    cpus: dict[str, list[float]] = {k: [] for k in keys}
    loads = [load()]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env["IRBENCH_CACHE_DIR"] = str(folder / "cache")  # run stamps of this benchmark only
        names = split(args.data, folder)
        whole = whole_config(folder, args.data)
        os.sync()  # the split copies (250 MB) on disk: no store's fsync waits for them
        run = [*irbench, "run", "--quiet"]
        for _ in range(args.reps):
            cpu = {k: [0.0] for k in keys}
            alone = 0.0
            for name in names:
                fresh(folder / f"{name}.duckdb")
                alone += timed([*run, str(folder / f"{name}.yaml")], env, cpu["alone"])
            times["alone"].append(alone)
            fresh(folder / "lab.duckdb")
            times["lab"].append(timed([*run, str(folder / "lab.yaml")], env, cpu["lab"]))
            times["rerun"].append(timed([*run, str(folder / "lab.yaml")], env, cpu["rerun"]))
            for key in (("eval", "whole") if len(times["eval"]) % 2 else ("whole", "eval")):
                fresh(folder / "whole.duckdb")  # (3) in turns: first eval, then run first
                os.sync()  # no store's fsync waits for what the commands before it wrote
                times[key].append(timed(eval_cmd if key == "eval" else [*run, str(whole)],
                                        env, cpu[key]))
            for k in keys:
                cpus[k].append(cpu[k][0])
            loads.append(load())
    m = {k: statistics.median(v) for k, v in times.items()}
    c = {k: statistics.median(v) for k, v in cpus.items()}
    text = f"""# The collection key's cost: 5 collections in one config

Produced by `python bench/bench_collections.py` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC,
{os.cpu_count()} cores, Python {platform.python_version()}; median of {args.reps} fresh processes each.
Load average (1, 5, 15 min) before and after each repetition: {' / '.join(loads)}.

Data: workload (a) of bench/make_data.py ({len(runs)} runs x 50 topics x 1,000 documents)
split by topic into {PARTS} collections of 10 topics each (c1: the first 10 topics in order, ...),
each with its qrels and its {len(runs)} runs cut to its topics; the lab config names the {PARTS}
under `collections:`, each collection also has its own one-collection config over the same
files. All configs score the 10-measure core suite ({', '.join(CORE)}).

| what | wall s | ratio | CPU s | CPU ratio | target |
|---|---|---|---|---|---|
| (1) `irbench run` of the {PARTS} one-collection configs, each from scratch (sum) | {m['alone']:.2f} | 1.00 | {c['alone']:.2f} | 1.00 | |
| (1) `irbench run LAB.yaml` ({PARTS} collections) from scratch | {m['lab']:.2f} | {m['lab'] / m['alone']:.2f} x the sum | {c['lab']:.2f} | {c['lab'] / c['alone']:.2f} | <= 1.1 |
| (2) `irbench run LAB.yaml` again, nothing changed | {m['rerun']:.3f} | | {c['rerun']:.3f} | | < 1 s |
| (3) `irbench eval -c` of the {len(runs)} whole runs (evaluation only) | {m['eval']:.2f} | 1.00 | {c['eval']:.2f} | 1.00 | |
| (3) `irbench run` of one collection (the whole runs) from scratch | {m['whole']:.2f} | {m['whole'] / m['eval']:.2f} x eval | {c['whole']:.2f} | {c['whole'] / c['eval']:.2f} | <= 1.25 |

CPU seconds: user + system of the command and its worker processes (less sensitive than wall
time to other processes on the machine). Each ratio is of the medians.
(3) paired (run / eval of the same repetition, the two run one after the other): median wall
{statistics.median(w / e for w, e in zip(times['whole'], times['eval'])):.2f} x, median CPU
{statistics.median(w / e for w, e in zip(cpus['whole'], cpus['eval'])):.2f} x.
Wall times: {', '.join(f"{k} {[round(x, 3) for x in v]}" for k, v in times.items())}.
CPU times: {', '.join(f"{k} {[round(x, 2) for x in v]}" for k, v in cpus.items())}.
"""
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
