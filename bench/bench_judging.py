"""Judging 10,000 (topic, document) pairs with a model judge against the local chat-completions
stand-in (tests/chat_server.py, in a process of its own): irbench's own cost per call.

For each concurrency c, interleaved and repeated (--repeat, median reported):

- **irbench (library)**: the path ``irbench judge`` takes (load_config, Store, open_documents,
  Journal, build_requests, Budget, judge_pairs), in a fresh process and a fresh store, timed
  step by step: rendering (build_requests: document lookups, Jinja2, request hashes), the
  cache lookup, the HTTP phase, the journal appends and the folds into the store;
- **raw**: the same request bodies (rendered beforehand, not timed) posted by a minimal client
  without irbench: one httpx.Client with the same limits and c threads, each posting and
  reading the JSON answer: what any client pays;
- **irbench judge (CLI)**: ``python -m irbench judge CONFIG --judge NAME --pairs FILE`` timed
  from outside: start-up, rendering, calls and store writes, all of it.

Every run gets a server of its own, whose count of answered calls is checked (each run must
make every call). Then a rerun on a filled store (every answer cached: 0 calls), and, when
py-spy is installed (``pip install py-spy``), one profile of the library path at concurrency 8.

    python bench/bench_judging.py                       # 10,000 pairs, c = 1, 8, 32; ~6 min
    python bench/bench_judging.py --quick               # 500 pairs, 1 repeat: a smoke run

A full run writes bench/results-judging.md (--out); a quick one only prints, unless --out.
Everything is written in a temporary folder (IRBENCH_CACHE_DIR too), removed at the end.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 1
MODEL = "stand-in"
OVERHEAD_TARGET_MS = 1.0


# ---- the campaign and its pairs ----------------------------------------------------------------

def prepare(work: Path, n_pairs: int, env: dict[str, str]) -> dict:
    """Simulate a campaign with enough (topic, document) pairs in its runs, write ``n_pairs``
    of them (a seeded choice) to pairs.txt, and build the documents' index once (so that no
    measured run builds it)."""
    topics = 50
    while True:
        sim = work / f"campaign-{topics}"
        subprocess.run([sys.executable, "-m", "irbench", "simulate", str(sim), "--groups", "10",
                        "--topics", str(topics), "--depth", "100", "--seed", str(SEED)],
                       check=True, env=env, cwd=ROOT, capture_output=True)
        distinct = run_pairs(sim / "runs")
        if len(distinct) >= n_pairs:
            break
        topics *= 2
    import numpy as np

    rng = np.random.default_rng(SEED)
    chosen = sorted(distinct[i] for i in rng.choice(len(distinct), n_pairs, replace=False))
    (sim / "pairs.txt").write_text("".join(f"{q} {d}\n" for q, d in chosen))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sys\nfrom irbench.config import load_config\n"
                    "from irbench.documents import open_documents\n"
                    "open_documents(load_config(sys.argv[1], strict=False).documents).close()",
                    str(sim / "campaign.yaml")], check=True, env=env, cwd=ROOT)
    return {"dir": sim, "topics": topics, "distinct": len(distinct), "pairs": n_pairs,
            "index_seconds": time.perf_counter() - start}


def run_pairs(runs: Path) -> list[tuple[str, str]]:
    """The distinct (topic, docno) pairs of every run file in ``runs``, sorted."""
    pairs = set()
    for path in sorted(runs.iterdir()):
        with open(path) as fh:
            for line in fh:
                fields = line.split()
                pairs.add((fields[0], fields[2]))
    return sorted(pairs)


def write_config(sim: Path, tag: str, base_url: str, concurrency: int) -> tuple[Path, str]:
    """campaign.yaml with a store of its own (stores/TAG.duckdb) and one judge, at
    ``concurrency``, on the server at ``base_url``; returns (config path, judge name)."""
    import yaml

    data = yaml.safe_load((sim / "campaign.yaml").read_text())
    name = f"bench-c{concurrency}"
    data["store"] = f"stores/{tag}.duckdb"
    data["judges"] = {name: {"base_url": base_url, "model": MODEL, "concurrency": concurrency}}
    (sim / "stores").mkdir(exist_ok=True)
    path = sim / f"{tag}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, name


# ---- the server --------------------------------------------------------------------------------

class Server:
    """tests/chat_server.py in a process of its own; ``stop()`` returns how many completions
    it answered."""

    def __init__(self, env: dict[str, str], port: int = 0):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.chat_server", "--port", str(port), "--rule", "marker",
             "--model", MODEL], cwd=ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.process.kill()
            raise RuntimeError(f"the chat server did not start: {self.process.stderr.read()}")
        self.port = int(self.base_url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        found = re.search(r"stopped after (\d+) completions", err)
        if found is None:
            raise RuntimeError(f"the chat server said: {err}")
        return int(found.group(1))


# ---- one measurement, each in a fresh process ---------------------------------------------------

def measure(kind: str, sim: Path, tag: str, concurrency: int, env: dict[str, str],
            port: int = 0) -> dict:
    """One run of ``kind`` (irbench, raw or cli) on a server of its own; its timings, wall
    seconds and the calls the server answered."""
    server = Server(env, port)
    try:
        config, judge = write_config(sim, tag, server.base_url, concurrency)
        pairs = str(sim / "pairs.txt")
        if kind == "cli":
            command = [sys.executable, "-m", "irbench", "judge", str(config), "--judge", judge,
                       "--pairs", pairs]
        else:
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind,
                       str(config), judge, pairs]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        calls = server.stop()
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    out = {"kind": kind, "c": concurrency, "process": wall, "calls": calls,
           "port": server.port, "config": str(config), "judge": judge}
    if kind == "cli":
        out["summary"] = done.stdout.strip().splitlines()[-1]
        out["wall"] = wall
    else:
        out.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


class Clock:
    """Seconds spent in wrapped callables, by name (called from one thread)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
        return timed


