"""The appendix of a TREC overview: one page per run (``irbench report --participants``).

Each page holds the run's summary counts over all topics (retrieved, relevant, relevant
retrieved: trec_eval's num_ret, num_rel, num_rel_ret, from the profile ``irbench run``
keeps), its metadata (group, type, pooled, description, its file's sha256), every suite
measure with its rank and the best/median of all runs, the recall-precision graph with
labelled recall points, its per-topic values against the best, median and worst of all runs
(chart and table), and the significance test's verdict against every other run as a compact
table. Pages link back to the report, to every section, and to the previous and next run by
rank. Printed (A4 landscape), a page fits one sheet for up to 50 topics (150 in practice):
the per-topic table stays on screen. Charts are templated SVG (:mod:`.svg`): one matplotlib
figure per run would cost more than the whole report.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from ..measures import COUNTS, CURVE
from . import svg
from .choices import focus_measure, run_page_names
from .fields import documented
from .figures import OTHERS, PALETTE
from .intervals import caption, has_interval, intervals
from .numbers import num, ranks, spread

_f = documented


@dataclass(frozen=True, kw_only=True)
class ParticipantTopic:
    """One topic on a participant's page."""

    query_id: str = _f("topic id")
    value: str = _f("the system's value, printed")
    best: str = _f("the best value of all systems, printed")
    median: str = _f("the median of all systems, printed")
    worst: str = _f("the worst value of all systems, printed")
    above_median: bool = _f("the system's value is above the median")


@dataclass(frozen=True)
class ParticipantMeasure:
    """One suite measure on a participant's page."""

    measure: str = _f("canonical measure name")
    value: str = _f("the run's mean, printed")
    rank: str = _f("its rank on that measure among the systems, printed ('-' without a value)")
    best: str = _f("the best mean of all runs, printed")
    median: str = _f("the median of all runs' means, printed")
    interval: str = _f("the run's interval of the mean, printed as on the leaderboard, or '' "
                       "(none for GMAP, counts and micro-averages)")


@dataclass(frozen=True)
class Verdict:
    """One row of a run's significance table: the runs it is better than, worse than, or
    cannot be told apart from."""

    verdict: str = _f("'better than', 'worse than' or 'not distinguishable from'")
    runs: tuple[str, ...] = _f("those runs, best first (participant text)")


@dataclass(frozen=True)
class Participant:
    """The appendix page of one run, as in TREC overview appendices: its run against all."""

    system: str = _f("system name (participant text)")
    file: str = _f("the page's file name, made from the name (letters, digits, . _ -)")
    group: str = _f("its group (participant text), or ''")
    type: str = _f("its type (automatic, manual, ...; participant text), or ''")
    metadata: tuple[tuple[str, str], ...] = _f("(field, value) rows: group, type, official, "
                                               "pooled, baseline, description, run file, "
                                               "the system's metadata (a run table's other "
                                               "columns), sha256 (participant text)")
    measure: str = _f("the measure of the per-topic table")
    mean: str = _f("the system's mean on it, printed")
    rank: int = _f("its rank among the systems on it")
    systems: int = _f("how many systems were ranked")
    previous: str = _f("the run ranked just above it (participant text), or ''")
    next: str = _f("the run ranked just below it (participant text), or ''")
    topics: tuple[ParticipantTopic, ...] = _f("every topic, in topic order")
    measures: tuple[ParticipantMeasure, ...] = _f("every measure of every suite (on the first "
                                                  "qrels set) with the run's rank")
    interval: str = _f("the measures' interval in words (method, resamples, seed)")
    curve: tuple[tuple[str, str], ...] = _f("its interpolated precision per recall point "
                                            "('0.0' ... '1.0', printed), or ()")
    curve_chart: svg.LineChart | None = _f("the recall-precision graph: the run, the median "
                                           "and the best run's curve")
    judged: str = _f("its judged@10 and judged@100, printed, or ''")
    counts: tuple[tuple[str, str], ...] = _f("the summary counts over all topics: "
                                             "('retrieved', n), ('relevant', n), ('relevant "
                                             "retrieved', n) as trec_eval's num_ret, num_rel, "
                                             "num_rel_ret, or () when the store lacks them")
    significance_test: str = _f("the test and its family, in words, or '' (no test)")
    verdicts: tuple[Verdict, ...] = _f("better than / worse than / not distinguishable from")
    chart: svg.BarChart = _f("per topic, its value minus the median of all runs")


