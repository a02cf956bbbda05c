"""Labels made from another server's answers do not stay (issue 37).

Before answers were keyed by their endpoint, judge B (the model name of judge A, another
server) took A's stored answers as its labels. Migration 18 removes the judgments that are
certainly borrowed so (and no other), and a judge's answer of its own endpoint, once recorded,
replaces a label it took from another endpoint's answer (``reuse_answers_from`` since dropped,
or such an old store): a rerun of B ends with B's server's labels. Each server is a real local
stand-in answering differently (tests/chat_server.py)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from chat_server import ChatServer
from judge_campaign import (
    JUDGMENT,
    MODEL,
    PAIRS,
    always,
    config_with,
    entry,
    labels_of,
    make_template,
    run_judge,
    schema_15_store,
    store_path,
)

from irbench.store import ModelAnswer, Store

BORROWED = 4  # the pairs B took from A in the old store; it asked the other two itself


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("borrowed"), seed=7)


def _judgments(path: str, judges: tuple[str, ...]) -> list[tuple]:
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(f"SELECT {', '.join(JUDGMENT)} FROM judgments WHERE "
                           "list_contains(?, judge) ORDER BY ALL", [list(judges)]).fetchall()


@pytest.mark.timeout(180)
def test_labels_borrowed_from_another_server_are_removed_and_rejudged(template, tmp_path,
                                                                       capsys):
    with ChatServer(always(3)) as a, ChatServer(always(1)) as b:
        config = config_with(template, tmp_path, {"llama-a": entry(a), "llama-b": entry(b)})
        rc, _, _ = run_judge(config, "llama-a", capsys)  # the requests' sha256, as judged today
        assert rc == 0 and a.calls == PAIRS
        with Store(store_path(config), read_only=True) as store:
            _, asked = store.query("SELECT model, prompt_sha256, query_id, doc_id, answer "
                                   "FROM model_answers ORDER BY query_id, doc_id")
        Path(store_path(config)).unlink()
        a_text, b_text = "##final score: 3", "##final score: 1"
        assert {r[4] for r in asked} == {a_text}

        def answer(r, judge, text, grade):
            return (*r[:4], judge, text, grade)

        def judgment(r, judge, text, grade, kind="model", pool="", sha=True, model=MODEL):
            return (pool, r[2], r[3], grade, f"model:{model}" if kind == "model" else "file",
                    judge, kind, model if kind == "model" else None, r[1] if sha else None,
                    text if kind == "model" else None)

        lent, own = asked[:BORROWED], asked[BORROWED:]
        # what an irbench of schema 15 left: A answered four pairs; B (another server) asked
        # for six, took A's four answers (0 calls) and asked its server for the other two;
        # E (A's server under another name) took A's; C and D (no base_url known), F (its config
        # reuses A's answers) took them too; H's labels have a text no stored answer has; G's
        # (model mistral) are answers of a judge the store does not know ('gone': endpoint
        # unknown); an assessor and an imported model qrels label them too
        schema_15_store(store_path(config), [
            ("llama-a", MODEL, a.base_url, "{}"), ("llama-b", MODEL, b.base_url, "{}"),
            ("llama-e", MODEL, a.base_url, "{}"), ("llama-c", MODEL, None, "{}"),
            ("llama-d", MODEL, "", "{}"),
            ("llama-f", MODEL, "http://f.example/v1", '{"reuse_answers_from": ["llama-a"]}'),
            ("llama-h", MODEL, "http://h.example/v1", "{}"),
            ("mistral-g", "mistral", "http://g.example/v1", "{}")],
            [answer(r, "llama-a", a_text, 3) for r in lent]
            + [answer(r, "llama-b", b_text, 1) for r in own]
            + [("mistral", *answer(r, "gone", a_text, 3)[1:]) for r in lent],
            [judgment(r, "llama-a", a_text, 3, pool="web") for r in lent]
            + [judgment(r, "llama-b", a_text, 3, pool="web") for r in lent]
            + [judgment(r, "llama-b", b_text, 1, pool="web") for r in own]
            + [judgment(r, judge, a_text, 3) for r in lent
               for judge in ("llama-e", "llama-c", "llama-d", "llama-f")]
            + [judgment(r, "llama-h", "##final score: 2", 2) for r in lent]
            + [judgment(r, "mistral-g", a_text, 3, model="mistral") for r in lent]
            + [judgment(r, "ann", None, 0, kind="human") for r in asked]
            + [judgment(r, "imported", a_text, 2, sha=False) for r in lent])
        others = ("llama-a", "llama-e", "llama-c", "llama-d", "llama-f", "llama-h",
                  "mistral-g", "ann", "imported")
        assert len(_judgments(store_path(config), others)) == 8 * BORROWED + PAIRS
        before = _judgments(store_path(config), others)
        with Store(store_path(config)):  # migrates
            pass
        # B's four borrowed labels are gone, its own two kept; nobody else's touched
        assert _judgments(store_path(config), ("llama-b",)) == sorted(
            judgment(r, "llama-b", b_text, 1, pool="web") for r in own)
        assert _judgments(store_path(config), others) == before
        # a rerun of B asks its server for the four pairs it had borrowed, and records them
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0, out
        assert f"{PAIRS - BORROWED} answered before (no call), {BORROWED} new answers" in out
        assert b.calls == BORROWED and a.calls == PAIRS
    assert labels_of(config, "llama-b") == {(r[2], r[3]): 1 for r in asked}
    assert labels_of(config, "llama-a") == {(r[2], r[3]): 3 for r in lent}
    assert _judgments(store_path(config), others) == before


@pytest.mark.timeout(120)
def test_an_own_answer_replaces_a_label_reused_from_another_endpoint(template, tmp_path,
                                                                      capsys):
    with ChatServer(always(3)) as a, ChatServer(always(1)) as b:
        config = config_with(template, tmp_path, {
            "llama-a": entry(a), "llama-b": entry(b, reuse_answers_from=["llama-a"])})
        assert run_judge(config, "llama-a", capsys)[0] == 0
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and b.calls == 0 and set(labels_of(config, "llama-b").values()) == {3}
        # the config no longer lets B reuse A's answers: B asks its server, its labels follow
        config_with(template, tmp_path, {"llama-a": entry(a), "llama-b": entry(b)})
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and f"0 answered before (no call), {PAIRS} new answers" in out
        assert b.calls == PAIRS and a.calls == PAIRS
        assert labels_of(config, "llama-b") == {k: 1 for k in labels_of(config, "llama-a")}
        assert set(labels_of(config, "llama-a").values()) == {3}
        assert len(labels_of(config, "llama-b")) == PAIRS
        # reuse allowed again: B's own answers come first, its labels stay its own
        config_with(template, tmp_path, {
            "llama-a": entry(a), "llama-b": entry(b, reuse_answers_from=["llama-a"])})
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and f"{PAIRS} answered before (no call)" in out and b.calls == PAIRS
        assert set(labels_of(config, "llama-b").values()) == {1}


def _answer(judge: str, endpoint: str | None, text: str, grade: int | None,
            doc: str = "d1") -> ModelAnswer:
    return ModelAnswer(model=MODEL, prompt_sha256="s", query_id="q", doc_id=doc, judge=judge,
                       answer=text, relevance=grade, prompt_tokens=1, completion_tokens=1,
                       seconds=0.1, endpoint=endpoint)


@pytest.mark.timeout(60)
def test_which_labels_an_own_answer_replaces(tmp_path):
    a, b = "http://a.example/v1", "http://b.example/v1"
    with Store(str(tmp_path / "s.duckdb")) as store:
        store.remember_judge("A", "model", MODEL, a, "{}")
        store.remember_judge("B", "model", MODEL, b, "{}")
        store.save_answers([_answer("A", a, "3", 3, doc) for doc in ("d1", "d2", "d3")],
                           pool="web")
        store.save_answers([_answer("B", a, "3", 3, doc) for doc in ("d1", "d2", "d3")],
                           pool="web")  # B reused A's answers for the pool 'web'
        # the same text from B's server: the label is B's already, it stays as it was
        # (pool 'web'); another text replaces A's, in the pool of the label it replaces; an
        # answer without a grade removes the borrowed label and records none
        store.save_answers([_answer("B", b, "3", 3, "d1"), _answer("B", b, "1", 1, "d2"),
                            _answer("B", None, "no idea", None, "d3")], pool="")
        # a second answer of B's server to d2 (two runs at once) is not kept: nothing changes;
        # nor does A's answer given again for B (its own is stored)
        store.save_answers([_answer("B", b, "2", 2, "d2"), _answer("B", a, "3", 3, "d2")],
                           pool="other")

        def rows(judge: str) -> list[tuple]:
            return store.query("SELECT doc_id, pool, relevance, answer FROM judgments "
                               "WHERE judge = ? ORDER BY doc_id", [judge])[1]

        assert rows("B") == [("d1", "web", 3, "3"), ("d2", "web", 1, "1")]
        assert rows("A") == [("d1", "web", 3, "3"), ("d2", "web", 3, "3"),
                             ("d3", "web", 3, "3")]
