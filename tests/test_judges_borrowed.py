"""Labels made from another server's answers do not stay (issue 37).

Before answers were keyed by their endpoint, judge B (the model name of judge A, another
server) took A's stored answers as its labels. Migration 18 removes the judgments that are
certainly borrowed so (and no other), and a judge's answer of its own endpoint, once recorded,
replaces a label it took from another endpoint's answer (``reuse_answers_from`` since dropped,
or such an old store): a rerun of B ends with B's server's labels. Each server is a real local
stand-in answering differently (tests/chat_server.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
import yaml
from chat_server import ChatServer

from irbench import cli
from irbench.store import MIGRATIONS, ModelAnswer, Store

PAIRS = 6
BORROWED = 4  # the pairs B took from A in the old store; it asked the other two itself
MODEL = "llama"
JUDGMENT = ("pool", "query_id", "doc_id", "relevance", "source", "judge", "judge_kind", "model",
            "prompt_sha256", "answer")


def _always(grade: int):
    return lambda body: f"##final score: {grade}"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("borrowed") / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "3",
                     "--pool-depth", "5", "--seed", "7"]) == 0
    lines = (folder / "qrels.txt").read_text().splitlines()[:PAIRS]
    (folder / "pairs.txt").write_text("".join(f"{x.split()[0]} {x.split()[2]}\n"
                                              for x in lines))
    return folder


def _entry(server: ChatServer, **more) -> dict:
    return {"base_url": server.base_url, "model": MODEL, "backoff": 0, "retries": 1,
            "timeout": 10, "concurrency": 2, **more}


def _campaign(template: Path, tmp_path: Path, judges: dict) -> Path:
    folder = tmp_path / "camp"
    if not folder.exists():
        shutil.copytree(template, folder)
    config = folder / "campaign.yaml"
    data = yaml.safe_load(config.read_text())
    data["judges"] = judges
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


def _store(config: Path) -> str:
    return str(config.parent / "campaign.duckdb")


def _judge(config: Path, name: str, capsys) -> tuple[int, str]:
    rc = cli.main(["judge", str(config), "--judge", name, "--pairs",
                   str(config.parent / "pairs.txt")])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out


def _labels(config: Path, judge: str) -> dict[tuple[str, str], int]:
    with Store(_store(config), read_only=True) as store:
        cols = store.judgment_columns(None, [judge])
    return dict(zip(zip(cols["query_id"].tolist(), cols["doc_id"].tolist()),
                    cols["relevance"].tolist()))


def _judgments(path: str, judges: tuple[str, ...]) -> list[tuple]:
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(f"SELECT {', '.join(JUDGMENT)} FROM judgments WHERE "
                           "list_contains(?, judge) ORDER BY ALL", [list(judges)]).fetchall()


def _old_store(path: str, judges: list[tuple], answers: list[tuple],
               judgments: list[tuple]) -> None:
    """A store as irbench wrote it at schema 15, answers keyed by model name alone."""
    con = duckdb.connect(path)
    con.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
                "applied_at TIMESTAMP)")
    for version, (name, sql) in enumerate(MIGRATIONS[:15], 1):
        con.execute(sql)
        con.execute("INSERT INTO migrations VALUES (?, ?, now())", [version, name])
    con.executemany("INSERT INTO judges VALUES (?, 'model', ?, ?, ?, now())", judges)
    con.executemany("INSERT INTO model_answers VALUES (?, ?, ?, ?, ?, ?, ?, 5, 2, 0.1, now())",
                    answers)
    con.executemany(f"INSERT INTO judgments ({', '.join(JUDGMENT)}, judged_at) "
                    f"VALUES ({', '.join('?' * len(JUDGMENT))}, now())", judgments)
    con.close()


@pytest.mark.timeout(180)
def test_labels_borrowed_from_another_server_are_removed_and_rejudged(template, tmp_path,
                                                                       capsys):
    with ChatServer(_always(3)) as a, ChatServer(_always(1)) as b:
        config = _campaign(template, tmp_path, {"llama-a": _entry(a), "llama-b": _entry(b)})
        rc, _ = _judge(config, "llama-a", capsys)  # the requests' sha256, as judged today
        assert rc == 0 and a.calls == PAIRS
        with Store(_store(config), read_only=True) as store:
            _, asked = store.query("SELECT model, prompt_sha256, query_id, doc_id, answer "
                                   "FROM model_answers ORDER BY query_id, doc_id")
        Path(_store(config)).unlink()
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
        _old_store(_store(config), [
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
        assert len(_judgments(_store(config), others)) == 8 * BORROWED + PAIRS
        before = _judgments(_store(config), others)
        with Store(_store(config)):  # migrates
            pass
        # B's four borrowed labels are gone, its own two kept; nobody else's touched
        assert _judgments(_store(config), ("llama-b",)) == sorted(
            judgment(r, "llama-b", b_text, 1, pool="web") for r in own)
        assert _judgments(_store(config), others) == before
        # a rerun of B asks its server for the four pairs it had borrowed, and records them
        rc, out = _judge(config, "llama-b", capsys)
        assert rc == 0, out
        assert f"{PAIRS - BORROWED} answered before (no call), {BORROWED} new answers" in out
        assert b.calls == BORROWED and a.calls == PAIRS
    assert _labels(config, "llama-b") == {(r[2], r[3]): 1 for r in asked}
    assert _labels(config, "llama-a") == {(r[2], r[3]): 3 for r in lent}
    assert _judgments(_store(config), others) == before


@pytest.mark.timeout(120)
def test_an_own_answer_replaces_a_label_reused_from_another_endpoint(template, tmp_path,
                                                                      capsys):
    with ChatServer(_always(3)) as a, ChatServer(_always(1)) as b:
        config = _campaign(template, tmp_path, {
            "llama-a": _entry(a), "llama-b": _entry(b, reuse_answers_from=["llama-a"])})
        assert _judge(config, "llama-a", capsys)[0] == 0
        rc, out = _judge(config, "llama-b", capsys)
        assert rc == 0 and b.calls == 0 and set(_labels(config, "llama-b").values()) == {3}
        # the config no longer lets B reuse A's answers: B asks its server, its labels follow
        _campaign(template, tmp_path, {"llama-a": _entry(a), "llama-b": _entry(b)})
        rc, out = _judge(config, "llama-b", capsys)
        assert rc == 0 and f"0 answered before (no call), {PAIRS} new answers" in out
        assert b.calls == PAIRS and a.calls == PAIRS
        assert _labels(config, "llama-b") == {k: 1 for k in _labels(config, "llama-a")}
        assert set(_labels(config, "llama-a").values()) == {3}
        assert len(_labels(config, "llama-b")) == PAIRS
        # reuse allowed again: B's own answers come first, its labels stay its own
        _campaign(template, tmp_path, {
            "llama-a": _entry(a), "llama-b": _entry(b, reuse_answers_from=["llama-a"])})
        rc, out = _judge(config, "llama-b", capsys)
        assert rc == 0 and f"{PAIRS} answered before (no call)" in out and b.calls == PAIRS
        assert set(_labels(config, "llama-b").values()) == {1}


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
