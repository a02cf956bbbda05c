"""Generate the benchmark's seeded synthetic data into bench/data/ (git-ignored).

Two workloads:

(a) ``campaign``: a TREC-8-ad-hoc-sized campaign, 129 runs x 50 topics (401-450) x 1,000
    documents (~250 MB), with TREC disk 4/5 style docnos (``FBIS3-12345``, ``FT934-5678``,
    ``LA010189-0001``, ``FR940104-0-00001``) and a qrels of ~1,700 judgments per topic graded
    0/1/2 (~95 relevant per topic). Runs retrieve judged documents (which score higher, as
    pooled documents do) and unjudged ones; some runs print few decimals, so scores tie.
(b) ``large``: one run of 7,000 topics x 1,000 documents (~245 MB) with MS MARCO style numeric
    ids and a qrels of ~20 judgments per topic graded 0/1/2.

``--quick`` writes a small version (12 runs; 700 topics) into bench/data/quick/ for development;
the full data goes to bench/data/full/. ``--huge`` writes only (b) at the size of issue 26's huge
run into bench/data/huge/large/: 20,000 topics x 1,000 documents (~750 MB) with ~100 judgments
per topic (~2,000,000 qrels lines). Same seed, same bytes.

    python bench/make_data.py            # full data (~500 MB, about a minute)
    python bench/make_data.py --quick    # small data (~45 MB)
    python bench/make_data.py --huge     # the huge run (~750 MB, a few minutes)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

FULL = {"runs": 129, "topics": 50, "depth": 1000, "large_topics": 7000}
QUICK = {"runs": 12, "topics": 50, "depth": 1000, "large_topics": 700}
HUGE = {"runs": 0, "topics": 0, "depth": 1000, "large_topics": 20000, "judged": (50, 151)}

# TREC-8 style run tags (no underscores, as most TREC tags): group prefix + variant.
_GROUPS = ["INQ", "att99", "Flab8", "ok8", "pir9", "CL99", "Sab8A", "UT8", "acsys8", "apl8",
           "cirtrc", "disco", "fub99", "GE8", "iit99", "isa", "kuadhoc", "mds08", "MITSLS",
           "nttd8", "orcl99", "READWARE", "tno8", "umd99", "unc8", "weaver", "uwmt8", "ibms99",
           "Mer8Adt", "cmu99", "ibmg99", "ric8", "surfahi", "tcs8", "uiowa99", "ucscav",
           "AntHoc", "BKYAHD", "fsclt8", "kdd8", "nttdh8", "plt8ah", "rutgers"]
_VARIANTS = ["a", "as", "at", "atd", "atde", "alx", "aq", "d", "dt", "m", "n", "t", "x", "1", "2",
             "3", "601", "602", "603", "604"]


def trec45_docnos() -> np.ndarray:
    """~528k docnos shaped like TREC disks 4 and 5 (FBIS, FT, LA Times, Federal Register)."""
    docs: list[str] = []
    docs += [f"FBIS3-{i}" for i in range(1, 61579)]
    docs += [f"FBIS4-{i}" for i in range(1, 69000)]
    for year in (91, 92, 93, 94):
        for part in (1, 2, 3, 4):
            docs += [f"FT{year}{part}-{i}" for i in range(1, 13101)]
    days = [(m, d) for m in range(1, 13) for d in range(1, 29)]  # 336 "days" a year
    for yy in (89, 90):
        for m, d in days:
            docs += [f"LA{m:02d}{d:02d}{yy}-{n:04d}" for n in range(1, 196)]
    for m, d in days[:250]:
        for part in (0, 1, 2):
            docs += [f"FR94{m:02d}{d:02d}-{part}-{n:05d}" for n in range(1, 74)]
    return np.array(docs, dtype=object)


def msmarco_docnos(n: int = 8_841_823) -> int:
    """MS MARCO passage ids are the integers 0..8,841,822; only the count is needed."""
    return n


def run_tags(n: int, rng: np.random.Generator) -> list[str]:
    tags: list[str] = []
    seen: set[str] = set()
    while len(tags) < n:
        tag = rng.choice(_GROUPS) + rng.choice(_VARIANTS)
        if tag not in seen:
            seen.add(tag)
            tags.append(tag)
    return tags


def write_lines(path: Path, lines: list[str]) -> None:
    with open(path, "w", encoding="ascii", newline="\n") as fh:
        fh.write("".join(lines))


def score_style(rng: np.random.Generator):
    """(scale, offset, decimals) of a run's printed scores; 2 decimals make many ties."""
    kind = rng.integers(0, 4)
    if kind == 0:   # BM25-like, 2 decimals: ties
        return 2.5, 12.0, 2
    if kind == 1:   # BM25-like, 4 decimals
        return 2.5, 12.0, 4
    if kind == 2:   # log-probability, 6 decimals
        return 0.8, -6.0, 6
    return 0.06, 0.5, 3  # probability-like, 3 decimals: ties


