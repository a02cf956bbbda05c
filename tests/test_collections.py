"""Several collections in one config (``collections:``, issue 41): the bundled demo's 25 topics
split into three collections, its runs with them. Per collection, ``irbench run`` of the config
stores what ``irbench run`` of that collection's own one-collection config stores, each in its
part of the one store file; a rerun evaluates nothing; a config with one collection keeps its
store as it was (DuckDB's main schema, nothing else); every problem of a collection or of a
system's run for it is placed where it was written; commands other than run and check take
``--collection NAME``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from irbench import cli
from irbench.config import load_config, load_configs
from irbench.errors import ConfigError
from irbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "runs" / "demo"
PARTS = {"c1": slice(0, 8), "c2": slice(8, 16), "c3": slice(16, None)}
SUITE = "suites:\n  core: [AP, nDCG@10, P@10, Bpref]\n"


def _split(folder: Path, parts: dict[str, slice] = PARTS) -> list[str]:
    """The demo's runs and qrels split by topic into one folder per collection."""
    lines = (DEMO / "qrels.txt").read_text().splitlines(keepends=True)
    topics = sorted({line.split()[0] for line in lines}, key=lambda t: (len(t), t))
    runs = sorted(p for p in (DEMO / "runs").iterdir() if p.suffix == ".txt")
    for name, part in parts.items():
        keep = set(topics[part])
        (folder / name / "runs").mkdir(parents=True)
        (folder / name / "qrels.txt").write_text(
            "".join(line for line in lines if line.split()[0] in keep))
        for run in runs:
            (folder / name / "runs" / run.name).write_text("".join(
                line for line in run.read_text().splitlines(keepends=True)
                if line.split()[0] in keep))
        (folder / f"{name}.yaml").write_text(
            f"name: {name}\ncollection:\n  qrels: {name}/qrels.txt\nsystems:\n"
            f"  - {{glob: \"{name}/runs/*.txt\"}}\n" + SUITE)
    return [r.name for r in runs]


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    _split(tmp_path)
    path = tmp_path / "lab.yaml"
    path.write_text("name: lab\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in PARTS)
        + "systems:\n  - {glob: \"{collection}/runs/*.txt\"}\n" + SUITE)
    return path


def _means(path: str, scope: str = "main") -> list[tuple]:
    with Store(path, read_only=True, scope=scope) as store:
        _, rows = store.means()
        _, per_query = store.per_query()
    return sorted(map(tuple, rows)) + sorted(map(tuple, per_query))


