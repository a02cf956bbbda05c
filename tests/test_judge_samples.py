"""Several samples of each request with a vote, for the relevance and support judges (issue 40,
umbrela's open request): ``samples: n`` asks each request n times (sample i > 0 keyed apart in
the request's sha256), every sample's answer is kept in ``model_answers`` and journalled on its
own, and the label recorded is the vote (``majority`` or ``mean``) of the samples that parsed.
Against the stand-in chat server (tests/chat_server.py), answering the n-th asking of the same
prompt by a rule."""

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
from chat_server import SUPPORT_PROMPT, SUPPORT_WORDS, ChatServer, Fault, last_user_text
from test_judge_support import expected, make_campaign, stored

from irbench import cli
from irbench.config import load_config
from irbench.judges.journal import journal_path
from irbench.judges.prompts import request_sha256, vote_sha256
from irbench.judges.votes import vote
from irbench.store import Store

# docno: the grades its three askings answer (None: an answer without a grade), in the order
# asked; the vote is over the set, so the order the samples arrive in does not matter
GRADES = {
    "d1": [3, 1, 1],  # majority 1, mean 5/3 -> 2
    "d2": [0, 2, 3],  # majority: a tie -> the lower, 0; mean 5/3 -> 2
    "d3": [2, None, 1],  # one sample unparsed: majority of (2, 1) a tie -> 1; mean 1.5 -> 1
    "d4": [None, None, None],  # none parsed: no label
    "d5": [2, 2, 2],
}
MAJORITY = {"d1": 1, "d2": 0, "d3": 1, "d5": 2}
MEAN = {"d1": 2, "d2": 2, "d3": 1, "d5": 2}
DOC_MARK = re.compile(r"\[\[doc:(d\d)\]\]")


class Askings:
    """A rule answering the n-th asking of a prompt (its last user message) by ``answer(text,
    n)``, counting the askings; with ``hold_after`` (None: never) every request after so many
    answers is held (Fault.HANG) until released."""

    def __init__(self, answer, hold_after: int | None = None):
        self.answer, self.hold_after = answer, hold_after
        self.asked: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        text = last_user_text(body)
        with self.lock:
            n = self.asked[text]
            self.asked[text] += 1
        return self.answer(text, n)

    def holding(self, body: dict) -> bool:
        with self.lock:
            return self.hold_after is not None and sum(self.asked.values()) >= self.hold_after


def grade_answer(text: str, n: int) -> str:
    grade = GRADES[DOC_MARK.search(text).group(1)][n % 3]
    return "I cannot tell." if grade is None else f"##final score: {grade}"


def relevance_campaign(folder: Path, server: ChatServer, **judges: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "topics.tsv").write_text("q1\tharbour cranes\n")
    (folder / "docs.trec").write_text("".join(
        f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\nCranes of document {d}. [[doc:{d}]]\n</TEXT>\n"
        "</DOC>\n" for d in GRADES))
    (folder / "pairs.txt").write_text("".join(f"q1 {d}\n" for d in GRADES))
    (folder / "run.txt").write_text("".join(f"q1 Q0 {d} {i + 1} {9 - i} r\n"
                                            for i, d in enumerate(GRADES)))
    base = {"base_url": server.base_url, "model": "stand-in", "backoff": 0, "retries": 0,
            "timeout": 20, "concurrency": 1}
    (folder / "seed.qrels").write_text("q1 0 d5 2\n")
    config = {"name": "samples", "collection": {"topics": "topics.tsv",
                                                "documents": "docs.trec",
                                                "qrels": {"seed": "seed.qrels"}},
              "suites": {"main": ["AP"]},
              "systems": [{"name": "r", "run": "run.txt"}],
              "judges": {name: {**base, **more} for name, more in judges.items()}}
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def judge_pairs_cli(config: Path, name: str) -> int:
    return cli.main(["judge", str(config), "--judge", name, "--pairs",
                     str(config.parent / "pairs.txt")])


