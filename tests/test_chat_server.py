"""The local stand-in for a remote LLM (tests/chat_server.py), over real HTTP: the protocol's
answers and errors, the key, each fault seen by a real client exactly as often as queued, the
held request and its release, keep-alive, 32 concurrent clients, the ready rules and the command.
Deterministic: no sleeps, no timing assertions (timeouts only bound a failure)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from chat_server import ChatServer, Fault, rule_by_marker, rule_echo_label

REPO = Path(__file__).resolve().parent.parent
KEY = "sk-test"
WAIT = 30  # seconds: only bounds a test that would otherwise hang


def chat(text: str, **extra) -> dict:
    return {"model": "judge-1", "messages": [
        {"role": "system", "content": "You are a relevance judge."},
        {"role": "user", "content": text}], "temperature": 0, **extra}


def post(server: ChatServer, body, key: str | None = KEY, conn=None, path="/v1/chat/completions",
         timeout: float = WAIT):
    """(status, headers, raw body) of one POST; over ``conn`` when given (kept open)."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        conn.request("POST", path, raw, headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        if own:
            conn.close()


def answer(raw: bytes) -> str:
    return json.loads(raw)["choices"][0]["message"]["content"]


def error_of(raw: bytes) -> dict:
    error = json.loads(raw)["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str) and "code" in error
    return error


@pytest.fixture
def server():
    with ChatServer(rule_by_marker(), api_key=KEY) as running:
        yield running


# ---- the protocol ------------------------------------------------------------------------------

def test_a_completion_has_the_openai_shape_and_usage_through_urllib(server):
    body = chat("Query: cats\nPassage: cats purr [[grade:2]]")
    request = urllib.request.Request(f"{server.base_url}/chat/completions", method="POST",
                                     data=json.dumps(body).encode(), headers={
                                         "Content-Type": "application/json",
                                         "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/json"
        reply = json.loads(response.read())
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert reply["id"].startswith("chatcmpl-") and reply["object"] == "chat.completion"
    assert isinstance(reply["created"], int) and reply["model"] == "judge-1"
    assert reply["choices"] == [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "##final score: 2"}}]
    prompt = len("You are a relevance judge.".split()) + len(body["messages"][1]["content"].split())
    assert reply["usage"] == {"prompt_tokens": prompt, "completion_tokens": 3,
                              "total_tokens": prompt + 3}
    assert server.calls == 1 and server.requests == [body]


def test_ids_differ_and_unknown_fields_are_ignored(server):
    first = json.loads(post(server, chat("a", seed=7, max_tokens=5, logprobs=False))[2])
    second = json.loads(post(server, chat("b", response_format={"type": "text"}))[2])
    assert first["id"] != second["id"]
    assert answer(json.dumps(first).encode()) == answer(json.dumps(second).encode()) == \
        "##final score: 0"


def test_models_are_listed(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    conn.request("GET", "/v1/models", headers={"Authorization": f"Bearer {KEY}"})
    response = conn.getresponse()
    assert response.status == 200
    assert json.loads(response.read()) == {"object": "list", "data": [
        {"id": "stand-in", "object": "model", "created": 0, "owned_by": "irbench"}]}
    conn.close()


def test_the_key_is_checked(server):
    status, _, raw = post(server, chat("x"), key=None)
    assert status == 401 and error_of(raw)["code"] == "missing_api_key"
    status, _, raw = post(server, chat("x"), key="sk-wrong")
    assert status == 401 and error_of(raw)["code"] == "invalid_api_key"
    assert post(server, chat("x"))[0] == 200
    assert server.calls == 1 and len(server.requests) == 3  # refused ones recorded too


def test_without_a_key_the_server_asks_none():
    with ChatServer(rule_by_marker()) as server:
        assert post(server, chat("x"), key=None)[0] == 200


@pytest.mark.parametrize("raw, says", [
    (b"{not json", "parse the JSON"),
    (b"[1, 2]", "JSON object"),
    (json.dumps({"model": "m"}).encode(), "'messages' is required"),
    (json.dumps({"model": "m", "messages": []}).encode(), "'messages' is required"),
    (json.dumps({"messages": [{"role": "user"}]}).encode(), "messages[0]"),
    (json.dumps(chat("x", stream=True)).encode(), "stream"),
])
def test_a_bad_request_is_400_in_the_openai_shape(server, raw, says):
    status, headers, body = post(server, raw)
    assert status == 400 and headers["Content-Type"] == "application/json"
    assert says in error_of(body)["message"]
    assert server.calls == 0


def test_other_paths_are_404_and_the_connection_stays_usable(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    status, _, raw = post(server, chat("x"), conn=conn, path="/v1/completions")
    assert status == 404 and error_of(raw)["code"] == "unknown_url"
    conn.request("GET", "/health")
    response = conn.getresponse()
    assert response.status == 404 and error_of(response.read())
    assert post(server, chat("x"), conn=conn)[0] == 200
    conn.close()
    assert server.connections == 1


# ---- faults ------------------------------------------------------------------------------------

def observe(server: ChatServer, body: dict) -> str:
    """What a client sees of one request: a status, or how the answer broke."""
    try:
        status, headers, raw = post(server, body)
    except http.client.IncompleteRead:
        return "truncated"
    except (http.client.RemoteDisconnected, ConnectionError):
        return "disconnected"
    if status == 429:
        assert error_of(raw)["code"] == "rate_limit_exceeded"
        return f"429 retry-after {headers['Retry-After']}"
    if status != 200:
        error_of(raw)
        return str(status)
    try:
        reply = json.loads(raw)
    except ValueError:
        return "not json"
    return "no choices" if "choices" not in reply else answer(raw)


FAULT_SEEN = [
    (Fault.RATE_LIMIT, "429 retry-after 0"),
    (Fault.SERVER_ERROR, "500"),
    (Fault.UNAVAILABLE, "503"),
    (Fault.MALFORMED_JSON, "not json"),
    (Fault.NO_CHOICES, "no choices"),
    (Fault.DISCONNECT, "disconnected"),
    (Fault.TRUNCATED, "truncated"),
]


@pytest.mark.parametrize("fault, seen", FAULT_SEEN, ids=[f.name for f, _ in FAULT_SEEN])
def test_each_fault_is_seen_exactly_times_times_then_answers_resume(server, fault, seen):
    server.fail(fault, times=2)
    body = chat("[[grade:3]]")
    assert [observe(server, body) for _ in range(4)] == [seen, seen, "##final score: 3",
                                                        "##final score: 3"]
    assert server.calls == 2 and server.faults_left == 0 and len(server.requests) == 4
    assert server.errors == []


def test_retry_after_is_sent_in_seconds_and_milliseconds(server):
    server.fail(Fault.RATE_LIMIT, retry_after=1.5)
    status, headers, _ = post(server, chat("x"))
    assert status == 429 and headers["Retry-After"] == "2" and headers["retry-after-ms"] == "1500"


def test_faults_apply_in_the_order_queued(server):
    server.fail(Fault.RATE_LIMIT, times=1, retry_after=3)
    server.fail(Fault.SERVER_ERROR, times=2)
    server.fail("unavailable")
    assert [observe(server, chat("x")) for _ in range(5)] == [
        "429 retry-after 3", "500", "500", "503", "##final score: 0"]


def test_when_applies_a_fault_only_to_matching_requests(server):
    server.fail(Fault.SERVER_ERROR, times=1, when=lambda body: "doc-7" in str(body))
    server.fail(Fault.UNAVAILABLE, times=1)
    seen = [observe(server, chat(f"doc-{n} [[grade:1]]")) for n in (1, 7, 7, 2)]
    # doc-1 takes the first fault it matches (the later, unconditional one)
    assert seen == ["503", "500", "##final score: 1", "##final score: 1"]


def test_faults_given_at_start_and_refused_requests_do_not_use_them():
    faults = [Fault.SERVER_ERROR, (Fault.MALFORMED_JSON, 2), {"fault": Fault.RATE_LIMIT,
                                                             "retry_after": 4}]
    with ChatServer(rule_by_marker(), api_key=KEY, faults=faults) as server:
        assert post(server, chat("x"), key="sk-wrong")[0] == 401
        assert post(server, b"{")[0] == 400
        assert [observe(server, chat("x")) for _ in range(5)] == [
            "500", "not json", "not json", "429 retry-after 4", "##final score: 0"]


def test_times_below_one_is_refused(server):
    with pytest.raises(ValueError):
        server.fail(Fault.HANG, times=0)


def test_a_failing_rule_is_a_500_and_recorded():
    def rule(body):
        raise RuntimeError("bug in the rule")

    with ChatServer(rule) as server:
        status, _, raw = post(server, chat("x"))
        assert status == 500 and "bug in the rule" in error_of(raw)["message"]
        assert [str(e) for e in server.errors] == ["bug in the rule"] and server.calls == 0


# ---- the held request --------------------------------------------------------------------------

def test_a_hung_request_times_the_client_out_and_release_ends_it(server):
    server.fail(Fault.HANG, times=1)
    with pytest.raises(TimeoutError):
        post(server, chat("[[grade:1]]"), timeout=0.5)
    assert server.wait_held(1) and server.held == 1
    server.release()  # returns once the server side has ended
    assert server.held == 0
    assert observe(server, chat("[[grade:1]]")) == "##final score: 1"
    assert server.calls == 1 and len(server.requests) == 2


def test_a_client_still_waiting_gets_503_on_release(server):
    server.fail(Fault.HANG, times=2)
    seen: list[str] = []
    clients = [threading.Thread(target=lambda: seen.append(observe(server, chat("x"))))
               for _ in range(2)]
    for client in clients:
        client.start()
    assert server.wait_held(2)
    server.release()
    for client in clients:
        client.join(WAIT)
    assert seen == ["503", "503"] and server.held == 0 and server.calls == 0


def test_closing_while_a_request_hangs_does_not_hang():
    seen: list[str] = []
    with ChatServer(rule_by_marker(), api_key=KEY) as server:
        idle = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        assert post(server, chat("x"), conn=idle)[0] == 200  # a keep-alive connection left open
        server.fail(Fault.HANG)
        client = threading.Thread(target=lambda: seen.append(observe(server, chat("x"))))
        client.start()
        assert server.wait_held(1)
    client.join(WAIT)
    assert not client.is_alive() and seen == ["503"]
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        post(server, chat("x"), conn=idle)  # closed by the server, not left hanging
    with pytest.raises(ConnectionError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)


# ---- connections and concurrency ---------------------------------------------------------------

def test_keep_alive_serves_two_requests_over_one_connection(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    assert post(server, chat("[[grade:1]]"), conn=conn)[0] == 200
    sock = conn.sock
    status, _, raw = post(server, chat("[[grade:2]]"), conn=conn)
    assert status == 200 and answer(raw) == "##final score: 2"
    assert conn.sock is sock and server.connections == 1
    conn.close()


def test_32_clients_of_20_requests_each_are_all_answered(server):
    statuses: list[list[int]] = [[] for _ in range(32)]

    def client(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        for i in range(20):
            status, _, raw = post(server, chat(f"client {n} request {i} [[grade:{n % 4}]]"),
                                  conn=conn)
            assert answer(raw) == f"##final score: {n % 4}"
            statuses[n].append(status)
        conn.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert statuses == [[200] * 20] * 32
    assert server.calls == 640 and len(server.requests) == 640 and server.connections == 32
    for n in range(32):  # each client's requests recorded in the order it sent them
        mine = [b["messages"][1]["content"] for b in server.requests
                if b["messages"][1]["content"].startswith(f"client {n} ")]
        assert mine == [f"client {n} request {i} [[grade:{n % 4}]]" for i in range(20)]


def test_requests_are_recorded_in_order_and_counted(server):
    server.fail(Fault.SERVER_ERROR, when=lambda body: "doc-3" in str(body))
    for doc in ("doc-1", "doc-2", "doc-3", "doc-3", "doc-4"):
        post(server, chat(f"topic-9 {doc}"))
    assert [b["messages"][1]["content"] for b in server.requests] == [
        "topic-9 doc-1", "topic-9 doc-2", "topic-9 doc-3", "topic-9 doc-3", "topic-9 doc-4"]
    assert server.count(lambda body: "doc-3" in str(body)) == 2  # asked twice: the retry
    assert server.count(lambda body: "doc-1" in str(body)) == 1
    snapshot = server.requests
    snapshot.clear()
    assert len(server.requests) == 5  # a copy


# ---- the ready rules ---------------------------------------------------------------------------

def test_rule_by_marker_reads_the_last_user_message_only():
    rule = rule_by_marker(default="0")
    assert rule(chat("passage [[grade:3]] text")) == "##final score: 3"
    assert rule(chat("passage [[ grade: 1 ]] and [[grade:2]]")) == "##final score: 1"
    assert rule(chat("no marker")) == "##final score: 0"
    assert rule_by_marker(default="-1")(chat("no marker")) == "##final score: -1"
    earlier = {"messages": [{"role": "user", "content": "[[grade:3]]"},
                            {"role": "assistant", "content": "[[grade:2]]"},
                            {"role": "user", "content": "and now?"}]}
    assert rule(earlier) == "##final score: 0"
    system = {"messages": [{"role": "system", "content": "[[grade:3]]"},
                           {"role": "user", "content": "x"}]}
    assert rule(system) == "##final score: 0"
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "[[grade:2]]"}]}]}
    assert rule(parts) == "##final score: 2"


def test_rule_echo_label_formats_the_grade_or_answers_unparseably():
    assert rule_echo_label('{"score": {grade}}')(chat("[[grade:2]]")) == '{"score": 2}'
    assert rule_echo_label("I think it's relevant")(chat("[[grade:2]]")) == "I think it's relevant"
    assert rule_echo_label("grade={grade}", default="none")(chat("x")) == "grade=none"


# ---- by hand -----------------------------------------------------------------------------------

def test_the_command_prints_its_url_serves_and_stops_on_ctrl_c():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.chat_server", "--port", "0", "--api-key", KEY],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        port = int(base_url.rsplit(":", 1)[1].removesuffix("/v1"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        conn.request("POST", "/v1/chat/completions", json.dumps(chat("[[grade:2]]")),
                     {"Authorization": f"Bearer {KEY}"})
        response = conn.getresponse()
        assert response.status == 200 and answer(response.read()) == "##final score: 2"
        conn.close()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and "stopped after 1 completions" in err
    assert "Traceback" not in err
