"""irbench.simulate: seeded campaigns that read cleanly, pool exactly, and rank systems sensibly."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

import irbench
from irbench.errors import OutputError, SimulationError
from irbench.simulate import CampaignSpec, SimulationResult, group_name, simulate

SMALL = CampaignSpec(groups=3, runs_per_group=2, topics=6, depth=50, pool_depth=5,
                     collection_size=5_000, seed=7)
RUN_LINE = re.compile(r"(\d+) Q0 (SIM-\d{8}) (\d+) (-?\d+\.\d{4}) (group[A-Z]+-\d+)")
TOPIC_BLOCK = re.compile(
    r"<top>\n<num> Number: (\d+)\n<title> ([a-z]+(?: [a-z]+)+)\n"
    r"<desc> Description:\n(.+?)\n(?:<narr> Narrative:\n.+?\n)?</top>\n", re.S)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def run_lines(path: Path) -> list[tuple[str, str, int, float, str, str]]:
    """(query_id, doc_id, rank, score, score text, tag) of every line, checked against RUN_LINE."""
    out = []
    for line in path.read_text().splitlines():
        match = RUN_LINE.fullmatch(line)
        assert match, f"{path.name}: malformed line {line!r}"
        qid, doc, rank, score, tag = match.groups()
        out.append((qid, doc, int(rank), float(score), score, tag))
    return out


def pool(result: SimulationResult, depth: int) -> set[tuple[str, str]]:
    """(query_id, doc_id) in the top ``depth`` of the pooled runs, recomputed from the files."""
    return {(qid, doc) for run in result.runs if run.pooled
            for qid, doc, rank, *_ in run_lines(run.path) if rank <= depth}


def qrels_pairs(result: SimulationResult) -> dict[tuple[str, str], int]:
    qrels = irbench.read_qrels(result.qrels_path)
    return {(q.decode(), d.decode()): int(r)
            for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> SimulationResult:
    """The default spec: 4 groups x 3 runs, 25 topics, depth 100, pool depth 10 of 1 run a group."""
    return simulate(CampaignSpec(), tmp_path_factory.mktemp("campaign"))


# ---- determinism ---------------------------------------------------------------------------


def test_same_seed_gives_identical_bytes(tmp_path):
    simulate(SMALL, tmp_path / "a" / "c")  # one folder name: campaign.yaml's name is its name
    simulate(SMALL, tmp_path / "b" / "c")
    first = files(tmp_path / "a" / "c")
    assert first == files(tmp_path / "b" / "c")
    simulate(SMALL, tmp_path / "a" / "c")  # overwriting gives the same files again
    assert files(tmp_path / "a" / "c") == first


def test_different_seed_gives_different_campaign(tmp_path):
    simulate(SMALL, tmp_path / "a")
    simulate(dataclasses.replace(SMALL, seed=8), tmp_path / "b")
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert a.keys() == b.keys()
    assert all(a[name] != b[name] for name in a)


def test_pool_depth_changes_only_the_qrels(tmp_path):
    shallow = simulate(SMALL, tmp_path / "shallow")
    deep = simulate(dataclasses.replace(SMALL, pool_depth=20, pooled_runs=2), tmp_path / "deep")
    a, b = files(tmp_path / "shallow"), files(tmp_path / "deep")
    assert {k: v for k, v in a.items() if k.startswith("runs/") or k == "topics.txt"} == \
           {k: v for k, v in b.items() if k.startswith("runs/") or k == "topics.txt"}
    small, large = qrels_pairs(shallow), qrels_pairs(deep)
    assert small.keys() < large.keys()
    assert all(large[key] == grade for key, grade in small.items())


def test_writes_the_named_files_and_nothing_else(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = simulate(SMALL, tmp_path)
    names = {"campaign.json", "campaign.yaml", "notes.txt", "qrels.txt", "topics.txt",
             "documents.sgml.gz"} | {
        f"runs/group{g}-{k}.txt" for g in "ABC" for k in (1, 2)}
    assert set(files(tmp_path)) == names
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert result.run_paths == tuple(tmp_path / "runs" / f"{r.name}.txt" for r in result.runs)


# ---- the files -----------------------------------------------------------------------------


def test_runs_read_cleanly_in_trec_eval_order(campaign):
    spec = campaign.spec
    topics = [str(401 + t) for t in range(spec.topics)]
    assert [r.name for r in campaign.runs] == [f"group{g}-{k}" for g in "ABCD" for k in (1, 2, 3)]
    for run in campaign.runs:
        lines = run_lines(run.path)
        # exact formatting: what a Python f-string would print for the values read back
        assert run.path.read_text() == "".join(
            f"{q} Q0 {d} {rank} {score:.4f} {tag}\n" for q, d, rank, score, _, tag in lines)
        assert {tag for *_, tag in lines} == {run.name}
        assert list(dict.fromkeys(q for q, *_ in lines)) == topics  # sorted by topic
        for qid in topics:
            rows = [row for row in lines if row[0] == qid]
            assert [rank for _, _, rank, *_ in rows] == list(range(1, spec.depth + 1))
            assert len({doc for _, doc, *_ in rows}) == spec.depth
            # file order is trec_eval's ranking order: score descending, then docno descending
            keys = [(-score, tuple(-b for b in doc.encode())) for _, doc, _, score, *_ in rows]
            assert keys == sorted(keys)
        read = irbench.read_run(run.path)
        assert read.runid == run.name and len(read) == spec.topics * spec.depth


def test_scores_have_few_ties(campaign):
    lines = run_lines(campaign.runs[0].path)
    tied = sum(a[0] == b[0] and a[4] == b[4] for a, b in zip(lines, lines[1:]))
    assert tied < 0.05 * len(lines)


def test_qrels_are_exactly_the_pool(campaign):
    spec = campaign.spec
    judged = qrels_pairs(campaign)
    assert set(judged) == pool(campaign, spec.pool_depth)
    text = campaign.qrels_path.read_text().splitlines()
    rows = [line.split() for line in text]
    assert all(len(row) == 4 and row[1] == "0" for row in rows)
    assert [(int(q), d) for q, _, d, _ in rows] == sorted((int(q), d) for q, _, d, _ in rows)
    assert campaign.pool_size == len(rows)
    for topic in campaign.topics:
        mine = [grade for (qid, _), grade in judged.items() if qid == topic.query_id]
        assert topic.judged == len(mine)
        assert topic.relevant_judged == sum(grade > 0 for grade in mine) <= topic.relevant


def test_unpooled_runs_have_unjudged_documents(campaign):
    k = campaign.spec.pool_depth
    judged = qrels_pairs(campaign)

    def unjudged(run):
        return sum((q, d) not in judged for q, d, rank, *_ in run_lines(run.path) if rank <= k)

    assert all(unjudged(run) == 0 for run in campaign.runs if run.pooled)
    assert all(unjudged(run) > 0 for run in campaign.runs if not run.pooled)


@pytest.mark.parametrize("grades", [2, 3, 5])
def test_grades_are_in_range(tmp_path, grades):
    result = simulate(dataclasses.replace(SMALL, grades=grades, topics=12), tmp_path)
    levels = set(qrels_pairs(result).values())
    assert levels <= set(range(grades))
    assert {0, 1} <= levels
    if grades == 5:
        assert max(levels) >= 3


def test_topic_file_parses(campaign):
    text = campaign.topics_path.read_text()
    blocks = TOPIC_BLOCK.findall(text)
    assert "".join(m.group(0) for m in TOPIC_BLOCK.finditer(text)) == text.replace("\n\n", "\n")
    assert [num for num, _, _ in blocks] == [t.query_id for t in campaign.topics]
    assert [title for _, title, _ in blocks] == [t.title for t in campaign.topics]
    assert len({title for _, title, _ in blocks}) == len(blocks)
    assert all(title in desc for _, title, desc in blocks)


def test_campaign_json_matches_the_result(campaign):
    doc = json.loads(campaign.campaign_path.read_text())
    assert doc["spec"] == dataclasses.asdict(campaign.spec)
    assert doc["seed"] == campaign.spec.seed
    assert doc["pool_size"] == campaign.pool_size
    assert doc["runs"] == [
        {"name": r.name, "group": r.group, "pooled": r.pooled, "type": r.type,
         "quality": r.quality, "path": f"runs/{r.name}.txt"} for r in campaign.runs]
    assert doc["topics"] == [dataclasses.asdict(t) for t in campaign.topics]
    assert {r.type for r in campaign.runs} <= {"automatic", "manual"}
    assert [r.pooled for r in campaign.runs] == [k == 1 for _ in range(4) for k in (1, 2, 3)]


# ---- realism -------------------------------------------------------------------------------


def test_better_systems_score_higher(campaign):
    qrels = irbench.read_qrels(campaign.qrels_path)
    ap = [irbench.evaluate(qrels, run.path, ["AP"], complete=True).summary("AP")
          for run in campaign.runs]
    rho = spearmanr([run.quality for run in campaign.runs], ap).statistic
    assert rho > 0.6
    assert 0.05 < np.mean(ap) < 0.8


def test_runs_of_a_group_agree_more_than_runs_of_different_groups(campaign):
    top = {run.name: {(q, d) for q, d, rank, *_ in run_lines(run.path) if rank <= 10}
           for run in campaign.runs}
    within, across = [], []
    for i, a in enumerate(campaign.runs):
        for b in campaign.runs[i + 1:]:
            overlap = len(top[a.name] & top[b.name])
            (within if a.group == b.group else across).append(overlap)
    assert np.mean(within) > 1.2 * np.mean(across) > 0


def test_relevant_counts_are_long_tailed(tmp_path):
    result = simulate(dataclasses.replace(SMALL, topics=50, depth=20, pool_depth=2), tmp_path)
    relevant = [t.relevant for t in result.topics]
    assert min(relevant) <= 5 and max(relevant) >= 100
    assert len({t.ease for t in result.topics}) > 40  # topics of varying difficulty


def test_small_and_huge_collections(tmp_path):
    tiny = simulate(CampaignSpec(topics=3, depth=40, pool_depth=40, collection_size=40),
                    tmp_path / "tiny")
    for run in tiny.runs:  # every run retrieves the whole collection
        assert len({d for q, d, *_ in run_lines(run.path) if q == "401"}) == 40
    assert tiny.pool_size == 3 * 40
    huge = simulate(dataclasses.replace(SMALL, collection_size=2_000_000_000), tmp_path / "huge")
    docnos = {d for q, d in qrels_pairs(huge)}
    assert all(re.fullmatch(r"SIM-\d{10}", d) for d in docnos)


# ---- bad specs -----------------------------------------------------------------------------


@pytest.mark.parametrize("values, message", [
    ({"groups": 0}, "groups must be >= 1 (got 0)"),
    ({"runs_per_group": 0}, "runs_per_group must be >= 1 (got 0)"),
    ({"topics": -3}, "topics must be >= 1 (got -3)"),
    ({"depth": 0}, "depth must be >= 1 (got 0)"),
    ({"pool_depth": 0}, "pool_depth must be >= 1 (got 0)"),
    ({"pooled_runs": 0}, "pooled_runs must be >= 1 (got 0)"),
    ({"grades": 1}, "grades must be >= 2 (got 1)"),
    ({"collection_size": 0}, "collection_size must be >= 1 (got 0)"),
    ({"seed": -1}, "seed must be >= 0 (got -1)"),
    ({"pooled_runs": 4}, "pooled_runs must be <= runs_per_group (4 > 3)"),
    ({"pool_depth": 200}, "pool_depth must be <= depth (200 > 100)"),
    ({"depth": 1000, "pool_depth": 10, "collection_size": 500},
     "depth must be <= collection_size (1000 > 500)"),
    ({"groups": 2.5}, "groups must be an integer (got 2.5)"),
    ({"topics": "25"}, "topics must be an integer (got '25')"),
    ({"grades": True}, "grades must be an integer (got True)"),
])
def test_bad_spec(values, message):
    with pytest.raises(SimulationError) as info:
        CampaignSpec(**values)
    assert str(info.value) == f"invalid campaign spec: {message}"


def test_bad_spec_reports_every_problem():
    with pytest.raises(SimulationError) as info:
        CampaignSpec(groups=0, grades=1, pooled_runs=5, depth=60_000)
    text = str(info.value)
    for name in ("groups", "grades", "pooled_runs must be <= runs_per_group",
                 "depth must be <= collection_size"):
        assert name in text


def test_numpy_integers_are_accepted(tmp_path):
    spec = CampaignSpec(groups=np.int64(2), runs_per_group=1, topics=np.int32(2), depth=10)
    assert len(simulate(spec, tmp_path).runs) == 2


def test_out_dir_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("")
    with pytest.raises(OutputError, match="cannot create the campaign folder"):
        simulate(SMALL, tmp_path / "taken")


def test_group_names():
    assert [group_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "groupA", "groupB", "groupZ", "groupAA", "groupAB", "groupAZ", "groupBA", "groupZZ",
        "groupAAA"]


def test_the_written_config_runs_as_it_is(tmp_path, capsys):
    """'irbench simulate OUT' writes OUT/campaign.yaml: 'irbench check' and 'irbench run' take
    it as it is, every system is scored, and its groups, priorities and pool settings are the
    simulation's."""
    from irbench import cli
    from irbench.config import load_config

    assert cli.main(["simulate", str(tmp_path / "my camp"), "--groups", "3",
                     "--runs-per-group", "2", "--topics", "6", "--depth", "50",
                     "--pool-depth", "5", "--collection-size", "5000"]) == 0
    path = tmp_path / "my camp" / "campaign.yaml"
    assert f"irbench run {path}" in capsys.readouterr().err
    config = load_config(path)
    assert config.name == "my-camp"
    assert [(s.name, s.group, s.priority, s.pooled) for s in config.systems] == [
        (f"group{g}-{k}", f"group{g}", k, k == 1) for g in "ABC" for k in (1, 2)]
    assert (config.report.given, config.report.pool_depth) == (("pool_depth",), 5)
    assert cli.main(["check", str(path)]) == 0
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["scores", str(path), "--measure", "AP", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert len(rows) == 1 + 6
    assert cli.main(["pool", "bias", str(path), "--param", "k=5"]) == 0
    assert "warning" not in capsys.readouterr().err  # the declared pool is the judged pool
