"""``irbench compare``: which differences between a campaign's systems are significant.

Reads per-topic scores from the campaign's store and runs :func:`irbench.stats.compare`. The
handler returns an exit code; library errors propagate to ``cli.main``, which prints them.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
import sys

import numpy as np

from .. import judgments, stats
from ..config import load_config
from ..errors import UsageError
from ..escaping import csv_cell
from ..measures import parse_measure
from ..stats.choices import (
    ALL_PAIRS_TEST,
    ALTERNATIVES,
    CI_METHODS,
    COMPARE_TESTS,
    CORRECTIONS,
    DEFAULT_FAMILY,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    FAMILIES,
)
from .across import add_across, compare_across
from .output import add_wait, json_value, nonnegative_int, positive_int, text_table, write_text
from .selection import check_stored

FORMATS = ("table", "csv", "json", "latex")
COLUMNS = ("measure", "system_a", "system_b", "mean_a", "mean_b", "mean_diff", "ci_low",
           "ci_high", "effect_size", "hedges_g", "statistic", "p_value", "p_adjusted",
           "significant")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "compare", help="test which differences between systems are significant",
        description="Compare the systems of CONFIG on stored per-topic scores: every system "
        "against the baseline (--baseline, or the one system marked 'baseline: true'), else "
        "all pairs; one paired test per pair, p-values adjusted over the pairs of each measure "
        "(--family all: over all pairs of all measures). "
        f"Defaults: --test {DEFAULT_TEST} against a baseline and {ALL_PAIRS_TEST} for all "
        f"pairs, with {DEFAULT_SAMPLES:,} samples and seed "
        f"{DEFAULT_SEED} (recorded in the output), --correction holm, alpha 0.05, t-based 95% "
        "intervals; effect sizes are d_z (mean difference / sd of the differences) and Hedges' "
        "g. Run 'irbench run CONFIG' first.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--measure", action="append", default=[], metavar="MEASURE",
                   help="measure to compare on (repeatable; default: the config's first)")
    p.add_argument("--qrels", default=None, help="qrels set (default: the first in the config)")
    p.add_argument("--system", action="append", default=[], metavar="NAME",
                   help="only this system (repeatable; default: every system with scores)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--baseline", default=None, metavar="NAME",
                       help="compare every system with this one (default: the config's system "
                       "marked 'baseline: true' when there is exactly one, else all pairs)")
    which.add_argument("--all-pairs", action="store_true",
                       help="compare all pairs even if the config marks a baseline")
    p.add_argument("--test", choices=COMPARE_TESTS, default=None,
                   help=f"paired test, or a Tukey HSD over all pairs (default: {DEFAULT_TEST} "
                   f"against a baseline, {ALL_PAIRS_TEST} for all pairs of 3+ systems, whose "
                   "Holm-corrected randomisation p-values could not go below 1/(B+1))")
    p.add_argument("--samples", type=positive_int, default=DEFAULT_SAMPLES, metavar="B",
                   help="resamples of the randomisation and bootstrap tests and intervals "
                   f"(default {DEFAULT_SAMPLES:,}; exact enumeration when 2^topics <= B)")
    p.add_argument("--seed", type=nonnegative_int, default=DEFAULT_SEED,
                   help=f"random seed (default {DEFAULT_SEED})")
    p.add_argument("--correction", choices=CORRECTIONS, default=None,
                   help="multiple-comparison correction (default holm; none with the Tukey "
                   "tests, which control the family-wise error rate themselves)")
    p.add_argument("--family", choices=FAMILIES, default=DEFAULT_FAMILY,
                   help="the comparisons a correction covers: each measure's pairs (measure, "
                   "the default) or every pair of every measure (all; with a Tukey test, its "
                   "p-values times the number of measures)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided",
                   help="two-sided (default), greater (a > b) or less (a < b)")
    p.add_argument("--ci", choices=CI_METHODS, default="t",
                   help="confidence interval of the mean difference (default t)")
    p.add_argument("--common-topics", action="store_true",
                   help="keep only the topics every system has a score for (default: error)")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), csv, json or latex (booktabs, overview-paper style)")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    add_across(p)
    add_wait(p)
    p.set_defaults(handler=cmd_compare)


def _stored_systems(store, args, qrels: str, measure: str, declared: list[str]) -> list[str]:
    """The config's systems with stored scores (a warning names those without)."""
    stored, _, _ = store.score_matrix(qrels, measure)
    systems = [s for s in declared if s in set(stored)]
    missing = [s for s in declared if s not in set(stored)]
    if missing:
        print(f"irbench: warning: no stored {measure} scores for "
              f"{len(missing)} system{'s' if len(missing) > 1 else ''} "
              f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); "
              "left out", file=sys.stderr)
    if not systems:  # the store's systems are no longer in the config
        raise UsageError(f"no stored scores for measure '{measure}' on qrels "
                         f"'{qrels}' of a system of {args.config}; run 'irbench run "
                         f"{args.config}' first")
    return systems


def _baseline(args, config, order: list[str]) -> str | None:
    """--baseline, else the one system the config marks baseline (None with --all-pairs)."""
    baseline = None if args.all_pairs else args.baseline
    if baseline is None and not args.all_pairs:
        marked = [s.name for s in config.systems if s.baseline]
        if len(marked) == 1 and marked[0] in order:
            baseline = marked[0]
    if baseline is not None and baseline not in order:
        close = difflib.get_close_matches(baseline, order, n=3)
        raise UsageError(f"baseline '{baseline}' is not among the compared systems "
                         + (f"(did you mean {', '.join(close)}?)" if close else
                            f"({', '.join(order)})"))
    return baseline


