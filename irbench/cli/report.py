"""``irbench report CONFIG``: the campaign's self-contained HTML report from its store."""

from __future__ import annotations

import os
import sys

from .output import add_wait, progress_bar


def add_parsers(sub) -> None:
    p = sub.add_parser("report", help="write a campaign's HTML report",
                       description="Write reports/<config name>/index.html (or --out FOLDER): "
                       "a self-contained page (no network request) with the leaderboard, "
                       "significance against the baseline, MAP against GMAP and provenance. "
                       "Run 'irbench run CONFIG' first.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--out", default=None, metavar="FOLDER",
                   help="where to write index.html (default reports/<config name>/)")
    p.add_argument("--seed", type=int, default=0, help="seed of the significance tests (0)")
    p.add_argument("--format", choices=("html", "csv", "markdown", "json", "latex"),
                   default="html", help="html: the page (default); the others: the "
                   "leaderboard only, on stdout or to -o FILE")
    p.add_argument("-o", "--output", default=None, help="file for --format other than html")
    p.add_argument("--table", choices=("leaderboard", "significance"), default="leaderboard",
                   help="with --format other than html: the leaderboard (default) or the "
                   "all-pairs significance table of report.measure")
    p.add_argument("--participants", action="store_true",
                   help="also one page per system (systems/NNN.html): its per-topic values "
                   "against the best, median and worst of all systems, to send to participants")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="also write every chart as PDF and PNG into DIR (for a paper)")
    p.add_argument("--force", action="store_true",
                   help="write into a folder that holds another campaign's report")
    add_wait(p)
    p.set_defaults(handler=cmd_report)


def default_folder(config) -> str:
    """``reports/<name>/`` in the campaign folder."""
    return os.path.join(config.root, "reports", config.name)


def report_problems(config) -> list[str]:
    """Why ``irbench report`` would refuse ``config``'s ``report:`` section (``irbench check``
    asks the same)."""
    from ..measures import parse_measure
    from ..errors import MeasureParameterError, UnknownMeasureError
    from ..report.context import REPORT_OPTIONS
    from ..report.reduction import DESIGNS

    problems = []
    unknown = sorted(set(config.report) - set(REPORT_OPTIONS))
    if unknown:
        problems.append(f"{config.path}: report: unknown option {', '.join(unknown)} "
                        f"(report takes {', '.join(REPORT_OPTIONS)})")
    if config.report.get("measure") is not None:
        try:
            chosen = str(parse_measure(str(config.report["measure"])))
        except (UnknownMeasureError, MeasureParameterError) as exc:
            return problems + [f"{config.path}: report: measure: {exc}"]
        if chosen not in [str(m) for m in config.measures]:
            problems.append(f"{config.path}: report: measure {chosen} is in no suite")
    design = config.report.get("reduction_design")
    if design is not None and design not in DESIGNS:
        problems.append(f"{config.path}: report: reduction_design must be one of "
                        f"{', '.join(DESIGNS)}, not {design!r}")
    for option in ("pool_depth", "pooled_per_group"):
        value = config.report.get(option)
        if value is not None and (type(value) is not int or value < 1):
            problems.append(f"{config.path}: report: {option} must be a whole number >= 1, "
                            f"not {value!r}")
    return problems


def cmd_report(args) -> int:
    from ..config import load_config
    from .output import warn_stale, write_text
    from ..report import build_context, write_report
    from ..store import READER_WAIT, Store

    config = load_config(args.config, strict=False)
    from ..errors import UsageError

    problems = report_problems(config)
    if problems:
        raise UsageError("\n".join(problems))
    if not os.path.exists(config.store):
        Store(config.store, read_only=True)  # says: no score store yet
    # the page keeps its analyses in the store, unless the store is read-only (archived)
    writable = os.access(config.store, os.W_OK) and os.access(
        os.path.dirname(os.path.abspath(config.store)), os.W_OK)
    read_only = args.format != "html" or not writable
    if args.format == "html" and not writable:
        print(f"irbench: note: {config.store} is read-only: the report's analyses are "
              "computed, not kept", file=sys.stderr)
    wait = args.wait if args.wait is not None else READER_WAIT
    with Store(config.store, read_only=read_only, wait=wait) as store:
        if config.qrels:
            warn_stale(store, config.qrels[0].name)
        if args.format != "html":
            from ..report.context import focus_measure, leaderboard, significance
            from ..report.exports import export_leaderboard, export_significance

            board = leaderboard(config, store, seed=args.seed)
            if args.table == "significance":
                sig = significance(config, store, board, focus_measure(config), args.seed)
                if sig is None:
                    raise UsageError("the significance table needs at least 3 systems with "
                                     "scores on every topic")
                text = export_significance(sig, args.format)
            else:
                text = export_leaderboard(board, args.format)
            write_text(args.output, text)
            return 0
        with progress_bar("step") as bar:  # as irbench run has
            context = build_context(config, store, seed=args.seed, progress=bar)
        if context.pool_bias is not None and context.pool_bias.warning:
            print(f"irbench: warning: pool bias: {context.pool_bias.warning}", file=sys.stderr)
        pages = ()
        if args.participants:
            from ..report.context import participants

            pages = participants(config, store, context)
    path = write_report(context, args.out or default_folder(config), pages,
                        campaign=config.name, config_path=config.path, force=args.force)
    if args.figures:
        try:
            os.makedirs(args.figures, exist_ok=True)
            written = [p for figure in context.figures for p in figure.save(args.figures)]
        except OSError as exc:
            raise UsageError(f"{args.figures}: cannot write the figures ({exc.strerror})") \
                from None
        print(f"wrote {len(written)} figure files to {args.figures}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)
    return 0