def query(config: Path, sql: str, *params) -> list[tuple]:
    with Store(load_config(str(config), strict=False).store, read_only=True) as store:
        return store.query(sql, list(params))[1]


def labels_of(config: Path, judge: str) -> dict[str, int]:
    return dict(query(config, "SELECT doc_id, relevance FROM judgments WHERE judge = ?", judge))


SAMPLED = {"samples": 3, "temperature": 0.7}


@pytest.mark.timeout(60)
def test_relevance_samples_vote_majority_and_mean_each_sample_kept(tmp_path, capsys):
    rule = Askings(grade_answer)
    with ChatServer(rule) as server:
        config = relevance_campaign(tmp_path / "camp", server, maj=SAMPLED,
                                    avg={**SAMPLED, "vote": "mean"})
        assert judge_pairs_cli(config, "maj") == 0
        captured = capsys.readouterr()
        assert "5 pairs: 0 answered before (no call), 15 new answers" in captured.out
        assert "4 without a grade" in captured.out  # d3's one sample and d4's three
        assert "1 pairs got no label" in captured.err
        assert server.calls == 15 and set(rule.asked.values()) == {3}
        assert labels_of(config, "maj") == MAJORITY
        # every sample's answer kept, with its own request; the vote's row says it is one
        answers = query(config, "SELECT doc_id, prompt_sha256, answer FROM model_answers")
        assert len(answers) == 15 and len({a[1] for a in answers}) == 15
        for doc, sha, note in query(config, "SELECT doc_id, prompt_sha256, answer FROM "
                                    "judgments WHERE judge = 'maj'"):
            got = json.loads(note)
            assert got["vote"] == "majority" and len(got["requests"]) == 3
            assert sha == vote_sha256(got["requests"], "majority")
            assert sorted(got["labels"], key=str) == sorted(GRADES[doc], key=str)
            assert vote(got["labels"], "majority") == MAJORITY[doc]
            assert {r for r, in query(config, "SELECT prompt_sha256 FROM model_answers "
                                      "WHERE doc_id = ?", doc)} == set(got["requests"])
        # a second judge of the same model and server voting the mean: answers reused
        assert judge_pairs_cli(config, "avg") == 0
        assert server.calls == 15 and labels_of(config, "avg") == MEAN
        # a rerun asks nothing and records nothing new
        before = query(config, "SELECT count(*) FROM judgments")
        capsys.readouterr()
        assert judge_pairs_cli(config, "maj") == 0
        assert "5 pairs: 15 answered before (no call), 0 new answers" in \
            capsys.readouterr().out
        assert server.calls == 15 and query(config, "SELECT count(*) FROM judgments") == before
        assert cli.main(["judges", str(config)]) == 0
        out = capsys.readouterr().out
        assert re.search(r"^maj\s+model\s+stand-in\s+4\s+1\s+15\s+15\s.*\s3$", out, re.M), out
        # the mean judge paid nothing: the answers are kept once, as the first judge's
        assert re.search(r"^avg\s+model\s+stand-in\s+4\s+1\s+0\s.*\s3$", out, re.M), out
        qrels = tmp_path / "maj.qrels"
        assert cli.main(["qrels", str(config), "--judge", "maj", "-o", str(qrels)]) == 0
        assert sorted(qrels.read_text().split("\n")[:-1]) == sorted(
            f"q1 0 {d} {g}" for d, g in MAJORITY.items())


