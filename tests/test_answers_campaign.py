"""An answer campaign through the whole path (issue 39): a config, answer files in TREC RAG
2024's JSONL, NIST's support JSONL and nuggetizer's assignments written here, scored by
:func:`irbench.runner.run_campaign`, and the store's per-topic values checked against numbers
worked out by hand (in the comments beside each file).

The data (R0, R1, R9 are MS MARCO v2.1 segment ids, ``#`` inside):

- runA answers t1 (4 sentences: cites R0+R1, d3, nothing, R1) and t2 (2 sentences, each
  citing d4); it does not answer t3.
- runB answers t3 only (1 sentence citing R9).
- runC answers t1; the support file and the assignments do not know it.
- bm25 is a ranked run.

Support labels (first citations): t1 of runA: FS, PS, (no citation), -1; t2: NS (its text
NaN in the support file, its key ``sentenceId`` where line 1 says ``sentenceID``), 2; t3 of
runB: FS.
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest

from irbench.cli import main
from irbench.config import load_config
from irbench.notebook import open_store
from irbench.runner import run_campaign
from irbench.store import Store

R0 = "msmarco_v2.1_doc_1_100#0_200"
R1 = "msmarco_v2.1_doc_2_300#1_400"
R9 = "msmarco_v2.1_doc_9_9#9_9"

SUPPORT = "support_precision", "support_recall"
HARD = "support_precision(weight=hard)", "support_recall(weight=hard)"
ALL = "support_precision(citations=all)", "support_recall(citations=all)"
NUGGETS = ("nugget_score", "nugget_score(importance=vital)",
           "nugget_score(importance=vital,strict=true)", "nugget_score(importance=weighted)")
SUITE = ["AP", "nDCG@10", *SUPPORT, *HARD, *ALL, *NUGGETS, "answer_words", "uncited_share"]


def _answer(run_id: str, topic: str, refs: list[str], sentences: list[tuple[str, list[int]]]
            ) -> str:
    words = sum(len(text.split()) for text, _ in sentences)
    return json.dumps({"run_id": run_id, "topic_id": topic, "topic": "q", "references": refs,
                       "response_length": words,
                       "answer": [{"text": t, "citations": c} for t, c in sentences]})


def _support_lines() -> str:
    def cite(ref, label):
        return {"reference": ref, "support": label}

    t1 = {"topic_id": "t1", "run_id": "runA", "sentences": [
        {"sentenceID": 0, "text": "Alpha beta.", "citations": [cite(R0, "FS"), cite(R1, "PS")]},
        {"sentenceID": 1, "text": "Gamma delta.", "citations": [cite("d3", "PS")]},
        {"sentenceID": 2, "text": "Eps zeta.", "citations": []},
        {"sentenceID": 3, "text": "Eta.", "citations": [cite(R1, -1)]}]}
    t2 = {"topic_id": "t2", "run_id": "runA", "sentences": [
        {"sentenceId": 0, "text": "@NAN@", "citations": [cite("d4", "NS")]},
        {"sentenceId": 1, "text": "Kappa.", "citations": [cite("d4", 2)]}]}
    t3 = {"topic_id": "t3", "run_id": "runB", "sentences": [
        {"text": "Lambda.", "citations": [cite(R9, "FS")]}]}
    # a data frame's missing text, written out as JSON's NaN literal (as real files hold it)
    return "\n".join(json.dumps(x) for x in (t1, t2, t3)).replace('"@NAN@"', "NaN") + "\n"


def _assignment(topic: str, run: str, nuggets: list[tuple[str, str, str]]) -> str:
    return json.dumps({"qid": topic, "run_id": run, "nuggets": [
        {"text": t, "importance": i, "assignment": a} for t, i, a in nuggets]})


def _campaign(tmp_path: Path, extra: str = "", systems: str = "") -> Path:
    (tmp_path / "answers").mkdir(exist_ok=True)
    (tmp_path / "answers" / "a.jsonl").write_text("\n".join([
        _answer("runA", "t1", [R0, R1, "d3"], [("Alpha beta.", [0, 1]), ("Gamma delta.", [2]),
                                               ("Eps zeta.", []), ("Eta.", [1])]),
        _answer("runA", "t2", ["d4"], [("Theta iota.", [0]), ("Kappa.", [0])])]) + "\n")
    (tmp_path / "answers" / "b.jsonl").write_text(
        _answer("runB", "t3", [R9], [("Lambda.", [0])]) + "\n")
    (tmp_path / "answers" / "c.jsonl").write_text(
        _answer("runC", "t1", ["d3"], [("Alpha beta.", [0])]) + "\n")
    (tmp_path / "bm25.txt").write_text(f"t1 Q0 {R1} 1 3 bm25\nt1 Q0 d3 2 2 bm25\n"
                                       "t2 Q0 d4 1 1 bm25\n")
    (tmp_path / "qrels.txt").write_text(f"t1 0 {R1} 1\nt1 0 d3 1\nt1 0 {R0} 0\nt1 0 d9 1\n"
                                        "t2 0 d4 2\nt3 0 x7 1\n")
    (tmp_path / "support.jsonl").write_text(_support_lines())
    (tmp_path / "assign.jsonl").write_text("\n".join([
        _assignment("t1", "runA", [("n1", "vital", "support"),
                                   ("n2", "okay", "partial_support")]),
        _assignment("t2", "runA", [("m1", "okay", "support")]),  # no vital nugget
        _assignment("t3", "runB", [("k1", "vital", "partial_support")])]) + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(f"""\
        collection:
          qrels:
            official: qrels.txt
            support: {{path: support.jsonl, kind: support}}
            nuggets: {{path: assign.jsonl, kind: nuggets}}
        suites: {{main: {json.dumps(SUITE)}}}
        systems:
          - {{name: bm25, run: bm25.txt}}
          - {{name: A, answers: answers/a.jsonl}}
          - {{name: B, answers: answers/b.jsonl, format: rag24}}
          - {{name: C, answers: answers/c.jsonl}}
        """) + systems + extra)
    return path


def _per_topic(config) -> dict[tuple[str, str, str, str], float]:
    with Store(config.store, read_only=True) as store:
        rows = store.per_query()[1]
    return {(s, q, m, t): v for s, q, m, t, v in rows}


def _means(config) -> dict[tuple[str, str, str], float]:
    with Store(config.store, read_only=True) as store:
        rows = store.means()[1]
    return {(s, q, m): v for s, q, m, v, _ in rows}


def _close(got: dict, want: dict) -> None:
    assert set(got) == set(want), (sorted(got), sorted(want))
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-9), key


def _of(values: dict, system: str, qrels: str, measure: str) -> dict[str, float]:
    return {t: v for (s, q, m, t), v in values.items()
            if (s, q, m) == (system, qrels, measure)}


@pytest.mark.timeout(120)
def test_support_nuggets_and_references_per_topic_by_hand(tmp_path):
    config = load_config(_campaign(tmp_path))
    report = run_campaign(config, workers=1)
    assert report.failures == []
    values = _per_topic(config)

    # support, runA, first citations; t1: FS (1), PS (0.5), uncited, -1 (left out)
    #   precision: (1 + 0.5) / 2 judged = 0.75; recall: 1.5 / 3 (the -1 sentence left out)
    # t2: NS (0), 2 (1): 0.5 and 0.5; t3 not answered: 0, counted in the mean
    _close(_of(values, "A", "support", "support_precision"), {"t1": 0.75, "t2": 0.5, "t3": 0})
    _close(_of(values, "A", "support", "support_recall"), {"t1": 0.5, "t2": 0.5, "t3": 0})
    # hard: partial counts 0
    _close(_of(values, "A", "support", HARD[0]), {"t1": 0.5, "t2": 0.5, "t3": 0})
    _close(_of(values, "A", "support", HARD[1]), {"t1": 1 / 3, "t2": 0.5, "t3": 0})
    # all judged citations: t1 sentence 0 (1 + 0.5) / 2 = 0.75, sentence 1 0.5, sentence 3
    # none judged: precision (0.75 + 0.5) / 2; recall 1.25 / 3 (the uncited one counted)
    _close(_of(values, "A", "support", ALL[0]), {"t1": 0.625, "t2": 0.5, "t3": 0})
    _close(_of(values, "A", "support", ALL[1]), {"t1": 1.25 / 3, "t2": 0.5, "t3": 0})
    # runB answers t3 only: FS there, 0 where it did not answer
    _close(_of(values, "B", "support", "support_precision"), {"t1": 0, "t2": 0, "t3": 1.0})
    # answer shape on the support set's topics: words 2+2+2+1, 2+1; one uncited of 4
    _close(_of(values, "A", "support", "answer_words"), {"t1": 7, "t2": 3, "t3": 0})
    _close(_of(values, "A", "support", "uncited_share"), {"t1": 0.25, "t2": 0, "t3": 0})

    # nuggets, runA: t1 vital support + okay partial; t2 one okay nugget (empty vital set)
    _close(_of(values, "A", "nuggets", "nugget_score"), {"t1": 0.75, "t2": 1.0, "t3": 0})
    _close(_of(values, "A", "nuggets", NUGGETS[1]), {"t1": 1.0, "t2": 0.0, "t3": 0})
    _close(_of(values, "A", "nuggets", NUGGETS[2]), {"t1": 1.0, "t2": 0.0, "t3": 0})
    # weighted: t1 (1 * 1 + 0.5 * 0.5) / (1 + 0.5); t2 (0.5 * 1) / 0.5
    _close(_of(values, "A", "nuggets", NUGGETS[3]), {"t1": 1.25 / 1.5, "t2": 1.0, "t3": 0})
    _close(_of(values, "B", "nuggets", NUGGETS[1]), {"t1": 0, "t2": 0, "t3": 0.5})
    _close(_of(values, "B", "nuggets", NUGGETS[2]), {"t1": 0, "t2": 0, "t3": 0.0})

    # references as a ranking on document qrels, in the list's order (trec_eval's order of
    # scores -position): t1 [R0 (0), R1 (1), d3 (1)], 3 relevant (d9 not retrieved):
    # AP (1/2 + 2/3) / 3; nDCG@10 (1/log2 3 + 1/log2 4) / (1 + 1/log2 3 + 1/log2 4)
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    _close(_of(values, "A", "official", "AP"), {"t1": (1 / 2 + 2 / 3) / 3, "t2": 1.0,
                                                "t3": 0.0})
    _close(_of(values, "A", "official", "nDCG@10"), {"t1": dcg / (1 + dcg), "t2": 1.0,
                                                     "t3": 0.0})
    # runC's one reference d3 (relevant, of 3) at rank 1
    assert _of(values, "C", "official", "AP") == {"t1": pytest.approx(1 / 3), "t2": 0.0,
                                                  "t3": 0.0}

    means = _means(config)
    assert means["A", "support", "support_precision"] == pytest.approx(1.25 / 3)
    assert means["A", "nuggets", NUGGETS[2]] == pytest.approx(1 / 3)
    assert means["A", "official", "AP"] == pytest.approx((1 / 2 + 2 / 3) / 3 / 3 + 1 / 3)
    # the ranked run: scored on the document qrels, never on the answer judgments
    assert {q for (s, q, _, _) in values if s == "bm25"} == {"official"}
    assert _of(values, "bm25", "official", "AP") == {"t1": pytest.approx(2 / 3), "t2": 1.0,
                                                     "t3": 0.0}
    # runC: not in the support file nor the assignments: no value there, a warning each
    assert {q for (s, q, _, _) in values if s == "C"} == {"official"}
    for qrels in ("support", "nuggets"):
        assert (f"system 'C': qrels '{qrels}' has no judgments of run 'runC': not scored on "
                "it") in report.warnings
    # the support file's oddities, each with its line, in the run's warnings
    support = str(tmp_path / "support.jsonl")
    assert any(f"{support}:2: sentence id key spelled 'sentenceId' here, 'sentenceID' before"
               in w for w in report.warnings), report.warnings
    assert any(f"{support}:2: sentence 0: text is NaN" in w for w in report.warnings)
    # the notebook reads the same values
    frame = open_store(config).per_query(qrels="support", systems=["A"],
                                         measures=["support_precision"]) \
        if _has_pandas() else None
    if frame is not None:
        assert sorted(frame["value"].round(6)) == [0.0, 0.5, 0.75]


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


@pytest.mark.timeout(120)
def test_intersection_scores_only_the_topics_a_run_answers(tmp_path):
    config = load_config(_campaign(tmp_path, "evaluation: {topics: intersection}\n"))
    assert run_campaign(config, workers=1).failures == []
    values = _per_topic(config)
    _close(_of(values, "A", "support", "support_precision"), {"t1": 0.75, "t2": 0.5})
    _close(_of(values, "B", "support", "support_precision"), {"t3": 1.0})
    _close(_of(values, "A", "nuggets", NUGGETS[1]), {"t1": 1.0, "t2": 0.0})
    _close(_of(values, "A", "official", "AP"), {"t1": (1 / 2 + 2 / 3) / 3, "t2": 1.0})
    means = _means(config)
    assert means["A", "support", "support_precision"] == pytest.approx(0.625)


@pytest.mark.timeout(120)
def test_rerun_reuses_everything_and_a_changed_support_file_rescores(tmp_path):
    path = _campaign(tmp_path)
    config = load_config(path)
    first = run_campaign(config, workers=1)
    # official: bm25, A, B, C; support and nuggets: A and B (C is not known to them)
    assert (first.evaluated, first.reused) == (8, 0)
    again = run_campaign(load_config(path), workers=1)
    assert (again.evaluated, again.failures) == (0, [])
    assert again.reused == 8
    # runC is read again (the store holds nothing of it on the answer sets), scored on
    # nothing, and still told
    assert ("system 'C': qrels 'support' has no judgments of run 'runC': not scored on "
            "it") in again.warnings
    # t1's second sentence judged full support instead of partial: only the support set
    # is evaluated again, for the runs it knows
    support = tmp_path / "support.jsonl"
    support.write_text(support.read_text().replace('"reference": "d3", "support": "PS"',
                                                   '"reference": "d3", "support": "FS"'))
    changed = run_campaign(load_config(path), workers=1)
    assert changed.failures == []
    assert (changed.evaluated, changed.reused) == (2, 6)
    values = _per_topic(config)
    _close(_of(values, "A", "support", "support_precision"), {"t1": 1.0, "t2": 0.5, "t3": 0})


@pytest.mark.timeout(120)
def test_a_malformed_answer_file_fails_that_system_only(tmp_path, capsys):
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "bad.jsonl").write_text(
        _answer("runA", "t2", ["d4"], [("Fine.", [0])]) + "\n"
        + _answer("runA", "t1", ["d4"], [("Out of range.", [3])]) + "\n")
    path = _campaign(tmp_path, systems="  - {name: bad, answers: answers/bad.jsonl}\n")
    # irbench run's status for a campaign with a failed system is 1 (the others' scores are
    # stored); the file's problem is named with its line
    assert main(["run", "--workers", "1", "--quiet", str(path)]) == 1
    err = capsys.readouterr().err
    bad = tmp_path / "answers" / "bad.jsonl"
    assert (f"irbench: error: system 'bad': {bad}:2: answer[0].citations[0]: index 3 outside "
            "the 1 references") in err
    assert "Traceback" not in err
    config = load_config(path)
    values = _per_topic(config)
    assert {s for (s, _, _, _) in values} == {"bm25", "A", "B", "C"}
    _close(_of(values, "A", "support", "support_precision"), {"t1": 0.75, "t2": 0.5, "t3": 0})
