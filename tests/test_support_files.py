"""Reading support judgments (irbench/judgments/support.py): NIST's JSONL as real files hold
it (string labels, NaN texts, both sentence-id spellings), the flat TSV, every problem with
FILE:LINE, hostile files bounded, and the join to an answer run's citations."""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import numpy as np
import pytest

from irbench.errors import EvaluationError, FormatError
from irbench.judgments.support import (
    MAX_LINE_BYTES,
    PreparedSupport,
    read_support,
    support_label,
)
from irbench.measures.answers import support_precision, support_recall
from irbench.trec import Loaded

SEG = "msmarco_v2.1_doc_36_1381771658#3_2852387502"


def nist(*objects, raw: list[str] | None = None) -> bytes:
    return "\n".join([json.dumps(o) for o in objects] + (raw or [])).encode()


def answer_line(topic="2024-145979", run="runA", sentences=None):
    return {"topic_id": topic, "run_id": run, "sentences": sentences if sentences is not None
            else [{"text": "Potty training starts at two.", "citations": [
                {"reference": SEG, "support": "Full Support"},
                {"reference": "seg#2", "support": "PS"}]},
                {"text": "It takes months.", "citations": [
                    {"reference": "seg#3", "support": 0}]}]}


def test_nist_jsonl_read_whole_ids_and_string_labels(tmp_path):
    path = tmp_path / "support.jsonl.gz"
    path.write_bytes(gzip.compress(nist(answer_line())))
    labels = read_support(path, judge="nist-assessor")
    assert labels.topic_id.tolist() == [b"2024-145979"] * 3
    assert labels.reference.tolist() == [SEG, "seg#2", "seg#3"]  # '#' kept whole
    assert labels.label.tolist() == [2, 1, 0]
    assert labels.sentence.tolist() == [0, 0, 1]
    assert labels.citation.tolist() == [0, 1, 0]
    assert labels.line.tolist() == [1, 1, 1]
    assert labels.judge == "nist-assessor"
    assert labels.warnings == ()
    assert labels.runs == ["runA"]


@pytest.mark.parametrize("value, label", [
    (2, 2), (1, 1), (0, 0), (-1, -1), (2.0, 2), ("2", 2), ("1", 1), ("0", 0), ("-1", -1),
    ("full", 2), ("Full Support", 2), ("full_support", 2), ("FS", 2), ("partial", 1),
    ("Partial Support", 1), ("partial_support", 1), ("PS", 1), ("no support", 0),
    ("No Support", 0), ("no_support", 0), ("NS", 0), ("not_support", 0), ("none", 0),
    ("not judged", -1),
])
def test_support_label_spellings(value, label):
    assert support_label(value) == (label, None, None)


@pytest.mark.parametrize("value", [3, -2, 1.5, True, "maybe", "x" * 10_000, [2], {"a": 1}])
def test_support_label_refused(value):
    label, warning, error = support_label(value)
    assert label is None and error and len(error) < 300


def test_nan_text_null_support_and_both_key_spellings_are_warnings_with_lines():
    lines = [
        json.dumps(answer_line(run="r1")),
        '{"topic_id": "t2", "run_id": "r1", "sentences": [{"text": NaN, "sentenceID": 1, '
        '"citations": [{"reference": "d1", "support": null}]}, {"text": "b", "sentenceId": 9,'
        ' "citations": [{"reference": "d2", "support": NaN}]}]}',
    ]
    labels = read_support(Loaded("nist.jsonl", "\n".join(lines).encode()))
    assert labels.text.tolist()[-2:] == [None, "b"]
    assert labels.label.tolist()[-2:] == [-1, -1]
    assert labels.sentence.tolist()[-2:] == [0, 1]
    assert list(labels.warnings) == [
        "nist.jsonl:2: sentence 0: text is NaN (read as no text)",
        "nist.jsonl:2: sentence 0 citation 0: support null read as not judged (-1)",
        "nist.jsonl:2: sentence id key spelled 'sentenceId' here, 'sentenceID' before",
        "nist.jsonl:2: sentence 1: sentenceId 9 is not its position (the position is used)",
        "nist.jsonl:2: sentence 1 citation 0: support NaN read as not judged (-1)",
    ]


def test_reference_as_index_into_references():
    line = {"topic_id": "t", "run_id": "r", "references": ["a#1", "b#2"],
            "sentences": [{"text": "x", "citations": [{"reference": 1, "support": 2}]}]}
    assert read_support(Loaded("f.jsonl", nist(line))).reference.tolist() == ["b#2"]


