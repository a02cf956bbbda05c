"""The checker of answer runs, rule by rule, each problem with its FILE:LINE message as the
participant sees it; warnings for what is read but odd; every problem of a file collected."""

from __future__ import annotations

import json

import pytest
from test_answers_formats import SEG, SEG2, SEG3, lines, neuclir, rag24, rag25, ragtime, write

from irbench.answers import Limits, read_answers
from irbench.errors import AnswerFormatError


def problems(path, **kwargs) -> list[str]:
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path, **kwargs)
    return info.value.problems


def one(text="x", citations=()):
    return [{"text": text, "citations": list(citations)}]


# (what, objects of the file, the expected problems as 'LINE: reason')
CASES = [
    ("rag24 references limit", [rag24("1", [f"d{i}" for i in range(21)], one())],
     ["1: references: 21 references, more than the track's 20"]),
    ("rag25 references limit", [rag25("1", [f"d{i}" for i in range(101)], one())],
     ["1: references: 101 references, more than the track's 100"]),
    ("rag25 words limit", [rag25("1", [SEG], [{"text": "w " * 300, "citations": [0]},
                                              {"text": "w " * 101, "citations": []}])],
     ["1: an answer of 401 words, more than the track's 400"]),
    ("rag24 words limit", [rag24("1", [SEG], [{"text": "w " * 401, "citations": [0]}])],
     ["1: an answer of 401 words, more than the track's 400"]),
    ("neuclir24 characters limit", [neuclir("1", one("é" * 2001))],
     ["1: an answer of 2,001 characters, more than the track's 2,000"]),
    ("neuclir24 citations per sentence", [neuclir("1", one("x", ["a", "b", "c"]))],
     ["1: sentences[0].citations: 3 citations, more than the track's 2 per sentence"]),
    ("index outside references", [rag24("1", [SEG, SEG2], one("x", [0, 2, -1]))],
     ["1: answer[0].citations[1]: index 2 outside the 2 references",
      "1: answer[0].citations[2]: index -1 outside the 2 references"]),
    ("rag25 format 2: a cited id not in references", [rag25("1", [SEG], one("x", [SEG2]))],
     [f"1: answer[0].citations[0]: '{SEG2}' is not in references"]),
    ("rag25: indexes then ids in one file",
     [rag25("1", [SEG], one("x", [0])), rag25("2", [SEG], one("x", [SEG]))],
     ["2: answer[0].citations[0]: a citation as an id, but as indexes on line 1 (one form "
      "per file)"]),
    ("each topic once", [rag24("1", [], one()), rag24("2", [], one()), rag24("1", [], one())],
     ["3: topic '1' answered again (first on line 1)"]),
    ("one run id per file", [rag24("1", [], one(), run="a"), rag24("2", [], one(), run="b")],
     ["2: run id 'b', but 'a' on line 1 (one run per file)"]),
    ("rag25 type", [rag25("1", [], one(), kind="semi")],
     ["1: metadata.type: 'semi', not automatic or manual"]),
    ("missing fields", [{"run_id": "r", "topic_id": "1", "answer": []}],
     ["1: missing references"]),
    ("rag25 team required", [{"metadata": {"run_id": "r", "narrative_id": "1"},
                              "references": [], "answer": []}],
     ["1: missing metadata.team_id"]),
    ("text not a string", [rag24("1", [], [{"text": 3, "citations": []}, {"citations": []}])],
     ["1: answer[0].text: a number, not a string", "1: answer[1].text: missing"]),
    ("citations not an array", [rag24("1", [], [{"text": "x", "citations": "0"},
                                                {"text": "x"}])],
     ["1: answer[0].citations: a string, not an array", "1: answer[1].citations: missing"]),
    ("a sentence not an object", [rag24("1", [], ["just text"])],
     ["1: answer[0]: a string, not an object with text and citations"]),
    ("bool and float indexes", [rag24("1", [SEG], one("x", [True, 0.0]))],
     ["1: answer[0].citations[0]: true or false, not an index",
      "1: answer[0].citations[1]: a number, not an index"]),
    ("rag24 ids are not citations", [rag24("1", [SEG], one("x", [SEG]))],
     ["1: answer[0].citations[0]: a string, not an index"]),
    ("references not an array", [rag24("1", {"0": SEG}, one())],
     ["1: references: an object, not an array of ids"]),
    ("bad ids", [rag24("", ["", "a b", 5, "n\u0000ul"], one(), run=None)],
     ["1: run_id: null, not an id", "1: topic_id: an empty id",
      "1: references[0]: an empty id",
      "1: references[1]: 'a b': an id holds no white space or NUL",
      "1: references[2]: a number, not an id",
      "1: references[3]: 'n\\x00ul': an id holds no white space or NUL"]),
    ("ragtime confidence not a number", [ragtime("1", ["a"], [{"text": "x", "citations": {"a": "high"}}])],
     ["1: responses[0].citations[0]: confidence 'high' is not a finite number"]),
    ("ragtime citations as numbers", [ragtime("1", ["a"], one("x", [0]))],
     ["1: responses[0].citations[0]: a number, not an id"]),
]


