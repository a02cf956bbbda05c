"""Run tables as organisers have them (issue 38): TREC-8's own table of runs (run tag, group,
type, pool_priority, judged_depth100 as yes/no, topic_fields_TDN ...) loads with a column map
and a run template, the other columns kept as each system's metadata; yes/no, y/n, true/false,
on/off, 1/0 read as booleans; every problem at once with its file, line and column."""

from __future__ import annotations

import gzip
import textwrap
from pathlib import Path

import pytest

from irbench import cli
from irbench.config import load_config
from irbench.errors import ConfigError

QRELS = "401 0 FT911-1 1\n401 0 FT911-2 0\n402 0 LA0101-1 2\n"

# (run tag, group, type, pool_priority, judged_depth100, topic_fields_TDN, query length)
TREC8 = [
    ("acsys8aln", "ACSys", "automatic", "1", "yes", "TD", "short"),
    ("acsys8amn", "ACSys", "manual", "2", "No", "TDN", "long"),
    ("ibms99a", "IBM-Brown", "automatic", "1", "Y", "T", "short"),
    ("ibms99b", "IBM-Brown", "automatic", "2", "n", "TD", ""),
    ("INQ601", "UMass", "automatic", "1", "TRUE", "TDN", "long"),
    ("INQ602", "UMass", "automatic", "3", "false", "TDN", "long"),
    ("ok8alx", "City/Microsoft", "automatic", "1", "1", "TD", "short"),
    ("ok8amxc", "City/Microsoft", "manual", "2", "0", "TDN", "long"),
    ("pir9Aa1", "Queens", "automatic", "1", "on", "T", "short"),
    ("Flab8as", "Fujitsu", "automatic", "", "OFF", "TD", "short"),
]
HEADER = ("run tag", "group", "type", "pool_priority", "judged_depth100", "topic_fields_TDN",
          "query length")


def trec8_campaign(root: Path, rows=TREC8, header=HEADER) -> Path:
    """configs/ beside runs/trec8/ holding qrels, input.TAG.gz per row, runs.tsv."""
    (root / "configs").mkdir(parents=True)
    folder = root / "runs" / "trec8"
    folder.mkdir(parents=True)
    (folder / "qrels").write_text(QRELS)
    for row in rows:
        tag = row[0]
        (folder / f"input.{tag}.gz").write_bytes(gzip.compress(
            f"401 Q0 FT911-1 1 2.0 {tag}\n401 Q0 FT911-2 2 1.0 {tag}\n"
            f"402 Q0 LA0101-1 1 1.0 {tag}\n".encode()))
    (folder / "runs.tsv").write_text("\t".join(header) + "\n"
                                     + "".join("\t".join(r) + "\n" for r in rows))
    return root


def config_with(root: Path, systems: str, name: str = "trec8.yaml") -> str:
    path = root / "configs" / name
    path.write_text("collection: {qrels: ../runs/trec8/qrels}\nsystems:\n"
                    + textwrap.indent(textwrap.dedent(systems).strip("\n"), "  ")
                    + "\nsuites: {core: [AP, P@10]}\n")
    return str(path)


MAPPED = """
    table: ../runs/trec8/runs.tsv
    columns: {run: Run Tag, priority: pool_priority, pooled: judged_depth100}
    run: "input.{run tag}.gz"
"""


