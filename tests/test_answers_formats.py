"""Answer runs of each track's format read into records and columns: hand-made files, the
format told from the first object or declared, the columns exactly (offsets, citations
resolved from indexes and from ids), ids with '#' kept whole, gzip."""

from __future__ import annotations

import gzip
import io
import json
import pickle

import numpy as np
import pytest

from irbench.answers import (
    FORMATS,
    AnswerColumns,
    Limits,
    csr_take,
    detect,
    read_answers,
)
from irbench.errors import AnswerFormatError, FormatError, OptionError
from irbench.trec import Loaded

SEG = "msmarco_v2.1_doc_36_1381771658#3_2852387502"
SEG2 = "msmarco_v2.1_doc_00_1062374885#2_1925315239"
SEG3 = "msmarco_v2.1_doc_16_3087352975#2_3408418830"


def lines(*objects) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def write(tmp_path, data: bytes, name="run.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def rag24(topic, refs, answer, run="r24", words=None):
    return {"run_id": run, "topic_id": topic, "topic": f"question {topic}", "references": refs,
            "response_length": words if words is not None else
            sum(len(s["text"].split()) for s in answer
                if isinstance(s, dict) and isinstance(s.get("text"), str)),
            "answer": answer}


def rag25(topic, refs, answer, run="r25", team="t1", kind="automatic"):
    return {"metadata": {"team_id": team, "run_id": run, "type": kind, "narrative_id": topic,
                         "narrative": f"narrative {topic}", "prompt": "p"},
            "references": refs, "answer": answer}


def ragtime(topic, refs, responses, run="rt", team="t2"):
    return {"metadata": {"team_id": team, "run_id": run, "topic_id": topic},
            "responses": responses, "references": refs}


def neuclir(topic, sentences, run="nc"):
    return {"request_id": topic, "run_id": run, "collection_ids": ["neuclir/1/zho"],
            "sentences": sentences}


# topics written out of order: the columns sort them (b"10" < b"2")
RAG24_FILE = lines(
    rag24("2", [SEG, SEG2, SEG3], [{"text": "Alpha beta.", "citations": [2, 0]},
                                   {"text": "Gamma.", "citations": []},
                                   {"text": "Delta epsilon zeta.", "citations": [1]}]),
    rag24("10", [SEG3], [{"text": "Eta.", "citations": [0]}]))


def expected_rag24_columns(c: AnswerColumns, run_id: str = "r24") -> None:
    assert c.run_id == run_id
    assert c.topics.tolist() == [b"10", b"2"]
    assert c.sentence_topic.dtype == np.int64
    assert c.sentence_topic.tolist() == [0, 1, 1, 1]
    assert c.sentence_text.tolist() == ["Eta.", "Alpha beta.", "Gamma.", "Delta epsilon zeta."]
    assert c.citation_offsets.dtype == np.int64
    assert c.citation_offsets.tolist() == [0, 1, 3, 3, 4]
    assert c.citation_ref.dtype == object
    assert c.citation_ref.tolist() == [SEG3, SEG3, SEG, SEG2]
    assert c.reference_offsets.tolist() == [0, 1, 4]
    assert c.reference_ids.tolist() == [SEG3, SEG, SEG2, SEG3]
    assert c.citation_sentence().tolist() == [0, 1, 1, 3]
    assert c.sentence_offsets().tolist() == [0, 1, 4]
    assert (c.num_topics, c.num_sentences, c.num_citations) == (2, 4, 4)


def test_rag24_columns_exactly(tmp_path):
    run = read_answers(write(tmp_path, RAG24_FILE))
    assert run.format == "rag24" and run.run_id == "r24" and run.team is None
    expected_rag24_columns(run.columns)
    assert run.sentence_words.tolist() == [1, 2, 1, 3]
    assert np.isnan(run.citation_confidence).all() and len(run.citation_confidence) == 4
    assert run.warnings == ()
    assert [m.line for m in run.meta] == [2, 1]
    assert [m.topic_text for m in run.meta] == ["question 10", "question 2"]


def test_rag24_records(tmp_path):
    run = read_answers(write(tmp_path, RAG24_FILE))
    answer = run.answer("2")
    assert answer.topic_id == "2" and answer.references == (SEG, SEG2, SEG3)
    assert [(s.text, s.citations, s.words) for s in answer.sentences] == [
        ("Alpha beta.", (SEG3, SEG), 2), ("Gamma.", (), 1), ("Delta epsilon zeta.", (SEG2,), 3)]
    assert answer.sentences[0].confidences is None
    assert [a.topic_id for a in run.answers()] == run.topic_ids == ["10", "2"]
    with pytest.raises(KeyError):
        run.answer("3")


def test_rag25_format_1_and_format_2_give_the_same_columns(tmp_path):
    answer = [{"text": "Alpha beta.", "citations": [2, 0]}, {"text": "Gamma.", "citations": []},
              {"text": "Delta epsilon zeta.", "citations": [1]}]
    by_id = [{"text": s["text"], "citations": [[SEG, SEG2, SEG3][i] for i in s["citations"]]}
             for s in answer]
    one = read_answers(write(tmp_path, lines(
        rag25("2", [SEG, SEG2, SEG3], answer), rag25("10", [SEG3], [
            {"text": "Eta.", "citations": [0]}])), "f1.jsonl"))
    two = read_answers(write(tmp_path, lines(
        rag25("2", [SEG, SEG2, SEG3], by_id), rag25("10", [SEG3], [
            {"text": "Eta.", "citations": [SEG3]}])), "f2.jsonl"))
    for run in (one, two):
        assert run.format == "rag25" and run.team == "t1"
        expected_rag24_columns(run.columns, "r25")
        assert run.meta[1].topic_text == "narrative 2" and run.meta[1].run_type == "automatic"
        assert run.meta[1].team == "t1" and dict(run.meta[1].extra) == {"prompt": "p"}


def test_rag25_narrative_id_as_a_number(tmp_path):
    run = read_answers(write(tmp_path, lines(rag25(7, [SEG], [{"text": "A.", "citations": [0]}]))))
    assert run.columns.topics.tolist() == [b"7"] and run.topic_ids == ["7"]


def test_ragtime_lists_and_confidence_maps(tmp_path):
    data = lines(
        ragtime("300", ["doc-a", "doc-b"], [
            {"text": "Sky is blue.", "citations": {"doc-b": 0.7, "doc-a": 0.1}},
            {"text": "Moon.", "citations": ["doc-a"]},
            {"text": "All.", "citations": {}}]),
        ragtime("299", ["doc-c"], [{"text": "Other.", "citations": {"doc-c": 1}}]))
    run = read_answers(write(tmp_path, data))
    c = run.columns
    assert run.format == "ragtime" and run.run_id == "rt" and run.team == "t2"
    assert c.topics.tolist() == [b"299", b"300"]
    assert c.sentence_text.tolist() == ["Other.", "Sky is blue.", "Moon.", "All."]
    assert c.citation_offsets.tolist() == [0, 1, 3, 4, 4]
    assert c.citation_ref.tolist() == ["doc-c", "doc-b", "doc-a", "doc-a"]
    conf = run.citation_confidence
    assert conf[:3].tolist() == [1.0, 0.7, 0.1] and np.isnan(conf[3])
    sky = run.answer("300").sentences
    assert sky[0].confidences == (0.7, 0.1) and sky[1].confidences is None
    assert c.reference_ids.tolist() == ["doc-c", "doc-a", "doc-b"]


def test_neuclir24_has_no_references_list(tmp_path):
    data = lines(neuclir("253", [{"text": "Avatar was first.", "citations": ["cac55544-2639"]},
                                 {"text": "Nothing cited.", "citations": []}]))
    run = read_answers(write(tmp_path, data))
    c = run.columns
    assert run.format == "neuclir24"
    assert c.citation_ref.tolist() == ["cac55544-2639"] and c.citation_offsets.tolist() == [0, 1, 1]
    assert c.reference_offsets.tolist() == [0, 0] and c.reference_ids.tolist() == []
    assert dict(run.meta[0].extra) == {"collection_ids": "neuclir/1/zho"}


@pytest.mark.parametrize("name,obj", [
    ("rag24", rag24("1", [], [])),
    ("rag25", rag25("1", [], [])),
    ("ragtime", ragtime("1", [], [])),
    ("neuclir24", neuclir("1", [])),
])
def test_detection(name, obj):
    found = detect(obj)
    assert found is not None and found.name == name


def test_detection_fails_on_unknown_keys_with_a_hint(tmp_path):
    path = write(tmp_path, lines({"qid": "1", "text": "x"}))
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path)
    assert info.value.problems == [
        f"{path}:1: cannot tell the answer format from the keys {{'qid', 'text'}} (each "
        "format's keys: rag24: topic_id, answer; rag25: metadata, answer; ragtime: metadata, "
        "responses; neuclir24: request_id, sentences); declare it with format="]


