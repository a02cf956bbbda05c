"""Section 6e of the report (issue 40): ``irbench report CONFIG --judge-eval SET``, how far to
trust each judge, on a campaign in tmp_path (tests/data/answers_compare: a ranked run and four
answer runs; a second document qrels set made here by a "model" that favours one answer run's
references, named by hostile text; support labels by two judges and per run / shared; nugget
assignments by two judges).

The page is written by the command line in a subprocess, as a user runs it. Its tables hold
the numbers :func:`irbench.stats.evaluate_judges` records and ``irbench judge-eval --format
json`` prints (kappa unweighted and linear, alpha ordinal, the confusion matrix, Kendall's tau,
tau_AP, Spearman's rho, top-k overlaps, the self-preference check), formatted as the section
formats them (4 decimals); hostile set and run names are escaped; with no other set to
compare the section says so; an unknown set is a clear error naming the config's sets; the
page renders offline in Debian's Chromium (Playwright), a screenshot printed as
``screenshot: PATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import make_dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from desk_server import chromium, needs_chromium

from irbench.config import load_config
from irbench.report.contract import ReportContext
from irbench.report.fields import names_outside, undocumented
from irbench.report.judges import JUDGE_TYPES
from irbench.report.render import environment
from irbench.stats import evaluate_judges
from irbench.store import Store

DATA = Path(__file__).resolve().parent / "data" / "answers_compare"
EVIL_SET = "llm<script>alert('set')</script>\"&"
EVIL_RUN = "a4<img src=x onerror=alert(1)>&'"
DOC_MODEL = "acme/Judge-7B"
REFERENCES = {"official": (EVIL_SET,), "support": ("support_llm", "shared"),
              "nuggets": ("nuggets_llm",)}


def irbench(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irbench", *argv], capture_output=True,
                          text=True, timeout=300)


def _favour_a4(folder: Path) -> None:
    """judgments/qrels_llm.txt: the official qrels, but every document a4's answers cite is
    grade 2 and every other document 0."""
    cited: dict[str, set] = {}
    for line in (folder / "answers" / "a4.jsonl").read_text().splitlines():
        obj = json.loads(line)
        cited.setdefault(obj["topic_id"], set()).update(obj["references"])
    lines = []
    for line in (folder / "judgments" / "qrels.txt").read_text().splitlines():
        t, it, doc, _ = line.split()
        lines.append(f"{t} {it} {doc} {2 if doc in cited.get(t, ()) else 0}")
    (folder / "judgments" / "qrels_llm.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report_judge_eval") / "campaign"
    shutil.copytree(DATA, folder)
    _favour_a4(folder)
    config = folder / "config.yaml"
    doc = yaml.safe_load(config.read_text())
    doc["collection"]["qrels"][EVIL_SET] = {"path": "judgments/qrels_llm.txt",
                                            "model": DOC_MODEL}
    for system in doc["systems"]:
        if system["name"] == "a4":  # names the judge's model: the self-preference check
            system["name"] = EVIL_RUN
            system["metadata"] = {"generator": "JUDGE-7b-instruct"}
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = irbench("run", "--quiet", "--workers", "1", str(config))
    assert proc.returncode == 0, proc.stderr
    return config


def _report(config: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return irbench("report", str(config), "--out", str(out), *extra)


@pytest.fixture(scope="module")
def pages(campaign, tmp_path_factory) -> dict[str, str]:
    """{reference: the index.html written with --judge-eval reference}."""
    out = {}
    for reference in REFERENCES:
        folder = tmp_path_factory.mktemp("report") / reference
        proc = _report(campaign, folder, "--judge-eval", reference)
        assert proc.returncode == 0, proc.stderr
        out[reference] = (folder / "index.html").read_text(encoding="utf-8")
    return out


class Section(HTMLParser):
    """The tables of section 6e (by class), each a list of rows of cell texts, and its text."""

    def __init__(self):
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.inside, self.text = 0, []
        self._cell: list[str] | None = None

    @classmethod
    def of(cls, html: str) -> Section:
        section = cls()
        section.feed(html)
        assert section.tables or section.text, "no section 6e"
        return section

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.inside = attrs.get("id") == "judges"
        if not self.inside:
            return
        if tag == "table":
            self.tables.append((attrs.get("class") or "", []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            self.inside = False
        if self.inside and tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self.inside:
            self.text.append(data)
            if self._cell is not None:
                self._cell.append(data)

    def of_class(self, name: str) -> list[list[list[str]]]:
        return [rows for cls, rows in self.tables if name in cls.split()]


def _evaluate(config: Path, reference: str):
    cfg = load_config(str(config), strict=False, systems=False)
    with Store(cfg.store, read_only=True) as store:
        return evaluate_judges(cfg, store, reference)


def _f(value: float) -> str:
    return "-" if value != value else f"{value:.4f}"


def test_every_section_field_is_documented_and_read_by_its_template():
    assert undocumented(JUDGE_TYPES) == []
    page = make_dataclass("Page", [("c", ReportContext), ("links", dict)])
    assert names_outside(environment(), "_judges.html", page) == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("reference", list(REFERENCES))
def test_the_section_holds_the_numbers_judge_eval_gives(campaign, pages, reference):
    result = _evaluate(campaign, reference)
    printed = json.loads(irbench("judge-eval", str(campaign), "--reference", reference,
                                 "--format", "json").stdout)
    section = Section.of(pages[reference])
    [agreement] = section.of_class("judges-agreement")
    rows = {row[0]: row for row in agreement[1:]}
    assert list(rows) == [j.judge for j in result.judges] == list(REFERENCES[reference])
    boards = section.of_class("judges-boards")
    confusions = section.of_class("confusion")
    assert len(boards) == len(confusions) == len(result.judges)
    for j, shown, board, confusion, cli in zip(result.judges, rows.values(), boards,
                                               confusions, printed["judges"]):
        r = j.labels
        assert cli["judge"] == j.judge
        expected = [f"{r.pairs:,}", f"{r.only_reference:,}", f"{r.only_other:,}",
                    _f(r.agreed), _f(r.kappa), _f(r.kappa_linear), _f(r.alpha_ordinal)]
        assert shown[3:] == expected
        assert shown[7:] == [_f(cli["labels"][k]) for k in
                             ("kappa", "kappa_linear", "alpha_ordinal")]
        assert confusion[0][1:] == [str(g) for g in r.grades]
        assert [row[1:] for row in confusion[1:]] == [[str(n) for n in row] for row in
                                                      cli["labels"]["confusion"]]
        header, measures = board[0], board[1:]
        assert [m[0] for m in measures] == [m.measure for m in j.measures] and measures
        for m, cells, c in zip(j.measures, measures, cli["measures"]):
            lb = m.leaderboard
            assert cells[3:6] == [_f(lb.tau), _f(lb.tau_ap), _f(lb.spearman)]
            assert cells[3:6] == [_f(c["tau"]), _f(c["tau_ap"]), _f(c["spearman"])]
            tops = {h: v for h, v in zip(header, cells) if h.startswith("top ")}
            assert tops == {f"top {t.k}": f"{t.overlap} of {t.k}" for t in m.top}


@pytest.mark.timeout(300)
def test_the_self_preference_check_and_rank_changes_are_shown(campaign, pages):
    result = _evaluate(campaign, "official")
    [judge] = result.judges
    ap = next(m for m in judge.measures if m.measure == "AP")
    assert ap.self_preference is not None
    assert [m.system for m in ap.self_preference.named] == [EVIL_RUN]
    text = " ".join("".join(Section.of(pages["official"]).text).split())
    move = next(m for m in ap.leaderboard.moves if m.system == EVIL_RUN)
    assert move.rank_a > move.rank_b  # the judge ranks the run on its model higher
    assert (f"AP: {EVIL_RUN} {move.rank_a} → {move.rank_b}: mean rank gain "
            f"{ap.self_preference.gain_named:+.2f}") in text
    assert f"one-sided p {ap.self_preference.p_value:.4f} (exact)" in text
    assert f"Self-preference ({DOC_MODEL};" in text
    # the sets of other kinds are listed as not compared
    assert "support: not compared: its support labels are of another family" in text


@pytest.mark.timeout(300)
def test_hostile_set_and_run_names_are_escaped(pages):
    html = pages["official"]
    assert "<script>alert('set')" not in html and "<img src=x" not in html
    assert "llm&lt;script&gt;alert(&#39;set&#39;)&lt;/script&gt;&#34;&amp;" in html
    assert "a4&lt;img src=x onerror=alert(1)&gt;&amp;&#39;" in html
    section = Section.of(html)
    text = "".join(section.text)
    assert f"Judge '{EVIL_SET}' against 'official'" in text
    [agreement] = section.of_class("judges-agreement")
    assert agreement[1][:3] == [EVIL_SET, "adhoc", DOC_MODEL]
    assert '<a href="#judges">6e. How far to trust each judge</a>' in html


@pytest.mark.timeout(300)
def test_with_no_other_set_to_compare_the_section_says_so(campaign, tmp_path):
    folder = campaign.parent
    alone = folder / "alone.yaml"
    doc = yaml.safe_load((folder / "config.yaml").read_text())
    doc["name"] = "alone"
    doc["collection"]["qrels"] = {"official": "judgments/qrels.txt",
                                  "support": {"path": "judgments/support.jsonl",
                                              "kind": "support"},
                                  "nuggets": {"path": "judgments/assign.jsonl",
                                              "kind": "nuggets"}}
    alone.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = irbench("run", "--quiet", "--workers", "1", str(alone))
    assert proc.returncode == 0, proc.stderr
    proc = _report(alone, tmp_path / "out", "--judge-eval", "official")
    assert proc.returncode == 0, proc.stderr
    section = Section.of((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    text = " ".join("".join(section.text).split())
    assert "No judge to compare: no label set of" in text
    assert ("support: not compared: its support labels are of another family than the adhoc "
            "labels of official") in text
    assert section.tables == []


@pytest.mark.timeout(300)
def test_a_label_file_changed_since_the_scores_is_said_not_used(campaign, tmp_path):
    folder = tmp_path / "campaign"
    shutil.copytree(campaign.parent, folder)
    changed = folder / "judgments" / "qrels_llm.txt"
    changed.write_text(changed.read_text().replace(" 0\n", " 1\n"))
    proc = _report(folder / "config.yaml", tmp_path / "out", "--judge-eval", "official")
    assert proc.returncode == 0, proc.stderr
    section = Section.of((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    text = " ".join("".join(section.text).split())
    assert (f"Not computed: qrels set '{EVIL_SET}' ({changed}) changed since the scores "
            "were stored") in text
    assert section.tables == []


@pytest.mark.timeout(300)
def test_an_unknown_set_is_a_clear_error_naming_the_sets(campaign, tmp_path):
    proc = _report(campaign, tmp_path / "out", "--judge-eval", "officail")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "irbench: error: no qrels set 'officail' in" in proc.stderr
    assert "(it has official, support, support_llm, shared, nuggets, nuggets_llm, " in proc.stderr
    assert "did you mean 'official'?" in proc.stderr
    assert not (tmp_path / "out").exists()  # refused before anything is computed or written
    proc = irbench("report", str(campaign), "--judge-eval", "official", "--format", "csv")
    assert proc.returncode != 0 and "--judge-eval adds a section to the html page" in proc.stderr
    assert "Traceback" not in proc.stderr


@needs_chromium
@pytest.mark.timeout(300)
def test_the_section_in_chromium_offline(pages, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
    page_file = tmp_path / "index.html"
    page_file.write_text(pages["official"], encoding="utf-8")
    requests: list[str] = []
    shot = tmp_path / "judges-section.png"
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto(page_file.as_uri())
        section = page.locator("section#judges")
        assert section.is_visible()
        assert section.locator("h2").inner_text() == "6e. How far to trust each judge"
        assert section.locator("table.judges-agreement tbody tr").count() == 1
        assert section.locator("table.confusion").count() == 1
        box = section.bounding_box()
        assert box is not None and box["width"] <= 1366  # no wider than the window
        # the whole page drawn (the sticky contents stay at its top), cut to the section
        page.screenshot(path=str(shot), full_page=True, clip=box)
    assert errors == []
    assert [u for u in requests if not u.startswith("file://")] == []  # offline: no asset
    assert shot.stat().st_size > 10_000
    shots = os.environ.get("IRBENCH_SHOTS")
    if shots:
        shutil.copy(shot, Path(shots) / shot.name)
    print(f"screenshot: {shot}")
