"""The desk's nugget screens (``irbench assess CONFIG --pool NAME --nuggets JUDGE``), on a real
uvicorn server in a process of its own, driven by Playwright on Debian's Chromium: the organiser
edits a model's nugget lists in the browser (change, importance, merge, split, add, delete; an
edit naming a nugget changed meanwhile refused); the server is SIGKILLed and started again and
every edit is there, with who made it. Then two assessors assign the edited nuggets to the
answers (the answer beside the topic's list, one nugget at a time, keys 2/1/0), one undoes a
key; the server is SIGKILLed again and the next key on each open page is saved without a
reload; the store's labels equal the keys pressed, in order, and ``irbench qrels --nuggets``
writes what the server's ``/qrels`` gives. No run id is on the pages or in the calls' answers."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from answer_campaign import RUNS, TOPICS, answer_campaign, cli_out, link_on, shoot
from desk_server import ROOT, Server, client, needs_chromium, open_page, sign_in

from irbench.assess.nuggets import answer_key
from irbench.config import load_config
from irbench.store import Store

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
expect = playwright.expect
pytestmark = needs_chromium
JUDGE = "nj"  # the nugget list's judge
LISTS = {t: [(f"{t} fact {i}: the answer names point {i}", "vital" if i < 2 else "okay")
             for i in range(5)] for t in TOPICS}


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    path = answer_campaign(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli_out("pool", "start", str(path), "--name", "web", "--strategy", "depth",
            "--param", "k=2", env=env)
    with Store(load_config(str(path), strict=False).store) as store:
        store.record_model_nuggets(JUDGE, LISTS)
    return path


def _label(nugget: str, answer: str) -> int:
    """The key an assessor presses for a unit: fixed by its nugget and answer."""
    return int(hashlib.sha256(f"{nugget}\0{answer}".encode()).hexdigest(), 16) % 3


class Editor:
    """The organiser's list editor, one topic at a time."""

    def __init__(self, browser, link: str, url: str):
        self.page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
        sign_in(self.page, link)
        self.page.click("text=Edit the nugget lists")
        self.page.wait_for_url(url + "nuggets/edit/")
        self.wait(1)

    def calls(self) -> int:
        return int(self.page.get_attribute("body", "data-calls") or 0)

    def wait(self, calls: int) -> None:
        expect(self.page.locator("body")).to_have_attribute("data-calls", str(calls))

    def texts(self) -> list[tuple[str, str]]:
        rows = self.page.locator("#list li")
        return [(rows.nth(i).locator("textarea").input_value(),
                 rows.nth(i).locator("select").input_value()) for i in range(rows.count())]

    def topic(self, query_id: str) -> None:
        before = self.calls()
        self.page.select_option("#topic", query_id)
        self.wait(before + 1)

    def act(self, action) -> str:
        """Do ``action`` (clicks that make one call), wait for its answer; the status."""
        before = self.calls()
        action(self.page)
        self.wait(before + 1)
        return self.page.text_content("#status") or ""

    def row(self, i: int):
        return self.page.locator("#list li").nth(i)


def _edit_lists(editor: Editor) -> dict[str, list[tuple[str, str]]]:
    """The organiser's edits of t1's list (each kind once), and what the list becomes."""
    editor.topic("t1")
    assert editor.texts() == LISTS["t1"]
    said = editor.act(lambda p: (editor.row(0).locator("textarea").fill("t1 fact 0, edited"),
                                 editor.row(0).locator("button.save").click()))
    assert said == "changed."
    said = editor.act(lambda p: (editor.row(2).locator("select").select_option("vital"),
                                 editor.row(2).locator("button.save").click()))
    assert said == "changed."
    said = editor.act(lambda p: (editor.row(3).locator("input.tick").check(),
                                 editor.row(4).locator("input.tick").check(),
                                 p.fill("#merge-text", "t1 facts 3 and 4 <b>merged</b>"),
                                 p.select_option("#merge-importance", "okay"),
                                 p.click("#merge")))
    assert said == "2 nuggets merged into one."
    said = editor.act(lambda p: (editor.row(1).locator("textarea").fill("part one\npart two"),
                                 editor.row(1).locator("button.split").click()))
    assert said == "split into 2."
    said = editor.act(lambda p: (p.fill("#add-text", "t1 a fact the model missed"),
                                 p.select_option("#add-importance", "vital"),
                                 p.click("#add")))
    assert said == "added."
    expected = [("t1 fact 0, edited", "vital"), ("part one", "vital"), ("part two", "vital"),
                ("t1 fact 2: the answer names point 2", "vital"),
                ("t1 facts 3 and 4 <b>merged</b>", "okay"),
                ("t1 a fact the model missed", "vital")]
    assert editor.texts() == expected
    editor.topic("t2")
    said = editor.act(lambda p: editor.row(4).locator("button.delete").click())
    assert said == "deleted."
    return {"t1": expected, "t2": LISTS["t2"][:4]}


