"""The store's named reads: what the report and the commands ask of it, without SQL."""

from __future__ import annotations

import hashlib
from pathlib import Path

from campaigns import make_campaign

from irbench.config import load_config
from irbench.runner import run_campaign
from irbench.store import Store


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_named_reads(tmp_path):
    path = make_campaign(tmp_path, systems=3, topics=4)
    config = load_config(path)
    run_campaign(config, workers=1)
    with Store(config.store, read_only=True) as store:
        assert store.topic_texts() == {f"t{i:02d}": f"topic t{i:02d}" for i in range(1, 5)}
        assert store.system_hashes() == {s.name: _sha(s.path) for s in config.systems}
        assert store.qrels_hash("official") == _sha(config.qrels_path("official"))
        assert store.qrels_hash("nope") == ""
        assert store.file_hash(config.topics) == _sha(config.topics)
        assert store.file_hash("/nowhere") == ""
        inputs = store.inputs()
        assert [(k, n) for k, n, _, _ in inputs] == [
            ("qrels", "official"), ("qrels", "shallow"), ("run", "r00"), ("run", "r01"),
            ("run", "r02")]
        options, started, finished, status = store.last_runner()
        assert status == "ok" and finished >= started and options.startswith("{")
        overview = store.systems_overview()
        assert [row[0] for row in overview] == ["r00", "r01", "r02"]
        assert all(row[4] == "ok" and row[5] == 2 and row[7] == 4 for row in overview)


def test_parquet_export_of_named_columns(tmp_path):
    duckdb = __import__("duckdb")
    path = make_campaign(tmp_path, systems=2, topics=3)
    config = load_config(path)
    run_campaign(config, workers=1)
    out = str(tmp_path / "x.parquet")
    with Store(config.store, read_only=True) as store:
        store.export_parquet(out, "official", ["AP"], ["r01"], per_query=True)
    rows = duckdb.sql(f"SELECT system, qrels, measure, count(*) FROM '{out}' GROUP BY ALL"
                      ).fetchall()
    assert rows == [("r01", "official", "AP", 3)]


def test_an_empty_store_has_no_last_run(tmp_path):
    with Store(str(tmp_path / "s.duckdb")) as store:
        assert store.last_runner() is None and store.inputs() == []


HOSTILE = ["../a/b c=d%2F", "__HIVE_DEFAULT_PARTITION__", "RUN", "run", "x" * 300,
           "日本語のシステム"]


def test_partitioned_parquet_export_reads_back_everywhere(tmp_path, capsys):
    """scores --format parquet --partition-by: a hive-partitioned folder that DuckDB, pandas
    and pyarrow read back to the CSV's rows with every name exact (a reader's null marker,
    names differing only in case, a name longer than a file name may be); participants' names
    stay inside the folder."""
    import csv
    import io

    import duckdb
    import pandas as pd
    import pyarrow.dataset

    from irbench import cli

    path = make_campaign(tmp_path, systems=len(HOSTILE) + 2, topics=4)
    declared = "".join(f"\n  - {{name: '{name}', run: ../runs/r{i + 2:02d}.txt}}"
                       for i, name in enumerate(HOSTILE))
    path.write_text(path.read_text().replace("  - glob: ../runs/r*.txt",
                                             "  - glob: ../runs/r0[01].txt" + declared))
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["scores", str(path), "--per-query", "--format", "csv"]) == 0
    expected = [tuple(r) for r in csv.reader(io.StringIO(capsys.readouterr().out))][1:]
    out = tmp_path / "export" / "by-system"
    assert cli.main(["scores", str(path), "--per-query", "--format", "parquet",
                     "--partition-by", "system", "-o", str(out)]) == 0
    folders = sorted(p.name for p in out.iterdir())
    assert len(folders) == len(HOSTILE) + 2 and all(f.startswith("system_key=") for f in folders)
    assert len({f.lower() for f in folders}) == len(folders)  # case-insensitive file systems
    assert all(len(f.encode()) < 100 for f in folders)
    assert all(p.resolve().is_relative_to(out) for p in out.rglob("*"))
    columns = "system, qrels, measure, query_id, value"
    got = duckdb.sql(f"SELECT {columns} FROM read_parquet('{out}/**/*.parquet', "
                     "hive_partitioning = true)").fetchall()
    rows = sorted((s, q, m, t, repr(float(v))) for s, q, m, t, v in expected)
    assert sorted((s, q, m, t, repr(v)) for s, q, m, t, v in got) == rows
    names = sorted(["r00", "r01", *HOSTILE])
    frame = pd.read_parquet(out)
    assert sorted(frame["system"].astype(str).unique()) == names
    assert len(frame) == len(expected)
    table = pyarrow.dataset.dataset(out, partitioning="hive").to_table()
    assert sorted(set(table["system"].to_pylist())) == names
    read = zip(*(table[c].to_pylist() for c in ("system", "qrels", "measure", "query_id",
                                                 "value")))
    assert sorted((s, q, m, t, repr(v)) for s, q, m, t, v in read) == rows

    by_qrels = tmp_path / "export" / "by-qrels"  # every qrels set, each in its folder
    assert cli.main(["scores", str(path), "--format", "parquet", "--partition-by", "qrels",
                     "-o", str(by_qrels)]) == 0
    assert [p.name.split("-")[0] for p in sorted(by_qrels.iterdir())] == \
        ["qrels_key=official", "qrels_key=shallow"]
    capsys.readouterr()
    assert cli.main(["scores", str(path), "--format", "parquet", "--partition-by", "qrels",
                     "-o", str(by_qrels)]) == 1
    assert "not empty" in capsys.readouterr().err
    assert cli.main(["scores", str(path), "--format", "csv", "--partition-by", "qrels"]) == 1
