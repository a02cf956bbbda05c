"""The judgment-reduction table of Buckley & Voorhees (2004) on a simulated campaign: Kendall's
tau of AP, bpref, bpref-10, infAP, condensed AP and nDCG' at 100% ... 3% of each topic's
judgments, against the same measure and against MAP on the full judgments, for both designs.

    python bench/bench_reduction.py        # writes bench/results-reduction.md

The campaign comes from `irbench simulate` (seeded): 50 topics, 12 groups x 4 runs of 1,000
documents, qrels from a depth-100 pool of each group's first two runs, so half of the runs were
not pooled, as in a TREC ad hoc track.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from irbench import read_qrels, read_run  # noqa: E402
from irbench.analyses.reduction import DESIGNS, FRACTIONS, MEASURES, judgment_reduction  # noqa: E402
from irbench.ranked import EvalOptions  # noqa: E402
from irbench.simulate import CampaignSpec, simulate  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=12)
    ap.add_argument("--runs-per-group", type=int, default=4)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2004)
    ap.add_argument("-o", "--output", type=Path, default=HERE / "results-reduction.md")
    args = ap.parse_args()
    spec = CampaignSpec(groups=args.groups, runs_per_group=args.runs_per_group,
                        topics=args.topics, depth=1000, pool_depth=100, pooled_runs=2,
                        grades=3, collection_size=500_000, seed=args.seed)
    lines = ["# Judgment reduction on a simulated campaign", "",
             f"`python bench/bench_reduction.py`: `irbench simulate` seed {spec.seed}, "
             f"{spec.topics} topics, {spec.groups} groups x {spec.runs_per_group} runs of "
             f"{spec.depth} documents, qrels from a depth-{spec.pool_depth} pool of each "
             f"group's first {spec.pooled_runs} runs; 5 seeds averaged; relevance level 1.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        result = simulate(spec, tmp)
        runs = [read_run(str(r.path), name=r.name) for r in result.runs]
        qrels = read_qrels(str(result.qrels_path))
        lines.append(f"{len(runs)} runs, {len(qrels):,} judgments "
                     f"({int((qrels.relevance >= 1).sum()):,} relevant).")
        for design in DESIGNS.values():
            started = time.perf_counter()
            red = judgment_reduction(runs, qrels, EvalOptions(complete=True), design=design.name)
            seconds = time.perf_counter() - started
            lines += ["", f"## {design.name}: {design.description}", "",
                      f"{design.citation}. Computed in {seconds:.1f} s.", ""]
            for title, table in (("tau against the same measure on all judgments", red.tau),
                                 ("tau against MAP on all judgments", red.tau_map)):
                lines += [f"**{title}**", "",
                          "| measure | " + " | ".join(f"{f:.0%}" for f in FRACTIONS) + " |",
                          "|---|" + "---:|" * len(FRACTIONS)]
                for name, row in zip(red.measures, table):
                    lines.append(f"| {name} | " + " | ".join(f"{t:.3f}" for t in row) + " |")
                lines.append("")
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    assert MEASURES  # the measures of the report's section
    sys.exit(main())