class Assessor:
    """One assessor's nugget page, and the keys they pressed: (judge, topic, nugget, answer,
    label) in order."""

    def __init__(self, browser, name: str, link: str, pressed: list, url: str):
        self.name, self.pressed = name, pressed
        self.page = open_page(browser, link, width=1366, height=800, document=False)

    def answered(self) -> int:
        return int(self.page.get_attribute("body", "data-answered") or 0)

    def showing(self) -> tuple[str, str, str] | None:
        if self.page.locator("#work").is_hidden():
            return None
        return (self.page.text_content("#topic-id") or "",
                self.page.text_content("#nugget") or "",
                self.page.get_attribute("#doc-text", "data-answer") or "")

    def press(self, key: str) -> None:
        before = self.answered()
        self.page.keyboard.press(key)
        expect(self.page.locator("body")).to_have_attribute("data-answered", str(before + 1))
        status = self.page.text_content("#status") or ""
        assert not status.startswith("Not saved"), status

    def judge(self, label: int | None = None) -> bool:
        item = self.showing()
        if item is None and self.page.locator("#again").is_visible():
            before = self.answered()
            self.page.click("#again")
            expect(self.page.locator("body")).to_have_attribute("data-answered",
                                                                str(before + 1))
            item = self.showing()
        if item is None:
            return False
        # the nugget to judge is the one marked in the list
        assert self.page.text_content("#nuggets li.current") .startswith(item[1])
        assert self.page.text_content("#doc-text")  # the answer beside the list
        key = _label(item[1], item[2]) if label is None else label
        self.press(str(key))
        self.pressed.append((self.name, item[0], item[1], item[2], key))
        return True


def _stored(config) -> list[tuple]:
    """The store's nugget labels (judge, topic, nugget text, answer key, label), in the
    order recorded, the nugget's text read from its stored version, the answer's key
    (the page's name of it) made from its run."""
    loaded = load_config(str(config), strict=False)
    with Store(loaded.store, read_only=True) as store:
        c = store.answer_label_columns("nugget")
        texts = {v.nugget_id: v.text for t in TOPICS for v in store.nugget_history(JUDGE, t)}
    rows = sorted(zip(c["position"].tolist(), c["judge"].tolist(), c["query_id"].tolist(),
                      c["reference"].tolist(), c["run_id"].tolist(), c["label"].tolist(),
                      c["judge_kind"].tolist()))
    assert {kind for *_, kind in rows} == {"human"}
    return [(j, q, texts[ref], answer_key(q, run), int(label))
            for _, j, q, ref, run, label, _ in rows]


