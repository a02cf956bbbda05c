"""The nugget judge (issue 40): AutoNuggetizer's prompts word for word, answers read by bounded
parsers, creation over windows with the running list, importance and assignment in batches,
samples with a vote; against the stand-in model answering by a rule that knows the bundled
answer campaign (runs/rag)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from chat_server import ChatServer, NuggetTruth, rule_nuggets

from irbench.answers import read_answers
from irbench.documents import open_documents
from irbench.judges import nugget_prompts as np_
from irbench.judges.nugget_judging import (
    AnswerFile,
    AnswerText,
    Asking,
    assign_nuggets,
    create_nuggets,
    label_importance,
    relevant_segments,
    voted_nuggets,
)
from irbench.judges.nugget_parse import last_list, string_lists
from irbench.judges.nugget_records import write_assignments, write_nugget_lists
from irbench.judges.nugget_tasks import (
    ASSIGNMENT,
    IMPORTANCE,
    SAMPLE_ASSIGN,
    CreateContext,
    read_labels,
    read_nuggets,
)
from irbench.judges.spec import build_judge
from irbench.judges.votes import vote
from irbench.judgments.nuggets import read_assignments
from irbench.judgments.nuggets import read_nuggets as read_nugget_lists
from irbench.topics import read_topics
from irbench.trec import read_qrels

RAG = Path(__file__).resolve().parent.parent / "runs" / "rag"

# sha256 of AutoNuggetizer's texts as castorini/nuggetizer d00dc3eb holds them (the YAML's
# system_message and prefix_user, checked against that commit when pinned)
PINNED = {
    "CREATE_SYSTEM": "31ce0ce377df8788d4ac2becfe0ba7f418311249e5461b21797fcd86f41bdb43",
    "CREATE_USER": "863aa0bc0891098420e3303e2f567a5f16733e98e48f877baad5bd429975c80d",
    "IMPORTANCE_SYSTEM": "b3fd4ba0d631aec42e52a4c9ef8c7ec74303b05e448383f5d630806d0bb5e6eb",
    "IMPORTANCE_USER": "bf8aa79a084f0d3153de63f462702d9cb7f61de0abc71f91c018699f6f5900f0",
    "ASSIGN_SYSTEM": "db2e2f89298a08e99cf2b24f598672ea8c02518880a88fc49e671f48817d4e64",
    "ASSIGN_USER": "516bbff13b4fe692c6f3a5b31e8948b17202e0f76e4ccedb1bb1861509972ea8",
}


# ---- prompts -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PINNED))
def test_autonuggetizer_prompts_pinned(name):
    text = getattr(np_, name)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == PINNED[name]


def _judge(task: str, problems: list | None = None, **more):
    found: list = [] if problems is None else problems
    spec = build_judge("nuggeter", {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                    "task": task, **more},
                       lambda path, reason: found.append((path, reason)),
                       lambda p, v: "{{ query }}: label {{ nuggets }} in {{ context }}")
    assert problems is not None or found == []
    return spec


@pytest.mark.parametrize("task,user,system,names", [
    ("nugget_create", np_.CREATE_USER, np_.CREATE_SYSTEM,
     dict(query="q?", context="[1] a\n[2] b", nuggets="['x', 'y']", nuggets_length=2,
          creator_max_nuggets=30)),
    ("nugget_importance", np_.IMPORTANCE_USER, np_.IMPORTANCE_SYSTEM,
     dict(query="q?", nuggets="['x']", num_nuggets=1)),
    ("nugget_assign", np_.ASSIGN_USER, np_.ASSIGN_SYSTEM,
     dict(query="q?", context="An answer.", nuggets="['x']", num_nuggets=1)),
])
def test_default_prompt_renders_as_autonuggetizer_formats_it(task, user, system, names):
    """The judge's default messages are AutoNuggetizer's: its system message, then its user
    message as str.format fills it."""
    spec = _judge(task)
    context = {"nugget_create": CreateContext}.get(task)
    rendering = spec.prompt.compile()

    class Names:
        def names(self):
            return {"query_id": "1", **{k: str(v) for k, v in names.items()}}

    messages = rendering.render(Names())
    assert messages == [{"role": "system", "content": system},
                        {"role": "user", "content": user.format(**names)}]
    assert context is None or CreateContext.of("1", "q?", ["a", "b"], ["x", "y"]).names()[
        "context"] == "[1] a\n[2] b"


def test_a_template_replaces_the_prompt_and_samples_are_checked():
    spec = _judge("nugget_assign", prompt="x.j2", samples=3, vote="mean")
    assert (spec.samples, spec.vote, spec.prompt_name) == (3, "mean", "x.j2")
    messages = spec.prompt.compile().render(SAMPLE_ASSIGN)
    assert messages[1]["content"] == ("a sample topic: label ['a sample nugget', 'a sample "
                                      "nugget'] in A sample answer.")
    assert messages[0]["content"] == np_.ASSIGN_SYSTEM  # the system message stays
    problems: list = []
    _judge("nugget_assign", problems, samples=0, vote="median")
    _judge("relevance", problems, samples=65)
    assert [p[0][-1] for p in problems] == ["samples", "vote", "samples"]
    assert "from 1 to 64" in problems[2][1]
    for task in ("relevance", "support"):  # every task asks samples and votes (issue 40)
        assert _judge(task, samples=2, vote="mean").samples == 2
    assert '"samples"' not in _judge("nugget_assign").settings()


# ---- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize("answer,expected", [
    ("```python\n['a', 'b']\n```", ["a", "b"]),
    ('Here you go: ["a", "b"]. I hope this helps [truly].', ["a", "b"]),
    ("Initial: ['x']\nUpdated Nugget List: ['x', 'y \\'q\\'']", ["x", "y 'q'"]),
    ("[['a', 'b'], 'c']", ["a", "b"]),  # nested junk: the inner flat list only
    ("['a', 1, 'b']", None),
    ("['a', __import__('os').system('x')]", None),
    ("['unclosed, 'b']", None),
    ("no list at all", None),
])
def test_nugget_lists_read_from_what_models_write(answer, expected):
    assert read_nuggets(answer) == expected


@pytest.mark.parametrize("answer,n,expected", [
    ("['vital', 'okay']", 2, [1, 0]),
    ('```json\n["Vital", "OK"]\n```\nThese are [my] labels.', 2, [1, 0]),
    ("[vital, okay, vital]", 3, [1, 0, 1]),
    ("['vital']", 2, None),  # the wrong length: failed
    ("['vital', 'maybe']", 2, None),
])
def test_importance_labels(answer, n, expected):
    assert read_labels(answer, IMPORTANCE, n) == expected


def test_assignment_labels_folded():
    assert read_labels("['Support', 'partial support', 'not-support']", ASSIGNMENT, 3) == \
        [2, 1, 0]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("junk", ["[" * 100_000, "['" * 50_000, "['a', " * 20_000,
                                  "'" * 100_000, "[" * 50_000 + "]" * 50_000,
                                  "\\" * 100_000, "[a, " * 25_000])
def test_a_100_kb_answer_parses_in_linear_time(junk):
    """Hostile answers of 100 KB, and of 400 KB, read in about 4 times the time (never
    quadratic), with no exception."""
    def took(text):
        began = time.perf_counter()
        string_lists(text + "['vital']", bare=True)
        return time.perf_counter() - began

    small, large = took(junk), took(junk * 4)
    assert large < 12 * small + 0.05
    assert last_list(junk + " ['vital']", bare=True) == ["vital"]


def test_votes():
    assert vote([2, 1, 1]) == 1 and vote([2, 1]) == 1 and vote([0, 2, None]) == 0
    assert vote([None, None]) is None
    assert vote([2, 1], "mean") == 1 and vote([2, 2, 1], "mean") == 2
    assert vote([0, 1, 1, 1], "mean") == 1
    assert voted_nuggets([["A b", "c"], ["a  B", "d"], ["c", "a b"]]) == ["A b", "c"]


# ---- the campaign ------------------------------------------------------------------------


def _campaign():
    topics = read_topics(str(RAG / "topics.txt"))
    queries = {q: topics.statement(q)["title"] for q in topics.query_id}
    truth_lists = [json.loads(x) for x in (RAG / "judgments/nuggets.jsonl").open()]
    answers = []
    for path in sorted((RAG / "answers").glob("*.jsonl")):
        run = read_answers(str(path))
        answers += [AnswerText(a.topic_id, run.run_id, " ".join(s.text for s in a.sentences))
                    for a in run.answers()]
    passages = {(a.qid, a.run_id): a.text for a in answers}
    assigned = [json.loads(x) for x in (RAG / "judgments/assignments.jsonl").open()]
    truth = NuggetTruth(
        nuggets={x["query"]: [n["text"] for n in x["nuggets"]] for x in truth_lists},
        importance={(x["query"], n["text"]): n["importance"] for x in truth_lists
                    for n in x["nuggets"]},
        assignment={(queries[x["qid"]], passages[(x["qid"], x["run_id"])], n["text"]):
                    n["assignment"] for x in assigned for n in x["nuggets"]})
    assert len({(queries[q], p) for (q, _), p in passages.items()}) == len(passages)
    with open_documents(_documents_spec()) as documents:
        segments, missing = relevant_segments(read_qrels(str(RAG / "qrels.txt")), documents,
                                              limit=8000)
    assert missing == []
    return queries, truth_lists, assigned, answers, truth, segments


def _documents_spec():
    from irbench.config import load_config

    return load_config(str(RAG.parent.parent / "configs" / "rag.yaml")).documents


@pytest.fixture(scope="module")
def campaign():
    return _campaign()


def _expected(campaign, max_nuggets=30):
    """What the rule gives: a topic's known nuggets, one per relevant segment, at most
    ``max_nuggets``; their importance and assignments as the campaign's files say."""
    queries, truth_lists, assigned, _, _, segments = campaign
    lists = {x["qid"]: x["nuggets"][:min(len(segments.get(x["qid"], [])), max_nuggets)]
             for x in truth_lists}
    lists = {q: n for q, n in lists.items() if n}
    rows = [{"qid": x["qid"], "run_id": x["run_id"], "nuggets": x["nuggets"][:len(lists[x["qid"]])]}
            for x in assigned if x["qid"] in lists]
    return lists, rows


