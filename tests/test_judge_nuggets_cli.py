"""The nugget judge through the command line (issue 40): ``irbench judge CONFIG --judge NAME
--nuggets`` on the bundled answer campaign (runs/rag) against the stand-in chat server
answering by AutoNuggetizer's rule (tests/chat_server.py rule_nuggets), the nuggets and
assignments the store keeps, ``irbench qrels --nuggets -o DIR`` and scoring what it writes,
a SIGKILLed run resumed, config mistakes with their lines."""

from __future__ import annotations

import collections
import json
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from chat_server import ChatServer, Fault, rule_nuggets
from test_judge_nuggets import RAG, _campaign, _expected

from irbench import cli
from irbench.config import load_config
from irbench.judges.journal import journal_path
from irbench.store import Store

CONFIG = RAG.parent.parent / "configs" / "rag.yaml"


@pytest.fixture(scope="module")
def campaign():
    return _campaign()


def make_config(folder: Path, server: ChatServer, **judge) -> Path:
    """The bundled answer campaign (its answer runs only) with a nugget judge 'nug' asking
    the stand-in: windows of 3 segments, batches of 4 nuggets unless ``judge`` says."""
    data = yaml.safe_load(CONFIG.read_text())
    base = CONFIG.parent

    def absolute(path: str) -> str:
        return str((base / path).resolve())

    collection = data["collection"]
    for key in ("topics", "documents"):
        collection[key] = absolute(collection[key])
    collection["qrels"] = {"official": absolute(collection["qrels"]["official"]),
                           "bundled": {"path": absolute(collection["qrels"]["nuggets"]["path"]),
                                       "kind": "nuggets"}}
    data["systems"] = [{**s, "answers": absolute(s["answers"])} for s in data["systems"]
                       if "answers" in s]
    data["suites"] = {"answers": ["nugget_score", "nugget_score(importance=vital,strict=true)"]}
    data["judges"] = {"nug": {"base_url": server.base_url, "model": "stand-in",
                              "task": "nugget_create", "window": 3, "batch": 4, "backoff": 0,
                              "retries": 0, "concurrency": 4, **judge}}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def stored(config: Path, judge: str = "nug"):
    """The store's live lists {topic: [(text, importance)]} and assignments {(topic, run):
    {text: assignment}}."""
    names = {2: "support", 1: "partial_support", 0: "not_support"}
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        live = store.live_nuggets(judge)
        c = store.answer_label_columns("nugget", [judge])
    texts = {n.nugget_id: n.text for nuggets in live.values() for n in nuggets}
    assigned: dict = {}
    for q, ref, run, label in zip(c["query_id"], c["reference"], c["run_id"], c["label"]):
        assigned.setdefault((q, run), {})[texts[ref]] = names[int(label)]
    return ({q: [(n.text, n.importance) for n in x] for q, x in live.items()}, assigned)


def wanted(campaign):
    lists, rows = _expected(campaign)
    return ({q: [(n["text"], n["importance"]) for n in x] for q, x in lists.items()},
            {(r["qid"], r["run_id"]): {n["text"]: n["assignment"] for n in r["nuggets"]}
             for r in rows}, rows)


def _judge(config: Path, *more: str) -> int:
    return cli.main(["judge", str(config), "--judge", "nug", "--nuggets", *more])


@pytest.mark.timeout(240)
def test_stored_nuggets_and_assignments_equal_the_rule_and_a_rerun_asks_nothing(
        campaign, tmp_path, capsys):
    lists, assigned, _ = wanted(campaign)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        config = make_config(tmp_path / "camp", server)
        assert _judge(config) == 0
        first = capsys.readouterr()
        calls = server.calls
        assert stored(config) == (lists, assigned)
        assert _judge(config) == 0  # again: every answer from the store, nothing new
        again = capsys.readouterr().out
        assert server.calls == calls
    assert f"{len(lists)} topics' nugget lists" in first.out
    assert "406" in first.err  # the topic without relevant segments is named
    assert "0 nuggets new in the store" in again and "(0 labels new)" in again
    assert f"{calls} answered before (no call), 0 new answers" in again
    assert stored(config) == (lists, assigned)
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        units = store.query("SELECT DISTINCT split_part(doc_id, '/', 1) FROM model_answers "
                            "WHERE judge = 'nug' ORDER BY 1")[1]
        count = store.query("SELECT count(*) FROM model_answers WHERE judge = 'nug'")[1]
    assert units == [("assign",), ("create",), ("importance",)] and count == [(calls,)]