@pytest.mark.timeout(900)
def test_organiser_edits_and_two_assessors_assign_through_kills(campaign, tmp_path, browser):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    links = {name: cli_out("assess", str(campaign), "--pool", "web", "--add-assessor", name,
                           env=env) for name in ("ann", "bob")}
    organiser = cli_out("assess", str(campaign), "--pool", "web", "--add-assessor", "org",
                        "--organiser", env=env)
    server = Server(campaign, extra=("--nuggets", JUDGE))
    pressed: list[tuple] = []
    try:
        editor = Editor(browser, link_on(organiser, server.port), server.url)
        lists = _edit_lists(editor)
        shoot(editor.page, tmp_path, "nugget-edit-1366.png")
        assert "<b>" not in (editor.page.inner_html("#list") or "").replace("&lt;b&gt;", "")

        server.kill()  # a crash: every edit acknowledged is in the store
        server.start()
        editor.page.reload()
        editor.wait(1)
        editor.topic("t1")
        assert editor.texts() == lists["t1"]
        # an edit of a nugget someone else deleted meanwhile: refused, the list shown again
        org = client(server.url, link_on(organiser, server.port))
        try:
            shown = editor.row(5).locator("input.tick").get_attribute("value")
            csrf = editor.page.get_attribute('meta[name="csrf"]', "content") or ""
            gone = editor.page.request.post(
                server.url + "nuggets/edit/api/edit", headers={"X-CSRF-Token": csrf},
                data=json.dumps({"op": "delete", "query_id": "t1", "ids": [shown]}))
            assert gone.ok and len(gone.json()["nuggets"]) == 5
            before = editor.calls()
            editor.row(5).locator("button.delete").click()
            editor.wait(before + 1)  # the list as it stands
            assert "changed or deleted meanwhile" in (editor.page.text_content("#status") or "")
            lists["t1"] = lists["t1"][:5]
            assert editor.texts() == lists["t1"]
        finally:
            org.close()
        server.kill()  # the assessors are given the lists as they stand at the start
        with Store(load_config(str(campaign), strict=False).store, read_only=True) as store:
            history = store.nugget_history(JUDGE, "t1")
        people = [v for v in history if v.origin == "person"]
        assert {v.made_by for v in people} == {"org"} and len(people) == 6
        assert {v.deleted_by for v in history if v.deleted_at is not None} == {"org"}
        server.start()
        ann = Assessor(browser, "ann", link_on(links["ann"], server.port), pressed, server.url)
        bob = Assessor(browser, "bob", link_on(links["bob"], server.port), pressed, server.url)
        assert ann.showing() is not None and bob.showing() is not None
        assert ann.showing()[0] != bob.showing()[0]  # topic by topic: one each
        shoot(ann.page, tmp_path, "nuggets-1366.png")
        shoot(ann.page, tmp_path, "nuggets-1920.png", width=1920)
        for name in RUNS.values():  # blind
            assert name not in ann.page.content() and name not in bob.page.content()
        csrf = ann.page.get_attribute('meta[name="csrf"]', "content") or ""
        answer = ann.page.request.post(server.url + "nuggets/api/next",
                                       headers={"X-CSRF-Token": csrf})
        assert answer.ok and not any(name in answer.text() for name in RUNS.values())
        topic = ann.showing()[0]
        assert [n["text"] for n in answer.json()["item"]["nuggets"]] == \
            [t for t, _ in lists[topic]]

        item = ann.showing()
        assert item is not None
        assert ann.judge((_label(item[1], item[2]) + 1) % 3)  # a mistake ...
        ann.press("u")  # ... undone
        assert ann.showing() == item and "Judging again" in ann.page.text_content("#status")
        assert ann.judge() and bob.judge()
        # the next nugget of the same answer, the first one's label in the list
        assert ann.page.locator("#nuggets .state").count() == 1

        server.kill()
        server.start()
        assert ann.judge() and bob.judge()  # saved without a reload (the ticket)
        while any([ann.judge(), bob.judge()]):
            pass
        assert "All your topics are judged" in (ann.page.text_content("#status") or "")
        assert not ann.page.errors and not bob.page.errors
        org = client(server.url, link_on(organiser, server.port))
        try:
            progress = org.get("/api/progress").json()
            assert (progress["judged"], progress["total"]) == (len(pressed) - 1,) * 2
            assert progress["leaderboard"] == [] and progress["unit"] == "nuggets of answers"
            served = org.get("/qrels")
            assert served.status_code == 200 and served.text
        finally:
            org.close()
    finally:
        server.stop()

    assert _stored(campaign) == pressed
    units = {(q, n, a) for _, q, n, a, _ in pressed}
    assert len(units) == len(pressed) - 1
    answers = {(q, a) for q, _, a in units}
    assert len(units) == sum(len(lists[q]) for q, _ in answers)  # every nugget of each
    out = tmp_path / "qrels"
    cli_out("qrels", str(campaign), "--nuggets", "-o", str(out), "--judge", JUDGE,
            "--judge", "ann", "--judge", "bob", env=env)
    assert (out / "assignments.jsonl").read_text() == served.text
    final = {(q, n, a): label for _, q, n, a, label in pressed}
    names = {2: "support", 1: "partial_support", 0: "not_support"}
    for line in served.text.splitlines():
        obj = json.loads(line)
        assert [n["text"] for n in obj["nuggets"]] == [t for t, _ in lists[obj["qid"]]]
        for n in obj["nuggets"]:
            assert n["assignment"] == names[final[(obj["qid"], n["text"],
                                                   answer_key(obj["qid"], obj["run_id"]))]]


@pytest.mark.timeout(60)
def test_nuggets_refuses_what_it_cannot_serve(campaign, capsys):
    from irbench import cli

    code = cli.main(["assess", str(campaign), "--pool", "web", "--nuggets", JUDGE,
                     "--support"])
    assert code != 0 and "two servers" in capsys.readouterr().err
    code = cli.main(["assess", str(campaign), "--pool", "web", "--nuggets", JUDGE,
                     "--levels", "0,1"])
    assert code != 0 and "--nuggets has its own keys" in capsys.readouterr().err
    code = cli.main(["assess", str(campaign), "--pool", "web", "--nuggets", "nobody",
                     "--port", "1"])
    err = capsys.readouterr().err
    assert code != 0 and "no nugget list of that judge" in err and JUDGE in err