def test_every_problem_collected_with_file_and_line():
    bad = [
        answer_line(),
        {"run_id": "r", "sentences": []},
        {"topic_id": "t", "run_id": "r", "sentences": "none"},
        {"topic_id": "t", "run_id": "r", "sentences": [{"text": 5}]},
        {"topic_id": "t2", "run_id": "r", "sentences": [{"text": "x", "citations": [
            {"reference": "d", "support": "maybe"}, {"reference": 3, "support": 2},
            {"reference": "has space", "support": 2}]}]},
        answer_line(),
        {"topic_id": "t3", "run_id": "r", "sentences": [{"text": "x", "citations": [
            {"reference": "d", "support": 2}, {"reference": "d", "support": 0}]}]},
    ]
    with pytest.raises(FormatError) as err:
        read_support(Loaded("bad.jsonl", nist(*bad, raw=["[1, 2]", "{not json"])))
    assert err.value.problems == [
        "bad.jsonl:2: topic_id is NoneType, not a string",
        "bad.jsonl:3: 'sentences' is not a list",
        "bad.jsonl:4: sentence 0: text is int, not a string",
        "bad.jsonl:5: sentence 0 citation 0: support \"maybe\" is not a label (2, 1, 0, -1, "
        "full, partial, none, ...)",
        "bad.jsonl:5: sentence 0 citation 1: reference 3 is an index but the line has no "
        "references list",
        "bad.jsonl:5: sentence 0 citation 2: reference 'has space' holds whitespace",
        "bad.jsonl:6: topic '2024-145979' of run 'runA' again (first at line 1)",
        "bad.jsonl:7: reference 'd' of sentence 0 judged 0 here and 2 at line 7",
        "bad.jsonl:8: expected a JSON object, got list",
        "bad.jsonl:9: not JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1))",
    ]


def test_empty_file_is_a_problem():
    with pytest.raises(FormatError, match="empty.jsonl:1: no support judgments"):
        read_support(Loaded("empty.jsonl", b"\n\n"))


def test_flat_tsv_with_header_comments_and_whole_ids():
    data = (b"topic\trun\tsentence\tcitation\treference\tlabel\n# a comment\n"
            b"t1\trunA\t0\t0\t" + SEG.encode() + b"\t2\n"
            b"t1 runA 0 1 seg#2 partial_support\n"
            b"t1\trunA\t1\t0\tseg#3\t-1\n")
    labels = read_support(Loaded("support.tsv", data))
    assert labels.reference.tolist() == [SEG, "seg#2", "seg#3"]
    assert labels.label.tolist() == [2, 1, -1]
    assert labels.sentence.tolist() == [0, 0, 1]
    assert labels.line.tolist() == [3, 4, 5]
    assert labels.text.tolist() == [None, None, None]


def test_flat_tsv_problems_collected():
    data = b"t1 r 0 0 d 2\nt1 r x 0 d 2\nt1 r 0 0 d\nt1 r 1 0 d wrong\n"
    with pytest.raises(FormatError) as err:
        read_support(Loaded("s.tsv", data))
    assert err.value.problems == [
        "s.tsv:2: sentence and citation are positions (0, 1, 2 ...)",
        "s.tsv:3: expected 6 columns (topic run sentence citation reference label), got 5",
        "s.tsv:4: support \"wrong\" is not a label (2, 1, 0, -1, full, partial, none, ...)",
    ]


# ---- hostile files ------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_deep_nesting_is_a_problem_not_a_crash():
    deep = b'{"topic_id": "t", "run_id": "r", "sentences": ' + b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(FormatError, match="h.jsonl:1: JSON nested too deep"):
        read_support(Loaded("h.jsonl", deep + b"}"))


@pytest.mark.timeout(30)
def test_overlong_line_refused_before_parsing():
    line = b'{"topic_id": "' + b"t" * (MAX_LINE_BYTES + 1) + b'"}'
    with pytest.raises(FormatError, match="h.jsonl:1: line of .* bytes"):
        read_support(Loaded("h.jsonl", line))


@pytest.mark.timeout(30)
def test_too_many_sentences_and_citations_refused():
    many = {"topic_id": "t", "run_id": "r", "sentences": [{"text": "", "citations": []}] * 10_001}
    wide = {"topic_id": "t2", "run_id": "r", "sentences": [
        {"text": "", "citations": [{"reference": "d", "support": 2}] * 1001}]}
    with pytest.raises(FormatError) as err:
        read_support(Loaded("h.jsonl", nist(many, wide)))
    assert err.value.problems == ["h.jsonl:1: 10,001 sentences (at most 10,000)",
                                  "h.jsonl:2: sentence 0: 1,001 citations (at most 1,000)"]


