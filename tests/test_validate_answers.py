"""``irbench validate`` on answer runs (issue 39): a file of JSON lines is checked by the answer
reader's rules, its problems and warnings at their lines, beside ranked runs."""

from __future__ import annotations

import json

from irbench import cli


def _line(**fields) -> str:
    base = {"run_id": "teamA-1", "topic_id": "t1", "topic": "q",
            "references": ["msmarco_v2.1_doc_36_1381771658#3_2852387502", "d2"],
            "response_length": 2, "answer": [{"text": "One two.", "citations": [0, 1]}]}
    return json.dumps({**base, **fields})


def test_answer_runs_are_validated_by_their_tracks_rules(tmp_path, capsys):
    good = tmp_path / "teamA-1.jsonl"
    good.write_text(_line() + "\n" + _line(topic_id="t2", response_length=5) + "\n")
    bad = tmp_path / "teamB-1.jsonl"
    bad.write_text(_line(run_id="teamB-1") + "\n"
                   + _line(run_id="teamB-1", topic_id="t2",
                           answer=[{"text": "x", "citations": [7]}]) + "\n"
                   + "not json\n")
    run = tmp_path / "bm25.txt"
    run.write_text("t1 Q0 d2 1 1.0 bm25\nt2 Q0 d2 1 1.0 bm25\n")
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tq one\nt2\tq two\n")
    rc = cli.main(["validate", str(good), str(bad), str(run), "--topics", str(topics)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    assert out == [
        f"{good}:2: warning: response_length is 5, the answer has 2 words [answer_warning]",
        f"{good}: accepted: 0 errors, 1 warning; run tag 'teamA-1', 2 topics, 2 results",
        f"{bad}:2: error: answer[0].citations[0]: index 7 outside the 2 references [answers]",
        f"{bad}:3: error: not JSON: Expecting value (column 1) [answers]",
        f"{bad}: rejected: 2 errors, 0 warnings; no run tag, 0 topics, 0 results",
        f"{run}: accepted: 0 errors, 0 warnings; run tag 'bm25', group 'bm25', 2 topics, "
        "2 results",
        "3 runs: 2 accepted, 1 rejected",
    ]
