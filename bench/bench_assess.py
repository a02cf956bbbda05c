"""``irbench assess`` under load: the server's latency per judgment with concurrent assessors.

The real server (``python -m irbench assess CONFIG --pool NAME --port P``, a process of its
own, as tests/test_assess_browser.py starts it) and one client process per assessor (httpx;
processes, so that the clients' Python does not share the GIL, though on a small machine they
share the cores with the server). Each client logs in with its personal link, reads the page's
CSRF token, asks /api/next (a POST, or a GET where the server has it so), waits for the others
(a barrier), then POSTs /api/judge for the item shown (relevance from a seeded RNG) until it
has made N judgments or gets no item, timing every POST round trip (time.perf_counter); every
20th judgment it also times a call of /api/next. An organiser process GETs the organiser's page
(``/``: progress, agreement and a provisional leaderboard) once a second meanwhile.

The campaign: ``irbench simulate --groups 10 --topics 50 --pool-depth 20``; each configuration
gets a store of its own (a copy of the config naming another store), a pool (``pool start
--strategy depth --param k=20`` or ``--strategy mtf``), the assessors (each with its own
topics, or all sharing every topic) and an organiser. Configurations: depth with own topics,
depth shared, depth shared with ``--overlap 0.5``, MTF (documents chosen live from the
judgments) own and shared, depth with own topics paced (a pause of 0.5 s on average before each
judgment), and one assessor alone (no contention) for reference. When p99 is over the target,
one more depth run with py-spy attached to the server says where its time goes (or always, with
--profile; a quick run only with --profile).

    python bench/bench_assess.py                  # 10 assessors x 200 judgments; ~8 min
    python bench/bench_assess.py --quick          # 10 x 25, two configurations: a smoke run

A full run writes bench/results-assess.md (--out); a quick one only prints, unless --out.
Everything is written in a temporary folder (IRBENCH_CACHE_DIR too), removed at the end.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.metadata
import io
import multiprocessing
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 1
TARGET_P99_MS = 50.0
LEVELS = (0, 1, 2)
NEXT_EVERY = 20  # a timed /api/next every this many judgments
ORGANISER_EVERY = 1.0
PACE = 0.5  # mean pause between an assessor's judgments in the paced configuration (s)  # seconds between the organiser's page loads
CSRF = re.compile(r'<meta name="csrf" content="([0-9a-f]+)"')


# ---- the campaign --------------------------------------------------------------------------------

def cli(*args: str) -> str:
    """``irbench ARGS`` in this process (as the tests call it); its stdout."""
    from irbench import cli as irbench_cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = irbench_cli.main(list(args))
    if code != 0:
        raise RuntimeError(f"irbench {' '.join(args)} exited {code}: {out.getvalue()}")
    return out.getvalue()


def simulate(work: Path) -> Path:
    folder = work / "camp"
    cli("simulate", str(folder), "--groups", "10", "--topics", "50", "--pool-depth", "20",
        "--seed", str(SEED))
    return folder


def topic_ids(folder: Path) -> list[str]:
    seen = {line.split()[0] for line in (folder / "qrels.txt").read_text().splitlines()}
    return sorted(seen, key=lambda t: (len(t), t))


def configure(folder: Path, tag: str, strategy: str, shared: bool, n: int) -> dict:
    """A config of its own (store ``tag.duckdb``), the pool ``web`` and the links of ``n``
    assessors (``a0``...: topics of their own, or all when ``shared``) and ``org``."""
    text = (folder / "campaign.yaml").read_text()
    config = folder / f"{tag}.yaml"
    config.write_text(text.replace("store: campaign.duckdb", f"store: {tag}.duckdb"))
    params = ["--param", "k=20"] if strategy == "depth" else []
    cli("pool", "start", str(config), "--name", "web", "--strategy", strategy, *params)
    topics = topic_ids(folder)
    per = max(1, len(topics) // n)
    links, assigned = {}, {}
    for i in range(n):
        mine = [] if shared else topics[(i * per) % len(topics):][:per]
        assigned[f"a{i}"] = mine
        extra = ["--topics", ",".join(mine)] if mine else []
        links[f"a{i}"] = cli("assess", str(config), "--pool", "web", "--add-assessor",
                             f"a{i}", *extra).split("?token=")[1].strip()
    links["org"] = cli("assess", str(config), "--pool", "web", "--add-assessor", "org",
                       "--organiser").split("?token=")[1].strip()
    return {"config": config, "tokens": links, "topics": assigned,
            "pool_size": pool_size(config) if strategy == "depth" else None}


def pool_size(config: Path) -> int:
    """Documents in the depth-20 pool (``irbench pool stats``)."""
    found = re.search(r"pool: (\d+) documents", cli("pool", "stats", str(config),
                                                    "--param", "k=20"))
    return int(found.group(1)) if found else -1


# ---- the server ----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m irbench assess CONFIG --pool web`` in a process of its own, on a free port
    (another program may take the port between choosing and binding it, as tests running on
    the same machine do: then again on another)."""

    def __init__(self, config: Path, overlap: float, env: dict[str, str]):
        for _ in range(5):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "irbench", "assess", str(config), "--pool", "web",
                 "--port", str(self.port), "--overlap", str(overlap)], env=env, cwd=ROOT,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            first = self.proc.stdout.readline()
            if "irbench assess: pool 'web' at" not in first:
                raise RuntimeError(first + self.proc.stdout.read())
            deadline = time.monotonic() + 30
            while self.proc.poll() is None and time.monotonic() < deadline:
                if listens(self.proc.pid, self.port):
                    return
                time.sleep(0.05)
            self.stop()
        raise RuntimeError("the server did not listen")

    def stop(self) -> str:
        """Ctrl-C, as an organiser stops it; what it printed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stdout.read()


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a listening TCP socket on ``port`` (Linux /proc)."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        return False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if (cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port
                        and f"socket:[{cols[9]}]" in inodes):
                    return True
    return False


# ---- the clients (each a process) ----------------------------------------------------------------

def login(base: str, token: str):
    """An httpx client holding the cookie, and the page's CSRF token (the assessor's page has
    one; the organiser's, which changes nothing, none)."""
    import httpx

    client = httpx.Client(base_url=base, timeout=60.0)
    r = client.get(f"/?token={token}")  # 303 or a page that refreshes: a cookie either way
    if r.status_code not in (200, 303) or not client.cookies:
        raise RuntimeError(f"login: {r.status_code}")
    page = client.get("/")
    if page.status_code != 200:
        raise RuntimeError(f"page: {page.status_code}")
    found = CSRF.search(page.text)
    return client, found.group(1) if found else None