def problems(path: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


def test_trec8s_table_of_runs_loads_with_its_columns_mapped(tmp_path):
    root = trec8_campaign(tmp_path)
    config = load_config(config_with(root, MAPPED))
    folder = root / "runs" / "trec8"
    assert [s.name for s in config.systems] == [r[0] for r in TREC8]  # input.TAG.gz -> TAG
    assert [s.path for s in config.systems] == [str(folder / f"input.{r[0]}.gz") for r in TREC8]
    assert [s.group for s in config.systems] == [r[1] for r in TREC8]
    assert [s.type for s in config.systems] == [r[2] for r in TREC8]
    assert [s.priority for s in config.systems] == [1, 2, 1, 2, 1, 3, 1, 2, 1, None]
    assert [s.pooled for s in config.systems] == [True, False, True, False, True, False, True,
                                                  False, True, False]
    # every column no field takes is the system's metadata (an empty cell left out)
    assert [s.metadata for s in config.systems][:4] == [
        {"topic_fields_TDN": "TD", "query length": "short"},
        {"topic_fields_TDN": "TDN", "query length": "long"},
        {"topic_fields_TDN": "T", "query length": "short"},
        {"topic_fields_TDN": "TD"},
    ]
    assert config.tables == (str(folder / "runs.tsv"),)
    assert config.pooled_systems() == ("acsys8aln", "ibms99a", "INQ601", "ok8alx", "pir9Aa1")
    # the same in the list form, beside an inline system
    listed = load_config(config_with(root, "- " + textwrap.indent(
        textwrap.dedent(MAPPED).strip(), "  ")[2:] + "\n- {name: extra, run: ../runs/trec8/"
        "input.INQ601.gz, group: UMass}", "listed.yaml"))
    assert listed.systems[:-1] == config.systems
    assert [s.metadata for s in listed.systems[:-1]] == [s.metadata for s in config.systems]


def test_the_table_reaches_the_store_and_the_run_pages(tmp_path):
    """irbench run keeps each system's group, type, pooled flag, priority and metadata; the
    run pages show the metadata beside the group and type."""
    from irbench.report import build_context
    from irbench.report.runpages import participants
    from irbench.store import Store

    root = trec8_campaign(tmp_path)
    path = config_with(root, MAPPED)
    assert cli.main(["run", "--quiet", "--workers", "1", path]) == 0
    config = load_config(path, strict=False, systems=False)
    with Store(config.store, read_only=True) as store:
        declared = {s.name: s for s in store.declared_systems()}
        assert (declared["acsys8amn"].group, declared["acsys8amn"].type,
                declared["acsys8amn"].pooled, declared["acsys8amn"].priority) == (
            "ACSys", "manual", False, 2)
        assert declared["acsys8amn"].metadata == {"topic_fields_TDN": "TDN",
                                                  "query length": "long"}
        context = build_context(config, store, run_pages=True)
        pages = {p.system: dict(p.metadata) for p in participants(config, store, context)}
    assert pages["acsys8amn"]["group"] == "ACSys"
    assert pages["acsys8amn"]["type"] == "manual"
    assert pages["acsys8amn"]["topic_fields_TDN"] == "TDN"
    assert pages["acsys8amn"]["query length"] == "long"
    assert "query length" not in pages["ibms99b"]


def test_columns_no_field_takes_are_metadata_without_a_map(tmp_path):
    root = trec8_campaign(tmp_path)
    (root / "runs" / "trec8" / "plain.csv").write_text(
        "run,Group,colour,pooled\ninput.INQ601.gz,UMass,red,Yes\n"
        "input.INQ602.gz,UMass,,n\n")
    config = load_config(config_with(root, "table: ../runs/trec8/plain.csv"))
    assert [(s.name, s.group, s.pooled, s.metadata) for s in config.systems] == [
        ("INQ601", "UMass", True, {"colour": "red"}), ("INQ602", "UMass", False, {})]


def test_a_trailing_delimiter_is_no_problem_but_a_nameless_column_with_values_is(tmp_path):
    root = trec8_campaign(tmp_path)
    table = root / "runs" / "trec8" / "runs.tsv"
    table.write_text("run\tgroup\t\ninput.INQ601.gz\tUMass\t\n")
    path = config_with(root, "table: ../runs/trec8/runs.tsv")
    assert [s.group for s in load_config(path).systems] == ["UMass"]
    table.write_text("run\tgroup\t\ninput.INQ601.gz\tUMass\tx\n")
    assert problems(path) == [f"{table}:1: column 3 has no name"]


def test_a_column_mapped_away_leaves_its_own_name_to_metadata(tmp_path):
    """columns: {name: run tag} takes the name from 'run tag': a column called 'name' is then
    the system's metadata, not its name; the same column may give two fields."""
    root = trec8_campaign(tmp_path)
    (root / "runs" / "trec8" / "t.tsv").write_text(
        "run tag\tname\tgroup\nINQ601\tInquery 1\tUMass\n")
    config = load_config(config_with(root, """
        table: ../runs/trec8/t.tsv
        columns: {name: run tag, description: run tag}
        run: input.{run tag}.gz
    """))
    [system] = config.systems
    assert (system.name, system.description, system.group, system.metadata) == (
        "INQ601", "INQ601", "UMass", {"name": "Inquery 1"})


def test_every_problem_of_a_mapped_table_at_once_naming_file_line_and_column(tmp_path):
    rows = [list(r) for r in TREC8]
    rows[1][4] = "maybe"      # line 3: judged_depth100
    rows[2][3] = "first"      # line 4: pool_priority
    rows[2][4] = "si"         # line 4: judged_depth100
    rows[4][0] = ""           # line 6: no run tag, so no run file
    rows[5][0] = "INQ699"     # line 7: no such run file
    root = trec8_campaign(tmp_path, rows=[tuple(r) for r in rows])
    (root / "runs" / "trec8" / "input.INQ699.gz").unlink(missing_ok=True)
    path = config_with(root, MAPPED)
    table = root / "runs" / "trec8" / "runs.tsv"
    words = "(true/false, yes/no, y/n, on/off or 1/0, in any letter case)"
    assert problems(path) == [
        f"{table}:3: judged_depth100 (pooled): must be yes or no {words}, not 'maybe'",
        f"{table}:4: judged_depth100 (pooled): must be yes or no {words}, not 'si'",
        f"{table}:4: pool_priority (priority): must be a whole number >= 1 (1 first), "
        "not 'first'",
        f"{table}:6: run: empty 'run tag': the run template makes the run file from it",
        f"{table}:7: run: no such file 'input.INQ699.gz'",
    ]


@pytest.mark.parametrize("systems,expected", [
    # a column the table does not have, with the closest one named
    ("columns: {run: run tag, pooled: judged_depth10}\nrun: input.{run tag}.gz",
     "{config}:4: systems.columns.pooled: no column 'judged_depth10' in {table} (its columns: "
     "run tag, group, type, pool_priority, judged_depth100, topic_fields_TDN, query length; "
     "did you mean 'judged_depth100'?)"),
    ("columns: {pooled: judged_depth100}\nrun: input.{run_tag}.gz",
     "{config}:5: systems.run: no column 'run_tag' in {table} (its columns: run tag, group, "
     "type, pool_priority, judged_depth100, topic_fields_TDN, query length; did you mean "
     "'run tag'?)"),
    ("columns: {judged: judged_depth100}\nrun: input.{run tag}.gz",
     "{config}:4: systems.columns.judged: unknown system field: a column may give run, name, "
     "group, type, description, baseline, official, priority, pooled, kind, format; every "
     "other column is kept as the system's metadata"),
    ("columns: [run tag]\nrun: input.{run tag}.gz",
     "{config}:4: systems.columns: a mapping of system field: the table's column name "
     "(columns: {run: run tag, pooled: judged_depth100})"),
    ("columns: {run: group}\nrun: input.{run tag}.gz",
     "{config}:4: systems.columns.run: the run template does not use column 'group': a "
     "column gives the run file, or the template makes it"),
    ("run: input.tag.gz",
     "{config}:4: systems.run: 'input.tag.gz' names no column: write the column whose cell "
     "makes each run file's name in braces, input.{run tag}.gz"),
    ("run: input.{run tag.gz",
     "{config}:4: systems.run: 'input.{run tag.gz': a brace outside a {column}: write each "
     "column's name in braces, input.{run tag}.gz"),
    ("columns: {pooled: judged_depth100}",
     "{table}:1: no 'run' column (the run file of each system, relative to the table's folder; "
     "or map yours: columns: {run: COLUMN}, or make it from the row: run: 'input.{COLUMN}.gz')"),
])
def test_a_column_map_or_run_template_that_does_not_fit_the_table(tmp_path, systems, expected):
    root = trec8_campaign(tmp_path)
    path = config_with(root, "table: ../runs/trec8/runs.tsv\n" + systems)
    table = root / "runs" / "trec8" / "runs.tsv"
    assert problems(path) == [expected.replace("{config}", path).replace("{table}", str(table))]


def test_the_cli_says_each_problem_without_a_traceback(tmp_path, capsys):
    rows = [list(r) for r in TREC8]
    rows[0][4] = "perhaps"
    rows[3][4] = "-"
    root = trec8_campaign(tmp_path, rows=[tuple(r) for r in rows])
    path = config_with(root, MAPPED)
    assert cli.main(["check", path]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    table = root / "runs" / "trec8" / "runs.tsv"
    assert f"{table}:2: judged_depth100 (pooled): must be yes or no" in err
    assert f"{table}:5: judged_depth100 (pooled): must be yes or no" in err
    assert "not 'perhaps'" in err and "not '-'" in err


def test_the_report_knows_the_tables_without_reading_the_systems(tmp_path):
    root = trec8_campaign(tmp_path)
    path = config_with(root, MAPPED)
    config = load_config(path, strict=False, systems=False)
    assert config.systems == ()
    assert config.tables == (str(root / "runs" / "trec8" / "runs.tsv"),)