PAGE_TYPES = (ParticipantTopic, ParticipantMeasure, Verdict, Participant)


def _verdicts(sig, name: str) -> tuple[Verdict, ...]:
    """Better / worse / not distinguishable, read from the all-pairs test (``sig``)."""
    if sig is None or name not in sig.systems:
        return ()
    i = sig.systems.index(name)
    p = np.nan_to_num(sig.p[i], nan=1.0)
    others = np.arange(len(sig.systems)) != i
    significant = (p <= 0.05) & others
    groups = (("better than", significant & (sig.diff[i] > 0)),
              ("worse than", significant & (sig.diff[i] < 0)),
              ("not distinguishable from", ~significant & others))
    return tuple(Verdict(label, tuple(sig.systems[j] for j in np.flatnonzero(mask)))
                 for label, mask in groups)


def participants(config, store, context) -> tuple[Participant, ...]:
    """One :class:`Participant` page per system on the report's focus measure (its rank
    order), from the store alone; ``context`` (the main page's) lends the leaderboard's
    metadata and the significance test."""
    qrels = config.qrels[0].name
    measure = focus_measure(config)
    names, topics, values = store.score_matrix(qrels, measure)
    if not names:
        return ()
    best, median, worst = spread(values)
    with np.errstate(all="ignore"):
        means = np.nanmean(values, axis=1)
    order = ranks(means)
    by_rank = [names[i] for i in np.argsort(order, kind="stable")]
    spec = config.qrels[0]  # every measure of every suite that the qrels set takes
    suite = list(dict.fromkeys(str(m) for measures in config.suites.values()
                               for m in spec.measures(measures)))
    table = _suite_table(store, qrels, suite)
    shown = _suite_intervals(store, qrels, suite, context)
    seed = context.provenance.seed
    rows = {r.name: r for r in context.leaderboard.rows}
    declared = {s.name: s for s in store.declared_systems()}
    hashes = store.system_hashes()
    profiles = store.profiles(qrels)
    curves = {n: [p.get(m, math.nan) for m in CURVE] for n, p in profiles.items()}
    counts = _counts(store, qrels, profiles)
    median_curve = (np.nanmedian(np.array(list(curves.values())), axis=0)
                    if curves else None)
    top_curve = curves.get(by_rank[0])
    files = run_page_names(names)
    recall = [f"{r / 10:.1f}" for r in range(11)]
    title = (f"{measure} of this run minus the median of all {len(names)} runs, per topic "
             "(the same -1 to 1 scale on every page)")
    pages = []
    for i, name in enumerate(names):
        k = int(order[i]) - 1
        row, s = rows.get(name), declared.get(name)
        profile = profiles.get(name, {})
        curve = curves.get(name)
        chart = None
        if curve is not None and median_curve is not None:
            lines = [("median of all runs", OTHERS, "4 3", list(median_curve))]
            if top_curve is not None and by_rank[0] != name:
                lines.append((f"best run by {measure}: {by_rank[0]}", PALETTE[1], "1 3",
                              top_curve))
            lines.append((name, PALETTE[0], "", curve))
            chart = svg.precision_recall("Interpolated precision at each recall point "
                                         "(trec_eval's iprec_at_recall)", lines)
        pages.append(Participant(
            system=name, file=files[name], group=row.group if row else "",
            type=row.type if row else "",
            metadata=_metadata(row, s, hashes.get(name, "")),
            measure=measure, mean=num(means[i]), rank=k + 1, systems=len(names),
            previous=by_rank[k - 1] if k > 0 else "",
            next=by_rank[k + 1] if k + 1 < len(by_rank) else "",
            topics=tuple(ParticipantTopic(query_id=topics[t], value=num(values[i, t]),
                                          best=num(best[t]), median=num(median[t]),
                                          worst=num(worst[t]),
                                          above_median=bool(values[i, t] > median[t]))
                         for t in range(len(topics))),
            measures=tuple(_measure(table[m], shown, name, m) for m in suite),
            interval=caption(seed, {shown[(name, m)][1] for m in suite if (name, m) in shown}),
            curve=tuple(zip(recall, (num(v) for v in curve))) if curve else (),
            curve_chart=chart,
            judged=(f"judged@10 {num(profile['judged@10'])}, judged@100 "
                    f"{num(profile['judged@100'])}") if "judged@10" in profile else "",
            counts=counts.get(name, ()),
            significance_test=context.significance.test if context.significance else "",
            verdicts=_verdicts(context.significance, name),
            chart=svg.differences(title, f"{measure} - median", topics,
                                  values[i] - median)))
    return tuple(pages)


