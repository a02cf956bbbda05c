"""The answers journal never blocks (issue 35): an answer the store cannot keep as it is (a
lone surrogate, an absurd token count, a relevance that is not a whole number, a line that is
not JSON) is stored normalised or kept aside in a quarantine file named in a message, the rest
is folded, and the next run asks only what was never answered. And a qrels file imported again
from the same path, corrected, replaces that judge's labels from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from campaigns import simulated_with_judge
from chat_server import ChatServer, rule_simulated

from irbench import cli
from irbench.errors import StoreError, StoreValueError
from irbench.judges.journal import Journal
from irbench.store import ModelAnswer, Store

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-journal"


@pytest.fixture
def server():
    with ChatServer(rule_simulated, api_key=KEY) as s:
        yield s


@pytest.fixture
def campaign(tmp_path, server, monkeypatch):
    monkeypatch.setenv("STANDIN_KEY", KEY)
    judge = {"base_url": server.base_url, "model": "stand-in-8b", "api_key_env": "STANDIN_KEY",
             "concurrency": 2, "backoff": 0, "retries": 1}
    return simulated_with_judge(tmp_path / "camp", {"standin": judge}, groups=3, topics=6,
                                depth=10, seed=3)


def _store(config: Path) -> str:
    return str(config.parent / "campaign.duckdb")


def _pairs(config: Path, tmp_path: Path, n: int) -> Path:
    lines = (config.parent / "qrels.txt").read_text().splitlines()[:n]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    return pairs


def _judge_cli(config: Path, pairs: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STANDIN_KEY": KEY}
    return subprocess.run([sys.executable, "-m", "irbench", "judge", str(config), "--judge",
                           "standin", "--pairs", str(pairs)], env=env, capture_output=True,
                          text=True, timeout=120)


def _answers(config: Path) -> dict[tuple[str, str], tuple]:
    with Store(_store(config), read_only=True) as store:
        _, rows = store.query("SELECT query_id, doc_id, answer, relevance, prompt_tokens, "
                              "completion_tokens FROM model_answers")
    return {(r[0], r[1]): r[2:] for r in rows}


@pytest.mark.timeout(120)
def test_a_lone_surrogate_in_an_answer_is_stored_escaped(campaign, server, capsys, tmp_path):
    """A model's answer holding a lone surrogate (JSON "\\ud800": not UTF-8, DuckDB refuses
    it) is stored with it escaped, with its grade, and blocks nothing."""
    pairs = _pairs(campaign, tmp_path, 5)
    answered = iter(range(100))

    def rule(body):  # the third request answered gets the surrogate
        return "\ud800 ##final score: 1" if next(answered) == 2 else rule_simulated(body)

    server.rule = rule
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--pairs",
                     str(pairs)]) == 0
    captured = capsys.readouterr()
    assert "5 new answers" in captured.out and "Traceback" not in captured.err
    assert "1 answers were stored normalised" in captured.err
    assert "lone surrogates in the answer" in captured.err
    answers = _answers(campaign)
    assert len(answers) == 5
    [(answer, relevance, *_)] = [v for v in answers.values() if "ud800" in v[0]]
    assert answer == "\\ud800 ##final score: 1" and relevance == 1
    assert not Path(_store(campaign) + ".answers.jsonl").exists()
    # the next run asks nothing again
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--pairs",
                     str(pairs)]) == 0
    assert "5 answered before (no call), 0 new answers" in capsys.readouterr().out
    assert server.calls == 5


@pytest.mark.timeout(180)
def test_a_journal_of_bad_answers_is_folded_and_the_rest_asked(campaign, server, capsys,
                                                               tmp_path):
    """A journal left by a killed run with a lone surrogate, usage of 1e30 and 2**70, a
    relevance "high", an answer with a docno that is not text, a whole line that is not JSON
    and a half line at the end: the next 'irbench judge' (a subprocess, against a good
    server) stores every answer it can (normalised), quarantines the rest in a file it names,
    empties the journal, and asks only the pairs never answered; the run after asks nothing."""
    pairs = _pairs(campaign, tmp_path, 10)
    # six real answers (their real request hashes), taken out of the store into a journal
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--pairs", str(pairs),
                     "--max-calls", "6"]) == 0
    capsys.readouterr()
    with Store(_store(campaign)) as store:
        _, rows = store.query("SELECT model, prompt_sha256, query_id, doc_id, judge, answer, "
                              "relevance, prompt_tokens, completion_tokens, seconds "
                              "FROM model_answers ORDER BY query_id, doc_id")
        store.con.execute("DELETE FROM model_answers")
        store.con.execute("DELETE FROM judgments")
    names = ("model", "prompt_sha256", "query_id", "doc_id", "judge", "answer", "relevance",
             "prompt_tokens", "completion_tokens", "seconds")
    records = [{**dict(zip(names, row)), "pool": ""} for row in rows]
    assert len(records) == 6
    records[0]["answer"] = "\ud800 ##final score: 1"
    records[0]["relevance"] = 1
    records[1]["prompt_tokens"] = 1e30
    records[2]["completion_tokens"] = 2**70
    records[3]["relevance"] = "high"
    not_text = {**records[4], "doc_id": 12345, "prompt_sha256": "0" * 64}
    lines = [json.dumps(r) + "\n" for r in records[:5]]
    lines += ['{"model": "stand-in-8b", "answer": not json}\n', json.dumps(not_text) + "\n",
              json.dumps(records[5]) + "\n", '{"model": "stand-in-8b", "prompt_sha']
    journal = Path(_store(campaign) + ".answers.jsonl")
    journal.write_text("".join(lines), encoding="utf-8")
    quarantine = Path(_store(campaign) + ".answers.quarantine.jsonl")
    calls = server.calls

    done = _judge_cli(campaign, pairs)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "damaged" not in done.stderr
    assert "7 answers left by an interrupted run were kept first" in done.stderr
    assert "10 pairs: 6 answered before (no call), 4 new answers" in done.stdout
    assert server.calls == calls + 4  # no paid answer asked for again
    assert "4 answers were stored normalised" in done.stderr
    assert f"2 answers or journal lines could not be stored: they are kept in {quarantine}" \
        in done.stderr
    assert not journal.exists()
    kept = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert len(kept) == 2
    assert kept[0]["line"] == 6 and "not json" in kept[0]["text"]
    assert kept[1]["answer"]["doc_id"] == 12345 and "not text" in kept[1]["reason"]

    answers = _answers(campaign)
    assert len(answers) == 10
    key = [(r["query_id"], r["doc_id"]) for r in records]
    assert answers[key[0]][:2] == ("\\ud800 ##final score: 1", 1)
    assert answers[key[1]][2] == 0 and answers[key[2]][3] == 0
    assert answers[key[3]][1] is None and answers[key[3]][0] == records[3]["answer"]
    assert answers[key[5]][0] == records[5]["answer"]
    with Store(_store(campaign), read_only=True) as store:
        judged = store.judgment_columns(None, ["standin"])
    assert len(judged["query_id"]) == 9  # every answer with a grade; "high" has none

    again = _judge_cli(campaign, pairs)
    assert again.returncode == 0, again.stderr
    assert "10 answered before (no call), 0 new answers" in again.stdout
    assert f"answers an earlier run could not store are kept in {quarantine}" in again.stderr
    assert server.calls == calls + 4


@pytest.mark.timeout(60)
def test_a_store_that_cannot_be_written_leaves_the_journal_whole(tmp_path):
    """A failure that is not the answers' (here: the store refusing every write) stops the
    fold and leaves every line of the journal for the next run; nothing is quarantined."""
    path = tmp_path / "s.duckdb.answers.jsonl"
    answer = ModelAnswer(model="m", prompt_sha256="a" * 64, query_id="1", doc_id="d",
                         judge="j", answer="##final score: 1", relevance=1, prompt_tokens=3,
                         completion_tokens=1, seconds=0.1)
    first = Journal(str(path), lambda answers, pool: [])
    first.append(answer, "")
    first.handle.close()  # as a killed run leaves it
    text = path.read_text()

    def refuse(answers, pool):
        raise StoreError("s.duckdb: cannot write the score store: the disk is full")

    with pytest.raises(StoreError):
        Journal(str(path), refuse).fold_leftovers()
    assert path.read_text() == text
    assert not Path(str(path).removesuffix(".jsonl") + ".quarantine.jsonl").exists()
    saved: list = []
    assert Journal(str(path), lambda answers, pool: saved.extend(answers)).fold_leftovers() == 1
    assert saved == [answer] and not path.exists()


@pytest.mark.timeout(60)
def test_a_batch_the_store_refuses_is_written_answer_by_answer(tmp_path):
    """A batch refused for one answer's value is rolled back and written one by one: the
    good answers are stored, the bad one quarantined."""
    store_path = str(tmp_path / "s.duckdb")
    good = [ModelAnswer(model="m", prompt_sha256=f"{i:064d}", query_id="1", doc_id=f"d{i}",
                        judge="j", answer="##final score: 1", relevance=1, prompt_tokens=3,
                        completion_tokens=1, seconds=0.1) for i in range(3)]
    bad = ModelAnswer(model=["not", "text"], prompt_sha256="f" * 64,  # type: ignore[arg-type]
                      query_id="1", doc_id="dx", judge="j", answer="x", relevance=None,
                      prompt_tokens=1, completion_tokens=1, seconds=0.1)
    with Store(store_path) as store:
        with pytest.raises(StoreValueError):
            store.save_answers([*good, bad])
        journal = Journal(store_path + ".answers.jsonl", store.save_answers)
        for a in [good[0], bad, *good[1:]]:
            journal.append(a, "p")
        journal.fold()
        _, rows = store.query("SELECT doc_id FROM model_answers ORDER BY doc_id")
    assert [r[0] for r in rows] == ["d0", "d1", "d2"]
    assert journal.quarantined == 1 and not os.path.exists(store_path + ".answers.jsonl")
    kept = json.loads(Path(journal.quarantine).read_text())
    assert kept["answer"]["model"] == ["not", "text"] and kept["pool"] == "p"


# ---- a qrels file imported again -------------------------------------------------------

def _qrels_cli(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "irbench", "qrels", str(config), *args],
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(120)
def test_a_corrected_qrels_file_imported_again_replaces_its_labels(tmp_path):
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "3",
                     "--pool-depth", "5", "--seed", "1"]) == 0
    config = folder / "campaign.yaml"
    labels = tmp_path / "nist.qrels"
    lines = (folder / "qrels.txt").read_text().splitlines()
    labels.write_text("".join(line + "\n" for line in lines))
    done = _qrels_cli(config, "--import", str(labels), "--as", "nist")
    assert done.returncode == 0, done.stderr
    assert f"{len(lines):,} judgments by 'nist' from {labels} recorded" in done.stdout
    # the same file again: nothing changed
    done = _qrels_cli(config, "--import", str(labels), "--as", "nist")
    assert f"nothing changed ({len(lines):,} labels there already" in done.stdout
    # corrected: two labels changed, one line dropped, one added
    q, z, d, r = lines[0].split()
    fixed = [f"{q} {z} {d} {int(r) + 5}"]
    q, z, d, r = lines[1].split()
    fixed.append(f"{q} {z} {d} {int(r) + 7}")
    fixed += lines[2:-1] + [f"{q} 0 NEW-DOC 2"]
    labels.write_text("".join(line + "\n" for line in fixed))
    done = _qrels_cli(config, "--import", str(labels), "--as", "nist")
    assert done.returncode == 0, done.stderr
    assert (f"replaced 2 labels, {len(lines) - 3:,} unchanged, 1 new, 1 removed"
            in done.stdout), done.stdout
    out = tmp_path / "back.qrels"
    assert _qrels_cli(config, "--judge", "nist", "-o", str(out)).returncode == 0
    got = sorted(tuple(line.split()) for line in out.read_text().splitlines())
    assert got == sorted(tuple(line.split()) for line in fixed)
