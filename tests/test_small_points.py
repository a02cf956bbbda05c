"""Issue 38's smaller points: judged@k beside the share of the retrieved documents judged, the
MAP-GMAP scatter's labels, the recall-precision colours, dir(irbench.stats), section numbers
in comments, and which command needs which extra."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


# ---- dir(irbench.stats): every export, still imported lazily ---------------------------------

def test_dir_of_irbench_stats_lists_its_exports_without_importing_them():
    code = ("import sys, irbench.stats as s\n"
            "names = dir(s)\n"
            "print('scipy' in sys.modules, 'irbench.stats.paired' in sys.modules)\n"
            "print(' '.join(names))\n"
            "print(' '.join(s.__all__))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    lazy, names, exported = out.stdout.splitlines()
    assert lazy == "False False"  # dir() imported nothing
    names, exported = names.split(), exported.split()
    assert {"compare", "paired_test", "mean_intervals", "Scores", "describe"} <= set(exported)
    assert set(exported) <= set(names)
    assert "import_module" not in names  # no helper of the package offered as its own
    assert names == sorted(names)


def test_every_name_irbench_stats_lists_resolves():
    import irbench.stats as stats

    for name in stats.__all__:
        assert getattr(stats, name) is not None, name
    assert set(stats.__all__) <= set(dir(stats))


# ---- section numbers named in comments and code are the report's sections -------------------

SECTION_REFERENCE = re.compile(  # 'section 6c', 'sections 6 and 7', '(6b)'; not 'section 8.4'
    r"\bsections? (\d[a-d]?)(?!\.?\d)(?:(?:,| and) (\d[a-d]?)(?!\.?\d))?|\((\d[a-d])\)")


def _report_sections() -> set[str]:
    """The numbers of the report's sections, read from the templates' headings."""
    templates = ROOT / "irbench" / "report" / "templates"
    return {m for page in templates.glob("*.html")
            for m in re.findall(r"<h2[^>]*>(\d[a-d]?)\. ", page.read_text())}


def _references(text: str) -> set[str]:
    return {n for match in SECTION_REFERENCE.findall(text) for n in match if n}


def test_the_reports_sections_are_found():
    assert {"1", "5", "6", "6b", "6c", "6d", "8"} <= _report_sections()


def test_every_section_named_in_configs_code_and_readme_exists():
    """The demo config's comment said (5b) for the reduction experiment, section 6b."""
    sections = _report_sections()
    files = [*(ROOT / "configs").glob("*.yaml"), ROOT / "README.md",
             *(p for p in (ROOT / "irbench").rglob("*") if p.suffix in (".py", ".html"))]
    wrong = {f"{p.relative_to(ROOT)}: {n}" for p in files
             for n in _references(p.read_text()) if n not in sections}
    assert wrong == set()
    assert "(6b)" in (ROOT / "configs" / "demo.yaml").read_text()


def test_the_reference_pattern_finds_what_it_should():
    assert _references("the experiment (5b); sections 6 and 7; section 6c does; a book's "
                       "section 8.4") == {"5b", "6", "7", "6c"}


# ---- the MAP-GMAP scatter: labels on no dot, inside the frame --------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

MEASURE_SVG = """<!doctype html><html><body style="margin:0">%s
<script>
// Every dot's, label's and the frame's box as the browser draws the SVG, into the DOM.
window.addEventListener("load", function () {
  function box(e) { var r = e.getBoundingClientRect();
                    return [r.left, r.top, r.right, r.bottom]; }
  var out = {frame: box(document.querySelector('[id$="-frame"] path')),
             dots: Array.from(document.querySelectorAll('[id$="-dots"] use')).map(box),
             labels: Array.from(document.querySelectorAll('[id*="-label-"]')).map(
               function (g) { return [parseInt(g.id.split("-label-")[1]),
                                      box(g.querySelector("text"))]; })};
  document.body.setAttribute("data-boxes", JSON.stringify(out));
});
</script></body></html>"""


def _dense_campaign(n: int = 129, seed: int = 3):
    rng = np.random.default_rng(seed)
    base = np.sort(rng.uniform(0.05, 0.55, n))
    gmap = base * 0.95 + rng.normal(0, 0.01, n)  # dense along the diagonal, as real runs are
    return [f"run-with-a-long-name-{i:03d}" for i in range(n)], base, gmap


