"""Section 1b: generated answers. Each set of answer judgments (a judgment kind that serves
support or nugget measures: ``support``, ``support_shared``, ``nuggets``) gets the leaderboards,
significance test and per-topic chart that section 1, 3 and 4 give the first qrels set, and
support against nugget score is drawn as MAP against GMAP is (one dot per answer run). From the
store alone, as the rest of the page; the answer pages (:mod:`.answerpages`) read the files.
"""

from __future__ import annotations

import numpy as np

from ..measures import parse_measure
from ..stats import rank_agreement
from . import figures, topics
from .choices import NUGGETS, SUPPORT, answer_sets, run_page_names, serving
from .contract import AnswerBoard, AnswerSection, SupportNuggetRow, SupportNuggets
from .leaderboard import leaderboards_on, shown_suites, significance_on
from .numbers import num, ranks


def answer_section(config, store, seed: int, run_pages: bool) -> AnswerSection | None:
    """Section 1b of ``config`` from its ``store``: None when no answer judgment set has a
    score. ``run_pages``: the answer pages are written with the report (so linked)."""
    systems = tuple(s.name for s in store.declared_systems() if s.kind == "answers")
    boards = []
    first = config.qrels[0].name
    for spec in answer_sets(config):
        if not store.means(spec.name)[1]:
            continue
        shown = spec.name != first  # the first set: sections 1, 3 and 4 show it already
        boards_on = leaderboards_on(config, store, spec.name, seed) if shown else ()
        lead = boards_on[0] if boards_on else None
        measure = lead.measures[0] if lead is not None and lead.measures else ""
        boards.append(AnswerBoard(
            qrels=spec.name, kind=spec.kind, leaderboards=boards_on,
            significance=significance_on(store, spec.name, lead, measure, seed)
            if lead is not None and measure else None,
            per_topic=topics.per_topic(store, spec.name, measure, [r.name for r in lead.rows])
            if lead is not None and measure else None))
    if not boards:
        return None
    pages = ({name: f"systems/answers/{file}" for name, file in
              run_page_names(systems).items()} if run_pages else {})
    return AnswerSection(systems=systems, boards=tuple(boards),
                         chart=support_nuggets(config, store), pages=pages)


def first_measure(config, store, qrels: str, need: str) -> str | None:
    """The first measure needing ``need`` that ``qrels`` has scores of: the suites' (shown
    order) first, then the store's."""
    suites = [str(m) for s in shown_suites(config) for m in config.suites[s]]
    stored = sorted({row[2] for row in store.means(qrels)[1]})
    return next((m for m in dict.fromkeys(suites + stored)
                 if m in stored and parse_measure(m).definition.needs == need), None)


def support_nuggets(config, store) -> SupportNuggets | None:
    """Support against nugget score over the answer runs scored on both (at least 2)."""
    support, nuggets = serving(config, SUPPORT), serving(config, NUGGETS)
    if support is None or nuggets is None:
        return None
    x_measure = first_measure(config, store, support.name, SUPPORT)
    y_measure = first_measure(config, store, nuggets.name, NUGGETS)
    if x_measure is None or y_measure is None:
        return None
    x = _means(store, support.name, x_measure)
    y = _means(store, nuggets.name, y_measure)
    names = [n for n in x if n in y]
    if len(names) < 2:
        return None
    xs = np.array([x[n] for n in names])
    ys = np.array([y[n] for n in names])
    x_rank, y_rank = ranks(xs), ranks(ys)
    order = np.argsort(x_rank, kind="stable")
    rows = tuple(SupportNuggetRow(name=names[i], support=num(xs[i]),
                                  support_rank=int(x_rank[i]), nuggets=num(ys[i]),
                                  nuggets_rank=int(y_rank[i]),
                                  change=int(x_rank[i] - y_rank[i])) for i in order)
    tau = f"{rank_agreement(xs, ys).tau:.4f}" if len(names) >= 3 else "-"
    return SupportNuggets(
        support_qrels=support.name, support_measure=x_measure, nuggets_qrels=nuggets.name,
        nuggets_measure=y_measure, rows=rows, tau=tau,
        findings=_findings(names, x_rank, y_rank, x_measure, y_measure),
        scatter=figures.support_nuggets(names, xs, ys, f"{x_measure} ({support.name})",
                                        f"{y_measure} ({nuggets.name})"))


def _means(store, qrels: str, measure: str) -> dict[str, float]:
    """{system: its finite mean of ``measure`` on ``qrels``}."""
    return {system: float(value) for system, _, _, value, _ in
            store.means(qrels, measures=[measure])[1]
            if value is not None and np.isfinite(value)}


def _findings(names, x_rank: np.ndarray, y_rank: np.ndarray, x_measure: str,
              y_measure: str) -> tuple[str, ...]:
    top_x, top_y = names[int(np.argmin(x_rank))], names[int(np.argmin(y_rank))]
    out = [f"Both rank {top_x} first." if top_x == top_y else
           f"{x_measure} ranks {top_x} first, {y_measure} {top_y}: citing well and covering "
           "the nuggets are different skills here."]
    change = x_rank - y_rank
    moved = [int(i) for i in np.argsort(-np.abs(change), kind="stable")[:5] if change[i]]
    out.append("No run changes rank." if not moved else "The largest changes: " + "; ".join(
        f"{names[i]} from {x_rank[i]} by support to {y_rank[i]} by nuggets" for i in moved)
        + ".")
    return tuple(out)