def _judge_all(server, tmp_path, campaign, *, samples=1, max_calls=None, window=3,
               max_nuggets=30):
    queries, _, _, answers, _, segments = campaign
    spec = _judge("nugget_create", base_url=server.base_url, samples=samples,
                  temperature=0.7 if samples > 1 else 0, backoff=0, retries=0, concurrency=4)
    store = AnswerFile(tmp_path / "answers.jsonl")
    asking = Asking.open(spec, store, str(tmp_path / "journal.jsonl"), max_calls=max_calls)
    made = create_nuggets(asking, queries, segments, window=window, max_nuggets=max_nuggets)
    asking.spec = _judge("nugget_importance", base_url=server.base_url, samples=samples,
                         backoff=0, retries=0, concurrency=4)
    lists = label_importance(asking, queries, made, batch=4)
    asking.spec = _judge("nugget_assign", base_url=server.base_url, samples=samples,
                         backoff=0, retries=0, concurrency=4)
    rows = assign_nuggets(asking, lists, answers, batch=4)
    return made, lists, rows, asking.summary, store


@pytest.mark.timeout(120)
def test_nuggets_importance_and_assignments_equal_the_rules(campaign, tmp_path):
    """Windows of 3 segments with the running list fed back, batches of 4 nuggets: the
    files written equal the campaign's, cut to the nuggets one per relevant segment gives;
    irbench's readers read them."""
    lists_expected, rows_expected = _expected(campaign)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        made, lists, rows, summary, _ = _judge_all(server, tmp_path, campaign)
    assert {q: [n["text"] for n in x] for q, x in lists_expected.items()} == made
    assert [x.record() for x in lists] == [
        {"qid": q, "query": campaign[0][q], "nuggets": lists_expected[q]}
        for q in sorted(lists_expected)]
    assert sorted((x.record() for x in rows), key=lambda r: (r["qid"], r["run_id"])) == \
        sorted(rows_expected, key=lambda r: (r["qid"], r["run_id"]))
    assert summary.no_segments == ["406"] and summary.unparsed == 0
    assert summary.unfinished == [] and summary.failed == 0
    write_nugget_lists(tmp_path / "nuggets.jsonl", lists)
    write_assignments(tmp_path / "assignments.jsonl", rows)
    assert len(read_nugget_lists(str(tmp_path / "nuggets.jsonl")).topics) == len(lists)
    assert len(read_assignments(str(tmp_path / "assignments.jsonl"))) == \
        sum(len(r["nuggets"]) for r in rows_expected)


