"""``irbench report CONFIG``: the campaign's self-contained HTML report from its store."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .output import add_wait, nonnegative_int, progress_bar, seconds

if TYPE_CHECKING:
    from ..report.diffpages import DiffPages
    from ..report.runpages import Participant

__all__ = ["add_parsers", "default_folder"]


def add_parsers(sub) -> None:
    p = sub.add_parser("report", help="write a campaign's HTML report",
                       description="Write reports/<config name>/index.html (or --out FOLDER): "
                       "a self-contained page (no network request) with the leaderboard, "
                       "rankings per run type and group, significance, per-topic values, MAP "
                       "against GMAP, incomplete judgments and provenance. "
                       "Run 'irbench run CONFIG' first.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--out", default=None, metavar="FOLDER",
                   help="where to write index.html (default reports/<config name>/)")
    p.add_argument("--seed", type=nonnegative_int, default=0,
                   help="seed of the significance tests and the leaderboard's bootstrap "
                   "intervals (0)")
    p.add_argument("--format", choices=("html", "csv", "markdown", "json", "latex"),
                   default="html", help="html: the page (default); the others: one table "
                   "(--table), on stdout or to -o FILE")
    p.add_argument("-o", "--output", default=None, help="file for --format other than html")
    p.add_argument("--table", choices=("leaderboard", "significance", "rankings", "groups"),
                   default="leaderboard",
                   help="with --format other than html: the leaderboard (default), the "
                   "all-pairs significance table of report.measure, the runs ranked within "
                   "each run type (or report.rank_by field), or the best run of each group")
    p.add_argument("--participants", action="store_true",
                   help="also the appendix: one page per run (systems/NAME.html) with its "
                   "metadata, every measure, recall-precision graph, significance and per-topic "
                   "values against all runs; every run name on the main page links to it "
                   "(without this flag an earlier report's run pages are removed)")
    p.add_argument("--participants-pdf", action="store_true",
                   help="also print each run page to a PDF beside it (systems/NAME.pdf), with "
                   "headless Chromium; implies --participants")
    p.add_argument("--appendix-pdf", default=None, metavar="FILE",
                   help="also write FILE: one PDF of every run page in rank order (the "
                   "report's focus measure) after a contents page (run, group, rank, page), "
                   "printed with headless Chromium; implies --participants")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="also write every chart as PDF and PNG into DIR (for a paper)")
    p.add_argument("--judge-eval", default=None, metavar="SET",
                   help="also section 6e, how far to trust each judge: every other label set "
                   "against the reference SET, as 'irbench judge-eval CONFIG --reference SET' "
                   "computes it (labels: kappa, alpha, the confusion matrix; leaderboards: "
                   "tau, tau_AP, Spearman, top-k overlap, rank changes, significant "
                   "differences; the self-preference check); html only")
    p.add_argument("--force", action="store_true",
                   help="write into a folder that holds another campaign's report")
    add_wait(p)
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser("analyse", help="compute and store the report's analyses",
                       description="Compute the analyses the report shows beside the scores "
                       "and store them: the judgment-reduction experiment (with "
                       "report.reduction_design, else the default design) and, with "
                       "report.pool_depth, the pool bias. 'irbench run' computes the ones the "
                       "config's report: section asks for; this computes them on demand. Only "
                       "what the store lacks for its current inputs is computed. The runs "
                       "must be the ones 'irbench run' scored.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--wait", type=seconds, default=0.0, metavar="SECONDS",
                   help="wait this long for another irbench holding the store (default 0)")
    p.set_defaults(handler=cmd_analyse)


def default_folder(config) -> str:
    """``reports/<name>/`` in the campaign folder (``reports/<name>/<collection>/`` for a
    collection of a config with several)."""
    folder = os.path.join(config.root, "reports", config.name)
    return os.path.join(folder, config.scope) if config.several else folder


def cmd_report(args) -> int:
    from ..config import load_configs

    views = load_configs(args.config, collection=args.collection, strict=False,
                         systems=False)  # systems: the store's
    args.participants = args.participants or args.participants_pdf or bool(args.appendix_pdf)
    if views[0].several and args.collection is None:
        return _report_across(args, views)
    _report_one(args, views[0], args.out or default_folder(views[0]))
    return 0


def _report_one(args, config, folder: str) -> None:
    """One collection's report (the config's one, or that of --collection) into ``folder``
    (or its table, for --format other than html)."""
    from ..errors import UsageError
    from ..report import build_context, write_report
    from ..store import READER_WAIT, Store
    from .output import warn_stale, write_text

    problems = config.report.problems
    if problems:
        raise UsageError("\n".join(problems))
    wait = args.wait if args.wait is not None else READER_WAIT
    # a function of the store alone: opened read-only, no run file read
    with Store(config.store, scope=config.scope, read_only=True, wait=wait) as store:
        if config.qrels:
            warn_stale(store, config.qrels[0].name)
        if args.format != "html":
            write_text(args.output, _exported_table(args, config, store))
            return
        with progress_bar("step") as bar:  # as irbench run has
            context = build_context(config, store, seed=args.seed, progress=bar,
                                    run_pages=args.participants, judge_eval=args.judge_eval,
                                    labels=_labels_reader(args, store))
        if context.pool_bias is not None and context.pool_bias.warning:
            print(f"irbench: warning: pool bias: {context.pool_bias.warning}", file=sys.stderr)
        for note in context.not_shown:
            print(f"irbench: note: {note}", file=sys.stderr)
        pages, answered, diffs = (_run_pages(config, store, context) if args.participants
                                  else ((), (), None))
    path = write_report(context, folder, pages, campaign=config.name, config_path=config.path,
                        force=args.force, answer_pages=answered, diff_pages=diffs)
    _write_extras(args, context, path, pages)
    print(f"wrote {path}", file=sys.stderr)


def _report_across(args, views) -> int:
    """A config with collections, no --collection: each collection's report into
    FOLDER/<collection>/ and the page over every collection at FOLDER/index.html (FOLDER:
    --out, else reports/<name>/)."""
    from argparse import Namespace

    from ..errors import UsageError
    from ..report.across import across_page, write_across
    from ..report.render import claim
    from ..store import READER_WAIT

    if args.format != "html" or args.appendix_pdf:
        what = "--appendix-pdf" if args.format == "html" else f"--format {args.format}"
        raise UsageError(f"{views[0].path}: several collections ("
                         f"{', '.join(v.scope for v in views)}): {what} is made per "
                         "collection: give --collection NAME (or see 'irbench compare CONFIG "
                         "--across --format ...')")
    first = views[0]
    top = args.out or os.path.join(first.root, "reports", first.name)
    claim(top, first.name, first.path, args.force)  # before anything is written
    for view in views:
        print(f"irbench report: collection '{view.scope}'", file=sys.stderr)
        figures = os.path.join(args.figures, view.scope) if args.figures else None
        _report_one(Namespace(**{**vars(args), "figures": figures}), view,
                    os.path.join(top, view.scope))
    page = across_page(views, seed=args.seed,
                       wait=args.wait if args.wait is not None else READER_WAIT)
    for table in page.tables:
        for note in table.notes:
            print(f"irbench: warning: {table.measure}: {note}", file=sys.stderr)
    path = write_across(page, top, campaign=first.name, config_path=first.path,
                        force=args.force)
    if args.figures:
        try:
            written = [p for figure in page.figures for p in figure.save(args.figures)]
        except OSError as exc:
            raise UsageError(f"{args.figures}: cannot write the figures ({exc.strerror})") \
                from None
        print(f"wrote {len(written)} figure files to {args.figures}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def _labels_reader(args, store):
    """A qrels set's labels for --judge-eval, its file checked to be the one the stored scores
    were computed on (as 'irbench judge-eval' reads them)."""
    from .agreement import scored_labels

    return lambda spec, kind: scored_labels(spec, store, args.config, kind)


def _run_pages(config, store, context) -> tuple[tuple[Participant, ...], tuple,
                                                DiffPages]:
    """The run pages, the answer pages (these read the answer files) and the diff pages
    (these read the run files) of the report."""
    from ..report.answerpages import answer_pages
    from ..report.diffpages import report_diffs
    from ..report.runpages import participants

    pages = participants(config, store, context)
    diffs = report_diffs(config, store, pages, title=context.title,
                         generated_at=context.generated_at)
    for note in diffs.notes:
        print(f"irbench: note: {note}", file=sys.stderr)
    return pages, answer_pages(config, store, {p.system: p.file for p in pages}), diffs


def _exported_table(args, config, store) -> str:
    """The leaderboard, significance or overview table of ``report --format csv|...``."""
    from ..errors import UsageError
    from ..report.choices import focus_measure
    from ..report.exports import export_leaderboard, export_overview, export_significance
    from ..report.leaderboard import leaderboard, leaderboards, significance
    from ..report.overview import campaign_overview

    if args.judge_eval is not None:
        raise UsageError("--judge-eval adds a section to the html page: give it without "
                         f"--format {args.format} (or see 'irbench judge-eval CONFIG "
                         "--reference SET --format ...')")
    if args.table == "leaderboard":  # every suite's
        return export_leaderboard(leaderboards(config, store, seed=args.seed), args.format)
    board = leaderboard(config, store, seed=args.seed)
    if args.table in ("rankings", "groups"):
        tables = campaign_overview(config, store, board)
        if tables is None or not (tables.rankings if args.table == "rankings"
                                  else tables.best_per_group):
            raise UsageError(
                "no run type (or report.rank_by field) has two values in the store's "
                "systems: nothing to rank by" if args.table == "rankings" else
                "fewer than two groups in the store's systems: give each system a "
                "group: in the config, then 'irbench run CONFIG'")
        return export_overview(tables, args.table, args.format)
    sig = significance(config, store, board, focus_measure(config), args.seed)  # significance
    if sig is None:
        raise UsageError("the significance table needs at least 3 systems with "
                         "scores on every topic")
    return export_significance(sig, args.format)


def _write_extras(args, context, path: str, pages) -> None:
    """The figures (--figures), the run pages as PDF (--participants-pdf) and the appendix
    PDF (--appendix-pdf)."""
    from ..errors import UsageError

    if args.figures:
        try:
            os.makedirs(args.figures, exist_ok=True)
            written = [p for figure in context.figures for p in figure.save(args.figures)]
        except OSError as exc:
            raise UsageError(f"{args.figures}: cannot write the figures ({exc.strerror})") \
                from None
        print(f"wrote {len(written)} figure files to {args.figures}", file=sys.stderr)
    if args.participants_pdf and pages:
        from pathlib import Path

        from ..report.pdf import print_pages

        folder = Path(path).resolve().parent / "systems"
        with progress_bar("page") as bar:
            pdfs = print_pages([folder / p.file for p in pages], progress=bar)
        print(f"wrote {len(pdfs)} run page PDFs to {folder}", file=sys.stderr)
    if args.appendix_pdf and pages:
        _write_appendix(args, context, path, pages)


def _write_appendix(args, context, path: str, pages) -> None:
    """--appendix-pdf FILE: the run pages bound in rank order after a contents page."""
    from pathlib import Path

    from ..report.appendix import write_appendix

    folder = Path(path).resolve().parent / "systems"
    printed = ({p.file: folder / Path(p.file).with_suffix(".pdf").name for p in pages}
               if args.participants_pdf else None)
    with progress_bar("page") as bar:
        total, contents = write_appendix(pages, folder, Path(args.appendix_pdf),
                                         title=context.title,
                                         generated_at=context.generated_at,
                                         printed=printed, progress=bar)
    print(f"wrote {args.appendix_pdf}: {len(pages)} runs on {total - contents} pages after "
          f"{contents} contents page{'s' if contents > 1 else ''}", file=sys.stderr)


def cmd_analyse(args) -> int:
    from .. import analyses
    from ..config import load_config
    from ..errors import UsageError
    from ..store import Store

    config = load_config(args.config, collection=args.collection, strict=False)
    problems = config.report.problems
    if problems:
        raise UsageError("\n".join(problems))
    if not os.path.exists(config.store):
        Store(config.store, scope=config.scope, read_only=True)  # says: no score store yet
    with Store(config.store, scope=config.scope, wait=args.wait) as store:
        wanted = analyses.specs(config, store, every=True)
        if not wanted:
            raise UsageError(f"{config.store}: nothing to analyse: the judgment-reduction "
                             "experiment needs 2 systems scored on the first qrels set")
        with progress_bar("step") as bar:
            done = analyses.compute_missing(config, store, every=True, progress=bar)
    kinds = ", ".join(s.kind for s in wanted)
    print(f"irbench analyse: {'computed ' + ', '.join(done) if done else 'up to date'} "
          f"({kinds}); store {config.store}", file=sys.stderr)
    return 0
