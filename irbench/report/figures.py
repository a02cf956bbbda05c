"""The report's charts, drawn by matplotlib (the ``report`` extra), inline as SVG in the page
and, with ``irbench report --figures DIR``, as PDF and PNG for a paper.

Every chart has labelled axes with ticks, a legend naming its series, the Okabe & Ito
colour-blind-safe palette with a marker per series, and a categorical x axis for the judgment
fractions (100% ... 3% evenly spaced). Text is kept as text in the SVG (searchable, printable);
participants' strings (run names) are drawn literally: math text is off, and matplotlib
escapes what it writes into the SVG. Output is deterministic (fixed SVG ids, no date).
"""

from __future__ import annotations

import functools
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OutputError
from ..files import replacing

if TYPE_CHECKING:
    from matplotlib.transforms import Bbox

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
             "#000000")
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
        raise OutputError("the report's charts need matplotlib: pip install 'irbench[report]'"
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
        raise OutputError("the report's charts need matplotlib: pip install "
                          "'irbench[report]'") from None

    return matplotlib.rc_context({
        "text.parse_math": False,  # '$' in a run name is a dollar sign
        "svg.fonttype": "none",  # text stays text: searchable and printed as text
        "svg.hashsalt": "irbench",  # the same ids every time
        "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
        "axes.prop_cycle": cycler(color=OKABE_ITO),
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
                    linestyle=STYLES[i % len(STYLES)], color=OKABE_ITO[i % len(OKABE_ITO)],
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
            ax.plot(recall, ys, color="#bbbbbb", linewidth=0.7, zorder=1)
    for i, name in enumerate(highlighted):
        ax.plot(recall, curves[name], marker=MARKERS[i % len(MARKERS)], markersize=4,
                color=OKABE_ITO[i % len(OKABE_ITO)], label=name, zorder=2)
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
    named; the two rankings' disagreement shows as points off a monotone line. Labels are
    placed by adjustText away from the points and each other, joined to their point by a
    line; a label that still overlaps one placed before it is left out, so none collide."""
    fig, ax = _new((7.5, 5.2))
    ax.scatter(map_values, gmap_values, s=16, color=OKABE_ITO[0], zorder=2)
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
    texts = [ax.text(map_values[i], gmap_values[i], f"{names[i]} ({change[i]:+d})", fontsize=8,
                     zorder=3) for i in named]
    shown = _place_labels(fig, ax, texts, map_values, gmap_values)
    for i, text in zip(named, texts):
        if text in shown:
            x, y = text.get_position()
            ax.annotate("", (map_values[i], gmap_values[i]), xytext=(x, y),
                        arrowprops={"arrowstyle": "-", "color": "#888888", "lw": 0.6},
                        zorder=1)
    left_out = len(named) - len(shown)
    if left_out:  # the same two lines: the axes keep their place
        ax.set_title(title.replace("\n(", f"; {left_out} left out to avoid overlap\n("),
                     fontsize=8.5)
    return _done("map-gmap", fig)


def _place_labels(fig, ax, texts, x: np.ndarray, y: np.ndarray) -> list:
    """Move ``texts`` off the points (x, y) and each other (adjustText), then remove each
    text that overlaps one kept before it (or leaves the axes); the texts kept."""
    try:
        from adjustText import adjust_text
    except ImportError:
        raise OutputError("the report's charts need adjustText (label placement): pip install "
                          "'irbench[report]'") from None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    if texts:
        x, y = _near_labels(texts, np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        adjust_text(texts, x=x, y=y, ax=ax,
                    expand=(1.3, 1.8), force_static=(0.6, 1.2), force_text=(0.4, 0.8),
                    force_pull=(0.002, 0.002), iter_lim=500, time_lim=None)
    renderer = canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    kept: list = []
    boxes: list[Bbox] = []
    for text in texts:
        box = text.get_window_extent(renderer)
        inside = (box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1  # a pixel's rounding
                  and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1)
        if not inside or any(box.overlaps(other) for other in boxes):
            text.remove()
            continue
        kept.append(text)
        boxes.append(box)
    return kept


NEAR = 300  # points a label is kept off: the nearest to the labelled ones (adjustText's cost)


def _near_labels(texts, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The NEAR points closest to a labelled point (on the axes' scale): the only points a
    label can land on, so a campaign of 1,000 runs costs what one of 300 does."""
    if len(x) <= NEAR:
        return x, y
    span = np.array([np.ptp(x) or 1.0, np.ptp(y) or 1.0])
    points = np.column_stack([x, y]) / span
    labelled = np.array([t.get_position() for t in texts]) / span
    nearest = np.min(np.linalg.norm(points[:, None, :] - labelled[None, :, :], axis=2), axis=1)
    keep = np.sort(np.argsort(nearest, kind="stable")[:NEAR])
    return x[keep], y[keep]


def label_boxes(figure: Figure) -> list:
    """The window boxes of the texts drawn inside the axes of ``figure`` (for tests: no two
    may overlap)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = figure.figure
    renderer = FigureCanvasAgg(fig).get_renderer()
    return [t.get_window_extent(renderer) for ax in fig.axes for t in ax.texts
            if t.get_text()]
