"""Benchmark: time from files on disk to all values, irbench against the other evaluators.

Every measurement is one or more fresh processes (so interpreter start, imports and file
reading count), timed by whole-process wall-clock from start to exit; the peak RSS of each
process comes from ``os.wait4``. The table reports the median over ``--reps`` repetitions.

Workloads (data from ``python bench/make_data.py``):

(a) campaign: 129 runs x 50 topics x 1,000 documents against one qrels (~1,700 judgments per
    topic), measures ``all_trec`` and a core set;
(b) large: one run of 7,000 topics x 1,000 documents, ~20 judgments per topic.

Tools: irbench's CLI (``python -m irbench eval``, output to /dev/null), also split over two
processes for (a); pytrec_eval, ir_measures and ranx through bench/workers.py; trec_eval (one
process per run) when it is on PATH.

    python bench/run_bench.py             # full benchmark, writes bench/results.md (~13 min)
    python bench/run_bench.py --quick     # small data, writes bench/data/quick/results.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import pstats
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from workers import CORE_IR_MEASURES, CORE_PYTREC, CORE_RANX, CORE_TREC  # noqa: E402

PY = sys.executable
WORKERS = str(HERE / "workers.py")
CORE_ARGS = [a for m in CORE_TREC for a in ("-m", m)]
SET_ARGS = {"all_trec": ["-m", "all_trec"], "core": CORE_ARGS}
WORKLOAD_NAMES = {"a": "(a) campaign", "b": "(b) 7,000 topics"}


# --------------------------------------------------------------------------- running processes

@dataclass
class Proc:
    seconds: float
    peak_kb: int
    returncode: int
    stdout: str
    stderr: str


def run_process(cmd: list[str], env: dict, stdout_devnull: bool) -> Proc:
    """Run ``cmd`` to completion; wall-clock seconds and peak RSS (KiB) of that process."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryFile("w+") as out:
        sink = subprocess.DEVNULL if stdout_devnull else out
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=sink, stderr=err, stdin=subprocess.DEVNULL,
                                env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Proc(seconds, usage.ru_maxrss, proc.returncode, out.read(), err.read())


@dataclass
class Case:
    """One row (or two for ranx): process groups run in parallel, commands in a group in turn."""

    tool: str
    workload: str
    measure_set: str
    groups: list[list[list[str]]]
    note: str = ""
    env: dict = field(default_factory=dict)
    fresh_numba_cache: bool = False
    inproc_label: str | None = None     # ranx: also report the in-process (warm) time
    stdout_devnull: bool = True
    times: list[float] = field(default_factory=list)
    inproc: list[float] = field(default_factory=list)
    peaks_kb: list[int] = field(default_factory=list)
    error: str | None = None
    single: bool = False                # too slow to repeat

    def run_once(self, base_env: dict) -> float:
        env = dict(base_env, **self.env)
        tmp = None
        if self.fresh_numba_cache:
            tmp = tempfile.mkdtemp(prefix="bench-numba-")
            env["NUMBA_CACHE_DIR"] = tmp
        results: list[list[Proc]] = [[] for _ in self.groups]

        def work(i: int) -> None:
            for cmd in self.groups[i]:
                p = run_process(cmd, env, self.stdout_devnull)
                results[i].append(p)
                if p.returncode != 0:
                    return

        t0 = time.perf_counter()
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(self.groups))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        for group in results:
            for p in group:
                if p.returncode != 0:
                    self.error = f"exit {p.returncode}: {p.stderr.strip()[-2000:]}"
                    return wall
        # parallel groups add up; commands run one after another count by their maximum
        self.peaks_kb.append(sum(max(p.peak_kb for p in group) for group in results))
        self.times.append(wall)
        if self.inproc_label:
            line = [ln for ln in results[0][-1].stdout.splitlines() if "inproc_seconds" in ln]
            if line:
                self.inproc.append(json.loads(line[-1])["inproc_seconds"])
        return wall


# --------------------------------------------------------------------------- the cases

def irbench_cmd(measure_set: str, qrels: Path, runs: list[Path]) -> list[str]:
    return [PY, "-m", "irbench", "eval", *SET_ARGS[measure_set], str(qrels), *map(str, runs)]


