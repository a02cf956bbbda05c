"""The assessment server's structure (issue 36), against a real uvicorn server on a local port
over a real campaign, store and desk: who a request is by the authentication backend and what
a route without the right role answers; the security headers on every response (the router's
404 and 405 and a bug's 500 too); named refusals answered as before, a bug a 500 and a log
line (never "malformed request"); every page context documented and every name a template
reads one of its fields; a screen registered in a test served behind the same checks."""

from __future__ import annotations

import re
import socket
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import httpx
import jinja2
import pytest
import uvicorn

from irbench import cli
from irbench.assess import screens
from irbench.assess.app import environment, render
from irbench.assess.contexts import CONTEXT_TYPES, PAGES, OrganiserPage, SignInPage
from irbench.assess.failures import MALFORMED, BadRequest
from irbench.assess.nugget_edit import EditNugget, NuggetEditPage, NuggetListView
from irbench.assess.nuggets import NuggetItem, NuggetRow
from irbench.assess.screens import SCREENS, TEMPLATES, Screen, Visit, register
from irbench.assess.serve import DeskOptions, add_assessor, assessment_app, opened
from irbench.assess.support import SupportItem
from irbench.assess.writer import WriteFailed
from irbench.config import load_config
from irbench.report.fields import documented, names_outside, undocumented

SECURITY = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
POLICY = ("default-src 'none'; script-src {0}; style-src {0}; connect-src 'self'; "
          "img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


def secured(response: httpx.Response) -> httpx.Response:
    """``response`` after checking its security headers: an HTML page's policy allows the
    nonce its own script and style carry, any other response's allows none."""
    for name, value in SECURITY.items():
        assert response.headers.get(name) == value, (response.url, name)
    policy = response.headers["content-security-policy"]
    if response.headers.get("content-type", "").startswith("text/html"):
        nonces = set(re.findall(r'nonce="([^"]+)"', response.text))
        assert len(nonces) == 1, response.text[:300]
        assert policy == POLICY.format(f"'nonce-{nonces.pop()}'")
    else:
        assert policy == POLICY.format("'none'")
    return response


class Running:
    """``app`` served by uvicorn on a free local port, in a thread, until :meth:`stop`."""

    def __init__(self, app):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                                    log_config=None, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "no server"
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}"

    def client(self, token: str | None = None) -> httpx.Client:
        """A browser: signed in with ``token`` (its CSRF token from its page, when it has
        one), or not at all."""
        client = httpx.Client(base_url=self.url, timeout=30)
        if token is not None:
            assert secured(client.get("/", params={"token": token})).status_code == 200
            page = client.get("/")
            found = re.search(r'name="csrf" content="([^"]+)"', page.text)
            if found:
                client.headers["X-CSRF-Token"] = found.group(1)
        return client

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def campaign(tmp_path):
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    path = folder / "campaign.yaml"
    assert cli.main(["pool", "start", str(path), "--name", "web", "--strategy", "depth",
                     "--param", "k=3"]) == 0
    config = load_config(path)
    tokens = {"ann": add_assessor(config, "web", "ann", ("401",), "assessor", None),
              "org": add_assessor(config, "web", "org", (), "organiser", None)}
    return config, tokens


@pytest.fixture
def served(campaign):
    """(server, tokens, desk, store) of pool 'web' served with the registered screens."""
    config, tokens = campaign
    with opened(config, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        server = Running(assessment_app(config, "web", desk, store, port=0, levels=(0, 1, 2),
                                        preselect=False))
        try:
            yield server, tokens, desk, store
        finally:
            server.stop()


# -- the contract


def test_every_context_is_documented_and_every_template_name_is_a_field():
    assert undocumented(CONTEXT_TYPES) == []
    assert undocumented([SupportItem, NuggetItem, NuggetRow, EditNugget, NuggetListView,
                         NuggetEditPage]) == []  # the answer screens' own
    assert PAGES["nugget_edit.html"] is NuggetEditPage
    for template, context in PAGES.items():
        assert names_outside(environment(TEMPLATES), template, context) == [], template
    assert list(SCREENS) == ["nuggets", "relevance", "support"]
    for screen in SCREENS.values():
        assert undocumented([screen.page_type]) == []
        assert names_outside(environment(screen.folder), screen.template,
                             screen.page_type) == [], screen.name


def test_the_check_finds_a_name_or_an_attribute_a_context_does_not_have(tmp_path):
    (tmp_path / "bad.html").write_text(
        "{{ title }} {{ nobody }}\n{% for a in view.assessors %}{{ a.name }} {{ a.age }}"
        "{% endfor %}{{ view.judged }} {{ view.speed }}{% set n = 1 %}{{ n }}")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tmp_path))
    assert names_outside(env, "bad.html", OrganiserPage) == [
        "bad.html:1: nobody", "bad.html:2: AssessorRow.age", "bad.html:2: OrganiserView.speed"]


