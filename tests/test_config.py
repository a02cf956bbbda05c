"""Campaign configs: what they accept, and every problem reported at once with line and path."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from irbench import cli
from irbench.config import default_store, load_config
from irbench.errors import ConfigError

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 {tag}\nq1 Q0 d2 2 1.0 {tag}\nq2 Q0 d3 1 1.0 {tag}\n"


@pytest.fixture
def campaign(tmp_path):
    """A campaign folder: configs/ beside runs/, with two runs, qrels and topics."""
    (tmp_path / "configs").mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "qrels.txt").write_text(QRELS)
    (runs / "input.alpha.gz").write_bytes(__import__("gzip").compress(
        RUN.format(tag="alphaTag").encode()))
    (runs / "beta.txt").write_text(RUN.format(tag="betaTag"))
    (runs / "topics.tsv").write_text("q1\tfirst topic\nq2\tsecond topic\n")
    return tmp_path


def write(campaign, text: str, name: str = "c.yaml"):
    path = campaign / "configs" / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def problems(path: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


def test_a_full_config(campaign):
    path = write(campaign, """
        name: trec-demo
        collection:
          topics: ../runs/topics.tsv
          qrels:
            official: ../runs/qrels.txt
          size: 1000
        systems:
          - glob: ../runs/*.gz
            group: g1
            type: automatic
          - name: b
            run: ../runs/beta.txt
            baseline: true
            metadata: {url: "http://example.org"}
        suites:
          core: [AP, nDCG@10, P_10, AP]
          extra: [AP, ERR@20]
        evaluation:
          topics: intersection
          relevance_level: 1
          depth: 100
          duplicates: first
        store: ../runs/demo.duckdb
        report: {title: x}
    """)
    config = load_config(path)
    assert config.name == "trec-demo"
    assert [s.name for s in config.systems] == ["alpha", "b"]
    assert config.systems[0].group == "g1" and config.systems[1].baseline
    assert config.systems[1].metadata == {"url": "http://example.org"}
    assert [str(m) for m in config.suites["core"]] == ["AP", "nDCG@10", "P@10"]
    assert [str(m) for m in config.measures] == ["AP", "nDCG@10", "P@10", "ERR@20"]
    assert config.settings.topics == "intersection" and config.settings.depth == 100
    assert config.settings.collection_size == 1000
    assert config.store == str(campaign / "runs" / "demo.duckdb")
    assert config.qrels[0].path == str(campaign / "runs" / "qrels.txt")
    assert len(config.sha256) == 64


def test_defaults_and_short_forms(campaign):
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt, a: {run: ../runs/input.alpha.gz, group: x}}
        suites: {core: [AP]}
    """)
    config = load_config(path)
    assert [q.name for q in config.qrels] == ["official"]
    assert [(s.name, s.group) for s in config.systems] == [("b", ""), ("a", "x")]
    assert config.settings.topics == "qrels" and config.settings.options().complete
    assert config.store == default_store(path) == str(campaign / "runs" / "c.duckdb")


def test_names_from_run_tags(campaign):
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: [{glob: "../runs/*", name_from: tag}]
        suites: {core: [AP]}
    """)
    # the glob also matches qrels.txt and topics.tsv, whose "tags" cannot be read
    found = problems(path)
    assert any("cannot read a run tag" in p for p in found)


def test_every_problem_at_once_with_line_and_path(campaign):
    path = write(campaign, """
        collection:
          qrels:
            official: ../runs/qrels.txt
            missing: ../runs/nope.txt
          colour: blue
        systems:
          - name: a
            run: ../runs/beta.txt
          - name: a
            run: ../runs/input.alpha.gz
          - name: c
            run: ../runs/x.txt
          - glob: ../runs/*.none
          - name: e
            run: ../../../etc/passwd
          - name: f
            run: ../runs/beta.txt
            baseline: maybe
            colour: red
        suites:
          core: [AP, nDGC@10, relstring, 5]
        evaluation:
          topics: some
          depth: -3
        extra: 1
    """)
    found = problems(path)
    expected = [
        (5, "collection.qrels.missing: no such file '../runs/nope.txt'"),
        (6, "collection.colour: unknown key"),
        (10, "systems[1]: system name 'a' ("),
        (13, "systems[2].run: no such file '../runs/x.txt'"),
        (14, "systems[3].glob: '../runs/*.none' matches no file"),
        (16, "systems[4].run: '../../../etc/passwd' leaves the campaign folder"),
        (19, "systems[5].baseline: must be true or false"),
        (20, "systems[5].colour: unknown key"),
        (22, "suites.core[1]: unknown measure 'nDGC@10' (did you mean nDCG@10?)"),
        (22, "suites.core[2]: 'relstring' is not a number per topic"),
        (22, "suites.core[3]: a measure name"),
        (24, "evaluation.topics: must be qrels (trec_eval -c) or intersection"),
        (25, "evaluation.depth: must be a positive whole number"),
        (26, "extra: unknown key"),
    ]
    for line, text in expected:
        assert any(p.startswith(f"{path}:{line}: {text}") for p in found), (line, text, found)
    assert len(found) == len(expected)


def test_a_glob_naming_two_runs_alike_suggests_run_tags(campaign):
    for group in ("x", "y"):
        (campaign / "runs" / group).mkdir()
        (campaign / "runs" / group / "run.txt").write_text(
            (campaign / "runs" / "beta.txt").read_text())
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems:
          - glob: ../runs/*/run.txt
        suites: {core: [AP]}
    """)
    [problem] = problems(path)
    assert "system name 'run' (" in problem and "x/run.txt)" in problem
    assert problem.endswith("name the glob's runs by their run tag (name_from: tag)")


def test_missing_run_is_not_fatal_for_the_runner(campaign):
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: [{name: gone, run: ../runs/gone.txt}, {name: b, run: ../runs/beta.txt}]
        suites: {core: [AP]}
    """)
    assert problems(path) == [f"{path}:3: systems[0].run: no such file '../runs/gone.txt'"]
    config = load_config(path, strict=False)
    assert list(config.missing_runs) == ["gone"]
    assert [s.name for s in config.systems] == ["gone", "b"]


