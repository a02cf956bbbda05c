"""Build the demo and a judged and assessed campaign with one checkout's irbench, dump their
stores and keep every command's output: the before/after check of a refactor (issue 36).

    python bench/make_judged_campaign.py make OUT --code DIR [--work DIR]
    python bench/make_judged_campaign.py diff OUT_A OUT_B

make: with the irbench of the checkout DIR (every command is ``python -m irbench`` with
PYTHONPATH=DIR; the model judge is DIR/tests/chat_server.py, ``--rule simulated``), in a
fresh work folder (a temporary one unless --work):

* ``demo/``: configs/ and runs/demo/ of DIR copied as tests/campaigns.py ``copy_demo`` does;
  ``irbench run`` and ``irbench report`` (also ``--format markdown``);
* ``judged/``: another copy, judged and assessed through the public surfaces only: ``pool
  build --name d10``, ``judge --pool d10`` and ``judge --holes official --depth 5`` against the
  stand-in model, ``qrels --import --as nist``, ``qrels --judge standin``, ``qrels --rule
  human-first``, ``qrels --rule first``, ``pool start/next/judge/status`` with assessor files
  (pool 'files', mtf, a third batch handed out and not judged), ``judge --pool files`` (an
  adaptive pool being judged), ``judge --pairs`` with ``--max-calls 6`` then without,
  ``pool start --name web`` judged by the model (suggestions) and then in the browser's place:
  ``irbench assess --pool web --overlap 0.5`` as a process driven over HTTP by ann and bob
  (signed in by their links, CSRF token from the page; next, judge, skip, undo and relabel in a
  fixed order, labels from runs/demo/qrels.txt else crc32 % 3) and the organiser org (progress,
  qrels); stopped by SIGINT; then ``qrels --pool web``, ``judges``, ``agreement`` (table,
  per-topic csv), the made qrels sets added to the config, ``run`` again, ``compare-qrels``
  (table, json).

It writes OUT/demo/ and OUT/judged/ (``bench/compare_stores.py dump`` of each store, run from
this script's folder whatever DIR is, so both sides are dumped alike) and OUT/outputs/: each
command line with its exit code, stdout and stderr (NN-name.txt), the HTTP exchanges
(http.txt), and the files the commands wrote (files/).

Run-dependent values are normalised, never the code's output otherwise: the work folder's
path -> <CAMPAIGN> (stores: compare_stores --root) or <WORK> (outputs); the stand-in's port ->
<CHAT_PORT> (the judges table's base_url and settings); the desk's port -> <ASSESS_PORT>; an
assessor's token -> <TOKEN:name> and its sha256 in the assessors table -> <SHA256(TOKEN:name)>
(only when it is the token's sha256: a change of the hashing still shows); in outputs, elapsed
time ("in 4.87 s") -> "in <T> s", the page's nonce and CSRF token -> <NONCE>, <CSRF>; in
http.txt a document's text -> its length and sha256. Columns of times, hosts, pids and seconds
are dropped by compare_stores itself. The config holds the stand-in's live URL only while ``irbench judge`` runs (else the
demo's 127.0.0.1:8011), so the config_sha256 that ``irbench run`` stores does not depend on
the port. PYTHONHASHSEED=0, TZ=UTC, COLUMNS=120 for every command.

diff: ``compare_stores.py diff`` of OUT_A/demo with OUT_B/demo and of the judged stores, and a
unified diff of every file under outputs/; exit 1 if anything differs.
"""
from __future__ import annotations

import argparse
import csv
import difflib
import hashlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMPARE = HERE / "compare_stores.py"
TIMEOUT = 900  # seconds any one command may take
CONFIG = "configs/demo.yaml"
DEMO_JUDGE_URL = "http://127.0.0.1:8011/v1"
LEVELS = (0, 1, 2)


# ---- running commands -------------------------------------------------------------------------

