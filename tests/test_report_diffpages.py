"""Diff pages (issue 42): ``irbench diff ... --format html`` and, in ``irbench report
--participants``, each run page's diffs against the baseline and against the run ranked just
above it (irbench.report.diffpages).

On the bundled demo (a baseline, documents, topics) with a run named by hostile text added:
the pages' numbers are those ``irbench diff --format json`` prints; every link from a run page
opens an existing diff page that links back to both run pages; the baseline has no self-diff
and the first run no diff 'above'; without a baseline no baseline link; run names, docnos,
titles and snippets are escaped (no element of theirs in Chromium's DOM, highlights included);
the page renders offline in Chromium with no console error and no sideways scrolling at 1366
and 1920 px (screenshots printed, copied to $IRBENCH_SHOTS when set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import make_dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from campaigns import copy_demo
from desk_server import chromium, needs_chromium

from irbench.documents import DocumentsSpec, open_documents
from irbench.report.diffpages import DIFF_TYPES, DiffPage, diff_page, render_page
from irbench.report.fields import names_outside, undocumented
from irbench.report.render import environment
from irbench.stats.diffs import diff
from irbench.trec import read_qrels

HOSTILE = "<img src=x onerror=alert(1)>"
IRBENCH = [sys.executable, "-m", "irbench"]


def irbench(*args, cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run([*IRBENCH, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


class Page(HTMLParser):
    """A diff page read back: the topics table's rows (cell texts), every href, and the
    classes of links."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.hrefs: list[tuple[str, str, str]] = []  # (href, class, text)
        self._table = self._cell = False
        self._link: list | None = None
        self.feed(html)
        self.rows = [r for r in self.rows if r]  # the header row has th cells only

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("class") == "topics"
        elif tag == "tr" and self._table:
            self.rows.append([])
        elif tag == "td" and self._table:
            self._cell = True
            self.rows[-1].append("")
        elif tag == "a":
            self._link = [a.get("href", ""), a.get("class") or "", ""]

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = False
        elif tag == "td":
            self._cell = False
        elif tag == "a" and self._link is not None:
            self.hrefs.append(tuple(self._link))
            self._link = None

    def handle_data(self, data):
        if self._cell:
            self.rows[-1][-1] += data
        if self._link is not None:
            self._link[2] += data


