"""The report's section 4b Reproductions (issue 42): its numbers are irbench repro's JSON,
hostile names are escaped, and an unreadable run file leaves a reason, not a crash."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

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
