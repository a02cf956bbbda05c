"""The report's section 4b Reproductions (issue 42): its numbers are irbench repro's JSON,
hostile names are escaped, and an unreadable run file leaves a reason, not a crash."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repro_runs import make_runs

HOSTILE = "<script>alert(1)</script>\u202e"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("report_repro")
    make_runs(root)
    names = {"base": "base" + HOSTILE, "rep": "rep" + HOSTILE}
    (root / "c.yaml").write_text(json.dumps({
        "collection": {"qrels": "qrels.txt"},
        "systems": [{"name": names["base"], "run": "baseline.run"},
                    {"name": "adv", "run": "advanced.run"},
                    {"name": names["rep"], "run": "reproduced_baseline.run"},
                    {"name": "adv-rep", "run": "reproduced_advanced.run"}],
        "suites": {"main": ["AP", "P@10"]},
        "reproductions": [{"name": "again <b>", "measures": ["AP", "KTU@10"],
                           "baseline": {"original": names["base"], "reproduced": names["rep"]},
                           "advanced": {"original": "adv", "reproduced": "adv-rep"}}]}))
    for argv in (("run", "c.yaml"), ("report", "c.yaml", "--out", "out")):
        done = subprocess.run([sys.executable, "-m", "irbench", *argv], cwd=root,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return root


@pytest.mark.timeout(600)
def test_section_numbers_are_the_cli_json(campaign):
    page = (campaign / "out" / "index.html").read_text()
    section = page[page.index('<section id="reproductions">'):]
    section = section[:section.index("</section>")]
    shown = re.findall(r'<tr><td class="text">([^<]*)</td><td class="text">(\w+)</td>'
                       r'<td data-value="([^"]*)">', section)
    done = subprocess.run([sys.executable, "-m", "irbench", "repro", "c.yaml", "--format",
                           "json"], cwd=campaign, capture_output=True, text=True, timeout=300)
    values = json.loads(done.stdout)["reproductions"][0]["values"]
    assert len(shown) == len(values) > 5
    for (measure, run, exact), v in zip(shown, values):
        assert (html.unescape(measure), run) == (v["measure"], v["run"])
        assert float(exact) == v["value"]
    assert section.count("<svg") == 2  # RMSE(AP) of the baseline and of the advanced run


@pytest.mark.timeout(600)
def test_hostile_names_are_escaped(campaign):
    page = (campaign / "out" / "index.html").read_text()
    section = page[page.index('<section id="reproductions">'):]
    section = section[:section.index("</section>")]
    assert "<script>" not in section and "again <b>" not in section
    assert "base&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "again &lt;b&gt;" in section


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.timeout(300)
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_the_section_in_chromium(campaign, tmp_path):
    """Headless Chromium renders the report with the section and no console message, the
    hostile names as text; screenshots of the section at 1366 and 1920 pixels (to
    $IRBENCH_SHOTS when set)."""
    target = (campaign / "out" / "index.html").as_uri()
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", target],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    dom = proc.stdout
    assert 'id="reproductions"' in dom and "<script>alert" not in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


@pytest.mark.timeout(300)
def test_screenshots_of_the_section(campaign, tmp_path, browser):
    """The section at 1366 and 1920 pixels wide in Playwright's Chromium: no horizontal
    overflow, the table and two charts shown; screenshots to $IRBENCH_SHOTS when set."""
    page = browser.new_page()
    try:
        for width in (1366, 1920):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto((campaign / "out" / "index.html").as_uri())
            section = page.locator("#reproductions")
            assert section.locator("svg").count() == 2
            assert section.locator("table tr").count() > 5
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            # a name's bidi override (U+202E) stays inside the name: each is a <bdi>
            names = section.locator("ul.repro-pairs bdi").all_inner_texts()
            assert names[0].startswith("base<script>") and "reproduced by" not in names[0]
            shot = tmp_path / f"repro-{width}.png"
            section.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            if os.environ.get("IRBENCH_SHOTS"):
                shutil.copy(shot, Path(os.environ["IRBENCH_SHOTS"]) / shot.name)
    finally:
        page.close()