@pytest.mark.parametrize("what,objects,expected", CASES, ids=[c[0] for c in CASES])
def test_each_rule_with_its_line(tmp_path, what, objects, expected):
    path = write(tmp_path, lines(*objects))
    assert problems(path) == [f"{path}:{p}" for p in expected]


def test_ragtime_one_citation_dict_cannot_hold_a_key_twice_but_a_list_can(tmp_path):
    # JSON objects keep the last of a repeated key; a list repeats: a warning, counted once
    path = write(tmp_path, lines(ragtime("1", ["a"], one("x", ["a", "a"]))))
    run = read_answers(path)
    assert run.columns.citation_ref.tolist() == ["a"]
    assert run.warnings == (f"{path}:1: responses[0].citations[1]: 'a' cited again in the "
                            "sentence: counted once",)


def test_ragtime_a_cited_id_outside_references_is_a_warning(tmp_path):
    path = write(tmp_path, lines(ragtime("1", ["a"], one("x", ["b"]))))
    run = read_answers(path)
    assert run.columns.citation_ref.tolist() == ["b"]
    assert run.warnings == (f"{path}:1: responses[0].citations[0]: 'b' is not in references",)


def test_known_ids(tmp_path):
    path = write(tmp_path, lines(rag25("1", [SEG, "d9"], one("x", [0, 1])),
                                 rag25("2", [SEG], one("x", [0]))))
    assert problems(path, known_ids={SEG}) == [f"{path}:1: 'd9' is not in the collection"]
    assert read_answers(path, known_ids={SEG, "d9"}).columns.num_citations == 3


def test_known_ids_cited_in_a_format_without_references(tmp_path):
    path = write(tmp_path, lines(neuclir("1", one("x", ["u1", "u2"]))))
    assert problems(path, known_ids={"u1"}) == [f"{path}:1: 'u2' is not in the collection"]


def test_known_topics(tmp_path):
    path = write(tmp_path, lines(rag24("1", [], one()), rag24("9", [], one())))
    assert problems(path, topics={"1", "2", "3"}) == [f"{path}:2: unknown topic '9'"]
    path = write(tmp_path, lines(rag24("1", [], one())), "partial.jsonl")
    run = read_answers(path, topics=["1", "2", "3"])
    assert run.warnings == (f"{path}: no answer for topic '2'", f"{path}: no answer for topic '3'")


def test_warnings(tmp_path):
    path = write(tmp_path, lines(
        rag24("1", [SEG, SEG2, SEG], one("a b c", [0, 2, 1]), words=4),
        {"run_id": "r24", "topic_id": "2", "references": [], "answer": []}))
    run = read_answers(path)
    assert run.warnings == (
        f"{path}:1: references[2]: '{SEG}' listed again (first at references[0]): ranked at "
        "its first place only",
        f"{path}:1: answer[0].citations[1]: '{SEG}' cited again in the sentence: counted once",
        f"{path}:1: response_length is 4, the answer has 3 words",
        f"{path}:2: no topic", f"{path}:2: no response_length",
        f"{path}:2: answer: an empty answer")
    assert run.columns.reference_ids.tolist() == [SEG, SEG2]
    assert run.columns.citation_ref.tolist() == [SEG, SEG2]


def test_rag25_warnings_and_a_second_team(tmp_path):
    second = rag25("2", [], one(), team="t9")
    del second["metadata"]["type"], second["metadata"]["narrative"]
    path = write(tmp_path, lines(rag25("1", [], one()), second))
    run = read_answers(path)
    assert run.team == "t1"
    assert run.warnings == (f"{path}:2: no metadata.type", f"{path}:2: no metadata.narrative",
                            f"{path}:2: team 't9', but 't1' on line 1")