def irbench_worker(config_path: str, judge: str, pairs_path: str) -> dict:
    """What ``irbench judge --pairs`` does (irbench/cli/judge.py: cmd_judge), step by step and
    timed; the HTTP phase is judge_pairs less its cache lookup, journal appends and folds."""
    from types import SimpleNamespace

    from irbench.config import load_config
    from irbench.documents import open_documents
    from irbench.judges.journal import Journal, journal_path
    from irbench.judges.judging import Budget, JudgingSummary, build_requests, judge_pairs
    from irbench.judges.targets import read_pairs
    from irbench.store import Store
    from irbench.topics import read_topics

    clock, t = Clock(), {}
    start = time.perf_counter()
    config = load_config(config_path, strict=False)
    spec = config.judges[judge]
    topics = read_topics(config.topics)
    with Store(config.store) as store, open_documents(config.documents) as documents:
        timed_store = SimpleNamespace(
            cached_answers=clock.wrap("cache lookup", store.cached_answers),
            save_answers=clock.wrap("store writes", store.save_answers))
        journal = Journal(journal_path(config.store), timed_store.save_answers)
        journal.fold_leftovers()
        journal.append = clock.wrap("journal", journal.append)
        pairs = read_pairs(pairs_path)
        t["setup"] = time.perf_counter() - start
        summary = JudgingSummary()
        mark = time.perf_counter()
        requests = build_requests(spec.prompt.compile(), spec, pairs, topics.statement,
                                  documents, summary)
        t["render"] = time.perf_counter() - mark
        store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
        budget = Budget(spec, *store.judge_usage(spec.name), None)
        mark = time.perf_counter()
        judge_pairs(spec, requests, timed_store, journal, budget=budget, summary=summary)
        t["judge_pairs"] = time.perf_counter() - mark
        mark = time.perf_counter()
    t["close"] = time.perf_counter() - mark
    t["wall"] = time.perf_counter() - start
    t.update(clock.seconds)
    t["http"] = t["judge_pairs"] - sum(clock.seconds.values())
    t["answered"], t["cached"], t["failed"] = summary.answered, summary.cached, summary.failed
    return t