def cmd_compare(args) -> int:
    if args.across:
        return compare_across(args)
    config = load_config(args.config, collection=args.collection, strict=False)
    spec = config.qrels_set(args.qrels)
    qrels = spec.name
    asked = [parse_measure(m) for m in args.measure]
    if not asked:
        if not config.measures:
            raise UsageError(f"{args.config} declares no measure; give --measure")
        asked = [(spec.measures(config.measures) or config.measures)[0]]
    measures = [str(m) for m in asked]
    scored = judgments.kind(spec.kind).scores  # a ranked run has no scores on support labels
    declared = [s.name for s in config.systems if s.kind in scored]
    from ..store import Store

    with Store(config.store, scope=config.scope, read_only=True, wait=args.wait) as store:
        check_stored(store, config, qrels, args.system, asked)
        systems = list(args.system) or _stored_systems(store, args, qrels, measures[0],
                                                       declared)
        scores = [stats.Scores.from_store(store, qrels, m, systems) for m in measures]
    if args.common_topics:
        scores = [s.common_topics() for s in scores]
    order = [scores[0].systems[i] for i in np.argsort(-scores[0].means, kind="stable")]
    scores = [s.select(order) for s in scores]
    baseline = _baseline(args, config, order)
    result = stats.compare(scores, baseline=baseline, test=args.test, correction=args.correction,
                     family=args.family, alternative=args.alternative, samples=args.samples,
                     seed=args.seed, alpha=args.alpha, ci=args.ci)
    for note in result.notes:
        print(f"irbench: warning: {note}", file=sys.stderr)
    write_text(args.output, FORMATTERS[args.format](result, qrels))
    return 0


# ---- formats -------------------------------------------------------------------------------


def _rows(result: stats.Comparison) -> list[tuple]:
    return [(p.measure, p.system_a, p.system_b, p.mean_a, p.mean_b, p.result.mean_diff,
             p.result.ci_low, p.result.ci_high, p.result.effect_size, p.result.hedges_g,
             p.result.statistic, p.result.p_value, p.p_adjusted, p.significant)
            for p in result.pairs]


def _settings(result: stats.Comparison, qrels: str) -> dict:
    first = result.pairs[0].result if result.pairs else None
    return {"qrels": qrels, "test": result.test, "samples": first.samples if first else None,
            "seed": first.seed if first else None, "exact": first.exact if first else False,
            "correction": result.correction, "family": result.family,
            "alternative": result.alternative, "alpha": result.alpha,
            "ci": first.ci_method if first else None,
            "confidence": first.confidence if first else None, "baseline": result.baseline}


def _groups(result: stats.Comparison, measure: str) -> list[list[str]]:
    if result.baseline is not None:
        return []
    return [list(g) for g in stats.equivalence_classes(result, measure)]


def _format_table(result: stats.Comparison, qrels: str) -> str:
    settings = _settings(result, qrels)
    how = stats.describe(result).replace("$\\alpha = ", "alpha ").replace("$", "")
    out = []
    for k, measure in enumerate(result.measures):
        pairs = result.for_measure(measure)
        against = f"against {result.baseline}" if result.baseline else "all pairs"
        out.append(f"{measure} on qrels '{qrels}': {len(result.systems)} systems x "
                   f"{result.topics[k]} topics, {against}; {how}")
        header = ("system_a", "system_b", "mean_a", "mean_b", "diff",
                  f"{settings['confidence']:.0%} "
                  f"{'simultaneous ci' if settings['ci'] == 'tukey' else 'ci'}",
                  "d_z", "g", "p", "p_adj", "sig")
        rows = [(p.system_a, p.system_b, _num(p.mean_a), _num(p.mean_b),
                 _num(p.result.mean_diff, signed=True),
                 f"[{_num(p.result.ci_low, signed=True)}, {_num(p.result.ci_high, signed=True)}]",
                 _num(p.result.effect_size, 2, True), _num(p.result.hedges_g, 2, True),
                 _p(p.result.p_value), _p(p.p_adjusted), "*" if p.significant else "")
                for p in pairs]
        out.append(text_table(header, rows, left=2, numbers_only=False))
        groups = _groups(result, measure)
        if groups:
            out.append(f"not significantly different from the best ({groups[0][0]}): "
                       f"{', '.join(groups[0])}")
        out.append("")
    return "\n".join(out)


def _num(value: float, digits: int = 4, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return "nan" if math.isnan(value) else (f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}")


def _format_csv(result: stats.Comparison, qrels: str) -> str:
    settings = _settings(result, qrels)
    extra = ("test", "correction", "alternative", "samples", "seed")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS + extra)
    for row in _rows(result):
        writer.writerow([csv_cell(v) for v in row] + [settings[k] for k in extra])
    return buf.getvalue()


def _format_json(result: stats.Comparison, qrels: str) -> str:
    measures = []
    for k, measure in enumerate(result.measures):
        measures.append({
            "measure": measure, "topics": result.topics[k],
            "means": {s: json_value(float(v)) for s, v in zip(result.systems, result.means[k])},
            "pairs": [{c: json_value(v) for c, v in zip(COLUMNS[1:], row[1:])}
                      for row in _rows(result) if row[0] == measure],
            "groups": _groups(result, measure),
        })
    doc = {"settings": _settings(result, qrels), "systems": list(result.systems),
           "notes": list(result.notes), "measures": measures}
    return json.dumps(doc, indent=1) + "\n"


def _format_latex(result: stats.Comparison, qrels: str) -> str:
    return stats.latex_table(result)


FORMATTERS = {"table": _format_table, "csv": _format_csv, "json": _format_json,
              "latex": _format_latex}
