"""``irbench agreement REF OTHER...``: how well other judges' labels agree with a reference's,
on the keys both judged (:mod:`irbench.judgments.agreement`): (topic, document) for qrels,
(topic, run, sentence, reference) for support labels, (topic, run, nugget) for nugget
assignments, as each judgment kind keys them (:meth:`irbench.judgments.JudgmentKind.labels`)."""

from __future__ import annotations

import sys
from typing import Any

# irbench.agreement: irbench.judgments.agreement's kernel
from .. import agreement, judgments
from ..errors import EvaluationError, UsageError
from ..escaping import json_text
from ..judgments import Agreement, alpha_of
from .output import add_wait, json_value, positive_int, text_table, write_text

FORMATS = ("table", "csv", "json")
COLUMNS = ("reference", "other", "pairs", "only_reference", "only_other", "agreed", "kappa",
           "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_nominal", "alpha_ordinal",
           "alpha_interval")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "agreement", help="agreement of judges' labels with a reference's",
        description="Agreement of each OTHER label file with REF on the keys both judged: "
        "(topic, document) for qrels; with --kind support, (topic, run, sentence, reference) "
        "of support labels (-1, not judged, left out); with --kind support_shared, (topic, "
        "sentence text, reference); with --kind nuggets, (topic, run, nugget position) of "
        "nugget assignments, labelled 2 support, 1 partial, 0 not. With --config, REF and "
        "OTHER are qrels sets of that campaign, each read as its kind. Cohen's kappa "
        "(unweighted, linear and quadratic weights over the grades in order, as scikit-learn "
        "computes it), kappa of grade >= --level or not, Krippendorff's alpha (nominal, "
        "ordinal, interval), the confusion matrix per grade and, with --per-topic, agreement "
        "per topic; with several OTHER, alpha of all the judges together. Keys judged by one "
        "side only are counted, not scored.")
    p.add_argument("reference", metavar="REF",
                   help="the reference labels (e.g. the assessors'): a file, or with --config "
                   "a qrels set's name")
    p.add_argument("others", nargs="+", metavar="OTHER", help="labels of other judges")
    p.add_argument("--kind", default=None, choices=list(judgments.KINDS),
                   help=f"kind of the files (default {judgments.DEFAULT_KIND}: qrels)")
    p.add_argument("--config", default=None, metavar="CONFIG",
                   help="REF and OTHER name qrels sets of this campaign config (their files "
                   "and kinds)")
    p.add_argument("--level", type=int, default=1,
                   help="relevance level of the binary kappa: grade >= LEVEL (default 1)")
    p.add_argument("--per-topic", action="store_true", help="agreement and kappa per topic")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), csv or json (with the confusion matrices)")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    p.set_defaults(handler=cmd_agreement)
    add_compare_qrels(sub)


def _label_sets(args) -> list:
    """REF and every OTHER as labels keyed by their kind: files of --kind, or the config's
    qrels sets."""
    names = [args.reference, *args.others]
    if args.config is None:
        kind = judgments.kind(args.kind or judgments.DEFAULT_KIND)
        return [kind.labels(path) for path in names]
    if args.kind is not None:
        raise UsageError("--kind goes with files; with --config each qrels set has its kind")
    from ..config import load_config

    config = load_config(args.config, strict=False, systems=False)  # --config: one collection
    return [judgments.kind(spec.kind).labels(spec.path, name=spec.name)
            for spec in (config.qrels_set(name) for name in names)]


def cmd_agreement(args) -> int:
    sets = _label_sets(args)
    results = [agreement(sets[0], other, args.level) for other in sets[1:]]
    together = None
    if len(args.others) > 1:
        together = {level: alpha_of(sets, level) for level in ("nominal", "ordinal", "interval")}
    for result in results:
        if result.only_reference or result.only_other:
            print(f"irbench: note: {result.other}: {result.pairs:,} {result.compared} judged "
                  f"by both; {result.only_reference:,} by {result.reference} only and "
                  f"{result.only_other:,} by {result.other} only (not scored)", file=sys.stderr)
    write_text(args.output, FORMATTERS[args.format](results, together, args.per_topic))
    return 0