@pytest.mark.timeout(300)
def test_each_collection_scores_as_its_own_config_in_one_store(lab, capsys):
    assert cli.main(["run", str(lab), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("irbench run: collection")] \
        == [f"irbench run: collection '{name}'" for name in PARTS]
    for name in PARTS:
        assert cli.main(["run", str(lab.parent / f"{name}.yaml"), "--quiet"]) == 0
        alone = _means(str(lab.parent / f"{name}.duckdb"))
        assert alone and _means(str(lab.parent / "lab.duckdb"), name) == alone
    capsys.readouterr()
    assert cli.main(["run", str(lab), "--quiet"]) == 0  # a rerun evaluates nothing
    summaries = [line for line in capsys.readouterr().err.splitlines() if "evaluated" in line]
    assert len(summaries) == 3 and all(" 0 evaluated, 12 reused" in s for s in summaries)
    # one collection: scores -> per collection, the same numbers
    assert cli.main(["scores", str(lab), "--collection", "c2", "--format", "csv"]) == 0
    two = capsys.readouterr().out
    assert cli.main(["scores", str(lab.parent / "c2.yaml"), "--format", "csv"]) == 0
    assert capsys.readouterr().out == two
    # without --collection: every collection, the collection first (a table under each name)
    assert cli.main(["scores", str(lab), "--format", "csv"]) == 0
    every = capsys.readouterr().out.splitlines()
    assert every[0] == "collection," + two.splitlines()[0]
    assert [line.split(",", 1)[1] for line in every if line.startswith("c2,")] == \
        two.splitlines()[1:]
    assert cli.main(["scores", str(lab)]) == 0
    assert capsys.readouterr().out.count("collection c") == 3
    assert cli.main(["systems", str(lab)]) == 0
    assert capsys.readouterr().out.startswith("collection c1:\n")


@pytest.mark.timeout(600)
def test_five_collections_each_score_as_their_own_config(tmp_path):
    five = {f"d{i}": slice(5 * i, 5 * i + 5) for i in range(5)}
    _split(tmp_path, five)
    path = tmp_path / "five.yaml"
    path.write_text("name: five\ncollections:\n" + "".join(
        f"  {name}: {{qrels: {name}/qrels.txt}}\n" for name in five)
        + "systems:\n  - {glob: \"{collection}/runs/*.txt\"}\n" + SUITE)
    assert cli.main(["run", str(path), "--quiet"]) == 0
    for name in five:
        assert cli.main(["run", str(tmp_path / f"{name}.yaml"), "--quiet"]) == 0
        alone = _means(str(tmp_path / f"{name}.duckdb"))
        assert alone and _means(str(tmp_path / "five.duckdb"), name) == alone


@pytest.mark.timeout(120)
def test_a_config_with_one_collection_keeps_its_store_in_main(tmp_path):
    _split(tmp_path)
    assert cli.main(["run", str(tmp_path / "c1.yaml"), "--quiet"]) == 0
    import duckdb

    con = duckdb.connect(str(tmp_path / "c1.duckdb"), read_only=True)
    try:
        schemas = {r[0] for r in con.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = "
            "current_database()").fetchall()}
    finally:
        con.close()
    assert schemas == {"main"}
    config = load_config(tmp_path / "c1.yaml")
    assert (config.scope, config.several, config.collection().name) == ("main", False,
                                                                        "default")


@pytest.mark.timeout(120)
def test_views_and_the_collection_option(lab, capsys):
    views = load_configs(lab)
    assert [(v.scope, v.collection().name, v.several) for v in views] == \
        [(n, n, True) for n in PARTS]
    assert all(len(v.systems) == 12 and v.store == str(lab.parent / "lab.duckdb")
               for v in views)
    assert views[1].systems[0].path == str(lab.parent / "c2" / "runs" / "groupA-1.txt")
    with pytest.raises(ConfigError, match=r"several collections \(c1, c2, c3\): give "
                                          r"--collection NAME"):
        load_config(lab)
    assert load_config(lab, collection="c3").scope == "c3"
    assert cli.main(["compare", str(lab)]) == 2  # a config error: one collection at a time
    assert "give --collection NAME" in capsys.readouterr().err
    assert cli.main(["check", str(lab), "--collection", "c9"]) == 2
    assert "no collection 'c9' (it has c1, c2, c3)" in capsys.readouterr().err
    assert cli.main(["check", str(lab), "--collection", "c2"]) == 0
    assert "(collection c2): ok: 12 systems" in capsys.readouterr().out


@pytest.mark.timeout(120)
def test_a_system_s_runs_per_collection(lab):
    shutil.copy(lab.parent / "c2" / "runs" / "groupB-1.txt", lab.parent / "dense-c2.txt")
    text = lab.read_text().replace(
        "  - {glob:", "  - {name: dense, runs: {c2: dense-c2.txt}}\n  - {glob:")
    lab.write_text(text)
    views = {v.scope: v for v in load_configs(lab)}
    assert "dense" not in [s.name for s in views["c1"].systems]  # not run on c1
    dense = next(s for s in views["c2"].systems if s.name == "dense")
    assert dense.path == str(lab.parent / "dense-c2.txt")


