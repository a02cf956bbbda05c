"""The model support judge (issue 40): ``irbench judge CONFIG --judge NAME --support`` against
the stand-in chat server (tests/chat_server.py, answering by a rule over the statement and the
citation), ``irbench qrels --support`` and scoring the file it writes."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from chat_server import SUPPORT_PROMPT, ChatServer, Fault, last_user_text, rule_support, support_of

from irbench import cli
from irbench.config import load_config
from irbench.documents import open_documents
from irbench.judges import support_task
from irbench.judges.journal import journal_path
from irbench.judges.prompts import Prompt
from irbench.store import Store

# the organisers' SUPPORT_EVAL_PROMPT as their script holds it (str.format fields), and as
# irbench's Jinja2 template holds it: pinned, so that neither drifts
UPSTREAM_SHA256 = "af55a6a2431e612ff32074c50ad92fb8960691eac3e4707e9d3d498fc6e6f455"
TEMPLATE_SHA256 = "c90bc7db8c92c6668fa6c6d1722ce3144bf52ce02a3e69b92d55ba5666c96724"

SHARED = "The port of Rotterdam is the largest port in Europe."
DOCS = {  # docno: (title, text)
    "seg-1": ("Ports", "The port of Rotterdam is the largest port in Europe by cargo."),
    "seg-2": ("Bridges", "Rotterdam has bridges. [[support:partial]]"),
    "seg-3": ("Weather", "It rains often in the Netherlands. [[support:no]]"),
    "seg-4": ("Cargo", "Containers arrive at Rotterdam every day."),
    "seg-5": ("Tulips", "Tulips grow in fields near Lisse."),
}
# run: topic: [(sentence, [cited docnos])]
ANSWERS = {
    "runA": {"q1": [(SHARED, ["seg-1"]), ("Rotterdam has many bridges over the river.",
                                          ["seg-2"])],
             "q2": [("Tulips grow in fields near Lisse in spring.", ["seg-5"])]},
    "runB": {"q1": [("Ports matter.", []), (SHARED, ["seg-1", "seg-4"]),
                    ("It rains a lot.", ["seg-3"])]},
    "runC": {"q1": [(SHARED, ["seg-1", "seg-3"])],
             "q2": [("Lisse is known for tulips.", ["seg-5", "seg-4"])]},
}


def _answer_line(run: str, topic: str, sentences: list) -> str:
    refs = list(dict.fromkeys(d for _, cited in sentences for d in cited))
    return json.dumps({"run_id": run, "topic_id": topic, "topic": "rotterdam port",
                       "references": refs, "response_length": 10,
                       "answer": [{"text": text, "citations": [refs.index(d) for d in cited]}
                                  for text, cited in sentences]}) + "\n"


def make_campaign(folder: Path, server: ChatServer, answers=ANSWERS, docs=DOCS, **judge) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "topics.tsv").write_text("q1\trotterdam port\nq2\ttulip fields\n")
    (folder / "docs.trec").write_text("".join(
        f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TITLE>{title}</TITLE>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n"
        for d, (title, text) in docs.items()))
    (folder / "answers").mkdir(exist_ok=True)
    for run, topics in answers.items():
        (folder / "answers" / f"{run}.jsonl").write_text("".join(
            _answer_line(run, t, s) for t, s in topics.items()))
    (folder / "seed.jsonl").write_text(json.dumps({"topic_id": "q1", "run_id": "runA",
                                                   "sentences": [{"text": SHARED, "citations": [
                                                       {"reference": "seg-1", "support": 2}]}]})
                                       + "\n")
    config = {"name": "sup", "collection": {"topics": "topics.tsv", "documents": "docs.trec",
                                            "qrels": {"seed": {"path": "seed.jsonl",
                                                               "kind": "support"}}},
              "suites": {"answers": ["support_precision", "support_recall"]},
              "systems": [{"name": run, "answers": f"answers/{run}.jsonl", "format": "rag24"}
                          for run in answers],
              "judges": {"sup": {"base_url": server.base_url, "model": "stand-in",
                                 "task": "support", "backoff": 0, "retries": 1,
                                 "timeout": 20, **judge}}}
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def expected(config: Path, citations: str = "first") -> dict[tuple[str, str, str], int]:
    """{(topic, sentence, segment): the rule's label} of the campaign's units."""
    loaded = load_config(str(config), strict=False)
    units = {(t, text, cited[0] if citations == "first" else d)
             for topics in ANSWERS.values() for t, sentences in topics.items()
             for text, cited in sentences for d in (cited[:1] if citations == "first"
                                                    else cited)}
    with open_documents(loaded.documents) as documents:
        docs = {d: documents.get_many([d])[0] for d in {u[2] for u in units}}
    return {(t, s, d): support_of(s, support_task.citation(docs[d].title, docs[d].text))
            for t, s, d in units}


def stored(config: Path, judge: str | None = None) -> dict[tuple[str, str, str], int]:
    loaded = load_config(str(config), strict=False)
    with Store(loaded.store, read_only=True) as store:
        c = store.answer_label_columns("support", [judge] if judge else [])
    return {(q, s, r): int(label) for q, s, r, label in zip(
        c["query_id"], c["sentence_text"], c["reference"], c["label"])}


class Counting:
    """The support rule, counting the prompts it answered; after ``hold_after`` answers
    (None: never) every further request is held (Fault.HANG) until released."""

    def __init__(self, hold_after: int | None = None):
        self.answered: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        self.hold_after = hold_after

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.answered[last_user_text(body)] += 1
        return rule_support(body)

    def holding(self, body: dict) -> bool:
        with self.lock:
            return self.hold_after is not None and sum(self.answered.values()) >= self.hold_after


def _judge(config: Path, *more: str) -> int:
    return cli.main(["judge", str(config), "--judge", "sup", "--support", *more])


def test_the_default_prompt_is_the_track_s_word_for_word():
    upstream = support_task.SUPPORT.replace("{{ statement }}", "{statement}").replace(
        "{{ citation }}", "{citation}")
    assert hashlib.sha256(upstream.encode()).hexdigest() == UPSTREAM_SHA256
    assert hashlib.sha256(support_task.SUPPORT.encode()).hexdigest() == TEMPLATE_SHA256
    rendering = Prompt(user=support_task.SUPPORT, label_pattern=support_task.LABEL_PATTERN,
                       labels=support_task.LABELS).compile()
    context = support_task.SupportContext.of({"query_id": "1", "title": "t"}, "A {x} s.",
                                             "d", "T", "Body {{ y }}.", 8000)
    assert rendering.render(context) == [{"role": "user", "content": upstream.format(
        statement="A {x} s.", citation="T: Body {{ y }}.")}]
    assert SUPPORT_PROMPT.search(rendering.render(context)[0]["content"]).groups() == (
        "A {x} s.", "T: Body {{ y }}.")
    for answer, label in [("Full Support", 2), ("partial_support.", 1), ("**No Support**", 0),
                          ("2", 2), ("Label: Partial Support\nfinal: Full Support", 2),
                          ('Respond as either "Full Support", "Partial Support", or "No '
                           'Support" with no additional information.', None),
                          ("I cannot tell.", None), ("3", None)]:
        got = support_task.parse(rendering, answer, rendering.render(context))
        assert got == label, answer


@pytest.mark.timeout(60)
def test_labels_equal_the_rule_and_a_shared_unit_is_asked_once(tmp_path, capsys):
    rule = Counting()
    with ChatServer(rule) as server:
        config = make_campaign(tmp_path / "camp", server, concurrency=4)
        assert _judge(config) == 0
        want = expected(config)
        assert stored(config) == want
        assert sorted(set(want.values())) == [0, 1, 2]  # the rule's three labels all occur
        # SHARED citing seg-1 is written by three runs: one request
        assert sum(n for p, n in rule.answered.items() if SHARED in p) == 1
        assert server.calls == len(want) and max(rule.answered.values()) == 1
        out = capsys.readouterr().out
        assert f"{len(want)} units: 0 answered before (no call), {len(want)} new" in out
        # a rerun pays nothing; --citations all asks only the citations not asked before
        assert _judge(config) == 0
        assert server.calls == len(want)
        assert _judge(config, "--citations", "all") == 0
        every = expected(config, "all")
        assert stored(config) == every and server.calls == len(every)
        assert cli.main(["judges", str(config)]) == 0
        n = len(every)  # labels, topics, calls
        assert re.search(rf"^sup\s+model\s+stand-in\s+{n}\s+2\s+{n}\s",
                         capsys.readouterr().out, re.M)


@pytest.mark.timeout(60)
def test_a_support_pool_file_is_judged_from_the_cache(tmp_path, capsys):
    with ChatServer(rule_support) as server:
        config = make_campaign(tmp_path / "camp", server)
        pool = tmp_path / "pool.jsonl"
        assert cli.main(["pool", "cited", str(config), "-o", str(pool)]) == 0
        assert _judge(config, "--units", str(pool)) == 0
        assert stored(config) == expected(config)
        calls = server.calls
        data = yaml.safe_load(config.read_text())  # a second judge of the same model and server
        data["judges"]["again"] = data["judges"]["sup"]
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        assert cli.main(["judge", str(config), "--judge", "again", "--support"]) == 0
        assert server.calls == calls  # every answer taken from the store
        assert stored(config, "again") == expected(config)
        # a TSV pool names no sentences: a clear error
        tsv = tmp_path / "pool.tsv"
        assert cli.main(["pool", "cited", str(config), "-o", str(tsv)]) == 0
        capsys.readouterr()
        assert _judge(config, "--units", str(tsv)) == 1
        err = capsys.readouterr().err
        assert "no sentence text to judge" in err and "Traceback" not in err


@pytest.mark.timeout(120)
def test_a_killed_run_resumes_without_paying_twice(tmp_path):
    rule = Counting(hold_after=3)
    with ChatServer(rule) as server:
        server.fail(Fault.HANG, times=1000, when=rule.holding)
        config = make_campaign(tmp_path / "camp", server, concurrency=1)
        store = load_config(str(config), strict=False).store
        child = subprocess.Popen([sys.executable, "-m", "irbench", "judge", str(config),
                                  "--judge", "sup", "--support"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            assert server.wait_held(1, timeout=60)  # the 4th request: 3 answers journaled
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
        journaled = Path(journal_path(store)).read_text().splitlines()
        assert len(journaled) == 3 and sum(rule.answered.values()) == 3
        rule.hold_after = None  # the server answers again
        server.release()
        assert _judge(config) == 0
        want = expected(config)
        assert stored(config) == want
        assert sum(rule.answered.values()) == len(want)  # no answer paid twice
        assert max(rule.answered.values()) == 1
        assert not os.path.exists(journal_path(store))


@pytest.mark.timeout(90)
def test_the_written_file_scores_every_run_as_support_shared(tmp_path, capsys):
    with ChatServer(rule_support) as server:
        config = make_campaign(tmp_path / "camp", server)
        assert _judge(config) == 0
    out = tmp_path / "camp" / "model-support.jsonl"
    assert cli.main(["qrels", str(config), "--support", "--judge", "sup", "-o", str(out)]) == 0
    # the same labels written by hand, per run and sentence (kind support)
    want = expected(config)
    by_run = tmp_path / "camp" / "by-run.jsonl"
    by_run.write_text("".join(json.dumps({"topic_id": t, "run_id": run, "sentences": [
        {"text": text, "citations": [{"reference": cited[0],
                                      "support": want[t, text, cited[0]]}] if cited else []}
        for text, cited in sentences]}) + "\n"
        for run, topics in ANSWERS.items() for t, sentences in topics.items()))
    data = yaml.safe_load(config.read_text())
    data["collection"]["qrels"] = {
        "model": {"path": out.name, "kind": "support_shared"},
        "hand": {"path": by_run.name, "kind": "support"}}
    data["suites"] = {"answers": ["support_precision", "support_recall"]}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    capsys.readouterr()
    tables = []
    for name in ("model", "hand"):
        assert cli.main(["scores", str(config), "--qrels", name]) == 0
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1] and "runA" in tables[0]
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        assert store.qrels_judges()["model"][0] == ["sup"]


@pytest.mark.timeout(60)
def test_bad_answer_files_missing_segments_and_bad_answers_are_clear(tmp_path, capsys):
    with ChatServer(lambda body: "It depends.") as server:
        answers = {**ANSWERS, "runD": {"q1": [("A sentence.", ["seg-404"])]}}
        config = make_campaign(tmp_path / "camp", server, answers=answers)
        assert _judge(config) == 0  # unparsed answers are kept and counted
        captured = capsys.readouterr()
        assert "1 documents are not in the collection and were not judged: seg-404" \
            in captured.err
        units = len(expected(config))
        assert f"{units} units: 0 answered before (no call), {units} new answers" \
            in captured.out and f"{units} without a grade" in captured.out
        assert stored(config) == {}
        with Store(load_config(str(config), strict=False).store, read_only=True) as store:
            assert store.query("SELECT count(*) FROM model_answers")[1] == [(units,)]
        assert cli.main(["qrels", str(config), "--support", "-o", str(tmp_path / "x")]) == 1
        assert "no support labels" in capsys.readouterr().err
        # only missing segments: an error naming them
        config = make_campaign(tmp_path / "lost", server,
                               answers={"runD": {"q1": [("A sentence.", ["seg-404"])]}})
        assert _judge(config) == 1
        err = capsys.readouterr().err
        assert "none of the 1 cited segments is in the collection" in err and "seg-404" in err
        # a broken answer file: its line named
        (tmp_path / "camp" / "answers" / "runA.jsonl").write_text("{not json\n")
        config = tmp_path / "camp" / "campaign.yaml"
        assert _judge(config) != 0
        err = capsys.readouterr().err
        assert "runA.jsonl:1" in err and "Traceback" not in err
        # --support with pair targets, and a support judge without --support
        assert _judge(config, "--pairs", str(config)) == 1
        assert "--pool, --holes and --pairs give (topic, document) pairs" in \
            capsys.readouterr().err
        assert cli.main(["judge", str(config), "--judge", "sup", "--pairs", str(config)]) == 1
        assert "is a support judge: give --support" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_a_prompt_showing_the_answer_labels_each_run_s_sentence(tmp_path, capsys):
    rule = Counting()
    with ChatServer(rule) as server:
        folder = tmp_path / "camp"
        folder.mkdir()
        (folder / "answer.j2").write_text(
            "Answer: {{ answer }}\n" + support_task.SUPPORT)
        config = make_campaign(folder, server, prompt="answer.j2")
        assert _judge(config) == 0
        # SHARED is in three answers that differ: asked three times, labelled per run
        assert sum(n for p, n in rule.answered.items() if f"Statement: {SHARED}" in p) == 3
        loaded = load_config(str(config), strict=False)
        with Store(loaded.store, read_only=True) as store:
            c = store.answer_label_columns("support")
        got = {(r, q, int(p), s, ref) for r, q, p, s, ref in zip(
            c["run_id"], c["query_id"], c["sentence"], c["sentence_text"], c["reference"])}
        assert ("runB", "q1", 1, SHARED, "seg-1") in got and len(got) == sum(
            1 for topics in ANSWERS.values() for s in topics.values() for _, d in s if d)
        out = tmp_path / "per-run.jsonl"
        assert cli.main(["qrels", str(config), "--support", "-o", str(out)]) == 0
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        run_b = next(x for x in lines if x["run_id"] == "runB")
        assert [s["text"] for s in run_b["sentences"]][1:] == [SHARED, "It rains a lot."]
        assert run_b["sentences"][0] == {"text": "", "citations": []}
