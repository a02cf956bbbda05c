"""Benchmark of the reproducibility measures (issue 42): 100 run pairs (an original run and its
reproduction), 50 topics x 1000 documents each, scores rounded so ties are common, 10% of a
reproduction's ranks holding other documents.

Times, in one process, best of --reps after a warm-up (CPU and wall seconds), target < 2 s:

1. irbench.stats.repro for the 100 pairs: ranking each pair once (:func:`rank_pair`), KTU at
   cutoffs 10, 100 and 1000, RBO (p = 0.95) at the same cutoffs, and, from the per-topic scores
   of 4 measures, RMSE and nRMSE, the paired and the unpaired t-test for every pair and ER and
   Delta RI for the 50 (baseline, advanced) experiments the pairs make (pair 2i the baseline,
   2i + 1 the advanced run). Scoring the runs (``irbench.evaluate``) is not timed here;
2. repro_eval 0.5.0 on the same values for the first --oracle-pairs pairs (its RBO is a Python
   loop over ranks with set intersections: hours for 100 pairs), run files read with its
   ``load_run`` untimed, then scaled to 100 pairs.

Writes bench/results-repro.md.

    python bench/bench_repro.py            # ~1-2 min on 2 cores
    git archive ef49d60 irbench | tar -x -C /tmp/before
    python bench/bench_repro.py --before /tmp/before   # and the 'before' columns
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import irbench
from irbench.stats import repro
from irbench.trec import Run

PAIRS, TOPICS, DOCS, POOL = 100, 50, 1000, 3000
CUTOFFS = (10, 100, 1000)
MEASURES = ("P@10", "nDCG@20", "AP", "RR")
HERE = Path(__file__).parent


def _run(name: str, topic_ids: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> Run:
    order = np.argsort(-scores, axis=1, kind="stable")  # each topic by descending score
    docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    n = scores.size
    return Run(name=name, runid=name, query_id=np.repeat(topic_ids, docs.shape[1]),
               doc_id=docs.ravel(), score=scores.ravel(), line=np.arange(1, n + 1))


def make_pairs(seed: int = 0, decimals: int = 3):
    """(qrels, [(original Run, reproduced Run)] * PAIRS), made with whole arrays; scores
    rounded to ``decimals`` (1: most documents tie with another)."""
    rng = np.random.default_rng(seed)
    topic_ids = np.array([f"{400 + t}".encode() for t in range(TOPICS)])
    vocab = np.array([f"clueweb-{j:07d}".encode() for j in range(POOL)])
    gain = rng.integers(0, 3, (TOPICS, POOL)) * (rng.random((TOPICS, POOL)) < 0.15)
    judged = rng.random((TOPICS, POOL)) < 0.4
    t, j = np.nonzero(judged)
    qrels = irbench.read_qrels([(topic_ids[a].decode(), vocab[b].decode(), int(gain[a, b]))
                                for a, b in zip(t, j)])
    pairs = []
    for p in range(PAIRS):
        score = gain + rng.normal(0, 1.0 + (p % 2) * 0.5, (TOPICS, POOL))
        ranked = np.argsort(-score, axis=1)
        picked, others = ranked[:, :DOCS], ranked[:, DOCS:]
        again = picked.copy()
        swap = rng.random(picked.shape) < 0.1  # other documents (unretrieved ones) there
        nth = np.cumsum(swap, axis=1) - 1
        again[swap] = others[np.nonzero(swap)[0], nth[swap]]
        original = _run(f"o{p}", topic_ids, vocab[picked],
                        np.round(np.take_along_axis(score, picked, 1), decimals))
        noisy = np.take_along_axis(score, again, 1) + rng.normal(0, 0.3, again.shape)
        reproduced = _run(f"r{p}", topic_ids, vocab[again], np.round(noisy, decimals))
        pairs.append((original, reproduced))
    return qrels, pairs


def irbench_measures(pairs, scores) -> int:
    n = 0
    for original, reproduced in pairs:
        pair = repro.rank_pair(original, reproduced)
        for depth in CUTOFFS:
            n += len(repro.ktu(pair, depth).values) + len(repro.rbo(pair, depth).values)
    for i in range(len(pairs)):
        o, r = scores[i]
        for m in MEASURES:
            repro.closeness(o, r, m)
            repro.t_test(o, r, m)
            repro.t_test(o, r, m, paired=False)
            n += 3
    for i in range(0, len(pairs) - 1, 2):
        for m in MEASURES:
            repro.effect(scores[i][0], scores[i + 1][0], scores[i][1], scores[i + 1][1], m)
            n += 1
    return n


def _write(run: Run, path: Path) -> None:
    with path.open("w") as out:
        out.writelines(f"{q.decode()} Q0 {d.decode()} 0 {s} x\n"
                       for q, d, s in zip(run.query_id, run.doc_id, run.score))


def _nested(ev) -> dict:
    columns = {m: ev[m] for m in MEASURES}
    return {t: {m: float(v[i]) for m, v in columns.items()} for i, t in enumerate(ev.topics)}


def repro_eval_measures(paths, scores) -> float:
    """Seconds repro_eval takes for the same values on len(paths) pairs (reading untimed)."""
    from repro_eval.measure import document_order, effectiveness, overall_effects
    from repro_eval.measure import statistics as re_stats
    from repro_eval.util import load_run

    took = 0.0
    for (po, pr), (o, r) in zip(paths, scores):
        for depth in CUTOFFS:
            runs = [load_run(str(po)), load_run(str(pr)), load_run(str(po)), load_run(str(pr))]
            start = time.perf_counter()
            document_order.KTU(runs[0], runs[1], trim_thresh=depth, per_topic=True)
            document_order.RBO(runs[2], runs[3], p=0.95, depth=depth, pbar=False, per_topic=True)
            took += time.perf_counter() - start
        no, nr = _nested(o), _nested(r)
        start = time.perf_counter()
        effectiveness.RMSE(no, nr)
        effectiveness.nRMSE(no, nr)
        re_stats.ttest(no, nr, rpd=True)
        re_stats.ttest(no, nr, rpd=False)
        overall_effects.ER(no, no, nr, nr)  # half the experiments' count: one per two pairs
        overall_effects.DRI(no, no, nr, nr)
        took += time.perf_counter() - start
    return took


def _best(reps: int, work) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process) of ``reps`` runs of ``work``."""
    wall = cpu = float("inf")
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    return wall, cpu


