"""Answer systems in a config (issue 39): ``answers: FILE``, ``kind: answers`` for globs and run
tables, ``format:``, each mistake with its line; the answer judgment kinds as qrels sets."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from irbench.config import load_config
from irbench.errors import ConfigError
from irbench.runner import run_campaign
from irbench.store import Store


def _answer(run_id: str, topic: str, refs: list[str], sentences: list[tuple[str, list[int]]]
            ) -> str:
    return json.dumps({"run_id": run_id, "topic_id": topic, "topic": "q", "references": refs,
                       "answer": [{"text": t, "citations": c} for t, c in sentences]})


def _campaign(tmp_path: Path, systems: str) -> Path:
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "a1.jsonl").write_text(
        _answer("tagA", "t1", ["d#1", "d2"], [("One two.", [0]), ("Three.", [1])]) + "\n")
    (tmp_path / "answers" / "a2.jsonl").write_text(
        _answer("tagB", "t1", ["d2"], [("Four five six.", [0])]) + "\n")
    (tmp_path / "bm25.txt").write_text("t1 Q0 d#1 1 2 bm25\nt1 Q0 d2 2 1 bm25\n")
    (tmp_path / "qrels.txt").write_text("t1 0 d#1 1\nt1 0 d2 0\n")
    (tmp_path / "support.tsv").write_text(
        "t1\ttagA\t0\t0\td#1\t2\nt1\ttagA\t1\t0\td2\t1\nt1\ttagB\t0\t0\td2\t0\n")
    (tmp_path / "table.tsv").write_text("run\tkind\tgroup\nanswers/a2.jsonl\tanswers\tg\n")
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent("""\
        collection:
          qrels:
            official: qrels.txt
            support: {path: support.tsv, kind: support}
        suites: {main: [AP, support_precision, answer_words]}
        """) + systems)
    return path


def test_answer_systems_from_an_entry_a_glob_and_a_table(tmp_path):
    path = _campaign(tmp_path, textwrap.dedent("""\
        systems:
          - {name: bm25, run: bm25.txt}
          - {glob: "answers/a1*.jsonl", kind: answers, name_from: tag}
          - table: table.tsv
          - {name: again, answers: answers/a1.jsonl, format: rag24}
        """))
    config = load_config(path)
    kinds = {s.name: (s.kind, s.answer_format) for s in config.systems}
    assert kinds == {"bm25": ("run", None), "tagA": ("answers", None), "a2": ("answers", None),
                     "again": ("answers", "rag24")}
    report = run_campaign(config, workers=1)
    assert report.failures == []
    with Store(config.store, read_only=True) as store:
        rows = store.query("SELECT system, qrels, measure, value FROM means "
                           "ORDER BY system, qrels, measure")[1]
        declared = {s.name: s.kind for s in store.declared_systems()}
    values = {(s, q, m): round(v, 4) for s, q, m, v in rows}
    assert declared == {"bm25": "run", "tagA": "answers", "a2": "answers", "again": "answers"}
    # the ranked run is not scored on support labels; answers are, and on qrels by references
    assert ("bm25", "support", "support_precision") not in values
    assert values[("tagA", "support", "support_precision")] == 0.75  # (1 + 0.5) / 2
    assert values[("a2", "support", "support_precision")] == 0.0
    assert values[("again", "support", "support_precision")] == 0.75
    assert values[("tagA", "support", "answer_words")] == 3.0
    assert values[("tagA", "official", "AP")] == 1.0  # d#1 ranked first, kept whole
    assert values[("a2", "official", "AP")] == 0.0
    assert ("tagA", "official", "support_precision") not in values


def test_answer_keys_mistaken_are_problems_with_their_line(tmp_path):
    path = _campaign(tmp_path, textwrap.dedent("""\
        systems:
          - {name: a, run: bm25.txt, format: rag24}
          - {name: b, answers: answers/a1.jsonl, kind: run}
          - {name: c, answers: answers/a1.jsonl, format: rag99}
          - {name: d, run: answers/a1.jsonl, kind: generated}
        """))
    assert _problems(path) == [
        "systems[0].format: format is an answer run's (kind: answers)",
        "systems[1].answers: answers: FILE declares a system of kind answers (not with run: "
        "or another kind)",
        "systems[2].format: must be one of rag24, rag25, ragtime, neuclir24, not 'rag99'",
        "systems[3].kind: must be run or answers, not 'generated'",
    ]


def _problems(path: Path) -> list[str]:
    try:
        load_config(path)
    except ConfigError as exc:
        return [p.split(": ", 1)[1] for p in exc.problems]
    raise AssertionError("the config was accepted")


def test_a_topic_judged_with_no_citation_counts_and_labels_all_none_are_data(tmp_path):
    """A support file's topic whose answers cite nothing is still evaluated (0 for a run that
    answers nothing cited there), and a set whose labels are all 0 (no support) is scored, not
    refused as a qrels set reaching no relevance level."""
    path = _campaign(tmp_path, "systems:\n  - {name: a1, answers: answers/a1.jsonl}\n")
    (tmp_path / "support.jsonl").write_text(
        json.dumps({"topic_id": "t1", "run_id": "tagA", "sentences": [
            {"text": "One two.", "citations": [{"reference": "d#1", "support": 0}]},
            {"text": "Three.", "citations": [{"reference": "d2", "support": "NS"}]}]}) + "\n"
        + json.dumps({"topic_id": "t0", "run_id": "tagA", "sentences": [
            {"text": "Seven.", "citations": []}]}) + "\n")
    with (tmp_path / "answers" / "a1.jsonl").open("a") as fh:
        fh.write(_answer("tagA", "t0", [], [("Seven.", [])]) + "\n")
    path.write_text(path.read_text().replace("support.tsv", "support.jsonl"))
    config = load_config(path)
    report = run_campaign(config, workers=1)
    assert report.failures == []
    with Store(config.store, read_only=True) as store:
        rows = store.query("SELECT query_id, value FROM per_query WHERE qrels = 'support' "
                           "AND measure = 'support_precision' ORDER BY query_id")[1]
    assert rows == [("t0", 0.0), ("t1", 0.0)]
