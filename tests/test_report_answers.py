"""The report of an answer campaign (issue 39): section 1b (a leaderboard of answer measures per
answer judgment set, support against nugget score) and one answer page per answer run.

A small mixed campaign (tests/data/answers_report: a ranked run and two answer runs, support
labels, nugget assignments, five documents) is scored and its report written with run pages.
The answer pages mark each sentence by its first citation's support label, link every
citation to the cited segment's text, list the nuggets covered and missed, show the run's
per-topic scores from the store, escape what the participant wrote, and note (never fail on)
a missing or changed answer file. Chromium screenshots at 1366 and 1920 px go to
$IRBENCH_SHOTS when it is set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import make_dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from irbench import cli
from irbench.config import load_config
from irbench.report.answerpages import ANSWER_PAGE_TYPES, SENTENCES_SHOWN, AnswerPage
from irbench.report.fields import names_outside, undocumented
from irbench.report.render import environment
from irbench.runner import run_campaign
from irbench.store import Store

DATA = Path(__file__).parent / "data" / "answers_report"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REPO = Path(__file__).resolve().parent.parent


class Parsed(HTMLParser):
    """An answer page read back: each sentence (its class, label, text, citations), the
    citation links, the segment entries (id -> text), the nugget lists and the headings."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.sentences: list[dict] = []
        self.segments: dict[str, str] = {}
        self.nuggets: dict[tuple[str, str], list[str]] = {}  # (topic anchor, heading)
        self.headings: dict[str, str] = {}
        self.ids: set[str] = set()
        self.scripts = 0
        self._sentence: dict | None = None
        self._segment: str | None = None
        self._heading: str | None = None
        self._nugget_list: tuple[str, str] | None = None
        self._topic = ""
        self._nugget: list[str] | None = None
        self._h3: list[str] | None = None
        self._cite: dict | None = None
        self._label = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "script":
            self.scripts += 1
        if tag == "li" and self._nugget_list is None and a.get("class") in (
                "full", "partial", "none", "unjudged", "uncited", "unlabelled"):
            self._sentence = {"class": a["class"], "text": [], "cites": [], "label": ""}
        elif tag == "span" and self._sentence is not None and \
                a.get("class", "").startswith("tag "):
            self._label = True
        elif tag == "a" and self._sentence is not None and a.get("class") == "cite":
            self._cite = {"href": a["href"], "title": a.get("title", ""), "text": ""}
        elif tag == "details" and a.get("class") == "segment":
            self._segment = a["id"]
            self.segments[a["id"]] = ""
        elif tag == "h2" and "id" in a:
            self._heading = self._topic = a["id"]
            self.headings[a["id"]] = ""
        elif tag == "h3":
            self._h3 = []
        elif tag == "li" and self._nugget_list is not None:
            self._nugget = []

    def handle_endtag(self, tag):
        if tag == "span" and self._label:
            self._label = False
        elif tag == "li" and self._nugget is not None:
            self.nuggets[self._nugget_list].append("".join(self._nugget).strip())
            self._nugget = None
        elif tag == "li" and self._sentence is not None:
            s = self._sentence
            s["text"] = "".join(s["text"]).strip()
            self.sentences.append(s)
            self._sentence = None
        elif tag == "a" and self._cite is not None:
            self._sentence["cites"].append(self._cite)
            self._cite = None
        elif tag == "details":
            self._segment = None
        elif tag == "h2":
            self._heading = None
        elif tag == "h3" and self._h3 is not None:
            self._nugget_list = (self._topic, "".join(self._h3).strip())
            self.nuggets[self._nugget_list] = []
            self._h3 = None
        elif tag == "ul":
            self._nugget_list = None

    def handle_data(self, data):
        if self._cite is not None:
            self._cite["text"] += data
        elif self._label:
            self._sentence["label"] += data
        elif self._sentence is not None:
            self._sentence["text"].append(data)
        if self._segment is not None:
            self.segments[self._segment] += data
        if self._heading is not None:
            self.headings[self._heading] += data
        if self._h3 is not None:
            self._h3.append(data)
        if self._nugget is not None:
            self._nugget.append(data)


def campaign(tmp_path: Path) -> tuple[Path, Path]:
    """The campaign copied into ``tmp_path``, scored, and its report written with run pages;
    (config path, report folder)."""
    folder = tmp_path / "campaign"
    shutil.copytree(DATA, folder)
    config = load_config(folder / "config.yaml")
    report = run_campaign(config, workers=1)
    assert not report.failures, report.failures
    out = tmp_path / "report"
    assert cli.main(["report", str(folder / "config.yaml"), "--participants", "--out",
                     str(out)]) == 0
    return folder / "config.yaml", out


def page(out: Path, name: str) -> tuple[str, Parsed]:
    html = (out / "systems" / "answers" / f"{name}.html").read_text(encoding="utf-8")
    return html, Parsed(html)