COUNT_LABELS = ("retrieved", "relevant", "relevant retrieved")


def _counts(store, qrels: str, profiles: dict[str, dict[str, float]]
            ) -> dict[str, tuple[tuple[str, str], ...]]:
    """{system: the summary counts printed}: the profile's NumRet, NumRel, NumRelRet (sums
    over topics, as trec_eval's num_ret, num_rel, num_rel_ret), else a suite's stored means of
    them; a system with any of the three missing has none (a store scored before the profile
    kept them: 'irbench run CONFIG' adds them without rescoring the rest)."""
    found = {name: {m: p[m] for m in COUNTS if m in p} for name, p in profiles.items()}
    _, rows = store.means(qrels, measures=COUNTS)
    for system, _, m, value, _ in rows:
        if value is not None:
            found.setdefault(system, {}).setdefault(m, value)
    return {name: tuple(zip(COUNT_LABELS, (str(int(round(got[m]))) for m in COUNTS)))
            for name, got in found.items()
            if all(m in got and math.isfinite(got[m]) for m in COUNTS)}


def _measure(entry: dict, shown: dict, name: str, measure: str) -> ParticipantMeasure:
    """One row of the run's measures table, from its :func:`_suite_table` entry and
    :func:`_suite_intervals`."""
    value, rank = entry.get(name, ("-", "-"))
    best, median = entry["*"]
    return ParticipantMeasure(measure=measure, value=value, rank=rank, best=best,
                              median=median, interval=shown.get((name, measure), ("", ""))[0])


def _suite_intervals(store, qrels: str, suite: list[str], context
                     ) -> dict[tuple[str, str], tuple[str, str]]:
    """{(system, measure): (interval printed, method)}: the leaderboard's for its measures,
    the other suites' computed alike (the same seed, so the same numbers)."""
    board = context.leaderboard
    out = {(row.name, m): (cell.ci, cell.interval) for row in board.rows
           for m, cell in zip(board.measures, row.cells) if cell.ci}
    rest = [m for m in suite if m not in board.measures and has_interval(m)]
    found = intervals({m: store.score_matrix(qrels, m) for m in rest}, context.provenance.seed)
    out.update({key: (i.text, i.method) for key, i in found.items()})
    return out


def _suite_table(store, qrels: str, suite: list[str]) -> dict[str, dict]:
    """{measure: {system: (mean, rank), '*': (best, median)}}, printed."""
    _, rows = store.means(qrels, measures=suite)
    by: dict[str, dict[str, float]] = {m: {} for m in suite}
    for system, _, m, value, _ in rows:
        by.setdefault(m, {})[system] = value if value is not None else math.nan
    out = {}
    for m, values in by.items():
        names = list(values)
        v = np.array([values[n] for n in names], dtype=np.float64)
        rank = ranks(v)
        entry = {n: (num(v[j]), str(int(rank[j])) if math.isfinite(v[j]) else "-")
                 for j, n in enumerate(names)}
        with np.errstate(all="ignore"):
            entry["*"] = ((num(float(np.nanmax(v))), num(float(np.nanmedian(v))))
                          if np.isfinite(v).any() else ("-", "-"))
        out[m] = entry
    return out


def _metadata(row, system, sha256: str) -> tuple[tuple[str, str], ...]:
    out = []
    if row is not None:
        out += [("group", row.group or "-"), ("type", row.type or "-"),
                ("official", "yes" if row.official else "no"),
                ("pooled", row.pooled or "not declared"),
                ("baseline", "yes" if row.baseline else "no")]
    if system is not None:
        out += [("description", system.description or "-"),
                ("run file", os.path.basename(system.path) or system.path)]
        out += [(str(key), value if isinstance(value, str) else json.dumps(value, default=str))
                for key, value in system.metadata.items()]  # a run table's other columns
    out.append(("sha256", sha256 or "-"))
    return tuple(out)
