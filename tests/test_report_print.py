"""The published appendix in a real headless Chromium, on the demo campaign and on a simulated
campaign of TREC-8's size (129 runs of 43 groups, 50 topics, a 12-measure leaderboard):

- screenshots at 1366 and 1920 px; at 1920 the whole leaderboard shows without scrolling, at
  1366 it scrolls in its own box with the system column sticky;
- every run page is one click from index.html, and links back;
- printed (A4 landscape): no figure split over two pages (each figure carries a marker at its
  top and one at its bottom, which must land on the same page), the leaderboard's measure names
  all in the text, collapsed sections printed, no page holding only a heading; the pages are
  rendered to PNG (pdftoppm) for a person to look at;
- ``--participants-pdf`` prints every run page.

Chromium runs with the flags this machine's closed network needs; nothing here sleeps.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from campaigns import copy_demo

from irbench import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian "
                                "package 'chromium'; .ci/run installs it)")
ROOT = Path(__file__).resolve().parent.parent
TWELVE = ("[AP, GMAP, Bpref, infAP, Rprec, RR, P@10, P@20, nDCG, nDCG@10, R@100, "
          "AP(condensed)]")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-quic",
         "--hide-scrollbars"]


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module", params=["demo", "trec8-size"])
def campaign(request, tmp_path_factory):
    """(folder, config, report folder) of a scored campaign with its report and run pages."""
    tmp = tmp_path_factory.mktemp(request.param)
    if request.param == "demo":
        config = copy_demo(tmp)
    else:
        assert cli.main(["simulate", str(tmp / "sim"), "--groups", "43", "--runs-per-group",
                         "3", "--topics", "50", "--depth", "100", "--pool-depth", "20"]) == 0
        config = tmp / "sim" / "campaign.yaml"
        text = config.read_text()
        text = re.sub(r"suites:\n(  .*\n)+", f"suites:\n  core: {TWELVE}\n", text)
        text = text.replace("report: {pool_depth: 20}",
                            "report: {pool_depth: 20, reduction_design: buckley-voorhees, "
                            "title: 'A TREC-8-size campaign'}")
        config.write_text(text)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants"]) == 0
    return tmp, config, out


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if attrs.get("id"):
            self.ids.add(attrs["id"])


def links(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


PROBE = """
<script>
// What the screen shows of the leaderboard, written into the DOM for the test to read.
window.addEventListener("load", function () {
  var box = document.querySelector("#leaderboard .scroll");
  var cell = document.querySelector("table.board tbody td:nth-child(2)");
  document.body.setAttribute("data-board", [box.scrollWidth, box.clientWidth,
    getComputedStyle(cell).position, document.documentElement.scrollWidth,
    document.documentElement.clientWidth].join(","));
});
</script>
"""


@pytest.mark.parametrize("width", [1366, 1920])
def test_screens(campaign, width):
    tmp, _, out = campaign
    shot = out / f"screen-{width}.png"
    chromium(tmp, f"--window-size={width},1200", f"--screenshot={shot}",
             (out / "index.html").as_uri())
    assert png_size(shot) == (width, 1200)
    probe = out / f"probe-{width}.html"
    probe.write_text((out / "index.html").read_text().replace("</body>", PROBE + "</body>"))
    dom = chromium(tmp, f"--window-size={width},1200", "--virtual-time-budget=5000",
                   "--dump-dom", probe.as_uri()).stdout
    scroll, client, position, page_scroll, page = re.search(
        r'data-board="(\d+),(\d+),(\w+),(\d+),(\d+)"', dom).groups()
    assert int(page_scroll) <= int(page)  # the page itself never scrolls sideways
    assert position == "sticky"  # the system column stays in view when the table scrolls
    if width == 1920:  # every column of the leaderboard in view
        assert int(scroll) <= int(client), (scroll, client)


def test_every_run_page_is_one_click_away(campaign):
    _, _, out = campaign
    index = links(out / "index.html")
    pages = sorted(p.name for p in (out / "systems").glob("*.html")
                   if p.name != "index.html" and not p.name.startswith("diff-"))
    assert pages and {f"systems/{p}" for p in pages} <= set(index.hrefs)  # diff pages: from
    assert "systems/index.html" in index.hrefs
    toc = [h for h in index.hrefs if h.startswith("#")]
    assert toc and all(h[1:] in index.ids for h in toc)  # the table of contents resolves
    first = links(out / "systems" / pages[0])  # run pages (and they link their diffs)
    assert "../index.html" in first.hrefs and "index.html" in first.hrefs
    assert all(h.startswith(("../index.html", "index.html", "#")) or h.endswith(".html")
               for h in first.hrefs)
    for href in first.hrefs:
        target = href.split("#")[0]
        if target:
            assert (out / "systems" / target).resolve().is_file(), href


MARKERS = """
<script>
// Marks the top and the bottom of every figure with a unique text, before printing.
document.querySelectorAll("figure").forEach(function (f, i) {
  var top = document.createElement("div"), bottom = document.createElement("div");
  top.textContent = "FIGTOP" + i + "X"; bottom.textContent = "FIGEND" + i + "X";
  top.style.fontSize = bottom.style.fontSize = "6px";
  f.insertBefore(top, f.firstChild); f.appendChild(bottom);
});
</script>
"""


def test_print_keeps_figures_whole_and_every_measure(campaign):
    pypdf = pytest.importorskip("pypdf")
    tmp, _, out = campaign
    html = (out / "index.html").read_text()
    probe = out / "print-probe.html"
    probe.write_text(html.replace("</body>", MARKERS + "</body>"))
    pdf = out / "report.pdf"
    chromium(tmp, "--no-pdf-header-footer", "--virtual-time-budget=5000",
             f"--print-to-pdf={pdf}", probe.as_uri())
    reader = pypdf.PdfReader(str(pdf))
    pages = [page.extract_text() or "" for page in reader.pages]
    box = reader.pages[0].mediabox
    assert float(box.width) > float(box.height)  # landscape
    figures = html.count("<figure")
    assert figures >= 3
    for i in range(figures):
        top = [k for k, text in enumerate(pages) if f"FIGTOP{i}X" in text]
        end = [k for k, text in enumerate(pages) if f"FIGEND{i}X" in text]
        assert len(top) == 1 and top == end, (i, top, end)  # one figure, one page
    text = "\n".join(pages)
    board = re.search(r'<table class="sortable board">.*?</thead>', html, re.S).group(0)
    measures = re.findall(r"<th>([^<]+)</th>", board.split("<th class=\"text\">pooled</th>")[1])
    assert len(measures) >= 6
    for m in measures:
        assert m in text, m
    assert "1. Leaderboard" in pages[0]  # page 1 holds more than the title
    first = re.search(r'<tbody>\s*<tr[^>]*><td>1</td><td class="text"><bdi><a [^>]*>([^<]+)</a>',
                      board + html.split(board, 1)[1]).group(1)
    assert first in pages[0]
    for k, page in enumerate(pages):  # no page holding only a heading
        lines = [line for line in page.splitlines() if line.strip()]
        assert len(lines) > 2, (k, lines)
    # collapsed sections print: the inputs' sha256 table of the provenance is in a <details>
    assert "sha256" in text and re.search(r"\b[0-9a-f]{64}\b", text.replace("\n", ""))
    if shutil.which("pdftoppm"):  # every page rendered, for a person to look at
        subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(out / "page")],
                       check=True, timeout=300)
        assert len(list(out.glob("page-*.png"))) == len(pages)


def test_run_pages_print_to_pdf(tmp_path):
    """--participants-pdf: one PDF per run page, holding the run's name and the labelled
    recall points."""
    pypdf = pytest.importorskip("pypdf")
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants-pdf"]) == 0
    html = sorted(p for p in (out / "systems").glob("*.html")
                  if p.name != "index.html" and not p.name.startswith("diff-"))  # run pages
    pdfs = sorted((out / "systems").glob("*.pdf"))
    assert [p.stem for p in pdfs] == [p.stem for p in html]
    text = "".join(page.extract_text() for page in pypdf.PdfReader(str(pdfs[0])).pages)
    assert html[0].stem.split("-")[0] in text
    assert "recall precision" in text and "interpolated precision" in text
    assert "better than" in text and "not distinguishable from" in text


def test_participants_pdf_without_chromium_is_a_message(tmp_path, monkeypatch, capsys):
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    monkeypatch.setenv("IRBENCH_CHROMIUM", str(tmp_path / "no-such-browser"))
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants-pdf"]) == 1
    err = capsys.readouterr().err
    assert "headless Chromium" in err and "Traceback" not in err
    assert (out / "systems" / "index.html").is_file()  # the HTML pages were written
