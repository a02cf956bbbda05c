"""Sign-ins that survive a restart, and people changed while ``irbench assess`` runs (issue
37): the pool's CSRF secret kept in the store (a page open across a SIGKILL and a restart
saves its next keypress without a reload), assessors added, revoked and given other topics
from the command line (through the running server: the store is held by it) and from the
organiser's page. A real ``python -m irbench assess`` process; the pages in Playwright on
Debian's Chromium (those tests skipped where either is missing)."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import httpx
import pytest
from desk_server import CHROMIUM, Server, client, open_page, sign_in

from irbench import cli
from irbench.config import load_config
from irbench.store import Store


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    """A pool 'web' (depth 4 over topics 401-403; a pool 'news' too), ann (401), bob (402)
    and the organiser org; their links by name."""
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "4"]) == 0
    config = folder / "campaign.yaml"
    for name in ("web", "news"):
        assert cli.main(["pool", "start", str(config), "--name", name, "--strategy", "depth",
                         "--param", "k=4"]) == 0
    return config


def _cli(config: Path, capsys, *args: str, pool: str = "web") -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(["assess", str(config), "--pool", pool, *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _link(config: Path, capsys, name: str, *extra: str, pool: str = "web") -> str:
    code, out, err = _cli(config, capsys, "--add-assessor", name, *extra, pool=pool)
    assert code == 0, err
    assert out.startswith(f"{name}'s link (keep it private; it is shown once): "), out
    return out.strip().rsplit(" ", 1)[1]


@pytest.fixture
def server(campaign, capsys):
    links = {"ann": _link(campaign, capsys, "ann", "--topics", "401"),
             "bob": _link(campaign, capsys, "bob", "--topics", "402"),
             "org": _link(campaign, capsys, "org", "--organiser")}
    srv = Server(campaign)
    srv.links = {k: srv.on_port(v) for k, v in links.items()}
    yield srv
    srv.stop()


def _judge_next(client: httpx.Client) -> dict:
    item = client.post("/api/next").json()["item"]
    answer = client.post("/api/judge", json={"query_id": item["query_id"],
                                             "doc_id": item["doc_id"], "relevance": 1})
    assert answer.status_code == 200, answer.text
    return item


def _clicks(config: Path) -> list[tuple[str, str]]:
    with Store(load_config(config).store, read_only=True) as store:
        return [(c.judge, c.query_id) for c in store.clicks("web")]


# -- the command line while the server runs


@pytest.mark.timeout(180)
def test_an_assessor_added_from_the_command_line_judges_and_revoked_is_refused(
        server, campaign, capsys):
    """Before: --add-assessor while the server ran failed (the store is held: 'in use by
    another process'), and a link added before a start was the only kind that worked. Now the
    command line asks the running server: the new link signs in at once and judges; revoked,
    the very next call of that browser is 401; the revoked row and judgments stay."""
    store = load_config(campaign).store
    runtime = Path(store + ".assess.json")
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o600  # the admin secret: the owner's only
    link = _link(campaign, capsys, "cat", "--topics", "403")
    assert link.startswith(server.url + "?token=")  # the server's own address
    cat = client(server.url, link)
    item = _judge_next(cat)
    assert item["query_id"] == "403"
    code, out, err = _cli(campaign, capsys, "--revoke", "cat")
    assert code == 0 and "cat's link no longer works" in out, err
    refused = cat.post("/api/next")
    assert refused.status_code == 401 and refused.json() == {"error": "no valid token"}
    assert cat.get("/").status_code == 401
    code, out, err = _cli(campaign, capsys, "--revoke", "cat")  # twice: said, not silent
    assert code == 1 and "'cat' was revoked already" in err
    ann = client(server.url, server.links["ann"])  # the others unaffected
    assert _judge_next(ann)["query_id"] == "401"
    printed = server.stop()
    assert not runtime.exists()  # removed at a clean stop
    assert ("cat", "403") in _clicks(campaign) and ("ann", "401") in _clicks(campaign)
    with Store(store, read_only=True) as db:
        cat_row = [a for a in db.assessors("web") if a.name == "cat"][0]
        assert cat_row.revoked and db.assessor_tokens("web").keys().isdisjoint({"cat"})
    assert "Traceback" not in printed


@pytest.mark.timeout(180)
def test_topics_reassigned_from_the_command_line_take_effect_at_the_next_document(
        server, campaign, capsys):
    """ann holds a document of 401; given 402 instead, her next document is of 402 and the
    one she held goes back to the pool (bob, given 401, gets it); an organiser has no topics;
    a name the pool does not have is said so."""
    ann, bob = client(server.url, server.links["ann"]), client(server.url, server.links["bob"])
    held = ann.post("/api/next").json()["item"]
    assert held["query_id"] == "401"
    code, out, err = _cli(campaign, capsys, "--set-topics", "ann", "--topics", "402")
    assert code == 0 and "ann judges topics 402" in out, err
    after = ann.post("/api/next").json()["item"]
    assert after["query_id"] == "402"
    late = ann.post("/api/judge", json={"query_id": held["query_id"],
                                        "doc_id": held["doc_id"], "relevance": 1})
    assert late.status_code == 400  # not hers any more: refused, nothing stored
    assert _cli(campaign, capsys, "--set-topics", "bob", "--topics", "401")[0] == 0
    assert bob.post("/api/next").json()["item"]["doc_id"] == held["doc_id"]  # released
    code, _, err = _cli(campaign, capsys, "--set-topics", "org", "--topics", "401")
    assert code == 1 and "'org' is an organiser: an organiser sees every topic" in err
    code, _, err = _cli(campaign, capsys, "--set-topics", "nobody")
    assert code == 1 and "'nobody' is not one of the people of pool 'web'" in err
    code, _, err = _cli(campaign, capsys, "--set-topics", "ann", "--topics", "4O1")
    assert code == 1 and "not a topic of pool 'web'" in err and "did you mean 401" in err
    server.stop()
    assert ("ann", "401") not in _clicks(campaign)


@pytest.mark.timeout(180)
def test_another_role_or_pool_is_refused_as_before_while_the_server_runs(
        server, campaign, capsys, tmp_path):
    """The running server refuses what the store refused: a name of another pool, the
    organiser added as an assessor; a token of another pool is no sign-in here; a change of
    another pool's people waits for the store; an assessor cannot call the organiser's calls,
    the organiser's need the CSRF token, the command line's secret must be the file's."""
    server.stop()
    zed = _link(campaign, capsys, "zed", pool="news")  # another pool's, made before the start
    server.start()
    code, _, err = _cli(campaign, capsys, "--add-assessor", "zed")
    assert code == 1 and "'zed' assesses pool 'news' already" in err
    code, _, err = _cli(campaign, capsys, "--add-assessor", "org")
    assert code == 1 and "'org' is an organiser of pool 'web' already" in err
    code, _, err = _cli(campaign, capsys, "--add-assessor", " eve")
    assert code == 1 and "starts or ends with a space" in err
    code, _, err = _cli(campaign, capsys, "--add-assessor", "yan", pool="news")
    assert code == 1 and "held by the server of pool 'web'" in err
    other = httpx.Client(base_url=server.url, timeout=30)
    assert other.get("/", params={"token": zed.rsplit("token=", 1)[1]}).status_code == 401
    ann = client(server.url, server.links["ann"])
    assert ann.post("/api/people/add", json={"name": "mal"}).status_code == 403
    assert ann.get("/api/people").status_code == 403
    org = client(server.url, server.links["org"])
    bare = httpx.Client(base_url=server.url, cookies=org.cookies, timeout=30)
    assert bare.post("/api/people/revoke", json={"name": "ann"}).status_code == 403  # CSRF
    forged = httpx.Client(base_url=server.url, timeout=30,
                          headers={"Authorization": "Bearer " + "x" * 43})
    assert forged.post("/api/people/revoke", json={"name": "ann"}).status_code == 401
    assert org.post("/api/people/revoke", json={"name": 7}).status_code == 400
    assert org.post("/api/people/revoke", json={"name": "org"}).status_code == 400  # oneself
    assert _judge_next(ann)["query_id"] == "401"  # nothing of this changed anyone
    people = {p["name"]: p for p in org.get("/api/people").json()["people"]}
    assert set(people) == {"ann", "bob", "org"} and not any(p["revoked"] for p in
                                                               people.values())


@pytest.mark.timeout(180)
def test_a_killed_server_leaves_a_stale_runtime_file_the_command_line_sees_through(
        server, campaign, capsys):
    """After a SIGKILL the runtime file stays; the command line finds its process gone,
    writes the store itself and removes the file; the next start writes a new one."""
    runtime = Path(load_config(campaign).store + ".assess.json")
    server.kill()
    assert runtime.exists()
    link = _link(campaign, capsys, "dan", "--topics", "403")
    assert link.startswith("http://127.0.0.1:8765/?token=") and not runtime.exists()
    server.start()
    assert runtime.exists()
    dan = client(server.url, server.on_port(link))
    assert _judge_next(dan)["query_id"] == "403"


@pytest.mark.timeout(180)
def test_the_csrf_token_of_a_page_from_before_a_sigkill_is_good_after_the_restart(
        server, campaign):
    """Before: 403 'CSRF check failed' for every page opened before a restart. Now the
    token a page was given before a SIGKILL is taken by the restarted server, and the pool's
    secret is the one made at the first start."""
    ann = client(server.url, server.links["ann"])
    _judge_next(ann)
    store = load_config(campaign).store
    server.kill()
    with Store(store, read_only=True) as db:
        made = db.con.execute("SELECT csrf_secret FROM assess_secrets").fetchall()
    server.start()
    again = ann.post("/api/next")  # the page's token, no reload
    assert again.status_code == 200, again.text
    assert _judge_next(ann)["query_id"] == "401"
    printed = server.stop()
    with Store(store, read_only=True) as db:
        assert db.con.execute("SELECT csrf_secret FROM assess_secrets").fetchall() == made
    assert len(made) == 1 and len(made[0][0]) == 32 and made[0][0].hex() not in printed
    assert [c for c in _clicks(campaign) if c[0] == "ann"] == [("ann", "401")] * 2


# -- the pages (Playwright on Debian's Chromium)


def _browser_missing() -> str | None:
    if CHROMIUM is None:
        return "no chromium on this machine (Debian package 'chromium')"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is in the test extra"
    return None


browser_only = pytest.mark.skipif(_browser_missing() is not None,
                                  reason=_browser_missing() or "")


@browser_only
@pytest.mark.timeout(240)
def test_an_open_page_saves_its_next_keypress_after_a_sigkill_and_a_restart(
        server, campaign, browser):
    """Before: the CSRF secret was made at each start, so after a restart every open page
    answered 'Not saved: CSRF check failed' until reloaded. Now it is the pool's, in the
    store: the page open across a SIGKILL and a restart on the same port saves its next
    keypress, no reload; the secret is printed nowhere."""
    from playwright.sync_api import expect

    page = open_page(browser, server.links["ann"])
    page.keyboard.press("1")
    expect(page.locator("body")).to_have_attribute("data-answered", "2")
    server.kill()
    server.start()  # the same port: the page's address and cookie stay right
    page.keyboard.press("2")
    expect(page.locator("body")).to_have_attribute("data-answered", "3")
    expect(page.locator("#status")).not_to_contain_text("Not saved")
    printed = server.stop()
    clicks = _clicks(campaign)
    assert [c for c in clicks if c[0] == "ann"] == [("ann", "401"), ("ann", "401")]
    with Store(load_config(campaign).store, read_only=True) as store:
        secret = store.con.execute("SELECT csrf_secret FROM assess_secrets WHERE pool = "
                                   "'web'").fetchone()[0]
    assert len(secret) == 32 and secret.hex() not in printed


@browser_only
@pytest.mark.timeout(240)
def test_the_organiser_adds_revokes_and_reassigns_on_their_page(server, campaign, browser):
    """The organiser's page, people section: added, the link is shown once there and signs
    the new assessor in, who judges; revoked, that page's next keypress is refused (401) and
    nothing is stored; topics set there take effect at the next document."""
    from playwright.sync_api import expect

    org = browser.new_context().new_page()
    sign_in(org, server.links["org"])
    expect(org.locator("#people-list tr")).to_have_count(3)
    org.fill("#people-name", "eve")
    org.fill("#people-topics", "403")
    org.click("#people-add button[type=submit]")
    expect(org.locator("#people-link")).to_have_text(re.compile(r"^http://.*\?token=\S+$"))
    link = org.text_content("#people-link")
    expect(org.locator("#people-list tr")).to_have_count(4)
    eve = open_page(browser, link)
    assert eve.text_content("#topic-id") == "403"
    eve.keyboard.press("1")
    expect(eve.locator("body")).to_have_attribute("data-answered", "2")
    row = org.locator("#people-list tr[data-name=eve]")
    row.get_by_role("button", name="Revoke").click()
    expect(org.locator("#people-status")).to_contain_text("eve's link no longer works")
    expect(row).to_contain_text("revoked")
    eve.keyboard.press("1")
    expect(eve.locator("#status")).to_contain_text("no valid token")
    assert eve.request.post(server.url + "api/next").status == 401
    ann = client(server.url, server.links["ann"])
    assert ann.post("/api/next").json()["item"]["query_id"] == "401"
    ann_row = org.locator("#people-list tr[data-name=ann]")
    ann_row.locator("input").fill("403")
    ann_row.get_by_role("button", name="Set topics").click()
    expect(org.locator("#people-status")).to_contain_text("ann judges topics 403")
    assert ann.post("/api/next").json()["item"]["query_id"] == "403"
    server.stop()
    assert [c for c in _clicks(campaign) if c[0] == "eve"] == [("eve", "403")]


@browser_only
@pytest.mark.timeout(240)
def test_a_page_on_a_document_no_longer_theirs_moves_on_after_saying_so(
        server, campaign, browser, capsys):
    """ann's page shows a document of 401; given 402 instead while it is open, her next
    keypress is refused with why, and the page moves on to a document of 402 by itself (it
    used to stay on the refused document until s)."""
    from playwright.sync_api import expect

    page = open_page(browser, server.links["ann"])
    assert page.text_content("#topic-id") == "401"
    assert _cli(campaign, capsys, "--set-topics", "ann", "--topics", "402")[0] == 0
    page.keyboard.press("1")
    expect(page.locator("#topic-id")).to_have_text("402")
    expect(page.locator("#status")).to_contain_text("Not saved")
    expect(page.locator("#status")).to_contain_text("not a document of this pool for ann")
    page.keyboard.press("0")  # and the next keypress judges the new one
    expect(page.locator("#status")).to_have_text("")
    server.stop()
    assert [c for c in _clicks(campaign) if c[0] == "ann"] == [("ann", "402")]


@pytest.mark.timeout(180)
def test_the_command_line_reaches_the_server_directly_whatever_proxy_is_set(
        server, campaign, capsys, monkeypatch):
    """The runtime file's secret goes to the server's own address only: an http_proxy in the
    environment (a proxy that would see the Bearer secret; here nothing listens there) is not
    used."""
    with monkeypatch.context() as env:  # for the command line only (httpx reads it too)
        for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
            env.setenv(name, "http://127.0.0.1:9")
        env.delenv("no_proxy", raising=False)
        env.delenv("NO_PROXY", raising=False)
        link = _link(campaign, capsys, "dee", "--topics", "403")
    assert link.startswith(server.url + "?token=")
    assert _judge_next(client(server.url, link))["query_id"] == "403"
