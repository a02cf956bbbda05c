"""The HTML report: a documented context, numbers equal to the store, participant text escaped."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.config import load_config
from irbench.report import undocumented_fields
from irbench.store import Store

EVIL = "<script>alert(1)</script> \"q\" & 'a'"


class Page(HTMLParser):
    """Collects section ids, tags and the text of every table cell by table."""

    def __init__(self):
        super().__init__()
        self.sections, self.tags, self.tables = [], [], []
        self._cell = None
        self._print = 0  # inside the print-only copy of the leaderboard: not collected

    @classmethod
    def of(cls, html: str) -> Page:
        page = cls()
        page.feed(html)
        return page

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table" and "board-print" in (dict(attrs).get("class") or ""):
            self._print += 1
        if self._print:
            return
        if tag == "section":
            self.sections.append(dict(attrs).get("id"))
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if self._print:
            self._print -= tag == "table"
            return
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_every_context_field_is_documented():
    assert undocumented_fields() == []


def test_report_sections_numbers_and_escaping(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    text = path.read_text().replace(
        "  - glob: ../runs/r*.txt",
        f"  - glob: ../runs/r0[0-2].txt\n  - name: {EVIL!r}\n    run: ../runs/r03.txt\n"
        "    group: 'a&b'\n  - {name: r00b, run: ../runs/r00.txt, baseline: true}")
    path.write_text(text.replace(EVIL.__repr__(), "\"" + EVIL.replace('"', '\\"') + "\"")
                    + "report: {reduction_design: buckley-voorhees}\n")
    config = load_config(path)
    assert EVIL in [s.name for s in config.systems]
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = Page()
    page.feed(html)
    assert page.sections == ["leaderboard", "significance", "per-topic", "map-gmap", "judged",
                             "reduction", "precision-recall", "provenance"]
    # self-contained: no external resource of any kind
    assert not [t for t, a in page.tags if t in ("link", "img", "iframe")
                or (t == "script" and "src" in a)]
    header, *rows = page.tables[0]
    measures = header[6:]
    assert measures == ["AP", "nDCG@10", "P@10", "GMAP", "Bpref", "RR"]
    names = [r[1].removesuffix(" (baseline)") for r in rows]
    assert EVIL in names and "r00b" in names
    with Store(config.store, read_only=True) as store:
        _, means = store.query("SELECT system, measure, value FROM means")
    stored = {(s, m): v for s, m, v in means}
    for row in rows:
        name = row[1].removesuffix(" (baseline)")
        for measure, cell in zip(measures, row[6:]):
            shown = cell.split("[")[0].replace("▲", "").replace("▼", "").strip()
            assert shown == f"{stored[(name, measure)]:.4f}", (name, measure)
    ranks = [int(r[0]) for r in rows]
    ap = [float(r[6].split("[")[0].strip(" ▲▼")) for r in rows]
    assert ranks == list(range(1, len(rows) + 1)) and ap == sorted(ap, reverse=True)
    # significance: a square matrix; per topic: every topic once; MAP vs GMAP and judged@k:
    # every system once
    groups, matrix = page.tables[1], page.tables[2]  # each system's groups, then the matrix
    assert groups[0] == ["rank", "system", "groups"] and len(groups) == 1 + len(rows)
    assert all(g[2] and set(g[2]) <= set("abcdefghijklmnopqrstuvwxyz") for g in groups[1:])
    assert len(matrix) == 1 + len(rows) and len(matrix[1]) == 1 + len(rows)
    assert len(page.tables[3]) == 1 + 5
    assert len(page.tables[4]) == 1 + len(rows)
    judged = {r[0]: r for r in page.tables[5][1:]}
    reduction = page.tables[6]
    assert [r[0].strip("■ ") for r in reduction[1:]] == [
        "AP", "Bpref", "Bpref(ten)", "infAP", "AP(condensed)", "nDCG(condensed)"]
    assert all(r[1] == "1.000" for r in reduction[1:])  # all judgments: the same ranking
    assert cli.main(["report", str(path), "--out", str(out)]) == 0  # again: the same page
    assert (out / "index.html").read_text().split("Made by")[1].split("</p>", 1)[1] == \
        html.split("Made by")[1].split("</p>", 1)[1]
    # three matplotlib charts inline (MAP-GMAP scatter, reduction, precision-recall), whose
    # legends and labels carry participants' names as inert text
    assert html.count('<figure class="chart">') == 3
    figure_svgs = html.split('<figure class="chart">')[1:]
    assert len(figure_svgs) == 3 and all(f.lstrip().startswith("<svg") for f in figure_svgs)
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in f.split("</figure>")[0]
               for f in figure_svgs)
    for label in ("Kendall's tau", "judgments kept per topic", "interpolated precision",
                  "recall", "MAP", "GMAP", "3%", "100%"):
        assert label.replace("'", "&#39;") in html or label in html, label
    assert set(judged) == set(names)
    import irbench

    ev = irbench.evaluate(config.qrels[0].path, str(tmp_path / "runs" / "r00.txt"),
                          ["judged@10"], complete=True)
    assert judged["r00"][1] == f"{ev.summary('judged@10'):.4f}"


def test_report_needs_a_store(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=2, extra_qrels=False)
    assert cli.main(["report", str(path)]) == 3
    assert "no score store yet" in capsys.readouterr().err


def test_leaderboard_exports(tmp_path, capsys):
    import json

    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    path.write_text(path.read_text().replace(
        "  - glob: ../runs/r*.txt",
        "  - glob: ../runs/r0[01].txt\n  - {name: 'a_b & c|d%', run: ../runs/r02.txt, "
        "baseline: true, group: 'g_1 & #2'}"))
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["rank"] for s in data["systems"]] == [1, 2, 3] and data["baseline"] == "a_b & c|d%"
    assert cli.main(["report", str(path), "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert r"a\_b \& c|d\%" in latex and r"\toprule" in latex and r"\textbf{" in latex
    # the group column, as in Markdown: escaped, one cell per column in every row
    assert r"\begin{tabular}{rll" in latex and " & System & Group & AP & " in latex
    row = next(line for line in latex.splitlines() if r"a\_b \& c|d\%" in line)
    assert row.split(" & ")[2] == r"g\_1 \& \#2"
    body = [line for line in latex.splitlines() if line.endswith(r"\\")]
    assert len({line.replace(r"\&", "").count("&") for line in body}) == 1
    assert cli.main(["report", str(path), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert r"a_b &amp; c\|d%" in markdown  # no raw HTML in Markdown
    assert "| rank | system | group |" in markdown and "g_1 &amp; #2" in markdown
    out = tmp_path / "board.csv"
    assert cli.main(["report", str(path), "--format", "csv", "-o", str(out)]) == 0
    assert out.read_text().startswith(
        "suite,rank,system,group,type,official,pooled,baseline,AP,")


def test_participant_pages(tmp_path):
    """An appendix page per run named from its name (made safe), an index linking them all;
    each page: every suite measure with the run's rank, precision-recall values, judged@k,
    the difference-from-median chart, and per-topic values against best/median/worst."""
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    evil = "<b>x</b>/../r 1"
    path.write_text(path.read_text().replace(
        "  - glob: ../runs/r*.txt",
        f"  - glob: ../runs/r0[01].txt\n  - {{name: '{evil}', run: ../runs/r02.txt}}"))
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out), "--participants"]) == 0
    pages = sorted(p.name for p in (out / "systems").glob("*.html"))
    diffs = [p for p in pages if p.startswith("diff-")]  # each run against the one above it
    assert len(diffs) == 2 and all(p.count("-vs-") == 1 for p in diffs)
    assert [p for p in pages if p not in diffs] == \
        ["_b_x__b__.._r_1.html", "index.html", "r00.html", "r01.html"]
    index = (out / "systems" / "index.html").read_text()
    for name in ("r00.html", "r01.html", "_b_x__b__.._r_1.html"):
        assert f'href="{name}"' in index
    assert "&lt;b&gt;x&lt;/b&gt;/../r 1" in index and "<b>x</b>" not in index
    html = (out / "systems" / "r00.html").read_text()
    page = Page()
    page.feed(html)
    meta, measures, curve, verdicts, topics = page.tables
    fields = dict((row[0], row[1]) for row in meta)
    assert set(fields) >= {"group", "type", "official", "pooled", "description", "run file",
                           "sha256"} and len(fields["sha256"]) == 64
    assert measures[0] == ["measure", "value", "rank", "best run", "median run", "interval"]
    for row in measures[1:]:  # a bootstrap interval around each mean (none for GMAP)
        if row[0] != "GMAP":
            low, high = map(float, row[5].strip("[]").split(", "))
            assert 0 <= low <= float(row[1]) <= high <= 1, row
    assert [r[0] for r in measures[1:]] == ["AP", "nDCG@10", "P@10", "GMAP", "Bpref", "RR"]
    assert all(r[2] in ("1", "2", "3") for r in measures[1:])
    assert all(float(r[4]) <= float(r[3]) for r in measures[1:])
    assert [r[0] for r in curve[1:]] == [f"{k / 10:.1f}" for k in range(11)]  # recall labels
    precision = [float(r[1]) for r in curve[1:]]
    assert precision == sorted(precision, reverse=True)  # interpolated: never rising
    assert verdicts[0] == ["this run is", "runs", "count"]
    assert [r[0] for r in verdicts[1:]] == ["better than", "worse than",
                                            "not distinguishable from"]
    assert sum(int(r[2]) for r in verdicts[1:]) == 2  # the two other runs, each once
    header, *rows = topics
    assert header == ["topic", "this run", "best", "median", "worst"] and len(rows) == 5
    for _, yours, best, median, worst in rows:
        assert float(worst) <= float(yours) <= float(best) and float(worst) <= float(median)
    assert "judged@10" in html and "Interpolated precision" in html
    # two SVG charts drawn by the template: recall-precision and the difference from median
    assert html.count('<figure class="chart svg-chart">') == 2 and "minus the median" in html
    for label in ("recall", "interpolated precision", "median of all runs"):
        assert label in html
    # navigation: back to the report and its sections, all runs, previous/next by rank
    assert 'href="../index.html"' in html and 'href="../index.html#leaderboard"' in html
    assert 'href="index.html"' in html
    ranks = {name: int(r[0]) for r in Page.of((out / "systems" / "index.html").read_text())
             .tables[0][1:] for name in [r[1]]}
    assert sorted(ranks.values()) == [1, 2, 3]
    for name, file in (("r00", "r00.html"), ("r01", "r01.html")):
        text = (out / "systems" / file).read_text()
        assert ('rel="prev"' in text) == (ranks[name] > 1)
        assert ('rel="next"' in text) == (ranks[name] < 3)
    evil_page = (out / "systems" / "_b_x__b__.._r_1.html").read_text()
    assert "<b>x</b>" not in evil_page and "&lt;b&gt;x&lt;/b&gt;" in evil_page
    # the main page links every run to its page, in one click
    index_page = (out / "index.html").read_text()
    for name in pages:
        if name != "index.html" and name not in diffs:  # diffs: linked from run pages
            assert f'href="systems/{name}"' in index_page
    # a report written without run pages leaves no stale ones behind
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    assert not (out / "systems").exists()
    assert 'href="systems/' not in (out / "index.html").read_text()


def test_pool_bias_section_and_report_options(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    path.write_text(path.read_text() + "report: {pool_depth: 10, pooled_per_group: 1}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    page = Page()
    page.feed((out / "index.html").read_text())
    assert "pool-bias" in page.sections
    pooled = {r[1].removesuffix(" (baseline)"): r[5] for r in page.tables[0][1:]}
    assert sorted(pooled.values()) == ["yes", "yes", "yes"]  # every run is its own group
    path.write_text(path.read_text().replace("report: {pool_depth: 10, pooled_per_group: 1}",
                                             "report: {pool_dept: 10}"))
    assert cli.main(["report", str(path), "--out", str(out)]) == 1
    assert "report.pool_dept: unknown option (did you mean pool_depth?)" in \
        capsys.readouterr().err


def test_report_measure_option(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    path.write_text(path.read_text() + "report: {measure: nDCG@10}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "Every pair of systems on nDCG@10" in html and "nDCG@10 on each topic" in html
    path.write_text(path.read_text().replace("measure: nDCG@10", "measure: ERR@20"))
    assert cli.main(["report", str(path), "--out", str(out)]) == 1
    assert "report.measure: ERR@20 is in no suite" in capsys.readouterr().err


def test_significance_table_exports(tmp_path, capsys):
    import csv
    import io
    import json

    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "json", "--table", "significance"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["measure"] == "AP" and len(data["pairs"]) == 4 * 3
    for pair in data["pairs"]:
        back = next(p for p in data["pairs"] if (p["system_a"], p["system_b"]) ==
                    (pair["system_b"], pair["system_a"]))
        assert back["p_adjusted"] == pair["p_adjusted"] and back["mean_diff"] == -pair["mean_diff"]
    assert cli.main(["report", str(path), "--format", "csv", "--table", "significance"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 12 and 0 <= float(rows[0]["p_adjusted"]) <= 1
    assert cli.main(["report", str(path), "--format", "latex", "--table", "significance"]) == 0
    assert r"\toprule" in capsys.readouterr().out


def test_a_report_that_fails_midway_leaves_the_previous_one_whole(tmp_path, monkeypatch):
    """Pages are rendered, written to a temporary folder and renamed into place: a failure
    (or a kill) at any moment leaves the last index.html and systems/ as they were."""
    import importlib
    import os
    import types

    render = importlib.import_module("irbench.report.render")
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out), "--participants"]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.html"))}
    assert len(before) == 7  # index.html, systems/index.html, 3 run pages, 2 diff pages

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    broken = types.SimpleNamespace(**{n: getattr(os, n) for n in dir(os) if not n.startswith("__")})
    broken.replace = broken.rename = fail  # the renames into place (render's os only)
    monkeypatch.setattr(render, "os", broken)
    assert cli.main(["report", str(path), "--out", str(out), "--participants"]) == 1
    after = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.html"))}
    assert after == before
    assert sorted(os.listdir(out)) == [".irbench-report.json", "index.html", "significance.csv",
                                       "systems"]  # no temporary folder left


def test_a_report_folder_belongs_to_one_campaign(tmp_path, capsys):
    """A copied config with the same name once overwrote the other campaign's report."""
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    first = (out / "index.html").read_bytes()
    copy = path.parent / "copy.yaml"
    copy.write_text(path.read_text() + "store: ../runs/copy.duckdb\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(copy)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(copy), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{out}: holds the report of campaign" in err and "--force" in err
    assert (out / "index.html").read_bytes() == first
    assert cli.main(["report", str(path), "--out", str(out)]) == 0  # its own: rewritten
    assert cli.main(["report", str(copy), "--out", str(out), "--force"]) == 0


def test_figures_for_a_paper(tmp_path, capsys):
    """--figures DIR writes every chart as PDF and PNG; the PDF holds its text as text."""
    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    path.write_text(path.read_text() + "report: {reduction_design: buckley-voorhees}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    figures = tmp_path / "figs"
    assert cli.main(["report", str(path), "--out", str(tmp_path / "rep"), "--figures",
                     str(figures)]) == 0
    assert "wrote 6 figure files" in capsys.readouterr().err
    names = sorted(p.name for p in figures.iterdir())
    assert names == ["map-gmap.pdf", "map-gmap.png", "precision-recall.pdf",
                     "precision-recall.png", "reduction.pdf", "reduction.png"]
    for name in names:
        data = (figures / name).read_bytes()
        assert data[:4] == (b"%PDF" if name.endswith(".pdf") else b"\x89PNG")
    assert b"Kendall" in (figures / "reduction.pdf").read_bytes() or \
        (figures / "reduction.pdf").stat().st_size > 1000


def test_the_significance_matrix_shows_the_best_and_a_csv_holds_every_pair(tmp_path,
                                                                             monkeypatch):
    from irbench.report import leaderboard as report_context

    monkeypatch.setattr(report_context, "MATRIX_SYSTEMS", 3)
    path = make_campaign(tmp_path, systems=5, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "the best 3 of 5 systems" in html and 'href="significance.csv"' in html
    page = Page()
    page.feed(html)
    matrix = page.tables[2]  # after each system's groups
    assert len(matrix) == 1 + 3 and len(matrix[0]) == 1 + 3
    rows = (out / "significance.csv").read_text().splitlines()
    assert rows[0] == "measure,system_a,system_b,mean_diff,effect_size,p_adjusted"
    assert len(rows) == 1 + 5 * 4 // 2


def test_drawing_the_charts_leaves_matplotlib_settings_alone():
    """The charts' style (math text off, text kept as text, fixed SVG ids) applies while they
    are drawn and saved only: a notebook's own matplotlib settings are unchanged; and the same
    chart gives the same SVG, a run name with '$' drawn literally."""
    matplotlib = pytest.importorskip("matplotlib")
    import numpy as np

    from irbench.report import figures

    before = dict(matplotlib.rcParams)
    first = figures.map_gmap(["a$b$", "c"], np.array([0.3, 0.2]), np.array([0.2, 0.25]))
    again = figures.map_gmap(["a$b$", "c"], np.array([0.3, 0.2]), np.array([0.2, 0.25]))
    assert {k for k in before if matplotlib.rcParams[k] != before[k]} == set()
    assert first.svg == again.svg and "a$b$" in first.svg


def test_a_report_without_matplotlib_says_which_extra_to_install(tmp_path):
    import os
    import subprocess
    import sys

    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    code = ("import sys; sys.modules['matplotlib'] = None; from irbench import cli; "
            f"sys.exit(cli.main(['report', {str(path)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "the report's charts need matplotlib: pip install 'irbench[report]'" in out.stderr