@pytest.mark.timeout(120)
def test_problems_are_placed_where_they_were_written(lab):
    lines = lab.read_text().splitlines()
    lines[3] = "  c2: {qrels: c2/none.txt}"  # collections.c2.qrels
    lines.insert(6, "  - {name: dense, runs: {c3: none.txt}}")
    lab.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as caught:
        load_configs(lab)
    problems = caught.value.problems
    assert f"{lab}:4: collections.c2.qrels: no such file 'c2/none.txt'" in problems
    assert f"{lab}:7: systems[0].runs.c3: no such file 'none.txt'" in problems
    assert len(problems) == len(set(problems)) == 2


@pytest.mark.parametrize("text, expected", [
    ("collection: {qrels: c1/qrels.txt}\ncollections: {c1: {qrels: c1/qrels.txt}}\n",
     "give 'collection' (one) or 'collections' (several), not both"),
    ("collections: {main: {qrels: c1/qrels.txt}}\n", "'main' is a name the store keeps"),
    ("collections: {.x: {qrels: c1/qrels.txt}}\n", "a collection name is letters"),
    ("collections: []\n", "a mapping of collection name"),
])
@pytest.mark.timeout(60)
def test_a_bad_collections_section(tmp_path, text, expected):
    _split(tmp_path)
    path = tmp_path / "bad.yaml"
    path.write_text(text + "systems:\n  - {glob: \"c1/runs/*.txt\"}\n" + SUITE)
    with pytest.raises(ConfigError) as caught:
        load_configs(path)
    assert any(expected in p for p in caught.value.problems), caught.value.problems


@pytest.mark.timeout(60)
def test_runs_in_a_one_collection_config_is_a_problem(tmp_path):
    _split(tmp_path)
    path = tmp_path / "one.yaml"
    path.write_text("collection: {qrels: c1/qrels.txt}\nsystems:\n"
                    "  - {name: x, runs: {c1: c1/runs/groupA-1.txt}}\n" + SUITE)
    with pytest.raises(ConfigError, match=r"systems\[0\]\.runs: a run file per collection"):
        load_config(path)
    assert os.path.exists(tmp_path / "c1" / "qrels.txt")


@pytest.mark.timeout(300)
def test_compare_across_is_stats_across_on_each_collection_s_stored_scores(lab, capsys):
    import json

    from irbench.stats.across import CollectionScores, across

    lab.write_text(lab.read_text().replace(
        '  - {glob: "{collection}/runs/*.txt"}',
        '  - {name: groupA-1, run: "{collection}/runs/groupA-1.txt", baseline: true}\n'
        '  - {glob: "{collection}/runs/group[BCD]-*.txt"}'))
    assert cli.main(["run", str(lab), "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["compare", str(lab), "--across", "--measure", "nDCG@10", "--test", "t",
                     "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    scores = []
    for name in PARTS:
        with Store(str(lab.parent / "lab.duckdb"), read_only=True, scope=name) as store:
            systems, topics, values = store.score_matrix("official", "nDCG@10")
        scores.append(CollectionScores(name, tuple(systems), tuple(topics), values))
    expected = across(scores, "nDCG@10", baseline="groupA-1", test="t")
    assert shown["collections"] == list(PARTS) and shown["baseline"] == "groupA-1"
    assert [s["name"] for s in shown["systems"]] == [s.name for s in expected.systems]
    for got, want in zip(shown["systems"], expected.systems):
        assert got["means"] == list(want.means) and got["mean_rank"] == want.mean_rank
        assert [t["p_adjusted"] for t in got["tests"]] == [t.p_adjusted for t in want.tests]
        assert (got["meta"] or {}).get("effect") == (want.meta.effect if want.meta else None)
    assert cli.main(["compare", str(lab), "--across", "--measure", "nDCG@10"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("nDCG@10 across 3 collections; against groupA-1")
    assert "W/T/L" in table and "c1" in table
    assert cli.main(["compare", str(lab), "--across", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("system,collection,mean,mean_rank")
    assert cli.main(["compare", str(lab), "--across", "--collection", "c1"]) == 1
    assert "not with --collection" in capsys.readouterr().err
