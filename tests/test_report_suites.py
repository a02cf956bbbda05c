"""Every suite on the leaderboard, and the printed leaderboard equal to the screen's (issue 38).

A simulated campaign of TREC-8's size (129 runs of 43 groups, 50 topics) with three suites
(``core``; ``incomplete``: judged@10, AP(condensed), Bpref(ten); ``residual``: unj@10 and
rbp_resid, lower is better) and the demo (three suites): one leaderboard per suite, as ARIA
tabs on screen and a section per suite in print and in every export; the printed leaderboard
(Chromium's PDF read back with pdftotext) holds every screen column of every suite, the
intervals and no "click"; each system's groups print on a page, not six; a measure sorts best
first; a link to a section lands below the sticky table of contents at 1366 px. Screenshots
go to $IRBENCH_SHOTS when it is set.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from campaigns import copy_demo, make_campaign

from irbench import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
browser = pytest.mark.skipif(CHROMIUM is None or shutil.which("pdftotext") is None,
                             reason="needs Debian's chromium and poppler-utils")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-quic",
         "--hide-scrollbars"]
SUITES = ("suites:\n  core: [AP, nDCG@10, P@10, RR, Rprec, R@100, GMAP]\n"
          "  incomplete: [judged@10, AP(condensed), Bpref(ten)]\n"
          "  residual: [unj@10, rbp_resid]\n")
SCREEN_COLUMNS = ("rank", "system", "group", "type", "official", "pooled")


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


class Boards(HTMLParser):
    """The leaderboard's tabs, panels and tables: (kind, caption, header cells, body rows)."""

    def __init__(self):
        super().__init__()
        self.tabs, self.panels, self.tables = [], [], []
        self._cell = self._caption = None
        self._kind = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("role") == "tab":
            self.tabs.append(a)
        if a.get("role") == "tabpanel":
            self.panels.append(a)
        if tag == "table" and a.get("class") in ("sortable board", "board-print"):
            self._kind = a["class"]
            self.tables.append({"kind": self._kind, "caption": "", "head": [], "rows": [],
                                "better": []})
        elif self._kind and tag == "caption":
            self._caption = []
        elif self._kind and tag == "tr":
            self.tables[-1]["rows"].append([])
        elif self._kind and tag in ("td", "th"):
            self._cell = []
            if tag == "th":
                self.tables[-1]["better"].append(a.get("data-better", "higher"))

    def handle_endtag(self, tag):
        if tag == "table":
            self._kind = ""
        elif tag == "caption" and self._caption is not None:
            self.tables[-1]["caption"] = " ".join("".join(self._caption).split())
            self._caption = None
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)

    @classmethod
    def of(cls, html: str) -> Boards:
        page = cls()
        page.feed(html.split('<section id="leaderboard">')[1].split("</section>")[0])
        for t in page.tables:
            t["head"], *t["rows"] = t["rows"]
        return page


@pytest.fixture(scope="module")
def trec8(tmp_path_factory):
    """(folder, config, report folder) of a scored 129-run campaign with three suites."""
    tmp = tmp_path_factory.mktemp("suites")
    assert cli.main(["simulate", str(tmp / "sim"), "--groups", "43", "--runs-per-group", "3",
                     "--topics", "50", "--depth", "100", "--pool-depth", "20"]) == 0
    config = tmp / "sim" / "campaign.yaml"
    text = re.sub(r"suites:\n(  .*\n)+", SUITES, config.read_text())
    text = text.replace("group: groupA, type: automatic, priority: 1,",
                        "group: groupA, type: automatic, priority: 1, baseline: true,")
    config.write_text(text)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp / "report"
    assert cli.main(["report", str(config), "--out", str(out)]) == 0
    return tmp, config, out


