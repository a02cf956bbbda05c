"""irbench assess as a person uses it: a real uvicorn server (``python -m irbench assess``)
driven by Playwright on Debian's Chromium. Skipped, with a message, where either is missing."""

from __future__ import annotations

import gzip
import re

import pytest
import yaml
from desk_server import Server, add_link, client, needs_chromium, open_page, sign_in

from irbench import cli

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
expect = playwright.expect
pytestmark = needs_chromium
HOSTILE = ("&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt; &lt;script&gt;window.pwned=2"
           "&lt;/script&gt;")


@pytest.fixture
def campaign(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "4"]) == 0
    docs = folder / "documents.sgml.gz"  # every document carries markup that must stay text
    text = gzip.decompress(docs.read_bytes()).decode().replace("</TEXT>", HOSTILE + "\n</TEXT>")
    docs.write_bytes(gzip.compress(text.encode(), mtime=0))
    config = folder / "campaign.yaml"
    assert cli.main(["pool", "start", str(config), "--name", "web", "--strategy", "depth",
                     "--param", "k=4"]) == 0
    links = {name: add_link(config, name, capsys, *extra)
             for name, extra in (("ann", ["--topics", "401,402"]),
                                 ("bob", ["--topics", "402,403"]), ("org", ["--organiser"]))}
    return config, links


@pytest.fixture
def server(campaign):
    config, links = campaign
    srv = Server(config, overlap=0.5)
    srv.links = {k: srv.on_port(v) for k, v in links.items()}
    yield srv
    srv.stop()


def _judged(page) -> int:
    return int(page.text_content("#progress").split()[0])


def _wait_judged(page, n: int) -> None:
    # locator assertions wait without evaluating strings (the pages' CSP forbids eval)
    expect(page.locator("#progress")).to_have_text(re.compile(rf"^{n} of \d+ judged$"))


def _wait_answered(page, n: int) -> None:
    expect(page.locator("body")).to_have_attribute("data-answered", str(n))


def test_judge_by_keyboard_undo_reload_and_resume(server, browser, tmp_path):
    page = open_page(browser, server.links["ann"])
    page.screenshot(path=str(tmp_path / "assess-1366.png"))
    first = page.text_content("#topic-id")
    assert first in ("401", "402") and page.text_content("#topic-title")
    assert page.locator("mark").count() > 0  # the query's words highlighted
    doc = page.text_content("#doc-title")
    page.keyboard.press("1")  # each key waits for its answer before the next (as a person)
    _wait_answered(page, 2)
    _wait_judged(page, 1)
    page.keyboard.press("u")  # undo: the same document again, the label shown
    _wait_answered(page, 3)
    expect(page.locator("#status")).to_contain_text("you said 1")
    assert page.text_content("#doc-title") == doc
    page.keyboard.press("2")
    _wait_answered(page, 4)
    _wait_judged(page, 1)
    page.keyboard.press("0")
    _wait_answered(page, 5)
    _wait_judged(page, 2)
    expect(page.locator("#topic-progress")).to_have_text(re.compile(r"^\d+ of \d+ for this topic$"))
    before = page.text_content("#doc-title")
    page.keyboard.press("s")  # skip: another document, nothing judged
    _wait_answered(page, 6)
    assert page.text_content("#doc-title") != before and _judged(page) == 2
    page.reload()
    expect(page.locator("#doc-text")).not_to_be_empty()
    _wait_judged(page, 2)  # resumed: what was judged stays judged
    assert page.errors == []
    qrels = _organiser_qrels(browser, server)
    assert len(qrels) == 2 and any(line.endswith(" 2") for line in qrels)


def _organiser_qrels(browser, server) -> list[str]:
    page = browser.new_page()
    sign_in(page, server.links["org"])
    assert "PROVISIONAL" in page.content()
    response = page.request.get(server.url + "qrels")
    assert response.status == 200
    return response.text().splitlines()


def test_a_hostile_document_stays_text(server, browser):
    page = open_page(browser, server.links["ann"])
    text = page.text_content("#doc-text")
    assert '<img src=x onerror="window.pwned=1">' in text and "<script>" in text
    assert page.evaluate("window.pwned") is None
    assert page.locator("#doc-text img, #doc-text script").count() == 0
    assert page.errors == []


