"""Pools of cited segments for support judging (irbench/pooling/cited.py, `irbench pool cited`):
a hand-worked campaign of two answer runs sharing sentences, first citation vs up to K, an
uncited sentence, ids with '#' kept whole; the file written for judging read back by
read_support (all -1) and, once labelled, scored as support_shared (JSONL) or support (TSV);
problems of answer files as FILE:LINE with exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irbench import cli
from irbench.answers import read_answers
from irbench.errors import PoolingError
from irbench.judgments.answered import PreparedSupportSet
from irbench.judgments.support import read_support
from irbench.pooling import answer_systems, cited_pool, write_cited
from irbench.system import System

SEG = "msmarco_v2.1_doc_36_1381771658#3_2852387502"
SEG2 = "msmarco_v2.1_doc_00_1062374885#2_1925315239"
SEG3 = "msmarco_v2.1_doc_16_3087352975#2_3408418830"
SEG4 = "msmarco_v2.1_doc_01_1#0_2"
T1, T2, T3 = "2024#1", "2024-2", "2024-3"  # a topic id with '#' too
SKY, GRASS, NONE, WATER, FIRE = ("The sky is blue.", "Grass is green.", "Nothing cited here.",
                                 "Water is wet.", "Fire is hot.")


def rag24(run, topic, answer):
    refs = list(dict.fromkeys(r for _, cited in answer for r in cited))
    return {"run_id": run, "topic_id": topic, "topic": f"question {topic}", "references": refs,
            "response_length": sum(len(text.split()) for text, _ in answer),
            "answer": [{"text": text, "citations": [refs.index(r) for r in cited]}
                       for text, cited in answer]}


RUN_A = [rag24("runA", T1, [(SKY, [SEG, SEG2, SEG4]), (GRASS, [SEG3]), (NONE, [])]),
         rag24("runA", T2, [(WATER, [SEG])])]
RUN_B = [rag24("runB", T1, [(GRASS, [SEG3, SEG]), (SKY, [SEG2, SEG])]),
         rag24("runB", T3, [(FIRE, [SEG2])])]


def write_lines(path, objects):
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return str(path)


@pytest.fixture
def campaign(tmp_path):
    a = write_lines(tmp_path / "a.jsonl", RUN_A)
    b = write_lines(tmp_path / "b.jsonl", RUN_B)
    config = tmp_path / "config.yaml"
    (tmp_path / "qrels.txt").write_text(f"{T1} 0 {SEG} 1\n")
    config.write_text(f"name: cited\ncollection:\n  qrels: {tmp_path / 'qrels.txt'}\n"
                      "suites:\n  main: [AP]\nsystems:\n"
                      f"  - {{name: A, answers: {a}, format: rag24}}\n"
                      f"  - {{name: B, answers: {b}, format: rag24}}\n")
    runs = [read_answers(a, format="rag24", name="A"), read_answers(b, format="rag24", name="B")]
    return tmp_path, str(config), runs


def units(pool):
    return [(pool.topics[t].decode(), x, r, int(n)) for t, x, r, n in
            zip(pool.unit_topic, pool.unit_text, pool.unit_ref, pool.unit_runs)]


def occurrences(pool, unit):
    lo, hi = pool.unit_offsets[unit], pool.unit_offsets[unit + 1]
    return [(pool.runs[r], int(s), int(c)) for r, s, c in zip(
        pool.occ_run[lo:hi], pool.occ_sentence[lo:hi], pool.occ_citation[lo:hi])]


def test_first_citations_shared_sentence_is_one_unit(campaign):
    _, _, runs = campaign
    pool = cited_pool(runs, "first")
    assert pool.runs == ("runA", "runB")
    assert pool.topics.tolist() == [b"2024#1", b"2024-2", b"2024-3"]
    assert units(pool) == [(T1, SKY, SEG, 1), (T1, GRASS, SEG3, 2), (T1, SKY, SEG2, 1),
                           (T2, WATER, SEG, 1), (T3, FIRE, SEG2, 1)]
    assert occurrences(pool, 1) == [("runA", 1, 0), ("runB", 0, 0)]  # one unit, both runs
    assert occurrences(pool, 2) == [("runB", 1, 0)]
    assert (pool.num_units, pool.num_occurrences, pool.saving) == (5, 6, 1)
    # 7 sentences, one uncited; 10 citations, 6 first ones pooled
    assert (pool.sentences, pool.cited_sentences, pool.citations, pool.left_out) == \
        (7, 6, 10, 4)
    occurrences_, owned, alone = pool.per_run()
    assert occurrences_.tolist() == [3, 3] and owned.tolist() == [3, 2]
    assert alone.tolist() == [2, 2]


def test_all_citations_and_up_to_k(campaign):
    _, _, runs = campaign
    every = cited_pool(runs, "all")
    assert units(every) == [(T1, SKY, SEG, 2), (T1, SKY, SEG2, 2), (T1, SKY, SEG4, 1),
                            (T1, GRASS, SEG3, 2), (T1, GRASS, SEG, 1), (T2, WATER, SEG, 1),
                            (T3, FIRE, SEG2, 1)]
    assert occurrences(every, 0) == [("runA", 0, 0), ("runB", 1, 1)]
    assert (every.num_occurrences, every.saving, every.left_out) == (10, 3, 0)
    two = cited_pool(runs, "all", per_sentence=2)
    assert [u[:3] for u in units(two)] == [u[:3] for u in units(every) if u[2] != SEG4]
    assert (two.num_units, two.num_occurrences, two.left_out) == (6, 9, 1)
    one = cited_pool(runs, "all", per_sentence=1)
    assert units(one) == units(cited_pool(runs, "first"))
    only = cited_pool(runs, "first", topics=[T2, "no-such-topic"])
    assert units(only) == [(T2, WATER, SEG, 1)] and only.runs == ("runA", "runB")
    assert (only.sentences, only.citations) == (1, 1)
    with pytest.raises(PoolingError, match="per_sentence"):
        cited_pool(runs, "first", per_sentence=2)


def label_units(path, labels_by_unit):
    """The JSONL sent to judging with each unit's label filled in."""
    lines = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        for sentence in obj["sentences"]:
            for citation in sentence["citations"]:
                citation["support"] = labels_by_unit[obj["topic_id"], sentence["text"],
                                                     citation["reference"]]
        lines.append(json.dumps(obj))
    path.write_text("\n".join(lines) + "\n")


