"""The model-judge client against a hostile chat-completions server (issue 35's audit): a real
local server (tests/chat_server.py) that drips bytes, sends gigabytes, a gzip bomb, absurd
token counts, JSON nested too deeply, escapes and the caller's own key back. Each case is
bounded in time; none may hang, raise a traceback, exhaust memory or show the key."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from chat_server import ChatServer, Fault, rule_by_marker, rule_simulated

from irbench import cli
from irbench.errors import JudgeError
from irbench.judges.client import (
    MAX_RESPONSE_BYTES,
    MAX_SHOWN,
    RETRY_AFTER_CAP,
    Caller,
    CallFailed,
    server_text,
)
from irbench.judges.journal import Journal, journal_path
from irbench.judges.judging import Budget, JudgingSummary, Pending, judge_pairs
from irbench.judges.spec import JudgeSpec, build_judge
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-live-Hostile0Secret4242"
MESSAGES = [{"role": "user", "content": "[[grade:2]] is it relevant?"}]
RAW_ESCAPES = ("\x1b", "\x07", "\u202e", "\x9b")


@pytest.fixture
def server():
    with ChatServer(rule_by_marker(), api_key=KEY) as s:
        yield s


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("HOSTILE_KEY", KEY)


def _spec(server: ChatServer, **given) -> JudgeSpec:
    settings = {"timeout": 5.0, "retries": 0, "backoff": 0.0, "concurrency": 1, **given}
    return JudgeSpec(name="h", base_url=server.base_url, model="m", api_key_env="HOSTILE_KEY",
                     **settings)


def _answer(usage: str = '{"prompt_tokens": 3, "completion_tokens": 4}') -> bytes:
    return ('{"choices": [{"index": 0, "message": {"role": "assistant", "content": '
            '"##final score: 2"}}], "usage": ' + usage + "}").encode()


# ---- 1. a total deadline per request ------------------------------------------------------

@pytest.mark.timeout(30)
@pytest.mark.parametrize("fault", [Fault.DRIP_HEADERS, Fault.DRIP_BODY])
def test_a_dripping_server_is_cut_off_at_the_whole_requests_deadline(server, keyed, fault):
    """A byte every 0.05 s never lets a per-read timeout of 0.5 s fire; the judge's timeout
    is the whole attempt's limit, so the attempt ends, and the next one is answered."""
    server.fail(fault, times=1, every=0.05)
    with pytest.raises(CallFailed, match=r"no complete answer within 0\.5 s \(after 1 "):
        Caller(_spec(server, timeout=0.5)).ask_one(MESSAGES)
    server.fail(fault, times=1, every=0.05)
    reply = Caller(_spec(server, timeout=0.5, retries=1)).ask_one(MESSAGES)
    assert reply.content == "##final score: 2" and server.calls == 1
    assert len(server.requests) == 3


# ---- Ctrl-C ends a judging run at once, keeping what was answered ---------------------------

def _campaign(tmp_path: Path, server: ChatServer, **judge) -> Path:
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "4",
                     "--pool-depth", "10", "--seed", "5"]) == 0
    config = folder / "campaign.yaml"
    data = yaml.safe_load(config.read_text())
    data["judges"] = {"h": {"base_url": server.base_url, "model": "stand-in",
                            "api_key_env": "HOSTILE_KEY", "backoff": 0, **judge}}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


def _pairs(config: Path, n: int) -> Path:
    lines = (config.parent / "qrels.txt").read_text().splitlines()[:n]
    pairs = config.parent / "pairs.txt"
    pairs.write_text("".join(f"{line.split()[0]} {line.split()[2]}\n" for line in lines))
    return pairs


def _judge_command(config: Path, pairs: Path) -> list[str]:
    return [sys.executable, "-m", "irbench", "judge", str(config), "--judge", "h",
            "--pairs", str(pairs)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_KEY": KEY}


def _until(condition, what: str) -> None:
    for _ in range(1200):  # at most a minute; each look is cheap
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault, options", [
    (Fault.HANG, {}), (Fault.DRIP_HEADERS, {}), (Fault.DRIP_BODY, {}),
    (Fault.RATE_LIMIT, {"retry_after": 100000})], ids=["hang", "drip-headers", "drip-body",
                                                       "retry-after-100000"])
