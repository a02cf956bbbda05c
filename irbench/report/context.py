"""The report's context: every number the HTML shows, computed here from the store.

Templates only loop and print (``render.py``); each dataclass field says what it holds
(``metadata["help"]``), and a test fails on any field without it. Everything that comes from
participants (system names, tags, metadata, topic ids) is plain text here and escaped by Jinja2.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from .. import __version__, stats
from ..config import pooled_systems, priority_order
from ..measures import PROFILE, parse_measure
from ..measures.base import GEO_MEAN_FLOOR
from ..pooling import Coverage
from ..stats import rank_agreement
from ..stats.latex import labels
from . import analyses, figures
from .fields import documented
from .figures import Figure
from .overview import DEFAULT_RANK_BY, Overview, overview
from .reduction import DESIGNS, Reduction

_f = documented


@dataclass(frozen=True)
class Cell:
    """One leaderboard value."""

    value: float | None = _f("the mean over topics (trec_eval's 'all' value), or None")
    text: str = _f("the value printed with 4 decimals, or '-'")
    ci: str = _f("the 95% t-interval of the mean, printed, or '' (none for geometric means)")
    best: bool = _f("the best value of its column")
    mark: str = _f("'▲' / '▼' significantly above / below the baseline, else ''")
    p_adjusted: str = _f("the adjusted p-value against the baseline, printed, or ''")


@dataclass(frozen=True)
class SystemRow:
    """One system of the leaderboard."""

    rank: int = _f("rank by the first measure (1 best)")
    name: str = _f("system name (participant text)")
    group: str = _f("group (participant text)")
    type: str = _f("manual / automatic / ... (participant text)")
    baseline: bool = _f("the config's baseline system")
    official: bool = _f("an official run (else unofficial)")
    pooled: str = _f("'yes' / 'no' whether it contributed to the pool (its pooled: flag, "
                     "else report.pooled_per_group and the priorities), '' when unknown")
    cells: tuple[Cell, ...] = _f("one cell per measure, in the leaderboard's measure order")


@dataclass(frozen=True)
class Leaderboard:
    """Section 1: systems x suite measures."""

    qrels: str = _f("the qrels set the values are computed on")
    measures: tuple[str, ...] = _f("canonical measure names, in suite order")
    rows: tuple[SystemRow, ...] = _f("systems, best first by the first measure")
    topics: int = _f("number of topics averaged over")
    baseline: str = _f("the baseline system, or '' (no significance marks)")
    test: str = _f("how significance was decided, in words")


@dataclass(frozen=True)
class RankChange:
    """One system under MAP and GMAP."""

    name: str = _f("system name (participant text)")
    map: str = _f("MAP, printed")
    map_rank: int = _f("rank by MAP")
    gmap: str = _f("GMAP, printed")
    gmap_rank: int = _f("rank by GMAP")
    change: int = _f("MAP rank - GMAP rank (positive: GMAP ranks it higher)")
    worst_topics: str = _f("its three lowest-AP topics, printed 'topic (AP)'")


@dataclass(frozen=True)
class MapVsGmap:
    """Section 5: MAP against GMAP (Robertson 2006)."""

    rows: tuple[RankChange, ...] = _f("systems by MAP rank")
    tau: str = _f("Kendall's tau between the two rankings, printed")
    tau_ap: str = _f("Yilmaz et al.'s tau_AP, printed")
    swaps: int = _f("pairs of systems the two rankings order differently")
    floor: str = _f("the AP floor GMAP uses (trec_eval's 1e-5)")
    strips: tuple[Chart, ...] = _f("per-topic AP of each system on a log scale (what GMAP "
                                   "weighs), STRIP_ROWS systems per chart, each with its axis")
    findings: tuple[str, ...] = _f("what the two rankings show, computed: the same leader or "
                                   "not, the largest rank changes")
    scatter: Figure = _f("each system at (MAP, GMAP), drawn by matplotlib (.svg inline)")


@dataclass(frozen=True)
class MatrixCell:
    """One pair of the significance matrix."""

    text: str = _f("the adjusted p-value, printed, or '' on the diagonal")
    detail: str = _f("mean difference and effect size d_z (row minus column), printed")
    shade: str = _f("a CSS colour: darker for smaller p (green: row better, red: row worse)")
    p: float = _f("the adjusted p-value (NaN on the diagonal)")
    diff: float = _f("mean difference, row minus column (NaN on the diagonal)")
    effect: float = _f("effect size d_z, row minus column (NaN on the diagonal)")


@dataclass(frozen=True)
class Significance:
    """Section 3: all pairs on the first measure."""

    measure: str = _f("the measure compared")
    test: str = _f("the test, in words")
    systems: tuple[str, ...] = _f("every system, best first (participant text)")
    matrix: tuple[tuple[MatrixCell, ...], ...] = _f("the first MATRIX_SYSTEMS systems' rows "
                                                    "and columns, in ``systems`` order")
    groups: tuple[str, ...] = _f("groups not significantly different, best first, printed")
    membership: tuple[str, ...] = _f("per system (``systems`` order): the letters of the groups "
                                     "it is in, e.g. 'ab' when it sits in two that overlap")
    p: np.ndarray = _f("(S, S) adjusted p-values of every pair, in ``systems`` order")
    diff: np.ndarray = _f("(S, S) mean differences, row minus column")
    effect: np.ndarray = _f("(S, S) effect sizes d_z, row minus column")


@dataclass(frozen=True)
class Curve:
    """One system's 11-point interpolated precision-recall curve."""

    name: str = _f("system name (participant text)")
    values: str = _f("the 11 precisions, printed")
    colour: str = _f("its line colour ('' for the grey background lines)")