def labels_by_citation(scored):
    """{(topic, sentence text, citation position): label} of a scored run's citations."""
    out = {}
    offsets = scored.citation_offsets
    for s, (t, text) in enumerate(zip(scored.sentence_topic, scored.sentence_text)):
        for c in range(offsets[s], offsets[s + 1]):
            out[scored.topics[t].decode(), text, int(c - offsets[s])] = int(scored.label[c])
    return out


def test_jsonl_reads_back_unjudged_then_serves_every_run(campaign):
    tmp, _, runs = campaign
    pool = cited_pool(runs, "first")
    path = tmp / "to_judge.jsonl"
    assert write_cited(pool, str(path), "jsonl") == 5
    sent = read_support(path)
    assert len(sent) == 5 and (sent.label == -1).all()
    assert sorted(sent.reference.tolist()) == sorted([SEG, SEG3, SEG2, SEG, SEG2])
    # the answer's sentences are all there, in order: positions are the answer's
    first = json.loads(path.read_text().splitlines()[0])
    assert (first["topic_id"], first["run_id"]) == (T1, "runA")
    assert [s["text"] for s in first["sentences"]] == [SKY, GRASS, NONE]
    assert first["sentences"][2]["citations"] == []
    label_units(path, {(T1, SKY, SEG): 2, (T1, GRASS, SEG3): 1, (T1, SKY, SEG2): 0,
                       (T2, WATER, SEG): 2, (T3, FIRE, SEG2): 1})
    shared = PreparedSupportSet(read_support(path), by_text=True)
    a, b = (labels_by_citation(shared.rank(run)) for run in runs)
    assert a == {(T1, SKY, 0): 2, (T1, SKY, 1): 0, (T1, SKY, 2): -1, (T1, GRASS, 0): 1,
                 (T2, WATER, 0): 2}
    # runB's first citations were never sent: runA's judgments and its own serve them
    assert b == {(T1, GRASS, 0): 1, (T1, GRASS, 1): -1, (T1, SKY, 0): 0, (T1, SKY, 1): 2,
                 (T3, FIRE, 0): 1}


def test_tsv_has_every_runs_row_and_scores_as_support(campaign):
    tmp, _, runs = campaign
    pool = cited_pool(runs, "all", per_sentence=2)
    path = tmp / "to_judge.tsv"
    assert write_cited(pool, str(path), "tsv") == 9
    text = path.read_text().splitlines()
    assert text[0].split("\t") == ["topic", "run", "sentence", "citation", "reference", "label"]
    assert text[1:3] == [f"{T1}\trunA\t0\t0\t{SEG}\t-1", f"{T1}\trunB\t1\t1\t{SEG}\t-1"]
    sent = read_support(path)
    assert len(sent) == 9 and (sent.label == -1).all()
    given = {SEG: "2", SEG2: "1", SEG3: "0"}
    path.write_text("\n".join(text[:1] + [line[:-2] + given[line.split("\t")[4]]
                                          for line in text[1:]]) + "\n")
    labels = PreparedSupportSet(read_support(path))
    b = labels_by_citation(labels.rank(runs[1]))
    assert b == {(T1, GRASS, 0): 0, (T1, GRASS, 1): 2, (T1, SKY, 0): 1, (T1, SKY, 1): 2,
                 (T3, FIRE, 0): 1}
    with pytest.raises(PoolingError, match="exists already"):
        write_cited(pool, str(path), "tsv")  # never over a file that may hold labels


