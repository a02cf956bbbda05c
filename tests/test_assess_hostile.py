"""irbench assess against the audit's hostile cases (issue 35): a docno that is not UTF-8 in a
participant's run, skips on adaptive and static pools, empty or hostile assessor names, unknown
topics, and what the desk prints. The desk's rules are tested without HTTP; the server, where
its answers are the point, as a real ``python -m irbench assess`` process driven by httpx."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from desk_server import Server, add_link, client

from irbench import cli
from irbench.assess.serve import DeskOptions, opened
from irbench.config import load_config
from irbench.store import Assessor, Store

ANN = Assessor(name="ann", role="assessor", topics=("401",), pool="web")
DAN = Assessor(name="dan", role="assessor", topics=("401",), pool="web")
ALL = Assessor(name="cat", role="assessor", topics=(), pool="web")
LATIN1 = b"caf\xe9"  # a Latin-1 byte: not UTF-8
SHOWN = "caf\\xe9"  # as irbench.ids.id_text gives it: on the page, in the store, in the qrels


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    return folder / "campaign.yaml"


def _start(path, strategy: str = "depth", *extra: str):
    assert cli.main(["pool", "start", str(path), "--name", "web", "--strategy", strategy,
                     *extra]) == 0
    return load_config(path)


def _latin1_docno(config: Path) -> None:
    """The first line of a pooled run retrieves ``caf\\xe9`` for topic 401 at rank 1, a
    document of the collection (in Latin-1 too)."""
    run = config.parent / "runs" / "groupA-1.txt"
    lines = run.read_bytes().split(b"\n")
    assert lines[0].startswith(b"401 Q0 ")
    lines[0] = b"401 Q0 " + LATIN1 + b" 1 99.0 groupA-1"
    run.write_bytes(b"\n".join(lines))
    docs = config.parent / "documents.sgml.gz"
    doc = (b"<DOC>\n<DOCNO> " + LATIN1 + b" </DOCNO>\n<TEXT>\nThe " + LATIN1
           + b" text.\n</TEXT>\n</DOC>\n")
    docs.write_bytes(gzip.compress(gzip.decompress(docs.read_bytes()) + doc, mtime=0))


# -- 1. a docno with a byte that is not UTF-8


@pytest.mark.timeout(120)
def test_a_latin1_docno_is_served_judged_undone_and_stored_by_the_desk(config):
    _latin1_docno(config)
    cfg = _start(config, "depth", "--param", "k=3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        item = desk.next_for(ANN)
        while item.doc_id != SHOWN:  # the order tells nothing: judged on until it comes
            desk.judge(ANN, item.query_id, item.doc_id, 0, 1.0)
            item = desk.next_for(ANN)
        assert item.text == "The caf\ufffd text."  # text (not an id): U+FFFD
        judged = len(store.clicks("web"))
        desk.judge(ANN, item.query_id, item.doc_id, 2, 1.0)
        again = desk.undo(ANN)
        assert again.doc_id == SHOWN and again.previous == 2
        desk.judge(ANN, again.query_id, "caf\udce9", 1, 1.0)  # the surrogate a JSON \udce9 gives
        assert [(c.doc_id, c.relevance) for c in store.clicks("web")][judged:] == [
            (SHOWN, 2), (SHOWN, 1)]
        assert desk.state.relevance[desk.state.candidate(b"401", LATIN1)] == 1
    restart = DeskOptions(overlap=0.0)
    with opened(load_config(config), "web", None, restart) as (desk, _, _):
        assert desk.progress(ANN).judged == judged + 1
        assert desk.undo(ANN).doc_id == SHOWN


@pytest.mark.timeout(180)
def test_a_latin1_docno_never_leaves_an_assessor_stuck_on_the_server(config, tmp_path, capsys):
    """Before: every /api/next and /api/undo answered 400 (the JSON of the document could not
    be encoded). Now the document is served, judged, undone, relabelled and exported as
    ``caf\\xe9``; the desk's start-up lines escape a hostile name an older store kept."""
    _latin1_docno(config)
    cfg = _start(config, "depth", "--param", "k=3")
    links = {"ann": add_link(config, "ann", capsys, "--topics", "401"),
             "org": add_link(config, "org", capsys, "--organiser")}
    with Store(str(cfg.store)) as store:  # a name from before names were checked
        store.add_assessor(Assessor(name="eve\x1b]0;owned\x07\u202e", role="assessor",
                                    topics=("402",), pool="web"), "0" * 64)
    server = Server(config, lines=3, text=False)
    try:
        ann = client(server.url, links["ann"])
        answer = ann.post("/api/next")
        assert answer.status_code == 200, answer.text
        item = answer.json()["item"]
        before = 0
        while item["doc_id"] != SHOWN:  # the order tells nothing: judged on until it comes
            assert ann.post("/api/judge", json={**item, "relevance": 0}).status_code == 200
            item = ann.post("/api/next").json()["item"]
            before += 1
        assert (item["query_id"], item["text"]) == ("401", "The caf\ufffd text.")
        judged = ann.post("/api/judge", json={"query_id": "401", "doc_id": SHOWN,
                                              "relevance": 2})
        assert judged.status_code == 200, judged.text
        undone = ann.post("/api/undo")
        assert undone.status_code == 200 and undone.json()["item"]["doc_id"] == SHOWN
        # a hostile client sends the lone surrogate: the same document, the pool's id stored
        raw = b'{"query_id": "401", "doc_id": "caf\\udce9", "relevance": 1}'
        relabel = ann.post("/api/judge", content=raw,
                           headers={"Content-Type": "application/json"})
        assert relabel.status_code == 200, relabel.text
        after = ann.post("/api/next").json()["item"]  # and the next judgment is stored too
        assert ann.post("/api/judge", json={**after, "relevance": 0}).status_code == 200
        qrels = client(server.url, links["org"]).get("/qrels")
        assert qrels.status_code == 200 and f"401 0 {SHOWN} 1\n" in qrels.text
    finally:
        rest = server.stop()
    shown = b"".join(server.lines) + rest
    assert b"eve\\x1b]0;owned\\x07\\u202e" in shown
    assert b"\x1b" not in shown and "\u202e".encode() not in shown and b"Traceback" not in shown
    with Store(str(cfg.store)) as store:
        clicks = [(c.doc_id, c.relevance) for c in store.clicks("web")]
        assert clicks[before:before + 2] == [(SHOWN, 2), (SHOWN, 1)]