def test_one_leaderboard_per_suite_as_tabs(trec8):
    _, _, out = trec8
    html = (out / "index.html").read_text()
    page = Boards.of(html)
    screen = [t for t in page.tables if t["kind"] == "sortable board"]
    printed = [t for t in page.tables if t["kind"] == "board-print"]
    assert [t["caption"].split("'")[1] for t in screen] == ["core", "incomplete", "residual"]
    assert screen[0]["caption"] == "Suite 'core': 7 measures, ranked by AP"
    assert "ranked by unj@10" in screen[2]["caption"] or "ranked by unj_10" in \
        screen[2]["caption"]
    for t in screen:
        assert tuple(t["head"][:6]) == SCREEN_COLUMNS and len(t["rows"]) == 129
    # the tabs: one per suite, each controlling its panel, the first selected
    assert [t["aria-controls"] for t in page.tabs] == [p["id"] for p in page.panels]
    assert [p["aria-labelledby"] for p in page.panels] == [t["id"] for t in page.tabs]
    assert [t["aria-selected"] for t in page.tabs] == ["true", "false", "false"]
    assert "tabindex" not in page.tabs[0] and page.tabs[1]["tabindex"] == "-1"
    # print: every suite, every screen column, the intervals, no "click"
    suites = {t["caption"].split("'")[1] for t in printed}
    assert suites == {"core", "incomplete", "residual"}
    for t in printed:
        assert tuple(t["head"][:6]) == SCREEN_COLUMNS
        assert "click" not in t["caption"].lower()
    core = [t for t in printed if "'core'" in t["caption"]]
    assert [m for t in core for m in t["head"][6:]] == screen[0]["head"][6:]
    assert re.search(r"0\.\d{4}( [▲▼])? ?\[0\.\d{4}, 0\.\d{4}\]", core[0]["rows"][0][6])
    # lower is better: the residual suite ranks the smallest first, the heading says so
    residual = screen[2]
    assert residual["better"][6:] == ["lower", "lower"]
    values = [float(r[6].split()[0].split("[")[0]) for r in residual["rows"]]
    assert values == sorted(values)
    assert screen[0]["better"][6:] == ["higher"] * 7 and screen[0]["better"][0] == "lower"
    # the caption outside the tables says what print shows; "click" only on screen
    explain = html.split('<section id="leaderboard">')[1].split("</p>")[0]
    assert "one\ntable per suite" in explain or "one table per suite" in " ".join(
        explain.split())
    assert re.search(r'<span class="screen-only">[^<]*Click a column heading', explain)


def test_every_suite_in_every_export(trec8, capsys):
    _, config, _ = trec8

    def export(fmt, *more):
        capsys.readouterr()
        assert cli.main(["report", str(config), "--format", fmt, *more]) == 0
        return capsys.readouterr().out

    records = list(csv.DictReader(io.StringIO(export("csv"))))
    assert [r["suite"] for r in records] == ["core"] * 129 + ["incomplete"] * 129 + \
        ["residual"] * 129
    incomplete = [r for r in records if r["suite"] == "incomplete"]
    assert all(r["judged@10"] and r["Bpref(ten)"] and r["AP"] == "" for r in incomplete)
    data = json.loads(export("json"))
    assert [s["suite"] for s in data["suites"]] == ["core", "incomplete", "residual"]
    assert data["suites"][1]["measures"] == ["judged@10", "AP(condensed)", "Bpref(ten)"]
    assert data["suites"][2]["lower_is_better"] == data["suites"][2]["measures"]
    assert {s["suite"] for s in data["systems"]} == {"core", "incomplete", "residual"}
    assert data["systems"][0]["pooled"] in ("yes", "no")
    ends = [(row[key], row[key.replace(" ci low", " ci high")]) for row in data["systems"]
            for key in row if key.endswith(" ci low") and row[key] not in ("", None)]
    assert len(ends) > 129 * 5  # every measure of these suites is bounded by 0 and 1
    assert all(0 <= low <= high <= 1 for low, high in ends)  # no interval leaves [0, 1]
    markdown = export("markdown")
    latex = export("latex")
    for suite, first in (("core", "AP"), ("incomplete", "judged@10")):
        assert f"**Suite '{suite}' on qrels 'official' (50 topics), ranked by {first}**" in \
            markdown
        assert f"% Suite '{suite}' on qrels 'official' (50 topics), ranked by {first}" in latex
    assert markdown.count("| rank | system | group |") == 3
    assert latex.count(r"\begin{tabular}") == 3 and "Bpref(ten)" in latex