def test_ctrl_c_ends_a_judging_run_at_once_and_keeps_every_answer(server, tmp_path, fault,
                                                                  options):
    """Three answers arrive, then two requests meet a server that never finishes (or asks
    for a wait of 100,000 s); Ctrl-C ends the run at once (before: the worker threads were
    joined at exit, forever), the three answers are folded into the store and the journal
    is emptied."""
    config = _campaign(tmp_path, server, concurrency=2, timeout=300, retries=3)
    pairs = _pairs(config, 8)
    asked = iter(range(10**6))  # the server asks the predicate once per request
    server.fail(fault, times=10**6, when=lambda body: next(asked) >= 3, **options)
    store = config.parent / "campaign.duckdb"
    journal = Path(journal_path(str(store)))
    proc = subprocess.Popen(_judge_command(config, pairs), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _until(lambda: journal.exists() and len(journal.read_text().splitlines()) == 3
               and len(server.requests) >= 5, "3 answers journaled, 2 requests stuck")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not journal.exists()
    with Store(str(store), read_only=True) as s:
        _, rows = s.query("SELECT count(*) FROM model_answers")
    assert rows[0][0] == 3 == server.calls


# ---- 2. Retry-After capped, named, interruptible ------------------------------------------

@pytest.mark.timeout(30)
def test_retry_after_is_capped_and_named_in_the_failure(server, keyed):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    server.fail(Fault.RATE_LIMIT, times=3, retry_after=100000)
    with pytest.raises(CallFailed) as info:
        Caller(_spec(server, retries=2), sleep).ask_one(MESSAGES)
    assert waits == [RETRY_AFTER_CAP, RETRY_AFTER_CAP] == [60.0, 60.0]
    assert ("429 rate limit (Retry-After 100000 s; irbench waits at most 60 s, "
            "RETRY_AFTER_CAP) (after 3 attempts)") in str(info.value)
    server.fail(Fault.RATE_LIMIT, times=1, retry_after=2)  # a short wait is waited whole
    assert Caller(_spec(server, retries=1), sleep).ask_one(MESSAGES).content
    assert waits[-1] == 2.0


@pytest.mark.timeout(30)
def test_a_retry_after_wait_is_cancelled_at_once(server, keyed):
    """The wait is an await: cancelling the request (what Ctrl-C does to a judging run)
    ends it in the middle of a 60 s wait."""
    waits: list[float] = []

    async def main() -> None:
        waiting = asyncio.Event()

        async def sleep(seconds: float) -> None:
            waits.append(seconds)
            waiting.set()
            await asyncio.sleep(seconds)

        caller = Caller(_spec(server, retries=1), sleep)
        async with caller:
            task = asyncio.ensure_future(caller.ask(MESSAGES))
            await waiting.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    server.fail(Fault.RATE_LIMIT, times=1, retry_after=100000)
    asyncio.run(main())
    assert waits == [60.0] and server.calls == 0


# ---- 3. a response's bytes capped, before and after decompression -------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("fault, says", [
    (Fault.HUGE_BODY, "the answer is 3,221,225,472 bytes, over irbench's cap of 8,388,608"),
    (Fault.ENDLESS_CHUNKED, "over irbench's cap of 8,388,608 bytes (as sent; "),
    (Fault.GZIP_BOMB, "over irbench's cap of 8,388,608 bytes (decompressed; ")])
