"""``irbench agreement REF OTHER...``: how well other judges' qrels agree with a reference's,
on the (topic, document) pairs both judged (:mod:`irbench.judgments.agreement`)."""

from __future__ import annotations

import sys
from typing import Any

from ..judgments.agreement import Agreement, agreement, alpha_of
from .output import json_value, text_table, write_text

FORMATS = ("table", "csv", "json")
COLUMNS = ("reference", "other", "pairs", "only_reference", "only_other", "agreed", "kappa",
           "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_nominal", "alpha_ordinal",
           "alpha_interval")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "agreement", help="agreement of judges' qrels with a reference's",
        description="Agreement of each OTHER qrels with REF on the (topic, document) pairs "
        "both judged: Cohen's kappa (unweighted, linear and quadratic weights over the grades "
        "in order, as scikit-learn computes it), kappa of relevant or not at --level, "
        "Krippendorff's alpha (nominal, ordinal, interval), the confusion matrix per grade and, "
        "with --per-topic, agreement per topic; with several OTHER, alpha of all the judges "
        "together. Pairs judged by one side only are counted, not scored.")
    p.add_argument("reference", metavar="REF", help="the reference qrels (e.g. the assessors')")
    p.add_argument("others", nargs="+", metavar="OTHER", help="qrels of other judges")
    p.add_argument("--level", type=int, default=1,
                   help="relevance level of the binary kappa: grade >= LEVEL (default 1)")
    p.add_argument("--per-topic", action="store_true", help="agreement and kappa per topic")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), csv or json (with the confusion matrices)")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    p.set_defaults(handler=cmd_agreement)


def cmd_agreement(args) -> int:
    results = [agreement(args.reference, other, args.level) for other in args.others]
    together = None
    if len(args.others) > 1:
        together = {level: alpha_of([args.reference, *args.others], level)
                    for level in ("nominal", "ordinal", "interval")}
    for result in results:
        if result.only_reference or result.only_other:
            print(f"irbench: note: {result.other}: {result.pairs:,} pairs judged by both; "
                  f"{result.only_reference:,} by {result.reference} only and "
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
    out = [f"agreement with {results[0].reference} on the pairs both judged",
           text_table(header, rows)]
    if together is not None:
        out.append(f"all {len(results) + 1} judges together: Krippendorff's alpha "
                   + ", ".join(f"{level} {value:.4f}" for level, value in together.items()))
    for r in results:
        out.append(f"\n{r.other} (columns) against {r.reference} (rows), pairs per grade:")
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
        record.update(relevance_level=r.relevance_level, grades=list(r.grades),
                      confusion=r.confusion.tolist())
        if per_topic:
            record["per_topic"] = [{"topic": t.topic, "pairs": t.pairs,
                                    "agreed": json_value(t.agreed),
                                    "kappa": json_value(t.kappa)} for t in r.per_topic]
        records.append(record)
    out: dict[str, Any] = {"agreements": records}
    if together is not None:
        out["all_judges_alpha"] = {k: json_value(v) for k, v in together.items()}
    return json.dumps(out, ensure_ascii=False, indent=1) + "\n"


FORMATTERS = {"table": _table, "csv": _csv, "json": _json}
