"""Model answers keyed by the endpoint too, and honest counts (issue 37).

Two judges with one model name on two servers never share answers (each server is a real local
stand-in answering differently: tests/chat_server.py); an answer of another endpoint is reused
only when the judge's ``reuse_answers_from`` names it. A store of schema 15 with answers
migrates and keeps them; a journal line written before endpoints were kept folds as its
judge's. ``irbench judge`` exits non-zero when every request failed, 0 when every answer was
held already; ``irbench judges`` shows calls and HTTP requests (retries included) apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chat_server import ChatServer, Fault
from judge_campaign import (
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

from irbench import cli
from irbench.config import load_config
from irbench.errors import ConfigError
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("endpoints"), seed=5)


def _judge_process(config: Path, name: str) -> subprocess.CompletedProcess:
    """``irbench judge`` in a process of its own: its exit status is what is tested."""
    return subprocess.run([sys.executable, "-m", "irbench", "judge", str(config), "--judge",
                           name, "--pairs", str(config.parent / "pairs.txt")],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)


def _judges_table(config: Path, capsys) -> dict[str, dict[str, str]]:
    """``irbench judges``'s table: {judge: {column: cell}}, the columns cut where the dashed
    rule under the header has its dashes (an empty cell stays empty)."""
    assert cli.main(["judges", str(config)]) == 0
    lines = capsys.readouterr().out.splitlines()
    spans, start = [], None
    for i, char in enumerate(lines[1] + " "):
        if char == "-" and start is None:
            start = i
        elif char != "-" and start is not None:
            spans.append((start, i))
            start = None
    cut = [[line.ljust(spans[-1][1])[a:b].strip() for a, b in spans] for line in lines]
    header = cut[0]
    return {row[0]: dict(zip(header, row)) for row in cut[2:]}


@pytest.mark.timeout(120)
def test_two_servers_of_one_model_name_never_share_answers(template, tmp_path, capsys):
    with ChatServer(always(3)) as a, ChatServer(always(1)) as b, \
            ChatServer(always(0)) as c, ChatServer(always(0)) as d:
        config = config_with(template, tmp_path, {
            "llama-a": entry(a), "llama-b": entry(b),
            "llama-c": entry(c, reuse_answers_from=["llama-a"]),
            "llama-d": entry(d, reuse_answers_from=[b.base_url + "/"])})
        rc, out, _ = run_judge(config, "llama-a", capsys)
        assert rc == 0 and f"{PAIRS} new answers" in out and a.calls == PAIRS
        # before: B made 0 calls and took A's labels; now it asks its own server
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and f"0 answered before (no call), {PAIRS} new answers" in out
        assert b.calls == PAIRS and a.calls == PAIRS
        assert set(labels_of(config, "llama-a").values()) == {3}
        assert set(labels_of(config, "llama-b").values()) == {1}
        assert len(labels_of(config, "llama-b")) == PAIRS
        # reuse_answers_from names judge A: C asks nothing and has A's labels
        rc, out, err = run_judge(config, "llama-c", capsys)
        assert rc == 0 and f"{PAIRS} answered before (no call), 0 new answers" in out
        assert f"{PAIRS} of the answers held before came from another endpoint" in err
        assert c.calls == 0 and labels_of(config, "llama-c") == labels_of(config, "llama-a")
        # ... or B's base_url (a trailing / as written in a config): D has B's labels
        rc, out, _ = run_judge(config, "llama-d", capsys)
        assert rc == 0 and d.calls == 0
        assert labels_of(config, "llama-d") == labels_of(config, "llama-b")
        # a rerun of B still takes its own answers (its own endpoint comes first)
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and f"{PAIRS} answered before" in out and b.calls == PAIRS
    with Store(store_path(config), read_only=True) as store:
        _, rows = store.query("SELECT endpoint, judge, count(*), sum(requests) FROM "
                              "model_answers GROUP BY ALL ORDER BY judge")
    # the answers reused are kept once, under the endpoint that gave them
    assert rows == [(a.base_url, "llama-a", PAIRS, PAIRS), (b.base_url, "llama-b", PAIRS, PAIRS)]


@pytest.mark.timeout(60)
def test_reuse_answers_from_is_checked(template, tmp_path):
    with ChatServer(always(1)) as a:
        config = config_with(template, tmp_path, {
            "x": entry(a, reuse_answers_from="llama-a"),
            "y": entry(a, reuse_answers_from=[
                "https://bob:pw@h.example/v1", "ftp://h/v1", "no spaces", 7, "y",
                a.base_url, "fine", "https://h.example/v1/"])})
        with pytest.raises(ConfigError) as info:
            load_config(config)
    text = str(info.value)
    for expected in (
            "judges.x.reuse_answers_from: a list of judge names and base_urls",
            "reuse_answers_from[0]: a base_url: holds a user name or password",
            "reuse_answers_from[1]: a base_url: an http:// or https:// URL",
            "reuse_answers_from[2]: not a judge's name",
            "reuse_answers_from[3]: a list of judge names and base_urls",
            "reuse_answers_from[4]: this judge itself",
            "reuse_answers_from[5]: this judge's own base_url"):
        assert expected in text, text
    assert "bob:pw" not in text and "[6]" not in text and "[7]" not in text


@pytest.mark.timeout(120)
def test_a_store_of_schema_15_with_answers_migrates_and_keeps_them(template, tmp_path, capsys):
    with ChatServer(always(2)) as a, ChatServer(always(0)) as b, \
            ChatServer(always(0)) as c:
        config = config_with(template, tmp_path, {
            "llama-a": entry(a), "llama-b": entry(b),
            "llama-c": entry(c, reuse_answers_from=["gone"])})
        rc, _, _ = run_judge(config, "llama-a", capsys)  # the requests' sha256, as judged today
        assert rc == 0 and a.calls == PAIRS
        with Store(store_path(config), read_only=True) as store:
            _, answered = store.query("SELECT model, prompt_sha256, query_id, doc_id, judge, "
                                      "answer, relevance FROM model_answers ORDER BY doc_id")
        os.remove(store_path(config))
        # at schema 15: A's answers of four pairs, those of a judge the store does not know
        # ('gone') of the other two
        old = [(*r[:4], "gone", "##final score: 1", 1) for r in answered[:2]] + answered[2:]
        schema_15_store(store_path(config), [("llama-a", MODEL, a.base_url, "{}")], old)
        rc, out, _ = run_judge(config, "llama-a", capsys)  # migrates, then judges
        assert rc == 0
        # A's answers are kept and reused; the two answered only by 'gone' are asked again
        assert f"{PAIRS - 2} answered before (no call), 2 new answers" in out
        assert a.calls == PAIRS + 2
        with Store(store_path(config), read_only=True) as store:
            _, rows = store.query("SELECT endpoint, judge, count(*), count(requests) FROM "
                                  "model_answers GROUP BY ALL ORDER BY judge")
            _, version = store.query("SELECT max(version) FROM migrations")
        assert version[0][0] >= 16
        # A's four kept (their requests unknown) and two new; gone's two under 'unknown'
        assert rows == [("unknown", "gone", 2, 0), (a.base_url, "llama-a", PAIRS, 2)]
        # B (another server) asks its own; C, allowed 'gone', takes its two answers
        rc, out, _ = run_judge(config, "llama-b", capsys)
        assert rc == 0 and b.calls == PAIRS
        rc, out, _ = run_judge(config, "llama-c", capsys)
        assert rc == 0 and "2 answered before (no call)" in out and c.calls == PAIRS - 2
        table = _judges_table(config, capsys)
    assert table["llama-a"]["calls"] == str(PAIRS)
    assert table["llama-a"]["HTTP requests"] == "2 + unknown (4 calls)"
    assert table["gone"]["HTTP requests"] == "unknown"
    assert table["llama-b"]["HTTP requests"] == str(PAIRS)


@pytest.mark.timeout(120)
def test_a_journal_written_before_endpoints_folds_as_its_judges(template, tmp_path, capsys):
    with ChatServer(always(2)) as a, ChatServer(always(0)) as b:
        config = config_with(template, tmp_path, {"llama-a": entry(a),
                                                "llama-b": entry(b)})
        rc, _, _ = run_judge(config, "llama-a", capsys)
        assert rc == 0
        with Store(store_path(config)) as store:  # one answer left in the journal, as before
            _, rows = store.query("SELECT model, prompt_sha256, query_id, doc_id, judge, "
                                  "answer, relevance, prompt_tokens, completion_tokens, seconds "
                                  "FROM model_answers ORDER BY doc_id LIMIT 1")
            store.con.execute("DELETE FROM model_answers WHERE doc_id = ?", [rows[0][3]])
        names = ("model", "prompt_sha256", "query_id", "doc_id", "judge", "answer",
                 "relevance", "prompt_tokens", "completion_tokens", "seconds")
        line = {**dict(zip(names, rows[0])), "pool": ""}
        stranger = {**line, "judge": "never-remembered", "doc_id": "D-x"}
        Path(store_path(config) + ".answers.jsonl").write_text(
            json.dumps(line) + "\n" + json.dumps(stranger) + "\n")
        rc, out, err = run_judge(config, "llama-b", capsys)  # folds A's journal first
        assert rc == 0 and "2 answers left by an interrupted run were kept first" in err
        assert b.calls == PAIRS  # A's folded answer is not B's
        rc, out, _ = run_judge(config, "llama-a", capsys)
        assert f"{PAIRS} answered before (no call)" in out and a.calls == PAIRS
    with Store(store_path(config), read_only=True) as store:
        _, folded = store.query("SELECT doc_id, endpoint, requests FROM model_answers "
                                "WHERE doc_id IN (?, 'D-x') AND judge <> 'llama-b'", [rows[0][3]])
    assert sorted(folded) == sorted([(rows[0][3], a.base_url, None), ("D-x", "unknown", None)])


@pytest.mark.timeout(120)
def test_judge_exits_non_zero_when_every_request_failed(template, tmp_path):
    down = {"now": True}

    def rule(body):
        if down["now"]:
            raise RuntimeError("the model is down")  # a 500 answer
        return "##final score: 2"

    with ChatServer(rule) as server:
        config = config_with(template, tmp_path, {"h": entry(server)})
        run = _judge_process(config, "h")
        assert run.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert f"0 new answers (0 tokens), 0 without a grade, {PAIRS} failed; " \
            f"{2 * PAIRS} HTTP requests (retries included)" in run.stdout
        assert (f"irbench: error: judge 'h': no request succeeded: all {PAIRS} failed after "
                f"their retries ({2 * PAIRS} HTTP requests to {server.base_url}; first: ") \
            in run.stderr and "server error 500 (after 2 attempts)" in run.stderr
        assert server.calls == 0 and len(server.requests) == 2 * PAIRS
        # answered, then every answer held: a success even when the server fails everything
        down["now"] = False
        assert _judge_process(config, "h").returncode == 0 and server.calls == PAIRS
        down["now"] = True
        again = _judge_process(config, "h")
        assert again.returncode == 0, again.stderr
        assert f"{PAIRS} answered before (no call), 0 new answers" in again.stdout
        assert server.calls == PAIRS and len(server.requests) == 2 * PAIRS + PAIRS


@pytest.mark.timeout(120)
def test_a_request_failed_once_then_answered_counts_two_http_requests(template, tmp_path,
                                                                        capsys):
    with ChatServer(always(2)) as server:
        config = config_with(template, tmp_path, {"h": entry(server, concurrency=1)})
        server.fail(Fault.SERVER_ERROR, times=1)  # the first request fails, its retry answers
        rc, out, _ = run_judge(config, "h", capsys)
        assert rc == 0 and server.calls == PAIRS and len(server.requests) == PAIRS + 1
        assert f"{PAIRS} new answers" in out and f"0 failed; {PAIRS + 1} HTTP requests" in out
        table = _judges_table(config, capsys)
    assert table["h"]["calls"] == str(PAIRS)
    assert table["h"]["HTTP requests"] == str(PAIRS + 1)