# -- 2. skips never complete a pool


@pytest.mark.timeout(120)
def test_skips_never_hand_out_an_mtf_pool(config):
    """Before: 40 skips handed out the whole MTF pool ("0 judged, 250 handed out ...
    complete"). Now a skip hands out nothing: the skipped documents come back, the one
    skipped longest ago first, and the pool is complete only once all are judged."""
    cfg = _start(config, "mtf")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0, batch=1)) as (desk, _, _):
        first = desk.next_for(ALL)
        step = desk.state.handed_total  # one MTF step of the assessor's topic (batch 1)
        assert step == 1
        item, seen = first, []
        for _ in range(40):
            seen.append((item.query_id, item.doc_id))
            item = desk.skip(ALL, item.query_id, item.doc_id)
            assert item is not None
        assert desk.state.handed_total == step and desk.state.judged_total == 0
        assert item.skipped and len(set(seen)) == step
        assert seen[:step] == seen[step:2 * step]  # round and round, oldest skip first
        progress = desk.progress(ALL)
        assert (progress.judged, progress.skipped) == (0, step)
        assert progress.total == desk.state.planned().sum()  # the pool's share, not handed
        assert not progress.done and not desk.state.complete
        count = 0
        while item is not None:
            desk.judge(ALL, item.query_id, item.doc_id, count % 2, 0.1)
            count += 1
            item = desk.next_for(ALL)
        progress = desk.progress(ALL)
        assert progress.done and desk.state.complete and progress.skipped == 0
        assert desk.state.judged_total == desk.state.handed_total == count