def raw_worker(config_path: str, judge: str, pairs_path: str) -> dict:
    """The same request bodies, rendered first (not timed), posted by a bare httpx client with
    the judge's limits from ``concurrency`` threads."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from irbench.config import load_config
    from irbench.documents import open_documents
    from irbench.judges.judging import JudgingSummary, build_requests
    from irbench.judges.targets import read_pairs
    from irbench.topics import read_topics

    config = load_config(config_path, strict=False)
    spec = config.judges[judge]
    with open_documents(config.documents) as documents:
        requests = build_requests(spec.prompt.compile(), spec, read_pairs(pairs_path),
                                  read_topics(config.topics).statement, documents,
                                  JudgingSummary())
    bodies = iter([{"model": spec.model, "messages": r.messages,
                    "temperature": spec.temperature, "max_tokens": spec.max_tokens}
                   for r in requests])
    lock, answers = threading.Lock(), []

    def work(client: httpx.Client) -> None:
        while True:
            with lock:
                body = next(bodies, None)
            if body is None:
                return
            response = client.post("chat/completions", json=body)
            response.raise_for_status()
            answers.append(response.json()["choices"][0]["message"]["content"])

    start = time.perf_counter()
    limits = httpx.Limits(max_connections=spec.concurrency,
                          max_keepalive_connections=spec.concurrency)
    with httpx.Client(base_url=spec.base_url + "/", timeout=spec.timeout,
                      limits=limits) as client, \
            ThreadPoolExecutor(max_workers=spec.concurrency) as pool:
        for future in [pool.submit(work, client) for _ in range(spec.concurrency)]:
            future.result()
    return {"http": time.perf_counter() - start, "answered": len(answers)}


# ---- the campaign of measurements ---------------------------------------------------------------

def run_all(setup: dict, levels: list[int], repeat: int, env: dict[str, str]) -> dict:
    """Every (concurrency, repetition): irbench, raw and CLI runs, interleaved; checks that each
    made every call."""
    sim, n = setup["dir"], setup["pairs"]
    runs: dict[tuple[str, int], list[dict]] = collections.defaultdict(list)
    for r in range(repeat):
        for c in levels:
            for kind in ("irbench", "raw", "cli"):
                got = measure(kind, sim, f"{kind}-c{c}-r{r}", c, env)
                if got["calls"] != n or got.get("answered", n) != n:
                    raise RuntimeError(f"{kind} c={c}: {got['calls']} calls answered by the "
                                       f"server, {got.get('answered')} answers, not {n}")
                runs[kind, c].append(got)
                print(f"  c={c:<3} {kind:<8} rep {r + 1}: {wall_of(got):7.2f} s "
                      f"({got['calls']} calls)", flush=True)
    return runs


def wall_of(run: dict) -> float:
    return run["http"] if run["kind"] == "raw" else run["wall"] if run["kind"] == "cli" \
        else run["judge_pairs"]


def rerun_cached(runs: dict, c: int, env: dict[str, str]) -> dict:
    """The CLI and the library path again on the last CLI run's store (same server port, same
    judge): every answer cached, no call may be made."""
    last = runs["cli", c][-1]
    sim = Path(last["config"]).parent
    tag = Path(last["config"]).stem
    out = {}
    for kind in ("cli", "irbench"):
        got = measure(kind, sim, tag, c, env, port=last["port"])
        if got["calls"]:
            raise RuntimeError(f"the cached rerun ({kind}) made {got['calls']} calls")
        out[kind] = got
    return out


def profile(setup: dict, c: int, env: dict[str, str], work: Path) -> list[str] | None:
    """py-spy over one library-path run at concurrency ``c``, sampling at 250 Hz whichever
    thread holds the GIL (the client's Python work; waiting on sockets does not count): the
    top functions by samples inside them (self) and under them (inclusive), or None without
    py-spy."""
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        return None
    server = Server(env)
    try:
        config, judge = write_config(setup["dir"], f"profile-c{c}", server.base_url, c)
        raw = work / "profile.txt"
        subprocess.run([spy, "record", "--gil", "-r", "250", "-f", "raw", "-o", str(raw), "--",
                        sys.executable, str(Path(__file__).resolve()), "--worker", "irbench",
                        str(config), judge, str(setup["dir"] / "pairs.txt")],
                       cwd=ROOT, env=env, check=True, capture_output=True)
    finally:
        server.stop()
    return hot_spots(raw.read_text())


def hot_spots(raw: str, top: int = 12) -> list[str]:
    """Markdown lines: the functions with most samples in them (self) and under them."""
    own: collections.Counter[str] = collections.Counter()
    under: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";") if f.strip()]
        if not frames:
            continue
        n = int(count)
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            under[frame] += n
    lines = [f"{total} samples of the thread holding the GIL. Self:", ""]
    lines += [f"- {100 * n / total:4.1f}% `{shorten(f)}`" for f, n in own.most_common(top)]
    lines += ["", "Inclusive (irbench's and httpx's functions):", ""]
    mine = [(f, n) for f, n in under.most_common()
            if ("irbench/" in f or "httpx/" in f or "bench_judging" in f)]
    lines += [f"- {100 * n / total:4.1f}% `{shorten(f)}`" for f, n in mine[:top + 8]]
    return lines


def shorten(frame: str) -> str:
    return re.sub(r"\(\S*?/(site-packages|main)/", "(", frame)


# ---- the report ---------------------------------------------------------------------------------

def med(runs: list[dict], key: str) -> float:
    return statistics.median(r.get(key, 0.0) for r in runs)


def table(runs: dict, levels: list[int], n: int) -> list[str]:
    """The main table and the split of irbench's library path, as Markdown lines."""
    head = ["| c | irbench judge_pairs s | raw s | overhead ms/call | irbench calls/s | "
            "raw calls/s | CLI wall s | CLI overhead ms/call |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    split = ["| c | setup | render + lookup | cache lookup | HTTP phase | journal | "
             "store writes | close | whole (library) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in levels:
        lib, raw, cli = runs["irbench", c], runs["raw", c], runs["cli", c]
        jp, rw, cw = med(lib, "judge_pairs"), med(raw, "http"), med(cli, "wall")
        head.append(f"| {c} | {jp:.2f} | {rw:.2f} | {1000 * (jp - rw) / n:.3f} | "
                    f"{n / jp:,.0f} | {n / rw:,.0f} | {cw:.2f} | {1000 * (cw - rw) / n:.3f} |")
        cells = [med(lib, k) for k in ("setup", "render", "cache lookup", "http", "journal",
                                       "store writes", "close", "wall")]
        split.append(f"| {c} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    return head + ["", "Library path, median seconds by step (the HTTP phase is judge_pairs "
                   "less its cache lookup, journal appends and store writes):", ""] + split


def where_time_goes(runs: dict, levels: list[int], n: int) -> list[str]:
    """A line per concurrency from the medians: what irbench adds over the raw client."""
    out = ["judge_pairs − raw, split (the journal appends and folds run in the main thread "
           "while up to c requests are in flight on the event loop, so at c > 1 they partly "
           "overlap the HTTP "
           "phase, whose difference can come out below zero):", ""]
    for c in levels:
        lib, raw = runs["irbench", c], runs["raw", c]
        parts = {"HTTP phase beyond raw": med(lib, "http") - med(raw, "http"),
                 "journal appends": med(lib, "journal"),
                 "store writes (folds)": med(lib, "store writes"),
                 "cache lookup": med(lib, "cache lookup")}
        total = sum(parts.values())
        said = ", ".join(f"{k} {1000 * v / n:.3f}" for k, v in parts.items())
        out.append(f"- c={c}: {1000 * total / n:.3f} ms/call (sum of medians) = {said} "
                   f"ms/call; before it, rendering {1000 * med(lib, 'render') / n:.3f} "
                   "ms/pair.")
    return out


def machine() -> list[str]:
    httpx = importlib.metadata.version("httpx")
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        found = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
        cpu = found.group(1) if found else ""
    return [f"- {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), {cpu}",
            f"- Python {platform.python_version()}, httpx {httpx}, "
            f"{platform.system()} {platform.release()}"]


def report(setup: dict, runs: dict, cached: dict, hot: list[str] | None, levels: list[int],
           repeat: int) -> str:
    n = setup["pairs"]
    lines = ["# Judging: irbench's own cost per model call", "",
             "`python bench/bench_judging.py` (see its docstring). The judge talks to "
             "tests/chat_server.py (rule `marker`) in a process of its own; every run uses a "
             "fresh store and a fresh server, whose answered calls are checked.", "",
             "## Machine", ""] + machine() + [
             "", "## Workload", "",
             f"`irbench simulate --groups 10 --topics {setup['topics']} --depth 100 --seed "
             f"{SEED}`: {setup['distinct']:,} distinct (topic, document) pairs in the runs, "
             f"{n:,} chosen (seeded); UMBRELA's prompt (~2.3 KB per request). Median of "
             f"{repeat} runs per cell, irbench, raw and CLI runs interleaved. The documents' "
             f"index is built once beforehand ({setup['index_seconds']:.1f} s, in a process).",
             "", "## Results", ""] + table(runs, levels, n) + [
             "", "overhead ms/call = (irbench judge_pairs − raw) / calls: the HTTP phase and "
             "irbench's bookkeeping over what a bare httpx client pays for the same bodies. "
             "CLI overhead adds start-up, config, documents, rendering and closing the store.",
             "", f"Target: < {OVERHEAD_TARGET_MS:g} ms per call.", "",
             "## Where irbench's time goes", ""] + where_time_goes(runs, levels, n)
    cli, lib = cached["cli"], cached["irbench"]
    lines += ["", "## Rerun, everything cached", "",
              f"The last CLI store judged again at c={cli['c']}: CLI {cli['wall']:.2f} s, "
              f"judge_pairs {lib['judge_pairs']:.2f} s (cache lookup "
              f"{lib['cache lookup']:.2f} s, store writes {lib['store writes']:.2f} s), "
              f"{cli['calls']} and {lib['calls']} calls. `{cli['summary']}`"]
    if hot:
        lines += ["", "## Profile (py-spy, library path, c=8)", ""] + hot
    return "\n".join(lines) + "\n"


# ---- main --------------------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=10_000)
    p.add_argument("--concurrency", default="1,8,32")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="500 pairs, 1 repeat, no profile")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--out", default=None, help="the results file (default: "
                   "bench/results-judging.md for a full run, none for --quick)")
    p.add_argument("--worker", choices=("irbench", "raw"), help=argparse.SUPPRESS)
    p.add_argument("worker_args", nargs="*", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.pairs, args.repeat, args.no_profile = 500, 1, True
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.worker:
        worker = irbench_worker if args.worker == "irbench" else raw_worker
        print(json.dumps(worker(*args.worker_args)))
        return 0
    levels = [int(c) for c in args.concurrency.split(",")]
    work = Path(tempfile.mkdtemp(prefix="irbench-bench-judging-"))
    env = {**os.environ, "IRBENCH_CACHE_DIR": str(work / "cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        setup = prepare(work, args.pairs, env)
        print(f"{setup['pairs']:,} pairs of {setup['distinct']:,} in {setup['dir']}",
              flush=True)
        runs = run_all(setup, levels, args.repeat, env)
        cached = rerun_cached(runs, 8 if 8 in levels else levels[-1], env)
        hot = None if args.no_profile else profile(setup, 8, env, work)
        text = report(setup, runs, cached, hot, levels, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(text)
    out = args.out or (None if args.quick else str(ROOT / "bench" / "results-judging.md"))
    if out:
        Path(out).write_text(text)
        print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