def next_item(client, csrf: str | None) -> dict | None:
    """/api/next's item: POST with the CSRF token (it may advance the strategy), or GET on a
    server where it is a GET (405 to a POST)."""
    r = client.post("/api/next", json={}, headers={"X-CSRF-Token": csrf or ""})
    if r.status_code == 405:
        r = client.get("/api/next")
    r.raise_for_status()
    return r.json()["item"]


def assessor(base: str, token: str, n: int, seed: int, think: float, barrier, out) -> None:
    """Judge up to ``n`` documents as fast as the server answers (``think`` > 0: after a
    pause of that many seconds on average, exponential, not timed); put the timings on
    ``out``."""
    rng = random.Random(seed)
    try:
        client, csrf = login(base, token)
        item = next_item(client, csrf)
    except Exception:
        barrier.abort()
        raise
    barrier.wait()
    posts: list[float] = []
    nexts: list[float] = []
    errors = 0
    start = time.perf_counter()
    while item is not None and len(posts) < n:
        if think > 0:
            time.sleep(rng.expovariate(1 / think))
        body = {"query_id": item["query_id"], "doc_id": item["doc_id"],
                "relevance": rng.choice(LEVELS), "seconds": round(rng.uniform(2, 30), 1)}
        t0 = time.perf_counter()
        r = client.post("/api/judge", json=body, headers={"X-CSRF-Token": csrf})
        posts.append(time.perf_counter() - t0)
        if r.status_code != 200:
            errors += 1
            item = next_item(client, csrf)
            continue
        item = r.json()["item"]
        if item is not None and len(posts) % NEXT_EVERY == 0:
            t0 = time.perf_counter()
            item = next_item(client, csrf)
            nexts.append(time.perf_counter() - t0)
    end = time.perf_counter()
    client.close()
    out.put({"kind": "assessor", "posts": posts, "nexts": nexts, "errors": errors,
             "start": start, "end": end, "exhausted": item is None})