def _apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [3, 7])
def test_map_gmap_labels_touch_no_dot_and_stay_inside_the_frame_as_drawn(tmp_path, seed):
    """Measured on the SVG the report inlines, as Chromium draws it: no label's box overlaps
    a dot (not even its own), another label or the frame's edge."""
    pytest.importorskip("matplotlib")
    from irbench.report import figures

    names, base, gmap = _dense_campaign(seed=seed)
    figure = figures.map_gmap(names, base, gmap)
    page = tmp_path / "chart.html"
    page.write_text(MEASURE_SVG % figure.svg)
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=100)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(html.unescape(re.search(r'data-boxes="([^"]*)"', proc.stdout)[1]))
    frame, dots, labels = found["frame"], found["dots"], found["labels"]
    assert len(dots) == len(names) and len(labels) >= 6
    for index, label in labels:
        assert frame[0] < label[0] and label[2] < frame[2], names[index]  # off the frame
        assert frame[1] < label[1] and label[3] < frame[3], names[index]
        assert all(_apart(label, dot) for dot in dots), names[index]  # on no dot
    for i, (_, a) in enumerate(labels):
        assert all(_apart(a, b) for _, b in labels[i + 1:])


@pytest.mark.parametrize("seed", [3, 7, 11])
def test_map_gmap_labels_keep_off_dots_and_frame_in_matplotlibs_measure(seed):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from irbench.report import figures

    names, base, gmap = _dense_campaign(seed=seed)
    figure = figures.map_gmap(names, base, gmap)
    fig = figure.figure
    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    points = ax.transData.transform(np.column_stack([base, gmap]))
    radius = (figures.DOT_AREA ** 0.5 / 2) * fig.dpi / 72
    labels = [t for t in ax.texts if t.get_gid()]
    assert len(labels) >= 6
    for text in labels:
        box = Text.get_window_extent(text, renderer)  # the text, not its line
        assert frame.x0 < box.x0 and box.x1 < frame.x1 and frame.y0 < box.y0 and box.y1 < frame.y1
        nearest = np.clip(points, [box.x0, box.y0], [box.x1, box.y1])
        assert np.hypot(*(nearest - points).T).min() > radius, text.get_text()
    placed = figures.label_boxes(figure)
    for i, a in enumerate(placed):
        assert not any(a.overlaps(b) for b in placed[i + 1:])


def test_label_lines_cross_no_label():
    from irbench.report import figures

    hits = figures._hits(np.array([[0.0, 0.0], [0.0, 5.0], [0.0, 0.0]]),
                         np.array([[10.0, 10.0], [10.0, 5.0], [0.0, 10.0]]),
                         np.array([[4.0, 4.0, 6.0, 6.0], [0.0, 8.0, 1.0, 9.0]]), 0.0)
    assert hits.tolist() == [[True, False], [True, False], [False, True]]


# ---- colours: every line at least 3:1 against white (WCAG 2.1, 1.4.11) ----------------------

def _contrast_on_white(colour) -> float:
    """WCAG 2.1's contrast ratio of an opaque colour against #fff."""
    from matplotlib.colors import to_rgba

    *rgb, alpha = to_rgba(colour)
    assert alpha == 1.0, f"{colour}: translucent, its contrast depends on what is below"
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


def test_the_contrast_formula_matches_wcag():
    pytest.importorskip("matplotlib")
    assert _contrast_on_white("#000000") == pytest.approx(21.0)
    assert _contrast_on_white("#767676") == pytest.approx(4.54, abs=0.01)
    assert _contrast_on_white("#F0E442") < 1.5  # the yellow line the issue found


def test_every_series_colour_has_3_to_1_contrast_on_white():
    pytest.importorskip("matplotlib")
    from irbench.report import figures

    for colour in (*figures.PALETTE, figures.OTHERS):
        assert _contrast_on_white(colour) >= 3.0, colour
    assert len(set(figures.PALETTE)) == len(figures.PALETTE) == len(figures.MARKERS)


def test_every_line_of_the_recall_precision_graph_has_3_to_1_contrast():
    pytest.importorskip("matplotlib")
    from irbench.report import figures

    rng = np.random.default_rng(0)
    curves = {f"run{i}": np.sort(rng.uniform(0, 1, 11))[::-1] for i in range(20)}
    highlighted = list(curves)[:len(figures.PALETTE)]
    figure = figures.precision_recall(curves, highlighted)
    lines = figure.figure.axes[0].lines
    assert len(lines) == len(curves)
    used = {c for line in lines
            for c in (line.get_color(), line.get_markerfacecolor(), line.get_markeredgecolor())}
    assert len(used) >= len(figures.PALETTE)
    for colour in used:
        assert _contrast_on_white(colour) >= 3.0, colour
    strokes = set(re.findall(r"stroke: (#[0-9a-f]{6})", figure.svg))
    assert "#f0e442" not in strokes and "#e69f00" not in strokes and "#56b4e9" not in strokes