def worker_cmd(tool: str, measure_set: str, qrels: Path, runs: list[Path], *extra) -> list[str]:
    return [PY, WORKERS, tool, measure_set, str(qrels), *map(str, runs), *extra]


def docno_width(path: Path, field_index: int, fields: int) -> int:
    """Length of the longest docno in a qrels (field 2 of 4) or run (field 2 of 6) file."""
    width = 0
    rest = b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            piece, rest = chunk[:cut], chunk[cut:]
            width = max(width, max(map(len, piece.split()[field_index::fields]), default=0))
    if rest.strip():
        width = max(width, max(map(len, rest.split()[field_index::fields]), default=0))
    return width


def ranx_widths(qrels: Path, runs: list[Path]) -> str:
    widths = {docno_width(r, 2, 6) for r in runs}
    return ",".join(map(str, [docno_width(qrels, 2, 4), *sorted(widths)]))


def build_cases(data: Path, workloads: str, tools: set[str]) -> list[Case]:
    cases: list[Case] = []
    trec_eval = shutil.which("trec_eval")
    specs = {
        "a": (data / "campaign" / "qrels.txt", sorted((data / "campaign" / "runs").iterdir())),
        "b": (data / "large" / "qrels.txt", [data / "large" / "run.txt"]),
    }
    for wl in workloads:
        qrels, runs = specs[wl]
        name = WORKLOAD_NAMES[wl]
        for mset in ("all_trec", "core"):
            if "irbench" in tools:
                cases.append(Case("irbench", name, mset, [[irbench_cmd(mset, qrels, runs)]]))
                if len(runs) > 1:
                    half = (len(runs) + 1) // 2
                    cases.append(Case(
                        "irbench, 2 processes", name, mset,
                        [[irbench_cmd(mset, qrels, runs[:half])],
                         [irbench_cmd(mset, qrels, runs[half:])]],
                        note="runs split in two halves, two processes in parallel; peak = sum",
                    ))
            if "pytrec_eval" in tools:
                cases.append(Case("pytrec_eval", name, mset,
                                  [[worker_cmd("pytrec_eval", mset, qrels, runs)]],
                                  stdout_devnull=False,
                                  note="all_trec = pytrec_eval.supported_measures"
                                  if mset == "all_trec" else ""))
            if "trec_eval" in tools and trec_eval:
                cases.append(Case(
                    "trec_eval", name, mset,
                    [[[trec_eval, *SET_ARGS[mset], str(qrels), str(r)] for r in runs]],
                    note="one process per run",
                ))
            if mset != "core":
                continue
            if "ir_measures" in tools:
                cases.append(Case("ir_measures", name, mset,
                                  [[worker_cmd("ir_measures", mset, qrels, runs)]],
                                  stdout_devnull=False, note="no GMAP"))
            if "ranx" in tools:
                cases.append(Case(
                    "ranx (cold: whole process, numba compiles)", name, mset,
                    [[worker_cmd("ranx", mset, qrels, runs, "--warm", "--warm-widths",
                                 ranx_widths(qrels, runs))]],
                    fresh_numba_cache=True, stdout_devnull=False,
                    inproc_label="ranx (warm: in-process, after warm-up)",
                    note="no GMAP, no infAP",
                ))
    return cases


# --------------------------------------------------------------------------- sanity checks