def _ktu_1000(ranked) -> None:
    for pair in ranked:
        repro.ktu(pair, 1000)


def irbench_timings(reps: int) -> dict:
    """{"3" / "1" (score decimals): {part: (wall, CPU)}} of irbench.stats.repro, and the
    pairs and scores of 3 decimals for the oracle."""
    timed, kept = {}, None
    for decimals in (3, 1):
        qrels, pairs = make_pairs(decimals=decimals)
        prepared = irbench.PreparedQrels(qrels)
        scores = [tuple(irbench.evaluate(prepared, run, MEASURES) for run in pair)
                  for pair in pairs]
        irbench_measures(pairs[:2], scores[:2])  # warm-up
        ranked = [repro.rank_pair(o, r) for o, r in pairs]
        _ktu_1000(ranked)  # the rankings' cached columns, made once, are not KTU's time
        timed[str(decimals)] = {
            "all": _best(reps, lambda: irbench_measures(pairs, scores)),
            "rank_pair": _best(reps, lambda: [repro.rank_pair(o, r) for o, r in pairs]),
            "ktu_1000": _best(reps, lambda: _ktu_1000(ranked))}
        if decimals == 3:
            kept = (pairs, scores)
    return {"timed": timed, "kept": kept}


def _before(source: str, reps: int) -> dict:
    """The same timings of the irbench package in ``source`` (an older checkout), in a
    subprocess importing it instead of the installed (editable) one."""
    code = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if not "
            "getattr(f, '__module__', '').startswith('__editable__')]; "
            f"sys.path.insert(0, {source!r}); "
            f"sys.argv = [{__file__!r}, '--timings-only', '--reps', '{reps}']; "
            f"runpy.run_path({__file__!r}, run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=1800)
    got = json.loads(out.stdout.splitlines()[-1])
    if not Path(got["irbench"]).resolve().is_relative_to(Path(source).resolve()):
        raise SystemExit(f"--before {source}: imported {got['irbench']} instead")
    return got


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


ROWS = (("all", "3", "irbench.stats.repro, everything (target < 2 s)"),
        ("rank_pair", "3", "of which ranking the pairs once (rank_pair)"),
        ("ktu_1000", "3", "KTU at cutoff 1000 (within everything)"),
        ("all", "1", "everything, scores to 1 decimal (most documents tied)"),
        ("rank_pair", "1", "of which rank_pair"),
        ("ktu_1000", "1", "KTU at cutoff 1000"))