def test_every_line_of_a_run_page_has_3_to_1_contrast(tmp_path):
    """The run pages' SVG recall-precision graph (drawn by the templates, not matplotlib)
    uses the same palette: the median's and the best run's lines were #999999 (2.8:1) and
    #E69F00 (2.2:1)."""
    pytest.importorskip("matplotlib")
    from campaigns import copy_demo

    from irbench import cli

    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants"]) == 0
    lines = {colour for page in (out / "systems").glob("*.html")
             for colour in re.findall(r'<polyline [^>]*stroke="(#[0-9A-Fa-f]{6})"',
                                      page.read_text())}
    assert len(lines) == 3, lines  # the run, the median of all runs, the best run
    for colour in lines:
        assert _contrast_on_white(colour) >= 3.0, colour


# ---- extras: which command needs which, and how to install one -------------------------------

def _extras_of_pyproject() -> set[str]:
    import tomllib  # noqa: F401  (Python >= 3.11; the test extra runs there)

    with open(ROOT / "pyproject.toml", "rb") as fh:
        return set(tomllib.load(fh)["project"]["optional-dependencies"])


def test_install_names_the_package_and_the_checkout_forms():
    from irbench.errors import install

    assert install("report") == ("pip install 'irbench[report]' (in a checkout: pip install -e "
                                 "'.[report]')")


def test_every_extra_is_said_in_the_readme_with_the_command_that_needs_it():
    pytest.importorskip("tomllib")
    from irbench.errors import NEEDED_BY

    assert set(NEEDED_BY) | {"test", "bench"} == _extras_of_pyproject()
    readme = (ROOT / "README.md").read_text()
    line = re.sub(r"\s+", " ", readme[readme.index("Extras, imported only when used"):])
    for extra in NEEDED_BY:
        assert f"`{extra}` for " in line, extra
    for extra, command in (("report", "irbench report"), ("judge", "irbench judge"),
                           ("assess", "irbench assess")):
        assert f"`{extra}` for `{command}`" in line
    assert "pip install -e '.[EXTRA]'" in line
    # the README's first command installs what irbench run and irbench report need
    first = re.findall(r"```sh\n(.*?)```", readme, re.S)[0]
    assert "pip install -e '.[report," in first and "lab" in first and "stats" in first


@pytest.mark.timeout(120)
def test_report_without_its_extra_says_both_ways_to_install_it(tmp_path):
    from campaigns import make_campaign

    from irbench import cli

    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    code = ("import sys; sys.modules['matplotlib'] = None; from irbench import cli; "
            f"sys.exit(cli.main(['report', {str(path)!r}, '--out', {str(tmp_path / 'r')!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=100)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert ("the report's charts need matplotlib: pip install 'irbench[report]' (in a "
            "checkout: pip install -e '.[report]')") in out.stderr


# ---- judged@k over k, beside the share of the retrieved documents judged ---------------------

def test_judged_divides_by_k_and_judged_retrieved_by_what_was_retrieved():
    import irbench

    run = {"q1": {f"d{i}": 100.0 - i for i in range(61)}, "q3": {"e0": 1.0}}
    qrels = {"q1": {f"d{i}": i % 2 for i in range(60)}, "q2": {"x": 1}, "q3": {"zz": 1}}
    ev = irbench.evaluate(qrels, run, ["judged@100", "judged(retrieved)@100",
                                       "judged(retrieved)@10"], complete=True)
    assert ev.topics == ("q1", "q2", "q3")
    assert ev["judged@100"].tolist() == [0.6, 0.0, 0.0]  # 60 of 100 ranks: 39 empty
    assert ev["judged(retrieved)@100"].tolist() == pytest.approx([60 / 61, 0.0, 0.0])
    assert ev["judged(retrieved)@10"].tolist() == [1.0, 0.0, 0.0]


def test_the_report_explains_judged_at_k_beside_the_share_of_retrieved(tmp_path):
    from campaigns import make_campaign

    from irbench import cli

    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    section = page[page.index('<section id="judged">'):]
    section = section[:section.index("</section>")]
    text = re.sub(r"\s+", " ", section)
    assert "ranks a run left empty count as unjudged" in text
    assert "<th>judged@10</th><th>of retrieved</th><th>judged@100</th><th>of retrieved</th>" \
        in text
    rows = re.findall(r"<tr><td class=\"text\">.*?</td>((?:<td>[^<]*</td>){4})", section)
    assert len(rows) == 3
    for row in rows:
        j10, r10, j100, r100 = (float(v) for v in re.findall(r"<td>([^<]*)</td>", row))
        assert r10 >= j10 and r100 >= j100  # over at most k, never over more