def fmt(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def signed(value) -> str:
    if value is None:
        return "-"
    text = f"{value:+.4f}"
    return "0.0000" if text in ("+0.0000", "-0.0000") else text


def json_rows(value) -> list[list[str]]:
    return [[t["topic"], fmt(t["tau_ap"]), fmt(t["rbo"]), fmt(t["jaccard"]),
             fmt(t["measure_a"]), fmt(t["measure_b"]), signed(t["delta"]),
             str(t["documents_a"]), str(t["documents_b"]), str(t["shared"])]
            for t in value["topics"]]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo with a run named by hostile text (a copy of groupB-2's file), scored, and its
    report with run pages: (config, systems folder)."""
    root = tmp_path_factory.mktemp("diffpages")
    config = copy_demo(root)
    runs = root / "runs" / "demo" / "runs"
    shutil.copy(runs / "groupB-2.txt", runs / "hostile.txt")
    text = config.read_text().replace(
        "  - {glob: ../runs/demo/runs/groupD-*.txt, group: groupD}\n",
        "  - {glob: ../runs/demo/runs/groupD-*.txt, group: groupD}\n"
        f"  - {{name: '{HOSTILE}', run: ../runs/demo/runs/hostile.txt, group: groupE}}\n")
    config.write_text(text)
    irbench("run", "--quiet", "--workers", "1", config)
    irbench("report", config, "--participants", "--out", root / "rep")
    return config, root / "rep" / "systems"


def run_pages(systems: Path) -> list[Path]:
    return [p for p in sorted(systems.glob("*.html"))
            if p.name != "index.html" and not p.name.startswith("diff-")]


def test_every_diff_page_field_is_documented_and_read_by_its_template():
    assert undocumented(DIFF_TYPES) == []
    context = make_dataclass("DiffContext", [("p", DiffPage)])
    assert names_outside(environment(), "diff.html", context) == []


@pytest.mark.timeout(300)
def test_run_pages_link_diff_pages_that_link_back(demo):
    config, systems = demo
    pages = run_pages(systems)
    assert len(pages) == 13
    seen_baseline = seen_first = 0
    for page in pages:
        links = [(h, t) for h, c, t in Page(page.read_text()).hrefs if c == "diff"]
        labels = [t for _, t in links]
        baseline = [t for t in labels if "against the baseline" in t]
        above = [t for t in labels if "ranked just above)" in t]
        if page.name == "groupA-1.html":  # the baseline: no diff against itself
            assert baseline == []
            seen_baseline += 1
        else:
            assert len(baseline) == 1 and baseline[0].startswith(
                "Diff against the baseline groupA-1")
        if 'rel="prev"' not in page.read_text():  # ranked first
            assert above == []
            seen_first += 1
        else:
            assert len(above) == 1
        for href, _ in links:
            target = systems / href
            assert target.is_file() and target.parent == systems
            back = {h for h, c, _ in Page(target.read_text()).hrefs if c in ("run-a", "run-b")}
            assert page.name in back
            assert all((systems / h).is_file() for h in back) and len(back) == 2
    assert seen_baseline == 1 and seen_first == 1


@pytest.mark.timeout(300)
def test_the_report_s_numbers_are_irbench_diff_json_s(demo):
    config, systems = demo
    page = systems / "diff-groupB-1-vs-groupA-1.html"
    shown = Page(page.read_text()).rows
    value = json.loads(irbench("diff", config, "groupA-1", "groupB-1", "--measure", "AP",
                               "--format", "json", "--top", "1000").stdout)
    assert len(shown) == 25 and shown == json_rows(value)
    html = page.read_text()
    assert "<mark>" in html and "unjudged" in html and "absent from" in html
    assert "moved from" in html or "same rank" in html


@pytest.mark.timeout(300)
def test_the_cli_page_has_the_json_numbers(demo, tmp_path):
    config, _ = demo
    out = tmp_path / "d.html"
    irbench("diff", config, "groupA-2", "groupC-1", "--measure", "nDCG@10", "--by", "measure",
            "-k", "5", "--top", "3", "--format", "html", "--output", out)
    value = json.loads(irbench("diff", config, "groupA-2", "groupC-1", "--measure", "nDCG@10",
                               "--by", "measure", "-k", "5", "--top", "1000", "--format",
                               "json").stdout)
    html = out.read_text()
    assert Page(html).rows == json_rows(value)
    assert "<h1>groupC-1 against groupA-2</h1>" in html
    assert html.count('<section class="topic"') == 3  # --top: the lists of 3 topics
    assert "Jaccard@5" in html


@pytest.mark.timeout(300)
def test_no_baseline_no_baseline_link(demo, tmp_path):
    config, _ = demo
    plain = config.with_name("plain.yaml")
    plain.write_text(config.read_text().replace("    baseline: true\n", "")
                     .replace("name: demo", "name: plain", 1))
    irbench("run", "--quiet", "--workers", "1", plain)
    irbench("report", plain, "--participants", "--out", tmp_path / "rep")
    systems = tmp_path / "rep" / "systems"
    labels = [t for page in run_pages(systems)
              for _, c, t in Page(page.read_text()).hrefs if c == "diff"]
    assert len(labels) == 12 and all("ranked just above" in t for t in labels)
    written = list(systems.glob("diff-*.html"))
    assert len(written) == 12
    assert not [p for p in written if "against the baseline" in p.read_text()]


@pytest.mark.timeout(300)
def test_a_run_file_changed_since_irbench_run_gets_no_diff_pages(demo, tmp_path):
    """The diff pages read the run files: one that changed since the scores were stored would
    show rankings that disagree with the report's numbers, so its pages are left out, with a
    note saying why; the other runs' pages are written."""
    config, _ = demo
    copy = config.with_name("changed.yaml")
    runs = config.parent.parent / "runs" / "demo" / "runs"
    shutil.copy(runs / "groupC-1.txt", runs / "changed.txt")
    copy.write_text(config.read_text().replace("name: demo", "name: changed", 1).replace(
        "  - {glob: ../runs/demo/runs/groupD-*.txt, group: groupD}\n",
        "  - {glob: ../runs/demo/runs/groupD-*.txt, group: groupD}\n"
        "  - {name: changed, run: ../runs/demo/runs/changed.txt, group: groupF}\n"))
    irbench("run", "--quiet", "--workers", "1", copy)
    with open(runs / "changed.txt", "a") as fh:
        fh.write("401 Q0 SIM-99999999 999 -50 late\n")
    done = irbench("report", copy, "--participants", "--out", tmp_path / "rep")
    assert "run 'changed': no diff pages (its run file changed since 'irbench run'" in done.stderr
    written = [p.name for p in (tmp_path / "rep" / "systems").glob("diff-*.html")]
    assert written and not [n for n in written if "changed" in n]


def hostile_files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """qrels, runs A and B (B named by hostile text) and documents whose docnos, titles and
    texts are markup."""
    bad = ["<script>window.owned=1</script>", "<img/src=x/onerror=alert(2)>", "d&amp;3"]
    topic = "t<b>1</b>"
    (tmp_path / "q").write_text(f"{topic} 0 {bad[0]} 1\n{topic} 0 {bad[2]} 0\n")
    (tmp_path / "a").write_text("".join(f"{topic} Q0 {d} {i + 1} {9 - i} x\n"
                                        for i, d in enumerate(bad)))
    run_b = tmp_path / HOSTILE
    run_b.write_text("".join(f"{topic} Q0 {d} {i + 1} {9 - i} y\n"
                             for i, d in enumerate(reversed(bad[:2]))))
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"docid": d, "title": f"<i>{d}</i>",
                                        "text": f"about <script>alert(3)</script> img {d}"})
                            + "\n" for d in bad))
    return tmp_path / "q", tmp_path / "a", run_b, docs