def sanity(data: Path) -> tuple[list[str], list[str]]:
    """irbench and pytrec_eval agree on MAP for the campaign's first run (to 1e-6), and more."""
    import numpy as np
    import pytrec_eval
    from workers import read_qrels_dict, read_run_dict

    import irbench
    from irbench.measures import parse_trec_specs

    qrels_path = data / "campaign" / "qrels.txt"
    run_path = sorted((data / "campaign" / "runs").iterdir())[0]
    lines = [f"Campaign run `{run_path.name}` (untimed):", ""]
    failures = []

    prepared = irbench.PreparedQrels(irbench.read_qrels(qrels_path))
    run = irbench.read_run(run_path)
    labelled = parse_trec_specs(["all_trec"])
    ev = irbench.evaluate(prepared, run, [m for _, m in labelled])
    pt_qrels = read_qrels_dict(str(qrels_path))
    pt_run = read_run_dict(str(run_path))
    pt = pytrec_eval.RelevanceEvaluator(pt_qrels, set(pytrec_eval.supported_measures)).evaluate(pt_run)
    topics = list(ev.topics)
    label_of = dict((m, lab) for lab, m in labelled)

    ap = next(m for lab, m in labelled if lab == "map")
    ours = float(ev.summary(ap))
    theirs = pytrec_eval.compute_aggregated_measure("map", [pt[t]["map"] for t in pt])
    per_topic = float(np.max(np.abs(np.asarray(ev[ap], dtype=float) -
                                    np.array([pt[t]["map"] for t in topics]))))
    ok = abs(ours - theirs) <= 1e-6 and per_topic <= 1e-6
    lines.append(f"- MAP: irbench {ours:.10f}, pytrec_eval {theirs:.10f}, |diff| "
                 f"{abs(ours - theirs):.1e}; per topic max |diff| {per_topic:.1e} -> "
                 f"{'OK' if ok else 'FAILED'} (tolerance 1e-6)")
    if not ok:
        failures.append("MAP differs from pytrec_eval by more than 1e-6")

    # every all_trec measure that pytrec_eval also has: mean values
    compared, worst, bad, expected_diff = 0, (0.0, ""), [], []
    names = set(next(iter(pt.values())).keys())
    for m, lab in label_of.items():
        if lab not in names:
            continue
        mine = ev.summary(m)
        if not isinstance(mine, (int, float, np.integer, np.floating)):
            continue
        other = pytrec_eval.compute_aggregated_measure(lab, [pt[t][lab] for t in pt])
        diff = abs(float(mine) - float(other))
        compared += 1
        if lab.startswith("iprec_at_recall") or lab == "11pt_avg":
            expected_diff.append(f"{lab} {diff:.1e}")
            continue
        if diff > worst[0]:
            worst = (diff, lab)
        if diff > 1e-6:
            bad.append(f"{lab} ({float(mine):.6f} vs {float(other):.6f})")
    lines.append(f"- all_trec: {compared} mean values shared with pytrec_eval. Apart from "
                 f"iprec_at_recall_* and 11pt_avg, largest |diff| {worst[0]:.1e}"
                 f"{f' ({worst[1]})' if worst[1] else ''}"
                 + (f"; over 1e-6: {', '.join(bad)}" if bad else ", all within 1e-6") + ".")
    lines.append("- iprec_at_recall_* and 11pt_avg differ as expected (trec_eval 10.0 takes the "
                 "cutoff rank as lround(x*R); pytrec_eval bundles 9.x code, (long)(x*R + 0.9); "
                 "see tests/data/trec_eval_golden/README.md): |diff| "
                 + ", ".join(expected_diff))

    # the CLI that is timed prints the same MAP
    out = subprocess.run([PY, "-m", "irbench", "eval", "-m", "map", str(qrels_path),
                          str(run_path)], capture_output=True, text=True, cwd=ROOT,
                         env=base_env())
    cli = [ln.split() for ln in out.stdout.splitlines() if ln.split()[:2] == ["map", "all"]]
    cli_ok = out.returncode == 0 and cli and abs(float(cli[0][2]) - theirs) <= 5e-5 + 1e-12
    lines.append(f"- `irbench eval -m map` prints {cli[0][2] if cli else '?'} -> "
                 f"{'OK' if cli_ok else 'FAILED'}")
    if not cli_ok:
        failures.append(f"irbench CLI: exit {out.returncode}, {out.stderr.strip()[-500:]}")

    # the other libraries' MAP, for information (ranx breaks score ties its own way)
    try:
        import ir_measures
        val = ir_measures.calc_aggregate([ir_measures.AP], ir_measures.read_trec_qrels(
            str(qrels_path)), ir_measures.read_trec_run(str(run_path)))[ir_measures.AP]
        lines.append(f"- ir_measures AP {val:.10f} (|diff| {abs(val - ours):.1e})")
    except Exception as exc:  # informational only
        lines.append(f"- ir_measures: {type(exc).__name__}: {exc}")
    lines.append("")
    return lines, failures


