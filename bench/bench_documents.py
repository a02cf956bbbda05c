"""Document lookups by docno (irbench.documents) on a generated TREC SGML collection: the index
build (time, rate, peak RSS) and 10,000 random docnos looked up, with one get_many call and
with 10,000 get calls, on a new Documents object (its index files evicted from the page cache
first, and not) and on a warm one; median of --reps repetitions. Build and lookups each run in
a process of their own, so that their peak RSS is theirs.

    python bench/bench_documents.py                       # ~1 GB in a temporary folder
    python bench/bench_documents.py --size-mb 50 --dir /tmp/docs   # a quick run

The collection (seeded) is kept in --dir and reused by a later run with the same size and seed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from irbench.documents import DocumentsSpec, open_documents  # noqa: E402
from irbench.documents.hashing import sha256_file  # noqa: E402
from irbench.documents.index import HASHES, LENGTHS, OFFSETS, TEXTS  # noqa: E402

PER_BLOCK = 10_000  # docnos FT<block>-<n>, like the Financial Times' FT911-3


def docno(k: int) -> str:
    return f"FT{k // PER_BLOCK:03d}-{k % PER_BLOCK}"


def word_pool(rng: np.random.Generator, size: int) -> str:
    """``size`` characters of Zipf-distributed pseudo-words, an entity among them."""
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    vocabulary = ["".join(rng.choice(letters, size=int(n))) for n in rng.integers(2, 11, 20000)]
    vocabulary[7] = "&amp;"
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    words = rng.choice(len(vocabulary), size=size // 5, p=weights / weights.sum())
    return " ".join(vocabulary[i] for i in words)[:size]


def snippet(pool: str, rng: random.Random, low: int, high: int) -> str:
    start = rng.randrange(len(pool) - high)
    start = pool.find(" ", start) + 1
    end = pool.rfind(" ", start, start + rng.randint(low, high))
    return pool[start:end if end > start else start + low]


def document(k: int, pool: str, rng: random.Random) -> str:
    paragraphs = "\n".join(f"<P>\n{snippet(pool, rng, 200, 900)}\n</P>"
                           for _ in range(rng.randint(2, 6)))
    return (f"<DOC>\n<DOCNO> {docno(k)} </DOCNO>\n<PROFILE>_AN-BEOA7{k:06d}</PROFILE>\n"
            f"<DATE>9{k % 3}0{k % 9 + 1}1{k % 10}\n</DATE>\n<HEADLINE>\n"
            f"{snippet(pool, rng, 30, 120)}\n</HEADLINE>\n<BYLINE>By {snippet(pool, rng, 8, 20)}"
            f"</BYLINE>\n<TEXT>\n{paragraphs}\n</TEXT>\n<PUB>The Bench Times</PUB>\n</DOC>\n")


def generate(folder: Path, size_mb: int, file_mb: int, seed: int) -> dict:
    """The collection's description (files, documents), written first if not there."""
    marker = folder / "collection.json"
    wanted = {"size_mb": size_mb, "file_mb": file_mb, "seed": seed}
    if marker.exists():
        made = json.loads(marker.read_text())
        if made["params"] == wanted and all(Path(p).exists() for p in made["paths"]):
            return made
    folder.mkdir(parents=True, exist_ok=True)
    pool = word_pool(np.random.default_rng(seed), 8 << 20)
    rng = random.Random(seed)
    paths, k, total = [], 0, size_mb << 20
    started = time.perf_counter()
    while total > 0:
        path = folder / f"ft{len(paths):03d}.sgml"
        with open(path, "w", encoding="utf-8") as fh:
            written, batch = 0, []
            while written < min(file_mb << 20, total):
                doc = document(k, pool, rng)
                batch.append(doc)
                written += len(doc)
                k += 1
                if len(batch) == 1000:
                    fh.write("".join(batch))
                    batch = []
            fh.write("".join(batch))
        total -= written
        paths.append(str(path))
    made = {"params": wanted, "paths": paths, "documents": k,
            "bytes": sum(os.path.getsize(p) for p in paths),
            "seconds": time.perf_counter() - started}
    marker.write_text(json.dumps(made))
    return made


def child_build(made: dict, cache: str) -> dict:
    hashed = time.perf_counter()
    for path in made["paths"]:
        sha256_file(path)
    hashed = time.perf_counter() - hashed
    started = time.perf_counter()
    with open_documents(DocumentsSpec(paths=tuple(made["paths"])), cache=cache) as docs:
        assert docs.built and len(docs) == made["documents"], (docs.built, len(docs))
    return {"seconds": time.perf_counter() - started, "sha256_seconds": hashed}


