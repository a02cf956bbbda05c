"""``irbench judge-eval CONFIG --reference SET``: how far to trust each judge of a campaign,
its labels and the leaderboards they give against a reference set's
(:func:`irbench.stats.evaluate_judges`)."""

from __future__ import annotations

import csv
import io
import json
import sys
from typing import Any

from ..escaping import csv_cell, json_text
from .output import add_wait, json_value, nonnegative_int, positive_int, text_table, write_text

FORMATS = ("table", "json", "csv")
MOVES_SHOWN = 5
PAIRS_SHOWN = 5


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "judge-eval", help="how far to trust each judge: labels and leaderboards against a "
        "reference set",
        description="Every other label set of CONFIG (--judge: only these) against the "
        "reference set (--reference, default the config's first), as TREC's AutoJudge track "
        "scores judges. Sets of another kind family are skipped with a note (document "
        "judgments go with document judgments, support labels with support labels, per run "
        "or shared, nugget assignments with nugget assignments). For each: agreement of the "
        "labels on the keys both judged (Cohen's kappa unweighted and linear, Krippendorff's "
        "alpha ordinal, the confusion matrix, as 'irbench agreement'); on every measure of "
        "the config's suites both score (measures that read no label left out), the two "
        "leaderboards the store holds (as 'irbench compare-qrels': Kendall's tau, tau_AP, "
        "Spearman's rho, the top-k overlap, the largest rank changes, significant "
        "differences that appear or vanish); and for a judge whose model is known (the "
        "set's model: in the config, else the models alone that judged a set 'irbench "
        "qrels' wrote) the self-preference check: the systems whose metadata, ir_metadata "
        "or description names the model (case-insensitive, the name or its last part after "
        "'/'), their mean rank gain under the judge against the others', and a one-sided "
        "permutation p-value (exact when there are at most --samples ways to pick them, "
        "else --samples draws with --seed). Run 'irbench run CONFIG' first.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--reference", default=None, metavar="SET",
                   help="the reference label set, e.g. the assessors' (default: the "
                   "config's first qrels set)")
    p.add_argument("--judge", action="append", default=[], metavar="SET",
                   help="only this set (repeatable; default: every other set)")
    p.add_argument("--measure", action="append", default=[], metavar="MEASURE",
                   help="only this measure (repeatable; default: every measure of the "
                   "suites both sets score)")
    p.add_argument("--top", action="append", type=positive_int, default=[], metavar="K",
                   help="top-k overlap (repeatable; default 5 and 10)")
    p.add_argument("--test", default="t", choices=("t", "wilcoxon", "sign", "randomization",
                                                   "bootstrap"),
                   help="paired test of every pair of systems (default t)")
    p.add_argument("--correction", default="holm",
                   choices=("none", "bonferroni", "holm", "bh", "by"),
                   help="correction over the pairs of each measure (default holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--samples", type=positive_int, default=10_000, metavar="B",
                   help="permutations of the self-preference check and resamples of the "
                   "resampling tests (default 10,000)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (default 0)")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), json (with the confusion matrices and every "
                   "system's ranks) or csv (a row per judge and measure)")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    add_wait(p)
    p.set_defaults(handler=cmd_judge_eval)


def cmd_judge_eval(args) -> int:
    from .. import stats
    from ..config import load_config
    from ..measures import parse_measure
    from ..store import READER_WAIT, Store
    from .agreement import scored_labels

    config = load_config(args.config, collection=args.collection, strict=False, systems=False)
    measures = [str(parse_measure(m)) for m in args.measure]
    wait = args.wait if args.wait is not None else READER_WAIT
    with Store(config.store, scope=config.scope, read_only=True, wait=wait) as store:
        result = stats.evaluate_judges(
            config, store, args.reference, judges=args.judge, measures=measures,
            labels=lambda spec, kind: scored_labels(spec, store, args.config, kind),
            top=args.top, test=args.test,
            correction=args.correction, alpha=args.alpha, samples=args.samples,
            seed=args.seed)
    for note in result.notes:
        print(f"irbench: note: {note}", file=sys.stderr)
    write_text(args.output, FORMATTERS[args.format](result))
    return 0