def test_a_declared_format_is_used_and_checked(tmp_path):
    path = write(tmp_path, RAG24_FILE)
    assert read_answers(path, format="rag24").format == "rag24"
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path, format="rag25")
    assert info.value.problems[0] == f"{path}:1: missing metadata.run_id, metadata.narrative_id, " \
                                     "metadata.team_id"
    with pytest.raises(OptionError, match="unknown answer format 'rag26' \\(known: neuclir24, "
                                          "rag24, rag25, ragtime\\)"):
        read_answers(path, format="rag26")


def test_detection_skips_lines_that_are_not_json(tmp_path):
    path = write(tmp_path, b"not json\n" + RAG24_FILE)
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path)
    assert len(info.value.problems) == 1 and info.value.problems[0].startswith(f"{path}:1: not JSON")


def test_gzip_by_name_and_by_magic(tmp_path):
    for name in ("run.jsonl.gz", "run.jsonl"):
        path = write(tmp_path, gzip.compress(RAG24_FILE), name)
        expected_rag24_columns(read_answers(path).columns)


def test_sources_file_objects_and_loaded(tmp_path):
    expected_rag24_columns(read_answers(io.BytesIO(RAG24_FILE)).columns)
    expected_rag24_columns(read_answers(io.StringIO(RAG24_FILE.decode())).columns)
    run = read_answers(Loaded("mine.jsonl", gzip.compress(RAG24_FILE)))
    assert run.path == "mine.jsonl"
    expected_rag24_columns(run.columns)