def evict(folder: str) -> None:
    """The index files dropped from the page cache (posix_fadvise), so the next reads go to
    the disk, or at least past the page cache."""
    for name in (TEXTS, HASHES, OFFSETS, LENGTHS):
        fd = os.open(os.path.join(folder, name), os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def child_lookups(made: dict, cache: str, reps: int, count: int, seed: int) -> dict:
    spec = DocumentsSpec(paths=tuple(made["paths"]))
    rng = random.Random(seed + 1)
    times: dict[str, list[float]] = {}
    for _ in range(reps):
        asked = [docno(rng.randrange(made["documents"])) for _ in range(count)]
        for mode in ("get_many", "get"):
            def lookups(docs):
                if mode == "get_many":
                    got = docs.get_many(asked)
                else:
                    got = [docs.get(d) for d in asked]
                assert [d.docno for d in got] == asked
            for fresh in ("evicted", "new"):
                if fresh == "evicted":
                    with open_documents(spec, cache=cache) as docs:
                        evict(docs.source.folder)
                started = time.perf_counter()
                with open_documents(spec, cache=cache) as docs:
                    opened = time.perf_counter() - started
                    took = timed(lambda: lookups(docs))
                    times.setdefault(f"open ({fresh})", []).append(opened)
                    times.setdefault(f"{mode}, new object ({fresh})", []).append(took)
                    if fresh == "new":
                        times.setdefault(f"{mode}, warm object", []).append(
                            timed(lambda: lookups(docs)))
        times.setdefault("text bytes read", []).append(
            sum(len(d.text) for d in open_documents(spec, cache=cache).get_many(asked)))
    return {name: statistics.median(values) for name, values in times.items()}


def run_child(argv: list[str]) -> tuple[dict, float]:
    """(what the child printed, its peak RSS in MiB)."""
    proc = subprocess.Popen([sys.executable, __file__, *argv], stdout=subprocess.PIPE)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child {argv[:2]} failed")
    return json.loads(out), usage.ru_maxrss / 1024


def total_memory() -> str:
    try:
        with open("/proc/meminfo") as fh:
            kib = int(fh.readline().split()[1])
    except (OSError, ValueError, IndexError):
        return "memory unknown"
    return f"{kib / 2**20:.0f} GiB of memory"


def write_results(path: Path, args, made: dict, built: dict, build_rss: float, looked: dict,
                  lookup_rss: float) -> None:
    mb = made["bytes"] / 2**20
    index = sum(f.stat().st_size for f in Path(args.cache, "documents").rglob("*")
                if f.is_file() and "stamps" not in f.parts) / 2**20
    rows = "\n".join(f"| {name} | {seconds * 1000:.0f} ms |" for name, seconds in looked.items()
                     if name != "text bytes read")
    path.write_text(f"""# Document lookups by docno (irbench.documents)

`python bench/bench_documents.py --size-mb {args.size_mb}` on {os.cpu_count()} CPUs
({platform.processor() or platform.machine()}, {total_memory()}, Python
{platform.python_version()}, numpy {np.__version__}); the collection and the index on the
local disk.

Collection: {len(made['paths'])} TREC SGML files, {mb:,.0f} MiB, {made['documents']:,}
documents (generated, seed {args.seed}). Index in the cache folder: {index:,.0f} MiB.

## Index build (once per collection)

| | |
|---|---:|
| open_documents, index built (sha256 of the files included; one process, one core) | {built['seconds']:.1f} s |
| rate | {mb / built['seconds']:.0f} MiB/s, {made['documents'] / built['seconds']:,.0f} documents/s |
| of which sha256 of the files (measured apart) | {built['sha256_seconds']:.1f} s |
| peak RSS of the building process | {build_rss:.0f} MiB |

## {args.lookups:,} random docnos, median of {args.reps}

"evicted": a new Documents object after posix_fadvise(DONTNEED) on the index files, so
the records are read from the disk (or whatever the virtual machine's host caches); "new": a
new Documents object, page cache warm; "warm object": the same lookups again on that object.
get_many asks the kernel for all its records at once (posix_fadvise WILLNEED) before reading
them; 10,000 get calls read one record at a time. "open" is open_documents when the index
exists (stat the files, read their stamps, map the index arrays).
{looked['text bytes read'] / 2**20:.1f} MiB of text per {args.lookups:,} documents.

| | |
|---|---:|
{rows}

Peak RSS of the lookup process (all repetitions, {args.reps * 5} Documents objects opened):
{lookup_rss:.0f} MiB.
""")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--file-mb", type=int, default=128)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lookups", type=int, default=10_000)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--child", choices=("build", "lookups"), default=None)
    parser.add_argument("-o", "--output", type=Path,
                        default=ROOT / "bench" / "results-documents.md")
    args = parser.parse_args()
    if args.child:
        made = json.loads(Path(args.dir, "collection.json").read_text())
        out = (child_build(made, args.cache) if args.child == "build" else
               child_lookups(made, args.cache, args.reps, args.lookups, args.seed))
        print(json.dumps(out))
        return 0
    args.dir = args.dir or Path(tempfile.mkdtemp(prefix="irbench-documents-"))
    made = generate(args.dir, args.size_mb, args.file_mb, args.seed)
    print(f"collection: {made['bytes'] / 2**20:,.0f} MiB, {made['documents']:,} documents")
    args.cache = args.cache or str(args.dir / "cache")
    shutil.rmtree(args.cache, ignore_errors=True)
    common = ["--dir", str(args.dir), "--cache", args.cache]
    built, build_rss = run_child(["--child", "build", *common])
    print(f"build: {built['seconds']:.1f} s, peak RSS {build_rss:.0f} MiB")
    looked, lookup_rss = run_child(["--child", "lookups", *common, "--reps", str(args.reps),
                                    "--lookups", str(args.lookups), "--seed", str(args.seed)])
    for name, value in looked.items():
        print(f"{name}: {value:.3f}")
    write_results(args.output, args, made, built, build_rss, looked, lookup_rss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