# ---- formats -------------------------------------------------------------------------------


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _models(models) -> str:
    return ", ".join(models)


def _pairs(pairs) -> str:
    if not pairs:
        return "none"
    shown = ", ".join(f"{a} > {b}" for a, b in pairs[:PAIRS_SHOWN])
    return shown + (f" and {len(pairs) - PAIRS_SHOWN} more" if len(pairs) > PAIRS_SHOWN
                    else "")


def _moves(c) -> str:
    return ", ".join(f"{m.system} {m.rank_a} -> {m.rank_b}" for m in c.moves[:MOVES_SHOWN]
                     if m.rank_a != m.rank_b) or "none"


def _labels_line(r) -> str:
    return (f"  labels: {r.pairs:,} {r.compared} both judged ({r.only_reference:,} by "
            f"{r.reference} only, {r.only_other:,} by {r.other} only): agreed "
            f"{r.agreed:.4f}, kappa {r.kappa:.4f}, linear {r.kappa_linear:.4f}, "
            f"alpha ordinal {r.alpha_ordinal:.4f}")


def _preference_line(p) -> str:
    named = ", ".join(f"{m.system} {m.rank_a} -> {m.rank_b}" for m in p.named)
    how = "exact" if p.exact else f"{p.samples:,} permutations, seed {p.seed}"
    return (f"  self-preference on {p.measure} ({_models(p.models)}): {named}; mean rank "
            f"gain {p.gain_named:+.2f} against {p.gain_others:+.2f} for the others, "
            f"p {p.p_value:.4f} ({how}, one-sided)")


def _judge_table(j) -> list[str]:
    out = [f"\n{j.judge} ({j.kind}" + (f"; model {_models(j.models)}" if j.models else "")
           + ")"]
    if j.labels is not None:
        r = j.labels
        out += [_labels_line(r), f"  {r.other} (columns) against {r.reference} (rows):",
                _indent(text_table(("grade", *map(str, r.grades)), [
                    (g, *row) for g, row in zip(r.grades, r.confusion.tolist())]))]
    if j.measures:
        header = ("measure", "systems", "topics", "tau", "tau_ap", "spearman",
                  *(f"top {t.k}" for t in j.measures[0].top), "both sig", "vanish", "appear")
        rows = [(m.measure, m.leaderboard.systems, m.leaderboard.topics, m.leaderboard.tau,
                 m.leaderboard.tau_ap, m.leaderboard.spearman,
                 *(f"{t.overlap}/{t.k}" for t in m.top), len(m.leaderboard.significant_both),
                 len(m.leaderboard.significant_only_a), len(m.leaderboard.significant_only_b))
                for m in j.measures]
        out.append(_indent(text_table(header, rows)))
    for m in j.measures:
        c = m.leaderboard
        out.append(f"  {m.measure}: largest rank changes {_moves(c)}; vanish "
                   f"{_pairs(c.significant_only_a)}; appear {_pairs(c.significant_only_b)}")
    out += [_preference_line(m.self_preference) for m in j.measures if m.self_preference]
    return out


def _table(result) -> str:
    out = [f"judges against {result.reference} ({result.kind}"
           + (f"; model {_models(result.models)}" if result.models else "") + "): "
           f"significant differences by {result.test}, {result.correction}, alpha "
           f"{result.alpha:g}"]
    for j in result.judges:
        out += _judge_table(j)
    return "\n".join(out) + "\n"