@pytest.mark.parametrize("text,message", [
    ("collection: [\n", "not valid YAML"),
    ("", "empty config"),
    ("- a\n- b\n", "a config is a mapping"),
])
def test_not_a_config(campaign, text, message):
    path = campaign / "configs" / "bad.yaml"
    path.write_text(text)
    found = problems(str(path))
    assert len(found) == 1 and message in found[0] and found[0].startswith(f"{path}:")


def test_a_yaml_tag_is_a_problem_beside_the_others(campaign):
    path = campaign / "configs" / "bad.yaml"
    path.write_text("x: !!python/object:os.system ls\n")
    found = problems(str(path))
    assert found[0] == (f"{path}:1: x: YAML tags such as "
                        "'tag:yaml.org,2002:python/object:os.system' are not allowed")
    assert len(found) > 1  # the unknown key and the missing sections too


def test_absolute_paths_may_leave_the_folder(campaign, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "q.txt").write_text(QRELS)
    path = write(campaign, f"""
        collection: {{qrels: {elsewhere / 'q.txt'}}}
        systems: {{b: ../runs/beta.txt}}
        suites: {{core: [AP]}}
    """)
    assert load_config(path).qrels[0].path == str(elsewhere / "q.txt")


def test_a_config_outside_configs_keeps_to_its_folder(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN.format(tag="t"))
    path = tmp_path / "c.yaml"
    path.write_text("collection: {qrels: q.txt}\nsystems: {r: r.txt}\nsuites: {s: [AP]}\n")
    config = load_config(str(path))
    assert config.store == str(tmp_path / "c.duckdb")
    path.write_text("collection: {qrels: ../q.txt}\nsystems: {r: r.txt}\nsuites: {s: [AP]}\n")
    assert "leaves the campaign folder" in problems(str(path))[0]


