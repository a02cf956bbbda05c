"""One rule for every export (issue 37): the qrels rule ``pool`` gives the labels the
assessment desk keeps (first person; the same person's later label replaces it; a second
person's label never changes it; a file judged in first keeps its label), and the server's
``/qrels`` is the file ``irbench qrels --pool`` writes, byte for byte.

Before: ``irbench qrels --pool web`` took the majority (ties to the lower label) and differed
from ``/qrels`` wherever two assessors disagreed; no ``--rule`` gave the server's labels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from desk_server import ROOT, Server, add_link, client

from irbench import cli
from irbench.assess.serve import DeskOptions, opened
from irbench.config import load_config
from irbench.ids import id_text
from irbench.judgments.rules import POOL_RULE, RULES, combine, made
from irbench.store import Assessor

ANN = Assessor(name="ann", role="assessor", topics=("401",), pool="web")
BOB = Assessor(name="bob", role="assessor", topics=("401",), pool="web")


def _columns(rows: list[tuple[str, str, int, str, str]]) -> dict[str, np.ndarray]:
    """Judgment columns as Store.judgment_columns gives them, ``rows`` in the order recorded
    (topic, docno, label, judge, kind)."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1], rows[i][3], i))
    pick = [rows[i] for i in order]
    return {"query_id": np.array([r[0] for r in pick], dtype=object),
            "doc_id": np.array([r[1] for r in pick], dtype=object),
            "relevance": np.array([r[2] for r in pick], dtype=np.int64),
            "judge": np.array([r[3] for r in pick], dtype=object),
            "judge_kind": np.array([r[4] for r in pick], dtype=object),
            "position": np.array(order, dtype=np.int64)}


def _labels(q, d, r) -> dict[tuple[str, str], int]:
    return dict(zip(zip(q.tolist(), d.tolist()), r.tolist()))


def test_the_pool_rule_is_the_desks_rule_on_the_stored_rows():
    columns = _columns([
        ("401", "a", 2, "zed", "human"),       # zed first (not by name: amy sorts first)
        ("401", "a", 0, "amy", "human"),       # a second person: kept, not the pool's
        ("401", "a", 1, "zed", "human"),       # zed's undo: replaces zed's label
        ("401", "b", 2, "assessor", "human"),  # judged in from a file first: stays
        ("401", "b", 0, "amy", "human"),
        ("401", "b", 0, "zed", "human"),
        ("401", "c", 1, "llama", "model"),     # only a model: a suggestion, left out
        ("402", "d", 3, "llama", "model"),     # a model before the person: not the pool's
        ("402", "d", 0, "amy", "human"),
        ("402", "d", 2, "zed", "human"),
    ])
    pool = _labels(*combine(columns, POOL_RULE))
    assert pool == {("401", "a"): 1, ("401", "b"): 2, ("402", "d"): 0}
    assert _labels(*combine(columns, "majority"))[("401", "a")] == 0  # the old export's
    assert made(columns).text == "401 0 a 1\n401 0 b 2\n402 0 d 0\n"


def test_no_rows_give_an_empty_qrels():
    empty = _columns([])
    assert made(empty).text == "" and made(empty, "majority").judged == 0


def test_every_rule_is_documented():
    """Each name ``irbench qrels --rule`` offers is in the qrels section of
    docs/judging.md."""
    text = (ROOT / "docs" / "judging.md").read_text()
    section = text[text.index("## `irbench qrels`"):]
    section = section[:section.find("\n## ", 1) % (len(section) + 1)]
    assert [name for name in RULES if f"`{name}`" not in section] == []


def _cli(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "irbench", *args], env=env,
                          capture_output=True, timeout=120, cwd=config.parent)


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    return folder / "campaign.yaml"


def _file_first(config: Path, tmp_path: Path) -> tuple[str, str]:
    """One document handed out and judged 2 from an assessor file (irbench pool judge -j)
    before anyone judged in the browser."""
    batch = tmp_path / "batch.txt"
    assert cli.main(["pool", "next", str(config), "--name", "web", "-o", str(batch),
                     "--batch", "1"]) == 0
    q, _, d, _ = batch.read_text().splitlines()[0].split()
    batch.write_text(f"{q} 0 {d} 2\n")
    assert cli.main(["pool", "judge", str(config), "--name", "web", "-j", str(batch)]) == 0
    return q, d