def test_system_selection(campaign):
    from irbench.config import load_config
    from irbench.config.types import priority_order

    _, config, _ = campaign
    systems = priority_order(load_config(config, strict=False).systems)
    assert [s.name for s in answer_systems(systems)] == ["A", "B"]
    assert [s.name for s in answer_systems(systems, ["B"])] == ["B"]
    with pytest.raises(PoolingError, match="did you mean B"):
        answer_systems(systems, ["BB"])
    # pooling order: by group, then priority; 'pooled: true' when declared; N per group
    made = [System("r", "r.txt"), System("x2", "x2", group="x", priority=2, kind="answers"),
            System("x1", "x1", group="x", priority=1, kind="answers"),
            System("y", "y", group="y", kind="answers")]
    made = priority_order(made)
    assert [s.name for s in answer_systems(made)] == ["x1", "x2", "y"]
    assert [s.name for s in answer_systems(made, per_group=1)] == ["x1", "y"]
    declared = made[:2] + [System("y", "y", group="y", kind="answers", pooled=True)]
    assert [s.name for s in answer_systems(declared)] == ["y"]
    with pytest.raises(PoolingError, match="no answer systems"):
        answer_systems([System("r", "r.txt")])


@pytest.mark.timeout(60)
def test_cli_pool_cited_writes_and_prints(campaign, capsys):
    tmp, config, _ = campaign
    out = tmp / "pool.jsonl"
    assert cli.main(["pool", "cited", config, "-o", str(out)]) == 0
    printed = capsys.readouterr()
    assert "5 units to judge (topic, sentence, segment) for 6 citations" in printed.out
    assert "saves 1 judgments (16.7%)" in printed.out
    assert "runA\t3\t3\t2" in printed.out
    assert "wrote 5 citations to judge" in printed.err
    assert (read_support(out).label == -1).all()
    topics = tmp / "topics.tsv"
    topics.write_text(f"{T3}\tfire\n")
    assert cli.main(["pool", "cited", config, "--citations", "all", "--per-sentence", "2",
                     "--pooled", "B", "--topics", str(topics), "-o", str(tmp / "p.tsv")]) == 0
    assert (tmp / "p.tsv").read_text().splitlines()[1:] == [f"{T3}\trunB\t0\t0\t{SEG2}\t-1"]
    assert cli.main(["pool", "cited", config, "--per-sentence", "2"]) == 1
    assert "--per-sentence K goes with --citations all" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_cli_bad_answer_files_exit_2_with_file_and_line(campaign, capsys):
    tmp, config, _ = campaign
    (tmp / "a.jsonl").write_text(json.dumps(RUN_A[0]) + "\n{not json\n")
    bad_b = RUN_B[0] | {"answer": [{"text": GRASS, "citations": [7]}]}
    (tmp / "b.jsonl").write_text(json.dumps(bad_b) + "\n")
    out = tmp / "pool.jsonl"
    assert cli.main(["pool", "cited", config, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp / 'a.jsonl'}:2:" in err and f"{tmp / 'b.jsonl'}:1:" in err  # both collected
    assert "Traceback" not in err and not out.exists()
    (tmp / "b.jsonl").unlink()
    assert cli.main(["pool", "cited", config]) == 2  # a missing file, at its config line
    err = capsys.readouterr().err
    assert "config.yaml:" in err and "no such file" in err and "b.jsonl" in err


def test_whole_columns_scale(campaign):
    """Many runs sharing most sentences: every occurrence is one unit's, counts add up."""
    _, _, runs = campaign
    many = [runs[i % 2] for i in range(40)]
    pool = cited_pool(many, "all")
    assert pool.num_units == 7 and pool.num_occurrences == 20 * 10
    assert int(np.diff(pool.unit_offsets).sum()) == pool.num_occurrences
    assert pool.unit_runs.tolist() == [40, 40, 20, 40, 20, 20, 20]


def test_two_files_of_one_run_id_are_a_problem(campaign):
    from irbench.errors import AnswerFormatError
    from irbench.pooling import read_answer_runs

    tmp, _, _ = campaign
    again = write_lines(tmp / "again.jsonl", RUN_A)
    systems = [System("A", str(tmp / "a.jsonl"), kind="answers", answer_format="rag24"),
               System("A2", again, kind="answers", answer_format="rag24")]
    with pytest.raises(AnswerFormatError, match="run id 'runA' is also the run id of"):
        read_answer_runs(systems)
