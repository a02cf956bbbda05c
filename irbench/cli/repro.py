"""``irbench repro``: did a reproduction reproduce? The reproducibility measures
(:mod:`irbench.measures.reproduction`) of an original baseline (and advanced) run against their
reproductions, from files (as repro_eval takes them) or over a config's ``reproductions:``."""

from __future__ import annotations

import argparse
import csv
import io
import json

from ..errors import UsageError
from .output import json_value, positive_int, text_table, write_text

FORMATS = ("table", "json", "csv")
FILE_OPTIONS = ("qrels", "orig_baseline", "repro_baseline", "orig_advanced", "repro_advanced",
                "qrels_repro")


def _persistence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"a persistence between 0 and 1, not {text!r}")
    return value


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "repro", help="reproducibility measures: KTU, RBO, RMSE, ER, Delta RI, p-values of "
        "original runs against their reproductions",
        description="The reproducibility measures of Breuer et al. (SIGIR 2020), as repro_eval "
        "0.5.0 computes them: KTU and RBO of each original ranking and its reproduction "
        "(per topic, averaged), RMSE and nRMSE of each measure's per-topic scores, the effect "
        "ratio ER and Delta RI of the advanced run's improvement over the baseline, and the "
        "t-test p-values. From files: --qrels, --orig-baseline and --repro-baseline (and "
        "--orig-advanced, --repro-advanced); with --replicated the reproductions are on "
        "other topics (--qrels-repro). With a config: every entry of its reproductions: "
        "(or the one called NAME).")
    p.add_argument("config", nargs="?", default=None, metavar="CONFIG",
                   help="campaign config (YAML) with reproductions:")
    p.add_argument("name", nargs="?", default=None, metavar="NAME",
                   help="with a config: only this reproduction")
    p.add_argument("--qrels", default=None, metavar="FILE", help="the original runs' qrels")
    for side in ("baseline", "advanced"):
        p.add_argument(f"--orig-{side}", default=None, metavar="RUN",
                       help=f"the original {side} run")
        p.add_argument(f"--repro-{side}", default=None, metavar="RUN",
                       help="its reproduction")
    p.add_argument("--replicated", action="store_true",
                   help="the reproductions are on other topics (scored on --qrels-repro): "
                   "ER, Delta RI and the unpaired p-value only")
    p.add_argument("--qrels-repro", default=None, metavar="FILE",
                   help="with --replicated: the reproduced runs' qrels")
    p.add_argument("-m", "--measure", action="append", default=None, metavar="M",
                   help="an effectiveness measure (each stands for RMSE, nRMSE, ER, DeltaRI "
                   "and the p-value of its scores) or a reproducibility measure (KTU@100, "
                   "RBO(p=0.9)@100, RMSE(AP)); repeatable; default AP")
    p.add_argument("--depth", action="append", type=positive_int, default=None, metavar="K",
                   help="KTU and RBO at this cutoff (repeatable; default 1000)")
    p.add_argument("--p", action="append", type=_persistence, default=None, metavar="P",
                   help="RBO's persistence (repeatable; default 0.95)")
    p.add_argument("--format", choices=FORMATS, default="table", help="table, json or csv")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    p.set_defaults(handler=cmd_repro)


def cmd_repro(args) -> int:
    from ..stats.reproduction import config_reproductions, reproduce

    if args.config is not None:
        given = [f"--{o.replace('_', '-')}" for o in FILE_OPTIONS if getattr(args, o)]
        if given or args.replicated or args.measure or args.depth or args.p:
            raise UsageError(f"{', '.join(given) or 'these options'}: for a reproduction "
                             "from files; a config's reproductions: say their runs and "
                             "measures")
        from ..config import load_configs

        results = config_reproductions(load_configs(args.config, strict=True,
                                                    collection=args.collection), args.name)
        if not results:
            raise UsageError(f"{args.config} declares no reproductions: (or none on this "
                             "collection)")
    else:
        _check_files(args)
        advanced = (args.orig_advanced, args.repro_advanced) if args.orig_advanced else None
        results = [reproduce(args.qrels, (args.orig_baseline, args.repro_baseline), advanced,
                             measures=args.measure or ["AP"], depths=args.depth,
                             persistences=args.p or (0.95,),
                             kind="replicated" if args.replicated else "reproduced",
                             qrels_reproduced=args.qrels_repro)]
    write_text(args.output, FORMATTERS[args.format](results))
    return 0


