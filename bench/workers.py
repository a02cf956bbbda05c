"""One benchmark measurement for a competitor, run by run_bench.py in a fresh process.

    python bench/workers.py TOOL SET QRELS RUN [RUN ...] [--warm [--warm-widths Q,R]] [--means FILE]

TOOL is ``pytrec_eval``, ``ir_measures`` or ``ranx``; SET is ``core`` or ``all_trec``. Each worker
does what a user of that library does: read the qrels and every run from disk with the library's
own reader (pytrec_eval has none, so the usual dict-of-dicts parsing in Python), build the
evaluator once where the library has one, evaluate each run to per-topic values, and average
them. The tool is imported here, so import time counts in the whole-process wall-clock.

``--warm`` (ranx only): first evaluate tiny in-memory runs (numba compilation or cache load;
``--warm-widths`` gives the docno widths to compile for), then time reading and evaluating inside
the process and print ``{"inproc_seconds": ...}``.
``--means FILE`` writes each run's mean values as JSON (for sanity checks; not used when timing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

# trec_eval -m names of the core set, and each library's names for the same measures.
CORE_TREC = ["map", "gm_map", "bpref", "infAP", "Rprec", "recip_rank", "P.10", "ndcg",
             "ndcg_cut.10", "recall.1000"]
CORE_PYTREC = ["map", "gm_map", "bpref", "infAP", "Rprec", "recip_rank", "P_10", "ndcg",
               "ndcg_cut_10", "recall_1000"]
# ir_measures has no GMAP.
CORE_IR_MEASURES = ["AP", "Bpref", "infAP", "Rprec", "RR", "P@10", "nDCG", "nDCG@10", "R@1000"]
# ranx has no GMAP or infAP.
CORE_RANX = ["map", "bpref", "mrr", "precision@10", "ndcg", "ndcg@10", "recall@1000",
             "r-precision"]


def read_qrels_dict(path: str) -> dict:
    qrels: dict = {}
    with open(path) as fh:
        for line in fh:
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run_dict(path: str) -> dict:
    run: dict = {}
    with open(path) as fh:
        for line in fh:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, {})[docno] = float(score)
    return run


def pytrec_eval_worker(measure_set: str, qrels_path: str, run_paths: list[str]) -> dict:
    import pytrec_eval

    measures = set(pytrec_eval.supported_measures) if measure_set == "all_trec" else set(CORE_PYTREC)
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels_dict(qrels_path), measures)
    means = {}
    for path in run_paths:
        per_topic = evaluator.evaluate(read_run_dict(path))
        names = next(iter(per_topic.values())).keys()
        means[path] = {
            m: pytrec_eval.compute_aggregated_measure(m, [v[m] for v in per_topic.values()])
            for m in names
        }
    return means


def ir_measures_worker(measure_set: str, qrels_path: str, run_paths: list[str]) -> dict:
    import ir_measures

    if measure_set != "core":
        raise SystemExit("ir_measures: only the core set is benchmarked")
    measures = [ir_measures.parse_measure(m) for m in CORE_IR_MEASURES]
    evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels_path))
    means = {}
    for path in run_paths:
        sums: dict = {}
        counts: dict = {}
        for metric in evaluator.iter_calc(ir_measures.read_trec_run(path)):
            key = str(metric.measure)
            sums[key] = sums.get(key, 0.0) + metric.value
            counts[key] = counts.get(key, 0) + 1
        means[path] = {k: sums[k] / counts[k] for k in sums}
    return means


def ranx_worker(measure_set: str, qrels_path: str, run_paths: list[str]) -> dict:
    from ranx import Qrels, Run, evaluate

    if measure_set != "core":
        raise SystemExit("ranx: only the core set is benchmarked")
    qrels = Qrels.from_file(qrels_path, kind="trec")
    means = {}
    for path in run_paths:
        run = Run.from_file(path, kind="trec")
        means[path] = {k: float(v) for k, v in evaluate(qrels, run, CORE_RANX).items()}
    return means


def ranx_warmup(qrels_width: int = 2, run_widths: tuple = (2,)) -> None:
    """Evaluate tiny in-memory runs so that everything the real files need is compiled.

    ranx converts docnos to numpy ``<U{longest docno}`` arrays, and numba compiles
    ``create_and_sort`` once per array width: the tiny runs use the real files' longest docno
    lengths (``--warm-widths``, measured by run_bench.py), else the first real call compiles.
    """
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_dict({"q1": {"d" * qrels_width: 1, "e": 0}, "q2": {"f": 2}})
    for width in run_widths:
        run = Run.from_dict({"q1": {"d" * width: 0.5, "e": 0.4, "g": 0.1}, "q2": {"f": 0.3}})
        evaluate(qrels, run, CORE_RANX)


WORKERS = {"pytrec_eval": pytrec_eval_worker, "ir_measures": ir_measures_worker,
           "ranx": ranx_worker}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="one benchmark measurement (see module docstring)")
    ap.add_argument("tool", choices=sorted(WORKERS))
    ap.add_argument("measure_set", choices=("core", "all_trec"))
    ap.add_argument("qrels")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--warm", action="store_true", help="ranx: warm up, then time in-process")
    ap.add_argument("--warm-widths", default="2,2", metavar="Q,R[,R...]",
                    help="ranx warm-up: longest docno in the qrels, then in each run")
    ap.add_argument("--means", default=None, help="write mean values per run to this JSON file")
    args = ap.parse_args(argv)
    if args.warm:
        if args.tool != "ranx":
            ap.error("--warm is for ranx")
        widths = [int(w) for w in args.warm_widths.split(",")]
        ranx_warmup(widths[0], tuple(sorted(set(widths[1:] or [2]))))
    t0 = time.perf_counter()
    means = WORKERS[args.tool](args.measure_set, args.qrels, args.runs)
    elapsed = time.perf_counter() - t0
    if args.warm:
        print(json.dumps({"inproc_seconds": elapsed}))
    if args.means:
        with open(args.means, "w") as fh:
            json.dump(means, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
