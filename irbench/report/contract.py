"""The report's contract: every dataclass a template reads (``index.html`` and its partials),
each field saying what it holds (``metadata["help"]``); a test fails on any that does not
(:func:`undocumented_fields`). The sections' modules compute them: ``leaderboard.py``,
``overview.py``, ``topics.py``, ``incomplete.py``, ``provenance.py``; ``context.py`` puts the
page together. Everything from participants (system names, tags, metadata, topic ids) is plain
text here and escaped by Jinja2.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .answerpages import ANSWER_PAGE_TYPES
from .fields import documented
from .figures import Figure
from .judges import JUDGE_TYPES, JudgeTrustSection
from .overview import OVERVIEW_TYPES, Overview
from .repro import REPRO_TYPES, ReproSection
from .runpages import PAGE_TYPES
from .svg import SVG_TYPES

_f = documented


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One leaderboard value."""

    value: float | None = _f("the mean over topics (trec_eval's 'all' value), or None")
    text: str = _f("the value printed with 4 decimals, or '-'")
    ci: str = _f("the 95% bootstrap interval of the mean, printed '[low, high]' ('*' after it: "
                 "the percentile fallback), or '' (none for geometric means, sums and "
                 "micro-averages)")
    low: float | None = _f("the interval's lower end (as exported), or None")
    high: float | None = _f("the interval's upper end (as exported), or None")
    interval: str = _f("the method that gave it: 'BCa', 'percentile' (BCa undefined) or "
                       "'point' (every topic the same value), or ''")
    best: bool = _f("the best value of its column")
    mark: str = _f("'▲' / '▼' significantly above / below the baseline, else ''")
    p_adjusted: str = _f("the adjusted p-value against the baseline, printed, or ''")


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class Leaderboard:
    """Section 1: systems x suite measures, one leaderboard per suite."""

    qrels: str = _f("the qrels set the values are computed on")
    suite: str = _f("the suite of measures (config text), '' when not from a suite", "")
    measures: tuple[str, ...] = _f("canonical measure names, in suite order")
    lower_better: tuple[str, ...] = _f("those of ``measures`` whose smaller value is the "
                                       "better (the measure registry's lower_is_better)", ())
    rows: tuple[SystemRow, ...] = _f("systems, best first by the first measure")
    topics: int = _f("number of topics averaged over")
    baseline: str = _f("the baseline system, or '' (no significance marks)")
    test: str = _f("how significance was decided, in words")
    interval: str = _f("the interval below each mean, in words: confidence, method, "
                       "resamples, seed, and the fallbacks used")


@dataclass(frozen=True, kw_only=True)
class RankChange:
    """One system under MAP and GMAP."""

    name: str = _f("system name (participant text)")
    map: str = _f("MAP, printed")
    map_rank: int = _f("rank by MAP")
    gmap: str = _f("GMAP, printed")
    gmap_rank: int = _f("rank by GMAP")
    change: int = _f("MAP rank - GMAP rank (positive: GMAP ranks it higher)")
    worst_topics: str = _f("its three lowest-AP topics, printed 'topic (AP)'")


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class BiasRow:
    """One system when its group is left out of the pool."""

    name: str = _f("system name (participant text)")
    group: str = _f("the group left out (participant text)")
    removed: int = _f("judgments only that group's runs contributed")
    removed_relevant: int = _f("of them relevant")
    full: str = _f("AP with all judgments, printed")
    reduced: str = _f("AP without the group's unique documents, printed")
    change: str = _f("reduced - full, printed with its sign")


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class QrelsRow:
    """One other qrels set against the reference, on the focus measure."""

    name: str = _f("the qrels set (config text)")
    judged_by: str = _f("who judged it, printed: a model, judges from the store, or ''")
    topics: int = _f("the topics both sets judged and every system has")
    tau: str = _f("Kendall's tau between the two rankings, printed")
    tau_ap: str = _f("tau_AP of this set's ranking against the reference's, printed")
    top: str = _f("how many of the reference's top k are in this set's top k, printed")
    moves: str = _f("the largest rank changes, printed (participant text)")
    appear: str = _f("significant differences that appear with this set, printed")
    vanish: str = _f("significant differences that vanish with this set, printed")
    labels: str = _f("agreement of the two sets' labels on the pairs both judged, printed, or "
                     "'' when not computed")


@dataclass(frozen=True, kw_only=True)
class QrelsComparison:
    """Section 6d: the leaderboard under each other ad hoc qrels set (Voorhees 2000; Clarke
    and Dietz 2024 for LLM-made judgments)."""

    measure: str = _f("the measure compared")
    reference: str = _f("the reference set (the config's first)")
    reference_judged_by: str = _f("who judged the reference, printed, or ''")
    test: str = _f("the paired test and correction of the significant differences, printed")
    rows: tuple[QrelsRow, ...] = _f("one per other set, in config order")


@dataclass(frozen=True, kw_only=True)
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
    retrieved_10: str = _f("judged(retrieved)@10, printed: the share of the documents it "
                           "retrieved in its top 10 that is judged; '' if not stored")
    retrieved_100: str = _f("judged(retrieved)@100, printed; '' if not stored")


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

    kind: str = _f("topics, run table, qrels or run")
    name: str = _f("its name in the config (participant text for runs)")
    path: str = _f("its path")
    sha256: str = _f("sha256 of its content, or '' if never read")


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class AnswerBoard:
    """One set of answer judgments (support labels, nugget assignments) in section 1b: its
    leaderboards of answer measures, its significance test and its per-topic chart."""

    qrels: str = _f("the answer judgment set (config name)")
    kind: str = _f("its judgment kind: support, support_shared or nuggets")
    leaderboards: tuple[Leaderboard, ...] = _f("one per suite with a measure the set scores "
                                               "(() when section 1 already shows them: the "
                                               "set is the config's first)")
    significance: Significance | None = _f("all pairs on the first leaderboard's first "
                                           "measure, None with fewer than 3 runs or any "
                                           "missing value (or when section 3 shows it)")
    per_topic: PerTopic | None = _f("that measure per topic, None without scores (or when "
                                    "section 4 shows it)")