def _check_files(args) -> None:
    if args.name is not None or args.collection is not None:
        raise UsageError("NAME and --collection are for a config's reproductions")
    missing = [o for o in ("--qrels", "--orig-baseline", "--repro-baseline")
               if getattr(args, o[2:].replace("-", "_")) is None]
    if missing:
        raise UsageError(f"give a config, or {', '.join(missing)}")
    if (args.orig_advanced is None) != (args.repro_advanced is None):
        raise UsageError("--orig-advanced and --repro-advanced go together")
    if args.replicated != (args.qrels_repro is not None):
        raise UsageError("--replicated and --qrels-repro go together: a replicated "
                         "reproduction is scored on other topics")


# ---- formats -------------------------------------------------------------------------------

def result_json(r) -> dict:
    """One reproduction as JSON (the report's section shows these numbers)."""
    values = []
    for v in r.values:
        entry = {"measure": v.measure, "run": v.run, "value": json_value(v.value)}
        if len(v.per_topic):
            entry["per_topic"] = {t: json_value(x) for t, x in zip(v.topics, v.per_topic)}
        if len(v.original):
            entry["original"] = {t: json_value(x) for t, x in zip(v.topics, v.original)}
            entry["reproduced"] = {t: json_value(x) for t, x in zip(v.topics, v.reproduced)}
        values.append(entry)
    return {"name": r.name, "kind": r.kind, "collection": r.collection,
            "baseline": {"original": r.baseline[0], "reproduced": r.baseline[1]},
            "advanced": None if r.advanced is None else {"original": r.advanced[0],
                                                         "reproduced": r.advanced[1]},
            "measures": list(r.measures), "values": values}


def _json(results) -> str:
    from ..escaping import json_text

    return json_text(json.dumps({"reproductions": [result_json(r) for r in results]},
                                ensure_ascii=False, indent=1)) + "\n"


def _csv(results) -> str:
    from ..escaping import csv_cell

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["reproduction", "collection", "measure", "run", "original", "reproduced",
                     "value"])
    for r in results:
        pairs = {"baseline": r.baseline, "advanced": r.advanced or ("", "")}
        writer.writerows([csv_cell(r.name), csv_cell(r.collection), csv_cell(v.measure), v.run,
                          *map(csv_cell, pairs.get(v.run, ("", ""))), repr(v.value)]
                         for v in r.values)
    return out.getvalue()


def _table(results) -> str:
    from ..escaping import terminal

    lines = []
    for r in results:
        pairs = [("baseline", r.baseline)] + ([("advanced", r.advanced)] if r.advanced else [])
        lines += [terminal(f"{r.name} ({r.kind}" + (f", collection {r.collection}"
                                                    if r.collection else "") + ")")]
        lines += [terminal(f"  {label}: {o} -> {p}") for label, (o, p) in pairs]
        cells: dict[str, dict[str, float]] = {}
        for v in r.values:
            cells.setdefault(v.measure, {})[v.run] = v.value
        runs = [label for label, _ in pairs] + (["effect"] if any(
            "effect" in c for c in cells.values()) else [])
        rows = [[m, *(c.get(run) for run in runs)] for m, c in cells.items()]
        lines += ["", text_table(["measure", *runs], rows), ""]
    return "\n".join(lines)


FORMATTERS = {"table": _table, "json": _json, "csv": _csv}