@dataclass(frozen=True)
class PrecisionRecall:
    """Section 7: interpolated precision at recall 0, 0.1 ... 1 (trec_eval's)."""

    curves: tuple[Curve, ...] = _f("every system; the first few coloured and listed")
    figure: Figure = _f("the curves, drawn by matplotlib (.svg inline)")


@dataclass(frozen=True)
class ReductionRow:
    """One measure in the judgment-reduction experiment."""

    measure: str = _f("canonical measure name")
    tau: tuple[str, ...] = _f("Kendall's tau with the same measure's full-judgment ranking, "
                              "per fraction")
    tau_map: tuple[str, ...] = _f("Kendall's tau with the ranking by MAP on the full "
                                  "judgments, per fraction")
    rmse: tuple[str, ...] = _f("RMS error of the systems' means per fraction")
    colour: str = _f("its line colour in the figure")


@dataclass(frozen=True)
class ReductionSection:
    """Section 6b: the judgment-reduction experiment (Buckley & Voorhees 2004)."""

    design: str = _f("the reduction design's name (report option reduction_design)")
    how: str = _f("what the design keeps and drops")
    citation: str = _f("where the design is published")
    fractions: tuple[str, ...] = _f("fractions of each topic's judgments kept, printed")
    seeds: str = _f("the seeds averaged over, printed")
    rows: tuple[ReductionRow, ...] = _f("one per measure")
    figure: Figure = _f("tau against the fraction kept, drawn by matplotlib (.svg inline)")
    findings: tuple[str, ...] = _f("what the stored numbers show, in sentences computed from "
                                   "them (which measures hold, which equal another)")


@dataclass(frozen=True)
class Mark:
    """One drawn element of a chart, in SVG units."""

    x: float = _f("x (or left edge)")
    y: float = _f("y (or top edge)")
    size: float = _f("radius of a dot, or height of a bar")
    colour: str = _f("CSS colour")
    title: str = _f("tooltip text (participant text possible)")


@dataclass(frozen=True)
class ChartRow:
    """One system's row of a chart."""

    name: str = _f("system name (participant text)")
    y: float = _f("the row's baseline y")
    marks: tuple[Mark, ...] = _f("its dots or bars")


@dataclass(frozen=True)
class Chart:
    """A chart with one row per system (strip plot of per-topic values, or difference bars)."""

    title: str = _f("what the chart shows")
    width: int = _f("SVG width")
    height: int = _f("SVG height")
    axis: tuple[Mark, ...] = _f("axis ticks: x and label (in ``title``)")
    rows: tuple[ChartRow, ...] = _f("systems, top to bottom")


@dataclass(frozen=True)
class BiasRow:
    """One system when its group is left out of the pool."""

    name: str = _f("system name (participant text)")
    group: str = _f("the group left out (participant text)")
    removed: int = _f("judgments only that group's runs contributed")
    removed_relevant: int = _f("of them relevant")
    full: str = _f("AP with all judgments, printed")
    reduced: str = _f("AP without the group's unique documents, printed")
    change: str = _f("reduced - full, printed with its sign")


@dataclass(frozen=True)
class PoolBias:
    """Section 6c: leave-one-group-out pool bias (Zobel 1998; NIST's procedure)."""

    depth: int = _f("the pool depth k the qrels were built with (config report.pool_depth)")
    per_group: str = _f("pooled runs per group, printed ('all' when every run was pooled)")
    pooled: str = _f("which runs the pool was rebuilt from, printed")
    coverage: str = _f("how much of the qrels the rebuilt pool holds, printed")
    warning: str = _f("why the figures may be wrong (the rebuilt pool is not the judged one), "
                      "or ''")
    mean_change: str = _f("mean change of AP over systems, printed")
    max_drop: str = _f("the largest drop, printed")
    rows: tuple[BiasRow, ...] = _f("systems, most affected first")


@dataclass(frozen=True)
class TopicRow:
    """One topic across systems (as TREC's per-run summaries print best / median / worst)."""

    query_id: str = _f("topic id")
    text: str = _f("the topic's title or first words")
    best: str = _f("the best value over systems, printed")
    best_system: str = _f("a system with the best value (participant text)")
    median: str = _f("the median over systems, printed")
    worst: str = _f("the worst value over systems, printed")


@dataclass(frozen=True)
class PerTopic:
    """Section 4: the first measure per topic across systems."""

    measure: str = _f("the measure shown")
    rows: tuple[TopicRow, ...] = _f("topics, hardest first (lowest median)")
    strips: tuple[Chart, ...] = _f("each system's per-topic values as dots, median marked; "
                                   "STRIP_ROWS systems per chart, each with its axis")
    differences: tuple[Chart, ...] = _f("per system: per-topic difference from the baseline")