def _row(r: Agreement) -> tuple:
    return (r.reference, r.other, r.pairs, r.only_reference, r.only_other, r.agreed, r.kappa,
            r.kappa_linear, r.kappa_quadratic, r.kappa_binary, r.alpha_nominal,
            r.alpha_ordinal, r.alpha_interval)


def _table(results: list[Agreement], together: dict | None, per_topic: bool) -> str:
    header = ("other", "pairs", "agreed", "kappa", "linear", "quadratic",
              f"kappa@{results[0].relevance_level}", "alpha nom", "alpha ord", "alpha int")
    rows = [(r.other, r.pairs, r.agreed, r.kappa, r.kappa_linear, r.kappa_quadratic,
             r.kappa_binary, r.alpha_nominal, r.alpha_ordinal, r.alpha_interval)
            for r in results]
    out = [f"agreement with {results[0].reference} on the {results[0].compared} both "
           "judged",
           text_table(header, rows)]
    if together is not None:
        out.append(f"all {len(results) + 1} judges together: Krippendorff's alpha "
                   + ", ".join(f"{level} {value:.4f}" for level, value in together.items()))
    for r in results:
        out.append(f"\n{r.other} (columns) against {r.reference} (rows), {r.compared} per "
                   "grade:")
        out.append(text_table(("grade", *map(str, r.grades)),
                              [(g, *row) for g, row in zip(r.grades, r.confusion.tolist())]))
        if per_topic:
            out.append(f"\n{r.other} per topic:")
            out.append(text_table(("topic", "pairs", "agreed", "kappa"),
                                  [(t.topic, t.pairs, t.agreed, t.kappa) for t in r.per_topic]))
    return "\n".join(out) + "\n"


def _csv(results: list[Agreement], together: dict | None, per_topic: bool) -> str:
    import csv
    import io

    from ..escaping import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if per_topic:
        writer.writerow(("reference", "other", "topic", "pairs", "agreed", "kappa"))
        for r in results:
            writer.writerows((csv_cell(r.reference), csv_cell(r.other), csv_cell(t.topic),
                              t.pairs, repr(t.agreed), repr(t.kappa)) for t in r.per_topic)
        return buf.getvalue()
    writer.writerow(COLUMNS)
    for r in results:
        row = _row(r)
        writer.writerow([csv_cell(row[0]), csv_cell(row[1]), *row[2:5],
                         *(repr(v) for v in row[5:])])
    return buf.getvalue()


def _json(results: list[Agreement], together: dict | None, per_topic: bool) -> str:
    import json

    records = []
    for r in results:
        record = {c: json_value(v) for c, v in zip(COLUMNS, _row(r))}
        record.update(keys=list(r.keys), relevance_level=r.relevance_level,
                      grades=list(r.grades),
                      confusion=r.confusion.tolist())
        if per_topic:
            record["per_topic"] = [{"topic": t.topic, "pairs": t.pairs,
                                    "agreed": json_value(t.agreed),
                                    "kappa": json_value(t.kappa)} for t in r.per_topic]
        records.append(record)
    out: dict[str, Any] = {"agreements": records}
    if together is not None:
        out["all_judges_alpha"] = {k: json_value(v) for k, v in together.items()}
    return json_text(json.dumps(out, ensure_ascii=False, indent=1)) + "\n"


FORMATTERS = {"table": _table, "csv": _csv, "json": _json}


# ---- compare-qrels: do the leaderboards move with the judgments? ----------------------------


