"""Small charts drawn as inline SVG by templates (``_lines.html``, ``_bars.html``), for the pages
that have one chart per run: a matplotlib figure costs ~0.4 s to lay out and write, a templated
SVG microseconds, so 1,000 run pages stay fast. Coordinates are computed here (numpy, whole
arrays); the templates only print them. Every text is participant text possibly, escaped by
Jinja2 like the rest of the page.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fields import documented

_f = documented


@dataclass(frozen=True)
class Tick:
    """One labelled tick of an axis, in SVG units."""

    at: float = _f("position along its axis (x for the x axis, y for the y axis)")
    label: str = _f("the tick's label")


@dataclass(frozen=True)
class Series:
    """One line of a line chart."""

    name: str = _f("the series' name in the legend (participant text possible)")
    colour: str = _f("CSS colour")
    dash: str = _f("SVG stroke-dasharray ('' for a solid line)")
    points: str = _f("the polyline's points, 'x,y x,y ...'")
    dots: tuple[tuple[float, float, str], ...] = _f("(x, y, tooltip) of each marked point")


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One bar of a bar chart."""

    x: float = _f("left edge")
    y: float = _f("top edge")
    width: float = _f("width")
    height: float = _f("height")
    colour: str = _f("CSS colour")
    title: str = _f("tooltip text")


@dataclass(frozen=True)
class Plot:
    """A chart's frame: size, the plotting box, axes with labelled ticks."""

    title: str = _f("what the chart shows (the figure's caption)")
    width: int = _f("SVG width")
    height: int = _f("SVG height")
    left: float = _f("left edge of the plotting box")
    top: float = _f("top edge of the plotting box")
    right: float = _f("right edge of the plotting box")
    bottom: float = _f("bottom edge of the plotting box")
    x_label: str = _f("the x axis' label")
    y_label: str = _f("the y axis' label")
    x_ticks: tuple[Tick, ...] = _f("labelled ticks of the x axis")
    y_ticks: tuple[Tick, ...] = _f("labelled ticks of the y axis")
    x_rotate: bool = _f("x tick labels drawn vertically (many categories)")


@dataclass(frozen=True)
class LineChart:
    """Lines over a shared x axis, with a legend."""

    plot: Plot = _f("frame and axes")
    series: tuple[Series, ...] = _f("the lines, drawn in order (the last on top)")


@dataclass(frozen=True)
class BarChart:
    """Bars from a zero line (negative ones below it)."""

    plot: Plot = _f("frame and axes")
    bars: tuple[Bar, ...] = _f("the bars")
    zero: float = _f("y of the zero line")


SVG_TYPES = (Tick, Series, Bar, Plot, LineChart, BarChart)


def _scale(values: np.ndarray, lo: float, hi: float, a: float, b: float) -> np.ndarray:
    return a + (np.asarray(values, dtype=np.float64) - lo) * (b - a) / (hi - lo)


def precision_recall(title: str, curves: list[tuple[str, str, str, list[float]]]) -> LineChart:
    """Interpolated precision at recall 0, 0.1, ..., 1: ``curves`` are (name, colour, dash,
    11 values); recall points labelled 0.0 ... 1.0 on the x axis, precision 0 ... 1."""
    recall, precision = np.linspace(0, 1, 11), np.linspace(0, 1, 6)
    plot = Plot(title=title, width=460, height=300, left=50, top=12, right=440, bottom=250,
                x_label="recall", y_label="interpolated precision",
                x_ticks=tuple(Tick(round(float(x), 1), f"{r:.1f}")
                              for r, x in zip(recall, _scale(recall, 0, 1, 50, 440))),
                y_ticks=tuple(Tick(round(float(y), 1), f"{v:.1f}")
                              for v, y in zip(precision, _scale(precision, 0, 1, 250, 12))),
                x_rotate=False)
    xs = _scale(np.linspace(0, 1, 11), 0, 1, 50, 440)
    series = []
    for name, colour, dash, values in curves:
        ys = _scale(np.clip(np.nan_to_num(values, nan=0.0), 0, 1), 0, 1, 250, 12)
        series.append(Series(name, colour, dash,
                             " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys)),
                             tuple((round(float(x), 1), round(float(y), 1),
                                    f"{name}: recall {r:.1f}, precision {v:.4f}")
                                   for x, y, r, v in zip(xs, ys, np.linspace(0, 1, 11),
                                                         values))))
    return LineChart(plot, tuple(series))


def differences(title: str, y_label: str, topics: list[str], diff: np.ndarray) -> BarChart:
    """One bar per topic (topic order): ``diff`` on a fixed [-1, 1] scale, green above zero,
    vermilion below; every topic labelled when they fit, else every k-th."""
    n = max(len(topics), 1)
    step = 10.0 if n <= 60 else max(3.0, 600.0 / n)
    left, top, bottom = 50.0, 12.0, 172.0
    right = left + step * n
    plot_ticks = np.array([-1, -0.5, 0, 0.5, 1.0])
    every = max(1, int(np.ceil(8.0 / step)))
    xs = left + step * np.arange(len(topics))
    plot = Plot(title=title, width=int(right + 10), height=230, left=left, top=top, right=right,
                bottom=bottom, x_label="topic", y_label=y_label,
                x_ticks=tuple(Tick(round(float(xs[i] + step / 2), 1), str(topics[i]))
                              for i in range(0, len(topics), every)),
                y_ticks=tuple(Tick(round(float(y), 1), f"{v:+.1f}" if v else "0")
                              for v, y in zip(plot_ticks,
                                              _scale(plot_ticks, -1, 1, bottom, top))),
                x_rotate=True)
    zero = (top + bottom) / 2
    d = np.clip(np.nan_to_num(diff, nan=0.0), -1, 1)
    tops = _scale(np.maximum(d, 0), -1, 1, bottom, top)
    heights = np.abs(_scale(d, -1, 1, bottom, top) - zero)
    bars = tuple(Bar(x=round(float(xs[i] + 0.1 * step), 1),
                     y=round(float(tops[i] if d[i] > 0 else zero), 1),
                     width=round(0.8 * step, 1), height=round(float(heights[i]), 1),
                     colour="#009E73" if d[i] >= 0 else "#D55E00",
                     title=f"{topics[i]}: {diff[i]:+.4f}" if np.isfinite(diff[i])
                     else f"{topics[i]}: no value")
                 for i in range(len(topics)))
    return BarChart(plot, bars, round(zero, 1))
