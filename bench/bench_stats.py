"""Benchmark of irbench.stats against ranx on a TREC-sized campaign: all pairs of 129 systems x 50
topics (8,256 pairs).

Times, in one process and one run (wall clock, best of --reps after a warm-up):

1. irbench ``compare(test="randomization", samples=10_000)`` over all pairs, Holm-corrected,
   result objects included (target: under 10 s on two cores), and its kernel alone (one
   sign-flip matrix times the topics x pairs difference matrix);
2. irbench ``randomized_tukey_hsd(samples=10_000)``;
3. for reference, irbench's t-test and Tukey HSD over all pairs;
4. ranx's ``fisher_randomization_test`` with 10,000 permutations (numba, compiled before
   timing), on --ranx-pairs pairs, extrapolated to all pairs (or all of them with
   --ranx-pairs 0), and ranx's ``tukey_hsd_test`` (scipy's one-way Tukey HSD: no topic
   blocking, no randomisation).

Data: AP per topic of the 129 runs of bench/make_data.py's campaign (evaluated once with irbench
and cached in bench/data/), or seeded synthetic scores with --synthetic (timings do not depend
on the values). Writes bench/results-stats.md.

    python bench/bench_stats.py            # ~6 min on 2 cores, 4 of them in ranx's Tukey HSD
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CAMPAIGN = HERE / "data" / "full" / "campaign"
CACHE = HERE / "data" / "stats-ap.npz"
SAMPLES = 10_000


def campaign_scores(synthetic: bool):
    from irbench import stats

    if not synthetic and CAMPAIGN.exists():
        if not CACHE.exists():
            import irbench

            measure = irbench.parse_measure("AP")
            runs = sorted((CAMPAIGN / "runs").iterdir())
            rows, topics = [], None
            for run in runs:
                ev = irbench.evaluate(str(CAMPAIGN / "qrels.txt"), str(run), [measure],
                                      complete=True)
                topics = list(ev.topics)
                rows.append(np.asarray(ev[measure], dtype=np.float64))
            np.savez(CACHE, systems=np.array([r.name for r in runs]), topics=np.array(topics),
                     values=np.array(rows))
        data = np.load(CACHE)
        return (stats.Scores("AP", data["systems"].tolist(), data["topics"].tolist(),
                             data["values"]), "AP of the 129 runs of bench/make_data.py")
    rng = np.random.default_rng(20261122)
    m, n = 129, 50
    v = np.clip(rng.beta(1.2, 4, (1, n)) + rng.normal(0, 0.04, (m, 1))
                + rng.normal(0, 0.08, (m, n)), 0, 1)
    return (stats.Scores("AP", [f"run{i:03d}" for i in range(m)], [f"{401 + j}" for j in range(n)],
                         v), "synthetic AP-like scores (seeded)")


def best_of(fn, reps: int) -> tuple[float, object]:
    fn()  # warm-up
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ranx-pairs", type=int, default=200,
                    help="pairs timed with ranx, extrapolated to all (0: all pairs)")
    ap.add_argument("--synthetic", action="store_true", help="seeded synthetic scores")
    ap.add_argument("--no-ranx-tukey", action="store_true",
                    help="skip ranx's tukey_hsd_test (about 4 minutes)")
    ap.add_argument("--out", default=str(HERE / "results-stats.md"))
    args = ap.parse_args(argv)

    from irbench import stats
    from irbench.stats.resampling import randomization_p, sign_flips

    scores, source = campaign_scores(args.synthetic)
    m, n = scores.values.shape
    a, b = np.triu_indices(m, 1)
    pairs = len(a)
    rows = []

    t, comp = best_of(lambda: stats.compare(scores, test="randomization", samples=SAMPLES,
                                            seed=0, correction="holm"), args.reps)
    rows.append(("irbench `compare`, randomisation, 10,000 samples, all pairs + Holm", t))
    D = (scores.values[a] - scores.values[b]).T

    def kernel():
        return randomization_p(D, sign_flips(n, SAMPLES, 0), "two-sided")

    t_kernel, p_kernel = best_of(kernel, args.reps)
    rows.append(("irbench kernel only (sign flips x differences)", t_kernel))
    t, tk = best_of(lambda: stats.randomized_tukey_hsd(scores, samples=SAMPLES, seed=0),
                    args.reps)
    rows.append(("irbench `randomized_tukey_hsd`, 10,000 samples", t))
    t, _ = best_of(lambda: stats.compare(scores, test="t"), args.reps)
    rows.append(("irbench `compare`, paired t-test, all pairs + Holm", t))
    t, _ = best_of(lambda: stats.tukey_hsd(scores), args.reps)
    rows.append(("irbench `tukey_hsd` (two-way ANOVA, topic-blocked)", t))

    ranx_rows, agreement = [], ""
    try:
        from ranx.statistical_tests import fisher_randomization_test, tukey_hsd_test
    except ImportError:
        ranx_rows.append(("ranx not installed", float("nan")))
    else:
        v = scores.values
        fisher_randomization_test(v[0], v[1], 10, 0.05, 42)  # compile
        k = pairs if args.ranx_pairs <= 0 else min(args.ranx_pairs, pairs)
        pick = np.random.default_rng(0).choice(pairs, size=k, replace=False)
        ranx_p = np.empty(k)
        t0 = time.perf_counter()
        for i, j in enumerate(pick):
            ranx_p[i], _ = fisher_randomization_test(v[a[j]], v[b[j]], SAMPLES, 0.05, 42)
        t = time.perf_counter() - t0
        label = ("ranx `fisher_randomization_test`, 10,000 permutations, all pairs" if k == pairs
                 else f"ranx `fisher_randomization_test`, 10,000 permutations, {k} pairs "
                      f"timed, x {pairs / k:.1f} for all pairs")
        ranx_rows.append((label, t * pairs / k))
        diff = np.abs(ranx_p - p_kernel[pick])
        agreement = (f"On the {k} pairs timed with ranx, |p_irbench - p_ranx| is at most "
                     f"{diff.max():.4f} (mean {diff.mean():.4f}): both sample 10,000 "
                     "permutations with different generators; ranx reports b/B (0 possible), "
                     "irbench (b+1)/(B+1).")
        if not args.no_ranx_tukey:
            t0 = time.perf_counter()
            tukey_hsd_test(scores.systems, list(v), 0.05)
            ranx_rows.append(("ranx `tukey_hsd_test` (scipy one-way Tukey HSD, not blocked, "
                              "not randomised)", time.perf_counter() - t0))

    compare_time = rows[0][1]
    ranx_time = ranx_rows[0][1]
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    lines = [
        "# Statistics benchmark: irbench.stats against ranx",
        "",
        f"{dt.date.today().isoformat()}; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}, OpenBLAS threads: "
        f"{threads}. Produced by `python bench/bench_stats.py` (best of {args.reps} after a "
        "warm-up, one process, the same run for both libraries).",
        "",
        f"Data: {source}, {m} systems x {n} topics = {pairs:,} pairs.",
        "",
        "| what | seconds |",
        "|---|---:|",
        *[f"| {what} | {sec:.2f} |" for what, sec in rows + ranx_rows],
        "",
        f"All pairs with a 10,000-sample randomisation test: irbench {compare_time:.2f} s "
        f"(target: under 10 s), ranx {ranx_time:.0f} s: **{ranx_time / compare_time:.0f}x**.",
        "",
        agreement,
        "",
        f"Randomised Tukey HSD: {int((tk.p_values[a, b] <= 0.05).sum()):,} of {pairs:,} pairs "
        f"significant at 0.05; randomisation test + Holm: "
        f"{sum(p.significant for p in comp.pairs):,} "
        f"(with {pairs:,} comparisons Holm needs p < {0.05 / pairs:.1e}, below the "
        f"1/{SAMPLES + 1:,} floor of a 10,000-sample test"
        + ("; irbench says so in `Comparison.notes`)." if comp.notes else ")."),
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