def test_pages_render_under_strict_undefined():
    assert environment(TEMPLATES).undefined is jinja2.StrictUndefined
    page = SignInPage(title="t", nonce="n", refresh=False, name="ann", current="", token="x")
    assert "Sign in as ann" in render(TEMPLATES, "signin.html", page).body.decode()
    with pytest.raises(jinja2.UndefinedError):  # assess.html reads names a sign-in has not
        render(TEMPLATES, "assess.html", page)


# -- headers, refusals, bugs


@pytest.mark.timeout(120)
def test_every_response_carries_the_security_headers(served):
    server, tokens, desk, _ = served
    anyone, ann, org = server.client(), server.client(tokens["ann"]), server.client(tokens["org"])
    missing = secured(anyone.get("/no/such/page"))
    assert missing.status_code == 404 and missing.text == "Not Found"
    wrong = secured(ann.get("/api/next"))  # a change: POST only
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert ": judging</title>" in secured(ann.get("/")).text
    assert "judging progress" in secured(org.get("/")).text
    assert secured(ann.post("/api/next")).json()["item"]["query_id"] == "401"
    assert secured(org.get("/api/progress")).json()["strategy"] == "depth"
    assert secured(org.get("/qrels")).status_code == 200
    assert secured(anyone.get("/", params={"token": "not-a-token"})).status_code == 401


@pytest.mark.timeout(120)
def test_a_route_without_the_role_answers_as_before(served):
    server, tokens, _, _ = served
    anyone, ann, org = server.client(), server.client(tokens["ann"]), server.client(tokens["org"])
    for client, method, path, status, answer in (
            (anyone, "POST", "/api/next", 401, {"error": "no valid token"}),
            (anyone, "GET", "/api/progress", 401, {"error": "no valid token"}),
            (ann, "GET", "/api/progress", 403, {"error": "not yours"}),
            (org, "POST", "/api/judge", 403, {"error": "not yours"}),
            (anyone, "GET", "/", 401, "open the personal link irbench assess printed for you"),
            (anyone, "GET", "/qrels", 403, "organiser only"),
            (ann, "GET", "/qrels", 403, "organiser only")):
        response = secured(client.request(method, path))
        assert response.status_code == status, (client, path)
        assert (response.json() if isinstance(answer, dict) else response.text) == answer


@pytest.mark.timeout(120)
def test_malformed_calls_are_refused_with_todays_messages(served):
    server, tokens, _, _ = served
    ann = server.client(tokens["ann"])
    item = ann.post("/api/next").json()["item"]
    mine = {"query_id": item["query_id"], "doc_id": item["doc_id"]}
    for path, body in (("/api/judge", mine),  # no relevance
                       ("/api/judge", {**mine, "relevance": True}),
                       ("/api/judge", {**mine, "relevance": 7}),
                       ("/api/judge", {**mine, "relevance": "1"}),
                       ("/api/judge", {**mine, "relevance": 1, "seconds": "soon"}),
                       ("/api/judge", {**mine, "relevance": 1, "seconds": [1]}),
                       ("/api/judge", {"doc_id": item["doc_id"], "relevance": 1}),
                       ("/api/skip", {"query_id": item["query_id"]})):
        response = secured(ann.post(path, json=body))
        assert (response.status_code, response.json()) == (400, {"error": MALFORMED}), body
    huge = b'{"query_id": "401", "doc_id": "x", "relevance": 1, "seconds": ' + b"9" * 400 + b"}"
    response = ann.post("/api/judge", content=huge)  # a float too large: malformed, not a 500
    assert (response.status_code, response.json()) == (400, {"error": MALFORMED})
    for content, status, error in ((b"[" * 8000, 400, "not JSON"), (b"\xff", 400, "not JSON"),
                                   (b"[1, 2]", 400, "a JSON object, please"),
                                   (b"x" * 20_000, 413, "request too large")):
        response = secured(ann.post("/api/judge", content=content))
        assert (response.status_code, response.json()) == (status, {"error": error})
    response = secured(ann.post("/api/judge", json={**mine, "relevance": 1},
                                headers={"X-CSRF-Token": "forged"}))
    assert (response.status_code, response.json()) == (403, {"error": "CSRF check failed"})
    response = secured(ann.post("/api/judge", json={**mine, "relevance": 1},
                                headers={"Origin": "http://elsewhere.example"}))
    assert (response.status_code, response.json()) == (403, {"error": "CSRF check failed"})
    response = secured(ann.post("/api/judge", json={**mine, "query_id": "403", "relevance": 1}))
    assert response.status_code == 400 and "not a document of this pool for ann" in \
        response.json()["error"]  # the pool refuses it (JudgmentError): the message says why
    assert ann.post("/api/judge", json={**mine, "relevance": 1}).status_code == 200