def _judge_twice_with_undos(desk) -> None:
    """ann and bob judge (every document twice: overlap 1), each undoing now and then: ann
    says 1 or 2, bob 0 (his undos 1), so they disagree on the documents both judged."""
    for i in range(8):
        for who, label in ((ANN, 1 + i % 2), (BOB, 0)):
            item = desk.next_for(who)
            if item is None:
                continue
            desk.judge(who, item.query_id, item.doc_id, label, 1.0)
            if i % 3 == 1:  # undone, judged again: the same person's latest label
                again = desk.undo(who)
                desk.judge(who, again.query_id, again.doc_id, 3 - label if label else 1, 1.0)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("strategy", [("depth", "k=3"), ("uniform", "k=5", "rate=0.5")])
def test_the_desk_the_rule_and_irbench_qrels_agree(config, tmp_path, strategy):
    name, *params = strategy
    assert cli.main(["pool", "start", str(config), "--name", "web", "--strategy", name,
                     *[a for p in params for a in ("--param", p)]]) == 0
    q, d = _file_first(config, tmp_path)
    with opened(load_config(config), "web", None, DeskOptions(overlap=1.0)) as (
            desk, store, _):
        _judge_twice_with_undos(desk)
        judged = desk.state.judgments()
        kept = {(id_text(a), id_text(b)): int(r) for a, b, r in zip(
            judged.query_id.tolist(), judged.doc_id.tolist(), judged.relevance.tolist())}
        columns = store.judgment_columns("web")
        pool = _labels(*combine(columns, POOL_RULE))
        majority = _labels(*combine(columns, "majority"))
        exported = made(columns, POOL_RULE, (), desk.state.qrels()).text  # what /qrels gives
        before = desk.state.qrels()
        old = "".join(f"{id_text(a)} 0 {id_text(b)} {int(r)}\n" for a, b, r in zip(
            before.query_id.tolist(), before.doc_id.tolist(), before.relevance.tolist()))
    assert len(kept) >= 6 and pool == kept and kept[(q, d)] == 2
    assert pool != majority  # the old default differed where the two disagreed
    assert sorted(exported.splitlines()) == sorted(old.splitlines())  # the state's export
    if name == "uniform":
        assert " -1\n" in exported  # pooled, not sampled: infAP reads them
    out = tmp_path / "web.qrels"
    done = _cli(config, "qrels", str(config), "--pool", "web", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == exported.encode("utf-8")
    assert f"({POOL_RULE} of 3 judges)" in done.stdout.decode()
    shown = _cli(config, "qrels", str(config), "--pool", "web")
    assert shown.returncode == 0 and shown.stdout == exported.encode("utf-8")
    chosen = _cli(config, "qrels", str(config), "--pool", "web", "--rule", "majority")
    assert chosen.returncode == 0 and chosen.stdout != shown.stdout  # a named option still


# -- the real server: /qrels while it runs, irbench qrels --pool once stopped


def _judge(client, label: int) -> dict | None:
    item = client.post("/api/next").json().get("item")
    if item is not None:
        answer = client.post("/api/judge", json={"query_id": item["query_id"],
                                                 "doc_id": item["doc_id"], "relevance": label})
        assert answer.status_code == 200, answer.text
    return item


@pytest.mark.timeout(240)
def test_the_servers_qrels_are_irbench_qrels_byte_for_byte(config, tmp_path, capsys):
    assert cli.main(["pool", "start", str(config), "--name", "web", "--strategy", "depth",
                     "--param", "k=3"]) == 0
    q, d = _file_first(config, tmp_path)
    links = {"ann": add_link(config, "ann", capsys, "--topics", "401"),
             "bob": add_link(config, "bob", capsys, "--topics", "401"),
             "org": add_link(config, "org", capsys, "--organiser")}
    server = Server(config, overlap=1)
    try:
        ann, bob = client(server.url, links["ann"]), client(server.url, links["bob"])
        for i in range(5):
            _judge(ann, 2)
            if i == 2:  # ann undoes: her latest label is the pool's
                item = ann.post("/api/undo").json()["item"]
                assert ann.post("/api/judge", json={"query_id": item["query_id"],
                                                    "doc_id": item["doc_id"],
                                                    "relevance": 1}).status_code == 200
            _judge(bob, 0)  # bob: ann's documents second (overlap 1), then his own
        served = client(server.url, links["org"]).get("/qrels")
        assert served.status_code == 200, served.text
    finally:
        server.stop()
    assert f"{q} 0 {d} 2\n" in served.text  # the file's label, whatever bob said
    lines = dict(line.rsplit(" ", 1) for line in served.text.splitlines())
    assert "1" in lines.values() and "2" in lines.values()  # bob's 0s changed none of ann's
    done = _cli(config, "qrels", str(config), "--pool", "web")
    assert done.returncode == 0, done.stderr
    assert done.stdout == served.content
    majority = _cli(config, "qrels", str(config), "--pool", "web", "--rule", "majority")
    assert majority.returncode == 0 and majority.stdout != served.content  # bob's 0s