def organiser(base: str, token: str, barrier, stop, out) -> None:
    """Load the organiser's page every ORGANISER_EVERY seconds until ``stop``."""
    try:
        client, _ = login(base, token)
    except Exception:
        barrier.abort()
        raise
    barrier.wait()
    pages: list[float] = []
    while not stop.wait(ORGANISER_EVERY):
        t0 = time.perf_counter()
        r = client.get("/")
        pages.append(time.perf_counter() - t0)
        if r.status_code != 200 or "leaderboard" not in r.text.lower():
            raise RuntimeError(f"organiser page: {r.status_code}")
    judged = client.get("/api/progress").json()["judged"]
    client.close()
    out.put({"kind": "organiser", "pages": pages, "judged": judged})


def load(base: str, setup: dict, n: int, assessors: int, think: float) -> dict:
    """Run the assessors and the organiser against ``base``; their timings."""
    ctx = multiprocessing.get_context("spawn")
    barrier, stop, out = ctx.Barrier(assessors + 2), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=assessor, args=(base, setup["tokens"][f"a{i}"], n, SEED + i,
                                                think, barrier, out))
             for i in range(assessors)]
    procs.append(ctx.Process(target=organiser,
                             args=(base, setup["tokens"]["org"], barrier, stop, out)))
    for p in procs:
        p.start()
    barrier.wait(timeout=120)
    got = [out.get(timeout=600) for _ in range(assessors)]
    stop.set()
    got.append(out.get(timeout=120))
    for p in procs:
        p.join(timeout=60)
    return {"assessors": [g for g in got if g["kind"] == "assessor"],
            **next(g for g in got if g["kind"] == "organiser")}


# ---- one configuration ---------------------------------------------------------------------------

