"""The assessor's and organiser's pages for a day's work (issue 37), without a browser: the
levels' names from ``--levels`` (or the defaults for 0, 1, 2) on the keys, as text; the page's
finished answer telling "all judged" from "come back later"; the organiser's judgments counted
as documents (an undo and a new label once), the budget per topic and who holds which topic.
Served by a real uvicorn server (tests/test_assess_structure.py's ``Running``) over a real
campaign, store and desk."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from test_assess_structure import Running, secured

from irbench import cli
from irbench.assess.app import render
from irbench.assess.relevance import DEFAULT_NAMES, level_names, page, parse_levels
from irbench.assess.screens import TEMPLATES, Visit
from irbench.assess.serve import DeskOptions, add_assessor, assessment_app, opened
from irbench.config import load_config
from irbench.errors import OptionError

HOSTILE = '<img src=x onerror="window.pwned=1">'


class Keys(HTMLParser):
    """The level buttons of a page as a browser parses it: (data-level, text, tags inside)."""

    def __init__(self):
        super().__init__()
        self.keys: list[list] = []
        self.inside = 0
        self.config = ""
        self._script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "button" and a.get("class") == "level":
            self.keys.append([a["data-level"], "", []])
            self.inside = 1
        elif self.inside:
            self.keys[-1][2].append(tag)
        self._script = tag == "script"

    def handle_endtag(self, tag):
        if tag == "button":
            self.inside = 0
        self._script = False

    def handle_data(self, data):
        if self.inside:
            self.keys[-1][1] += data
        if self._script and "var CONFIG = " in data:
            self.config = data.split("var CONFIG = ", 1)[1].split(";\n", 1)[0]


def _keys(html: str) -> Keys:
    parsed = Keys()
    parsed.feed(html)
    return parsed


@pytest.mark.parametrize(("given", "levels"), [
    ("0,1,2", {0: "", 1: "", 2: ""}),
    ("2,0,1", {0: "", 1: "", 2: ""}),
    ("0:not,1:related,2:highly", {0: "not", 1: "related", 2: "highly"}),
    (" 0 : not  relevant , 3:perfect,", {0: "not relevant", 3: "perfect"}),
    ("0,1,2,3", {0: "", 1: "", 2: "", 3: ""}),
])
def test_levels_are_read_with_their_names(given, levels):
    assert parse_levels(given) == levels


@pytest.mark.parametrize(("given", "message"), [
    ("", "--levels is a list of levels from 0 to 9"),
    ("10", "not '10'"), ("a,b", "not 'a'"), ("-1,0", "not '-1'"), ("٣", "not '٣'"),
    ("0:a,0:b", "level 0 twice"),
    ("0:" + "x" * 41, "40 printable characters at most"),
    ("0:\x1b[31mred", "40 printable characters at most"),
])
def test_levels_the_keys_cannot_take_are_refused_by_name(given, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(")):
        parse_levels(given)


def test_names_default_to_trec_s_scale_only_for_0_1_2():
    assert level_names((0, 1, 2), ("", "", "")) == tuple(DEFAULT_NAMES.values())
    assert level_names((0, 1, 2), ()) == ("not relevant", "relevant", "highly relevant")
    assert level_names((0, 1, 2, 3), ("",) * 4) == ("",) * 4  # no guess for another scale
    assert level_names((0, 1), ("no", "")) == ("no", "")  # the names given, as given


def _visit(levels, names) -> Visit:
    return Visit(title="t", who="ann", nonce="n", csrf="c", levels=levels, preselect=False,
                 names=names)


def test_the_keys_show_the_names_as_text_and_the_script_gets_them_as_data():
    html = render(TEMPLATES, "assess.html",
                  page(_visit((0, 1, 2), ("not", "related", HOSTILE)))).body.decode()
    parsed = _keys(html)
    assert [(k, " ".join(t.split())) for k, t, _ in parsed.keys] == [
        ("0", "0 not"), ("1", "1 related"), ("2", f"2 {HOSTILE}")]
    assert all(tags in (["kbd", "span"],) for _, _, tags in parsed.keys)  # no <img>
    config = json.loads(parsed.config)  # tojson: <, >, & as \\u escapes inside the script
    assert config["names"] == {"0": "not", "1": "related", "2": HOSTILE}
    assert "<img" not in parsed.config and "</script" not in html.split("var CONFIG")[1][:400]
    plain = _keys(render(TEMPLATES, "assess.html", page(_visit((0, 1, 2, 3), ("",) * 4)))
                  .body.decode())
    assert [" ".join(t.split()) for _, t, _ in plain.keys] == ["0", "1", "2", "3"]


def test_the_page_has_the_docno_the_scroll_keys_and_hidden_that_hides():
    html = render(TEMPLATES, "assess.html", page(_visit((0, 1, 2), ()))).body.decode()
    assert '<span id="doc-id"></span>' in html and 'id="doc-text" tabindex="0"' in html
    assert "[hidden] { display: none !important; }" in html  # before main's display: grid
    assert html.index("[hidden]") < html.index("main { display: grid")
    for key in ('" ":', "PageDown:", "PageUp:", "ArrowDown:", "ArrowUp:", "Home:", "End:"):
        assert key in html, key


@pytest.mark.timeout(120)
def test_the_cli_refuses_levels_it_cannot_take_with_a_message(tmp_path, capsys):
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "2",
                     "--pool-depth", "3", "--seed", "5"]) == 0
    capsys.readouterr()
    code = cli.main(["assess", str(folder / "campaign.yaml"), "--pool", "web", "--levels",
                     "0:no,0:yes"])
    err = capsys.readouterr().err
    assert code == 1 and err == "irbench: error: --levels gives level 0 twice\n"


# -- served


@pytest.fixture
def campaign(tmp_path):
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    path = folder / "campaign.yaml"
    assert cli.main(["pool", "start", str(path), "--name", "web", "--strategy", "depth",
                     "--param", "k=3", "--budget", "4"]) == 0
    config = load_config(path)
    tokens = {name: add_assessor(config, "web", name, (topic,), "assessor", None)
              for name, topic in (("ann", "401"), ("bob", "401"), ("cat", "402"))}
    tokens["org"] = add_assessor(config, "web", "org", (), "organiser", None)
    return config, tokens


@pytest.fixture
def served(campaign):
    config, tokens = campaign
    with opened(config, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        server = Running(assessment_app(config, "web", desk, store, port=0, levels=(0, 1, 2),
                                        preselect=False, names=("no", "yes", "very")))
        try:
            yield server, tokens
        finally:
            server.stop()


@pytest.mark.timeout(120)
def test_the_names_given_reach_the_served_page(served):
    server, tokens = served
    ann = server.client(tokens["ann"])
    keys = _keys(secured(ann.get("/")).text).keys
    assert [" ".join(t.split()) for _, t, _ in keys] == ["0 no", "1 yes", "2 very"]


@pytest.mark.timeout(120)
def test_the_organiser_counts_judgments_not_clicks_and_shows_budgets_and_holders(served):
    """Before: an undo and a new label counted twice in 'judged'; no budget per topic; who
    held which topic not shown."""
    server, tokens = served
    ann, bob, cat, org = (server.client(tokens[n]) for n in ("ann", "bob", "cat", "org"))
    item = ann.post("/api/next").json()["item"]
    ids = {"query_id": item["query_id"], "doc_id": item["doc_id"]}
    assert ann.post("/api/judge", json={**ids, "relevance": 1}).status_code == 200
    assert ann.post("/api/undo").json()["item"]["doc_id"] == item["doc_id"]
    assert ann.post("/api/judge", json={**ids, "relevance": 2}).status_code == 200
    assert bob.post("/api/next").json()["item"] is None  # ann holds 401
    assert cat.post("/api/next").json()["item"]["query_id"] == "402"
    view = secured(org.get("/api/progress")).json()
    rows = {a["name"]: a for a in view["assessors"]}
    assert rows["ann"]["judged"] == 1 and rows["bob"]["judged"] == 0
    assert (view["judgments"], view["clicks"]) == (1, 2)
    assert [rows[n]["holds"] for n in ("ann", "bob", "cat")] == ["401", "-", "402"]
    topics = {t["query_id"]: t for t in view["topics"]}
    assert list(topics) == ["401", "402", "403"]  # every topic, handed out or not
    assert [t["budget"] for t in topics.values()] == ["4", "4", "4"]
    assert view["total_budget"] == "unlimited"
    assert topics["401"]["judged_by"] == "ann 1" and topics["402"]["judged_by"] == "-"
    assert [t["held_by"] for t in topics.values()] == ["ann", "cat", "-"]
    assert topics["401"]["judged"] == 1
    text = " ".join(secured(org.get("/")).text.split())
    assert ("1 judgments made in the browser (2 labels given: a judgment changed after an "
            "undo counts once)") in text
    assert "<td>ann</td><td>401</td><td>1</td><td>401</td>" in text
    assert "<td>401</td><td>1</td><td>4</td><td>4</td><td>ann</td><td>ann 1</td>" in text


@pytest.mark.timeout(120)
def test_nothing_to_judge_tells_come_back_later_from_all_judged(served):
    """Two assessors of topic 401 only: while ann holds it, bob has nothing now but his
    topic is not finished; once ann judged it to the end, both are finished."""
    server, tokens = served
    ann, bob = server.client(tokens["ann"]), server.client(tokens["bob"])
    mine = ann.post("/api/next").json()
    answer = bob.post("/api/next").json()
    assert answer["item"] is None
    assert answer["progress"]["finished"] is False and answer["progress"]["done"] is False
    while mine["item"] is not None:
        ids = {k: mine["item"][k] for k in ("query_id", "doc_id")}
        mine = ann.post("/api/judge", json={**ids, "relevance": 1}).json()
    assert mine["progress"]["finished"] is True and mine["progress"]["done"] is False
    assert mine["progress"]["topics"] == [{"query_id": "401", "judged": 4, "total": 4}]
    again = bob.post("/api/next").json()
    assert again["item"] is None and again["progress"]["finished"] is True


def test_the_collections_grading_scheme_names_the_keys_unless_levels_are_given(tmp_path):
    """``collection.grades`` in the config: the keys and their names when ``--levels`` is not
    given; ``--levels`` wins; a scheme the keys cannot take is a config problem at its line."""
    from irbench.assess.relevance import chosen_levels
    from irbench.errors import ConfigError

    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "2",
                     "--pool-depth", "3", "--seed", "5"]) == 0
    path = folder / "campaign.yaml"
    text = path.read_text()
    assert "collection:\n" in text
    path.write_text(text.replace("collection:\n", "collection:\n  grades: {0: off topic, "
                                 "1: on topic, 2: key, 3: <b>vital</b>}\n", 1))
    config = load_config(path)
    assert config.grades == ((0, "off topic"), (1, "on topic"), (2, "key"), (3, "<b>vital</b>"))
    assert chosen_levels(None, config.grades) == dict(config.grades)
    assert chosen_levels("0,1", config.grades) == {0: "", 1: ""}
    assert chosen_levels(None, ()) == {0: "", 1: "", 2: ""}
    visit = Visit(title="t", who="ann", nonce="n", csrf="c", levels=(0, 1, 2, 3),
                  preselect=False, names=tuple(dict(config.grades).values()))
    html = render(TEMPLATES, "assess.html", page(visit)).body.decode()
    assert "&lt;b&gt;vital&lt;/b&gt;" in html and "<b>vital" not in html
    path.write_text(text.replace("collection:\n", "collection:\n  grades: {0: off, 12: "
                                 "far, 2: ''}\n", 1))
    with pytest.raises(ConfigError) as found:
        load_config(path)
    message = str(found.value)
    assert "collection.grades.12: a level is a whole number from 0 to 9" in message
    assert "a level's name is text of 1 to 40 printable characters" in message