@pytest.mark.timeout(60)
def test_one_sample_is_the_judge_without_samples_byte_for_byte(tmp_path):
    rule = Askings(lambda text, n: grade_answer(text, 0))
    with ChatServer(rule) as server:
        rows = []
        for name, judge in (("plain", {}), ("one", {"samples": 1, "vote": "mean"})):
            config = relevance_campaign(tmp_path / name, server, j=judge)
            assert judge_pairs_cli(config, "j") == 0
            rows.append((query(config, "SELECT pool, query_id, doc_id, relevance, source, "
                               "judge, judge_kind, model, prompt_sha256, answer FROM "
                               "judgments ORDER BY doc_id"),
                         query(config, "SELECT model, endpoint, prompt_sha256, query_id, "
                               "doc_id, judge, answer, relevance, requests FROM "
                               "model_answers ORDER BY doc_id"),
                         query(config, "SELECT settings FROM judges")))
        assert rows[0] == rows[1] and len(rows[0][0]) == 4 and len(rows[0][1]) == 5
        assert '"samples"' not in rows[0][2][0][0]
        # the request sha256 is the one irbench keyed before samples: messages and settings
        bodies = {DOC_MARK.search(last_user_text(b)).group(1): b for b in server.requests}
        for doc, sha in ((r[2], r[8]) for r in rows[0][0]):
            assert sha == request_sha256(bodies[doc]["messages"], 0.0, 100)
            assert sha == hashlib.sha256(json.dumps(
                {"messages": bodies[doc]["messages"], "temperature": 0.0, "max_tokens": 100},
                sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
        assert {r[9] for r in rows[0][0]} <= {f"##final score: {g}" for g in range(4)}
        # the same judge now with three samples: sample 0 is found in the store, 2 more asked
        calls = server.calls
        data = yaml.safe_load((tmp_path / "plain" / "campaign.yaml").read_text())
        data["judges"]["j"].update(samples=3)
        (tmp_path / "plain" / "campaign.yaml").write_text(yaml.safe_dump(data))
        assert judge_pairs_cli(tmp_path / "plain" / "campaign.yaml", "j") == 0
        assert server.calls == calls + 2 * len(GRADES)


def support_answer(text: str, n: int) -> str:
    """The support rule's label L among three askings answering {Full, No, L} (in turn)."""
    found = SUPPORT_PROMPT.search(text)
    from chat_server import support_of
    label = support_of(found.group(1), found.group(2))
    return SUPPORT_WORDS[(2, 0, label)[n % 3]]


def support_votes(config: Path, how: str) -> dict:
    """The rule's labels as the vote of {full, none, the rule's label} gives them."""
    return {unit: vote([2, 0, label], how) for unit, label in expected(config).items()}


def _support(config: Path) -> int:
    return cli.main(["judge", str(config), "--judge", "sup", "--support"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["majority", "mean"])
def test_support_samples_vote(tmp_path, capsys, how):
    rule = Askings(support_answer)
    with ChatServer(rule) as server:
        config = make_campaign(tmp_path / "camp", server, samples=3, vote=how,
                               temperature=0.5)
        assert _support(config) == 0
        want = support_votes(config, how)
        assert stored(config) == want
        assert len(set(want.values())) > 1 or how == "mean"
        units = len(want)
        assert server.calls == 3 * units and set(rule.asked.values()) == {3}
        assert f"{units} units: 0 answered before (no call), {3 * units} new" in \
            capsys.readouterr().out
        notes = query(config, "SELECT answer FROM answer_labels")
        assert all(json.loads(n)["vote"] == how for n, in notes) and len(notes) == units
        assert _support(config) == 0  # a rerun asks nothing, records nothing
        assert server.calls == 3 * units and len(query(config, "SELECT * FROM answer_labels")
                                                 ) == units


@pytest.mark.timeout(120)
def test_a_killed_sampled_run_resumes_paying_no_sample_twice(tmp_path):
    rule = Askings(support_answer, hold_after=4)
    with ChatServer(rule) as server:
        server.fail(Fault.HANG, times=1000, when=rule.holding)
        config = make_campaign(tmp_path / "camp", server, concurrency=1, samples=3,
                               temperature=0.5)
        store = load_config(str(config), strict=False).store
        child = subprocess.Popen([sys.executable, "-m", "irbench", "judge", str(config),
                                  "--judge", "sup", "--support"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            assert server.wait_held(1, timeout=60)  # the 5th request: 4 samples journaled
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
        journaled = [json.loads(x) for x in Path(journal_path(store)).read_text().splitlines()]
        assert [x["sample"] for x in journaled] == [0, 1, 2, 0]
        assert sum(rule.asked.values()) == 4
        rule.hold_after = None
        server.release()
        assert _support(config) == 0
        want = support_votes(config, "majority")
        assert stored(config) == want
        assert sum(rule.asked.values()) == 3 * len(want)  # no sample paid twice
        assert set(rule.asked.values()) == {3}
        assert not os.path.exists(journal_path(store))


@pytest.mark.timeout(60)
def test_progress_counts_every_sample_request(tmp_path):
    from irbench.documents import open_documents
    from irbench.judges.run import judge
    from irbench.judges.targets import PairTargets

    with ChatServer(Askings(grade_answer)) as server:
        config = relevance_campaign(tmp_path / "camp", server, maj=SAMPLED)
        loaded = load_config(str(config), strict=False)
        seen: list[tuple[int, int]] = []
        with Store(loaded.store) as store, open_documents(loaded.documents) as documents:
            summary = judge(loaded, loaded.judges["maj"],
                            PairTargets(str(config.parent / "pairs.txt")), store=store,
                            documents=documents, max_calls=7,
                            progress=lambda done, total: seen.append((done, total)))
        assert seen[-1] == (7, 15) and {t for _, t in seen} == {15}  # requests, not pairs
        assert server.calls == 7 and summary.budget_left == 8 and summary.asked == 5
        with Store(loaded.store, read_only=True) as store:
            assert store.judge_usage("maj")[0] == 7  # the budget counts every sample
        # the pairs whose three samples came (d1, d2) are labelled; d3 waits for its third
        assert labels_of(config, "maj") == {d: MAJORITY[d] for d in ("d1", "d2")}
        assert judge_pairs_cli(config, "maj") == 0 and server.calls == 15
        assert labels_of(config, "maj") == MAJORITY


@pytest.mark.timeout(240)
def test_judge_nuggets_shows_a_progress_bar(tmp_path, monkeypatch):
    import contextlib

    from chat_server import rule_nuggets
    from test_judge_nuggets import _campaign
    from test_judge_nuggets_cli import make_config

    from irbench.cli import judge_nuggets

    shown: list[tuple[int, int, str]] = []
    units: list[str] = []

    @contextlib.contextmanager
    def bar(unit):
        units.append(unit)
        yield lambda done, total, what: shown.append((done, total, what))

    monkeypatch.setattr(judge_nuggets, "progress_bar", bar)
    campaign = _campaign()
    with ChatServer(rule_nuggets(campaign[4])) as server:
        config = make_config(tmp_path / "camp", server)
        assert cli.main(["judge", str(config), "--judge", "nug", "--nuggets"]) == 0
        calls = server.calls
    assert units == ["request"]
    steps = {what for _, _, what in shown}
    assert steps == {"nug create", "nug importance", "nug assign"}
    # each round's bar ends full; together they count every request made
    ends = [shown[i] for i in range(len(shown))
            if i + 1 == len(shown) or shown[i + 1][0] <= shown[i][0]]
    assert all(done == total for done, total, _ in ends)
    assert sum(total for _, total, _ in ends) == calls


def test_a_nugget_creator_s_default_max_tokens_fits_its_list():
    from irbench.judges.spec import build_judge

    def spec(**value):
        problems: list = []
        made = build_judge("j", {"base_url": "http://127.0.0.1:9/v1", "model": "m", **value},
                           lambda path, reason: problems.append(reason), lambda p, v: None)
        assert problems == []
        return made

    # 30 nuggets of some 20 words: ~800 tokens of text and ~150 of list syntax, with room
    assert spec(task="nugget_create").max_tokens == 2048
    assert spec(task="nugget_create", max_tokens=512).max_tokens == 512  # the config's
    for task in ("relevance", "support", "nugget_importance", "nugget_assign"):
        assert spec(task=task).max_tokens == 100  # a label's, as before
    assert spec().settings() == spec(max_tokens=100).settings()
