"""Answer files as untrusted input: each hostile case is a problem at its line, found in
bounded time (pytest-timeout) and memory, never a traceback, a hang or a huge allocation."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib

import pytest
from test_answers_formats import SEG, lines, rag24, ragtime, write

from irbench.answers import MAX_LINE_BYTES, read_answers
from irbench.answers import lines as answer_lines
from irbench.errors import AnswerFormatError

GOOD = lines(rag24("1", [SEG], [{"text": "fine", "citations": [0]}]))


def problems(path, **kwargs) -> list[str]:
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path, **kwargs)
    return info.value.problems


@pytest.mark.timeout(60)
def test_a_50_mb_line_is_skipped_without_being_held(tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"run_id": "r", "topic": "')
        block = b"x" * (1 << 20)
        for _ in range(50):
            fh.write(block)
        fh.write(b'"}\n' + GOOD)
    tracemalloc.start()
    try:
        found = problems(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == [f"{path}:1: a line longer than {MAX_LINE_BYTES:,} bytes: not read"]
    assert peak < 3 * MAX_LINE_BYTES  # never the 50 MB line whole


@pytest.mark.timeout(60)
def test_a_50_mb_line_in_gzip(tmp_path):
    raw = b'{"run_id": "' + b"y" * (50 << 20) + b'"}\n' + GOOD
    path = write(tmp_path, gzip.compress(raw, compresslevel=1), "huge.jsonl.gz")
    del raw
    assert problems(path) == [f"{path}:1: a line longer than {MAX_LINE_BYTES:,} bytes: not read"]


@pytest.mark.timeout(30)
def test_the_line_cap_is_a_parameter(tmp_path):
    path = write(tmp_path, GOOD + GOOD.replace(b'"1"', b'"2"'))
    assert read_answers(path, max_line_bytes=len(GOOD)).columns.num_topics == 2
    assert problems(path, max_line_bytes=100) == [
        f"{path}:1: a line longer than 100 bytes: not read",
        f"{path}:2: a line longer than 100 bytes: not read"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_deep_nesting_is_a_problem_of_its_line(tmp_path, depth):
    deep = b'{"run_id": "r", "topic_id": "1", "references": ' + b"[" * depth + b"]" * depth \
        + b', "answer": []}\n'
    path = write(tmp_path, deep + GOOD)
    (found,) = problems(path)
    assert found.startswith(f"{path}:1: JSON arrays or objects nested too deeply (more than "
                            "some ")


@pytest.mark.timeout(30)
def test_a_line_of_too_many_values_is_not_parsed(tmp_path):
    many = b'{"run_id": "r", "topic_id": "1", "references": [' + b"0," * 1_000_000 \
        + b'0], "answer": []}\n'
    path = write(tmp_path, many + GOOD)
    assert problems(path) == [f"{path}:1: more than 1,000,000 JSON values in one line: not read"]


@pytest.mark.timeout(30)
def test_nan_and_infinity_literals(tmp_path):
    data = (b'{"run_id": "r", "topic_id": NaN, "references": [Infinity], "answer": []}\n'
            b'{"run_id": "r", "topic_id": "2", "references": ["d"], "response_length": NaN, '
            b'"answer": [{"text": NaN, "citations": [NaN, -Infinity]}]}\n'
            b'{"metadata": {"team_id": "t", "run_id": "r", "topic_id": "3"}, "references": ["d"],'
            b' "responses": [{"text": "x", "citations": {"d": NaN}}]}\n')
    path = write(tmp_path, data)
    assert problems(path) == [
        f"{path}:1: topic_id: a number, not an id",
        f"{path}:1: references[0]: a number, not an id",
        f"{path}:2: answer[0].text: a number, not a string",
        f"{path}:2: answer[0].citations[0]: a number, not an index",
        f"{path}:2: answer[0].citations[1]: a number, not an index",
        f"{path}:3: missing run_id, topic_id, answer"]  # told rag24 by line 1
    path = write(tmp_path, data.split(b"\n")[2] + b"\n", "ragtime.jsonl")
    assert problems(path) == [f"{path}:1: responses[0].citations[0]: confidence nan is not a "
                              "finite number"]


@pytest.mark.timeout(30)
def test_a_byte_order_mark(tmp_path):
    bom = b"\xef\xbb\xbf"
    assert read_answers(write(tmp_path, bom + GOOD)).columns.topics.tolist() == [b"1"]
    gz = write(tmp_path, gzip.compress(bom + GOOD), "bom.jsonl.gz")
    assert read_answers(gz).columns.topics.tolist() == [b"1"]
    path = write(tmp_path, GOOD + bom + GOOD.replace(b'"1"', b'"2"'), "second.jsonl")
    assert problems(path) == [f"{path}:2: not JSON: Unexpected UTF-8 BOM (decode using "
                              "utf-8-sig) (column 1)"]


@pytest.mark.timeout(30)
def test_invalid_utf8_is_reported_with_its_line_and_byte(tmp_path):
    bad = GOOD.replace(b"fine", b"fi\xffne").replace(b'"1"', b'"2"')
    path = write(tmp_path, GOOD + bad)
    at = bad.index(b"\xff") + 1
    assert problems(path) == [f"{path}:2: not valid UTF-8 (byte 0xff at byte {at} of the line)"]


@pytest.mark.timeout(30)
def test_lone_surrogates_from_json_escapes(tmp_path):
    data = lines(rag24("1", ["d\ud800"], [{"text": "a \udcff b", "citations": [0]}]))
    run = read_answers(write(tmp_path, data))
    assert run.answer("1").sentences[0].text == "a \ufffd\ufffd\ufffd b"
    (ref,) = run.columns.citation_ref.tolist()
    ref.encode("utf-8")  # storable: the id as the text of its bytes
    assert ref == "d\\xed\\xa0\\x80"


@pytest.mark.timeout(30)
def test_numbers_too_big(tmp_path):
    data = (b'{"run_id": "r", "topic_id": "1", "references": ["d"], "answer": '
            b'[{"text": "x", "citations": [1e999, 99999999999999999999999]}]}\n'
            b'{"run_id": "r", "topic_id": "2", "references": ["d"], "answer": '
            b'[{"text": "x", "citations": [' + b"9" * 5000 + b']}]}\n')
    path = write(tmp_path, data)
    found = problems(path)
    assert found[:2] == [
        f"{path}:1: answer[0].citations[0]: a number, not an index",
        f"{path}:1: answer[0].citations[1]: index 99999999999999999999999 outside the 1 "
        "references"]
    assert len(found) == 3 and found[2].startswith(f"{path}:2: not JSON: ")


@pytest.mark.timeout(30)
def test_too_many_sentences_citations_or_references(tmp_path):
    sentences = [{"text": "x", "citations": []}] * 10_001
    citations = [{"text": "x", "citations": list(range(1_001))}]
    path = write(tmp_path, lines(
        rag24("1", [], sentences), rag24("2", [SEG], citations),
        rag24("3", [f"d{i}" for i in range(10_001)], [])))
    assert problems(path) == [
        f"{path}:1: answer: 10,001 sentences, more than irbench reads (10,000)",
        f"{path}:2: answer[0].citations: 1,001 citations, more than irbench reads (1,000)",
        f"{path}:3: references: 10,001 references, more than irbench reads (10,000)"]


@pytest.mark.timeout(30)
def test_an_overlong_id(tmp_path):
    path = write(tmp_path, lines(rag24("t" * 2000, [], [])))
    assert problems(path) == [f"{path}:1: topic_id: an id longer than 1,024 bytes"]


@pytest.mark.timeout(30)
def test_a_gzip_bomb_stops_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(answer_lines, "gunzip_limit", lambda size: 1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"0" * (1 << 20)
    bomb = b"".join(packer.compress(zeros) for _ in range(64)) + packer.flush()
    path = write(tmp_path, bomb, "bomb.jsonl.gz")
    (found,) = problems(path)
    assert found.startswith(f"{path}:1: gzip file expands to more than 1,048,576 bytes")


@pytest.mark.timeout(30)
def test_a_gzip_file_cut_short(tmp_path):
    data = gzip.compress(GOOD * 50)
    path = write(tmp_path, data[: len(data) // 2], "cut.jsonl.gz")
    found = problems(path)
    assert len(found) == 1 and "not a valid gzip file" in found[0]


@pytest.mark.timeout(30)
def test_not_objects_and_control_characters(tmp_path):
    path = write(tmp_path, b'[1, 2]\n"text"\n{"run_id": "a\x00b"}\n')
    assert problems(path) == [
        f"{path}:1: not a JSON object but an array",
        f"{path}:2: not a JSON object but a string",
        f"{path}:3: not JSON: Invalid control character (column 14)"]


@pytest.mark.timeout(30)
def test_missing_files_and_folders(tmp_path):
    assert problems(str(tmp_path / "nope.jsonl")) == [f"{tmp_path / 'nope.jsonl'}: no such file"]
    assert problems(str(tmp_path)) == [f"{tmp_path}: is a directory, not a file"]


@pytest.mark.timeout(30)
def test_a_hostile_key_set_is_quoted_short(tmp_path):
    obj = {("k" * 1000) + str(i): i for i in range(20)}
    path = write(tmp_path, (json.dumps(obj) + "\n").encode())
    (found,) = problems(path)
    assert len(found) < 1000 and "declare it with format=" in found


@pytest.mark.timeout(30)
def test_ragtime_map_with_non_finite_confidence_and_bool(tmp_path):
    path = write(tmp_path, lines(ragtime("1", ["a", "b"], [
        {"text": "x", "citations": {"a": True, "b": 1e400}}])))
    assert problems(path) == [
        f"{path}:1: responses[0].citations[0]: confidence True is not a finite number",
        f"{path}:1: responses[0].citations[1]: confidence inf is not a finite number"]