@dataclass(frozen=True)
class JudgedRow:
    """How much of one system's ranking is judged."""

    name: str = _f("system name (participant text)")
    judged_10: str = _f("judged@10, printed")
    judged_100: str = _f("judged@100, printed")
    flagged: bool = _f("judged@10 below the threshold: its scores rest on unjudged documents")


@dataclass(frozen=True)
class Judged:
    """Section 6: incomplete judgments."""

    qrels: str = _f("the qrels set")
    rows: tuple[JudgedRow, ...] = _f("systems, least judged first")
    threshold: str = _f("the judged@10 below which a system is flagged, printed")
    finding: str = _f("how many systems are flagged and which (or that none is), computed")


@dataclass(frozen=True)
class Input:
    """One input file."""

    kind: str = _f("topics, qrels or run")
    name: str = _f("its name in the config (participant text for runs)")
    path: str = _f("its path")
    sha256: str = _f("sha256 of its content, or '' if never read")


@dataclass(frozen=True)
class Provenance:
    """Section 8: what the numbers come from."""

    config: str = _f("the config file's path")
    config_sha256: str = _f("sha256 of the config")
    config_text: str = _f("the config's text")
    options: str = _f("the evaluation options, as stored with every score (JSON)")
    version: str = _f("the irbench version of this report")
    last_run: str = _f("start, end and status of the last 'irbench run', printed")
    seed: int = _f("the seed of every random draw of the report")
    inputs: tuple[Input, ...] = _f("every input file with its sha256")


@dataclass(frozen=True)
class ReportContext:
    """Everything ``index.html`` shows."""

    title: str = _f("the campaign's title: report.title, else its name (config text)")
    campaign: str = _f("the campaign's name (config name:, else the config file's name)")
    links: dict[str, str] = _f("{system: its run page, relative to index.html} when run "
                               "pages are written with the report, else {}")
    toc: tuple[tuple[str, str], ...] = _f("(section id, heading) of every section shown")
    overview: Overview | None = _f("section 2: rankings per run type and best run per group, "
                                   "None when there is nothing to split")
    generated_at: str = _f("when the report was made (UTC)")
    leaderboard: Leaderboard = _f("section 1")
    significance: Significance | None = _f("section 3, None with fewer than 3 systems")
    per_topic: PerTopic | None = _f("section 4, None without scores")
    map_vs_gmap: MapVsGmap | None = _f("section 5, None without AP scores")
    judged: Judged | None = _f("section 6, None when the store keeps no profiles (made by "
                               "'irbench run' for ad hoc qrels)")
    precision_recall: PrecisionRecall | None = _f("section 7, None without stored profiles")
    reduction: ReductionSection | None = _f("section 6b, None unless the store holds it for "
                                            "its current inputs")
    pool_bias: PoolBias | None = _f("section 6c, None unless the config's report gives "
                                    "pool_depth and the store holds it for its current inputs")
    not_shown: tuple[str, ...] = _f("why an analysis is missing (not computed, or stale)")
    provenance: Provenance = _f("section 8")
    figures: tuple[Figure, ...] = _f("every chart of the page, for --figures (PDF and PNG)")


CONTEXT_TYPES = (BiasRow, PoolBias, Mark, ChartRow, Chart, Cell, SystemRow, Leaderboard, RankChange, MapVsGmap, MatrixCell,
                 Significance, Curve, PrecisionRecall, ReductionRow, ReductionSection, TopicRow, PerTopic, JudgedRow, Judged,
                 Input, Provenance, ReportContext)
SECTIONS = {"leaderboard": "1. Leaderboard", "overview": "2. By run type and group",
            "significance": "3. Which differences are real", "per-topic": "4. Per topic",
            "map-gmap": "5. MAP against GMAP", "judged": "6. Incomplete judgments",
            "reduction": "6b. Fewer judgments", "pool-bias": "6c. Pool bias",
            "precision-recall": "7. Precision and recall", "provenance": "8. Provenance"}
JUDGED_FLAG = 0.5  # judged@10 under this: most of the top 10 is unjudged
MATRIX_SYSTEMS = 30  # the significance matrix shows the best 30; significance.csv every pair


# ---- computing -------------------------------------------------------------------------------


def run_page_names(names) -> dict[str, str]:
    """A safe, unique file name per system name (participant text): letters, digits, '.',
    '_' and '-' kept, anything else '_', never hidden, never 'index'."""
    out, used = {}, {"index.html"}
    for name in names:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100].lstrip(".") or "run"
        candidate, k = f"{base}.html", 1
        while candidate.lower() in used:
            k += 1
            candidate = f"{base}-{k}.html"
        used.add(candidate.lower())
        out[name] = candidate
    return out


