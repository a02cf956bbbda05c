"""The overview paper's tables and the report's text: rankings per run type and best run per
group (page and exports), the title, findings computed from the stored numbers, labels that
never collide."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from campaigns import copy_demo, make_campaign
from test_report import Page

from irbench import cli

SYSTEMS = """systems:
  - {name: a1, run: ../runs/r00.txt, group: A, type: automatic}
  - {name: a2, run: ../runs/r01.txt, group: A, type: manual}
  - {name: b1, run: ../runs/r02.txt, group: B, type: automatic, official: false}
  - {name: b2, run: ../runs/r03.txt, group: B, type: manual}
  - {name: 'c<1>', run: ../runs/r04.txt, group: 'C&co', type: automatic}
"""


@pytest.fixture
def campaign(tmp_path):
    path = make_campaign(tmp_path, systems=5, topics=8, extra_qrels=False)
    text = path.read_text().replace("systems:\n  - glob: ../runs/r*.txt\n", SYSTEMS)
    path.write_text(text + "report: {title: 'The <b>Track</b> 2026', rank_by: [type, official]}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    return path


def means(path, capsys) -> dict[str, float]:
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    return {s["system"]: s["AP"] for s in data["systems"]}


def test_rankings_per_type_and_best_per_group(campaign, tmp_path, capsys):
    ap = means(campaign, capsys)
    out = tmp_path / "rep"
    assert cli.main(["report", str(campaign), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    page = Page.of(html)
    assert "<h1>The &lt;b&gt;Track&lt;/b&gt; 2026</h1>" in html  # report.title, escaped
    assert "overview" in page.sections
    tables = [t for t in page.tables if t and t[0][:2] == ["rank", "system"]
              and t[0][-1] == "overall"]
    assert len(tables) == 4  # type: automatic, manual; official: no, yes
    by_value = {}
    for table in tables:
        names = [r[1] for r in table[1:]]
        values = [float(r[3]) for r in table[1:]]
        assert values == sorted(values, reverse=True)
        assert [int(r[0]) for r in table[1:]] == list(range(1, len(names) + 1))
        by_value[frozenset(names)] = table
    assert frozenset({"a1", "b1", "c<1>"}) in by_value  # automatic
    assert frozenset({"a2", "b2"}) in by_value  # manual
    assert frozenset({"b1"}) in by_value  # official: no
    best = next(t for t in page.tables if t and t[0][:3] == ["rank", "group", "best run"])
    groups = {r[1]: r[2] for r in best[1:]}
    assert set(groups) == {"A", "B", "C&co"}
    for group, members in (("A", ("a1", "a2")), ("B", ("b1", "b2"))):
        assert groups[group] == max(members, key=lambda n: (ap[n], n == members[0]))
    # the same tables as CSV, LaTeX, Markdown and JSON
    capsys.readouterr()
    assert cli.main(["report", str(campaign), "--format", "csv", "--table", "groups"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["group"]: r["system"] for r in rows} == groups
    assert cli.main(["report", str(campaign), "--format", "csv", "--table", "rankings"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["field"], r["value"]) for r in rows} == {
        ("type", "automatic"), ("type", "manual"), ("official", "yes"), ("official", "no")}
    assert cli.main(["report", str(campaign), "--format", "latex", "--table", "groups"]) == 0
    latex = capsys.readouterr().out
    assert r"C\&co" in latex and r"\toprule" in latex  # the group's '&' escaped
    assert "C&co" not in latex.replace(r"C\&co", "")  # never raw, a column separator
    assert cli.main(["report", str(campaign), "--format", "json", "--table", "rankings"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 5 + 5


def test_rankings_need_two_values(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=3, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "csv", "--table", "groups"]) == 1
    assert "fewer than two groups" in capsys.readouterr().err
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    assert 'id="overview"' not in (out / "index.html").read_text()


def reduction(tau, rmse, tau_map=None, measures=("AP", "Bpref", "infAP"),
              design="buckley-voorhees"):
    from irbench.analyses.reduction import Reduction

    tau = np.array(tau, dtype=float)
    return Reduction(design=design, measures=tuple(measures), fractions=(1.0, 0.5, 0.1),
                     seeds=(0, 1), tau=tau,
                     tau_map=np.array(tau_map if tau_map is not None else tau, dtype=float),
                     rmse=np.array(rmse, dtype=float))


def test_reduction_findings_follow_the_numbers():
    from irbench.report.incomplete import reduction_findings

    # infAP equal to AP at every fraction: said, with the reason, and left out of the ranking
    found = reduction_findings(reduction([[1, .8, .5], [1, .9, .8], [1, .8, .5]],
                                         [[0, .1, .2], [0, .05, .1], [0, .1, .2]]))
    assert found[0].startswith("infAP gives the same values as AP at every fraction")
    assert "by construction" in found[0]
    assert "Bpref keeps its full-judgment ranking best (tau 0.800) and AP least (tau 0.500)" \
        in found[1]
    # the other way round, the text turns with the numbers
    found = reduction_findings(reduction([[1, .9, .85], [1, .7, .4], [1, .6, .3]],
                                         [[0, .1, .2], [0, .2, .3], [0, .3, .4]],
                                         tau_map=[[1, .9, .85], [.9, .6, .3], [.9, .7, .6]]))
    assert not any("same values" in f for f in found)
    assert "AP keeps its full-judgment ranking best (tau 0.850) and infAP least" in found[0]
    assert "Closest to the official ranking" in found[1] and "AP (tau 0.850)" in found[1]


def test_the_reduction_section_says_infap_equals_ap_under_removal(tmp_path):
    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    path.write_text(path.read_text() + "report: {reduction_design: buckley-voorhees}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "infAP gives the same values as AP at every fraction" in html
    assert "condensed measures of Sakai 2007) are the safer" not in html  # the old sentence
    assert "keeps its full-judgment ranking best" in html or \
        "keep their full-judgment ranking best" in html


def test_map_gmap_labels_never_collide():
    pytest.importorskip("matplotlib")
    from irbench.report import figures

    rng = np.random.default_rng(3)
    n = 129
    base = np.sort(rng.uniform(0.05, 0.55, n))
    gmap = base * 0.95 + rng.normal(0, 0.01, n)  # dense along the diagonal, as real runs are
    names = [f"run-with-a-long-name-{i:03d}" for i in range(n)]
    figure = figures.map_gmap(names, base, gmap)
    boxes = figures.label_boxes(figure)
    assert boxes  # some labels are drawn
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)
    assert "Each dot is a run" in figure.svg and "a system" not in figure.svg


def test_review_fixes_on_the_demo(tmp_path, capsys):
    """Run pages list every suite's measures; inlined charts share no id; a difference that
    prints as zero has no sign; pool bias rebuilds the report's pool; names are suggested
    whatever their case; a string of systems is refused."""
    import re
    from collections import Counter

    from irbench.errors import NotStoredError
    from irbench.report.numbers import signed as _signed

    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(config), "--out", str(out), "--participants"]) == 0
    run_page = Page.of((out / "systems" / "groupA-1.html").read_text())
    listed = [r[0] for r in run_page.tables[1][1:]]
    assert "ERR@20" in listed and "AP(condensed)" in listed and "AP" in listed  # every suite
    html = (out / "index.html").read_text()
    ids = Counter(re.findall(r'\bid="([^"]+)"', html))
    assert [i for i, n in ids.items() if n > 1] == []
    for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', html):
        assert ref in ids, ref  # every reference still resolves
    assert _signed(-0.00001) == "0.0000" and _signed(0.25) == "+0.2500"
    assert "-0.0000" not in html and "+0.0000" not in html
    # the overview's sentence on a campaign without run types
    assert "within each the best" not in html
    # pool bias: the depth and runs per group of the config's report section by default
    capsys.readouterr()
    assert cli.main(["pool", "bias", str(config), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pool"]["k"] == 20 and data["coverage"]["judged"] == data["coverage"]["covered"]
    # a name suggested whatever its case
    assert cli.main(["scores", str(config), "--system", "groupa-1"]) == 1
    assert "did you mean groupA-1" in capsys.readouterr().err
    from irbench import open_store

    with pytest.raises(NotStoredError, match="not the string 'groupA-1'"):
        open_store(config).per_query(systems="groupA-1")