def _tiny(tmp_path, report: str, status: int = 0) -> Path:
    path = make_campaign(tmp_path, systems=3, extra_qrels=False, suites="core: [AP, P@10]")
    path.write_text(path.read_text().replace("  core: [AP, P@10]\n",
                                             "  core: [AP, P@10]\n  other: [RR, Rprec]\n")
                    + report)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == status
    return path


def test_leaderboard_suites_chooses(tmp_path, capsys):
    path = _tiny(tmp_path, "report:\n  leaderboard_suites: [other]\n")
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    screen = [t for t in Boards.of((out / "index.html").read_text()).tables
              if t["kind"] == "sortable board"]
    assert [t["caption"] for t in screen] == ["Suite 'other': 2 measures, ranked by RR"]
    assert 'role="tablist"' not in (out / "index.html").read_text()  # one suite: no tabs
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "csv"]) == 0
    assert {r["suite"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))} == \
        {"other"}


def test_an_unknown_leaderboard_suite_is_a_message(tmp_path, capsys):
    message = "c.yaml:10: report.leaderboard_suites[1]: unknown suite 'othre' (did you mean " \
        "other?) (the config's suites: core, other)"
    path = _tiny(tmp_path, "report:\n  leaderboard_suites: [core, othre]\n", status=1)
    assert message in capsys.readouterr().err  # irbench run scores, and says it
    assert cli.main(["report", str(path), "--out", str(tmp_path / "rep")]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "rep" / "index.html").exists()


PROBE = """
<script>
// What a reader does, done on load; the outcome written into the DOM for the test to read.
window.addEventListener("load", function () {
  var out = [], tabs = document.querySelectorAll("[role=tab]");
  var panel = function (i) { return document.getElementById(tabs[i].getAttribute("aria-controls")); };
  out.push("list=" + !document.querySelector("[role=tablist]").hidden);
  out.push("start=" + [panel(0).hidden, panel(1).hidden].join("/"));
  tabs[0].focus();
  tabs[0].dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
  out.push("right=" + [document.activeElement === tabs[1], panel(0).hidden, panel(1).hidden,
                       tabs[1].getAttribute("aria-selected")].join("/"));
  tabs[0].click();
  var table = panel(0).querySelector("table"), th = table.tHead.rows[0].cells;
  var ap = th[6]; ap.click(); ap.click(); ap.click();  // best first, worst first, best first
  var col = function (k) { return Array.prototype.map.call(table.tBodies[0].rows,
      function (r) { return parseFloat(r.cells[k].dataset.sort); }); };
  var v = col(6), sorted = v.slice().sort(function (a, b) { return b - a; });
  out.push("ap=" + (v.join() === sorted.join()) + "/" + ap.getAttribute("aria-sort"));
  var low = panel(2).querySelector("table");
  low.tHead.rows[0].cells[6].dispatchEvent(new KeyboardEvent("keydown", {key: "Enter"}));
  var w = Array.prototype.map.call(low.tBodies[0].rows,
      function (r) { return parseFloat(r.cells[6].dataset.sort); });
  out.push("low=" + (w.join() === w.slice().sort(function (a, b) { return a - b; }).join()));
  var nav = document.querySelector("nav.toc"), h2 = document.querySelector("#significance h2");
  document.getElementById("significance").scrollIntoView();
  out.push("toc=" + Math.round(nav.getBoundingClientRect().bottom) + "/" +
           Math.round(h2.getBoundingClientRect().top) + "/" + getComputedStyle(nav).position);
  document.body.setAttribute("data-probe", out.join(";"));
});
</script>
"""