def _spread(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per topic (column): best, median and worst over systems, ignoring missing values."""
    with np.errstate(all="ignore"):
        return (np.nanmax(values, axis=0), np.nanmedian(values, axis=0),
                np.nanmin(values, axis=0))


def _num(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4f}"


def _signed(value: float) -> str:
    """A difference printed with its sign, 4 decimals; one that prints as zero is '0.0000'
    (never '-0.0000' or '+0.0000')."""
    text = f"{value:+.4f}"
    return "0.0000" if text in ("+0.0000", "-0.0000") else text


def _num3(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"


def _ci(values: np.ndarray) -> tuple[float, float] | None:
    from scipy import stats as st

    values = values[np.isfinite(values)]
    if len(values) < 2:
        return None
    half = st.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return float(values.mean() - half), float(values.mean() + half)


def build_context(config, store, seed: int = 0, progress=None, run_pages: bool = False
                  ) -> ReportContext:
    """The report of ``config`` from its (open, read-only is enough) ``store`` alone: no run
    file is read. ``progress(done, total, what)`` hears of the steps; ``run_pages``: the
    report is written with one page per run, so every system name links to its page."""
    qrels = config.qrels[0].name
    steps = ("leaderboard", "significance", "per topic", "profiles and analyses")
    tell = (lambda i: progress(i + 1, len(steps), steps[i])) if progress else (lambda i: None)
    tell(0)
    board = _leaderboard(config, store, qrels, seed)
    tell(1)
    sig = _significance(store, qrels, board, focus_measure(config), seed)
    tell(2)
    per_topic = _per_topic(store, qrels, focus_measure(config), [r.name for r in board.rows],
                           board.baseline)
    tell(3)
    judged, curves = _from_profiles(store, qrels, [str(r.name) for r in board.rows])
    map_vs_gmap, reduction = _map_vs_gmap(store, qrels), _reduction(config, store)
    pool_bias = _pool_bias(config, store)
    links = {}
    if run_pages:
        links = {name: f"systems/{file}" for name, file in
                 run_page_names(store.score_matrix(qrels, focus_measure(config))[0]).items()}
    tables = overview(board, tuple(config.report.get("rank_by") or DEFAULT_RANK_BY),
                      {s.name: s for s in store.declared_systems()})
    shown = (("leaderboard", board), ("overview", tables), ("significance", sig),
             ("per-topic", per_topic), ("map-gmap", map_vs_gmap), ("judged", judged),
             ("reduction", reduction), ("pool-bias", pool_bias),
             ("precision-recall", curves), ("provenance", True))
    return ReportContext(
        title=str(config.report.get("title") or config.name),
        campaign=config.name,
        links=links,
        toc=tuple((anchor, SECTIONS[anchor]) for anchor, part in shown if part is not None),
        overview=tables,
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        leaderboard=board,
        significance=sig,
        per_topic=per_topic,
        map_vs_gmap=map_vs_gmap,
        judged=judged,
        precision_recall=curves,
        reduction=reduction,
        pool_bias=pool_bias,
        not_shown=_not_shown(config, store),
        provenance=_provenance(config, store, seed),
        figures=tuple(f for f in (
            map_vs_gmap.scatter if map_vs_gmap else None,
            reduction.figure if reduction else None,
            curves.figure if curves else None) if f is not None),
    )


def leaderboard(config, store, seed: int = 0) -> Leaderboard:
    """Section 1 alone (for the exports), on the config's first qrels set."""
    return _leaderboard(config, store, config.qrels[0].name, seed)


def _leaderboard(config, store, qrels: str, seed: int) -> Leaderboard:

    spec = next(q for q in config.qrels if q.name == qrels)
    measures = [str(m) for m in spec.measures(next(iter(config.suites.values())))]
    _, rows = store.means(qrels, measures=measures)
    means: dict[tuple[str, str], float] = {(r[0], r[2]): r[3] for r in rows}
    systems = sorted({r[0] for r in rows})
    declared = store.declared_systems()
    meta = {s.name: s for s in declared}
    matrices = {m: store.score_matrix(qrels, m) for m in measures}
    first = measures[0]
    systems.sort(key=lambda s: (-(means.get((s, first)) or -math.inf), s))
    baseline = next((s.name for s in declared if s.baseline and s.name in systems), "")
    marks: dict[tuple[str, str], tuple[str, float]] = {}
    how = "no baseline marked in the config: no significance marks"
    if baseline and len(systems) > 1:
        scores = [stats.Scores(m, tuple(names), tuple(topics), values)
                  for m, (names, topics, values) in matrices.items()
                  if len(names) and not np.isnan(values).any()]
        comparison = stats.compare(scores, baseline=baseline, seed=seed, family="measure")
        for pair in comparison.pairs:
            other = pair.system_a if pair.system_b == baseline else pair.system_b
            diff = pair.mean_a - pair.mean_b if pair.system_b == baseline else \
                pair.mean_b - pair.mean_a
            mark = ("▲" if diff > 0 else "▼") if pair.significant else ""
            marks[(other, pair.measure)] = (mark, pair.p_adjusted)
        how = (f"against {baseline}: paired randomisation test, 10,000 samples, seed {seed}, "
               "Holm correction over the systems of each measure (the family: per measure), "
               "alpha 0.05")
    best = {m: max((means[(s, m)] for s in systems if (s, m) in means
                    and means[(s, m)] is not None and math.isfinite(means[(s, m)])),
                   default=None) for m in measures}
    pooled = _pooled(config, declared)
    table = []
    for rank, name in enumerate(systems, 1):
        cells = []
        for m in measures:
            value = means.get((name, m))
            names, _, values = matrices[m]
            family = parse_measure(m).definition
            arithmetic = family.aggregate == "mean"  # not GMAP's
            ci = _ci(values[names.index(name)]) if name in names and arithmetic else None
            mark, p = marks.get((name, m), ("", float("nan")))
            shown = (str(int(round(value))) if family.kind == "int" and value is not None
                     and math.isfinite(value) else _num(value))  # counts print whole
            cells.append(Cell(value, shown,
                              f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "",
                              value is not None and value == best[m], mark,
                              "" if math.isnan(p) else f"{p:.4f}"))
        s = meta.get(name)
        table.append(SystemRow(rank, name, s.group if s else "", s.type if s else "",
                               name == baseline, s.official if s else True,
                               pooled.get(name, ""), tuple(cells)))
    topics = len(matrices[first][1]) if matrices else 0
    return Leaderboard(qrels, tuple(measures), tuple(table), topics, baseline, how)


def _pooled(config, systems) -> dict[str, str]:
    """{system: 'yes'/'no'}: the systems declared ``pooled:`` when any is, else the first
    report.pooled_per_group runs of each group by priority (then config order); {} when the
    config does not say."""
    declared = pooled_systems(systems)
    if declared is not None:
        return {s.name: "yes" if s.name in declared else "no" for s in systems}
    per_group = config.report.get("pooled_per_group")
    if not per_group:
        return {}

    out: dict[str, str] = {}
    taken: dict[str, int] = {}
    for s in priority_order(systems):
        group = s.group or s.name
        taken[group] = taken.get(group, 0) + 1
        out[s.name] = "yes" if taken[group] <= per_group else "no"
    return out


def _map_vs_gmap(store, qrels: str) -> MapVsGmap | None:

    names, topics, ap = store.score_matrix(qrels, "AP")
    if len(names) < 2 or np.isnan(ap).any():
        return None
    mean = ap.mean(axis=1)
    gmean = np.exp(np.log(np.maximum(ap, GEO_MEAN_FLOOR)).mean(axis=1))
    map_rank = _ranks(mean)
    gmap_rank = _ranks(gmean)
    agreement = rank_agreement(mean, gmean)
    rows = []
    for i in np.argsort(map_rank, kind="stable"):
        worst = np.argsort(ap[i], kind="stable")[:3]
        rows.append(RankChange(names[i], _num(mean[i]), int(map_rank[i]), _num(gmean[i]),
                               int(gmap_rank[i]), int(map_rank[i] - gmap_rank[i]),
                               ", ".join(f"{topics[t]} ({ap[i, t]:.4f})" for t in worst)))
    by_map = [int(i) for i in np.argsort(map_rank, kind="stable")]
    strips = strip_charts("AP per topic, log scale (GMAP floors AP at 1e-5)",
                          [names[i] for i in by_map], topics, ap[by_map], log=True)
    return MapVsGmap(tuple(rows), f"{agreement.tau:.4f}", f"{agreement.tau_ap:.4f}",
                     int(agreement.swaps), f"{GEO_MEAN_FLOOR:g}", strips,
                     _map_gmap_findings(names, map_rank, gmap_rank),
                     figures.map_gmap(names, mean, gmean))


def _map_gmap_findings(names, map_rank: np.ndarray, gmap_rank: np.ndarray) -> tuple[str, ...]:
    """Sentences computed from the two rankings: whether they agree on the leader, and the
    systems whose rank changes most."""
    top_map, top_gmap = names[int(np.argmin(map_rank))], names[int(np.argmin(gmap_rank))]
    out = [f"Both rank {top_map} first." if top_map == top_gmap else
           f"MAP ranks {top_map} first, GMAP {top_gmap}."]
    change = map_rank - gmap_rank
    moved = [int(i) for i in np.argsort(-np.abs(change), kind="stable")[:5] if change[i]]
    if not moved:
        out.append("No system changes rank.")
    else:
        out.append("The largest changes: " + "; ".join(
            f"{names[i]} from {map_rank[i]} by MAP to {gmap_rank[i]} by GMAP" for i in moved)
            + ".")
    return tuple(out)


LEFT, PLOT, ROW = 150, 500, 16  # chart layout: label width, plot width, row height
STRIP_ROWS = 30  # systems per strip chart: a chart never taller than a printed page


def strip_charts(title: str, names, topics, values, log: bool = False) -> tuple[Chart, ...]:
    """:func:`strip_chart` of STRIP_ROWS systems at a time (the last chart takes the rest
    when they are few), each a complete chart with its axis, on one shared scale."""
    count = len(names)
    cuts = list(range(0, count, STRIP_ROWS))
    if len(cuts) > 1 and count - cuts[-1] < STRIP_ROWS // 3:
        cuts.pop()  # a few last systems join the chart before
    bounds = list(zip(cuts, cuts[1:] + [count]))
    scale = (min(0.0, float(np.nanmin(values))), max(1.0, float(np.nanmax(values)))) \
        if np.isfinite(values).any() else (0.0, 1.0)
    return tuple(strip_chart(title if len(bounds) == 1 else
                             f"{title}: systems {a + 1} to {b} of {count}",
                             names[a:b], topics, values[a:b], log=log, scale=scale)
                 for a, b in bounds)


def strip_chart(title: str, names, topics, values, log: bool = False,
                scale: tuple[float, float] = (0.0, 1.0)) -> Chart:
    """Dots of each system's per-topic values (log10 scale from 1e-5 when ``log``, else
    ``scale``), its median as a dark tick; rows in the given order."""
    def x(v: np.ndarray) -> np.ndarray:
        if log:
            return LEFT + PLOT * (np.log10(np.clip(v, 1e-5, 1)) + 5) / 5
        lo, hi = scale
        return LEFT + PLOT * (v - lo) / (hi - lo)

    rows = []
    for i, name in enumerate(names):
        y = 10 + ROW * i + ROW / 2
        xs = x(values[i])
        marks = [Mark(round(float(px), 1), y, 2.5, "rgba(27,106,201,.45)",
                      f"{topics[t]}: {values[i, t]:.4f}")
                 for t, px in enumerate(xs) if np.isfinite(values[i, t])]
        med = np.nanmedian(values[i])
        if np.isfinite(med):
            marks.append(Mark(round(float(x(np.array([med]))[0]), 1), y, 6, "#222",
                              f"median {med:.4f}"))
        rows.append(ChartRow(name, y, tuple(marks)))
    ticks = ([(10.0 ** e, f"1e{e}" if e < 0 else "1") for e in range(-5, 1)] if log else
             [(v, f"{v:.2f}".rstrip("0").rstrip(".") if v % 1 else f"{v:.0f}")
              for v in np.linspace(scale[0], scale[1], 5).tolist()])
    axis = tuple(Mark(round(float(x(np.array([v]))[0]), 1), 0, 0, "", label)
                 for v, label in ticks)
    return Chart(title, LEFT + PLOT + 20, 30 + ROW * len(names), axis, tuple(rows))


def difference_chart(name: str, baseline: str, topics, diff: np.ndarray) -> Chart:
    """Bars of ``diff`` (system - baseline) per topic, largest first; green up, red down."""
    order = np.argsort(-np.nan_to_num(diff, nan=0.0), kind="stable")
    scale = max(float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 0.0, 1e-9)
    width = max(4.0, min(12.0, PLOT / max(len(topics), 1)))
    mid = 60.0
    marks = []
    for k, t in enumerate(order):
        d = float(diff[t]) if np.isfinite(diff[t]) else 0.0
        h = 50 * abs(d) / scale
        marks.append(Mark(round(LEFT + k * width, 1), round(mid - h if d > 0 else mid, 1),
                          round(h, 1), "#2b8a3e" if d > 0 else "#c92a2a",
                          f"{topics[t]}: {d:+.4f}"))
    chart_w = int(LEFT + width * len(topics) + 20)
    return Chart(f"{name} minus {baseline}, per topic (largest gain first; full bar = "
                 f"{scale:.4f})", chart_w, 120, (), (ChartRow(name, mid, tuple(marks)),))


def _per_topic(store, qrels: str, measure: str, order=(), baseline: str = ""
               ) -> PerTopic | None:
    names, topics, values = store.score_matrix(qrels, measure)
    if not names:
        return None
    ranked = [n for n in order if n in names] + [n for n in names if n not in order]
    index = [names.index(n) for n in ranked]
    strips = strip_charts(f"{measure} per topic", ranked, topics, values[index])
    differences: tuple[Chart, ...] = ()
    if baseline in names:
        base = values[names.index(baseline)]
        differences = tuple(difference_chart(n, baseline, topics, values[names.index(n)] - base)
                            for n in ranked if n != baseline)
    text = store.topic_texts()
    best, median, worst = _spread(values)
    who = np.nanargmax(np.where(np.isnan(values), -np.inf, values), axis=0)
    order = np.argsort(median, kind="stable")
    rows = tuple(TopicRow(topics[t], text.get(topics[t], ""), _num(best[t]), names[who[t]],
                          _num(median[t]), _num(worst[t])) for t in order)
    return PerTopic(measure, rows, strips, differences)


def _from_profiles(store, qrels: str, order: list[str]):
    """judged@10/@100 and 11-point curves of every system: the profile ``irbench run`` keeps
    for every ad hoc evaluation (measures a campaign's suites need not contain)."""
    profiles = {name: p for name, p in store.profiles(qrels).items()
                if all(m in p for m in PROFILE)}
    if not profiles:
        return None, None
    rows = [JudgedRow(name, _num(p["judged@10"]), _num(p["judged@100"]),
                      p["judged@10"] < JUDGED_FLAG) for name, p in profiles.items()]
    rows.sort(key=lambda r: (r.judged_10, r.name))
    flagged = [r.name for r in rows if r.flagged]
    finding = (f"No system has judged@10 below {JUDGED_FLAG:.2f}." if not flagged else
               f"{len(flagged)} of {len(rows)} systems have judged@10 below "
               f"{JUDGED_FLAG:.2f}: {', '.join(flagged[:10])}"
               + (f" and {len(flagged) - 10} more" if len(flagged) > 10 else "") + ".")
    judged = Judged(qrels, tuple(rows), f"{JUDGED_FLAG:.2f}", finding)
    curves = {name: [float(p[m]) for m in PROFILE[2:]] for name, p in profiles.items()}
    ranked = [n for n in order if n in curves] + sorted(set(curves) - set(order))
    shown = ranked[:len(figures.OKABE_ITO)]
    lines = tuple(Curve(name, " ".join(f"{y:.3f}" for y in curves[name]),
                        figures.OKABE_ITO[i] if i < len(shown) else "")
                  for i, name in enumerate(ranked))
    return judged, PrecisionRecall(lines, figures.precision_recall(
        {n: curves[n] for n in ranked}, shown))


def _not_shown(config, store) -> tuple[str, ...]:
    """Why an analysis the report could show is missing: never computed, or computed from
    other inputs (stale, so not shown)."""
    notes = []
    for spec, what in ((analyses.reduction_spec(config, store), "The judgment-reduction "
                        "experiment (6b)"),
                       (analyses.pool_bias_spec(config, store), "The pool-bias analysis (6c)")):
        if spec is None or analyses.load(store, spec) is not None:
            continue
        if analyses.stale(store, spec):
            notes.append(f"{what} in the store was computed from other inputs or parameters "
                         "(runs, qrels, options or report settings changed since), so it is "
                         "not shown: 'irbench run CONFIG' (or 'irbench analyse CONFIG') "
                         "computes it again.")
        elif spec.kind == analyses.POOL_BIAS or config.report.get("reduction_design"):
            notes.append(f"{what} has not been computed yet: run 'irbench run CONFIG'.")
        else:
            notes.append(f"{what} is not computed: set report.reduction_design in the config "
                         "(then 'irbench run CONFIG' computes it), or run 'irbench analyse "
                         "CONFIG'.")
    return tuple(notes)


def _reduction(config, store) -> ReductionSection | None:
    """The judgment-reduction experiment on the first qrels set, as stored for the store's
    current inputs (irbench run or irbench analyse computes it)."""
    spec = analyses.reduction_spec(config, store)
    saved = analyses.load(store, spec) if spec is not None else None
    if saved is None:
        return None
    result = Reduction.from_json(saved)
    design = DESIGNS[result.design]
    labels = tuple(f"{f:.0%}" for f in result.fractions)
    rows = tuple(ReductionRow(m, tuple(_num3(t) for t in result.tau[i]),
                              tuple(_num3(t) for t in result.tau_map[i]),
                              tuple(f"{e:.4f}" for e in result.rmse[i]),
                              figures.OKABE_ITO[i % len(figures.OKABE_ITO)])
                 for i, m in enumerate(result.measures))
    figure = figures.reduction(result.measures, labels, result.tau, result.tau_map, design.name)
    return ReductionSection(design.name, design.description, design.citation, labels,
                            ", ".join(map(str, result.seeds)), rows, figure,
                            reduction_findings(result))


# why a measure equals another when judgments are removed (not sampled): nothing is left
# unjudged inside the pool, so the estimator has nothing to estimate
_BY_CONSTRUCTION = {("AP", "infAP"): "infAP estimates AP from a sample of the pool; when the "
                    "dropped judgments are removed rather than marked unjudged, no document of "
                    "the pool is unjudged and infAP equals AP by construction"}


def reduction_findings(result: Reduction) -> tuple[str, ...]:
    """Sentences computed from the experiment's numbers: measures whose values equal
    another's at every fraction (and why, when it holds by construction), which measures keep
    their ranking best and worst at the fewest judgments, and which stay closest to MAP."""
    out = []
    names = list(result.measures)
    same: set[int] = set()
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if j in same or not (np.allclose(result.tau[i], result.tau[j], equal_nan=True) and
                                 np.allclose(result.rmse[i], result.rmse[j], equal_nan=True)):
                continue
            same.add(j)
            why = _BY_CONSTRUCTION.get((names[i], names[j]))
            out.append(f"{names[j]} gives the same values as {names[i]} at every fraction "
                       f"under design {result.design}" +
                       (f": {why}. Its line is {names[i]}'s and it is no evidence of its own."
                        if why else "; their lines coincide."))
    last = len(result.fractions) - 1
    if last > 0:
        kept = [i for i in range(len(names)) if i not in same and
                np.isfinite(result.tau[i, last])]
        if len(kept) >= 2:
            order = sorted(kept, key=lambda i: (-result.tau[i, last], names[i]))
            best, worst = order[0], order[-1]
            ties = [names[i] for i in order if result.tau[i, last] == result.tau[best, last]]
            out.append(f"With {result.fractions[last]:.0%} of the judgments, "
                       f"{_join(ties)} {'keeps its' if len(ties) == 1 else 'keep their'} "
                       f"full-judgment ranking best (tau {result.tau[best, last]:.3f}) and "
                       f"{names[worst]} least (tau {result.tau[worst, last]:.3f}): on these "
                       f"runs {_join(ties)} {'is' if len(ties) == 1 else 'are'} the safer "
                       "choice when the pool is shallow or runs were not pooled.")
            near = max(kept, key=lambda i: (result.tau_map[i, last], -i))
            out.append(f"Closest to the official ranking (MAP on all judgments) with "
                       f"{result.fractions[last]:.0%} of the judgments: {names[near]} "
                       f"(tau {result.tau_map[near, last]:.3f}).")
    return tuple(out)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _pool_bias(config, store) -> PoolBias | None:
    """Leave-one-group-out on the first qrels set (see analyses.pool_bias_spec), as stored
    for the store's current inputs; how much of the qrels the rebuilt pool holds is
    reported, with a warning when it is not the judged pool."""
    spec = analyses.pool_bias_spec(config, store)
    data = analyses.load(store, spec) if spec is not None else None
    if spec is None or data is None:
        return None
    declared, per_group = spec.params["declared"], spec.params["per_group"]
    full, reduced = np.array(data["full"]), np.array(data["reduced"])
    change = reduced - full
    coverage = Coverage(*data["coverage"])
    rows = tuple(BiasRow(data["runs"][i], data["unit"][i], int(data["removed"][i]),
                         int(data["removed_relevant"][i]), _num(full[i]), _num(reduced[i]),
                         _signed(change[i]))
                 for i in np.argsort(change, kind="stable"))
    how = (f"{data['pooled']} run(s) declared pooled: true" if declared is not None else
           f"each group's first {per_group} run(s) by priority" if per_group else "every run")
    warning = "" if coverage.exact else (
        f"{coverage.describe()}: this is not the pool that was judged, so the bias figures are "
        "unreliable; declare each system's 'pooled: true|false' in the config (or set "
        "report.pool_depth to the judged depth)")
    return PoolBias(spec.params["depth"], str(per_group) if per_group else "all", how,
                    coverage.describe(), warning,
                    _signed(change.mean()), f"{max(0.0, -change.min()):.4f}", rows)


def significance(config, store, board: Leaderboard, measure: str, seed: int = 0
                 ) -> Significance | None:
    """Section 3 alone (for the exports), on the config's first qrels set."""
    return _significance(store, config.qrels[0].name, board, measure, seed)


def focus_measure(config) -> str:
    """The measure of the significance matrix, per-topic section and participant pages:
    ``report.measure``, else the first suite's first measure that the first qrels set takes."""
    chosen = config.report.get("measure")
    if chosen:
        return str(parse_measure(chosen))
    suite = next(iter(config.suites.values()))
    return str((config.qrels[0].measures(suite) or suite)[0])


def _significance(store, qrels: str, board: Leaderboard, measure: str,
                  seed: int) -> Significance | None:

    if len(board.rows) < 3 or not board.measures:
        return None
    names, topics, values = store.score_matrix(qrels, measure)
    if not names:
        return None
    if np.isnan(values).any():
        return None
    order = [r.name for r in board.rows if r.name in names]
    scores = stats.Scores(measure, tuple(names), tuple(topics), values).select(order)
    comparison = stats.compare(scores, test="randomized-tukey-hsd", seed=seed)
    p = stats.pairwise_matrix(comparison, measure, "p_adjusted").values
    diff = stats.pairwise_matrix(comparison, measure, "mean_diff").values
    effect = stats.pairwise_matrix(comparison, measure, "effect_size").values
    matrix = []
    shown = min(len(order), MATRIX_SYSTEMS)  # a readable matrix; every pair in the CSV
    for i in range(shown):
        row = []
        for j in range(shown):
            if i == j or not np.isfinite(p[i, j]):
                row.append(MatrixCell("", "", "transparent", math.nan, math.nan, math.nan))
                continue
            strength = max(0.0, min(1.0, -math.log10(max(p[i, j], 1e-4)) / 4))
            hue = 130 if diff[i, j] > 0 else 0
            row.append(MatrixCell(f"{p[i, j]:.3f}",
                                  f"difference {diff[i, j]:+.4f}, effect size d_z "
                                  f"{effect[i, j]:+.2f}",
                                  f"hsl({hue}, 60%, {95 - 45 * strength:.0f}%)",
                                  float(p[i, j]), float(diff[i, j]), float(effect[i, j])))
        matrix.append(tuple(row))
    classes = stats.equivalence_classes(comparison, measure)
    groups = tuple(", ".join(g) for g in classes)
    letters = labels(len(classes))
    sep = "," if len(classes) > 26 else ""
    membership = tuple(sep.join(letters[k] for k, g in enumerate(classes) if name in g)
                       for name in order)
    return Significance(measure, f"randomised Tukey HSD, 10,000 samples, seed {seed}; "
                        f"family: all {len(order) * (len(order) - 1) // 2:,} pairs of "
                        f"{measure} (the test controls the family-wise error over them)",
                        tuple(order), tuple(matrix), groups, membership, p, diff, effect)


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def _provenance(config, store, seed: int) -> Provenance:
    with open(config.path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    last = store.last_runner()
    options, last_run = ("", "never") if last is None else (
        last[0], f"{last[1]:%Y-%m-%d %H:%M:%S} to {last[2]:%H:%M:%S} ({last[3]})" if last[2]
        else f"{last[1]:%Y-%m-%d %H:%M:%S} ({last[3]})")
    inputs = [Input(*row) for row in store.inputs()]
    if config.topics:
        inputs.insert(0, Input("topics", "topics", config.topics,
                               store.file_hash(config.topics)))
    pretty = json.dumps(json.loads(options), indent=1, sort_keys=True) if options else ""
    return Provenance(config.path, config.sha256, text, pretty, __version__, last_run, seed,
                      tuple(inputs))
