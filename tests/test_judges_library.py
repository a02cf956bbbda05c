"""The judging pipeline as library calls (issue 36): ``judge(config, spec, targets, ...)`` does
what ``irbench judge`` does, the pool being judged is loaded by ``load_state`` alone, the run
table and qrels sets come from the config (a missing run file refused where a pool numbers
its candidates, left out for the holes of a qrels set), ``--rule`` offers the rules' registry,
and a judge task is one registered value (a toy task registered here judges end to end)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields

import httpx
import pytest
import yaml
from campaigns import simulated_with_judge
from chat_server import ChatServer, rule_simulated

from irbench import cli
from irbench.config import load_config
from irbench.documents import open_documents
from irbench.errors import ConfigError, JudgeError, MissingRunsError
from irbench.judges import tasks
from irbench.judges.client import Caller
from irbench.judges.prompts import Prompt, Rendering, request_sha256
from irbench.judges.run import judge
from irbench.judges.spec import JudgeSpec
from irbench.judges.targets import HoleTargets, PairTargets, PoolTargets
from irbench.judgments import RULES
from irbench.pooling import load_state
from irbench.store import Store


@pytest.fixture
def server():
    with ChatServer(rule_simulated, api_key="sk-test-123") as s:
        yield s


@pytest.fixture
def campaign(tmp_path, server, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STANDIN_KEY", "sk-test-123")
    judge = {"base_url": server.base_url, "model": "stand-in-8b", "api_key_env": "STANDIN_KEY",
             "concurrency": 4, "backoff": 0, "retries": 2}
    return simulated_with_judge(tmp_path / "camp", {"standin": judge}, groups=2, topics=4,
                                depth=5, seed=5)


def _stored(config) -> list[tuple]:
    with Store(str(config.parent / "campaign.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT query_id, doc_id, relevance, judge, pool FROM judgments "
                              "WHERE judge_kind = 'model' ORDER BY 1, 2")
    return rows


@pytest.mark.timeout(120)
def test_judge_is_a_library_call_and_the_command_prints_what_it_returns(campaign, server,
                                                                        capsys):
    """The pool being judged is loaded by load_state; judge() judges what it handed out
    (its whole plan for a static strategy), the answers kept as the command keeps them."""
    assert cli.main(["pool", "start", str(campaign), "--name", "p", "--param", "k=3"]) == 0
    config = load_config(str(campaign), strict=False)
    with Store(config.store) as store, open_documents(config.documents) as documents:
        assert load_state(store, "nosuchpool", config.run_table()) is None
        state = load_state(store, "p", config.run_table())
        wanted = state.model_targets()
        seen: list[tuple[int, int]] = []
        summary = judge(config, config.judges["standin"], PoolTargets("p"), store=store,
                        documents=documents, progress=lambda d, t: seen.append((d, t)))
    assert wanted and summary.asked == summary.answered == server.calls == len(wanted)
    assert seen[-1] == (len(wanted), len(wanted)) and summary.journal_notes == []
    rows = _stored(campaign)
    assert [(q, d) for q, d, *_ in rows] == wanted and {r[4] for r in rows} == {"p"}
    capsys.readouterr()
    # the command is the same call: every answer from the store now, none asked again
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--pool", "p"]) == 0
    assert (f"judge 'standin': {len(wanted)} pairs: {len(wanted)} answered before (no call)"
            in capsys.readouterr().out)
    assert server.calls == len(wanted) and _stored(campaign) == rows


@pytest.mark.timeout(120)
def test_topics_outside_the_topic_file_are_refused_before_any_call(campaign, server,
                                                                   tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("nosuchtopic D1\n")
    config = load_config(str(campaign), strict=False)
    with Store(config.store) as store, open_documents(config.documents) as documents:
        with pytest.raises(JudgeError, match=r"1 topics are not in .*: nosuchtopic"):
            judge(config, config.judges["standin"], PairTargets(str(pairs)), store=store,
                  documents=documents)
        with pytest.raises(JudgeError, match=r"no pool 'nope' in .*irbench pool start"):
            judge(config, config.judges["standin"], PoolTargets("nope"), store=store,
                  documents=documents)
    assert server.calls == 0


@pytest.mark.timeout(180)
def test_a_missing_run_file_is_refused_for_a_pool_and_left_out_for_holes(campaign, server,
                                                                          capsys):
    """The one rule: a table that numbers a pool's candidates (pool commands, the desk,
    judge --pool) refuses a missing run; the holes of a qrels set are what the present runs
    retrieved."""
    assert cli.main(["pool", "start", str(campaign), "--name", "p"]) == 0
    run = campaign.parent / "runs" / "groupB-2.txt"
    run.unlink()
    capsys.readouterr()
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--pool", "p"]) == 1
    assert "run files missing: " in capsys.readouterr().err
    assert cli.main(["pool", "status", str(campaign), "--name", "p"]) == 1
    assert "run files missing: " in capsys.readouterr().err
    config = load_config(str(campaign), strict=False)
    with pytest.raises(MissingRunsError):
        config.run_table()
    assert "groupB-2" not in config.run_table("drop").runs
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--holes", "official",
                     "--depth", "3"]) == 0
    assert server.calls > 0 and "failed" in capsys.readouterr().out
    assert cli.main(["judge", str(campaign), "--judge", "standin", "--holes", "offical"]) == 1
    assert "did you mean 'official'?" in capsys.readouterr().err


def test_rule_choices_are_the_rules_registry():
    parser = cli.build_parser(cli.COMMAND_MODULES)
    qrels = next(a for a in parser._subparsers._group_actions[0].choices["qrels"]._actions
                 if a.dest == "rule")
    assert qrels.choices is RULES and list(RULES)[0] == "majority"


# ---- a judge task is one registered value ------------------------------------------------


@dataclass(frozen=True)
class YesNoContext:
    """The toy task's template names: the question and the document's text."""

    question: str
    text: str

    @classmethod
    def of(cls, topic, docno: str, doc_title: str, text: str, limit: int) -> YesNoContext:
        return cls(question=topic.get("title", ""), text=text[:limit])

    def names(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _yes_no(rendering: Rendering, answer: str, messages) -> int | None:
    found = re.findall(r"\b(yes|no)\b", answer.lower())
    return None if not found else int(found[-1] == "yes")


@pytest.fixture
def yes_no():
    task = tasks.register(tasks.Task(
        name="yesno", description="does the document answer the question", unit=tasks.PAIR,
        labels=(0, 1), context=YesNoContext, context_of=YesNoContext.of,
        sample=YesNoContext(question="a sample question", text=""), parse=_yes_no))
    yield task
    del tasks.TASKS["yesno"]


@pytest.mark.timeout(120)
def test_a_toy_task_registered_here_judges_end_to_end(campaign, yes_no, tmp_path):
    """One module's worth (a context dataclass and a parser) plus one register call: the
    config takes 'task: yesno', its templates see the task's names, its parser reads the
    answers (through an httpx.MockTransport), and its requests are keyed apart from
    relevance's."""
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["toy"] = {**data["judges"]["standin"], "task": "yesno",
                             "prompt": "toy.j2", "labels": [0, 1]}
    (campaign.parent / "toy.j2").write_text("Does this answer '{{ question }}'? {{ text }}")
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_config(str(campaign), strict=False)
    spec = config.judges["toy"]
    assert spec.task == "yesno" and json.loads(spec.settings())["task"] == "yesno"
    assert "task" not in json.loads(config.judges["standin"].settings())  # stores unchanged
    asked: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        asked.append(body)
        reply = "yes" if len(asked) % 2 else "Hmm. no"
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}],
                                         "usage": {"prompt_tokens": 3,
                                                   "completion_tokens": 1}})

    pairs = tmp_path / "pairs.txt"
    qrels = (campaign.parent / "qrels.txt").read_text().splitlines()[:4]
    pairs.write_text("".join(f"{q} {d}\n" for q, _, d, _ in map(str.split, qrels)))
    with Store(config.store) as store, open_documents(config.documents) as documents:
        summary = judge(config, spec, PairTargets(str(pairs)), store=store,
                        documents=documents,
                        caller=Caller(spec, transport=httpx.MockTransport(answer)))
    assert summary.answered == 4 and summary.unparsed == 0
    assert all(b["messages"][-1]["content"].startswith("Does this answer '") for b in asked)
    assert sorted(r[2] for r in _stored(campaign)) == [0, 0, 1, 1]
    messages = asked[0]["messages"]
    assert request_sha256(messages, 0.0, 100, "yesno") != request_sha256(messages, 0.0, 100)


def test_the_config_refuses_an_unknown_task_naming_the_close_match(campaign):
    data = yaml.safe_load(campaign.read_text())
    data["judges"]["standin"]["task"] = "relevanse"
    campaign.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError, match=r"judges\.standin\.task.*unknown task 'relevanse' "
                                          r"\(tasks: relevance, support[^;]*; did you mean 'relevance'\?\)"):
        load_config(str(campaign), strict=False)


def test_a_task_is_registered_once_and_looked_up_by_name():
    with pytest.raises(ValueError, match="registered twice"):
        tasks.register(tasks.TASKS["relevance"])
    with pytest.raises(JudgeError, match="did you mean 'relevance'"):
        tasks.get_task("relevanc")
    spec = JudgeSpec(name="j", base_url="http://127.0.0.1:9/v1", model="m")
    assert spec.task == "relevance" and tasks.get_task(spec.task).parse(
        Prompt(user="{{ text }}").compile(), "##final score: 2", []) == 2
    assert HoleTargets("official").depth == 10