@browser
@pytest.mark.timeout(600)
def test_tabs_sorting_and_the_sticky_contents_in_chromium(trec8):
    tmp, _, out = trec8
    probe = out / "probe.html"
    probe.write_text((out / "index.html").read_text().replace("</body>", PROBE + "</body>"))
    dom = chromium(tmp, "--window-size=1366,900", "--virtual-time-budget=5000",
                   "--dump-dom", probe.as_uri()).stdout
    found = dict(p.split("=", 1) for p in re.search(r'data-probe="([^"]*)"', dom)
                 .group(1).split(";"))
    assert found["list"] == "true"  # the script shows the tabs ...
    assert found["start"] == "false/true"  # ... and the first suite's table alone
    assert found["right"] == "true/true/false/true"  # arrow key: the next tab, its table
    assert found["ap"] == "true/descending"  # a measure sorts best first
    assert found["low"] == "true"  # lower is better: the smallest first
    bottom, top, position = found["toc"].split("/")
    assert position == "sticky" and int(top) >= int(bottom), found["toc"]
    shots = os.environ.get("IRBENCH_SHOTS")
    for width in (1366, 1920):
        shot = out / f"suites-{width}.png"
        chromium(tmp, f"--window-size={width},1100", "--virtual-time-budget=5000",
                 f"--screenshot={shot}", (out / "index.html").as_uri())
        assert shot.stat().st_size > 10_000
        if shots:
            shutil.copy(shot, Path(shots) / f"leaderboard-suites-{width}.png")


def _printed(tmp: Path, html: Path) -> list[str]:
    pdf = html.with_suffix(".pdf")
    chromium(tmp, "--no-pdf-header-footer", "--virtual-time-budget=5000",
             f"--print-to-pdf={pdf}", html.as_uri())
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    return text.split("\f")


@browser
@pytest.mark.timeout(600)
@pytest.mark.parametrize("which", ["demo", "trec8-size"])
def test_the_printed_leaderboard_is_the_screen_one(which, trec8, tmp_path):
    if which == "demo":
        config = copy_demo(tmp_path)
        assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
        out = tmp_path / "report"
        assert cli.main(["report", str(config), "--out", str(out)]) == 0
        tmp = tmp_path
    else:
        tmp, _, out = trec8
    html = (out / "index.html").read_text()
    pages = _printed(tmp, out / "index.html")
    text = "\f".join(pages)
    board = text.split("1. Leaderboard", 1)[1].split("2. By run type", 1)[0]
    assert "click" not in board.lower()
    screen = [t for t in Boards.of(html).tables if t["kind"] == "sortable board"]
    assert len(screen) == 3
    for t in screen:
        suite = t["caption"].split("'")[1]
        assert f"Suite '{suite}'" in board, suite
        for heading in t["head"]:  # every screen column of every suite, printed
            assert heading in board, (suite, heading)
        first = t["rows"][0]
        assert first[1] in board
        ci = re.search(r"\[\d\.\d{4}, \d\.\d{4}\]", first[6])
        assert ci is None or ci.group(0) in board  # the intervals the caption mentions
    # the system and group headings stand over their values (left-aligned in the same place)
    lines = board.splitlines()
    head = next(line for line in lines if re.match(r"\s*rank\s+system\s+group", line))
    row = next(line for line in lines if re.match(r"\s*1\s+\S", line))
    name, group = screen[0]["rows"][0][1].split(" (")[0], screen[0]["rows"][0][2]
    assert abs(head.index("system") - row.index(name)) <= 2, (head, row)
    at = re.search(rf"(?<=\s){re.escape(group)}(?=\s)", row).start()  # the cell, not the name
    assert abs(head.index("group") - at) <= 2, (head, row)
    if which == "trec8-size":  # each system's groups: a page at most, not six
        start = next(k for k, p in enumerate(pages) if "Each system's groups" in p)
        last = Boards.of(html).tables[0]["rows"][-1][1]  # the last-ranked system
        end = next(k for k, p in enumerate(pages) if k >= start and f"{last}:" in p)
        assert end - start <= 1, (start, end)
