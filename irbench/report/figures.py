"""The report's charts, drawn by matplotlib (the ``report`` extra), inline as SVG in the page
and, with ``irbench report --figures DIR``, as PDF and PNG for a paper.

Every chart has labelled axes with ticks, a legend naming its series, a colour-blind-safe
palette (:data:`PALETTE`, every colour at least 3:1 against white) with a marker per series,
and a categorical x axis for the judgment fractions (100% ... 3% evenly spaced). Text is
kept as text in the SVG (searchable, printable); participants' strings (run names) are drawn
literally: math text is off, and matplotlib escapes what it writes into the SVG. Output is
deterministic (fixed SVG ids, no date).
"""

from __future__ import annotations

import functools
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import OutputError, install
from ..files import replacing

# The series' colours: Okabe & Ito's colour-blind-safe hues where they are dark enough on
# white, their orange, sky blue and yellow (2.3, 2.3 and 1.3 : 1) replaced by amber, purple and
# olive: every colour at least 3:1 against white (WCAG 2.1, 1.4.11, graphics), so no line
# fades into the page on screen or paper. Each series also has its own marker.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#A66F00", "#5D3A9B", "#6B6B00",
           "#000000")
OTHERS = "#8C8C8C"  # the lines of the systems not highlighted: grey, still 3.4:1 on white
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
STYLES = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class Figure:
    """One chart: ``name`` (a file name for --figures), its SVG, and the matplotlib figure."""

    name: str
    svg: str
    figure: Any

    def save(self, folder: str) -> list[str]:
        """Write ``folder/NAME.pdf`` and ``NAME.png``; the paths written."""
        paths = []
        for ext in ("pdf", "png"):
            path = os.path.join(folder, f"{self.name}.{ext}")
            with _style(), replacing(path, binary=True) as fh:
                self.figure.savefig(fh, format=ext, dpi=200, bbox_inches="tight",
                                    metadata={"CreationDate": None} if ext == "pdf" else None)
            paths.append(path)
        return paths


def _new(figsize: tuple[float, float], *grid, **keywords):
    """A matplotlib figure and its axes, made without pyplot (no global figure registry to
    fill: a report of many charts holds none of them after use)."""
    try:
        from matplotlib.figure import Figure as MatplotlibFigure
    except ImportError:
        raise OutputError(f"the report's charts need matplotlib: {install('report')}"
                          ) from None
    fig = MatplotlibFigure(figsize=figsize)
    return fig, fig.subplots(*grid, **keywords)


def _styled(chart):
    """Draw ``chart`` under :func:`_style` (titles, labels and legends read the settings when
    they are made)."""
    @functools.wraps(chart)
    def draw(*args, **keywords):
        with _style():
            return chart(*args, **keywords)
    return draw


def _style():
    """The charts' matplotlib settings, for drawing and saving only: a notebook's own
    settings are left as they were."""
    try:
        import matplotlib
        from matplotlib.rcsetup import cycler  # what matplotlib.cycler is
    except ModuleNotFoundError:
        raise OutputError(f"the report's charts need matplotlib: {install('report')}"
                          ) from None

    return matplotlib.rc_context({
        "text.parse_math": False,  # '$' in a run name is a dollar sign
        "svg.fonttype": "none",  # text stays text: searchable and printed as text
        "svg.hashsalt": "irbench",  # the same ids every time
        "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
        "axes.prop_cycle": cycler(color=PALETTE),
    })


def _svg(fig) -> str:
    buffer = io.StringIO()
    with _style():
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline: no XML declaration or doctype