def test_tokens_topics_and_csrf(server, browser):
    ann = open_page(browser, server.links["ann"])
    bob = open_page(browser, server.links["bob"])
    assert bob.text_content("#topic-id") in ("402", "403")
    csrf = ann.get_attribute("meta[name=csrf]", "content")
    # bob's session cannot judge a topic of ann's alone
    answer = bob.request.post(server.url + "api/judge", headers={
        "X-CSRF-Token": bob.get_attribute("meta[name=csrf]", "content"),
        "Content-Type": "application/json"},
        data='{"query_id": "401", "doc_id": "SIM-00000001", "relevance": 1}')
    assert answer.status == 400
    # ann's CSRF token is not bob's
    answer = bob.request.post(server.url + "api/judge", headers={"X-CSRF-Token": csrf},
                              data='{"query_id": "402", "doc_id": "x", "relevance": 1}')
    assert answer.status == 403
    # no token, a wrong token: refused
    fresh = browser.new_context().new_page()
    assert fresh.request.post(server.url + "api/next").status == 401
    assert fresh.request.get(server.url + "api/next").status == 405  # a change: POST only
    fresh.goto(server.url + "?token=not-a-token")
    assert "not valid" in fresh.content() and not fresh.context.cookies()
    # an assessor cannot read the organiser's pages
    assert ann.request.get(server.url + "qrels").status == 403
    assert ann.request.get(server.url + "api/progress").status == 403


def test_two_assessors_in_parallel_then_a_killed_server_loses_nothing(server, browser,
                                                                      tmp_path):
    ann = open_page(browser, server.links["ann"])
    bob = open_page(browser, server.links["bob"], width=820, height=1180)  # a tablet
    for i in range(3):
        ann.keyboard.press("1")
        bob.keyboard.press("0")
        _wait_answered(ann, i + 2)  # the first document, then one per judgment
        _wait_answered(bob, i + 2)
    bob.screenshot(path=str(tmp_path / "assess-tablet.png"))
    org = browser.new_page()
    sign_in(org, server.links["org"])
    before = re.search(r"(\d+) of \d+ documents judged", org.inner_text("body")).group(0)
    server.kill()  # mid-topic: every acknowledged click is in the store
    server.start()
    ann.reload()
    expect(ann.locator("#doc-text")).not_to_be_empty()
    org.reload()
    body = " ".join(org.inner_text("body").split())
    assert "6 judgments made in the browser" in body
    assert before in body  # the pool's state caught up with every click
    assert "ann 401, 402 3" in body and "bob 402, 403 3" in body
    assert ann.errors == [] and bob.errors == []


def test_model_labels_are_suggestions_to_post_edit(campaign, tmp_path, browser):
    """A model judge labels the pool being judged first (irbench judge --pool web): the page
    shows its label as a suggestion, nothing preselected; the organiser sees how often it was
    kept."""
    from chat_server import ChatServer, rule_simulated

    config, links = campaign
    data = yaml.safe_load(config.read_text())
    with ChatServer(rule_simulated) as model:
        data["judges"] = {"standin": {"base_url": model.base_url, "model": "stand-in"}}
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        assert cli.main(["judge", str(config), "--judge", "standin", "--pool", "web"]) == 0
        assert model.calls > 0
    server = Server(config, overlap=0.5, extra=("--suggest", "standin"))
    try:
        page = open_page(browser, server.on_port(links["ann"]))
        suggestion = page.text_content("#suggestion")
        assert suggestion.startswith("A model judged this ") and "judge it yourself" in suggestion
        shown = int(suggestion.split()[4])
        assert page.locator("button.suggested").count() == 0  # a note, not outlined
        page.keyboard.press(str((shown + 1) % 3))  # changed
        _wait_answered(page, 2)
        shown = int(page.text_content("#suggestion").split()[4])
        page.keyboard.press(str(shown))  # kept
        _wait_answered(page, 3)
        org = browser.new_page()
        sign_in(org, server.on_port(links["org"]))
        assert "ann 401, 402 2" in " ".join(org.inner_text("body").split())
        assert "1 of 2" in org.inner_text("body")
    finally:
        server.stop()


