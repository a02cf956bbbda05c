"""Simulated answers (``irbench simulate OUT --answers``, :mod:`irbench.answers.simulated`): the
same seed writes the same bytes, the files read back through irbench's own readers, support
labels and nugget scores follow the simulated relevance and quality, the written config runs,
and the bundled answer demo (configs/rag.yaml over runs/rag/) is what the command writes and
goes through check, run, compare, eval and report."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from irbench import cli
from irbench.answers import read_answers
from irbench.answers.simulated import AnswerSpec, simulate_answers, write_answers_config
from irbench.config import load_config
from irbench.errors import SimulationError
from irbench.judgments.nuggets import read_assignments, read_nuggets
from irbench.judgments.support import read_support
from irbench.runner import run_campaign
from irbench.simulate import CampaignSpec, simulate, simulated_relevance
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent
SMALL = CampaignSpec(groups=3, runs_per_group=1, topics=6, depth=30, collection_size=5000,
                     seed=11)


def _simulated(folder: Path, spec: CampaignSpec = SMALL, answers: AnswerSpec = AnswerSpec()):
    campaign = simulate(spec, folder)
    result = simulate_answers(campaign, answers)
    write_answers_config(result, folder / "campaign.yaml")
    return result


def _answer_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _docnos(path: Path) -> set[str]:
    return set(re.findall(r"<DOCNO> (\S+) </DOCNO>", gzip.decompress(path.read_bytes()).decode()))


def _texts(path: Path) -> dict[str, str]:
    return {docno: " ".join(text.split()) for docno, text in re.findall(
        r"<DOCNO> (\S+) </DOCNO>(.*?)</DOC>", gzip.decompress(path.read_bytes()).decode(), re.S)}


@pytest.mark.timeout(120)
def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_answers(tmp_path):
    one = _answer_files(_simulated(tmp_path / "one").campaign.out_dir)
    two = _answer_files(_simulated(tmp_path / "two").campaign.out_dir)
    assert one.keys() == two.keys()
    assert [k for k in one if one[k] != two[k]] == []
    assert {"answers.json", "judgments/support.jsonl", "judgments/nuggets.jsonl",
            "judgments/assignments.jsonl", "answers/groupA-rag1.jsonl"} <= set(one)
    other = _simulated(tmp_path / "other", answers=AnswerSpec(seed=12)).campaign.out_dir
    three = _answer_files(other)
    for name in ("judgments/support.jsonl", "answers/groupA-rag1.jsonl"):
        assert three[name] != one[name], name
    for name in ("qrels.txt", "runs/groupA-1.txt", "documents.sgml.gz"):  # the campaign's own
        assert three[name] == one[name], name
    assert json.loads(three["answers.json"])["seed"] == 12
    assert json.loads(one["answers.json"])["seed"] == SMALL.seed


def test_an_answer_spec_out_of_range_names_every_problem():
    with pytest.raises(SimulationError) as caught:
        AnswerSpec(systems=0, references=21)
    assert "systems must be in 1.." in str(caught.value)
    assert "references must be in 1..20 (got 21)" in str(caught.value)
    with pytest.raises(SimulationError, match="must be an integer"):
        AnswerSpec(systems=True)


@pytest.mark.timeout(120)
def test_the_files_read_back_without_problems_or_warnings(tmp_path):
    result = _simulated(tmp_path, answers=AnswerSpec(systems=4))
    out = result.campaign.out_dir
    known = _docnos(out / "documents.sgml.gz")
    topics = [t.query_id for t in result.campaign.topics]
    formats = set()
    for system in result.systems:
        run = read_answers(str(system.path), known_ids=known, topics=topics, name=system.name)
        assert run.warnings == () and run.run_id == system.name
        assert run.format == system.format and run.topic_ids == sorted(topics)
        formats.add((system.format, system.citations))
        for answer in run.answers():
            assert 3 <= len(answer.sentences) <= 8 and len(answer.references) == 20
            assert all(len(s.citations) <= 3 for s in answer.sentences)
            assert all(c in answer.references for s in answer.sentences for c in s.citations)
    assert formats == {("rag24", "indexes"), ("rag25", "indexes"), ("rag25", "ids")}
    # a citing sentence restates its first cited document's sentence on the topic
    texts, restated = _texts(out / "documents.sgml.gz"), 0
    for answer in read_answers(str(result.systems[0].path)).answers():
        for sentence in answer.sentences:
            if sentence.citations:
                said = re.sub(r"^(According to one source, |One report states that |It was "
                              r"reported that |A source notes that |Several sources agree that "
                              r"|Reports confirm that |Sources describe how )", "", sentence.text)
                assert said != sentence.text
                assert said.lower() in texts[sentence.citations[0]].lower(), sentence
                restated += 1
    assert restated >= 10
    support = read_support(str(result.support_path))
    assert support.warnings == ()
    assert sorted(support.runs) == sorted(s.name for s in result.systems)
    assert set(support.label.tolist()) <= {-1, 0, 1, 2} and (support.label == -1).any()
    nuggets = read_nuggets(str(result.nuggets_path))
    assert nuggets.warnings == () and len(nuggets.topics) == len(topics)
    counts = np.diff(nuggets.offsets)
    assert counts.min() >= 6 and counts.max() <= 12
    for t in range(len(topics)):  # some vital nuggets in every topic
        assert nuggets.vital[nuggets.offsets[t]:nuggets.offsets[t + 1]].any()
    assigned = read_assignments(str(result.assignments_path))
    assert assigned.warnings == () and len(assigned) == counts.sum() * len(result.systems)
    assert set(assigned.score.tolist()) == {0.0, 0.5, 1.0}


@pytest.mark.timeout(120)
def test_support_labels_follow_the_cited_documents_grade(tmp_path):
    result = _simulated(tmp_path, answers=AnswerSpec(systems=6))
    spec = result.campaign.spec
    _, pool = simulated_relevance(spec)
    grade = {(t.query_id, f"SIM-{d:08d}"): g
             for t, cand, grades in zip(result.campaign.topics, pool.candidates, pool.grades)
             for d, g in zip(cand.tolist(), grades.tolist())}
    by_grade: dict[int, list[int]] = {0: [], 1: [], 2: []}
    for line in result.support_path.read_text().splitlines():
        obj = json.loads(line)
        for sentence in obj["sentences"]:
            for citation in sentence["citations"]:
                if citation["support"] >= 0:
                    by_grade[grade[obj["topic_id"], citation["reference"]]].append(
                        citation["support"])
    mean = {g: np.mean(labels) for g, labels in by_grade.items()}
    assert all(len(labels) >= 20 for labels in by_grade.values()), {
        g: len(v) for g, v in by_grade.items()}
    assert mean[0] < 0.5 < mean[1] < mean[2], mean
    assert np.mean(np.array(by_grade[2]) == 2) > 0.7
    assert np.mean(np.array(by_grade[0]) == 0) > 0.7


@pytest.mark.timeout(300)
def test_the_written_config_runs_and_better_systems_score_higher(tmp_path):
    spec = CampaignSpec(groups=3, runs_per_group=2, topics=20, depth=50, collection_size=20000,
                        seed=5)
    result = _simulated(tmp_path, spec, AnswerSpec(systems=6))
    config = load_config(str(tmp_path / "campaign.yaml"))
    kinds = {s.name: s.kind for s in config.systems}
    assert sorted(kinds.values()) == ["answers"] * 6 + ["run"] * 6
    report = run_campaign(config, workers=1)
    assert report.failures == []
    with Store(config.store, read_only=True) as store:
        rows = store.means()[1]
    means = {(s, q, m): v for s, q, m, v, _ in rows}
    quality = {s.name: s.quality for s in result.systems}
    ranked = sorted(quality, key=quality.get)
    for qrels, measure in (("support", "support_precision"), ("support", "support_recall"),
                           ("nuggets", "nugget_score"),
                           ("nuggets", "nugget_score(importance=vital,strict=true)"),
                           ("official", "nDCG@10")):
        got = [means[name, qrels, measure] for name in ranked]
        # the best system beats the worst, and quality and score agree in rank (Spearman)
        assert got[-1] > got[0], (measure, dict(zip(ranked, got)))
        rho = np.corrcoef(np.arange(len(got)), np.argsort(np.argsort(got)))[0, 1]
        assert rho > 0.5, (measure, dict(zip(ranked, got)))
    for run in result.campaign.runs:  # ranked runs: scored on the document qrels only
        assert (run.name, "official", "AP") in means
        assert (run.name, "support", "support_precision") not in means


@pytest.mark.timeout(60)
def test_config_without_answers_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["simulate", str(tmp_path / "x"), "--config", str(tmp_path / "c.yaml")]) == 1
    assert "--config goes with --answers" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert cli.main(["simulate", str(tmp_path / "y"), "--topics", "3", "--answers", "0"]) == 1
    assert "systems must be in 1.." in capsys.readouterr().err
    assert not (tmp_path / "y").exists()  # the answer spec is checked before anything is written


@pytest.mark.timeout(120)
def test_simulate_answers_writes_a_config_in_the_campaign_folder_by_default(tmp_path, capsys):
    out = tmp_path / "c"
    assert cli.main(["simulate", str(out), "--groups", "2", "--topics", "4", "--depth", "20",
                     "--collection-size", "3000", "--answers", "2"]) == 0
    assert "irbench run" in capsys.readouterr().err
    text = (out / "campaign.yaml").read_text()
    assert "(in this folder) irbench simulate . --groups 2 --topics 4 --depth 20 " \
           "--collection-size 3000 --answers 2\n" in text
    config = load_config(str(out / "campaign.yaml"))
    assert [q.name for q in config.qrels] == ["official", "support", "nuggets"]
    assert [q.kind for q in config.qrels][1:] == ["support", "nuggets"]
    assert {s.name for s in config.systems if s.kind == "answers"} == {"groupA-rag1",
                                                                       "groupB-rag1"}
    assert config.documents is not None


# ---- the bundled demo --------------------------------------------------------------------------

def _bundled_command() -> list[str]:
    line = next(line for line in (REPO / "configs" / "rag.yaml").read_text().splitlines()
                if "(in this folder) irbench simulate" in line)
    return line.split("irbench ", 1)[1].split()


@pytest.mark.timeout(120)
def test_the_bundled_demo_is_what_the_simulate_command_writes(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path / "configs")
    args = _bundled_command()
    assert args[:2] == ["simulate", "../runs/rag"] and "--answers" in args
    assert cli.main(args) == 0
    assert (tmp_path / "configs" / "rag.yaml").read_bytes() == \
        (REPO / "configs" / "rag.yaml").read_bytes()
    bundled = _answer_files(REPO / "runs" / "rag")
    regenerated = _answer_files(tmp_path / "runs" / "rag")
    assert set(bundled) <= set(regenerated)
    assert [name for name in bundled if bundled[name] != regenerated[name]] == []
    assert len(bundled) >= 19 and sum(map(len, bundled.values())) < 600_000  # small


def _copy_rag(folder: Path) -> Path:
    (folder / "configs").mkdir()
    shutil.copy(REPO / "configs" / "rag.yaml", folder / "configs")
    shutil.copytree(REPO / "runs" / "rag", folder / "runs" / "rag",
                    ignore=shutil.ignore_patterns("*.duckdb*"))
    return folder / "configs" / "rag.yaml"


@pytest.mark.timeout(300)
def test_the_bundled_demo_checks_runs_compares_evaluates_and_reports(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    config = str(_copy_rag(tmp_path))
    assert cli.main(["check", config]) == 0
    assert "ok: 12 systems, 3 qrels sets" in capsys.readouterr().out
    assert cli.main(["run", "--workers", "1", config]) == 0
    out = capsys.readouterr()
    assert "0 failed" in out.err and "by AP" in out.out
    assert cli.main(["compare", config, "--qrels", "support", "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert "support_precision" in json.dumps(compared)
    runs = tmp_path / "runs" / "rag"
    assert cli.main(["eval", "-R", "support", str(runs / "judgments" / "support.jsonl"),
                     str(runs / "answers" / "groupA-rag2.jsonl")]) == 0
    evaluated = capsys.readouterr().out
    assert re.search(r"^support_precision\s+all\s+0\.\d{4}$", evaluated, re.MULTILINE)
    assert cli.main(["report", config, "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "index.html").is_file()