@pytest.mark.timeout(30)
def test_long_id_huge_number_and_gzip_bomb():
    long_id = answer_line(topic="t" * 2000)
    huge = '{"topic_id": "t", "run_id": "r", "sentences": [{"text": "x", "citations": [' \
           '{"reference": "d", "support": ' + "9" * 5000 + "}]}]}"
    with pytest.raises(FormatError) as err:
        read_support(Loaded("h.jsonl", nist(long_id, raw=[huge])))
    assert err.value.problems[0] == "h.jsonl:1: topic_id of 2,000 bytes (at most 1024)"
    assert err.value.problems[1].startswith("h.jsonl:2: ")
    bomb = gzip.compress(b"\n" * (300 << 20))
    with pytest.raises(FormatError, match="gzip file expands to more than"):
        read_support(Loaded("bomb.jsonl.gz", bomb))


@pytest.mark.timeout(60)
def test_many_problems_counted_not_all_kept():
    data = b"\n".join(b"[%d]" % i for i in range(100_000))
    with pytest.raises(FormatError) as err:
        read_support(Loaded("h.jsonl", b"{}\n" + data))
    assert len(err.value.problems) == 20
    assert err.value.more == 100_001 - 20
    assert "and 99981 more problems" in str(err.value)


# ---- the join to an answer run --------------------------------------------------------------


def answer(run="runA", topics=(b"2024-145979", b"t9"), sentence_topic=(0, 0),
           offsets=(0, 2, 3), refs=(SEG, "seg#2", "seg#3"), texts=None):
    return SimpleNamespace(run_id=run, topics=np.array(topics), sentence_topic=np.array(
        sentence_topic), citation_offsets=np.array(offsets), citation_ref=np.array(
        refs, dtype=object), sentence_text=texts or ["Potty training starts at two.",
                                                     "It takes months."])


def test_join_by_topic_run_sentence_and_reference():
    labels = read_support(Loaded("s.jsonl", nist(answer_line())))
    prepared = PreparedSupport(labels)
    assert prepared.labels_for(answer()).tolist() == [2, 1, 0]
    # citations in another order within the sentence keep their own labels
    swapped = answer(refs=("seg#2", SEG, "seg#3"))
    assert prepared.labels_for(swapped).tolist() == [1, 2, 0]
    # an unjudged citation, another run, a sentence past the judged ones: -1
    assert prepared.labels_for(answer(refs=(SEG, "other", "seg#3"))).tolist() == [2, -1, 0]
    assert prepared.labels_for(answer(run="runB")).tolist() == [-1, -1, -1]
    more = answer(sentence_topic=(0, 0, 1), offsets=(0, 2, 3, 4),
                  refs=(SEG, "seg#2", "seg#3", "seg#3"), texts=["a", "b", "c"])
    assert prepared.labels_for(more).tolist() == [2, 1, 0, -1]


def test_join_then_measures_on_a_worked_answer():
    labels = read_support(Loaded("s.jsonl", nist(answer_line())))
    run = answer()
    label = PreparedSupport(labels).labels_for(run)
    args = (label, run.citation_offsets, run.sentence_topic, 2)
    # first citations: full, none -> 1 / 2 in t1; t9 not answered -> 0
    assert support_precision(*args).tolist() == [0.5, 0.0]
    assert support_recall(*args, citations="all").tolist() == [(0.75 + 0) / 2, 0.0]


def test_join_by_text_serves_every_run_with_the_same_sentence():
    labels = read_support(Loaded("s.jsonl", nist(answer_line())))
    prepared = PreparedSupport(labels, by_text=True)
    other = answer(run="runB", sentence_topic=(0, 0), texts=["It takes months.",
                                                             "Potty training starts at two."],
                   offsets=(0, 1, 3), refs=("seg#3", SEG, "seg#9"))
    assert prepared.labels_for(other).tolist() == [0, 2, -1]


def test_join_by_text_refuses_disagreeing_judgments():
    a = answer_line(run="r1")
    b = answer_line(run="r2")
    b["sentences"][1]["citations"][0]["support"] = 2
    labels = read_support(Loaded("s.jsonl", nist(a, b)))
    with pytest.raises(EvaluationError, match="s.jsonl:2: the same sentence citing 'seg#3' "
                       "is judged 2 here and 0 at line 1"):
        PreparedSupport(labels, by_text=True)
