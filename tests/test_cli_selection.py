"""What ``irbench scores`` and ``irbench compare`` are asked for (--system, --measure, --qrels),
checked against the config and the store: a name the store holds nothing for is an error that
says why and how to fix it (exit 1), never an empty table. On the bundled demo campaign, scored
into a temporary folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from campaigns import copy_demo

from irbench import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    config = copy_demo(tmp_path_factory.mktemp("selection"))
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 0
    return config


@pytest.fixture
def changed(demo, tmp_path):
    """A copy of the scored demo (store included) whose config is edited afterwards."""
    shutil.copytree(demo.parent.parent, tmp_path / "c")
    config = tmp_path / "c" / "configs" / "demo.yaml"

    def edit(old: str, new: str) -> str:
        text = config.read_text()
        assert old in text
        config.write_text(text.replace(old, new))
        return str(config)

    return edit


def errors(capsys) -> list[str]:
    out, err = capsys.readouterr()
    assert out == ""  # no table, not even an empty one
    lines = err.splitlines()
    assert lines and all(line.startswith("irbench: error: ") for line in lines)
    return [line[len("irbench: error: "):] for line in lines]


@pytest.mark.parametrize("command", ["scores", "compare"])
def test_an_unknown_system_names_close_matches(demo, capsys, command):
    assert cli.main([command, str(demo), "--system", "groupA-l", "--system", "groupB-1"]) == 1
    (error,) = errors(capsys)
    assert error.startswith(f"no system 'groupA-l' in {demo} or its store (did you mean ")
    assert "groupA-1" in error.split("did you mean")[1]
    assert cli.main([command, str(demo), "--system", "zzzz"]) == 1
    (error,) = errors(capsys)
    assert "(the store has groupA-1, groupA-2, " in error  # nothing close: all 12 listed
    assert error.endswith(f"; 'irbench systems {demo}' lists them")


@pytest.mark.parametrize("command", ["scores", "compare"])
def test_a_measure_in_no_suite_says_how_to_fix_it(demo, capsys, command):
    assert cli.main([command, str(demo), "--measure", "ERR@10"]) == 1
    (error,) = errors(capsys)
    assert error.startswith(f"measure 'ERR@10' is in none of the suites of {demo} "
                            "(core, incomplete, graded), so no 'irbench run' scores it: add it "
                            f"to a suite under suites: and run 'irbench run {demo}' ")
    assert "did you mean ERR@20" in error and "first" not in error


def test_every_problem_at_once(demo, capsys):
    assert cli.main(["scores", str(demo), "--system", "groupZ", "--measure", "ERR@10",
                     "--measure", "AP"]) == 1
    lines = errors(capsys)
    assert [line.split(" ", 2)[:2] for line in lines] == [["no", "system"],
                                                          ["measure", "'ERR@10'"]]


def test_what_the_store_holds_is_answered(demo, capsys):
    assert cli.main(["scores", str(demo), "--system", "groupA-1", "--measure", "ERR@20",
                     "--qrels", "depth5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["system", "ERR@20"] and out[2].split()[0] == "groupA-1"


def test_a_declared_system_not_scored_yet(changed, capsys):
    config = changed("  - {name: groupA-2,",
                     "  - {name: late, run: ../runs/demo/runs/groupA-2.txt}\n"
                     "  - {name: groupA-2,")
    assert cli.main(["scores", config, "--system", "late"]) == 1
    assert errors(capsys) == [f"system 'late' has no stored scores on qrels 'official' "
                              f"(not run): run 'irbench run {config}'"]


def test_a_suite_measure_not_scored_yet(changed, capsys):
    config = changed("graded: [nDCG(gain=exp)@10,", "graded: [ERR@10, nDCG(gain=exp)@10,")
    for command in ("scores", "compare"):
        assert cli.main([command, config, "--measure", "ERR@10"]) == 1
        assert errors(capsys) == [f"no stored scores for measure 'ERR@10' on qrels 'official' "
                                  f"(suite graded of {config}): run 'irbench run {config}' "
                                  "first"]


def test_a_qrels_set_not_scored_yet(changed, capsys):
    config = changed("    depth5: ../runs/demo/qrels.depth5.txt\n",
                     "    depth5: ../runs/demo/qrels.depth5.txt\n"
                     "    again: ../runs/demo/qrels.txt\n")
    for command in ("scores", "compare"):
        assert cli.main([command, config, "--qrels", "again"]) == 1
        assert errors(capsys) == [f"the store holds no scores on qrels 'again': run 'irbench "
                                  f"run {config}' first"]


def test_a_mistyped_baseline_names_close_matches(demo, capsys):
    assert cli.main(["compare", str(demo), "--baseline", "groupA1", "--measure", "AP"]) == 1
    (error,) = errors(capsys)
    assert error.startswith("baseline 'groupA1' is not among the compared systems "
                            "(did you mean groupA-1")


def test_compare_table_has_a_header_for_every_column(demo, capsys):
    assert cli.main(["compare", str(demo), "--measure", "AP", "--system", "groupA-1",
                     "--system", "groupB-1", "--system", "groupC-1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, rule = lines[1], lines[2]
    assert header.split()[-1] == "sig" and len(header) == len(rule)
    # each run of dashes has a header above it (no blank column title)
    start = 0
    for dashes in rule.split("  "):
        assert header[start:start + len(dashes)].strip(), (header, dashes)
        start += len(dashes) + 2
    significant = [line for line in lines[3:] if line.endswith("*")]
    assert significant and all(line.startswith("group") for line in lines[3:6])


def test_suggestions():
    from irbench.cli.selection import _suggest

    assert _suggest("ERR@10", ["AP", "ERR@20"], "measures") == " (did you mean ERR@20?)"
    assert _suggest("zz", ["AP", "P@10"], "measures") == " (the store has AP, P@10)"
    assert _suggest("zz", [f"s{i}" for i in range(30)], "systems") == \
        " (the store has 30 systems)"
    assert _suggest("zz", [], "systems") == ""
