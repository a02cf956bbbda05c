"""``irbench compare CONFIG --across``: which system is better across the collections of a
config with ``collections:`` (:func:`irbench.stats.across.across` on each collection's stored
per-topic scores), as a table, CSV, JSON or LaTeX."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..config import load_configs
from ..errors import UsageError
from ..escaping import csv_cell
from ..measures import parse_measure
from .output import json_value, text_table, write_text

if TYPE_CHECKING:  # the comparison (scipy, DuckDB) is imported when --across runs
    from ..stats.across import Across

EFFECTS = ("raw", "smd")


def add_across(p) -> None:
    """``irbench compare``'s options for ``--across``."""
    p.add_argument("--across", action="store_true",
                   help="compare the systems across every collection of a config with "
                   "collections: the systems x collections table, mean and mean rank, each "
                   "system against the baseline per collection (p-values adjusted over every "
                   "collection), win/tie/loss, and a random-effects meta-analysis per system "
                   "(the stats extra)")
    p.add_argument("--effect", choices=EFFECTS, default="raw",
                   help="with --across: the effect per collection the meta-analysis combines: "
                   "raw (the mean difference, default) or smd (standardised, Hedges-corrected)")


def compare_across(args) -> int:
    """``irbench compare CONFIG --across``."""
    if args.collection is not None:
        raise UsageError("--across compares every collection: not with --collection")
    if args.all_pairs or args.system or args.test == "tukey":
        raise UsageError("--across compares every system with the baseline: not with "
                         "--all-pairs, --system or a Tukey test")
    from ..notebook import compare_views, default_measure

    views = load_configs(args.config, strict=False)
    measure = str(parse_measure(args.measure[0])) if args.measure else \
        default_measure(views, args.qrels)
    result = compare_views(views, measure, qrels=args.qrels, baseline=args.baseline,
                           test=args.test, correction=args.correction, alpha=args.alpha,
                           effect=args.effect, samples=args.samples, seed=args.seed,
                           wait=args.wait)
    for note in result.notes:
        print(f"irbench: warning: {note}", file=sys.stderr)
    write_text(args.output, ACROSS_FORMATS[args.format](result))
    return 0


def _num(value: float, digits: int = 4) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _mark(result: Across, system, collection: str) -> str:
    """A collection's cell: the mean, with + (significantly better than the baseline) or -
    (worse)."""
    j = result.collections.index(collection)
    cell = next((t for t in system.tests if t.collection == collection), None)
    sign = {"win": " +", "loss": " -"}.get(cell.outcome, "") if cell else ""
    return _num(system.means[j]) + sign


def as_table(result: Across) -> str:
    header = ["system", *result.collections, "mean", "mean rank"]
    meta = result.baseline is not None
    if meta:
        header += ["W/T/L", "effect", "95% ci", "p", "I^2"]
    costs = any(s.seconds_per_topic is not None for s in result.systems)
    if costs:  # systems given as commands: what making their runs cost
        header += ["s/topic", "peak MiB"]
    rows = []
    for s in result.systems:
        row = [s.name, *(_mark(result, s, c) for c in result.collections), _num(s.mean),
               _num(s.mean_rank, 2)]
        if meta:
            m = s.meta
            row += ["baseline" if s.name == result.baseline else f"{s.wins}/{s.ties}/{s.losses}",
                    _num(m.effect) if m else "-",
                    f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]" if m else "-",
                    _num(m.p_value) if m else "-", _num(m.i2, 2) if m else "-"]
        if costs:
            row += [_num(s.seconds_per_topic, 3) if s.seconds_per_topic is not None else "-",
                    f"{s.peak_rss_bytes / 2**20:.0f}" if s.peak_rss_bytes is not None else "-"]
        rows.append(row)
    head = (f"{result.measure} across {len(result.collections)} collections"
            + (f"; against {result.baseline}: {result.test} test per collection, "
               f"{result.correction} over {sum(len(s.tests) for s in result.systems)} "
               "comparisons, alpha "
               f"{result.alpha:g} (+ better, - worse); random-effects meta-analysis of the "
               f"{result.effect} difference (DerSimonian-Laird)" if meta else
               " (no baseline: --baseline NAME, or mark one in the config)"))
    return head + "\n" + text_table(header, rows) + "\n"


def as_csv(result: Across) -> str:
    from ..notebook import COLUMNS, records

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for record in records(result):
        writer.writerow([_csv(record.get(k)) for k in COLUMNS])
    return buf.getvalue()


def _csv(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else csv_cell(str(value))


def as_json(result: Across) -> str:
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return json_value(value)
    return json.dumps(clean(asdict(result)), ensure_ascii=False, indent=1) + "\n"


def as_latex(result: Across) -> str:
    """A booktabs table: the means per collection (significant wins bold, losses italic),
    mean, mean rank, and the meta-analysis's effect with its interval."""
    from ..stats.latex import escape_latex

    cols = "l" + "r" * (len(result.collections) + 2) + ("rr" if result.baseline else "")
    head = ["System", *(escape_latex(c) for c in result.collections), "Mean", "Rank"]
    if result.baseline:
        head += ["W/T/L", "Effect [95\\% CI]"]
    lines = [f"\\begin{{tabular}}{{{cols}}}", "\\toprule", " & ".join(head) + " \\\\",
             "\\midrule"]
    for s in result.systems:
        cells = [escape_latex(s.name)]
        for j, c in enumerate(result.collections):
            cell = next((t for t in s.tests if t.collection == c), None)
            value = _num(s.means[j])
            cells.append(f"\\textbf{{{value}}}" if cell and cell.outcome == "win" else
                         f"\\textit{{{value}}}" if cell and cell.outcome == "loss" else value)
        cells += [_num(s.mean), _num(s.mean_rank, 2)]
        if result.baseline:
            m = s.meta
            cells += ["--" if s.name == result.baseline else f"{s.wins}/{s.ties}/{s.losses}",
                      f"{m.effect:+.4f} [{m.ci_low:+.4f}, {m.ci_high:+.4f}]" if m else "--"]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


ACROSS_FORMATS = {"table": as_table, "csv": as_csv, "json": as_json, "latex": as_latex}
