"""Judging 10,000 support units (topic, sentence, cited segment) with a model support judge
against the local chat-completions stand-in (tests/chat_server.py ``--rule support``, in a
process of its own): irbench's own cost per call (issue 40; target < 1 ms, as for relevance).

The campaign: ``--units`` unique (sentence, segment) units, 20 a topic, in one answer run, and
a second run repeating a fifth of them (shared units, asked once). For each concurrency c:

- **irbench**: :func:`irbench.judges.support_units.judge_support` (the path of ``irbench judge
  --support``: answer runs read, units pooled, segments read, prompts rendered and hashed, the
  cache looked up, calls made, every answer journaled and folded into the store) on a fresh
  store, timed whole;
- **raw**: the same request bodies (rendered beforehand, not timed) posted by a bare httpx
  client with c threads: what any client pays.

overhead ms/call = (irbench - raw) / calls. Then a rerun on the filled store (every answer
cached: no call).

    python bench/bench_judge_support.py                 # 10,000 units, c = 8 and 32
    python bench/bench_judge_support.py --units 500 --levels 8   # a smoke run

Writes bench/results-judge-support.md (--out) unless --units is below 10,000.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PER_ANSWER = 20  # sentences (and references: the track allows 20) of an answer
OVERHEAD_TARGET_MS = 1.0
WORDS = ("port cargo river bridge tulip field rain city ship harbour crane canal dock "
         "market trade season farm boat tower road").split()


def make_campaign(folder: Path, units: int, base_url: str, concurrency: int) -> Path:
    """The answer runs, segments, topics and config (one support judge at ``base_url``)."""
    folder.mkdir(parents=True)
    topics = max(1, units // PER_ANSWER)
    (folder / "topics.tsv").write_text("".join(f"t{t}\ttopic {t}\n" for t in range(topics)))
    docs, lines_a, lines_b = [], [], []
    per_topic = units // topics
    for t in range(topics):
        sentences = []
        for i in range(per_topic):
            words = " ".join(WORDS[(i * 7 + k * 3 + t) % len(WORDS)] for k in range(8))
            docs.append(f"<DOC>\n<DOCNO>s{t}-{i}</DOCNO>\n<TITLE>Segment {t} {i}</TITLE>\n"
                        f"<TEXT>\nThe {words} report number {i} of topic {t}.\n</TEXT>\n</DOC>\n")
            sentences.append((f"Report {i} of topic {t} says {words}.", f"s{t}-{i}"))
        lines_a.append(_answer("runA", t, sentences))
        lines_b.append(_answer("runB", t, sentences[::5]))
    (folder / "docs.trec").write_text("".join(docs))
    (folder / "runA.jsonl").write_text("".join(lines_a))
    (folder / "runB.jsonl").write_text("".join(lines_b))
    (folder / "seed.jsonl").write_text(json.dumps({"topic_id": "t0", "run_id": "runA",
                                                   "sentences": []}) + "\n")
    config = {"name": "bench", "collection": {
        "topics": "topics.tsv", "documents": "docs.trec",
        "qrels": {"seed": {"path": "seed.jsonl", "kind": "support"}}},
        "suites": {"answers": ["support_precision"]},
        "systems": [{"name": r, "answers": f"{r}.jsonl", "format": "rag24"}
                    for r in ("runA", "runB")],
        "judges": {"sup": {"base_url": base_url, "model": "stand-in", "task": "support",
                           "concurrency": concurrency, "backoff": 0, "retries": 1}}}
    import yaml

    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _answer(run: str, topic: int, sentences: list[tuple[str, str]]) -> str:
    return json.dumps({"run_id": run, "topic_id": f"t{topic}", "topic": f"topic {topic}",
                       "references": [d for _, d in sentences], "response_length": 1,
                       "answer": [{"text": s, "citations": [i]}
                                  for i, (s, _) in enumerate(sentences)]}) + "\n"


class Server:
    """tests/chat_server.py --rule support in a process of its own."""

    def __init__(self, env: dict[str, str]):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.chat_server", "--port", "0", "--rule", "support"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.process.kill()
            raise RuntimeError(f"the chat server did not start: {self.process.stderr.read()}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        found = re.search(r"stopped after (\d+) completions", err)
        if found is None:
            raise RuntimeError(f"the chat server said: {err}")
        return int(found.group(1))


def irbench_run(config_path: Path) -> dict:
    from irbench.config import load_config
    from irbench.documents import open_documents
    from irbench.judges import support_units
    from irbench.store import Store

    config = load_config(str(config_path), strict=False)
    spec = config.judges["sup"]
    calls = [0.0]
    judge_pairs = support_units.judge_pairs

    def timed(*args, **kwargs):  # the calls phase: cache, HTTP, journal, folds
        began = time.perf_counter()
        try:
            return judge_pairs(*args, **kwargs)
        finally:
            calls[0] += time.perf_counter() - began

    support_units.judge_pairs = timed
    start = time.perf_counter()
    try:
        with Store(config.store) as store, open_documents(config.documents) as documents:
            summary = support_units.judge_support(config, spec, support_units.RunUnits(),
                                                  store=store, documents=documents)
    finally:
        support_units.judge_pairs = judge_pairs
    return {"seconds": time.perf_counter() - start, "calls": calls[0], "asked": summary.asked,
            "answered": summary.answered, "cached": summary.cached}


def raw_run(config_path: Path) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from irbench.config import load_config
    from irbench.documents import open_documents
    from irbench.judges.judging import JudgingSummary
    from irbench.judges.support_units import RunUnits, build_support_requests
    from irbench.topics import read_topics

    config = load_config(str(config_path), strict=False)
    spec = config.judges["sup"]
    with open_documents(config.documents) as documents:
        requests = build_support_requests(
            spec.prompt.compile(), spec, RunUnits().units(config, False),
            read_topics(config.topics).statement, documents, JudgingSummary(), False)
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
    return {"seconds": time.perf_counter() - start, "answered": len(answers)}


def measure(work: Path, units: int, concurrency: int, env: dict[str, str]) -> dict:
    server = Server(env)
    try:
        config = make_campaign(work / f"c{concurrency}", units, server.base_url, concurrency)
        raw = raw_run(config)
        ours = irbench_run(config)
        again = irbench_run(config)
    finally:
        calls = server.stop()
    assert ours["answered"] == ours["asked"] == raw["answered"], (ours, raw)
    assert again["cached"] == ours["asked"] and calls == 2 * ours["asked"], (again, calls)
    n = ours["asked"]
    return {"c": concurrency, "units": n, "irbench": ours["seconds"], "raw": raw["seconds"],
            "phase": ours["calls"], "cached": again["seconds"],
            "overhead_ms": (ours["calls"] - raw["seconds"]) / n * 1000,
            "whole_ms": (ours["seconds"] - raw["seconds"]) / n * 1000}


def report(rows: list[dict]) -> str:
    lines = ["# Support judging against the stand-in (bench/bench_judge_support.py)", "",
             f"{rows[0]['units']:,} support units (two answer runs, a fifth of the units shared "
             "and asked once), the stand-in in its own process; one run each.", "",
             "| c | irbench whole s | its calls phase s | raw s | overhead ms/call (calls "
             "phase) | whole ms/call over raw | rerun, all cached s |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['c']} | {r['irbench']:.2f} | {r['phase']:.2f} | {r['raw']:.2f} | "
              f"{r['overhead_ms']:.3f} | {r['whole_ms']:.3f} | {r['cached']:.2f} |"
              for r in rows]
    lines += ["", "The calls phase is judge_pairs (cache lookup, HTTP, journal appends, folds "
              "into the store), as bench/bench_judging.py measures relevance; the whole adds "
              "reading the answer runs, pooling the units, reading the segments and rendering "
              "and hashing the prompts (which the raw client is given ready)."]
    worst = max(r["overhead_ms"] for r in rows)
    lines += ["", f"Target: overhead < {OVERHEAD_TARGET_MS} ms per call: "
              + ("met" if worst < OVERHEAD_TARGET_MS else "NOT met") + f" (worst {worst:.3f}).",
              "", f"Machine: {platform.platform()}, Python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs (the server shares them)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--units", type=int, default=10_000)
    p.add_argument("--levels", type=int, nargs="+", default=[8, 32])
    p.add_argument("--out", default=str(ROOT / "bench" / "results-judge-support.md"))
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="irbench-bench-support-"))
    env = {**os.environ, "IRBENCH_CACHE_DIR": str(work / "cache")}
    os.environ["IRBENCH_CACHE_DIR"] = env["IRBENCH_CACHE_DIR"]
    try:
        rows = [measure(work, args.units, c, env) for c in args.levels]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(rows)
    print(text)
    if args.units >= 10_000 and args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