def test_words_are_counted_as_the_tracks_do(tmp_path):
    # NFKC first (a fullwidth letter is one word either way), then split at any white space
    text = "Ａ\u3000b\tc\nd  e\u00a0f"
    run = read_answers(write(tmp_path, lines(rag24("1", [], one(text)))))
    assert run.sentence_words.tolist() == [6]
    assert run.answer("1").sentences[0].text == text


def test_limits_are_configurable(tmp_path):
    path = write(tmp_path, lines(rag25("1", [SEG], one("w " * 450, [0]))))
    assert problems(path) == [f"{path}:1: an answer of 450 words, more than the track's 400"]
    assert read_answers(path, limits=Limits(references=100, words=500)).sentence_words[0] == 450
    assert problems(path, limits=Limits(words=300))[0].endswith("more than the track's 300")


def test_every_problem_is_collected_and_the_rest_counted(tmp_path):
    objects = [rag24(str(i), [], one("x", [i])) for i in range(25)]
    path = write(tmp_path, lines(*objects))
    with pytest.raises(AnswerFormatError) as info:
        read_answers(path)
    err = info.value
    assert len(err.problems) == 20 and err.more == 5
    assert err.problems[0] == f"{path}:1: answer[0].citations[0]: index 0 outside the 0 references"
    assert err.problems[19].startswith(f"{path}:20: ")
    assert str(err).endswith("\n... and 5 more problems")


def test_problems_of_several_kinds_and_lines_together(tmp_path):
    path = write(tmp_path, lines(rag24("1", [SEG], one("x", [1]))) + b"{oops\n"
                 + lines(rag24("1", [SEG], one("x", [0])), rag24("1", [SEG], one("x", [0]))))
    assert problems(path) == [
        f"{path}:1: answer[0].citations[0]: index 1 outside the 1 references",
        f"{path}:2: not JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{path}:4: topic '1' answered again (first on line 3)"]


def test_a_line_with_a_problem_does_not_count_as_the_topic_s_answer(tmp_path):
    # the first answer to topic 1 is refused; the second is then the first, not a repeat
    path = write(tmp_path, lines(rag24("1", [SEG], one("x", [5])), rag24("1", [SEG], one("x", [0]))))
    assert problems(path) == [f"{path}:1: answer[0].citations[0]: index 5 outside the 1 references"]


def test_messages_quote_long_values_cut(tmp_path):
    long_id = "d" * 500
    path = write(tmp_path, lines(rag25("1", [SEG], one("x", [long_id]))))
    (problem,) = problems(path)
    assert problem == (f"{path}:1: answer[0].citations[0]: '{'d' * 80}... (500 characters)' is "
                       "not in references")


def test_json_of_the_objects_used_here_is_what_the_tracks_write():
    # the hand-made objects have exactly the tracks' keys
    assert list(rag24("1", [], [])) == ["run_id", "topic_id", "topic", "references",
                                        "response_length", "answer"]
    assert list(rag25("1", [], [])["metadata"]) == ["team_id", "run_id", "type", "narrative_id",
                                                    "narrative", "prompt"]
    assert json.loads(lines(ragtime("1", [], [])))["metadata"] == {
        "team_id": "t2", "run_id": "rt", "topic_id": "1"}
    assert set(neuclir("1", [])) == {"request_id", "run_id", "collection_ids", "sentences"}
    assert SEG3.count("#") == 1


def test_rag25_indexes_and_ids_in_one_sentence(tmp_path):
    path = write(tmp_path, lines(rag25("1", [SEG, SEG2], one("x", [0, SEG2]))))
    assert problems(path) == [f"{path}:1: answer[0].citations[1]: a citation as an id, but as "
                              "indexes on line 1 (one form per file)"]


def test_stdin(tmp_path, monkeypatch):
    import io
    import sys

    data = lines(rag24("1", [SEG], one("x", [0])))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = read_answers("-")
    assert run.path == "<stdin>" and run.columns.citation_ref.tolist() == [SEG]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}\n")))
    assert problems("-")[0].startswith("<stdin>:1: cannot tell the answer format")
