"""The report's page over the collections of a config with ``collections:`` (issue 41):
``irbench report CONFIG`` writes each collection's own report into reports/<name>/<collection>/
and reports/<name>/index.html over them all. Its numbers are those of ``irbench compare CONFIG
--across --format json`` as the page prints them, its links open the collections' reports, a
hostile system name is escaped in the table and the forest plots, what needs one collection
is refused, and a Chromium screenshot of it goes to $IRBENCH_SHOTS when set."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import make_dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_collections import PARTS, SUITE, _split

from irbench import cli
from irbench.report.across import ACROSS_TYPES, AcrossPage
from irbench.report.fields import names_outside, undocumented
from irbench.report.render import environment

pytest.importorskip("matplotlib")
pytest.importorskip("statsmodels")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = "<script>alert(1)</script>&\"x'"
SYSTEMS = ('  - {name: groupA-1, run: "{collection}/runs/groupA-1.txt", baseline: true}\n'
           '  - {glob: "{collection}/runs/group[BC]-*.txt"}\n'
           '  - {glob: "{collection}/runs/groupD-[12].txt"}\n'
           "  - {name: '" + HOSTILE.replace("'", "''") + "', "
           'run: "{collection}/runs/groupD-3.txt"}\n')
MEASURES = ("AP", "nDCG@10", "P@10", "Bpref")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """The demo split into three collections, groupA-1 the baseline, groupD-3 renamed to a
    hostile name, report.leaderboard_suites asking for every measure; scored and reported."""
    root = tmp_path_factory.mktemp("lab")
    _split(root)
    path = root / "lab.yaml"
    path.write_text("name: lab\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in PARTS)
        + "systems:\n" + SYSTEMS + SUITE + "report:\n  leaderboard_suites: [core]\n")
    assert cli.main(["run", str(path), "--quiet"]) == 0
    assert cli.main(["report", str(path)]) == 0
    return path


class Page(HTMLParser):
    """The across page read back: per table (section id) its header and rows of cell texts,
    the links, the forest figures' ids and every text."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[str] = []
        self.figures: list[str] = []
        self.section = ""
        self.cell: list[str] | None = None
        self.in_svg = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a["id"]
            self.tables[self.section] = []
        elif tag == "tr" and self.section:
            self.tables[self.section].append([])
        elif tag in ("td", "th") and self.section and not self.in_svg:
            self.cell = []
        elif tag == "a" and a.get("href", "").endswith("index.html"):
            self.links.append(a["href"])
        elif tag == "figure":
            self.figures.append(a["id"])
        elif tag == "svg":
            self.in_svg += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[self.section][-1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "svg":
            self.in_svg -= 1
        elif tag == "section":
            self.section = ""

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _num(value, digits=4, sign=False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _expected_rows(shown: dict) -> list[list[str]]:
    """The table rows the page should print for compare --across's JSON."""
    rows = []
    for s in shown["systems"]:
        cells = []
        for j, c in enumerate(shown["collections"]):
            test = next((t for t in s["tests"] if t["collection"] == c), None)
            mark = {"win": " ▲", "loss": " ▼"}.get(test["outcome"], "") if test else ""
            cells.append(_num(s["means"][j]) + mark)
        m = s["meta"]
        base = s["name"] == shown["baseline"]
        rows.append([s["name"] + (" (baseline)" if base else ""), *cells, _num(s["mean"]),
                     _num(s["mean_rank"], 2),
                     "" if base else f"{s['wins']}/{s['ties']}/{s['losses']}",
                     _num(m["effect"], sign=True) if m else "-",
                     f"[{_num(m['ci_low'], sign=True)}, {_num(m['ci_high'], sign=True)}]"
                     if m else "-", _num(m["p_value"]) if m else "-",
                     _num(m["tau2"], 6) if m else "-",
                     f"{m['i2'] * 100:.1f}%" if m else "-", _num(m["q"], 3) if m else "-"])
    return rows


@pytest.mark.timeout(600)
def test_the_page_shows_compare_across_numbers(lab, capsys):
    page = Page((lab.parent / "reports" / "lab" / "index.html").read_text(encoding="utf-8"))
    assert list(page.tables) == [f"measure-{k + 1}" for k in range(len(MEASURES))]
    for k, measure in enumerate(MEASURES):
        capsys.readouterr()
        assert cli.main(["compare", str(lab), "--across", "--measure", measure,
                         "--format", "json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["baseline"] == "groupA-1"
        header, *rows = page.tables[f"measure-{k + 1}"]
        assert header == ["system", *PARTS, "mean", "mean rank", "W/T/L", "effect", "95% CI",
                          "p", "tau²", "I²", "Q"]
        assert rows == _expected_rows(shown)
        # a forest plot per system but the baseline, in the table's order
        assert [f for f in page.figures if f.startswith(f"forest-{k + 1}-")] == \
            [f"forest-{k + 1}-{i + 1}" for i, s in enumerate(shown["systems"])
             if s["meta"] is not None]
    assert any(r[-1] != "-" for r in rows)


@pytest.mark.timeout(120)
def test_wins_and_losses_are_marked():
    """8 topics a collection allow no significant difference after Holm over 27 tests: the
    marks are checked on collections of 40 topics, one system clearly better, one worse."""
    import numpy as np

    from irbench.report.across import _table
    from irbench.stats.across import CollectionScores, across

    rng = np.random.default_rng(7)
    scores = []
    for name in ("x", "y"):
        base = rng.uniform(0.2, 0.6, 40)
        values = np.vstack([base, base + 0.2 + rng.normal(0, 0.02, 40),
                            base - 0.15 + rng.normal(0, 0.02, 40), base + rng.normal(0, .1, 40)])
        scores.append(CollectionScores(name, ("base", "better", "worse", "same"),
                                       tuple(f"t{i}" for i in range(40)), values))
    result = across(scores, "AP", baseline="base", test="t")
    table = _table(result, 0)
    rows = {r.name: r for r in table.rows}
    assert [c.mark for c in rows["better"].cells] == ["▲", "▲"]
    assert [c.mark for c in rows["worse"].cells] == ["▼", "▼"]
    assert [c.mark for c in rows["same"].cells] == ["", ""]
    assert (rows["better"].wtl, rows["worse"].wtl, rows["base"].wtl) == ("2/0/0", "0/0/2", "")
    assert rows["better"].cells[0].title.startswith("+0.2") and "adjusted p 0.0000" in \
        rows["better"].cells[0].title
    assert [f.system for f in table.forests] == ["better", "same", "worse"]


@pytest.mark.timeout(120)
def test_links_open_the_collections_reports(lab):
    folder = lab.parent / "reports" / "lab"
    page = Page((folder / "index.html").read_text(encoding="utf-8"))
    assert page.links == [f"{name}/index.html" for name in PARTS]
    for link in page.links:
        target = (folder / link).resolve()
        assert target.is_file()
        text = target.read_text(encoding="utf-8")
        assert f"<title>lab: {link.split('/')[0]}: irbench report" in text
        back = re.findall(r'<a href="([^"]*)">All collections</a>', text)  # and back
        assert back == ["../index.html"]
        assert (target.parent / back[0]).resolve() == (folder / "index.html").resolve()
    assert json.loads((folder / ".irbench-report.json").read_text())["config"] == str(lab)


@pytest.mark.timeout(120)
def test_a_hostile_system_name_is_escaped(lab):
    text = (lab.parent / "reports" / "lab" / "index.html").read_text(encoding="utf-8")
    assert HOSTILE not in text and "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;x&#39;" in text  # the table
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&#39; against groupA-1" in text \
        or "&lt;script&gt;alert(1)&lt;/script&gt;&amp;\"x' against groupA-1" in text  # SVG


@pytest.mark.timeout(120)
def test_the_contract_of_the_page():
    assert undocumented(ACROSS_TYPES) == []
    context = make_dataclass("AcrossContext", [("p", AcrossPage)])
    assert names_outside(environment(), "across.html", context) == []


@pytest.mark.timeout(300)
def test_what_needs_one_collection_and_another_campaign_s_folder(lab, capsys, tmp_path):
    capsys.readouterr()
    assert cli.main(["report", str(lab), "--format", "csv"]) == 1
    assert "--format csv is made per collection: give --collection NAME" in \
        capsys.readouterr().err
    assert cli.main(["report", str(lab), "--appendix-pdf", str(tmp_path / "a.pdf")]) == 1
    assert "--appendix-pdf is made per collection" in capsys.readouterr().err
    assert cli.main(["report", str(lab), "--collection", "c2", "--out",
                     str(tmp_path / "two")]) == 0  # one collection's report, as before
    assert (tmp_path / "two" / "index.html").exists() and not (tmp_path / "two" / "c2").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".irbench-report.json").write_text(json.dumps({"campaign": "x",
                                                            "config": "/elsewhere.yaml"}))
    assert cli.main(["report", str(lab), "--out", str(other)]) == 1
    assert "holds the report of campaign 'x'" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == [".irbench-report.json"]  # nothing


@pytest.mark.timeout(300)
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_screenshot(lab, tmp_path):
    shot = tmp_path / "across.png"
    target = lab.parent / "reports" / "lab" / "index.html"
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1366,2400",
                           "--virtual-time-budget=3000", f"--screenshot={shot}",
                           target.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.stat().st_size > 20_000
    if os.environ.get("IRBENCH_SHOTS"):
        shutil.copy(shot, Path(os.environ["IRBENCH_SHOTS"]) / shot.name)
    print("screenshot:", shot)