@pytest.fixture
def elsewhere(tmp_path):
    """Another site: a static server on another port (pages written by the test)."""
    import functools
    import http.server
    import threading

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("localhost", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield folder, f"http://localhost:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_a_link_from_another_site_neither_signs_in_nor_out_by_itself(server, browser,
                                                                       elsewhere):
    folder, site = elsewhere
    (folder / "bob.html").write_text(f'<a id="go" href="{server.links["bob"]}">bob</a>')
    (folder / "ann.html").write_text(f'<a id="go" href="{server.links["ann"]}">ann</a>')
    ann = open_page(browser, server.links["ann"])
    assert ann.text_content(".who") == "ann"
    ann.goto(site + "bob.html")  # a page elsewhere sends ann's browser to bob's link
    ann.click("#go")
    expect(ann.locator("body")).to_contain_text("Sign in as bob")
    ann.goto(server.url)  # nothing changed behind her back
    expect(ann.locator(".who")).to_have_text("ann")
    # a person's own link in a mail or chat (another site) works with one click
    fresh = browser.new_context().new_page()
    fresh.goto(site + "ann.html")
    fresh.click("#go")
    fresh.click("text=Sign in as ann")
    fresh.wait_for_url(server.url)
    expect(fresh.locator("#doc-text")).not_to_be_empty()
    # signed in as ann, ann's browser opening bob's link here asks before switching
    ann.goto(server.links["bob"])
    expect(ann.locator("body")).to_contain_text("This browser is signed in as ann")
    ann.click("text=Continue as bob")
    ann.wait_for_url(server.url)
    expect(ann.locator(".who")).to_have_text("bob")


def test_the_api_refuses_what_a_page_never_sends(server, campaign):
    """Straight to the real server (httpx): documents not handed out, labels of the wrong
    type, bodies that are not JSON objects, an assessor name of another pool."""
    ann = client(server.url, server.links["ann"])
    bob = client(server.url, server.links["bob"])
    held = bob.post("/api/next").json()["item"]
    mine = ann.post("/api/next").json()["item"]
    if held["query_id"] == "402":  # a document of a shared topic, handed to bob, not ann
        answer = ann.post("/api/judge", json={**held, "relevance": 1})
        assert answer.status_code == 400 and "not handed to ann" in answer.json()["error"]
    for body in ({"query_id": mine["query_id"], "doc_id": mine["doc_id"], "relevance": True},
                 {"query_id": mine["query_id"], "doc_id": mine["doc_id"], "relevance": 7},
                 {"query_id": mine["query_id"], "doc_id": mine["doc_id"]}, [1, 2]):
        answer = ann.post("/api/judge", json=body)
        assert answer.status_code == 400 and "Traceback" not in answer.text, body
    answer = ann.post("/api/judge", content=b"[" * 8000,
                      headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json() == {"error": "not JSON"}
    assert ann.post("/api/judge", content=b"x" * 20_000).status_code == 413
    assert ann.post("/api/judge", json={**mine, "relevance": 1}).status_code == 200
    config, _ = campaign
    assert cli.main(["pool", "start", str(config), "--name", "other"]) == 3  # store is held


def test_the_pages_on_a_wide_screen(server, browser, tmp_path):
    """At 1920 px: the topic beside the document, the document's lines kept to a readable
    length rather than stretched across the screen, the organiser's tables in the window."""
    page = open_page(browser, server.links["ann"], 1920, 1080)
    topic = page.locator("section[aria-label=Topic]").bounding_box()
    text = page.locator("#doc-text").bounding_box()
    assert topic["x"] + topic["width"] <= text["x"] and abs(topic["y"] - text["y"]) < 80
    assert 500 <= text["width"] <= 1000  # about 90 characters a line at 16 px
    page.screenshot(path=str(tmp_path / "assess-1920.png"))
    assert page.errors == []
    org = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    sign_in(org, server.links["org"])
    expect(org.locator("h2.provisional")).to_be_visible()
    for table in org.locator("table").all():
        box = table.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1920
    org.screenshot(path=str(tmp_path / "organiser-1920.png"), full_page=True)