@pytest.mark.timeout(300)
def test_the_written_files_score_as_the_rule_s_assignments(campaign, tmp_path, capsys):
    _, _, rows = wanted(campaign)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        config = make_config(tmp_path / "camp", server)
        assert _judge(config) == 0
    out = tmp_path / "camp" / "model-nuggets"
    assert cli.main(["qrels", str(config), "--nuggets", "-o", str(out)]) == 0
    assert "a qrels set of kind nuggets" in capsys.readouterr().out
    written = [json.loads(x) for x in (out / "assignments.jsonl").open()]
    assert sorted(written, key=lambda r: (r["qid"], r["run_id"])) == \
        sorted(rows, key=lambda r: (r["qid"], r["run_id"]))
    lists, _, _ = wanted(campaign)
    assert {x["qid"]: [(n["text"], n["importance"]) for n in x["nuggets"]]
            for x in map(json.loads, (out / "nuggets.jsonl").open())} == lists
    hand = tmp_path / "camp" / "hand.jsonl"
    hand.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = yaml.safe_load(config.read_text())
    data["collection"]["qrels"] = {
        "official": data["collection"]["qrels"]["official"],
        "model": {"path": str(out / "assignments.jsonl"), "kind": "nuggets"},
        "hand": {"path": str(hand), "kind": "nuggets"}}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    capsys.readouterr()
    tables = []
    for name in ("model", "hand"):
        assert cli.main(["scores", str(config), "--qrels", name]) == 0
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1] and "groupA-rag1" in tables[0]
    assert re.search(r"nugget_score", tables[0])
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        assert store.qrels_judges()["model"][0] == ["nug"]


class Counting:
    """AutoNuggetizer's stand-in rule, counting the requests it answered; after
    ``hold_after`` answers (None: never) every further request is held until released."""

    def __init__(self, rule, hold_after: int | None = None):
        self.rule = rule
        self.answered: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        self.hold_after = hold_after

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.answered[json.dumps(body["messages"], sort_keys=True)] += 1
        return self.rule(body)

    def holding(self, body: dict) -> bool:
        with self.lock:
            return self.hold_after is not None and sum(self.answered.values()) >= self.hold_after