def choose(rng: np.random.Generator, latent: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` highest latent scores, best first."""
    if len(latent) > depth:
        top = np.argpartition(-latent, depth - 1)[:depth]
    else:
        top = np.arange(len(latent))
    return top[np.argsort(-latent[top], kind="stable")]


def format_topic(qid: str, docnos, scores: np.ndarray, decimals: int, tag: str,
                 rng: np.random.Generator) -> list[str]:
    printed = np.round(scores, decimals)
    # file order: by printed score descending, ties in an arbitrary (random) order
    order = np.lexsort((rng.random(len(printed)), -printed))
    fmt = f"{{:.{decimals}f}}"
    return [
        f"{qid} Q0 {docnos[i]} {rank} {fmt.format(printed[i])} {tag}\n"
        for rank, i in enumerate(order.tolist(), 1)
    ]


def make_campaign(out: Path, cfg: dict, rng: np.random.Generator) -> None:
    collection = trec45_docnos()
    n_coll = len(collection)
    topics = [str(401 + i) for i in range(cfg["topics"])]
    depth = cfg["depth"]
    (out / "runs").mkdir(parents=True, exist_ok=True)
    # qrels: ~1,700 judged per topic (1,200..2,200), ~95 relevant (a third of them level 2)
    judged_idx, judged_lvl, judged_mask = [], [], []
    lines: list[str] = []
    for qid in topics:
        n_judged = int(rng.integers(1200, 2201))
        idx = rng.choice(n_coll, n_judged, replace=False)
        n_rel = int(np.clip(rng.lognormal(np.log(80), 0.7), 8, 400))
        lvl = np.zeros(n_judged, dtype=np.int64)
        rel = rng.choice(n_judged, n_rel, replace=False)
        lvl[rel] = np.where(rng.random(n_rel) < 1 / 3, 2, 1)
        mask = np.zeros(n_coll, dtype=bool)
        mask[idx] = True
        judged_idx.append(idx)
        judged_lvl.append(lvl)
        judged_mask.append(mask)
        order = np.argsort(collection[idx].astype(str), kind="stable")
        lines += [f"{qid} 0 {collection[idx[i]]} {lvl[i]}\n" for i in order.tolist()]
    write_lines(out / "qrels.txt", lines)

    tags = run_tags(cfg["runs"], rng)
    for r, tag in enumerate(tags):
        skill = rng.uniform(0.3, 1.6)      # how well the run separates relevant documents
        pooled = rng.uniform(0.6, 1.4)     # how much judged documents outscore unjudged ones
        scale, offset, decimals = score_style(rng)
        lines = []
        for t, qid in enumerate(topics):
            extra = rng.integers(0, n_coll, 4 * depth)
            extra = np.unique(extra[~judged_mask[t][extra]])
            cand = np.concatenate((judged_idx[t], extra))
            level = np.concatenate((judged_lvl[t], np.zeros(len(extra), dtype=np.int64)))
            in_pool = np.concatenate((np.ones(len(judged_idx[t])), np.zeros(len(extra))))
            latent = skill * level + pooled * in_pool + rng.normal(size=len(cand))
            top = choose(rng, latent, depth)
            lines += format_topic(qid, collection[cand[top]], offset + scale * latent[top],
                                  decimals, tag, rng)
        write_lines(out / "runs" / f"input.{tag}", lines)
        if (r + 1) % 10 == 0 or r + 1 == len(tags):
            print(f"  campaign: {r + 1}/{len(tags)} runs", file=sys.stderr)


def make_large(out: Path, cfg: dict, rng: np.random.Generator) -> None:
    n_coll = msmarco_docnos()
    n_topics = cfg["large_topics"]
    depth = cfg["depth"]
    out.mkdir(parents=True, exist_ok=True)
    qids = np.sort(rng.choice(1_102_000, n_topics, replace=False)).astype(str)
    qrels_lines: list[str] = []
    run_lines: list[str] = []
    tag = "bm25mono"
    for t, qid in enumerate(qids.tolist()):
        n_judged = int(rng.integers(*cfg.get("judged", (10, 31))))  # ~20 per topic
        idx = rng.choice(n_coll, n_judged, replace=False)
        lvl = np.zeros(n_judged, dtype=np.int64)
        n_rel = int(rng.integers(1, 6))
        rel = rng.choice(n_judged, n_rel, replace=False)
        lvl[rel] = np.where(rng.random(n_rel) < 0.4, 2, 1)
        for i in np.argsort(idx.astype(str)).tolist():
            qrels_lines.append(f"{qid} 0 {idx[i]} {lvl[i]}\n")
        # candidates: some judged documents plus unjudged ones
        seen = rng.random(n_judged) < 0.7
        extra = np.unique(rng.integers(0, n_coll, 2 * depth))
        extra = extra[~np.isin(extra, idx)]
        cand = np.concatenate((idx[seen], extra))
        level = np.concatenate((lvl[seen], np.zeros(len(extra), dtype=np.int64)))
        in_pool = np.concatenate((np.ones(int(seen.sum())), np.zeros(len(extra))))
        latent = 1.2 * level + 1.0 * in_pool + rng.normal(size=len(cand))
        top = choose(rng, latent, depth)
        run_lines += format_topic(qid, cand[top], 14.0 + 2.5 * latent[top], 3, tag, rng)
        if (t + 1) % 1000 == 0:
            print(f"  large: {t + 1}/{n_topics} topics", file=sys.stderr)
    write_lines(out / "qrels.txt", qrels_lines)
    write_lines(out / "run.txt", run_lines)


def describe(path: Path) -> dict:
    files = [p for p in sorted(path.rglob("*")) if p.is_file() and p.name != "manifest.json"]
    total = sum(p.stat().st_size for p in files)
    return {"files": len(files), "bytes": total}


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small data into bench/data/quick/")
    ap.add_argument("--huge", action="store_true", help="only the huge run, into "
                    "bench/data/huge/large/")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--out", type=Path, default=None, help="output folder (default bench/data/full "
                    "or bench/data/quick)")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = args.out or (DATA / ("quick" if args.quick else "full"))
    if args.huge:
        out = args.out or DATA / "huge"
        t0 = time.perf_counter()
        make_large(out / "large", HUGE, np.random.default_rng(args.seed + 2))
        print(f"wrote {out / 'large'} in {time.perf_counter() - t0:.0f} s: "
              f"{count_lines(out / 'large' / 'run.txt'):,} run lines, "
              f"{count_lines(out / 'large' / 'qrels.txt'):,} qrels lines")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    make_campaign(out / "campaign", cfg, np.random.default_rng(args.seed))
    make_large(out / "large", cfg, np.random.default_rng(args.seed + 1))
    manifest = {"seed": args.seed, "config": cfg, "quick": args.quick}
    for name in ("campaign", "large"):
        info = describe(out / name)
        info["qrels_lines"] = count_lines(out / name / "qrels.txt")
        manifest[name] = info
    manifest["campaign"]["run_files"] = len(list((out / "campaign" / "runs").iterdir()))
    manifest["large"]["run_lines"] = count_lines(out / "large" / "run.txt")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    c, l = manifest["campaign"], manifest["large"]
    print(f"wrote {out} in {time.perf_counter() - t0:.0f} s")
    print(f"(a) campaign: {c['run_files']} runs x {cfg['topics']} topics x {cfg['depth']} docs, "
          f"{c['bytes'] / 1e6:.0f} MB in {c['files']} files; qrels {c['qrels_lines']:,} lines "
          f"({c['qrels_lines'] / cfg['topics']:.0f} per topic)")
    print(f"(b) large: 1 run x {cfg['large_topics']:,} topics x {cfg['depth']} docs "
          f"({l['run_lines']:,} lines), {l['bytes'] / 1e6:.0f} MB; qrels {l['qrels_lines']:,} "
          f"lines ({l['qrels_lines'] / cfg['large_topics']:.1f} per topic)")
    for name in ("campaign", "large"):
        for p in sorted((out / name).glob("*.txt")):
            print(f"    {p.relative_to(HERE.parent)}: {p.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