def test_an_answer_too_big_fails_alone_in_bounded_memory(server, keyed, fault, says):
    server.fail(fault, times=1)
    tracemalloc.start()
    try:
        with pytest.raises(CallFailed) as info:
            Caller(_spec(server, retries=3)).ask_one(MESSAGES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert says in str(info.value) and "MAX_RESPONSE_BYTES" in str(info.value)
    assert peak < 6 * MAX_RESPONSE_BYTES  # not 3 GiB; not retried either
    assert len(server.requests) == 1
    assert Caller(_spec(server)).ask_one(MESSAGES).content == "##final score: 2"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_a_compressed_answer_is_read(server, keyed, encoding):
    import zlib

    body = _answer()
    packed = {"gzip": gzip.compress(body), "deflate": zlib.compress(body),
              "raw-deflate": zlib.compress(body)[2:-4]}[encoding]
    server.fail(Fault.RAW, body=packed, headers=[
        ("Content-Type", "application/json"),
        ("Content-Encoding", encoding.removeprefix("raw-"))])
    reply = Caller(_spec(server)).ask_one(MESSAGES)
    assert (reply.content, reply.prompt_tokens, reply.completion_tokens) == (
        "##final score: 2", 3, 4)


# ---- 4. token counts checked ----------------------------------------------------------------

@pytest.mark.timeout(30)
@pytest.mark.parametrize("count", ["1e30", str(2**70), "Infinity", "-Infinity", "NaN", "-5",
                                   '"12"', "1.5", "true", "[1]", str(2**31)])
def test_a_token_count_that_is_not_a_sane_whole_number_counts_as_zero_with_a_note(
        server, keyed, count):
    server.fail(Fault.RAW, body=_answer(f'{{"prompt_tokens": {count}, '
                                        f'"completion_tokens": 7}}'))
    reply = Caller(_spec(server)).ask_one(MESSAGES)
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 7)
    assert "usage prompt_tokens" in reply.note and "counted as 0" in reply.note


@pytest.mark.timeout(30)
@pytest.mark.parametrize("usage, tokens", [("null", (0, 0)), ("{}", (0, 0)),
                                           ('{"prompt_tokens": 5.0}', (5, 0)),
                                           ('{"prompt_tokens": 2147483647}', (2**31 - 1, 0))])
def test_sane_or_absent_token_counts_are_taken_without_a_note(server, keyed, usage, tokens):
    server.fail(Fault.RAW, body=_answer(usage))
    reply = Caller(_spec(server)).ask_one(MESSAGES)
    assert (reply.prompt_tokens, reply.completion_tokens) == tokens and reply.note == ""


@pytest.mark.timeout(60)
def test_absurd_usage_neither_breaks_the_store_nor_slips_past_the_token_budget(
        server, keyed, tmp_path):
    """Before: 2^70 overflowed the store's BIGINT and -1000 gave the budget tokens back, so
    max_total_tokens never stopped the run."""
    spec = _spec(server, max_total_tokens=10)
    server.fail(Fault.RAW, times=1, body=_answer('{"prompt_tokens": 1180591620717411303424, '
                                                 '"completion_tokens": -1000}'))
    server.fail(Fault.RAW, times=10, body=_answer('{"prompt_tokens": -1000, '
                                                  '"completion_tokens": 6}'))
    requests = [Pending("q1", f"d{n}", [{"role": "user", "content": f"doc {n}"}], f"{n:064x}")
                for n in range(5)]
    path = str(tmp_path / "s.duckdb")
    with Store(path) as store:
        store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
        summary = JudgingSummary()
        judge_pairs(spec, requests, store, Journal(journal_path(path), store.save_answers),
                    budget=Budget(spec, *store.judge_usage(spec.name), None), summary=summary)
        _, rows = store.query("SELECT prompt_tokens, completion_tokens FROM model_answers "
                              "ORDER BY doc_id")
    assert rows == [(0, 0), (0, 6), (0, 6)]  # 6 + 6 spends the budget of 10
    assert summary.answered == 3 and summary.budget_left == 2
    assert len(summary.notes) == 3 and "usage prompt_tokens 1180591620717411303424" in \
        summary.notes[0]


# ---- 5. JSON nested too deeply ----------------------------------------------------------------