def add_compare_qrels(sub) -> None:
    p = sub.add_parser(
        "compare-qrels", help="compare a campaign's leaderboards across its qrels sets",
        description="For each other qrels set of CONFIG against the reference set (REF, "
        "--reference, or the config's first), per measure both sets score, on the systems and "
        "common topics both score: Kendall's tau and tau_AP between the rankings, the largest "
        "rank changes, the overlap of the top k, the significant differences (paired --test, "
        "--correction over all pairs) that appear or vanish, and the agreement of the two "
        "sets' labels on the keys both judged (as 'irbench agreement' keys them: (topic, "
        "document) for qrels, (topic, run, sentence, reference) for support labels, (topic, "
        "run, nugget) for nugget assignments). Run 'irbench run CONFIG' first.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("sets", nargs="*", metavar="QRELS",
                   help="the reference set, then the sets to compare with it (default: "
                   "--reference or the config's first, against every other set that scores "
                   "the measures)")
    p.add_argument("--reference", default=None, metavar="QRELS",
                   help="the reference qrels set (default: the config's first)")
    p.add_argument("--measure", action="append", default=[], metavar="MEASURE",
                   help="measure (repeatable; default: the config's first the reference set "
                   "scores)")
    p.add_argument("--top", type=positive_int, default=10, metavar="K",
                   help="top-k overlap (10)")
    p.add_argument("--test", default="t", choices=("t", "wilcoxon", "sign", "randomization",
                                                   "bootstrap"),
                   help="paired test of every pair (default t)")
    p.add_argument("--correction", default="holm",
                   choices=("none", "bonferroni", "holm", "bh", "by"),
                   help="correction over the pairs of each measure (default holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    add_wait(p)
    p.set_defaults(handler=cmd_compare_qrels)


def _compared_sets(args, config) -> tuple[Any, list, list]:
    """The reference set, the other sets and the measures: every named set must score every
    measure; unnamed other sets that score none of them are left out."""
    from ..measures import parse_measure

    named = list(args.sets)
    if named and args.reference is not None:
        raise UsageError("give the reference set as the first QRELS or as --reference, "
                         "not both")
    reference = config.qrels_set(named[0] if named else args.reference)
    others = [config.qrels_set(n) for n in named[1:]] or [
        q for q in config.qrels if q.name != reference.name]
    asked = [parse_measure(m) for m in args.measure]
    if not asked:
        scored = reference.measures(config.measures)
        if not scored:
            raise UsageError(f"no measure of {args.config} is scored on qrels set "
                             f"'{reference.name}'; give --measure")
        asked = scored[:1]
    for spec in [reference, *(others if len(named) > 1 else [])]:
        for m in asked:
            if not spec.takes(m):
                raise UsageError(f"measure '{m}' is not scored on qrels set '{spec.name}' "
                                 f"({spec.kind} judgments do not give it)")
    if len(named) <= 1:
        others = [q for q in others if q.name != reference.name
                  and all(q.takes(m) for m in asked)]
    others = [q for q in others if q.name != reference.name]
    if not others:
        raise UsageError(f"{args.config} has no other qrels set scoring "
                         f"{', '.join(map(str, asked))} to compare with '{reference.name}'")
    return reference, others, [str(m) for m in asked]


def cmd_compare_qrels(args) -> int:
    from .. import stats
    from ..config import load_config
    from ..store import READER_WAIT, Store

    config = load_config(args.config, collection=args.collection, strict=False, systems=False)
    reference, others, measures = _compared_sets(args, config)
    comparisons = []
    wait = args.wait if args.wait is not None else READER_WAIT
    with Store(config.store, scope=config.scope, read_only=True, wait=wait) as store:
        # the labels, as each set's kind keys them, from the very files the stored
        # leaderboards were scored on (checked first: never a stale mix)
        read = {spec.name: scored_labels(spec, store, args.config)
                for spec in (reference, *others)}
        for other in others:
            for measure in measures:
                comparisons.append(stats.compare_leaderboards(
                    stats.Scores.from_store(store, reference.name, measure),
                    stats.Scores.from_store(store, other.name, measure),
                    qrels_a=reference.name, qrels_b=other.name, top_k=args.top,
                    test=args.test, correction=args.correction, alpha=args.alpha))
    labels = {}
    for other in others:
        try:
            labels[other.name] = agreement(read[reference.name], read[other.name])
        except EvaluationError as exc:  # different keys, no key in common, other nuggets
            print(f"irbench: note: the labels of {other.name} are not compared with "
                  f"{reference.name}'s: {str(exc).splitlines()[0]}", file=sys.stderr)
    text = (_compare_json(comparisons, labels) if args.format == "json" else
            _compare_table(comparisons, labels))
    write_text(args.output, text)
    return 0


def scored_labels(spec, store, config_path: str, kind: str | None = None):
    """Qrels set ``spec``'s labels as its kind (or ``kind``, a kind reading the same files)
    keys them, once its file is checked to be the one the store's scores were computed from
    (its sha256 as ``irbench run`` recorded it)."""
    from ..errors import NotStoredError
    from ..runner.inputs import load

    rerun = f"run 'irbench run {config_path}' first"
    record = store.qrels_records().get(spec.name) or {}
    if not record.get("sha256") or record.get("status") == "failed":
        error = (record.get("error") or "").splitlines()
        raise NotStoredError(f"the store holds no current scores on qrels set '{spec.name}'"
                             + (f" (its last 'irbench run' failed: {error[0]})" if error
                                else "") + f": {rerun}")
    try:
        facts, data = load(spec.path)
    except OSError as exc:
        raise UsageError(f"{spec.path}: cannot read qrels set '{spec.name}' "
                         f"({exc.strerror or exc})") from None
    if facts.sha256 != record["sha256"]:
        raise NotStoredError(f"qrels set '{spec.name}' ({spec.path}) changed since the "
                             f"scores were stored: {rerun}")
    return judgments.kind(kind or spec.kind).labels(data, name=spec.name)


def _pairs_text(pairs) -> str:
    return ", ".join(f"{x} > {y}" for x, y in pairs[:10]) + (
        f" and {len(pairs) - 10} more" if len(pairs) > 10 else "") if pairs else "none"


def _compare_table(comparisons, labels: dict[str, Agreement]) -> str:
    out = []
    for c in comparisons:
        moves = [m for m in c.moves if m.rank_a != m.rank_b][:5]
        out += [f"{c.measure}: {c.qrels_b} against {c.qrels_a}, {c.systems} systems x "
                f"{c.topics} common topics",
                f"  Kendall's tau {c.tau:.4f}, tau_AP {c.tau_ap:.4f}, {c.swaps} swapped pairs; "
                f"top {c.top_k}: {c.top_overlap} in both",
                "  largest rank changes: " + (", ".join(
                    f"{m.system} {m.rank_a} -> {m.rank_b}" for m in moves) or "none"),
                f"  significant ({c.test}, {c.correction}, alpha {c.alpha:g}): "
                f"{len(c.significant_both)} pairs in both",
                f"    vanish with {c.qrels_b}: {_pairs_text(c.significant_only_a)}",
                f"    appear with {c.qrels_b}: {_pairs_text(c.significant_only_b)}"]
    for other, r in labels.items():
        out.append(f"labels of {other} against {r.reference}: {r.pairs:,} {r.compared} both "
                   f"judged ({r.only_reference:,} and {r.only_other:,} by one only); agreed "
                   f"{r.agreed:.4f}, kappa {r.kappa:.4f}, kappa@{r.relevance_level} "
                   f"{r.kappa_binary:.4f}, alpha ordinal {r.alpha_ordinal:.4f}")
    return "\n".join(out) + "\n"


def _compare_json(comparisons, labels: dict[str, Agreement]) -> str:
    import json

    out: dict[str, Any] = {"leaderboards": [{
        "measure": c.measure, "reference": c.qrels_a, "other": c.qrels_b,
        "systems": c.systems, "topics": c.topics, "tau": json_value(c.tau),
        "tau_ap": json_value(c.tau_ap), "swaps": c.swaps, "top_k": c.top_k,
        "top_overlap": c.top_overlap,
        "ranks": [{"system": m.system, "reference": m.rank_a, "other": m.rank_b}
                  for m in c.moves],
        "test": c.test, "correction": c.correction, "alpha": c.alpha,
        "significant_both": [list(p) for p in c.significant_both],
        "significant_only_reference": [list(p) for p in c.significant_only_a],
        "significant_only_other": [list(p) for p in c.significant_only_b]}
        for c in comparisons],
        "labels": [{"keys": list(r.keys), **{c: json_value(v) for c, v in zip(COLUMNS, _row(r))}}
                   for r in labels.values()]}
    return json_text(json.dumps(out, ensure_ascii=False, indent=1)) + "\n"