def by_text(parsed: Parsed) -> dict[str, dict]:
    return {s["text"]: s for s in parsed.sentences}


PAGE_CONTEXT = make_dataclass("AnswerPageContext", [("a", AnswerPage), ("title", str),
                                                    ("generated_at", str)])


def test_every_answer_page_field_is_documented_and_read_by_its_template():
    assert undocumented(ANSWER_PAGE_TYPES) == []
    assert names_outside(environment(), "answers.html", PAGE_CONTEXT) == []


@pytest.mark.timeout(120)
def test_answer_pages_mark_link_and_list_nuggets(tmp_path):
    config, out = campaign(tmp_path)
    index = (out / "index.html").read_text(encoding="utf-8")
    # section 1b: the answer sets' leaderboards, the chart, links to the answer pages
    assert 'id="answers"' in index and "1b. Generated answers" in index
    assert "Qrels set 'support' (support)" in index
    assert "Qrels set 'nuggets' (nuggets)" in index
    assert 'href="systems/answers/r1.html"' in index and 'href="systems/answers/r2.html"' in index
    assert 'id="support-nuggets"' in index and "support-nuggets-" in index  # the inline chart
    runs_index = (out / "systems" / "index.html").read_text(encoding="utf-8")
    assert 'href="answers/r1.html"' in runs_index
    assert 'href="answers/r2.html"' in (out / "systems" / "r2.html").read_text()

    html, r1 = page(out, "r1")
    sentences = by_text(r1)
    # the label of each sentence's first citation, as the support file gives it
    assert {t: s["class"] for t, s in sentences.items()} == {
        "Alpha beta.": "full", "Gamma delta.": "partial", "Eps zeta.": "uncited",
        "Eta theta.": "none", "Iota kappa.": "unjudged", "Lambda mu.": "full"}
    assert [s["label"] for s in r1.sentences] == [
        "full", "partial", "uncited", "none", "not judged", "full"]
    assert [[c["text"] for c in s["cites"]] for s in r1.sentences] == [
        ["[1]", "[2]"], ["[3]"], [], ["[1]"], ["[2]"], ["[1]"]]  # places in the references
    # every citation links to the segment entry of the id it cites, which holds its text
    texts = {"d#1": "Alpha beta is documented here.", "d#2": "Alpha is sometimes beta.",
             "d3": "Gamma <img src=x onerror=alert(2)> delta.", "d4": "Eta is not theta.",
             "d5": "Lambda mu, iota kappa."}
    cites = [c for s in r1.sentences for c in s["cites"]]
    assert [c["title"].split(":")[0] for c in cites] == ["d#1", "d#2", "d3", "d4", "d5", "d5"]
    assert [c["title"].split(": ")[1] for c in cites] == [
        "full", "partial", "partial", "none", "not judged", "full"]
    for c in cites:
        anchor = c["href"].removeprefix("#")
        assert c["href"].startswith("#") and anchor in r1.segments
        assert texts[c["title"].split(":")[0]] in r1.segments[anchor]
    assert len(r1.segments) == 5  # d5, cited twice, listed once
    assert "&lt;img src=x onerror=alert(2)&gt;" in html and "<img" not in html
    # nuggets: covered (fully or partly) and missed, per topic
    assert r1.nuggets == {
        ("topic-1", "Nuggets covered (2)"): ["alpha is beta (vital, supported)",
                                             "alpha <b>has</b> gamma (okay, partly supported)"],
        ("topic-1", "Nuggets missed (1)"): ["alpha came first (vital)"],
        ("topic-2", "Nuggets covered (1)"): ["eta is theta (okay, supported)"],
        ("topic-2", "Nuggets missed (1)"): ["eta is greek (vital)"],
        ("topic-3", "Nuggets covered (1)"): ["lambda is mu (vital, supported)"],
        ("topic-3", "Nuggets missed (0)"): ["none"]}
    assert "alpha &lt;b&gt;has&lt;/b&gt; gamma" in html
    # the run's per-topic scores from the store, at each topic's heading
    with Store(load_config(config).store, read_only=True) as store:
        _, rows = store.per_query("support", systems=["r1"], measures=["support_precision"])
    heading = {h.split(":")[0]: h for h in r1.headings.values()}
    for _, _, _, topic, value in rows:
        assert f"support_precision {value:.4f}" in " ".join(heading[topic].split())