def test_check_command(campaign, capsys):
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP, nDGC@10]}
    """)
    assert cli.main(["check", path]) == 2
    err = capsys.readouterr().err
    assert f"irbench: error: {path}:4: suites.core[1]: unknown measure 'nDGC@10'" in err
    assert "Traceback" not in err
    os.remove(path)
    assert cli.main(["check", path]) == 2
    assert "cannot read the config" in capsys.readouterr().err


def test_measures_needing_other_inputs_are_refused(campaign):
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP, alpha-nDCG@10, Coverage, map_avgjg, prefs_simp]}
    """)
    found = problems(path)
    assert len(found) == 4
    assert "needs a judgment-group qrels set" in found[2] and "kind: qrels_jg" in found[2]
    assert "needs a preference qrels set" in found[3] and "kind: prefs" in found[3]
    assert "needs a diversity qrels set" in found[0] and "kind: diversity" in found[0]
    assert "give their qrels as collection.known" in found[1]


def test_links_out_of_the_campaign_folder_are_refused(campaign):
    (campaign / "runs" / "evil.txt").symlink_to("/etc/passwd")
    path = write(campaign, """\
        collection: {qrels: ../runs/qrels.txt}
        systems:
          - {name: a, run: ../runs/evil.txt}
          - glob: ../runs/*.txt
        suites: {core: [AP]}
        """)
    found = problems(path)
    assert found[0] == (f"{path}:3: systems[0].run: '../runs/evil.txt' is a link leading out "
                        f"of the campaign folder {campaign} (write the absolute path to allow it)")
    assert found[1].startswith(f"{path}:4: systems[1].glob: '{campaign}/runs/evil.txt' is a link")


def test_pipes_and_devices_are_not_run_files(campaign):
    os.mkfifo(campaign / "runs" / "fifo")
    path = write(campaign, """\
        collection: {qrels: ../runs/qrels.txt}
        systems: {a: ../runs/fifo, b: /dev/zero}
        suites: {core: [AP]}
        """)
    assert [p.split(": ", 2)[2] for p in problems(path)] == [
        "is not a regular file (a pipe, device or socket) '../runs/fifo'",
        "is not a regular file (a pipe, device or socket) '/dev/zero'"]


@pytest.mark.parametrize("name", ["/abs/dir", "../..", ".hidden", "a b", "x/y", "", 7])
def test_a_campaign_name_is_an_identifier(campaign, name):
    path = write(campaign, f"""\
        name: {name!r}
        collection: {{qrels: ../runs/qrels.txt}}
        systems: {{b: ../runs/beta.txt}}
        suites: {{core: [AP]}}
        """)
    assert problems(path) == [f"{path}:1: name: a campaign name is letters, digits, '.', '_' "
                              "and '-', not starting with '.' (it names the report folder)"]


def test_a_store_under_a_file_is_refused(campaign):
    path = write(campaign, """\
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP]}
        store: ../runs/beta.txt/scores.duckdb
        """)
    assert problems(path) == [f"{path}:4: store: '../runs/beta.txt/scores.duckdb' cannot hold "
                              f"the store: {campaign}/runs/beta.txt is a file, not a folder"]


# ---- run tables: systems: {table: FILE} ----------------------------------------------------


INLINE_SYSTEMS = """
    - name: alpha
      run: ../runs/input.alpha.gz
      group: g1
      type: automatic
      description: "BM25, then a reranker"
      priority: 1
      pooled: true
    - name: beta
      run: ../runs/beta.txt
      group: g1
      baseline: true
      official: false
      priority: 2
      pooled: false
"""