def hostile_page(tmp_path: Path) -> Path:
    qrels, a, b, docs = hostile_files(tmp_path)
    result = diff(read_qrels(qrels), a, b)
    with open_documents(DocumentsSpec(paths=(str(docs),))) as documents:
        page = diff_page(result, documents=documents,
                         queries={"t<b>1</b>": "script img onerror alert"})
    out = tmp_path / "hostile.html"
    out.write_text(render_page(page), encoding="utf-8")
    return out


@pytest.mark.timeout(120)
def test_hostile_text_is_escaped_highlights_too(tmp_path):
    html = hostile_page(tmp_path).read_text()
    body = html.split("<body>", 1)[1]
    assert "<script" not in body and "<img" not in body and "<i>" not in body
    assert "<b>" not in body
    assert "&lt;<mark>script</mark>&gt;" in body  # a highlight inside escaped text
    assert "d&amp;amp;3" in body
    # the key above the lists, and the img docno in A's list and in B's
    assert body.count('<span class="unjudged">unjudged</span>') == 3


@pytest.mark.timeout(120)
def test_the_cli_page_of_files_escapes_names(tmp_path):
    qrels, a, b, docs = hostile_files(tmp_path)
    out = tmp_path / "o.html"
    irbench("diff", qrels, a, b, "--documents", docs, "--format", "html", "-o", out,
            cwd=tmp_path)
    body = out.read_text().split("<body>", 1)[1]
    assert "&lt;img src=x onerror=alert(1)&gt; against a" in body
    assert "<img" not in body and "<script" not in body


def _check_in_chromium(browser, page_file: Path, shots: Path, name: str) -> list[Path]:
    made = []
    for width in (1366, 1920):
        page = browser.new_context(viewport={"width": width, "height": 1400}).new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("img, script, iframe, i, b").count() == 0
        assert page.evaluate("window.owned === undefined")
        wide = page.evaluate("[document.documentElement.scrollWidth, "
                             "document.documentElement.clientWidth]")
        assert wide[0] <= wide[1], wide  # no sideways scrolling
        shot = shots / f"{name}-{width}.png"
        page.screenshot(path=str(shot))
        page.context.close()
        assert errors == [] and [u for u in requests if not u.startswith("file:")] == []
        assert shot.stat().st_size > 10_000
        made.append(shot)
    return made


@needs_chromium
@pytest.mark.timeout(300)
def test_pages_in_chromium_offline(demo, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
    _, systems = demo
    hostile = next(p for p in systems.glob("diff-*") if p.name.startswith("diff-_img"))
    made = []
    with chromium() as browser:
        made += _check_in_chromium(browser, systems / "diff-groupB-1-vs-groupA-1.html",
                                   tmp_path, "diff")
        made += _check_in_chromium(browser, hostile, tmp_path, "diff-hostile-run")
        made += _check_in_chromium(browser, hostile_page(tmp_path), tmp_path, "diff-hostile")
        run_page = browser.new_page()
        run_page.goto((systems / "groupB-1.html").as_uri())
        run_page.locator("nav a.diff").first.click()  # a run page's link opens its diff
        run_page.wait_for_load_state("load")
        assert re.search(r"diff-groupB-1-vs-.*\.html$", run_page.url)
        assert run_page.locator("h1").inner_text().startswith("groupB-1 against ")
    shots = os.environ.get("IRBENCH_SHOTS")
    for shot in made:
        if shots:
            shutil.copy(shot, Path(shots) / shot.name)
    print("screenshots:", *made, sep="\n  ")