def _unique_ids(svg: str, prefix: str) -> str:
    """Every id of ``svg`` (and every reference to one) prefixed, so several charts inlined in
    one page never share an id (matplotlib numbers them per figure: figure_1, axes_1, ...)."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'(xlink:href|href)="#([^"]+)"',
                 lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)


def _done(name: str, fig) -> Figure:
    return Figure(name, _unique_ids(_svg(fig), name), fig)


@_styled
def reduction(measures: Sequence[str], fractions: Sequence[str], tau: np.ndarray,
              tau_map: np.ndarray, design: str) -> Figure:
    """Kendall's tau against the fraction of judgments kept: against the same measure on
    all judgments (left) and against MAP on all judgments (right), one shared y scale."""
    fig, axes = _new((9, 3.4), 1, 2, sharey=True)
    x = np.arange(len(fractions))
    for ax, values, title in ((axes[0], tau, "against the same measure, all judgments"),
                              (axes[1], tau_map, "against MAP, all judgments")):
        for i, name in enumerate(measures):  # a line style each: equal series stay visible
            ax.plot(x, values[i], marker=MARKERS[i % len(MARKERS)], markersize=4,
                    linestyle=STYLES[i % len(STYLES)], color=PALETTE[i % len(PALETTE)],
                    label=name)
        ax.set_xticks(x, list(fractions))
        ax.set_xlabel("judgments kept per topic")
        ax.set_title(title)
    axes[0].set_ylabel("Kendall's tau")
    low = float(np.nanmin(np.concatenate([tau.ravel(), tau_map.ravel()]))) if tau.size else 0
    axes[0].set_ylim(min(0.5, np.floor(low * 10) / 10), 1.01)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               title=f"design: {design}", frameon=False)
    return _done("reduction", fig)


@_styled
def precision_recall(curves: dict[str, Sequence[float]], highlighted: Sequence[str]) -> Figure:
    """11-point interpolated precision-recall curves: the ``highlighted`` systems coloured and
    in the legend, every other system a thin grey line."""
    fig, ax = _new((8, 4))
    recall = np.linspace(0, 1, 11)
    for name, ys in curves.items():
        if name not in highlighted:
            ax.plot(recall, ys, color=OTHERS, linewidth=0.6, zorder=1)
    for i, name in enumerate(highlighted):
        ax.plot(recall, curves[name], marker=MARKERS[i % len(MARKERS)], markersize=4,
                color=PALETTE[i % len(PALETTE)], label=name, zorder=2)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xticks(np.linspace(0, 1, 6))
    if highlighted:  # beside the axes: never over the curves
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                  title=f"best {len(highlighted)}; grey: the other "
                        f"{len(curves) - len(highlighted)}")
    fig.tight_layout()
    return _done("precision-recall", fig)


@_styled
def map_gmap(names: Sequence[str], map_values: np.ndarray, gmap_values: np.ndarray,
             labelled: int = 10) -> Figure:
    """Each system at (MAP, GMAP): the best by MAP and those whose rank changes most are
    named; the two rankings' disagreement shows as points off a monotone line. Each label
    takes the nearest free place around its dot (:func:`_place_labels`): on no dot, clear of
    the frame and of the labels placed before it, joined to its dot by a line; a label with
    no such place is left out, and the title says how many were."""
    map_values = np.asarray(map_values, dtype=float)
    gmap_values = np.asarray(gmap_values, dtype=float)
    fig, ax = _new((7.5, 5.2))
    ax.patch.set_gid("frame")
    dots = ax.scatter(map_values, gmap_values, s=DOT_AREA, color=PALETTE[0], zorder=2)
    dots.set_gid("dots")
    map_rank = np.argsort(np.argsort(-map_values, kind="stable"), kind="stable")
    gmap_rank = np.argsort(np.argsort(-gmap_values, kind="stable"), kind="stable")
    change = map_rank - gmap_rank
    top = [int(i) for i in np.argsort(map_rank, kind="stable")[:labelled // 2]]
    moved = [int(i) for i in np.argsort(-np.abs(change), kind="stable") if i not in top]
    named = top + [i for i in moved if change[i] != 0][:labelled - len(top)]
    ax.set_xlabel("MAP")
    ax.set_ylabel("GMAP")
    title = (f"Each dot is a run ({len(names)}); named: the {len(top)} best by MAP and the "
             "runs whose rank moves most\n(+k: k places higher by GMAP than by MAP)")
    ax.set_title(title, fontsize=8.5)
    fig.tight_layout()  # the axes' final place: labels are placed (in pixels) after it
    left_out = _place_labels(fig, ax, [(i, f"{names[i]} ({change[i]:+d})") for i in named],
                             map_values, gmap_values)
    if left_out:  # the same two lines: the axes keep their place
        ax.set_title(title.replace("\n(", f"; {left_out} left out to avoid overlap\n("),
                     fontsize=8.5)
    return _done("map-gmap", fig)


@_styled
def support_nuggets(names: Sequence[str], support: np.ndarray, nuggets: np.ndarray,
                    x_label: str, y_label: str, labelled: int = 10) -> Figure:
    """Each answer run at (support measure, nugget measure), as :func:`map_gmap` draws its
    runs: the best by either measure named (up to ``labelled``), each label at the nearest
    free place around its dot, the ones with no free place left out and counted in the
    title. Both axes run from 0 to 1 (the measures' range)."""
    support = np.asarray(support, dtype=float)
    nuggets = np.asarray(nuggets, dtype=float)
    fig, ax = _new((7.5, 5.2))
    ax.patch.set_gid("frame")
    dots = ax.scatter(support, nuggets, s=DOT_AREA, color=PALETTE[0], zorder=2)
    dots.set_gid("dots")
    by_x = [int(i) for i in np.argsort(-support, kind="stable")]
    by_y = [int(i) for i in np.argsort(-nuggets, kind="stable")]
    named = list(dict.fromkeys(i for pair in zip(by_x, by_y) for i in pair))[:labelled]
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    title = (f"Each dot is an answer run ({len(names)}); named: "
             + ("every run" if len(named) == len(names) else
                f"the {len(named)} best by either measure"))
    ax.set_title(title, fontsize=8.5)
    fig.tight_layout()
    left_out = _place_labels(fig, ax, [(i, str(names[i])) for i in named], support, nuggets)
    if left_out:
        ax.set_title(f"{title}; {left_out} left out to avoid overlap", fontsize=8.5)
    return _done("support-nuggets", fig)


@_styled
def forest(name: str, rows: Sequence[tuple[str, float, float, float, float]],
           combined: tuple[float, float, float], x_label: str, title: str) -> Figure:
    """A forest plot: each (collection, effect, CI low, CI high, weight) of ``rows`` a square
    (its area the weight) with its interval, top to bottom, and the ``combined`` (effect,
    low, high) random-effects estimate a diamond below them; a line at 0 (no difference).
    ``name``: the figure's file name and SVG id prefix (safe text)."""
    fig, ax = _new((6.4, 0.9 + 0.32 * (len(rows) + 1)))
    y = np.arange(len(rows), 0, -1, dtype=float)
    for yi, (_, effect, low, high, weight) in zip(y, rows):
        ax.plot([low, high], [yi, yi], color=PALETTE[0], linewidth=1.2, zorder=2)
        ax.plot([effect], [yi], marker="s", color=PALETTE[0], linestyle="none", zorder=3,
                markersize=4 + 8 * float(np.sqrt(max(weight, 0.0))))
    effect, low, high = combined
    ax.fill([low, effect, high, effect], [0, 0.22, 0, -0.22], color=PALETTE[1], zorder=3,
            label="random effects (DerSimonian-Laird)")
    ax.axvline(0, color="#000000", linewidth=0.8, zorder=1)
    ax.set_yticks([*y, 0.0], [r[0] for r in rows] + ["combined"])
    ax.set_ylim(-0.7, len(rows) + 0.7)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(x_label)
    ax.set_title(title, fontsize=8.5)
    fig.tight_layout()
    return _done(name, fig)


DOT_AREA = 16  # the scatter's marker area in points^2: a dot of radius 2 points
LABEL_GAP = 3.0  # points between a label and a dot, another label or the frame
# where a label may go: its near edge this many points from its dot, in these directions
# (degrees, the nearest first; the first free place wins)
RADII = (4.0, 9.0, 16.0, 25.0, 36.0, 50.0, 68.0, 90.0, 115.0, 145.0, 180.0, 220.0, 270.0)
ANGLES = (45, 135, -45, -135, 90, -90, 0, 180,
          *(a for a in range(-165, 180, 15) if a % 45))


def _place_labels(fig, ax, labels: Sequence[tuple[int, str]], x: np.ndarray,
                  y: np.ndarray) -> int:
    """Write each (dot index, text) of ``labels`` at the nearest place around its dot where
    its box touches no dot (its own included) and no label or line placed before it, and
    stays LABEL_GAP inside the frame, with a line from the dot that crosses no label; how
    many had no such place and were left out. Everything is measured in display pixels once
    the axes are laid out; the candidate places of one label are tested against every dot at
    once."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    points = ax.transData.transform(np.column_stack([x, y]))
    px = fig.dpi / 72.0  # pixels per point
    gap, radius = LABEL_GAP * px, (DOT_AREA ** 0.5 / 2 + 0.5) * px  # half the stroke too
    frame = ax.get_window_extent(renderer)
    angles = np.radians(ANGLES)
    unit = np.column_stack([np.cos(angles), np.sin(angles)])
    boxes = np.empty((0, 4))  # (x0, y0, x1, y1) of the labels kept
    lines = np.empty((0, 4))  # (x0, y0, x1, y1) of their lines: dot to label centre
    left_out = 0
    for index, words in labels:
        probe = ax.text(0, 0, words, fontsize=8)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        half = np.array([extent.width, extent.height]) / 2
        centres = _candidates(points[index], unit, np.asarray(RADII) * px + radius, half)
        mine = np.hstack([centres - half, centres + half])
        free = (_inside(mine, (frame.x0 + gap, frame.y0 + gap, frame.x1 - gap,
                               frame.y1 - gap))
                & (_distance(mine, points) >= radius + gap)
                & ~_overlaps(mine, boxes, gap)
                & ~_hits(np.broadcast_to(points[index], centres.shape), centres, boxes,
                         gap).any(axis=1)
                & ~_hits(lines[:, :2], lines[:, 2:], mine, 0.0).any(axis=0))
        if not free.any():
            left_out += 1
            continue
        best = int(np.argmax(free))
        boxes = np.vstack([boxes, mine[best]])
        lines = np.vstack([lines, np.concatenate([points[index], centres[best]])])
        at = ax.transData.inverted().transform(centres[best])
        text = ax.annotate(words, (x[index], y[index]), xytext=(float(at[0]), float(at[1])),
                           fontsize=8, ha="center", va="center", zorder=3,
                           arrowprops={"arrowstyle": "-", "color": "#767676", "lw": 0.6,
                                       "shrinkA": 1, "shrinkB": radius / px})
        text.set_gid(f"label-{index}")
    return left_out


def _candidates(point: np.ndarray, unit: np.ndarray, reach: np.ndarray,
                half: np.ndarray) -> np.ndarray:
    """Centres of a box of half-size ``half`` around ``point``: in each direction of
    ``unit``, the box's edge facing the point at each distance of ``reach``, nearest first."""
    offset = unit * half * np.sign(np.round(unit, 9))  # from that edge to the box's centre
    return (point + reach[:, None, None] * unit[None] + offset[None]).reshape(-1, 2)


def _inside(boxes: np.ndarray, frame: tuple) -> np.ndarray:
    """Which ``boxes`` (x0, y0, x1, y1 rows) lie inside ``frame``."""
    return ((boxes[:, 0] >= frame[0]) & (boxes[:, 1] >= frame[1]) &
            (boxes[:, 2] <= frame[2]) & (boxes[:, 3] <= frame[3]))


def _distance(boxes: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For each box, the distance to the nearest of ``points`` (0 for a point inside)."""
    nearest = np.clip(points[None, :, :], boxes[:, None, :2], boxes[:, None, 2:])
    return np.hypot(*(nearest - points[None, :, :]).transpose(2, 0, 1)).min(axis=1)


def _overlaps(boxes: np.ndarray, others: np.ndarray, gap: float) -> np.ndarray:
    """Which ``boxes`` come within ``gap`` of any of ``others``."""
    if not len(others):
        return np.zeros(len(boxes), dtype=bool)
    near = ((boxes[:, None, 0] < others[None, :, 2] + gap) &
            (boxes[:, None, 2] > others[None, :, 0] - gap) &
            (boxes[:, None, 1] < others[None, :, 3] + gap) &
            (boxes[:, None, 3] > others[None, :, 1] - gap))
    return np.asarray(near.any(axis=1))


def _hits(start: np.ndarray, end: np.ndarray, boxes: np.ndarray, gap: float) -> np.ndarray:
    """[segment, box]: whether segment start-end ((n, 2) each) passes through each of
    ``boxes`` ((m, 4): x0, y0, x1, y1) grown by ``gap``. Liang and Barsky's clipping: the
    segment's parameter intervals inside the box's x range and y range meet within [0, 1]."""
    if not len(start) or not len(boxes):
        return np.zeros((len(start), len(boxes)), dtype=bool)
    origin, step = start[:, None, :], (end - start)[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (boxes[None, :, :2] - gap - origin) / step
        b = (boxes[None, :, 2:] + gap - origin) / step
    enter = np.nan_to_num(np.minimum(a, b), nan=-np.inf, posinf=np.inf).max(axis=2)
    leave = np.nan_to_num(np.maximum(a, b), nan=np.inf, neginf=-np.inf).min(axis=2)
    return np.asarray(np.maximum(enter, 0.0) <= np.minimum(leave, 1.0))


def label_boxes(figure: Figure) -> list:
    """The window boxes of the texts drawn inside the axes of ``figure``, a label's text
    without its line (for tests: no two may overlap)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = figure.figure
    renderer = FigureCanvasAgg(fig).get_renderer()
    return [Text.get_window_extent(t, renderer) for ax in fig.axes for t in ax.texts
            if t.get_text()]