def measure(folder: Path, case: dict, n: int, env: dict[str, str], profile: bool = False,
            work: Path | None = None) -> dict:
    """Set up ``case``, start the server, run the load (py-spy on the server when
    ``profile``); the summary row (and the profile's hot spots)."""
    setup = configure(folder, case["tag"], case["strategy"], case["shared"], case["assessors"])
    before = cpu_seconds()
    server = Server(setup["config"], case["overlap"], env)
    spy = None
    try:
        if profile and work is not None:
            spy = subprocess.Popen([spy_path(), "record", "--pid", str(server.proc.pid), "-r",
                                    "200", "-f", "raw", "-o", str(work / "profile.txt"),
                                    "--nonblocking"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        result = load(server.url, setup, n, case["assessors"], case["think"])
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        printed = server.stop()
    row = summarise(case, result)
    row["others"] = others(before, cpu_seconds())
    row["server_errors"] = [line for line in printed.splitlines()
                            if "Traceback" in line or "Error" in line][:5]
    row["pool_size"] = setup["pool_size"]
    if spy is not None and work is not None and (work / "profile.txt").exists():
        row["hot"] = hot_spots((work / "profile.txt").read_text())
    return row


def cpu_seconds() -> tuple[float, float, float]:
    """(wall, CPU seconds busy on the whole machine, CPU seconds of this process and its
    waited-for children: the server, the clients, py-spy)."""
    with open("/proc/stat") as f:
        jiffies = [int(x) for x in f.readline().split()[1:9]]
    busy = (sum(jiffies) - jiffies[3] - jiffies[4]) / os.sysconf("SC_CLK_TCK")
    mine = sum(getattr(resource.getrusage(who), field)
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))
    return time.monotonic(), busy, mine


def others(before: tuple[float, float, float], after: tuple[float, float, float]) -> float:
    """Cores other programs kept busy meanwhile (on average)."""
    wall = after[0] - before[0]
    return max(0.0, (after[1] - before[1]) - (after[2] - before[2])) / wall if wall else 0.0


def spy_path() -> str:
    found = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if found is None:
        raise RuntimeError("py-spy is not installed (pip install py-spy)")
    return found


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) in milliseconds."""
    if not values:
        return float("nan")
    s = sorted(values)
    return 1000 * s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))]


def summarise(case: dict, result: dict) -> dict:
    runs = result["assessors"]
    posts = [x for r in runs for x in r["posts"]]
    nexts = [x for r in runs for x in r["nexts"]]
    wall = max(r["end"] for r in runs) - min(r["start"] for r in runs)
    return {**case, "judgments": len(posts), "errors": sum(r["errors"] for r in runs),
            "pool_judged": result["judged"],
            "exhausted": sum(r["exhausted"] for r in runs), "wall": wall,
            "rate": len(posts) / wall if wall else float("nan"),
            "p50": pct(posts, 50), "p90": pct(posts, 90), "p99": pct(posts, 99),
            "max": 1000 * max(posts, default=float("nan")), "mean": 1000 * sum(posts) / len(posts),
            "next_n": len(nexts), "next_p50": pct(nexts, 50), "next_p99": pct(nexts, 99),
            "next_max": 1000 * max(nexts, default=float("nan")),
            "page_n": len(result["pages"]), "page_p50": pct(result["pages"], 50),
            "page_max": 1000 * max(result["pages"], default=float("nan"))}


def hot_spots(raw: str, top: int = 15) -> dict[str, list[tuple[str, float]]]:
    """From py-spy's raw (collapsed) stacks: the frames with most samples in them (self, with
    their line) and under them (inclusive, irbench's own functions), as shares of all."""
    own: collections.Counter[str] = collections.Counter()
    under: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [shorten(f) for f in stack.split(";") if f.strip()]
        if not frames or not count.isdigit():
            continue
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in {re.sub(r":\d+\)$", ")", f) for f in frames}:
            under[frame] += int(count)
    if not total:
        return {"self": [], "inclusive": [], "samples": []}
    mine = [(f, n) for f, n in under.most_common() if "irbench/" in f]
    return {"samples": [("all", float(total))],
            "self": [(f, 100 * n / total) for f, n in own.most_common(top)],
            "inclusive": [(f, 100 * n / total) for f, n in mine[:top + 5]]}


def shorten(frame: str) -> str:
    frame = re.sub(r"\(\S*?/site-packages/", "(", frame)
    return frame.replace(f"({ROOT}/", "(").replace(" (/", " (/")


# ---- the report ----------------------------------------------------------------------------------

def cases(assessors: int, quick: bool) -> list[dict]:
    def case(tag, strategy, shared, overlap, n=assessors, what="", think=0.0):
        return {"tag": tag, "strategy": strategy, "shared": shared, "overlap": overlap,
                "assessors": n, "what": what, "think": think}
    own, shared = "own topics", "all share all topics"
    if quick:
        return [case("depth-own", "depth", False, 0.1, what=own),
                case("mtf-shared", "mtf", True, 0.5, what=shared)]
    return [case("alone", "depth", False, 0.1, 1, "one assessor, no contention"),
            case("depth-own", "depth", False, 0.1, what=own),
            case("depth-own-paced", "depth", False, 0.1, what=own + f", {PACE} s pauses",
                 think=PACE),
            case("depth-shared", "depth", True, 0.1, what=shared),
            case("depth-shared-o5", "depth", True, 0.5, what=shared),
            case("mtf-own", "mtf", False, 0.1, what=own),
            case("mtf-shared", "mtf", True, 0.1, what=shared),
            case("mtf-shared-o5", "mtf", True, 0.5, what=shared)]


def machine() -> list[str]:
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        found = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
        cpu = found.group(1) if found else ""
    v = importlib.metadata.version
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "irbench"],
                           capture_output=True, text=True).stdout.split()[1::2]
    return [f"- irbench at {head}" + (f", with uncommitted changes to {', '.join(dirty)}"
                                      if dirty else ""),f"- {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), {cpu}: the "
            "server and the client processes share them (the clients' own work, ~1 ms of "
            "httpx per request, counts in every round trip and competes with the server)",
            f"- Python {platform.python_version()}, Starlette {v('starlette')}, uvicorn "
            f"{v('uvicorn')}, httpx {v('httpx')}, DuckDB {v('duckdb')}, "
            f"{platform.system()} {platform.release()}"]