@pytest.mark.timeout(300)
# held in creation (37 requests), in importance (29 more), in assignment
@pytest.mark.parametrize("hold_after", [5, 40, 90])
def test_a_killed_run_resumes_paying_for_no_answer_twice(campaign, tmp_path, hold_after):
    lists, assigned, _ = wanted(campaign)
    rule = Counting(rule_nuggets(campaign[4]), hold_after=hold_after)
    with ChatServer(rule) as server:
        server.fail(Fault.HANG, times=100_000, when=rule.holding)
        config = make_config(tmp_path / "camp", server, concurrency=1)
        store = load_config(str(config), strict=False).store
        child = subprocess.Popen([sys.executable, "-m", "irbench", "judge", str(config),
                                  "--judge", "nug", "--nuggets"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            assert server.wait_held(1, timeout=120)  # hold_after answers journaled, one held
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
        assert sum(rule.answered.values()) == hold_after
        journaled = len(Path(journal_path(store)).read_text().splitlines())
        with Store(store, read_only=True) as opened:  # each round's answers, folded
            kept = opened.query("SELECT count(*) FROM model_answers")[1][0][0]
        assert journaled + kept == hold_after and journaled > 0
        rule.hold_after = None  # the server answers again
        server.release()
        assert _judge(config) == 0
    assert stored(config) == (lists, assigned)
    assert max(rule.answered.values()) == 1  # no answer paid twice
    with Store(store, read_only=True) as opened:
        total = opened.query("SELECT count(*) FROM model_answers WHERE judge = 'nug'")[1]
    assert total == [(sum(rule.answered.values()),)]


def _line_of(config: Path, key: str) -> int:
    return next(i for i, line in enumerate(config.read_text().splitlines(), 1)
                if line.strip().startswith(f"{key}:"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("key,value,reason", [
    ("window", 0, "a whole number >= 1"),
    ("batch", "ten", "a whole number >= 1"),
    ("max_nuggets", 2.5, "a whole number >= 1"),
])
def test_bad_nugget_settings_are_named_with_their_line(tmp_path, capsys, key, value, reason):
    with ChatServer(lambda body: "[]") as server:
        config = make_config(tmp_path / "camp", server, **{key: value})
        assert _judge(config) != 0
        assert server.calls == 0
    err = capsys.readouterr().err
    assert f"campaign.yaml:{_line_of(config, key)}" in err and reason in err
    assert "Traceback" not in err


@pytest.mark.timeout(60)
def test_nugget_settings_on_another_task_and_the_wrong_flags_are_refused(tmp_path, capsys):
    with ChatServer(lambda body: "[]") as server:
        config = make_config(tmp_path / "camp", server, task="relevance")
        assert _judge(config) != 0
        err = capsys.readouterr().err
        assert f"campaign.yaml:{_line_of(config, 'window')}" in err
        assert "a nugget judge's setting" in err
        config = make_config(tmp_path / "camp", server)
        assert cli.main(["judge", str(config), "--judge", "nug", "--holes", "official"]) != 0
        assert "is a nugget judge: give --nuggets" in capsys.readouterr().err
        assert _judge(config, "--support") != 0
        assert "not with --support" in capsys.readouterr().err
        data = yaml.safe_load(config.read_text())
        del data["judges"]["nug"]["window"], data["judges"]["nug"]["batch"]
        data["judges"]["nug"]["task"] = "relevance"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        assert _judge(config) != 0
        assert "not nuggets (give it 'task: nugget_create'" in capsys.readouterr().err
        assert cli.main(["qrels", str(config), "--nuggets"]) != 0
        assert "give their folder with -o DIR" in capsys.readouterr().err
        assert cli.main(["qrels", str(config), "--nuggets", "-o", str(tmp_path / "o")]) != 0
        assert "no nugget lists" in capsys.readouterr().err
        assert server.calls == 0


def test_a_list_stored_again_changes_nothing_and_a_new_list_ends_the_judge_s_own(tmp_path):
    """The same list twice: nothing added. A person's edit (a row ended, one derived from it)
    stays when the model's list is stored again; a different model list ends the model's
    own live nuggets it does not hold, and the person's nugget stays live."""
    with Store(str(tmp_path / "s.duckdb")) as store:
        assert store.record_model_nuggets("nug", {"1": [("a", "vital"), ("b", "okay")]}) == 2
        assert store.record_model_nuggets("nug", {"1": [("a", "vital"), ("b", "okay")]}) == 0
        first = store.live_nuggets("nug")["1"]
        b = first[1].nugget_id
        with store.transaction():  # a desk's edit of b, as the table's design records it
            store.con.execute("UPDATE nuggets SET deleted_at = now(), deleted_by = 'ann' "
                              "WHERE nugget_id = ?", [b])
            store.con.execute("INSERT INTO nuggets VALUES ('1', 'p-1', 'b, better', 'okay', "
                              "1, 'person', 'nug', 'ann', [?], now(), NULL, NULL)", [b])
        assert store.record_model_nuggets("nug", {"1": [("a", "vital"), ("b", "okay")]}) == 0
        assert [n.text for n in store.live_nuggets("nug")["1"]] == ["a", "b, better"]
        assert store.record_model_nuggets("nug", {"1": [("c", "vital")]}) == 1
        live = store.live_nuggets("nug")["1"]
        assert [(n.text, n.origin, n.made_by) for n in live] == [
            ("c", "model", "nug"), ("b, better", "person", "ann")]
        ended = store.query("SELECT text, deleted_by FROM nuggets WHERE deleted_at IS NOT "
                            "NULL ORDER BY text")[1]
        assert ended == [("a", "nug"), ("b", "ann")]
        assert store.nugget_judges() == ["nug"]


@pytest.mark.timeout(240)
def test_a_run_stopped_by_its_budget_says_so_and_a_rerun_finishes(campaign, tmp_path, capsys):
    lists, assigned, _ = wanted(campaign)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        config = make_config(tmp_path / "camp", server)
        assert _judge(config, "--max-calls", "20") == 0
        err = capsys.readouterr().err
        assert server.calls == 20
        assert "unfinished (the budget is spent" in err and "run again" in err
        assert _judge(config) == 0
        out = capsys.readouterr().out
    assert "20 answered before (no call)" in out
    assert stored(config) == (lists, assigned)