def test_ids_with_hash_and_non_ascii_are_kept_whole(tmp_path):
    odd = "doc#1#2_ü"
    run = read_answers(write(tmp_path, lines(
        rag24("t#1", [SEG, odd], [{"text": "x", "citations": [1, 0]}]))))
    assert run.columns.topics.tolist() == [b"t#1"]
    assert run.columns.citation_ref.tolist() == [odd, SEG]
    assert run.answer("t#1").references == (SEG, odd)


def test_crlf_blank_lines_and_no_final_newline(tmp_path):
    data = RAG24_FILE.replace(b"\n", b"\r\n", 1) + b"\n   \n"
    expected_rag24_columns(read_answers(write(tmp_path, data.rstrip(b"\n"))).columns)


def test_limits_can_be_replaced(tmp_path):
    many = [f"d{i}" for i in range(25)]
    path = write(tmp_path, lines(rag24("1", many, [{"text": "x", "citations": [24]}])))
    with pytest.raises(AnswerFormatError):
        read_answers(path)
    run = read_answers(path, limits=Limits(references=None, words=400))
    assert run.columns.citation_ref.tolist() == ["d24"]


def test_an_empty_run_and_an_empty_answer(tmp_path):
    path = write(tmp_path, b"\n\n")
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path)
    assert info.value.problems == [f"{path}: no answer in the file"]
    run = read_answers(write(tmp_path, lines(rag24("1", [], [])), "empty_answer.jsonl"))
    c = run.columns
    assert c.topics.tolist() == [b"1"] and c.num_sentences == 0
    assert c.citation_offsets.tolist() == [0] and c.reference_offsets.tolist() == [0, 0]
    assert run.answer("1").sentences == ()
    assert run.warnings == (f"{tmp_path / 'empty_answer.jsonl'}:1: answer: an empty answer",)


def test_csr_take():
    offsets = np.array([0, 2, 2, 5])
    new, index = csr_take(offsets, np.array([2, 0, 1]))
    assert new.tolist() == [0, 3, 5, 5] and index.tolist() == [2, 3, 4, 0, 1]


def test_the_registry_refuses_a_name_twice():
    from irbench.answers import register

    with pytest.raises(ValueError, match="registered twice"):
        register(FORMATS["rag24"])


def test_the_error_is_a_format_error_and_pickles(tmp_path):
    path = write(tmp_path, b"[]\n")
    with pytest.raises(FormatError) as info:
        read_answers(path)
    err = info.value
    assert isinstance(err, AnswerFormatError) and err.exit_code == 2
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is AnswerFormatError and again.problems == err.problems
