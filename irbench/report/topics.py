"""Sections 4 and 5: every system per topic (strip charts of STRIP_ROWS systems, each with its
axis; differences from the baseline; best/median/worst per topic) and MAP against GMAP."""

from __future__ import annotations

import numpy as np

from ..measures.base import GEO_MEAN_FLOOR
from ..stats import rank_agreement
from . import figures
from .contract import Chart, ChartRow, MapVsGmap, Mark, PerTopic, RankChange, TopicRow
from .numbers import num, ranks, spread

LEFT, PLOT, ROW = 150, 500, 16  # chart layout: label width, plot width, row height


STRIP_ROWS = 30  # systems per strip chart: a chart never taller than a printed page


def map_vs_gmap(store, qrels: str) -> MapVsGmap | None:

    names, topics, ap = store.score_matrix(qrels, "AP")
    if len(names) < 2 or np.isnan(ap).any():
        return None
    mean = ap.mean(axis=1)
    gmean = np.exp(np.log(np.maximum(ap, GEO_MEAN_FLOOR)).mean(axis=1))
    map_rank = ranks(mean)
    gmap_rank = ranks(gmean)
    agreement = rank_agreement(mean, gmean)
    rows = []
    for i in np.argsort(map_rank, kind="stable"):
        worst = np.argsort(ap[i], kind="stable")[:3]
        rows.append(RankChange(name=names[i], map=num(mean[i]), map_rank=int(map_rank[i]),
                               gmap=num(gmean[i]), gmap_rank=int(gmap_rank[i]),
                               change=int(map_rank[i] - gmap_rank[i]),
                               worst_topics=", ".join(f"{topics[t]} ({ap[i, t]:.4f})"
                                                      for t in worst)))
    by_map = [int(i) for i in np.argsort(map_rank, kind="stable")]
    strips = strip_charts("AP per topic, log scale (GMAP floors AP at 1e-5)",
                          [names[i] for i in by_map], topics, ap[by_map], log=True)
    return MapVsGmap(rows=tuple(rows), tau=f"{agreement.tau:.4f}",
                     tau_ap=f"{agreement.tau_ap:.4f}", swaps=int(agreement.swaps),
                     floor=f"{GEO_MEAN_FLOOR:g}", strips=strips,
                     findings=map_gmap_findings(names, map_rank, gmap_rank),
                     scatter=figures.map_gmap(names, mean, gmean))


def map_gmap_findings(names, map_rank: np.ndarray, gmap_rank: np.ndarray) -> tuple[str, ...]:
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


def per_topic(store, qrels: str, measure: str, order=(), baseline: str = ""
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
    best, median, worst = spread(values)
    who = np.nanargmax(np.where(np.isnan(values), -np.inf, values), axis=0)
    order = np.argsort(median, kind="stable")
    rows = tuple(TopicRow(query_id=topics[t], text=text.get(topics[t], ""), best=num(best[t]),
                          best_system=names[who[t]], median=num(median[t]),
                          worst=num(worst[t])) for t in order)
    return PerTopic(measure, rows, strips, differences)