def table_config(campaign, systems: str, name: str = "t.yaml") -> str:
    return write(campaign, "collection: {qrels: ../runs/qrels.txt}\nsystems: " + systems
                 + "\nsuites: {core: [AP]}\n", name)


@pytest.mark.parametrize("file,text", [
    ("runs.tsv", "run\tgroup\ttype\tdescription\tpriority\tpooled\tbaseline\tofficial\n"
                 "input.alpha.gz\tg1\tautomatic\tBM25, then a reranker\t1\ttrue\t\t\n"
                 "beta.txt\tg1\t\t\t2\tfalse\ttrue\tfalse\n"),
    # CSV as a spreadsheet writes it: quoted cells, TRUE/FALSE, a byte-order mark, CRLF,
    # names given, columns in another order and capitalised, a blank line
    ("runs.csv", '\ufeffName,Run,Group,Type,Description,Priority,Pooled,Baseline,Official\r\n'
                 'alpha,input.alpha.gz,g1,automatic,"BM25, then a reranker",1,TRUE,,\r\n\r\n'
                 'beta,beta.txt,g1,,,2,FALSE,TRUE,FALSE\r\n'),
    # another extension: the delimiter is sniffed
    ("runs.list", "run\tgroup\ttype\tdescription\tpriority\tpooled\tbaseline\tofficial\n"
                  "input.alpha.gz\tg1\tautomatic\tBM25, then a reranker\t1\ttrue\tfalse\t\n"
                  "beta.txt\tg1\t\t\t2\tfalse\ttrue\tfalse\n"),
])
def test_a_run_table_gives_the_systems_of_inline_entries(campaign, file, text):
    (campaign / "runs" / file).write_text(text, encoding="utf-8", newline="")
    inline = load_config(write(campaign, "collection: {qrels: ../runs/qrels.txt}\nsystems:"
                               + textwrap.indent(textwrap.dedent(INLINE_SYSTEMS), "  ")
                               + "suites: {core: [AP]}\n", "inline.yaml"))
    tabled = load_config(table_config(campaign, f"{{table: ../runs/{file}}}"))
    assert tabled.systems == inline.systems
    assert [s.description for s in tabled.systems] == ["BM25, then a reranker", ""]
    # the table is an input of the run, so that editing it invalidates the run stamp
    assert tabled.tables == (str(campaign / "runs" / file),)
    assert str(campaign / "runs" / file) in tabled.inputs()


def test_a_run_table_beside_inline_entries_and_globs(campaign):
    (campaign / "runs" / "runs.tsv").write_text("run\nbeta.txt\n")
    path = table_config(campaign, """
  - glob: ../runs/*.gz
  - table: ../runs/runs.tsv
  - {name: again, run: ../runs/beta.txt, type: manual}""")
    config = load_config(path)
    assert [(s.name, s.type) for s in config.systems] == [
        ("alpha", ""), ("beta", ""), ("again", "manual")]


def test_every_problem_of_a_run_table_at_once_with_its_line(campaign):
    table = campaign / "runs" / "runs.tsv"
    table.write_text(
        "run\tname\tpooled\tpriority\tcolour\n"   # 1: colour: kept as metadata
        "beta.txt\tb\tmaybe\t0\tred\n"            # 2: pooled, priority
        "input.alpha.gz\tb\t\t\t\n"               # 3: name b again
        "\n"                                      # 4: blank, skipped
        "gone.txt\t\t\t\t\n"                      # 5: no such run file
        "beta.txt\tc\ttrue\t1\tx\textra\n"        # 6: a cell too many
        "\tnameless\n"                            # 7: no run
        "../../outside.txt\te\n")                 # 8: leaves the campaign folder
    path = table_config(campaign, """
  - table: ../runs/runs.tsv
  - {name: b, run: ../runs/beta.txt}""")
    shown = str(table)
    assert problems(path) == [
        f"{path}:4: systems[1]: system name 'b' ({campaign}/runs/beta.txt) also used at "
        f"{shown}:2 ({campaign}/runs/beta.txt)",
        f"{shown}:2: pooled: must be yes or no (true/false, yes/no, y/n, on/off or 1/0, in "
        "any letter case), not 'maybe'",
        f"{shown}:2: priority: must be a whole number >= 1 (1 first), not 0",
        f"{shown}:3: system name 'b' ({campaign}/runs/input.alpha.gz) also used at "
        f"{shown}:2 ({campaign}/runs/beta.txt)",
        f"{shown}:5: run: no such file 'gone.txt'",
        f"{shown}:6: 6 cells, the header names 5 columns",
        f"{shown}:7: run: empty: each row names its run file",
        f"{shown}:8: run: '../../outside.txt' leaves the campaign folder {campaign} "
        "(write an absolute path to allow it)",
    ]