def table(rows: list[dict]) -> list[str]:
    head = ("| configuration | strategy | overlap | assessors | judgments (pool's) | p50 ms | "
            "p90 ms | "
            "p99 ms | max ms | judgments/s | /api/next p50 / p99 / max ms (n) | "
            "organiser page p50 / max ms (n) | other programs' CPU (cores) |")
    lines = [head, "|" + "---|" * 3 + "---:|" * 10]
    for r in rows:
        lines.append(
            f"| {r['tag']} ({r['what']}) | {r['strategy']} | {r['overlap']} | {r['assessors']} "
            f"| {r['judgments']:,} ({r['pool_judged']:,}) | {r['p50']:.1f} | {r['p90']:.1f} | {r['p99']:.1f} | "
            f"{r['max']:.1f} | {r['rate']:.0f} | {r['next_p50']:.1f} / {r['next_p99']:.1f} / "
            f"{r['next_max']:.1f} ({r['next_n']}) | {r['page_p50']:.1f} / {r['page_max']:.1f} "
            f"({r['page_n']}) | {r['others']:.2f} |")
    return lines


def verdict(rows: list[dict]) -> list[str]:
    loaded = [r for r in rows if r["assessors"] > 1]
    over = [r for r in loaded if r["p99"] >= TARGET_P99_MS]
    if not over:
        return [f"**p99 < {TARGET_P99_MS:.0f} ms holds** in every configuration with "
                f"{loaded[0]['assessors'] if loaded else '-'} concurrent assessors (worst "
                f"{max((r['p99'] for r in loaded), default=float('nan')):.1f} ms)."]
    return [f"**p99 < {TARGET_P99_MS:.0f} ms does not hold** in "
            f"{', '.join(r['tag'] for r in over)} (p99 "
            f"{', '.join(format(r['p99'], '.1f') for r in over)} ms)."]


def reading(rows: list[dict]) -> list[str]:
    """What the numbers say: the server's time per judgment (one assessor alone) and the
    queue in front of it with several assessors back to back."""
    alone = next((r for r in rows if r["assessors"] == 1), None)
    burst = [r for r in rows if r["assessors"] > 1 and not r["think"]]
    lines = []
    if alone is not None and burst:
        n = burst[0]["assessors"]
        lines.append(
            f"One assessor alone: {alone['p50']:.1f} ms per judgment (p50), "
            f"{alone['rate']:.0f} judgments/s, one at a time. {n} assessors judging back to "
            f"back: {min(r['rate'] for r in burst):.0f} to "
            f"{max(r['rate'] for r in burst):.0f} judgments/s in all (the desk's work is "
            "serial, under its lock; the commits are shared by the clicks that arrive "
            "together; the 2 cores are shared with the client processes), so a judgment "
            f"waits for the others in front of it: p50 ~ {n} / the rate.")
    noisy = [r["tag"] for r in rows if r["others"] > 0.25]
    if noisy:
        lines.append(f"Other programs kept part of the machine busy during {', '.join(noisy)} "
                     "(the last column): those rows are a little pessimistic.")
    return lines