def _labels_json(r) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"keys": list(r.keys), "pairs": r.pairs, "only_reference": r.only_reference,
            "only_other": r.only_other, "agreed": json_value(r.agreed),
            "kappa": json_value(r.kappa), "kappa_linear": json_value(r.kappa_linear),
            "alpha_ordinal": json_value(r.alpha_ordinal), "grades": list(r.grades),
            "confusion": r.confusion.tolist()}


def _preference_json(p) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"models": list(p.models), "named": [
        {"system": m.system, "reference": m.rank_a, "judge": m.rank_b} for m in p.named],
        "gain_named": json_value(p.gain_named), "gain_others": json_value(p.gain_others),
        "difference": json_value(p.difference), "p_value": json_value(p.p_value),
        "exact": p.exact, "samples": p.samples, "seed": p.seed}


def _measure_json(m) -> dict[str, Any]:
    c = m.leaderboard
    return {"measure": c.measure, "systems": c.systems, "topics": c.topics,
            "tau": json_value(c.tau), "tau_ap": json_value(c.tau_ap),
            "spearman": json_value(c.spearman), "swaps": c.swaps,
            "top": [{"k": t.k, "overlap": t.overlap} for t in m.top],
            "ranks": [{"system": x.system, "reference": x.rank_a, "judge": x.rank_b}
                      for x in c.moves],
            "significant_both": [list(p) for p in c.significant_both],
            "significant_vanish": [list(p) for p in c.significant_only_a],
            "significant_appear": [list(p) for p in c.significant_only_b],
            "self_preference": _preference_json(m.self_preference)}


def _json(result) -> str:
    doc = {"reference": result.reference, "kind": result.kind, "models": list(result.models),
           "settings": {"top": list(result.top), "test": result.test,
                        "correction": result.correction, "alpha": result.alpha,
                        "samples": result.samples, "seed": result.seed},
           "judges": [{"judge": j.judge, "kind": j.kind, "models": list(j.models),
                       "labels": _labels_json(j.labels),
                       "measures": [_measure_json(m) for m in j.measures],
                       "notes": list(j.notes)} for j in result.judges],
           "skipped": [{"set": n, "reason": why} for n, why in result.skipped]}
    return json_text(json.dumps(doc, ensure_ascii=False, indent=1)) + "\n"


CSV_COLUMNS = ("reference", "judge", "kind", "models", "pairs", "agreed", "kappa",
               "kappa_linear", "alpha_ordinal", "measure", "systems", "topics", "tau",
               "tau_ap", "spearman", "swaps")
CSV_TAIL = ("significant_both", "significant_vanish", "significant_appear",
            "self_preference_named", "gain_named", "gain_others", "self_preference_p")


def _csv(result) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    tops = [f"top_{k}" for k in result.top]
    writer.writerow((*CSV_COLUMNS, *tops, *CSV_TAIL))
    for j in result.judges:
        r = j.labels
        head = [csv_cell(result.reference), csv_cell(j.judge), j.kind,
                csv_cell(" ".join(j.models)),
                *((r.pairs, repr(r.agreed), repr(r.kappa), repr(r.kappa_linear),
                   repr(r.alpha_ordinal)) if r is not None else ("",) * 5)]
        for m in j.measures or [None]:
            writer.writerow(head + (_csv_measure(m, result.top) if m else []))
    return buf.getvalue()


def _csv_measure(m, top) -> list:
    c, p = m.leaderboard, m.self_preference
    overlap = {t.k: t.overlap for t in m.top}
    return [csv_cell(c.measure), c.systems, c.topics, repr(c.tau), repr(c.tau_ap),
            repr(c.spearman), c.swaps, *(overlap.get(min(k, c.systems), "") for k in top),
            len(c.significant_both), len(c.significant_only_a), len(c.significant_only_b),
            csv_cell(" ".join(x.system for x in p.named)) if p else "",
            repr(p.gain_named) if p else "", repr(p.gain_others) if p else "",
            repr(p.p_value) if p else ""]


FORMATTERS = {"table": _table, "json": _json, "csv": _csv}
