"""The desk's support screen (``irbench assess CONFIG --pool NAME --support``), on a real uvicorn
server in a process of its own, driven by Playwright on Debian's Chromium: two assessors judge
the support units of a small answer campaign (each sentence highlighted in its answer, the
cited segment beside it, keys 2/1/0), one of them undoes a key; the server is SIGKILLed and
started again, and the next key pressed on each open page is saved without a reload; the store's
support labels equal the keys pressed, in order, and ``irbench qrels --support`` writes them.
No run id is on the page or in the calls' answers."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from answer_campaign import RUNS, TOPICS, answer_campaign, cli_out, link_on, shoot
from desk_server import ROOT, Server, client, needs_chromium, open_page

from irbench.config import load_config
from irbench.store import Store

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
expect = playwright.expect
pytestmark = needs_chromium
def _label(sentence: str, segment: str) -> int:
    """The key an assessor presses for a unit: fixed by its sentence and segment."""
    return int(hashlib.sha256(f"{sentence}\0{segment}".encode()).hexdigest(), 16) % 3




@pytest.fixture
def campaign(tmp_path, monkeypatch) -> Path:
    return answer_campaign(tmp_path, monkeypatch)


class Assessor:
    """One assessor's page, and the keys they pressed: (judge, topic, sentence, segment,
    label) in order."""

    def __init__(self, browser, name: str, link: str, pressed: list):
        self.name, self.pressed = name, pressed
        self.page = open_page(browser, link, width=1366, height=800)

    def answered(self) -> int:
        return int(self.page.get_attribute("body", "data-answered") or 0)

    def showing(self) -> tuple[str, str, str] | None:
        if self.page.locator("#work").is_hidden():
            return None
        return (self.page.text_content("#topic-id") or "",
                self.page.text_content("#sentence") or "",
                self.page.text_content("#doc-id") or "")

    def press(self, key: str) -> None:
        before = self.answered()
        self.page.keyboard.press(key)
        expect(self.page.locator("body")).to_have_attribute("data-answered", str(before + 1))
        status = self.page.text_content("#status") or ""
        assert not status.startswith("Not saved"), status

    def judge(self, label: int | None = None) -> bool:
        """Press the unit's key (``label`` instead when given); False: nothing left to judge
        (after looking again)."""
        item = self.showing()
        if item is None and self.page.locator("#again").is_visible():
            before = self.answered()
            self.page.click("#again")
            expect(self.page.locator("body")).to_have_attribute("data-answered",
                                                                str(before + 1))
            item = self.showing()
        if item is None:
            return False
        self._check_highlight(item[1])
        key = _label(item[1], item[2]) if label is None else label
        self.press(str(key))
        self.pressed.append((self.name, item[0], item[1], item[2], key))
        return True

    def _check_highlight(self, sentence: str) -> None:
        """The sentence is highlighted within its answer, the segment's text beside it."""
        assert self.page.text_content("#answer mark") == sentence
        assert sentence in (self.page.text_content("#answer") or "")
        segment = self.page.text_content("#doc-id") or ""
        assert segment in (self.page.text_content("#doc-text") or "")


def _stored(config: Path) -> list[tuple]:
    """The store's support labels, in the order recorded."""
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        c = store.answer_label_columns("support")
    rows = sorted(zip(c["position"].tolist(), c["judge"].tolist(), c["query_id"].tolist(),
                      c["sentence_text"].tolist(), c["reference"].tolist(),
                      c["label"].tolist(), c["judge_kind"].tolist(), c["run_id"].tolist()))
    assert {(kind, run) for *_, kind, run in rows} == {("human", None)}
    return [(j, q, s, r, int(label)) for _, j, q, s, r, label, _, _ in rows]


@pytest.mark.timeout(600)
def test_two_assessors_judge_support_through_a_kill(campaign, tmp_path, browser):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli_out("pool", "start", str(campaign), "--name", "web", "--strategy", "depth",
         "--param", "k=2", env=env)
    links = {name: cli_out("assess", str(campaign), "--pool", "web", "--add-assessor", name,
                        env=env) for name in ("ann", "bob")}
    organiser = cli_out("assess", str(campaign), "--pool", "web", "--add-assessor", "org",
                     "--organiser", env=env)
    server = Server(campaign, extra=("--support",))
    pressed: list[tuple] = []
    try:
        ann = Assessor(browser, "ann", link_on(links["ann"], server.port), pressed)
        bob = Assessor(browser, "bob", link_on(links["bob"], server.port), pressed)
        assert ann.showing() is not None and bob.showing() is not None
        assert ann.showing()[0] != bob.showing()[0]  # topic by topic: one each
        shoot(ann.page, tmp_path, "support-1366.png")
        shoot(ann.page, tmp_path, "support-1920.png", width=1920)

        # blind: no run id on the page, nor in what the calls answer
        for name in RUNS.values():
            assert name not in ann.page.content() and name not in bob.page.content()
        csrf = ann.page.get_attribute('meta[name="csrf"]', "content") or ""
        answer = ann.page.request.post(server.url + "support/api/next",
                                       headers={"X-CSRF-Token": csrf})
        assert answer.ok and answer.json()["item"]["sentence"] == ann.showing()[1]
        assert not any(name in answer.text() for name in RUNS.values())

        # a key pressed by mistake, undone, and the right one pressed
        item = ann.showing()
        assert item is not None
        wrong = (_label(item[1], item[2]) + 1) % 3
        assert ann.judge(wrong)
        ann.press("u")
        assert ann.showing() == item
        assert "Judging again" in (ann.page.text_content("#status") or "")
        assert ann.judge()
        assert bob.judge()

        server.kill()  # a crash: the pages stay open
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
            served = org.get("/qrels")  # the support labels, as qrels --support writes them
            assert served.status_code == 200 and served.text
        finally:
            org.close()
    finally:
        server.stop()

    assert _stored(campaign) == pressed
    final = {(q, s, r): label for _, q, s, r, label in pressed}
    units = {(q, s, r) for _, q, s, r, _ in pressed}
    assert len(units) == len(pressed) - 1  # every unit once, the undone one twice
    assert {q for q, _, _ in units} == set(TOPICS)

    out = tmp_path / "support.jsonl"
    cli_out("qrels", str(campaign), "--support", "-o", str(out), env=env)
    assert out.read_text() == served.text
    written = {}
    for line in out.read_text().splitlines():
        obj = json.loads(line)
        for sentence in obj["sentences"]:
            for cited in sentence["citations"]:
                written[(obj["topic_id"], sentence["text"], cited["reference"])] = \
                    cited["support"]
    assert written == final


@pytest.mark.timeout(60)
def test_support_refuses_relevance_options(campaign, capsys):
    from irbench import cli

    for extra in (["--suggest", "umbrela"], ["--levels", "0,1"]):
        code = cli.main(["assess", str(campaign), "--pool", "web", "--support", *extra])
        assert code != 0
        assert "--support has its own keys" in capsys.readouterr().err
