"""After every fault of the audit (issue 35), the next ``irbench judge`` stores every paid answer.

For each way a model server can misbehave (tests/chat_server.py's faults, and hostile answers
sent whole with a 200), one judging run meets the fault on its first requests, then a second
run against a well-behaved server finishes the job. Whatever the first run did (a failure, a
stop on a 401, a timeout, an answer stored with a note), neither run prints a traceback, a raw
escape or the key, and in the end every pair has exactly one stored answer: none lost, none
paid for twice."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from chat_server import ChatServer, Fault, rule_simulated

from irbench import cli
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-every-fault-7f3a"
PAIRS = 6
RAW_ESCAPES = ("\x1b", "\x07", "\u202e", "\x9b")


def _completion(content: str, usage: str = '{"prompt_tokens": 3, "completion_tokens": 4}'
                ) -> bytes:
    return ('{"choices": [{"index": 0, "message": {"role": "assistant", "content": '
            + json.dumps(content) + '}}], "usage": ' + usage + "}").encode()


# the hostile answers of the audit, each a 200 the judge pays for
PAID = {
    "lone surrogate": _completion("\ud800 ##final score: 1"),
    "usage 1e30": _completion("##final score: 1", '{"prompt_tokens": 1e30}'),
    "usage 2**70": _completion("##final score: 1", f'{{"completion_tokens": {2**70}}}'),
    "usage Infinity": _completion("##final score: 1", '{"prompt_tokens": Infinity}'),
    "usage negative": _completion("##final score: 1", '{"prompt_tokens": -5000000}'),
    "label outside the labels": _completion("##final score: 7"),
    "label not a number": _completion("##final score: high"),
    "escapes in the answer": _completion("\x1b]0;owned\x07\x1b[2J\u202e ##final score: 2"),
    "a huge answer within the cap": _completion("##final score: 2 " + "x" * (1 << 20)),
}
# faults after which the request is not answered (and so not paid)
UNPAID = {
    "rate limit": (Fault.RATE_LIMIT, {"retry_after": 0}),
    "server error": (Fault.SERVER_ERROR, {}),
    "unavailable": (Fault.UNAVAILABLE, {}),
    "malformed json": (Fault.MALFORMED_JSON, {}),
    "no choices": (Fault.NO_CHOICES, {}),
    "hang": (Fault.HANG, {}),
    "disconnect": (Fault.DISCONNECT, {}),
    "truncated": (Fault.TRUNCATED, {}),
    "drip headers": (Fault.DRIP_HEADERS, {"every": 0.05}),
    "drip body": (Fault.DRIP_BODY, {"every": 0.05}),
    "huge body": (Fault.HUGE_BODY, {}),
    "endless chunked": (Fault.ENDLESS_CHUNKED, {}),
    "gzip bomb": (Fault.GZIP_BOMB, {}),
    "401 echoing the key": (Fault.ECHO_AUTH, {"status": 401}),
    "500 echoing the key": (Fault.ECHO_AUTH, {"status": 500}),
    "400 echoing the key": (Fault.ECHO_AUTH, {"status": 400}),
    "nested json": (Fault.RAW, {"status": 200, "body": b"[" * 200_000 + b"]" * 200_000}),
    "retry-after 100000": (Fault.RAW, {"status": 429, "headers": [("Retry-After", "100000")]}),
    "hostile reason": (Fault.RAW, {"status": 418, "reason": "\x1b]0;owned\x07 teapot",
                                   "body": b"\x1b[2J\xe2\x80\xae refused"}),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("every-fault") / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "3",
                     "--pool-depth", "5", "--seed", "11"]) == 0
    lines = (folder / "qrels.txt").read_text().splitlines()[:PAIRS]
    (folder / "pairs.txt").write_text("".join(f"{x.split()[0]} {x.split()[2]}\n"
                                              for x in lines))
    return folder


def _campaign(template: Path, tmp_path: Path, server: ChatServer) -> Path:
    folder = tmp_path / "camp"
    shutil.copytree(template, folder)
    config = folder / "campaign.yaml"
    data = yaml.safe_load(config.read_text())
    data["judges"] = {"h": {"base_url": server.base_url, "model": "stand-in",
                            "api_key_env": "EVERY_FAULT_KEY", "backoff": 0, "retries": 0,
                            "timeout": 1, "concurrency": 1}}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


def _judge(config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVERY_FAULT_KEY": KEY}
    return subprocess.run([sys.executable, "-m", "irbench", "judge", str(config), "--judge",
                           "h", "--pairs", str(config.parent / "pairs.txt")],
                          env=env, capture_output=True, timeout=120)


def _clean(run: subprocess.CompletedProcess) -> None:
    out = run.stdout + run.stderr
    assert b"Traceback" not in out, out.decode(errors="replace")
    assert KEY.encode() not in out
    assert not any(c.encode() in out for c in RAW_ESCAPES), out.decode(errors="replace")


def _stored(config: Path) -> list[tuple]:
    with Store(str(config.parent / "campaign.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT query_id, doc_id, count(*) FROM model_answers "
                              "GROUP BY ALL ORDER BY ALL")
    return rows


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(UNPAID) + sorted(PAID))
def test_after_the_fault_the_next_run_stores_every_paid_answer(template, tmp_path, case):
    with ChatServer(rule_simulated, api_key=KEY) as server:
        config = _campaign(template, tmp_path, server)
        if case in PAID:
            server.fail(Fault.RAW, times=2, status=200, body=PAID[case],
                        headers=[("Content-Type", "application/json")])
        else:
            fault, how = UNPAID[case]
            # a 401 stops judging at once: a second one would meet the next run
            server.fail(fault, times=1 if how.get("status") == 401 else 2, **how)
        first = _judge(config)
        _clean(first)
        assert first.returncode in (0, 1), first.stderr
        if first.returncode == 1:  # the judge's configuration: judging stopped, said why
            assert b"401" in first.stderr
        server.release()  # a request held by HANG is let go (its client gave up already)
        second = _judge(config)
        _clean(second)
        assert second.returncode == 0, second.stderr
        paid_by_rule = server.calls
    rows = _stored(config)
    assert len(rows) == PAIRS and all(count == 1 for *_, count in rows)  # none lost, once each
    faults_paid = 2 if case in PAID else 0
    assert paid_by_rule + faults_paid == PAIRS  # nothing asked again that was answered
    assert not (config.parent / "campaign.duckdb.answers.jsonl").exists()