@dataclass(frozen=True, kw_only=True)
class SupportNuggetRow:
    """One answer run in the support-against-nuggets chart's table."""

    name: str = _f("system name (participant text)")
    support: str = _f("its mean of the support measure, printed")
    support_rank: int = _f("its rank by it (1 best)")
    nuggets: str = _f("its mean of the nugget measure, printed")
    nuggets_rank: int = _f("its rank by it (1 best)")
    change: int = _f("support rank - nugget rank (positive: the nugget measure ranks it "
                     "higher)")


@dataclass(frozen=True, kw_only=True)
class SupportNuggets:
    """Support against nugget score: one dot per answer run, as MAP against GMAP."""

    support_qrels: str = _f("the support set (x)")
    support_measure: str = _f("its first support measure (x axis)")
    nuggets_qrels: str = _f("the nuggets set (y)")
    nuggets_measure: str = _f("its first nugget measure (y axis)")
    rows: tuple[SupportNuggetRow, ...] = _f("the runs scored on both, best first by support")
    tau: str = _f("Kendall's tau between the two rankings, printed ('-' under 3 runs)")
    findings: tuple[str, ...] = _f("what the two rankings show, computed")
    scatter: Figure = _f("the runs at (support, nuggets), drawn by matplotlib (.svg inline)")


@dataclass(frozen=True, kw_only=True)
class AnswerSection:
    """Section 1b: generated answers (answer systems scored on answer judgment sets)."""

    systems: tuple[str, ...] = _f("the answer systems (kind answers), in config order "
                                  "(participant text)")
    boards: tuple[AnswerBoard, ...] = _f("one per answer judgment set with scores, config "
                                         "order")
    chart: SupportNuggets | None = _f("support against nugget score, None without both a "
                                      "support set and a nuggets set scored (or under 2 runs)")
    pages: dict[str, str] = _f("{system: its answer page, relative to index.html} when the "
                               "run pages are written, else {}")


@dataclass(frozen=True)
class ReportContext:
    """Everything ``index.html`` shows."""

    title: str = _f("the campaign's title: report.title, else its name (config text)")
    campaign: str = _f("the campaign's name (config name:, else the config file's name)")
    collection: str = _f("of a config with several collections: the one this report is of "
                         "(the page over all of them is ../index.html), else ''")
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
    qrels_comparison: QrelsComparison | None = _f("section 6d, None with fewer than two ad hoc "
                                                  "qrels sets scored")
    judge_warnings: tuple[str, ...] = _f("leaderboards resting on one LLM judge alone: a "
                                         "warning each, shown at the top of the page")
    same_model: tuple[str, ...] = _f("systems whose metadata names the model of an LLM judge "
                                     "of a qrels set shown (marked in the leaderboard)")
    not_shown: tuple[str, ...] = _f("why an analysis is missing (not computed, or stale)")
    provenance: Provenance = _f("section 8")
    figures: tuple[Figure, ...] = _f("every chart of the page, for --figures (PDF and PNG)")
    leaderboards: tuple[Leaderboard, ...] = _f("one leaderboard per suite shown (report."
                                               "leaderboard_suites, else every suite with a "
                                               "measure of the qrels set); the first is "
                                               "``leaderboard``", ())
    answers: AnswerSection | None = _f("section 1b, None without answer judgment sets "
                                       "scored", None)
    judges: JudgeTrustSection | None = _f("section 6e, None unless the report is asked for "
                                          "it (--judge-eval SET)", None)
    reproductions: ReproSection | None = _f("section 4b, None without reproductions: in the "
                                            "config (report/repro.py)", None)


CONTEXT_TYPES = (BiasRow, PoolBias, Mark, ChartRow, Chart, Cell, SystemRow, Leaderboard,
                 RankChange, MapVsGmap, MatrixCell, Significance, Curve, PrecisionRecall,
                 ReductionRow, ReductionSection, TopicRow, PerTopic, JudgedRow, Judged, Input,
                 Provenance, QrelsRow, QrelsComparison, AnswerBoard, SupportNuggetRow,
                 SupportNuggets, AnswerSection, ReportContext)


SECTIONS = {"leaderboard": "1. Leaderboard", "answers": "1b. Generated answers",
            "overview": "2. By run type and group",
            "significance": "3. Which differences are real", "per-topic": "4. Per topic",
            "reproductions": "4b. Reproductions", "map-gmap": "5. MAP against GMAP",
            "judged": "6. Incomplete judgments",
            "reduction": "6b. Fewer judgments", "pool-bias": "6c. Pool bias",
            "qrels": "6d. Across qrels sets", "judges": "6e. How far to trust each judge",
            "precision-recall": "7. Precision and recall", "provenance": "8. Provenance"}


def undocumented_fields() -> list[str]:
    """Fields without help text (the contract test expects none)."""
    return [f"{t.__name__}.{f.name}"
            for t in (*CONTEXT_TYPES, *OVERVIEW_TYPES, *JUDGE_TYPES, *PAGE_TYPES,
                      *ANSWER_PAGE_TYPES, *SVG_TYPES, *REPRO_TYPES)
            for f in fields(t) if not f.metadata.get("help")]