class Session:
    """Runs commands of one checkout in one campaign folder and keeps their outputs."""

    def __init__(self, code: Path, work: Path, folder: Path, label: str):
        self.code, self.work, self.folder, self.label = code, work, folder, label
        self.env = {**os.environ, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0", "TZ": "UTC",
                    "COLUMNS": "120", "IRBENCH_CACHE_DIR": str(work / "cache"),
                    "NO_COLOR": "1"}
        self.env.pop("PYTHONSTARTUP", None)
        self.transcripts: list[tuple[str, str]] = []  # (file name, raw text)
        self.subs: list[tuple[str, str]] = []  # exact substitutions, applied in order

    def irbench(self, name: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "irbench", *args]
        started = time.monotonic()
        done = subprocess.run(cmd, cwd=self.folder, env=self.env, capture_output=True,
                              text=True, errors="backslashreplace", timeout=TIMEOUT)
        took = time.monotonic() - started
        print(f"  [{self.label}] irbench {' '.join(args)[:90]} -> {done.returncode} "
              f"({took:.1f} s)", flush=True)
        self.keep(name, f"$ irbench {' '.join(args)}\nexit {done.returncode}\n"
                        f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}")
        if ok and done.returncode != 0:
            raise SystemExit(f"irbench {' '.join(args)} failed ({done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
        return done

    def keep(self, name: str, text: str) -> None:
        self.transcripts.append((f"{self.label}-{len(self.transcripts) + 1:02d}-{name}.txt",
                                 text))

    def normalise(self, text: str) -> str:
        for old, new in self.subs:
            text = text.replace(old, new)
        for root in sorted({str(self.work), os.path.realpath(self.work)}, key=len,
                           reverse=True):
            text = text.replace(root, "<WORK>")
        text = re.sub(r"\b(in|took) \d+(\.\d+)? s\b", r"\1 <T> s", text)
        text = re.sub(r"nonce-[A-Za-z0-9_\-]+", "nonce-<NONCE>", text)
        text = re.sub(r'nonce="[^"]*"', 'nonce="<NONCE>"', text)
        return re.sub(r'(name="csrf" content=")[^"]*"', r'\1<CSRF>"', text)

    def write(self, out: Path) -> None:
        for name, text in self.transcripts:
            (out / name).write_text(self.normalise(text), encoding="utf-8")


def copy_demo(code: Path, folder: Path) -> None:
    """configs/ and runs/demo/ of the checkout, without a store (as tests/campaigns.py)."""
    shutil.copytree(code / "configs", folder / "configs")
    shutil.copytree(code / "runs" / "demo", folder / "runs" / "demo",
                    ignore=shutil.ignore_patterns("*.duckdb*"))
    (folder / "runs" / "demo.duckdb").unlink(missing_ok=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_line(proc: subprocess.Popen, seconds: float) -> str:
    """One line of ``proc``'s stdout within ``seconds`` (else an error naming the process)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + seconds
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, left))
        if not ready:
            raise SystemExit(f"{proc.args!r}: no line within {seconds} s")
        byte = os.read(proc.stdout.fileno(), 1)  # unbuffered: select sees what is left
        if not byte:
            raise SystemExit(f"{proc.args!r}: ended ({proc.wait()}) before a line: {line!r}")
        line += byte
    return line.decode("utf-8", "backslashreplace")


def stop(proc: subprocess.Popen) -> str:
    """SIGINT, as Ctrl-C; waited for (killed after 60 s); what it printed after."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    rest = proc.stdout.read() if proc.stdout else b""
    return f"exit {proc.returncode}\n" + rest.decode("utf-8", "backslashreplace")


def wait_listening(proc: subprocess.Popen, port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{proc.args!r}: not listening on {port}") from None
            time.sleep(0.05)


# ---- the demo ---------------------------------------------------------------------------------

def make_demo(s: Session) -> None:
    copy_demo(s.code, s.folder)
    s.irbench("run", "run", CONFIG, "--workers", "2")
    s.irbench("report", "report", CONFIG, "--out", str(s.folder / "report"))
    s.irbench("report-markdown", "report", CONFIG, "--format", "markdown")
    s.irbench("report-significance", "report", CONFIG, "--format", "csv",
              "--table", "significance")


# ---- the judged and assessed campaign ---------------------------------------------------------

def read_grades(path: Path) -> dict[tuple[str, str], int]:
    grades = {}
    for line in path.read_text().splitlines():
        if line.strip():
            q, _, d, g = line.split()[:4]
            grades[(q, d)] = int(g)
    return grades


def label(grades: dict[tuple[str, str], int], query_id: str, doc_id: str) -> int:
    """The demo's official grade (at most 2), else a fixed function of the pair."""
    if (query_id, doc_id) in grades:
        return min(max(grades[(query_id, doc_id)], 0), LEVELS[-1])
    return zlib.crc32(f"{query_id} {doc_id}".encode()) % len(LEVELS)


class ChatJudge:
    """tests/chat_server.py of the checkout, ``--rule simulated``, on a free port; the config's
    standin judge points at it only inside ``with`` (see the module docstring)."""

    def __init__(self, s: Session):
        self.s = s
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.chat_server", "--rule", "simulated", "--port", "0"],
            cwd=s.code, env=s.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.url = read_line(self.proc, 60).strip()
        port = self.url.split(":")[2].split("/")[0]
        s.subs.append((f"127.0.0.1:{port}", "127.0.0.1:<CHAT_PORT>"))
        self.config = s.folder / CONFIG
        self.original = self.config.read_text()
        if DEMO_JUDGE_URL not in self.original:
            raise SystemExit(f"{self.config}: no {DEMO_JUDGE_URL} to point at the stand-in")

    def __enter__(self):
        self.config.write_text(self.original.replace(DEMO_JUDGE_URL, self.url))

    def __exit__(self, *exc) -> None:
        self.config.write_text(self.original)

    def close(self) -> None:
        stop(self.proc)


def deep_pairs(run: Path) -> str:
    """'topic docno' lines: ranks 41 to 45 of topics 401 and 402 of ``run`` (no pool has
    them), and one pair twice."""
    lines = [line.split() for line in run.read_text().splitlines()]
    chosen = [f"{q} {d}\n" for q, _, d, rank, *_ in lines
              if q in ("401", "402") and 41 <= int(rank) <= 45]
    return "".join(chosen + chosen[:1])


def fill(path: Path, grades: dict[tuple[str, str], int]) -> None:
    """An assessor file (query_id,doc_id,relevance) with every relevance filled in."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    q, d, r = head.index("query_id"), head.index("doc_id"), head.index("relevance")
    for row in body:
        row[r] = str(label(grades, row[q], row[d]))
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([head, *body])


def make_judged(s: Session, files: Path) -> None:
    copy_demo(s.code, s.folder)
    made = s.folder / "made"
    made.mkdir()
    grades = read_grades(s.folder / "runs" / "demo" / "qrels.txt")
    s.irbench("run", "run", CONFIG, "--workers", "2", "--quiet")
    chat = ChatJudge(s)
    try:
        s.irbench("pool-build-d10", "pool", "build", CONFIG, "--name", "d10", "--param", "k=10",
                  "--per-group", "1", "-o", "made/pool_d10")
        with chat:
            s.irbench("judge-d10", "judge", CONFIG, "--judge", "standin", "--pool", "d10")
            s.irbench("judge-holes", "judge", CONFIG, "--judge", "standin", "--holes",
                      "official", "--depth", "5")
            s.irbench("judge-again", "judge", CONFIG, "--judge", "standin", "--pool", "d10")
        s.irbench("import-nist", "qrels", CONFIG, "--import", "runs/demo/qrels.depth5.txt",
                  "--as", "nist")
        s.irbench("qrels-standin", "qrels", CONFIG, "--judge", "standin", "-o",
                  "made/standin.qrels")
        s.irbench("qrels-human-first", "qrels", CONFIG, "--rule", "human-first", "-o",
                  "made/human-first.qrels")
        s.irbench("qrels-first", "qrels", CONFIG, "--rule", "first", "--judge", "nist",
                  "--judge", "standin", "-o", "made/first.qrels")

        # a pool judged with assessor files
        s.irbench("files-start", "pool", "start", CONFIG, "--name", "files", "--strategy",
                  "mtf", "--budget", "6", "--seed", "3")
        for batch in (1, 2):
            sheet = f"made/files-{batch}.csv"
            s.irbench(f"files-next-{batch}", "pool", "next", CONFIG, "--name", "files",
                      "-o", sheet, "--batch", "20")
            fill(s.folder / sheet, grades)
            s.irbench(f"files-judge-{batch}", "pool", "judge", CONFIG, "--name", "files",
                      "-j", sheet, "--assessor", "carl")
        s.irbench("files-status", "pool", "status", CONFIG, "--name", "files")
        s.irbench("files-next-3", "pool", "next", CONFIG, "--name", "files", "-o",
                  "made/files-3.csv", "--batch", "10")  # handed out, not judged
        pairs = s.folder / "made" / "pairs.txt"
        pairs.write_text(deep_pairs(s.folder / "runs" / "demo" / "runs" / "groupB-2.txt"))
        with chat:
            s.irbench("judge-files", "judge", CONFIG, "--judge", "standin", "--pool", "files")
            s.irbench("judge-pairs", "judge", CONFIG, "--judge", "standin", "--pairs",
                      "made/pairs.txt", "--max-calls", "6")
            s.irbench("judge-pairs-rest", "judge", CONFIG, "--judge", "standin", "--pairs",
                      "made/pairs.txt")

        # a pool judged in the browser, with a model's suggestions
        s.irbench("web-start", "pool", "start", CONFIG, "--name", "web", "--strategy", "depth",
                  "--param", "k=3", "--per-group", "1")
        with chat:
            s.irbench("judge-web", "judge", CONFIG, "--judge", "standin", "--pool", "web")
    finally:
        chat.close()
    links = {}
    for name, extra in (("ann", ("--topics", "401,402,403")), ("bob", ("--topics", "402,403,404")),
                        ("org", ("--organiser",))):
        done = s.irbench(f"add-{name}", "assess", CONFIG, "--pool", "web", "--add-assessor",
                         name, *extra)
        links[name] = done.stdout.strip().rsplit(" ", 1)[1]
        token = links[name].rsplit("token=", 1)[1]
        s.subs.append((token, f"<TOKEN:{name}>"))
    assess_over_http(s, links, grades)
    s.irbench("qrels-web", "qrels", CONFIG, "--pool", "web", "-o", "made/web.qrels")
    s.irbench("web-status", "pool", "status", CONFIG, "--name", "web")
    s.irbench("judges", "judges", CONFIG)
    sets = ["made/standin.qrels", "made/human-first.qrels", "made/first.qrels",
            "made/web.qrels"]
    s.irbench("agreement", "agreement", "runs/demo/qrels.txt", *sets)
    s.irbench("agreement-per-topic", "agreement", "runs/demo/qrels.txt", "made/standin.qrels",
              "--per-topic", "--format", "csv")
    s.irbench("agreement-json", "agreement", "made/standin.qrels", "made/web.qrels",
              "--format", "json")
    config = s.folder / CONFIG
    text = config.read_text()
    anchor = "    depth5: ../runs/demo/qrels.depth5.txt\n"
    assert anchor in text, "the demo config's qrels changed"
    config.write_text(text.replace(anchor, anchor + "".join(
        f"    {Path(p).stem.replace('-', '_')}: ../{p}\n" for p in sets[:3])))
    s.irbench("run-again", "run", CONFIG, "--workers", "2")
    s.irbench("compare-qrels", "compare-qrels", CONFIG, "--measure", "AP", "--measure",
              "nDCG@10")
    s.irbench("compare-qrels-json", "compare-qrels", CONFIG, "--reference", "standin",
              "--format", "json", "--test", "wilcoxon")
    for path in sorted(made.rglob("*")):
        if path.is_file():
            target = files / path.relative_to(made)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def assess_over_http(s: Session, links: dict[str, str], grades) -> None:
    """``irbench assess`` as a process; ann and bob judge in a fixed order, org looks on."""
    port = free_port()
    s.subs.append((f"127.0.0.1:{port}", "127.0.0.1:<ASSESS_PORT>"))
    s.subs.append((f"irbench_assess_{port}", "irbench_assess_<ASSESS_PORT>"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "irbench", "assess", CONFIG, "--pool", "web", "--port",
         str(port), "--overlap", "0.5", "--suggest", "standin"], cwd=s.folder, env=s.env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    log: list[str] = []
    try:
        head = [read_line(proc, 120) for _ in range(1 + len(links))]
        wait_listening(proc, port)
        base = f"http://127.0.0.1:{port}"
        clients = {name: sign_in(base, link, log) for name, link in links.items()}
        try:
            judge_in_order(clients, grades, log)
            org = clients["org"]
            for path in ("/api/progress", "/qrels", "/"):
                answer = org.get(path)
                log.append(f"org GET {path} -> {answer.status_code}\n{answer.text}")
            answer = clients["ann"].get("/")
            log.append(f"ann GET / -> {answer.status_code}\n{answer.text}")
        finally:
            for client in clients.values():
                client.close()
    finally:
        rest = stop(proc)
    s.keep("assess-server", "$ irbench assess ... --pool web --overlap 0.5\n"
                            + "".join(head) + rest)
    s.keep("http", "\n".join(log) + "\n")


def sign_in(base: str, link: str, log: list[str]):
    """The personal link opened (the cookie set), then the page read for its CSRF token."""
    import httpx

    client = httpx.Client(base_url=base, follow_redirects=True, timeout=60)
    token = link.rsplit("token=", 1)[1]
    answer = client.get("/", params={"token": token})
    log.append(f"sign in {link} -> {answer.status_code}")
    if answer.status_code != 200:
        raise SystemExit(f"sign-in with {link}: {answer.status_code} {answer.text[:300]}")
    page = client.get("/")
    if page.status_code != 200:
        raise SystemExit(f"{link}: no page ({page.status_code})")
    found = re.search(r'name="csrf" content="([^"]+)"', page.text)  # an assessor's page
    if found:
        client.headers["X-CSRF-Token"] = found.group(1)
    return client


def shown(answer) -> str:
    """A JSON answer with each document's text as its length and sha256."""
    try:
        body = answer.json()
    except ValueError:
        return f"{answer.status_code} {answer.text}"
    item = body.get("item") if isinstance(body, dict) else None
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        text = item["text"]
        item["text"] = f"<{len(text)} chars, sha256 {hashlib.sha256(text.encode()).hexdigest()}>"
    return f"{answer.status_code} {json.dumps(body, sort_keys=True, ensure_ascii=False)}"


def judge_in_order(clients: dict, grades, log: list[str]) -> None:
    """Turns of ann then bob: next; on every 7th turn a skip, on the 5th and 12th a judgment
    undone and relabelled, else a judgment with the pair's label; 'seconds' fixed by turn."""
    def post(name: str, path: str, body: dict | None = None):
        answer = clients[name].post(path, json=body or {})
        log.append(f"{name} POST {path} {json.dumps(body or {}, sort_keys=True)}\n"
                   f"  -> {shown(answer)}")
        if answer.status_code != 200:
            raise SystemExit(f"{name} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json()["item"]

    items = {name: post(name, "/api/next") for name in ("ann", "bob")}
    for turn in range(1, 19):
        for name in ("ann", "bob"):
            item = items[name]
            if item is None:
                continue
            q, d = item["query_id"], item["doc_id"]
            grade = label(grades, q, d)
            if turn % 7 == 0:
                items[name] = post(name, "/api/skip", {"query_id": q, "doc_id": d})
                continue
            body = {"query_id": q, "doc_id": d, "relevance": grade, "seconds": 2.0 + turn % 5}
            items[name] = post(name, "/api/judge", body)
            if turn in (5, 12):
                again = post(name, "/api/undo")
                relabel = {"query_id": again["query_id"], "doc_id": again["doc_id"],
                           "relevance": (grade + 1) % len(LEVELS), "seconds": 1.5}
                items[name] = post(name, "/api/judge", relabel)


# ---- make and diff ----------------------------------------------------------------------------

def dump(store: Path, out: Path, root: Path, subs: list[tuple[str, str]],
         tokens: dict[str, str]) -> None:
    subprocess.run([sys.executable, str(COMPARE), "dump", str(store), str(out), "--root",
                    str(root)], check=True, timeout=TIMEOUT, stdout=subprocess.DEVNULL)
    hashed = {hashlib.sha256(t.encode()).hexdigest(): f"<SHA256(TOKEN:{n})>"
              for n, t in tokens.items()}
    for path in sorted(out.glob("*.csv")):
        text = original = path.read_text(encoding="utf-8")
        for old, new in [*subs, *hashed.items()]:
            text = text.replace(old, new)
        if text != original:
            path.write_text(text, encoding="utf-8")


def make(out: Path, code: Path, work: Path | None) -> int:
    code = code.resolve()
    if not (code / "irbench" / "__init__.py").is_file():
        raise SystemExit(f"{code}: not a checkout of irbench (no irbench/__init__.py)")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="irbench-judged-")) if work is None else work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    for folder in (work / "demo", work / "judged", work / "cache"):
        shutil.rmtree(folder, ignore_errors=True)
    for part in ("demo", "judged", "outputs"):
        shutil.rmtree(out / part, ignore_errors=True)
    (out / "outputs" / "files").mkdir(parents=True)
    demo = Session(code, work, work / "demo", "demo")
    judged = Session(code, work, work / "judged", "judged")
    found = subprocess.run([sys.executable, "-c", "import irbench; print(irbench.__file__)"],
                           cwd=work, env=demo.env, capture_output=True, text=True, check=True)
    if not Path(found.stdout.strip()).resolve().is_relative_to(code):
        raise SystemExit(f"irbench is imported from {found.stdout.strip()}, not {code}")
    print(f"irbench of {code} (commit {commit(code)}), work folder {work}", flush=True)
    try:
        make_demo(demo)
        make_judged(judged, out / "outputs" / "files")
    finally:
        demo.write(out / "outputs")
        judged.write(out / "outputs")
    dump(demo.folder / "runs" / "demo.duckdb", out / "demo", demo.folder, demo.subs, {})
    tokens = {old.strip(): new[len("<TOKEN:"):-1] for old, new in judged.subs
              if new.startswith("<TOKEN:")}
    dump(judged.folder / "runs" / "demo.duckdb", out / "judged", judged.folder, judged.subs,
         {name: token for token, name in tokens.items()})
    print(f"dumps and outputs in {out} ({time.monotonic() - started:.0f} s; work folder "
          f"{work} kept)", flush=True)
    return 0


def commit(code: Path) -> str:
    done = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "?"


def diff(a: Path, b: Path) -> int:
    differ = 0
    for part in ("demo", "judged"):
        print(f"== stores: {part}", flush=True)
        differ |= subprocess.run([sys.executable, str(COMPARE), "diff", str(a / part),
                                  str(b / part), "--lines", "12"]).returncode
    print("== outputs", flush=True)
    names = sorted({p.relative_to(a / "outputs") for p in (a / "outputs").rglob("*")
                    if p.is_file()} | {p.relative_to(b / "outputs")
                                       for p in (b / "outputs").rglob("*") if p.is_file()})
    same = 0
    for name in names:
        pa, pb = a / "outputs" / name, b / "outputs" / name
        if not pa.exists() or not pb.exists():
            print(f"{name}: only in {a if pa.exists() else b}")
            differ = 1
            continue
        if pa.read_bytes() == pb.read_bytes():
            same += 1
            continue
        differ = 1
        la = pa.read_text(encoding="utf-8", errors="replace").splitlines()
        lb = pb.read_text(encoding="utf-8", errors="replace").splitlines()
        shown = list(difflib.unified_diff(la, lb, n=0, lineterm=""))[2:]
        print(f"{name}: differs")
        print("\n".join("    " + line[:300] for line in shown[:20]))
        if len(shown) > 20:
            print(f"    ... {len(shown) - 20} more diff lines")
    print(f"{len(names)} output files compared, {len(names) - same} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make", help="build both campaigns with DIR's irbench and dump them")
    m.add_argument("out", type=Path)
    m.add_argument("--code", type=Path, required=True, help="a checkout of irbench")
    m.add_argument("--work", type=Path, help="the campaigns' folder (default: a new temporary "
                                             "one, kept)")
    d = sub.add_parser("diff", help="compare two OUT folders; exit 1 if they differ")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "make":
        return make(args.out, args.code, args.work)
    return diff(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