def sanity_in_child(data: Path, env: dict) -> tuple[list[str], list[str]]:
    p = subprocess.run([PY, __file__, "--sanity-json", "--data", str(data)], capture_output=True,
                       text=True, cwd=ROOT, env=env)
    try:
        result = json.loads(p.stdout.strip().splitlines()[-1])
        return result["lines"], result["failures"]
    except (IndexError, ValueError, KeyError):
        err = p.stderr.strip()[-3000:]
        return [f"sanity check crashed (exit {p.returncode}):", "", "```", err, "```", ""], \
            [f"sanity check crashed: {err[-300:]}"]


# --------------------------------------------------------------------------- profile

def profile(data: Path, out_dir: Path, env: dict) -> list[Path]:
    written = []
    jobs = {
        "a-core": (data / "campaign" / "qrels.txt",
                   sorted((data / "campaign" / "runs").iterdir())),
        "b-core": (data / "large" / "qrels.txt", [data / "large" / "run.txt"]),
    }
    for tag, (qrels, runs) in jobs.items():
        prof = out_dir / f"profile-{tag}.prof"
        cmd = [PY, "-m", "cProfile", "-o", str(prof), "-m", "irbench", "eval", *CORE_ARGS,
               str(qrels), *map(str, runs)]
        p = run_process(cmd, env, stdout_devnull=True)
        text = out_dir / f"profile-{tag}.txt"
        with open(text, "w") as fh:
            fh.write(f"# irbench eval, core set, workload {tag[0]}: {p.seconds:.1f} s under "
                     f"cProfile, exit {p.returncode}\n")
            stats = pstats.Stats(str(prof), stream=fh).strip_dirs()
            fh.write("\n## top 30 by cumulative time\n")
            stats.sort_stats("cumulative").print_stats(30)
            fh.write("\n## top 25 by own time\n")
            stats.sort_stats("tottime").print_stats(25)
        written.append(text)
        print(f"profile {tag}: {p.seconds:.1f} s -> {text.relative_to(ROOT)}", flush=True)
    return written


# --------------------------------------------------------------------------- report

def base_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_lines() -> list[str]:
    cpu = "?"
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(next(ln for ln in open("/proc/meminfo") if ln.startswith("MemTotal")).split()[1])
        mem = f"{kb / 1024 ** 2:.0f} GiB"
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=ROOT).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "irbench"], capture_output=True,
                               text=True, cwd=ROOT).stdout.strip()
        commit += " + uncommitted changes in irbench/" if dirty else ""
    except OSError:
        commit = "?"
    match = re.search(r'__version__ = "([^"]+)"', (ROOT / "irbench" / "__init__.py").read_text())
    irbench_version = match.group(1) if match else "?"
    return [
        f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {os.cpu_count()} cores (nproc), {cpu}, {mem} RAM, {platform.platform()}",
        f"- Python {platform.python_version()}; irbench {irbench_version} (git {commit}); "
        f"numpy {version('numpy')}; pytrec-eval-terrier {version('pytrec-eval-terrier')}; "
        f"ir_measures {version('ir_measures')}; ranx {version('ranx')} "
        f"(numba {version('numba')}); trec_eval: "
        + (shutil.which("trec_eval") or "not on PATH, skipped (Debian has no trec-eval package)"),
    ]


def rows(cases: list[Case]) -> list[dict]:
    out = []
    base = {(c.workload, c.measure_set): statistics.median(c.times)
            for c in cases if c.tool == "irbench" and c.times}
    for c in cases:
        entries = [(c.tool, c.times)]
        if c.inproc_label:
            entries.append((c.inproc_label, c.inproc))
        for label, times in entries:
            row = {"tool": label, "workload": c.workload, "set": c.measure_set,
                   "note": c.note, "error": c.error}
            if times:
                med = statistics.median(times)
                ref = base.get((c.workload, c.measure_set))
                row.update(seconds=med, lo=min(times), hi=max(times), reps=len(times),
                           peak_mb=max(c.peaks_kb) / 1024, ratio=med / ref if ref else None)
            out.append(row)
    return out