def test_a_run_table_names_itself_as_the_config_names_it(campaign, monkeypatch):
    (campaign / "runs" / "runs.csv").write_text("run,pooled\nbeta.txt,perhaps\n")
    table_config(campaign, "{table: ../runs/runs.csv}")
    monkeypatch.chdir(campaign)
    assert problems("configs/t.yaml") == [
        "runs/runs.csv:2: pooled: must be yes or no (true/false, yes/no, y/n, on/off or 1/0, "
        "in any letter case), not 'perhaps'"]


def test_a_missing_run_of_a_table_is_not_fatal_for_the_runner(campaign):
    (campaign / "runs" / "runs.tsv").write_text("run\tname\ngone.txt\tgone\nbeta.txt\tb\n")
    path = table_config(campaign, "{table: ../runs/runs.tsv}")
    shown = campaign / "runs" / "runs.tsv"
    assert problems(path) == [f"{shown}:2: run: no such file 'gone.txt'"]
    config = load_config(path, strict=False)
    assert config.missing_runs == {"gone": f"{shown}:2: run: no such file 'gone.txt'"}
    assert [s.name for s in config.systems] == ["gone", "b"]


def test_a_run_table_may_not_leave_the_campaign_folder(campaign, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "runs.tsv").write_text(f"run\n{campaign}/runs/beta.txt\n")
    path = table_config(campaign, "{table: ../../elsewhere/runs.tsv}")
    [problem] = problems(path)
    assert problem.startswith(f"{path}:2: systems.table: '../../elsewhere/runs.tsv' leaves "
                              "the campaign folder")
    # written absolute, it may (and so may its rows, written absolute)
    config = load_config(table_config(campaign, f"[{{table: {elsewhere}/runs.tsv}}]"))
    assert [s.path for s in config.systems] == [str(campaign / "runs" / "beta.txt")]
    # a link out of the campaign folder is refused like a '..' path
    os.symlink(elsewhere / "runs.tsv", campaign / "runs" / "link.tsv")
    [problem] = problems(table_config(campaign, "{table: ../runs/link.tsv}"))
    assert "systems.table: '../runs/link.tsv' is a link leading out of" in problem


@pytest.mark.parametrize("content,message", [
    (b"", "systems.table: '../runs/bad.tsv' is empty: a run table has a header row"),
    (b"name\tgroup\nx\ty\n", "bad.tsv:1: no 'run' column"),
    (b"run\tgroup\n", "bad.tsv:1: no rows under the header"),
    (b"run\tgroup\tgroup\nbeta.txt\tg\th\n", "bad.tsv:1: column 3: 'group' given twice"),
    (b"run\t\nbeta.txt\tx\n", "bad.tsv:1: column 2 has no name"),
    (b"run\nbeta.txt\n\xff.txt\n", "bad.tsv:3: not UTF-8 text"),
    (b'run\n"beta.txt\n', "bad.tsv:2: not CSV/TSV"),
])
def test_a_table_that_is_no_run_table(campaign, content, message):
    (campaign / "runs" / "bad.tsv").write_bytes(content)
    found = problems(table_config(campaign, "{table: ../runs/bad.tsv}"))
    assert any(message in p for p in found), found