@pytest.mark.timeout(120)
def test_creation_keeps_max_nuggets(campaign, tmp_path):
    lists_expected, _ = _expected(campaign, max_nuggets=4)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        made, *_ = _judge_all(server, tmp_path, campaign, max_nuggets=4)
    assert made == {q: [n["text"] for n in x] for q, x in lists_expected.items()}


@pytest.mark.timeout(180)
def test_three_samples_vote_the_rules_majority_every_sample_kept(campaign, tmp_path):
    """The stand-in answers every request's second sample wrongly: the majority of three is
    the rule's answer; each sample is a request of its own, its answer kept."""
    lists_expected, rows_expected = _expected(campaign)
    with ChatServer(rule_nuggets(campaign[4], noisy=True)) as server:
        made, lists, rows, summary, store = _judge_all(server, tmp_path, campaign, samples=3)
        calls = server.calls
    assert [x.record() for x in lists] == [
        {"qid": q, "query": campaign[0][q], "nuggets": lists_expected[q]}
        for q in sorted(lists_expected)]
    assert sorted((x.record() for x in rows), key=lambda r: (r["qid"], r["run_id"])) == \
        sorted(rows_expected, key=lambda r: (r["qid"], r["run_id"]))
    assert calls == len(store) == summary.answered and calls % 3 == 0
    by_request: dict = {}
    for (_, _, qid, unit), kept in store.rows.items():
        by_request.setdefault((qid, unit), []).append(kept[0][2])
    assert all(len(set(a)) == 2 for a in by_request.values() if len(a) == 3)


@pytest.mark.timeout(180)
def test_a_run_stopped_midway_resumes_paying_for_no_answer_twice(campaign, tmp_path):
    """A run stopped by its budget leaves topics unfinished; run again (the answers file and
    the journal kept), it asks only what it never received and gives the same lists."""
    lists_expected, rows_expected = _expected(campaign)
    with ChatServer(rule_nuggets(campaign[4])) as server:
        made, lists, rows, summary, _ = _judge_all(server, tmp_path, campaign, max_calls=15)
        assert summary.unfinished and summary.budget_left > 0 and server.calls == 15
        made, lists, rows, summary, store = _judge_all(server, tmp_path, campaign)
        assert server.calls == len(store) and summary.cached >= 15
    assert [x.record() for x in lists] == [
        {"qid": q, "query": campaign[0][q], "nuggets": lists_expected[q]}
        for q in sorted(lists_expected)]
    assert len(rows) == len(rows_expected) and summary.unfinished == []