@pytest.mark.timeout(120)
def test_a_bug_in_the_desk_is_a_500_and_a_log_line_not_a_malformed_request(
        served, monkeypatch, caplog):
    server, tokens, desk, _ = served
    ann = server.client(tokens["ann"])

    def broken(who):
        raise KeyError("query_id")  # what the broad except called "malformed request"

    monkeypatch.setattr(desk, "next_for", broken)
    response = secured(ann.post("/api/next"))
    assert response.status_code == 500 and "malformed" not in response.text
    assert response.json() == {"error": "internal error (a bug): the server's log says more"}
    logged = [r.getMessage() for r in caplog.records if r.name == "irbench.assess"]
    assert logged == ["irbench assess: POST /api/next failed: KeyError: 'query_id' (a bug in "
                      "irbench; answered 500)"]


@pytest.mark.timeout(120)
def test_a_store_that_cannot_be_written_is_a_503_with_its_message(served, monkeypatch):
    server, tokens, desk, _ = served
    ann = server.client(tokens["ann"])
    item = ann.post("/api/next").json()["item"]

    def failed(*args) -> Future:
        done: Future = Future()
        done.set_exception(WriteFailed("the store s.duckdb could not be written (disk full)"))
        return done

    monkeypatch.setattr(desk, "record", failed)
    response = secured(ann.post("/api/judge", json={**item, "relevance": 1}))
    assert response.status_code == 503
    assert response.json() == {"error": "the store s.duckdb could not be written (disk full)"}


# -- a screen of one's own


@dataclass(frozen=True, kw_only=True)
class YesNoPage:
    """A toy screen: yes or no."""

    title: str = documented("the campaign's name")
    nonce: str = documented("the CSP nonce")
    csrf: str = documented("the CSRF token")
    who: str = documented("the assessor's name")


def yes_or_no(body: dict, levels: tuple[int, ...]) -> int:
    if body.get("verdict") not in ("yes", "no"):
        raise BadRequest("verdict: yes or no")
    return 1 if body["verdict"] == "yes" else 0


@pytest.fixture
def yes_no(tmp_path):
    """The toy screen: its template, its page, its parser and one register call."""
    (tmp_path / "yesno.html").write_text(
        '<!DOCTYPE html><title>{{ title }}: yes or no</title><meta name="csrf" '
        'content="{{ csrf }}"><style nonce="{{ nonce }}"></style><p id="who">{{ who }}</p>')

    def page(visit: Visit) -> YesNoPage:
        return YesNoPage(title=visit.title, nonce=visit.nonce, csrf=visit.csrf, who=visit.who)

    screen = register(Screen(name="yes-no", path="/yes-no", template="yesno.html",
                             page_type=YesNoPage, page=page, parse_label=yes_or_no,
                             folder=tmp_path))
    yield screen
    del screens.SCREENS["yes-no"]


@pytest.mark.timeout(120)
def test_a_screen_registered_in_a_test_is_served_guarded_and_checked(campaign, yes_no):
    assert names_outside(environment(yes_no.folder), yes_no.template, YesNoPage) == []
    with pytest.raises(ValueError, match="registered twice"):
        register(yes_no)
    config, tokens = campaign
    with opened(config, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        server = Running(assessment_app(config, "web", desk, store, port=0, levels=(0, 1, 2),
                                        preselect=False))
        try:
            anyone, org = server.client(), server.client(tokens["org"])
            ann = server.client(tokens["ann"])  # signed in on / : the relevance screen
            assert 'data-level="2"' in ann.get("/").text
            page = secured(ann.get("/yes-no/"))
            assert page.status_code == 200 and '<p id="who">ann</p>' in page.text
            assert re.search(r'name="csrf" content="([^"]+)"', page.text).group(1) == \
                ann.headers["X-CSRF-Token"]  # the same token as the relevance screen's
            assert secured(anyone.get("/yes-no/")).status_code == 401
            assert secured(org.get("/yes-no/")).text == "not yours"
            assert secured(anyone.post("/yes-no/api/next")).status_code == 401
            item = secured(ann.post("/yes-no/api/next")).json()["item"]
            assert item["query_id"] == "401"
            ids = {"query_id": item["query_id"], "doc_id": item["doc_id"]}
            refused = secured(ann.post("/yes-no/api/judge", json={**ids, "verdict": "maybe"}))
            assert (refused.status_code, refused.json()) == (400, {"error": "verdict: yes or no"})
            forged = ann.post("/yes-no/api/judge", json={**ids, "verdict": "yes"},
                              headers={"X-CSRF-Token": "forged"})
            assert secured(forged).status_code == 403
            judged = secured(ann.post("/yes-no/api/judge", json={**ids, "verdict": "yes"}))
            assert judged.status_code == 200 and judged.json()["progress"]["judged"] == 1
            with desk.lock:
                clicks = store.clicks("web")
            assert [(c.query_id, c.doc_id, c.relevance, c.judge) for c in clicks] == [
                (item["query_id"], item["doc_id"], 1, "ann")]
        finally:
            server.stop()