def _table(timed: dict, before: dict | None) -> list[str]:
    head = "| what | CPU s | wall s |"
    rule = "|---|---:|---:|"
    if before:
        head = "| what | before CPU s | before wall s | CPU s | wall s |"
        rule = "|---|---:|---:|---:|---:|"
    lines = [head, rule]
    for part, decimals, label in ROWS:
        wall, cpu = timed[decimals][part]
        cells = f"{cpu:.3f} | {wall:.3f} |"
        if before and part in before[decimals]:
            b_wall, b_cpu = before[decimals][part]
            cells = f"{b_cpu:.3f} | {b_wall:.3f} | " + cells
        elif before:
            cells = "- | - | " + cells
        lines.append(f"| {label} | {cells}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--oracle-pairs", type=int, default=3)
    parser.add_argument("--before", metavar="SOURCE",
                        help="also time the irbench package in SOURCE (e.g. `git archive "
                             "ef49d60 irbench | tar -x -C /tmp/before`), the 'before' columns")
    parser.add_argument("--timings-only", action="store_true",
                        help="print irbench's timings as JSON and stop (used by --before)")
    args = parser.parse_args()
    load_start = os.getloadavg()
    got = irbench_timings(args.reps)
    if args.timings_only:
        print(json.dumps({"timed": got["timed"], "irbench": irbench.__file__}))
        return
    timed = got["timed"]
    before = _before(args.before, args.reps)["timed"] if args.before else None
    pairs, scores = got["kept"]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = []
        for i, (o, r) in enumerate(pairs[:args.oracle_pairs]):
            paths.append((Path(tmp) / f"o{i}", Path(tmp) / f"r{i}"))
            _write(o, paths[-1][0])
            _write(r, paths[-1][1])
        oracle = repro_eval_measures(paths, scores[:args.oracle_pairs])
    scaled = oracle / args.oracle_pairs * PAIRS
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    best_wall, best_cpu = timed["3"]["all"]
    tied_wall, tied_cpu = timed["1"]["all"]
    met = max(best_cpu, tied_cpu) < 2
    lines = [
        "# Reproducibility measures (issue 42)", "",
        f"Produced by `python bench/bench_repro.py{' --before SOURCE' if before else ''}` on "
        f"{now}: {_cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}. Load average (1, 5, 15 min) at the start: "
        f"{', '.join(f'{x:.2f}' for x in load_start)}; at the end: "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} (the machine is shared: wall "
        "seconds count other processes' time too, CPU seconds are this process's).", "",
        f"{PAIRS} run pairs (original, reproduction), {TOPICS} topics x {DOCS} documents; "
        f"KTU and RBO (p = 0.95) at cutoffs {', '.join(map(str, CUTOFFS))}; RMSE, nRMSE, "
        f"paired and unpaired t-tests of {len(MEASURES)} measures per pair; ER and Delta RI "
        f"of {PAIRS // 2} (baseline, advanced) experiments; scores to 3 decimals (ties "
        f"remain) unless said. Best of {args.reps}."
        + (" Before: the same script importing the irbench of SOURCE (the commit before "
           "issue 42's speed-up, ef49d60), in a subprocess." if before else ""), "",
        *_table(timed, before), "",
        f"| repro_eval 0.5.0, the same on {args.oracle_pairs} pairs (wall s) | {oracle:.2f} |",
        "|---|---:|",
        f"| repro_eval 0.5.0 scaled to {PAIRS} pairs | {scaled:.0f} |", "",
        "repro_eval's times exclude reading the run files (its `load_run`); most of its time "
        "is RBO's loop over ranks with set intersections (quadratic in the depth).", "",
        f"Target < 2 s (CPU, both score roundings): {'met' if met else 'missed'}. rank_pair "
        "codes each docno once per pair (rows grouped by a hash of their docno's varying "
        "words, only the distinct docnos sorted), sorts tied scores by those integer codes "
        "and numbers the (topic, docno) keys through a bitmap; KTU's discordant pairs take "
        "one int32 pass per high bit of the ranks and compare groups of 16 ranks directly.", ""]
    (HERE / "results-repro.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
