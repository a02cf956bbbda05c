"""Model judges end to end: a simulated campaign with documents, a local server speaking the
chat-completions protocol (tests/chat_server.py) in place of the model, the store's cache,
retries, budgets, qrels by rule and agreement with the simulated assessors."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from campaigns import simulated_with_judge
from chat_server import ChatServer, Fault, rule_simulated

from irbench import cli
from irbench.errors import ConfigError
from irbench.judges.prompts import UMBRELA, Prompt, PromptError, request_sha256
from irbench.judgments.rules import combine
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
# sha256 of UMBRELA's qrel_zeroshot_bing prompt (castorini/umbrela), its {query} and {passage}
# as written there: the default prompt is theirs word for word
UMBRELA_SHA256 = "c92537a4f97293dfe1fd5f3dccc3f7dea44e3ace65061a74dbf8afc833441546"


def test_the_default_prompt_is_umbrelas_word_for_word():
    theirs = UMBRELA.replace("{{ query }}", "{query}").replace("{{ text }}", "{passage}")
    assert hashlib.sha256(theirs.encode()).hexdigest() == UMBRELA_SHA256


def _topic(**fields):
    return {"query_id": "401", "title": "rural satellite shortages", "description": "d",
            "narrative": "n", **fields}


def test_grades_are_read_from_the_answer_and_checked_against_the_labels():
    r = Prompt(user=UMBRELA).compile()
    assert r.grade("##final score: 2") == 2
    assert r.grade("M: 2, T: 1\n##Final Score: 3") == 3
    assert r.grade("final score is 1") == 1
    assert r.grade("final score: 1 ... final score: 0") == 0  # the last one counts
    assert r.grade("final score: 7") is None  # not one of the labels
    assert r.grade("I think it is relevant") is None
    messages = r.messages(_topic(), "D1", "", "x" * 10_000)
    assert messages[0]["role"] == "user" and "Query: rural satellite shortages" in \
        messages[0]["content"] and "x" * 8000 + "\n" in messages[0]["content"]


def test_a_template_sees_the_topic_and_document_and_runs_in_a_sandbox():
    r = Prompt(user="{{ query_id }}|{{ narrative }}|{{ docno }}|{{ text }}",
               system="grade {{ title }}").compile()
    assert r.messages(_topic(), "D1", "t", "body") == [
        {"role": "system", "content": "grade rural satellite shortages"},
        {"role": "user", "content": "401|n|D1|body"}]
    with pytest.raises(PromptError):
        Prompt(user="{{ nosuchname }}").compile().messages(_topic(), "D1", "", "")
    with pytest.raises(PromptError):  # the sandbox refuses reaching into Python
        Prompt(user="{{ text.__class__.__mro__ }}").compile().messages(_topic(), "D", "", "")
    with pytest.raises(PromptError):
        Prompt(user="{% if %}").compile()


def test_the_request_hash_covers_messages_and_sampling():
    m = [{"role": "user", "content": "a"}]
    assert request_sha256(m, 0.0, 100) == request_sha256(list(m), 0.0, 100)
    assert len({request_sha256(m, 0.0, 100), request_sha256(m, 0.5, 100),
                request_sha256(m, 0.0, None),
                request_sha256([{"role": "user", "content": "b"}], 0.0, 100)}) == 4


def _columns(rows):
    q, d, r, j, k = (np.array(c, dtype=object) for c in zip(*rows))
    return {"query_id": q, "doc_id": d, "relevance": r.astype(np.int64), "judge": j,
            "judge_kind": k, "position": np.arange(len(rows))}


def test_qrels_rules():
    rows = [("1", "a", 2, "ann", "human"), ("1", "a", 0, "llm", "model"),
            ("1", "a", 0, "bob", "human"),
            ("1", "b", 1, "llm", "model"), ("1", "b", 3, "llm2", "model"),
            ("2", "c", 1, "ann", "human"), ("2", "c", 3, "ann", "human"),  # ann changed her mind
            ("2", "c", 0, "llm", "model")]
    cols = _columns(rows)

    def labels(rule, order=()):
        q, d, r = combine(cols, rule, order)
        return {(a, b): int(c) for a, b, c in zip(q, d, r)}

    assert labels("majority") == {("1", "a"): 0, ("1", "b"): 1, ("2", "c"): 0}  # ties: lower
    assert labels("max") == {("1", "a"): 2, ("1", "b"): 3, ("2", "c"): 3}
    assert labels("min") == {("1", "a"): 0, ("1", "b"): 1, ("2", "c"): 0}
    assert labels("first", ["llm2", "ann"]) == {("1", "a"): 2, ("1", "b"): 3, ("2", "c"): 3}
    assert labels("human-first") == {("1", "a"): 0, ("1", "b"): 1, ("2", "c"): 3}
    empty = {k: v[:0] for k, v in cols.items()}
    assert [len(c) for c in combine(empty, "majority")] == [0, 0, 0]


# ---- a simulated campaign judged by the stand-in model -----------------------------------

@pytest.fixture
def server():
    with ChatServer(rule_simulated, api_key="sk-test-123") as s:
        yield s


@pytest.fixture
def campaign(tmp_path, server, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STANDIN_KEY", "sk-test-123")
    judge = {"base_url": server.base_url, "model": "stand-in-8b", "api_key_env": "STANDIN_KEY",
             "concurrency": 4, "backoff": 0, "retries": 3}
    return simulated_with_judge(tmp_path / "camp", {"standin": judge}, groups=3, topics=6,
                                depth=10, seed=3)


def _judge(config, *extra) -> int:
    return cli.main(["judge", str(config), "--judge", "standin", *extra])


def _store(config) -> str:
    return str(config.parent / "campaign.duckdb")


def test_a_pool_judged_by_a_model_then_qrels_and_agreement(campaign, server, capsys, tmp_path):
    assert cli.main(["pool", "build", str(campaign), "--param", "k=5", "--name", "d5",
                     "-o", str(tmp_path / "assess")]) == 0
    capsys.readouterr()
    assert _judge(campaign, "--pool", "d5") == 0
    out = capsys.readouterr().out
    with Store(_store(campaign), read_only=True) as store:
        pool = store.pool_documents("d5")
        cols = store.judgment_columns("d5", ["standin"])
        _, answers = store.query("SELECT count(*), count(DISTINCT prompt_sha256), "
                                 "sum(prompt_tokens) FROM model_answers")
        _, judges = store.query("SELECT name, model, settings FROM judges")
    n = len(pool[0])
    assert n > 0 and f"{n} pairs: 0 answered before (no call), {n} new answers" in out
    assert server.calls == n and answers[0][0] == n == answers[0][1] and answers[0][2] > 0
    assert len(cols["query_id"]) == n and set(cols["judge_kind"]) == {"model"}
    assert judges[0][:2] == ("standin", "stand-in-8b")
    assert "sk-test-123" not in judges[0][2] and "STANDIN_KEY" in judges[0][2]
    # again: every answer comes from the store, no call is made
    assert _judge(campaign, "--pool", "d5") == 0
    assert f"{n} answered before (no call), 0 new answers" in capsys.readouterr().out
    assert server.calls == n
    # the stand-in reads the simulated documents as the simulated assessors graded them
    llm = tmp_path / "llm.qrels"
    assert cli.main(["qrels", str(campaign), "--judge", "standin", "-o", str(llm)]) == 0
    assert f"{n} judgments of" in capsys.readouterr().out
    official = {tuple(line.split()[::2][:2]): line.split()[3] for line in
                (campaign.parent / "qrels.txt").read_text().splitlines()}
    mine = [line.split() for line in llm.read_text().splitlines()]
    assert len(mine) == n
    both = [(official[(q, d)], r) for q, _, d, r in mine if (q, d) in official]
    assert both and all(a == b for a, b in both)
    assert cli.main(["agreement", str(campaign.parent / "qrels.txt"), str(llm),
                     "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["agreements"][0]["kappa"] == pytest.approx(1.0)
    assert cli.main(["judges", str(campaign)]) == 0
    table = capsys.readouterr().out
    assert "standin" in table and "stand-in-8b" in table


def test_filling_holes_judges_only_unjudged_documents(campaign, server, capsys):
    assert _judge(campaign, "--holes", "official", "--depth", "20") == 0
    official = {tuple(line.split()[::2][:2]) for line in
                (campaign.parent / "qrels.txt").read_text().splitlines()}
    asked = set()
    for body in server.requests:
        text = body["messages"][-1]["content"]
        asked.add(text)
    with Store(_store(campaign), read_only=True) as store:
        cols = store.judgment_columns(None, ["standin"])
    pairs = set(zip(cols["query_id"].tolist(), cols["doc_id"].tolist()))
    assert pairs and not pairs & official and server.calls == len(pairs) == len(asked)
    # imported assessors' labels, then the holes filled by the model: human-first
    assert cli.main(["qrels", str(campaign), "--import", str(campaign.parent / "qrels.txt"),
                     "--as", "nist"]) == 0
    out = campaign.parent / "filled.qrels"
    assert cli.main(["qrels", str(campaign), "--rule", "human-first", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(official) + len(pairs)


def test_retries_faults_and_unparseable_answers(campaign, server, capsys, tmp_path):
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["standin"]["retries"] = 8  # one request may meet every fault in turn
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    pairs = tmp_path / "pairs.txt"
    lines = (campaign.parent / "qrels.txt").read_text().splitlines()[:8]
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    server.fail(Fault.RATE_LIMIT, times=2, retry_after=0)
    server.fail(Fault.SERVER_ERROR, times=1)
    server.fail(Fault.MALFORMED_JSON, times=1)
    server.fail(Fault.NO_CHOICES, times=1)
    server.fail(Fault.DISCONNECT, times=1)
    server.fail(Fault.TRUNCATED, times=1)
    assert _judge(campaign, "--pairs", str(pairs)) == 0
    out = capsys.readouterr().out
    assert "8 pairs: 0 answered before (no call), 8 new answers" in out and "0 failed" in out
    assert server.calls == 8 and len(server.requests) == 8 + 7


def test_a_request_that_keeps_failing_fails_alone(campaign, server, capsys, tmp_path):
    lines = (campaign.parent / "qrels.txt").read_text().splitlines()[:5]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    bad = lines[2].split()[2]
    from irbench.config import load_config
    from irbench.documents import open_documents

    with open_documents(load_config(campaign).documents) as docs:
        text = docs.get(bad).text
    server.fail(Fault.SERVER_ERROR, times=4,
                when=lambda body: text in body["messages"][-1]["content"])
    assert _judge(campaign, "--pairs", str(pairs)) == 0
    captured = capsys.readouterr()
    assert "4 new answers" in captured.out and "1 failed" in captured.out
    assert f"{bad}: server error 500 (after 4 attempts)" in captured.err
    assert _judge(campaign, "--pairs", str(pairs)) == 0  # the failed one is asked again
    assert "4 answered before (no call), 1 new answers" in capsys.readouterr().out


def test_unparseable_answers_are_kept_but_not_judgments(campaign, server, capsys, tmp_path):
    server.rule = lambda body: "It seems relevant to me."
    lines = (campaign.parent / "qrels.txt").read_text().splitlines()[:3]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    assert _judge(campaign, "--pairs", str(pairs)) == 0
    assert "3 without a grade" in capsys.readouterr().out
    with Store(_store(campaign), read_only=True) as store:
        _, rows = store.query("SELECT count(*) FILTER (WHERE relevance IS NULL) "
                              "FROM model_answers")
        assert rows[0][0] == 3 and len(store.judgment_columns()["query_id"]) == 0
    assert _judge(campaign, "--pairs", str(pairs)) == 0  # paid once: not asked again
    assert server.calls == 3


def test_a_wrong_key_stops_with_a_message(campaign, server, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_KEY", "sk-wrong")
    pairs = tmp_path / "pairs.txt"
    line = (campaign.parent / "qrels.txt").read_text().splitlines()[0].split()
    pairs.write_text(f"{line[0]} {line[2]}\n")
    assert _judge(campaign, "--pairs", str(pairs)) == 1
    err = capsys.readouterr().err
    assert "answered 401" in err and "STANDIN_KEY" in err and "Traceback" not in err
    assert "sk-wrong" not in err
    monkeypatch.delenv("STANDIN_KEY")
    assert _judge(campaign, "--pairs", str(pairs)) == 1
    assert "STANDIN_KEY (its API key) is not set" in capsys.readouterr().err


def test_the_budget_stops_cleanly(campaign, server, capsys, tmp_path):
    lines = (campaign.parent / "qrels.txt").read_text().splitlines()[:10]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    assert _judge(campaign, "--pairs", str(pairs), "--max-calls", "4") == 0
    captured = capsys.readouterr()
    assert "4 new answers" in captured.out and "6 pairs were not asked" in captured.err
    assert server.calls == 4
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["standin"]["max_calls"] = 7  # the judge's budget counts what it spent
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    assert _judge(campaign, "--pairs", str(pairs)) == 0
    assert "3 new answers" in capsys.readouterr().out and server.calls == 7


def test_judges_config_problems(tmp_path, campaign):
    data = yaml.safe_load(campaign.read_text())
    data["judges"] = {"a": {"base_url": "ftp://x", "model": "m", "api_key": "sk-1",
                            "concurrency": 0, "prompt": "prompts/none.j2"},
                      "b": {"model": "m", "base_url": "http://h/v1", "api_key_env": "sk-1abc!",
                            "label_pattern": "no group"}}
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    from irbench.config import load_config

    with pytest.raises(ConfigError) as info:
        load_config(campaign)
    text = str(info.value)
    for expected in ("judges.a.base_url: an http:// or https:// URL",
                     "judges.a.api_key: unknown key", "judges.a.concurrency: a whole number",
                     "judges.a.prompt: no such file", "judges.b.api_key_env: the name of an",
                     "judges.b.label_pattern: a regular expression whose first group"):
        assert expected in text, text


# ---- killed mid-judging -------------------------------------------------------------------

def test_a_killed_judge_resumes_without_asking_twice(campaign, server, tmp_path):
    """Killed (SIGKILL) while waiting on the model: the answers it received are in its
    journal; the next run keeps them first and asks only for the rest."""
    lines = (campaign.parent / "qrels.txt").read_text().splitlines()[:12]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["standin"]["concurrency"] = 1
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    asked = iter(range(10**6))  # the server asks the predicate once per request
    holding = [True]
    server.fail(Fault.HANG, times=100, when=lambda body: next(asked) >= 5 and holding[0])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    journal = Path(_store(campaign) + ".answers.jsonl")
    command = [sys.executable, "-m", "irbench", "judge", str(campaign), "--judge", "standin",
               "--pairs", str(pairs)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert server.wait_held(1, timeout=60)
        for _ in range(600):  # the fifth answer reaches the journal just after it arrives
            if journal.exists() and len(journal.read_text().splitlines()) == 5:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert server.calls == 5 and len(journal.read_text().splitlines()) == 5
    holding[0] = False
    server.release()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "5 answers left by an interrupted run were kept first" in done.stderr
    assert "12 pairs: 5 answered before (no call), 7 new answers" in done.stdout
    assert server.calls == 12  # no answered request was asked again
    assert not journal.exists()


def test_the_report_compares_qrels_sets_and_warns_of_one_llm_judge(campaign, server, capsys):
    """A qrels set written by 'irbench qrels' from one model judge's labels, added to the
    config: the report's section 6d compares its leaderboard with the assessors', the page
    warns that it rests on one LLM judge, and a run whose metadata names the model is
    marked."""
    assert cli.main(["pool", "build", str(campaign), "--param", "k=10", "--name", "d10"]) == 0
    assert _judge(campaign, "--pool", "d10") == 0
    llm = campaign.parent / "llm.qrels"
    assert cli.main(["qrels", str(campaign), "--judge", "standin", "-o", str(llm)]) == 0
    data = yaml.safe_load(campaign.read_text())
    data["collection"]["qrels"]["llm"] = "llm.qrels"
    data["systems"][1]["metadata"] = {"model": "stand-in-8b", "note": "<script>x</script>"}
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", str(campaign), "--quiet", "--workers", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(campaign), "--out", str(campaign.parent / "report")]) == 0
    page = (campaign.parent / "report" / "index.html").read_text()
    section = page[page.index('<section id="qrels">'):]
    section = section[:section.index("</section>")]
    assert "llm" in section and "models: standin (stand-in-8b)" in section
    assert "Labels of llm against official" in section and "Cohen" in section
    assert "rests on one LLM judge alone (stand-in-8b)" in page
    marked = data["systems"][1]["name"]
    # the legend, and each suite's leaderboard on screen and in print
    assert page.count("◆") == 1 + 2 * len(data["suites"])
    assert f"{marked}</bdi> <span title=\"its metadata names the LLM judge's model\">◆" in page
    assert "<script>x</script>" not in page


def test_a_request_the_server_never_answers_times_out_and_is_tried_again(campaign, server,
                                                                          capsys, tmp_path):
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["standin"].update(timeout=0.5, concurrency=1)
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    line = (campaign.parent / "qrels.txt").read_text().splitlines()[0].split()
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(f"{line[0]} {line[2]}\n")
    server.fail(Fault.HANG, times=1)  # never answered: the client gives up after 0.5 s
    assert _judge(campaign, "--pairs", str(pairs)) == 0
    assert "1 new answers" in capsys.readouterr().out
    assert server.held == 1 and server.calls == 1 and len(server.requests) == 2
    server.release()


def test_without_the_judge_extra_a_message_not_a_traceback(campaign, capsys, monkeypatch,
                                                            tmp_path):
    monkeypatch.setitem(sys.modules, "httpx", None)  # as if httpx were not installed
    line = (campaign.parent / "qrels.txt").read_text().splitlines()[0].split()
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(f"{line[0]} {line[2]}\n")
    assert _judge(campaign, "--pairs", str(pairs)) == 1
    err = capsys.readouterr().err
    assert "pip install 'irbench[judge]'" in err and "Traceback" not in err