def test_table_alone_in_the_mapping_form(campaign):
    (campaign / "runs" / "runs.tsv").write_text("run\nbeta.txt\n")
    path = table_config(campaign, "{table: ../runs/runs.tsv, a: ../runs/input.alpha.gz}")
    assert problems(path) == [f"{path}:2: systems.table: a run table is given alone (systems: "
                              "{table: FILE}, with its columns and run) or as an item of the "
                              "systems list (- table: FILE); a system named table is written "
                              "in the list form"]
    path = table_config(campaign, "[{table: ../runs/runs.tsv, group: g}]")
    assert problems(path) == [f"{path}:2: systems[0].group: unknown key (a run table entry "
                              "takes table, columns and run; the systems' fields are columns "
                              "of the table)"]
    path = table_config(campaign, "{table: s3://bucket/runs.tsv}")
    assert problems(path) == [f"{path}:2: systems.table: a run table is a local file (its "
                              "runs may be URLs)"]


# ---- report options ------------------------------------------------------------------------


def test_report_options_are_refused_with_their_line(campaign):

    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP]}
        report:
          title: 2024
          measure: nDGC@10
          rank_by:
            - type
            - grup
            - metadata
            - type
          pool_depht: 10
          reduction_design: uniform
    """)
    found = list(load_config(path).report.problems)
    assert found == [
        f"{path}:6: report.title: must be text, the report's heading (default: the config's "
        "name), not 2024",
        f"{path}:7: report.measure: unknown measure 'nDGC@10' (did you mean nDCG@10?); "
        "'irbench measures' lists them all",
        f"{path}:10: report.rank_by[1]: unknown system field 'grup' (did you mean group?) "
        "(rank_by takes group, type, description, baseline, official, priority, pooled, kind)",
        f"{path}:11: report.rank_by[2]: unknown system field 'metadata' (rank_by takes group, "
        "type, description, baseline, official, priority, pooled, kind)",
        f"{path}:12: report.rank_by[3]: type given twice",
        f"{path}:13: report.pool_depht: unknown option (did you mean pool_depth?) (report "
        "takes leaderboard_suites, measure, pool_depth, pooled_per_group, rank_by, "
        "reduction_design, title)",
        f"{path}:14: report.reduction_design: must be one of buckley-voorhees, sampled, "
        "not 'uniform'",
    ]


def test_report_title_and_rank_by(campaign):

    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP]}
        report: {title: "TREC 2024 <Deep> Learning", rank_by: [type, group, official, pooled]}
    """)
    config = load_config(path)
    assert list(config.report.problems) == []
    assert config.report.title == "TREC 2024 <Deep> Learning"
    assert config.report.rank_by == ("type", "group", "official", "pooled")
    path = write(campaign, """
        collection: {qrels: ../runs/qrels.txt}
        systems: {b: ../runs/beta.txt}
        suites: {core: [AP]}
        report: {rank_by: type}
    """)
    [problem] = list(load_config(path).report.problems)
    assert problem.startswith(f"{path}:5: report.rank_by: must be a list of system fields")


def test_editing_a_run_table_is_a_change_the_run_stamp_sees(campaign, tmp_path, monkeypatch):
    from irbench.runner import stamp

    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    table = campaign / "runs" / "runs.tsv"
    table.write_text("run\tgroup\nbeta.txt\tg1\n")
    path = table_config(campaign, "{table: ../runs/runs.tsv}")
    time.sleep(0.1)  # older than the racy window
    assert cli.main(["run", "--workers", "1", "--quiet", path]) == 0
    assert stamp.answer_unchanged_run(["run", "--quiet", path]) == 0
    table.write_text("run\tgroup\nbeta.txt\tg2\n")  # same size
    assert stamp.answer_unchanged_run(["run", "--quiet", path]) is None
