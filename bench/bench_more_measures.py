"""Benchmark: the measures of issue 8 on workload (b), one run of 7,000 topics x 1,000 documents.

    python bench/bench_more_measures.py [--data bench/data/full] [--out FILE] [--reps 3]

Reads ``large/run.txt`` and ``large/qrels.txt`` from the data folder (``python
bench/make_data.py`` writes them; ``--data bench/data/quick`` uses the 700-topic version) and
derives, with a fixed seed, a diversity qrels (2 to 6 subtopics a topic; every judged document
judged for every subtopic, a relevant one relevant to 1 to 3 of them; ~560,000 lines for the
full data) and a known-documents qrels (half the relevant documents plus some unjudged ones),
written to a temporary folder. Times are in-process wall-clock medians of ``--reps``
repetitions, phase by phase, the run read once. A baseline of existing kernels (AP, nDCG@10,
P@10) shows what "in line with the other kernels" means. Prints a markdown table (or writes it
to ``--out``). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from irbench import EvalOptions, PreparedQrels, rank_run, read_qrels, read_run  # noqa: E402
from irbench.judgments.diversity import PreparedDiversity, read_diversity_qrels  # noqa: E402
from irbench.judgments.known import PreparedKnown  # noqa: E402
from irbench.measures import parse_measure  # noqa: E402
from irbench.measures.compute import compute  # noqa: E402

HERE = Path(__file__).resolve().parent
BASELINE = ["AP", "nDCG@10", "P@10"]
AD_HOC = ["Q", "Q@10", "nERR@20", "BEP", "Accuracy"]
DIVERSITY = [f"{f}@{k}" for f in ("alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "S_recall")
             for k in (5, 10, 20)]
KNOWN = ["Coverage", "Novelty"]
COLLECTION_SIZE = 8_841_823  # MS MARCO passages, as make_data.py's ids


def timed(fn, reps):
    times, result = [], None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def write_side_qrels(qrels, folder: Path, seed: int = 8) -> tuple[Path, Path]:
    """A diversity qrels and a known-documents qrels derived from ``qrels``."""
    rng = np.random.default_rng(seed)
    topics, inverse = np.unique(qrels.query_id, return_inverse=True)
    subs = rng.integers(2, 7, len(topics))
    n_sub = subs[inverse]
    relevant = qrels.relevance > 0
    lines = []
    # every judged document once per subtopic of its topic
    rep = np.repeat(np.arange(len(qrels)), n_sub)
    sub = np.arange(len(rep)) - np.repeat(np.cumsum(n_sub) - n_sub, n_sub) + 1
    # a relevant document: relevant to 1..3 of its topic's subtopics (always at least one)
    width = np.minimum(rng.integers(1, 4, len(qrels)), n_sub)
    first = rng.integers(0, n_sub)
    offset = (sub - 1 - first[rep]) % n_sub[rep]
    rel = np.where(relevant[rep] & (offset < width[rep]), qrels.relevance[rep], 0)
    q, d = qrels.query_id[rep], qrels.doc_id[rep]
    lines = b"".join(b"%s %d %s %d\n" % row for row in zip(q, sub, d, rel))
    div_path = folder / "diversity.qrels"
    div_path.write_bytes(lines)
    keep = relevant & (rng.random(len(qrels)) < 0.5)
    extra_topic = rng.choice(topics, len(topics) * 2)
    extra_doc = rng.integers(10**8, 10**9, len(extra_topic)).astype(str).astype(bytes)
    known = [b"%s 0 %s 1\n" % row for row in zip(qrels.query_id[keep], qrels.doc_id[keep])]
    known += [b"%s 0 %s 1\n" % row for row in zip(extra_topic, extra_doc)]
    known_path = folder / "known.qrels"
    known_path.write_bytes(b"".join(known))
    return div_path, known_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(HERE / "data" / "full"))
    ap.add_argument("--out", help="write the markdown table here (default: stdout)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    large = Path(args.data) / "large"
    if not (large / "run.txt").exists():
        print(f"no {large}/run.txt: run python bench/make_data.py first", file=sys.stderr)
        return 1
    reps = args.reps
    folder = Path(tempfile.mkdtemp(prefix="irbench-more-"))
    rows: list[tuple[str, float]] = []

    t_run, run = timed(lambda: read_run(large / "run.txt"), 1)
    t_qrels, qrels = timed(lambda: read_qrels(large / "qrels.txt"), reps)
    div_path, known_path = write_side_qrels(qrels, folder)
    options = EvalOptions(collection_size=COLLECTION_SIZE)
    rows.append(("read the run (once)", t_run))
    rows.append(("read the ad hoc qrels", t_qrels))

    t_prep, prepared = timed(lambda: PreparedQrels(qrels), reps)
    t_rank, ranked = timed(lambda: rank_run(run, prepared, options), reps)
    rows += [("prepare qrels", t_prep), ("rank the run", t_rank)]

    def measure_time(names, make_ranked):
        # a fresh ranking each time, so cached intermediates are not reused across reps
        measures = [parse_measure(n) for n in names]

        def once():
            r = make_ranked()
            start = time.perf_counter()
            values, _ = compute(r, measures)
            return time.perf_counter() - start, values

        spent = [once() for _ in range(reps)]
        return statistics.median(s for s, _ in spent), spent[-1][1]

    t_base, _ = measure_time(BASELINE, lambda: rank_run(run, prepared, options))
    rows.append((f"baseline kernels: {', '.join(BASELINE)}", t_base))
    t_new, _ = measure_time(AD_HOC, lambda: rank_run(run, prepared, options))
    rows.append((f"new kernels: {', '.join(AD_HOC)}", t_new))

    t_dread, dqrels = timed(lambda: read_diversity_qrels(div_path), reps)
    t_dprep, dprepared = timed(lambda: PreparedDiversity(dqrels), reps)
    t_drank, _ = timed(lambda: dprepared.rank(run, options), reps)
    rows += [(f"read the diversity qrels ({len(dqrels):,} lines)", t_dread),
             ("prepare diversity qrels", t_dprep),
             ("rank the run against them (with intent columns)", t_drank)]
    dprepared = PreparedDiversity(dqrels)  # greedy ideals computed in the first timed rep
    t_first, _ = measure_time(DIVERSITY, lambda: PreparedDiversity(dqrels).rank(run, options))
    t_div, _ = measure_time(DIVERSITY, lambda: dprepared.rank(run, options))
    families = ", ".join(name.split("@")[0] for name in DIVERSITY[::3])
    rows.append((f"diversity kernels, 15 measures ({families} at 5, 10, 20), "
                 "greedy ideals included", t_first))
    rows.append(("the same, ideals already computed (a second run on the same qrels)", t_div))

    known = read_qrels(known_path)
    t_kprep, kprepared = timed(lambda: PreparedKnown(qrels, known), reps)
    t_krank, _ = timed(lambda: kprepared.rank(run, options), reps)
    t_known, _ = measure_time(KNOWN, lambda: kprepared.rank(run, options))
    rows += [("prepare qrels + known documents", t_kprep),
             ("rank the run against them (with known column)", t_krank),
             (f"kernels: {', '.join(KNOWN)}", t_known)]

    lines = [
        "# Benchmark: Q, nERR, BEP, Accuracy, diversity, coverage/novelty\n",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}. Workload (b): {run.query_id.size:,} run lines, "
        f"{len(prepared.topics):,} topics, {len(qrels):,} qrels lines; medians of {reps}.\n",
        "| phase | seconds |", "|---|---:|",
    ]
    lines += [f"| {name} | {seconds:.3f} |" for name, seconds in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