def table(rs: list[dict]) -> list[str]:
    head = ["tool", "workload", "measures", "seconds (median)", "min-max", "reps",
            "peak RSS MB", "x irbench", "notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rs:
        if "seconds" in r:
            cells = [r["tool"], r["workload"], r["set"], f"{r['seconds']:.2f}",
                     f"{r['lo']:.2f}-{r['hi']:.2f}", str(r["reps"]), f"{r['peak_mb']:.0f}",
                     f"{r['ratio']:.2f}" if r["ratio"] is not None else "-", r["note"]]
        else:
            err = (r["error"] or "not run").replace("\n", " ").replace("|", "/")[:300]
            cells = [r["tool"], r["workload"], r["set"], "FAILED", "-", "0", "-", "-", err]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def data_lines(data: Path) -> list[str]:
    try:
        m = json.loads((data / "manifest.json").read_text())
    except OSError:
        return []
    c, l, cfg = m["campaign"], m["large"], m["config"]
    return [
        f"- (a) campaign: {c['run_files']} runs x {cfg['topics']} topics x {cfg['depth']} "
        f"documents, {c['bytes'] / 1e6:.0f} MB of run files; qrels {c['qrels_lines']:,} "
        f"judgments ({c['qrels_lines'] / cfg['topics']:.0f} per topic), levels 0-2",
        f"- (b) large: 1 run x {cfg['large_topics']:,} topics x {cfg['depth']} documents "
        f"({l['run_lines']:,} lines, {l['bytes'] / 1e6:.0f} MB); qrels {l['qrels_lines']:,} "
        f"judgments ({l['qrels_lines'] / cfg['large_topics']:.0f} per topic)",
        f"- generated by `python bench/make_data.py{' --quick' if m.get('quick') else ''}` "
        f"(seed {m['seed']})",
    ]


def write_report(path: Path, data: Path, cases: list[Case], sanity_lines: list[str],
                 args, elapsed: float) -> list[str]:
    rs = rows(cases)
    tbl = table(rs)
    text = [
        "# irbench benchmark: time from files on disk to all values",
        "",
        f"Produced by `python bench/run_bench.py{' --quick' if args.quick else ''}"
        f"{f' --reps {args.reps}' if args.reps != 3 else ''}` in {elapsed / 60:.1f} min. "
        "Regenerate the data with `python bench/make_data.py` first (see bench/README.md).",
        "",
        "## Machine",
        "",
        *machine_lines(),
        "",
        "## Data",
        "",
        *data_lines(data),
        "",
        "## Method",
        "",
        "- Every measurement is a fresh process (`python -m irbench eval ...`, or "
        "`python bench/workers.py TOOL ...` for the other libraries), so interpreter start, "
        "imports, reading and parsing the files, evaluation and (for irbench) formatting the "
        "output all count. Seconds are whole-process wall-clock; the table gives the median "
        f"of {args.reps} repetitions (a case whose first repetition took over "
        f"{args.max_rep_seconds:.0f} s is run once: see `reps`). Files are in the OS page "
        "cache (read once before timing).",
        "- Peak RSS is each process's `ru_maxrss` from `os.wait4`; for two processes in "
        "parallel it is the sum of both. (On Linux a child's `ru_maxrss` starts at its "
        "parent's size when forked; the timing process stays at "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB.)",
        "- irbench: `python -m irbench eval -m all_trec QRELS RUN...` or the core set "
        f"`{' '.join(CORE_ARGS)}`, all runs in one process, output to /dev/null. "
        "'2 processes': the runs split in two halves evaluated by two processes in parallel.",
        "- pytrec_eval: runs and qrels parsed in Python into dicts of dicts, one "
        "`RelevanceEvaluator` for all runs, `evaluate` per run, means with "
        "`compute_aggregated_measure`; all_trec = `pytrec_eval.supported_measures` (it lacks "
        f"rbp, rbp_resid and unj); core = {', '.join(CORE_PYTREC)}.",
        "- ir_measures: `read_trec_qrels`/`read_trec_run`, one `evaluator` for all runs, "
        f"`iter_calc` per run; {', '.join(CORE_IR_MEASURES)} (it has no GMAP).",
        "- ranx: `Qrels.from_file`/`Run.from_file` and `evaluate` with "
        f"{', '.join(CORE_RANX)} (no GMAP, no infAP). One process per repetition with an "
        "empty numba cache (`NUMBA_CACHE_DIR`): it first evaluates tiny in-memory runs (numba "
        "compiles; ranx compiles once per docno array width `<U{longest docno}`, so the tiny "
        "runs use the real files' longest docno lengths), then reads and evaluates the real "
        "files. 'cold' is that whole process (what a user's first script pays); 'warm' is the "
        "in-process time of the second part only (no import, no compilation), as for a second "
        "call in a notebook. ranx breaks score ties differently from trec_eval.",
        "- `x irbench`: median seconds divided by irbench's (one process) for the same "
        "workload and measures.",
        "",
        "## Results",
        "",
        *tbl,
        "",
        "## Sanity checks",
        "",
        *sanity_lines,
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text).rstrip() + "\n")
    return tbl