@pytest.mark.timeout(30)
def test_json_nested_too_deeply_is_a_malformed_answer_tried_again(server, keyed):
    deep = b'{"choices": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    server.fail(Fault.RAW, times=1, body=deep)
    with pytest.raises(CallFailed, match=r"malformed answer \(JSON nested too deeply\)"):
        Caller(_spec(server)).ask_one(MESSAGES)
    server.fail(Fault.RAW, times=1, body=deep)
    assert Caller(_spec(server, retries=1)).ask_one(MESSAGES).content == "##final score: 2"
    assert len(server.requests) == 3


# ---- 6 and 7. base_url: parsed, no credentials, no query ----------------------------------

def _check(url: str) -> list[str]:
    problems: list[str] = []
    build_judge("j", {"base_url": url, "model": "m"},
                lambda where, reason: problems.append(f"{'.'.join(where)}: {reason}"),
                lambda where, value: None)
    return problems


@pytest.mark.timeout(30)
@pytest.mark.parametrize("url, says", [
    ("http://[::1", "does not parse"),
    ("http://127.0.0.1:80:80/v1", "does not parse"),
    ("http://127.0.0.1:99999/v1", "does not parse"),
    ("http://[::1]x/v1", "does not parse"),
    ("http://h /v1", "without spaces or control characters"),
    ("http://h\x1b]0;x\x07/v1", "without spaces or control characters"),
    ("ftp://h/v1", "an http:// or https:// URL"),
    ("http://user:s3cr3tpass@h/v1", "user name or password (user:password@)"),
    ("https://sk-s3cr3tpass@h/v1", "user name or password (user:password@)"),
    ("http://h/v1?key=s3cr3tpass", "holds a query or fragment"),
    ("http://h/v1?api-version=1&s3cr3tpass", "holds a query or fragment"),
    ("http://h/v1#s3cr3tpass", "holds a query or fragment")])
def test_a_base_url_that_does_not_parse_or_holds_a_secret_is_a_config_problem(url, says):
    problems = _check(url)
    assert len(problems) == 1 and problems[0].startswith("judges.j.base_url: ")
    assert says in problems[0]
    assert "s3cr3tpass" not in problems[0] and "\x1b" not in problems[0]
    if "@" in url or "?" in url:
        assert "api_key_env" in problems[0]


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "http://[::1]:8000/v1/",
                                 "https://api.openai.com/v1", "http://localhost/v1"])
def test_ordinary_base_urls_pass(url):
    assert _check(url) == []


# ---- 7 and 8. server text: the key removed, cut short, escapes inert ------------------------

def test_server_text_removes_the_key_and_every_echoed_credential():
    said = server_text(
        f"bad key {KEY}; you sent 'Authorization: Bearer sk-other-1234', "
        f'{{"authorization": "Basic dXNlcjpwYXNz"}}, x-api-key: k-5678, api_key=k-9999, '
        f"password=hunter2 \\u001b {json.dumps(KEY + '/x')}", (KEY, KEY + "/x"))
    for secret in (KEY, "sk-other-1234", "dXNlcjpwYXNz", "k-5678", "k-9999", "hunter2"):
        assert secret not in said, said
    assert "Authorization: Bearer [removed]" in said and "x-api-key: [removed]" in said
    assert len(server_text("x" * 10**6)) <= MAX_SHOWN + 4
    assert server_text("\x1b]0;pwned\x07\x1b[2J\u202e") == "\\x1b]0;pwned\\x07\\x1b[2J\\u202e"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("status, error", [(401, JudgeError), (403, JudgeError),
                                           (400, CallFailed), (422, CallFailed)])
def test_an_error_echoing_the_key_is_shown_without_it_nor_raw_escapes(server, keyed, status,
                                                                      error):
    server.fail(Fault.ECHO_AUTH, status=status)
    with pytest.raises(error) as info:
        Caller(_spec(server)).ask_one(MESSAGES)
    said = str(info.value)
    assert f"{status} (" in said and "[removed]" in said and KEY not in said
    assert not any(c in said for c in RAW_ESCAPES) and "\\x1b]0;pwned" in said
    assert len(said) < MAX_SHOWN * 5


