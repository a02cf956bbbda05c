"""A day at the assessment desk, end to end (issue 37): a real uvicorn server (``python -m
irbench assess``) driven by Playwright on Debian's Chromium, two assessors and an organiser
judging a whole pool (depth-k and MTF):

* each assessor's topic changes only when that topic is done for them (the switches are
  counted: the topics they took, less one; no topic is taken twice);
* no assessor sees documents in the pool's rank order;
* the server is SIGKILLed and started again while the pages stay open, and the next keypress
  is saved without a reload;
* an assessor is added and one revoked from the command line while the server runs;
* ``/qrels`` equals ``irbench qrels --pool`` byte for byte;
* screenshots at 1366x768, 1920x1080 and a tablet (820x1180), in the test's folder (and in
  ``$IRBENCH_SHOTS`` when set), their paths printed.

Skipped where Chromium or Playwright is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from desk_server import ROOT, Server, free_port, needs_chromium, sign_in

from irbench import cli
from irbench.config import load_config
from irbench.store import Store

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
expect = playwright.expect
pytestmark = needs_chromium
SIZES = {"1366": (1366, 768), "1920": (1920, 1080), "tablet": (820, 1180)}


def _cli(*args: str, env: dict) -> str:
    """``python -m irbench ARGS`` as an organiser types it (another process than the
    server's); its output."""
    done = subprocess.run([sys.executable, "-m", "irbench", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _link(out: str, port: int) -> str:
    return out.strip().rsplit(" ", 1)[1].replace(":8765/", f":{port}/")


class Desk:
    """One person's page, and what they judged: (topic, docno) in order."""

    def __init__(self, chromium, link: str, size: str):
        width, height = SIZES[size]
        self.page = chromium.new_context(viewport={"width": width, "height": height}).new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        sign_in(self.page, link)
        self.seen: list[tuple[str, str]] = []

    def answered(self) -> int:
        return int(self.page.get_attribute("body", "data-answered") or 0)

    def showing(self) -> tuple[str, str] | None:
        if self.page.locator("#work").is_hidden():
            return None
        return self.page.text_content("#topic-id"), self.page.text_content("#doc-id")

    def wait_shown(self) -> None:
        expect(self.page.locator("body")).not_to_have_attribute("data-answered", "0")

    def judge(self) -> bool:
        """Press the key of this document's label (a fixed one per docno); False when there
        is nothing to judge (after looking again, when the page says to come back later)."""
        item = self.showing()
        if item is None and self.page.locator("#again").is_visible():
            before = self.answered()
            self.page.click("#again")
            expect(self.page.locator("body")).to_have_attribute("data-answered",
                                                                str(before + 1))
            item = self.showing()
        if item is None:
            return False
        before = self.answered()
        self.page.keyboard.press(str(_label(item[1])))
        expect(self.page.locator("body")).to_have_attribute("data-answered", str(before + 1))
        self.seen.append(item)
        return True

    def shot(self, tmp_path: Path, name: str) -> Path:
        path = tmp_path / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        if os.environ.get("IRBENCH_SHOTS"):
            folder = Path(os.environ["IRBENCH_SHOTS"])
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, folder / path.name)
        print(f"screenshot: {path}")
        return path


def _label(docno: str) -> int:
    return int(re.sub(r"\D", "", docno) or 0) % 3


def _best_rank(config: Path) -> dict[tuple[str, str], int]:
    """(topic, docno) -> its best rank in any run: the pool's rank order."""
    table = load_config(config).run_table()
    best = np.full(table.num_candidates, np.iinfo(np.int64).max)
    np.minimum.at(best, table.cand, table.rank.astype(np.int64))
    topics = [t.decode() for t in table.topics[table.cand_topic]]
    docs = [d.decode() for d in table.docs[table.cand_doc]]
    return {(q, d): int(r) for q, d, r in zip(topics, docs, best)}


def _blocks(seen: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """What an assessor judged, cut where the topic changes."""
    blocks: list[list[tuple[str, str]]] = []
    for item in seen:
        if not blocks or blocks[-1][-1][0] != item[0]:
            blocks.append([])
        blocks[-1].append(item)
    return blocks


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "4",
                     "--pool-depth", "8", "--seed", "9"]) == 0
    return folder / "campaign.yaml"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("strategy", [("depth", "--param", "k=4"), ("mtf", "--budget", "7")],
                         ids=["depth", "mtf"])
def test_a_day_at_the_desk(campaign, tmp_path, browser, strategy):
    config = campaign
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IRBENCH_CACHE_DIR": str(tmp_path / "cache")}
    _cli("pool", "start", str(config), "--name", "web", "--strategy", *strategy, env=env)
    port = free_port()
    links = {name: _link(_cli("assess", str(config), "--pool", "web", "--add-assessor", name,
                              *extra, env=env), port)
             for name, extra in (("ann", ()), ("bob", ()), ("org", ("--organiser",)))}
    server = Server(config, overlap=0.5, env=env, port=port)
    try:
        ann = Desk(browser, links["ann"], "1366")
        bob = Desk(browser, links["bob"], "1920")
        for desk in (ann, bob):
            desk.wait_shown()
        for _ in range(5):
            assert ann.judge() and bob.judge()
        ann.shot(tmp_path, f"day-{strategy[0]}-assessor-1366")
        bob.shot(tmp_path, f"day-{strategy[0]}-assessor-1920")

        server.kill()  # SIGKILL, pages open
        server.start()
        for desk in (ann, bob):  # the next keypress is saved, no reload
            assert desk.judge()
            expect(desk.page.locator("#status")).not_to_contain_text("Not saved")

        carl_link = _link(_cli("assess", str(config), "--pool", "web", "--add-assessor",
                               "carl", env=env), port)  # while the server runs
        carl = Desk(browser, carl_link, "tablet")
        carl.wait_shown()
        assert carl.judge()
        carl.shot(tmp_path, f"day-{strategy[0]}-assessor-tablet")
        _cli("assess", str(config), "--pool", "web", "--revoke", "bob", env=env)
        item = bob.showing()
        bob.page.keyboard.press(str(_label(item[1])))
        expect(bob.page.locator("#status")).to_contain_text("Not saved")

        while any([ann.judge(), carl.judge()]):
            pass
        for desk in (ann, carl):
            expect(desk.page.locator("#status")).to_contain_text("judged")
        ann.shot(tmp_path, f"day-{strategy[0]}-finished-1366")
        org = Desk(browser, links["org"], "1920")
        org.shot(tmp_path, f"day-{strategy[0]}-organiser-1920")
        for size in ("1366", "tablet"):
            org.page.set_viewport_size(dict(zip(("width", "height"), SIZES[size])))
            org.shot(tmp_path, f"day-{strategy[0]}-organiser-{size}")
        served = org.page.request.get(f"http://127.0.0.1:{port}/qrels")
        assert served.status == 200
        exported = served.body()
        errors = ann.errors + bob.errors + carl.errors + org.errors
    finally:
        log = server.stop()
    assert "Traceback" not in log and errors == []

    out = tmp_path / "web.qrels"
    _cli("qrels", str(config), "--pool", "web", "-o", str(out), env=env)
    assert out.read_bytes() == exported  # one rule, byte for byte

    with Store(str(load_config(config).store)) as store:
        clicks = store.clicks("web")
        pool = store.load_pool("web")
    assert len(clicks) == len(ann.seen) + len(bob.seen) + len(carl.seen)
    assert [(c.query_id, c.doc_id) for c in clicks if c.judge == "ann"] == ann.seen

    best = _best_rank(config)
    summary = {}
    for name, desk in (("ann", ann), ("bob", bob), ("carl", carl)):
        blocks = _blocks(desk.seen)
        topics = [b[0][0] for b in blocks]
        assert len(topics) == len(set(topics)), (name, topics)  # never back to a topic
        ranks = [[best[item] for item in b] for b in blocks]
        summary[name] = {"judged": len(desk.seen), "topics": topics,
                         "switches": len(blocks) - 1,
                         "blocks_in_rank_order": sum(r == sorted(r) for r in ranks if len(r) > 2),
                         "blocks": sum(len(r) > 2 for r in ranks)}
        long = [r for r in ranks if len(r) > 2]
        assert not long or any(r != sorted(r) for r in long), (name, ranks)
    everyone = [item for d in (ann, bob, carl) for item in d.seen]
    assert len(set(everyone)) == len(exported.decode().splitlines())  # all judged, once each
    assert pool is not None
    print("the day:", json.dumps(summary))
    (tmp_path / "day.json").write_text(json.dumps(summary))
