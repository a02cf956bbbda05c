"""The assessor's and organiser's pages for a day's work (issue 37) as a person uses them: a
real uvicorn server (``python -m irbench assess``) driven by Playwright on Debian's Chromium.
The keys carry the levels' names (``--levels``), the docno is shown, the keyboard scrolls a
long document without judging, the finished page shows no document nor keys and says whether
all is judged or to come back later, the organiser's page counts judgments (not clicks) and
shows the budget per topic and who holds which topic. Screenshots at 1366x768, 1920x1080 and a
tablet (820x1180) go to the test's folder and to ``$IRBENCH_SHOTS`` when set. Skipped where
Chromium is missing."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import pytest
from desk_server import Server, add_link, needs_chromium, open_page, sign_in

from irbench import cli

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
expect = playwright.expect
pytestmark = needs_chromium
LEVELS = "0:not relevant,1:related,2:<b>highly</b> relevant"
SIZES = {"1366": (1366, 768), "1920": (1920, 1080), "tablet": (820, 1180)}
LONG = "".join(f"Line {i} of a long document, read by scrolling.\n" for i in range(300))


def _shots() -> Path | None:
    """Where the screenshots are copied for a person to look at (None: nowhere)."""
    given = os.environ.get("IRBENCH_SHOTS")
    return Path(given) if given else None


def _shot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    shots = _shots()
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, shots / path.name)
    return path


@pytest.fixture
def server(tmp_path, capsys):
    """Pool 'web' (depth 3, a budget of 4 per topic) of long documents; ann and bob both judge
    topic 401 only, cat 402; org is the organiser."""
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "4"]) == 0
    docs = folder / "documents.sgml.gz"
    text = gzip.decompress(docs.read_bytes()).decode().replace("</TEXT>", LONG + "</TEXT>")
    docs.write_bytes(gzip.compress(text.encode(), mtime=0))
    config = folder / "campaign.yaml"
    assert cli.main(["pool", "start", str(config), "--name", "web", "--strategy", "depth",
                     "--param", "k=3", "--budget", "4"]) == 0
    links = {name: add_link(config, name, capsys, *extra)
             for name, extra in (("ann", ["--topics", "401"]), ("bob", ["--topics", "401"]),
                                 ("cat", ["--topics", "402"]), ("org", ["--organiser"]))}
    srv = Server(config, extra=("--levels", LEVELS))
    srv.links = {k: srv.on_port(v) for k, v in links.items()}
    yield srv
    srv.stop()


def _open(browser, link: str, size: str = "1366", wait_document: bool = True):
    return open_page(browser, link, *SIZES[size], document=wait_document)


def _answered(page, n: int) -> None:
    # locator assertions wait without evaluating strings (the pages' CSP forbids eval)
    expect(page.locator("body")).to_have_attribute("data-answered", str(n))


def _scroll_top(page) -> int:
    return page.locator("#doc-text").evaluate("t => t.scrollTop")


def _rows(page, table: str) -> dict[str, list[str]]:
    """A table's rows by their first cell, each cell's text."""
    rows = [[" ".join(c.split()) for c in row.locator("td").all_inner_texts()]
            for row in page.locator(f"{table} tbody tr").all()]
    return {row[0]: row for row in rows}


def _qrels(browser, server) -> list[str]:
    org = browser.new_page()
    sign_in(org, server.links["org"])
    response = org.request.get(server.url + "qrels")
    assert response.status == 200
    return response.text().splitlines()


@pytest.mark.timeout(180)
def test_named_keys_the_docno_and_keys_that_scroll_without_judging(server, browser):
    page = _open(browser, server.links["ann"])
    keys = [" ".join(b.inner_text().split()) for b in page.locator("button.level").all()]
    assert keys == ["0 not relevant", "1 related", "2 <b>highly</b> relevant"]  # as text
    assert page.locator("button.level b").count() == 0
    docno = page.text_content("#doc-id")
    assert re.fullmatch(r"SIM-\d{8}", docno) and page.locator("#doc-id").is_visible()
    assert page.text_content("#topic-id") == "401"
    expect(page.locator("#topic-progress")).to_have_text(re.compile(r"^0 of 4 for this topic$"))
    text = page.locator("#doc-text")
    assert text.evaluate("t => t.scrollHeight > 3 * t.clientHeight")  # a long document
    assert _scroll_top(page) == 0
    page.keyboard.press("PageDown")
    first = _scroll_top(page)
    assert first > 0
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    assert _scroll_top(page) > first
    page.keyboard.press("End")
    assert text.evaluate("t => t.scrollTop + t.clientHeight >= t.scrollHeight - 1")
    page.keyboard.press("PageUp")
    page.keyboard.press("ArrowUp")
    assert 0 < _scroll_top(page) < text.evaluate("t => t.scrollHeight - t.clientHeight")
    page.keyboard.press("Home")
    assert _scroll_top(page) == 0
    page.focus('button.level[data-level="2"]')  # a focused key: Space still only scrolls
    page.keyboard.press("Space")
    assert _scroll_top(page) > 0
    page.click('button.level[data-level="1"]', modifiers=[])  # a click judges, lets go of focus
    _answered(page, 2)
    expect(page.locator("#progress")).to_have_text("1 of 4 judged")
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("Space")  # scrolls the next document; judges nothing
    page.keyboard.press("0")
    _answered(page, 3)
    expect(page.locator("#topic-progress")).to_have_text("2 of 4 for this topic")
    qrels = _qrels(browser, server)
    assert sorted(line.split()[3] for line in qrels) == ["0", "1"]  # no 2: Space judged none
    assert any(line.split()[2] == docno for line in qrels)  # the docno shown is the one judged
    page.keyboard.press("u")  # the label said with its name
    _answered(page, 4)
    expect(page.locator("#status")).to_have_text("Judging again: you said 0 (not relevant).")
    assert page.errors == []


@pytest.mark.timeout(180)
def test_the_finished_page_says_come_back_later_then_all_judged(server, browser, tmp_path):
    """Before: the finished page kept the last document and the keys on screen (main's
    display overrode [hidden]), and an assessor whose topics were all judged read 'come back
    later'. Now: ann holds topic 401, bob's only topic: bob's page is empty and says to come
    back later; once ann judged 401 to the end, both read 'all judged', with nothing else on
    screen."""
    ann = _open(browser, server.links["ann"])
    bob = _open(browser, server.links["bob"], "tablet", wait_document=False)
    expect(bob.locator("#status")).to_contain_text("Nothing to judge right now")
    expect(bob.locator("#status")).to_contain_text("Come back later.")
    for hidden in ("#work", "#keys", "#doc-text", "button.level >> nth=0", "#help"):
        expect(bob.locator(hidden)).to_be_hidden()
    expect(bob.locator("#again")).to_be_visible()
    _shot(bob, tmp_path, "assess-later-tablet")
    for n in range(4):
        expect(ann.locator("#work")).to_be_visible()
        ann.keyboard.press("2")
        _answered(ann, n + 2)
    expect(ann.locator("#status")).to_have_text("All your topics are judged. Thank you!")
    for hidden in ("#work", "#keys", "#doc-text", "#again", "#help"):
        expect(ann.locator(hidden)).to_be_hidden()
    expect(ann.locator("#progress")).to_have_text("4 of 4 judged")
    _shot(ann, tmp_path, "assess-finished-1366")
    bob.click("#again")
    _answered(bob, 2)
    expect(bob.locator("#status")).to_have_text("All your topics are judged. Thank you!")
    expect(bob.locator("#again")).to_be_hidden()
    assert ann.errors == [] and bob.errors == []


@pytest.mark.timeout(240)
def test_the_organiser_counts_judgments_after_an_undo_and_the_pages_at_three_sizes(
        server, browser, tmp_path):
    """Before: an undo and a new label made 'judged' 2 for one document; no budget per
    topic, nobody's topic shown. Screenshots of both pages at each size."""
    ann = _open(browser, server.links["ann"])
    ann.keyboard.press("1")
    _answered(ann, 2)
    ann.keyboard.press("u")
    _answered(ann, 3)
    ann.keyboard.press("2")
    _answered(ann, 4)
    expect(ann.locator("#progress")).to_have_text("1 of 4 judged")
    for size, (width, height) in SIZES.items():
        page = _open(browser, server.links["ann"], size)
        for shown in ("#doc-id", "#keys", "button.level >> nth=2", "#topic-progress"):
            expect(page.locator(shown)).to_be_visible()
        keys = page.locator("#keys").bounding_box()
        assert keys["x"] >= 0 and keys["x"] + keys["width"] <= width
        _shot(page, tmp_path, f"assess-{size}")
        org = browser.new_context(viewport={"width": width, "height": height}).new_page()
        sign_in(org, server.links["org"])
        body = " ".join(org.inner_text("body").split())
        assert "1 judgments made in the browser (2 labels given" in body
        assert "budget over all topics: unlimited" in body
        rows = _rows(org, "#assessors")
        assert rows["ann"][:4] == ["ann", "401", "1", "401"]  # 1: a document, not 2 clicks
        assert rows["bob"][:4] == ["bob", "401", "0", "-"]  # ann holds 401
        assert rows["cat"][:4] == ["cat", "402", "0", "-" if size == "1366" else "402"]
        topics = _rows(org, "#topics")
        assert topics["401"] == ["401", "1", "4", "4", "ann", "ann 1"]
        assert topics["402"][3:5] == ["4", "-" if size == "1366" else "cat"]
        assert topics["403"][3:] == ["4", "-", "-"]
        for table in org.locator("table").all():
            box = table.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
        _shot(org, tmp_path, f"organiser-{size}")
        if size == "1366":  # cat opens her page after the first round: 402 is hers then
            _open(browser, server.links["cat"])
    assert ann.errors == []