@pytest.mark.timeout(120)
def test_hostile_answer_text_is_escaped_and_an_unanswered_topic_is_said(tmp_path):
    _, out = campaign(tmp_path)
    html, r2 = page(out, "r2")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\x1b" not in html and "\u202e" not in html  # shown as escapes, not acted on
    hostile = next(s for s in r2.sentences if "alert(1)" in s["text"])
    assert "\\x1b[31mred\\x1b[0m \\u202eevil" in hostile["text"]
    assert hostile["class"] == "full" and hostile["cites"][0]["text"] == "[2]"  # its refs[1]
    assert r2.scripts == 1  # the page's own script alone
    heading = {h.split(":")[0]: h for h in r2.headings.values()}
    assert "t3" in heading and "The run gave no answer to this topic" in html
    assert r2.nuggets[("topic-1", "Nuggets covered (2)")] == [
        "alpha <b>has</b> gamma (okay, supported)", "alpha came first (vital, supported)"]
    assert r2.nuggets[("topic-2", "Nuggets covered (0)")] == ["none"]
    assert r2.nuggets[("topic-2", "Nuggets missed (2)")] == ["eta is theta (okay)",
                                                             "eta is greek (vital)"]


@pytest.mark.timeout(120)
def test_a_missing_or_changed_answer_file_is_a_note_not_a_failure(tmp_path):
    config, out = campaign(tmp_path)
    answers = config.parent / "answers"
    (answers / "r2.jsonl").unlink()
    with open(answers / "r1.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert cli.main(["report", str(config), "--participants", "--out", str(out)]) == 0
    html, r1 = page(out, "r1")
    assert "changed since &#39;irbench run&#39; scored it" in html
    assert len(r1.sentences) == 6  # still shown: the file as it is now
    html, r2 = page(out, "r2")
    assert "cannot be read" in html and r2.sentences == []
    assert "support_precision" in html  # the stored scores stay


@pytest.mark.timeout(120)
def test_a_long_answer_is_cut_and_counted(tmp_path):
    folder = tmp_path / "campaign"
    shutil.copytree(DATA, folder)
    long = ", ".join(f'{{"text": "Sentence {i}.", "citations": [0]}}'
                     for i in range(SENTENCES_SHOWN + 7))
    (folder / "answers" / "r2.jsonl").write_text(
        '{"run_id": "r2", "topic_id": "t1", "topic": "x", "references": ["d3"], '
        f'"response_length": {2 * (SENTENCES_SHOWN + 7)}, "answer": [{long}]}}\n')
    config = load_config(folder / "config.yaml")
    assert not run_campaign(config, workers=1).failures
    out = tmp_path / "report"
    assert cli.main(["report", str(folder / "config.yaml"), "--participants", "--out",
                     str(out)]) == 0
    html, r2 = page(out, "r2")
    assert len(r2.sentences) == SENTENCES_SHOWN and "and 7 more sentences not shown" in html


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
@pytest.mark.timeout(300)
def test_answer_page_and_index_in_chromium(tmp_path):
    _, out = campaign(tmp_path)
    shots = os.environ.get("IRBENCH_SHOTS")
    made = []
    for name, target in (("answers-r1", out / "systems" / "answers" / "r1.html"),
                         ("answers-r2", out / "systems" / "answers" / "r2.html"),
                         ("answers-index", out / "index.html")):
        for width in (1366, 1920):
            shot = tmp_path / f"{name}-{width}.png"
            proc = subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--window-size={width},{2600 if name == 'answers-index' else 1400}",
                 "--virtual-time-budget=5000",
                 f"--screenshot={shot}", target.as_uri()],
                capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr[-2000:]
            assert shot.stat().st_size > 10_000
            made.append(shot)
            if shots:
                shutil.copy(shot, Path(shots) / shot.name)
    print("screenshots:", *made, sep="\n  ")
    # following a citation opens its segment (the page's script), in the DOM Chromium gives
    target = out / "systems" / "answers" / "r1.html"
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--virtual-time-budget=3000", "--dump-dom",
                          target.as_uri() + "#seg-3"],
                         capture_output=True, text=True, timeout=120).stdout
    assert '<details class="segment" id="seg-3" open="">' in dom


@pytest.mark.timeout(600)
def test_the_bundled_rag_demo_report(tmp_path):
    """configs/rag.yaml (the bundled answer demo), when present: scored and reported with
    its answer pages."""
    demo = REPO / "configs" / "rag.yaml"
    if not demo.exists():
        pytest.skip("no bundled RAG demo")
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    shutil.copytree(REPO / "runs" / "rag", tmp_path / "runs" / "rag",
                    ignore=shutil.ignore_patterns("*.duckdb*"))
    config = tmp_path / "configs" / "rag.yaml"
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--participants", "--out", str(out)]) == 0
    pages = sorted((out / "systems" / "answers").glob("*.html"))
    assert pages
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="answers"' in index
    for p in pages:
        parsed = Parsed(p.read_text(encoding="utf-8"))
        assert parsed.sentences
        for s in parsed.sentences:
            for c in s["cites"]:
                assert c["href"].removeprefix("#") in parsed.segments