@pytest.mark.timeout(120)
def test_an_mtf_topic_waits_for_its_skipped_document(config):
    """One topic, one pending document: a skip gives it back (flagged), it never makes the
    strategy hand out the next one; judged, the strategy goes on."""
    cfg = _start(config, "mtf", "--budget", "3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0, batch=1)) as (desk, _, _):
        item = desk.next_for(ANN)
        for _ in range(5):
            back = desk.skip(ANN, item.query_id, item.doc_id)
            assert (back.query_id, back.doc_id, back.skipped) == (item.query_id, item.doc_id,
                                                                  True)
        topic = desk.topics.index("401")
        assert desk.state.handed[topic] == 1
        desk.judge(ANN, back.query_id, back.doc_id, 1, 0.1)
        nxt = desk.next_for(ANN)
        assert nxt.doc_id != item.doc_id and not nxt.skipped and desk.state.handed[topic] == 2


@pytest.mark.timeout(120)
def test_skips_on_a_depth_pool_go_to_the_end_of_the_assessors_queue(config):
    """A skipped document comes back once everything else of the topic is judged or skipped,
    the one skipped longest ago first; the topic stays its assessor's meanwhile (another
    assessor of it waits)."""
    cfg = _start(config, "depth", "--param", "k=3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        item = desk.next_for(ANN)
        first = (item.query_id, item.doc_id)
        item = desk.skip(ANN, *first)
        assert (item.query_id, item.doc_id) != first
        assert desk.next_for(DAN) is None  # 401 is ann's: dan waits, not finished
        assert not desk.progress(DAN).finished
        total = desk.progress(ANN).total
        order = []
        for _ in range(total - 1):  # ann skips every other document of 401
            order.append((item.query_id, item.doc_id))
            item = desk.skip(ANN, item.query_id, item.doc_id)
        assert item.skipped and (item.query_id, item.doc_id) == first
        progress = desk.progress(ANN)
        assert (progress.judged, progress.skipped, progress.done) == (0, total, False)
        assert desk.progress().skipped == total  # the organiser's view counts them
        judged = []
        while item is not None:
            judged.append((item.query_id, item.doc_id))
            desk.judge(ANN, item.query_id, item.doc_id, 0, 0.1)
            item = desk.next_for(ANN)
        assert judged == [first, *order]  # in the order skipped
        assert desk.progress(ANN).judged == total and desk.progress(ANN).skipped == 0
        assert desk.progress(ANN).finished and desk.progress(DAN).finished


# -- 3. names and 4. topics


HOSTILE_NAMES = [
    ("", "cannot be empty"), ("   ", "cannot be empty"),
    ("x" * 65, "at most 64"), ("eve\x1b]0;owned\x07", "control character"),
    ("ann\nbob", "control character"), ("a\u202eb", "format character"),
    (" ann", "starts or ends with a space"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("name", "reason"), HOSTILE_NAMES)
def test_an_empty_or_hostile_name_is_refused_before_any_server(config, capsys, name, reason):
    """Before: ``--add-assessor ""`` started the server. Now every such name is refused with
    why (and nothing is added); a hang here would be a server started."""
    cfg = _start(config)
    capsys.readouterr()
    assert cli.main(["assess", str(config), "--pool", "web", "--add-assessor", name]) == 1
    out, err = capsys.readouterr()
    assert reason in err and "Traceback" not in err and out == ""
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err
    with Store(str(cfg.store)) as store:
        assert store.assessors("web") == []


@pytest.mark.timeout(120)
def test_a_name_of_the_other_role_says_so(config, capsys):
    _start(config)
    add_link(config, "org", capsys, "--organiser")
    add_link(config, "ann", capsys)
    base = ["assess", str(config), "--pool", "web", "--add-assessor"]
    assert cli.main([*base, "org"]) == 1
    assert "'org' is an organiser of pool 'web' already" in capsys.readouterr().err
    assert cli.main([*base, "ann", "--organiser"]) == 1
    assert "'ann' is an assessor of pool 'web' already" in capsys.readouterr().err
    assert add_link(config, "org", capsys, "--organiser").startswith("http://")  # a new link


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("topics", "said"), [
    ("999,abc", ["2 not a topic of pool 'web'", "'999'", "'abc'", "401, 402, 403"]),
    ("401,4O2", ["1 not a topic", "'4O2' (did you mean 402"]),
    ("401,,402", ["entry 2 of 3 is empty"]),
    ("401,", ["entry 2 of 2 is empty"]),
    ("", ["entry 1 of 1 is empty"]),
])
def test_unknown_or_empty_topics_are_refused(config, capsys, topics, said):
    """Before: ``--topics 999,abc`` was accepted and that assessor saw nothing. Now every
    unknown topic is named (with the pool's closest ids), empty entries refused."""
    cfg = _start(config)
    capsys.readouterr()
    assert cli.main(["assess", str(config), "--pool", "web", "--add-assessor", "ann",
                     "--topics", topics]) == 1
    err = capsys.readouterr().err
    assert all(s in err for s in said), err
    with Store(str(cfg.store)) as store:
        assert store.assessors("web") == []


@pytest.mark.timeout(120)
def test_known_topics_are_kept_once_in_the_order_given(config, capsys):
    cfg = _start(config)
    add_link(config, "ann", capsys, "--topics", " 403, 401,403")
    with Store(str(cfg.store)) as store:
        assert [a.topics for a in store.assessors("web")] == [("403", "401")]
    assert cli.main(["assess", str(config), "--pool", "web", "--topics", "401"]) == 1
    assert "--topics and --organiser go with --add-assessor" in capsys.readouterr().err