@pytest.mark.timeout(30)
def test_a_hostile_reason_phrase_and_a_huge_error_body_are_cut_and_made_inert(server, keyed):
    server.fail(Fault.RAW, status=400, reason="Bad \u202e\u2066 Request", body=b"")
    with pytest.raises(CallFailed) as info:
        Caller(_spec(server)).ask_one(MESSAGES)
    said = str(info.value)
    assert said.startswith("refused with 400 (") and not any(c in said for c in RAW_ESCAPES)
    assert not any(0x80 <= ord(c) < 0xA0 or c in "\u202e\u2066" for c in said)
    server.fail(Fault.RAW, status=400, body=json.dumps(
        {"error": {"message": "\x1b[2J" + "y" * (3 << 20)}}).encode())
    with pytest.raises(CallFailed) as info:
        Caller(_spec(server)).ask_one(MESSAGES)
    said = str(info.value)
    assert "\x1b" not in said and len(said) < MAX_SHOWN * 2


# ---- 9. irbench judge: the key in no store, journal or output -------------------------------

@pytest.mark.timeout(180)
def test_irbench_judge_never_writes_or_prints_the_key(tmp_path):
    """A server echoing the Authorization header (and escapes) in 500 bodies (each request
    fails after its retries) and in a 401 (judging stops): the store's files, the journal,
    stdout and stderr of every run hold the key 0 times, and no raw escape."""
    with ChatServer(rule_simulated, api_key=KEY) as server:
        # one request at a time: which two requests meet the four faults is then fixed
        config = _campaign(tmp_path, server, concurrency=1, retries=1)
        pairs = _pairs(config, 4)
        runs = []
        server.fail(Fault.ECHO_AUTH, status=500, times=2 * 2,
                    when=lambda body: "Passage" in str(body))
        runs.append(subprocess.run(_judge_command(config, pairs), env=_env(),
                                   capture_output=True, timeout=120))
        server.fail(Fault.ECHO_AUTH, status=401, times=10**6)
        runs.append(subprocess.run(_judge_command(config, pairs), env=_env(),
                                   capture_output=True, timeout=120))
    # the report (its embedded config, the judges it names) is built with the key set too
    for command in (["run", str(config)],
                    ["report", str(config), "--out", str(config.parent / "report")]):
        runs.append(subprocess.run([sys.executable, "-m", "irbench", *command], env=_env(),
                                   capture_output=True, timeout=300))
        assert runs[-1].returncode == 0, runs[-1].stderr
    assert (config.parent / "report" / "index.html").exists()
    first, second = runs[:2]
    assert first.returncode == 0 and b"2 new answers" in first.stdout
    assert b"2 failed" in first.stdout and b"failed: " in first.stderr
    assert b"server error 500" in first.stderr
    assert second.returncode == 1 and b"answered 401" in second.stderr
    assert b"[removed]" in second.stderr and b"HOSTILE_KEY" in second.stderr
    files = [p for p in config.parent.rglob("*") if p.is_file()]
    assert any(p.name == "campaign.duckdb" for p in files)
    needle = KEY.encode()
    for run in runs:
        assert needle not in run.stdout and needle not in run.stderr
        assert b"Traceback" not in run.stderr
        assert not any(c.encode() in run.stdout + run.stderr for c in RAW_ESCAPES)
    for path in files:
        assert needle not in path.read_bytes(), path


@pytest.mark.timeout(30)
def test_a_caller_takes_an_httpx_transport_in_place_of_the_network(keyed):
    import httpx

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 1:
            return httpx.Response(429, headers={"Retry-After": "7"})
        return httpx.Response(200, content=_answer())

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    spec = JudgeSpec(name="m", base_url="http://model.invalid/v1", model="m",
                     api_key_env="HOSTILE_KEY", retries=1)
    with Caller(spec, sleep, transport=httpx.MockTransport(handler)) as caller:
        reply = caller.ask_one(MESSAGES)
    assert reply.content == "##final score: 2" and waits == [7.0]
    assert str(seen[0].url) == "http://model.invalid/v1/chat/completions"
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
