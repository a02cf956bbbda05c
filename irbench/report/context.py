"""The report's context: the page put together from its sections, computed from the store
alone (no run file is read). The types are the contract (``contract.py``); each section's module
computes its part."""

from __future__ import annotations

from datetime import datetime, timezone

from . import incomplete, topics
from .answers import answer_section
from .choices import focus_measure, run_page_names
from .contract import SECTIONS, ReportContext
from .judges import check_reference, judge_trust
from .leaderboard import leaderboards_on, significance_on
from .overview import campaign_overview
from .provenance import provenance
from .qrels import qrels_comparison, warnings_and_marks
from .repro import reproduction_section


def build_context(config, store, seed: int = 0, progress=None, run_pages: bool = False, *,
                  judge_eval: str | None = None, labels=None) -> ReportContext:
    """The report of ``config`` from its (open, read-only is enough) ``store`` alone: no run
    file is read. ``progress(done, total, what)`` hears of the steps; ``run_pages``: the
    report is written with one page per run, so every system name links to its page;
    ``judge_eval``: a qrels set, adds section 6e (every other set against it, the sets'
    labels read by ``labels(spec, kind)``, see :func:`.judges.judge_trust`)."""
    check_reference(config, judge_eval)  # an unknown set, before anything is computed
    qrels = config.qrels[0].name
    steps = ("leaderboard", "significance", "per topic", "profiles and analyses")
    tell = (lambda i: progress(i + 1, len(steps), steps[i])) if progress else (lambda i: None)
    tell(0)
    boards = leaderboards_on(config, store, qrels, seed)  # one per suite shown
    board = boards[0]
    tell(1)
    sig = significance_on(store, qrels, board, focus_measure(config), seed)
    tell(2)
    per_topic = topics.per_topic(store, qrels, focus_measure(config),
                                 [r.name for r in board.rows], board.baseline)
    tell(3)
    judged, curves = incomplete.from_profiles(store, qrels, [str(r.name) for r in board.rows])
    map_vs_gmap = topics.map_vs_gmap(store, qrels)
    reduction = incomplete.reduction_section(config, store)
    pool_bias = incomplete.pool_bias(config, store)
    across = qrels_comparison(config, store, seed)
    trust = (judge_trust(config, store, judge_eval, labels=labels, seed=seed)
             if judge_eval is not None else None)
    warnings, same_model = warnings_and_marks(
        config, store, [qrels] + ([r.name for r in across.rows] if across else []))
    links = {}
    if run_pages:
        links = {name: f"systems/{file}" for name, file in
                 run_page_names(store.score_matrix(qrels, focus_measure(config))[0]).items()}
    tables = campaign_overview(config, store, board)
    answers = answer_section(config, store, seed, run_pages)
    reproductions = reproduction_section(config)  # reads the run files: rankings
    shown = (("leaderboard", board), ("answers", answers), ("overview", tables),
             ("significance", sig),
             ("per-topic", per_topic), ("reproductions", reproductions),
             ("map-gmap", map_vs_gmap), ("judged", judged),
             ("reduction", reduction), ("pool-bias", pool_bias), ("qrels", across),
             ("judges", trust), ("precision-recall", curves), ("provenance", True))
    return ReportContext(
        title=config.report.title or (f"{config.name}: {config.scope}" if config.several
                                      else config.name),
        campaign=config.name,
        collection=config.scope if config.several else "",
        links=links,
        toc=tuple((anchor, SECTIONS[anchor]) for anchor, part in shown if part is not None),
        overview=tables,
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        leaderboard=board,
        leaderboards=boards,
        significance=sig,
        per_topic=per_topic,
        map_vs_gmap=map_vs_gmap,
        judged=judged,
        precision_recall=curves,
        reduction=reduction,
        pool_bias=pool_bias,
        qrels_comparison=across,
        judge_warnings=warnings,
        same_model=same_model,
        not_shown=incomplete.not_shown(config, store),
        provenance=provenance(config, store, seed),
        answers=answers,
        judges=trust,
        reproductions=reproductions,
        figures=tuple(f for f in (
            answers.chart.scatter if answers and answers.chart else None,
            map_vs_gmap.scatter if map_vs_gmap else None,
            reduction.figure if reduction else None,
            curves.figure if curves else None) if f is not None),
    )
