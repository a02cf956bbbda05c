"""The report's provenance lists the run table (issue 38): its path and sha256 beside the
topics, qrels and runs, as ``irbench run`` read it, since it sets the groups, types and pooled
flags the rankings and pool bias rest on. Checked on the demo campaign's report context."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from campaigns import copy_demo

from irbench import cli
from irbench.config import load_config
from irbench.report import build_context
from irbench.report.contract import Input
from irbench.report.provenance import table_hash
from irbench.store import Store

# the demo's twelve runs as a run table of the kind organisers keep: a tag, a group, whether
# it was pooled (each group's first run), the topic fields it used
TABLE = "run tag\tgroup\tjudged\ttopic fields\n" + "".join(
    f"group{g}-{i}\tgroup{g}\t{'yes' if i == 1 else 'no'}\t{'TD' if i == 3 else 'T'}\n"
    for g in "ABCD" for i in (1, 2, 3))
SYSTEMS = """systems:
  table: ../runs/demo/runs.tsv
  columns: {run: run tag, pooled: judged}
  run: "runs/{run tag}.txt"
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def provenance_of(config_path: Path):
    config = load_config(config_path, strict=False, systems=False)  # as irbench report does
    with Store(config.store, read_only=True) as store:
        return build_context(config, store).provenance


@pytest.fixture(scope="module")
def demo_with_a_table(tmp_path_factory) -> Path:
    """The demo campaign with its systems given by runs/demo/runs.tsv, run once."""
    config = copy_demo(tmp_path_factory.mktemp("demo-table"))
    (config.parent.parent / "runs" / "demo" / "runs.tsv").write_text(TABLE)
    text = config.read_text()
    config.write_text(re.sub(r"(?ms)^systems:\n.*?^(?=suites:)", SYSTEMS, text, count=1))
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    return config


@pytest.mark.timeout(120)
def test_provenance_lists_the_run_table_with_its_sha256(demo_with_a_table):
    config = demo_with_a_table
    table = config.parent.parent / "runs" / "demo" / "runs.tsv"
    provenance = provenance_of(config)
    kinds = [i.kind for i in provenance.inputs]
    # topics, the run table, then the qrels sets and the runs
    assert kinds == ["topics", "run table", "qrels", "qrels"] + ["run"] * 12
    assert provenance.inputs[1] == Input("run table", "runs.tsv", str(table), sha256(table))
    # the table's groups and pooled flags are what the report ranks and rebuilds pools by
    loaded = load_config(config)
    assert [s.pooled for s in loaded.systems] == [True, False, False] * 4
    assert loaded.systems[2].metadata == {"topic fields": "TD"}


@pytest.mark.timeout(120)
def test_the_sha256_is_the_table_the_scores_were_stored_from(demo_with_a_table):
    """Edited after the run, the table's recorded sha256 stays the one the store's groups and
    pooled flags came from (the next irbench run records the new one)."""
    config = demo_with_a_table
    table = config.parent.parent / "runs" / "demo" / "runs.tsv"
    before = sha256(table)
    table.write_text(TABLE.replace("groupD\tyes", "groupD\tno"))
    try:
        [listed] = [i for i in provenance_of(config).inputs if i.kind == "run table"]
        assert listed.sha256 == before != sha256(table)
    finally:
        table.write_text(TABLE)


@pytest.mark.timeout(120)
def test_the_demo_without_a_table_lists_none(tmp_path):
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    inputs = provenance_of(config).inputs
    assert "run table" not in [i.kind for i in inputs]
    assert [i.kind for i in inputs][:3] == ["topics", "qrels", "qrels"]


def test_a_store_that_did_not_record_the_table_shows_the_file_as_it_is(tmp_path):
    class Unrecorded:  # a store from before tables were recorded
        def file_hash(self, path: str) -> str:
            return ""

    table = tmp_path / "runs.tsv"
    table.write_text(TABLE)
    assert table_hash(Unrecorded(), str(table)) == sha256(table)
    assert table_hash(Unrecorded(), str(tmp_path / "gone.tsv")) == ""
    assert table_hash(Unrecorded(), str(tmp_path)) == ""  # a folder is no table