def hot_lines(row: dict) -> list[str]:
    hot = row["hot"]
    lines = [f"py-spy on the server during `{row['tag']}` ({int(hot['samples'][0][1]):,} "
             "samples at 200 Hz, threads running Python or in native code; idle waits "
             "excluded). Self (the frame on top, with its line):", ""]
    lines += [f"- {share:4.1f}% `{f}`" for f, share in hot["self"]]
    lines += ["", "Inclusive (irbench's functions):", ""]
    lines += [f"- {share:4.1f}% `{f}`" for f, share in hot["inclusive"]]
    return lines


def report(rows: list[dict], args: argparse.Namespace, hot: dict | None) -> str:
    first = next((r for r in rows if r.get("pool_size")), {})
    lines = ["# irbench assess: the server's latency per judgment", "",
             "`python bench/bench_assess.py` (see its docstring).", "", "## Machine", "",
             *machine(), "", "## Setup", "",
             "`irbench simulate --groups 10 --topics 50 --pool-depth 20 --seed 1` (30 runs, 10 "
             f"of them pooled); depth pools `--strategy depth --param k=20` "
             f"({first.get('pool_size', '?'):,} documents), MTF pools `--strategy mtf` (no "
             "budget: chosen live, one step at a time, from the judgments made). Each "
             "configuration has a store, a pool and a server of its own. "
             f"{args.assessors} assessor processes (own topics: 50 / {args.assessors} each; "
             "shared: every topic), each making up to "
             f"{args.judgments} judgments back to back (no thinking time: the worst case, far "
             "above people's pace of one every few seconds), a timed /api/next every "
             f"{NEXT_EVERY}; one organiser process loading the organiser's page every "
             f"{ORGANISER_EVERY:.0f} s. Latency = the client's round trip of POST /api/judge "
             "(which records the judgment, committed to the store before the answer: the "
             "server's writer thread writes the clicks that arrive together in one commit; "
             "and answers with the next document; the pool's state is saved at hand-outs).",
             "", "## Results", "", *table(rows), "",
             *verdict(rows), "", *reading(rows), ""]
    for r in rows:
        if r["errors"] or r["exhausted"] or r["server_errors"]:
            lines.append(f"- {r['tag']}: {r['errors']} errors, {r['exhausted']} assessors "
                         "ran out of documents; the server printed: "
                         f"{' | '.join(r['server_errors']) or 'nothing wrong'}")
    if hot is not None:
        lines += ["", "## Where the server's time goes", "", *hot_lines(hot)]
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--assessors", type=int, default=10, help="concurrent assessors (10)")
    p.add_argument("--judgments", type=int, default=200, help="judgments each (200)")
    p.add_argument("--quick", action="store_true", help="a smoke run (~20 s)")
    p.add_argument("--profile", action="store_true", help="profile the server even if p99 is "
                   "under the target")
    p.add_argument("--out", type=Path, default=None,
                   help="report file (default bench/results-assess.md on a full run)")
    args = p.parse_args(argv)
    if args.quick:
        args.judgments = min(args.judgments, 25)
    if args.out is None and not args.quick:
        args.out = ROOT / "bench" / "results-assess.md"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="irbench-assess-bench-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IRBENCH_CACHE_DIR": str(work / "cache")}
    os.environ["IRBENCH_CACHE_DIR"] = env["IRBENCH_CACHE_DIR"]
    try:
        folder = simulate(work)
        rows = []
        for case in cases(args.assessors, args.quick):
            rows.append(measure(folder, case, args.judgments, env))
            print(table(rows)[-1], flush=True)
        hot = None
        slow = any(r["p99"] >= TARGET_P99_MS for r in rows if r["assessors"] > 1)
        if args.profile or (slow and not args.quick):
            case = {**cases(args.assessors, False)[1], "tag": "profile"}
            hot = measure(folder, case, args.judgments, env, profile=True, work=work)
            print("\n".join(hot_lines(hot)))
        text = report(rows, args, hot)
        print(text)
        if args.out is not None:
            args.out.write_text(text)
            print(f"wrote {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