# --------------------------------------------------------------------------- main

def warm_page_cache(data: Path) -> None:
    for p in data.rglob("*.txt"):
        with open(p, "rb") as fh:
            while fh.read(1 << 20):
                pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="use the small data (make_data.py --quick); results to "
                    "bench/data/quick/results.md unless --out")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per case (default 3)")
    ap.add_argument("--data", type=Path, default=None, help="data folder (default "
                    "bench/data/full, or bench/data/quick with --quick)")
    ap.add_argument("--out", type=Path, default=None, help="markdown results file")
    ap.add_argument("--workloads", default="ab", help="a, b or ab (default ab)")
    ap.add_argument("--tools", default="irbench,pytrec_eval,ir_measures,ranx,trec_eval",
                    help="comma-separated subset of the tools")
    ap.add_argument("--max-rep-seconds", type=float, default=90.0,
                    help="run a case only once if its first repetition takes longer (default 90)")
    ap.add_argument("--profile", action="store_true",
                    help="also profile irbench (core set, both workloads) with cProfile; "
                    "writes profile-*.txt next to the data")
    ap.add_argument("--no-sanity", action="store_true", help="skip the sanity checks")
    ap.add_argument("--sanity-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    data = args.data or (HERE / "data" / ("quick" if args.quick else "full"))
    out = args.out or ((data / "results.md") if args.quick or args.data else HERE / "results.md")
    if not (data / "campaign" / "qrels.txt").exists() or not (data / "large" / "run.txt").exists():
        print(f"no data in {data}: run  python bench/make_data.py{' --quick' if args.quick else ''}",
              file=sys.stderr)
        return 2
    if args.sanity_json:
        lines, failures = sanity(data)
        print(json.dumps({"lines": lines, "failures": failures}))
        return 0
    tools = {t.strip() for t in args.tools.split(",") if t.strip()}
    if "trec_eval" in tools and not shutil.which("trec_eval"):
        print("trec_eval is not on PATH: skipped", flush=True)
    env = base_env()
    start = time.perf_counter()

    # the checks import numpy and every library: a child process, so that this process stays
    # small (a child's ru_maxrss starts from its parent's size at fork)
    sanity_lines, failures = (["skipped (--no-sanity)"], []) if args.no_sanity else \
        sanity_in_child(data, env)
    print("\n".join(sanity_lines), flush=True)
    if failures:
        print("SANITY CHECK FAILED: " + "; ".join(failures), file=sys.stderr, flush=True)

    warm_page_cache(data)
    cases = build_cases(data, args.workloads, tools)
    for rep in range(args.reps):
        for c in cases:
            if c.error or (rep > 0 and c.single):
                continue
            wall = c.run_once(env)
            status = f"FAILED {c.error}" if c.error else (
                f"{wall:.2f} s, peak {c.peaks_kb[-1] / 1024:.0f} MB"
                + (f", in-process {c.inproc[-1]:.2f} s" if c.inproc_label and c.inproc else ""))
            print(f"[rep {rep + 1}/{args.reps}] {c.tool} | {c.workload} | {c.measure_set}: "
                  f"{status}", flush=True)
            if rep == 0 and wall > args.max_rep_seconds:
                c.single = True

    if args.profile:
        profile(data, data, env)
    elapsed = time.perf_counter() - start
    tbl = write_report(out, data, cases, sanity_lines, args, elapsed)
    print()
    print("\n".join(tbl))
    print(f"\nwrote {out} ({elapsed / 60:.1f} min)")
    return 1 if failures or any(c.error for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
