"""Participants' files built to hurt: each gets a message, the other systems are scored."""

from __future__ import annotations

from campaigns import make_campaign

from irbench.config import load_config
from irbench.runner import run_campaign
from irbench.submissions.ir_metadata import MAX_BLOCK_BYTES, find_ir_metadata

ALIASES = "".join(f"# {chr(97 + i)}: &{chr(97 + i)} [" + ",".join(
    [f"*{chr(96 + i)}"] * 9 if i else ['"x"'] * 9) + "]\n" for i in range(9))
HEADER = "# ir_metadata.start\n" + ALIASES + "# ir_metadata.end\n"

def test_metadata_aliases_are_refused_unexpanded():
    block = find_ir_metadata((HEADER + "1 Q0 d1 1 1.0 r\n").encode())
    assert block.data == {}
    assert block.problems == ((3, "ir_metadata may not use YAML aliases"),)

def test_a_huge_metadata_block_is_refused():
    body = "".join(f"# k{i}: {'v' * 60}\n" for i in range(MAX_BLOCK_BYTES // 60))
    block = find_ir_metadata(f"# ir_metadata.start\n{body}# ir_metadata.end\n".encode())
    assert block.data == {} and "at most 65,536" in block.problems[0][1]

def test_a_run_with_an_alias_bomb_header_does_not_stop_the_campaign(tmp_path):
    path = make_campaign(tmp_path, systems=3)
    victim = tmp_path / "runs" / "r01.txt"
    victim.write_text(HEADER + victim.read_text())
    report = run_campaign(load_config(path), workers=1)
    assert report.failures == [] and report.evaluated == 6  # 3 systems x 2 qrels sets


def test_participant_strings_are_inert_in_every_format():
    from irbench.escaping import csv_cell, markdown_cell, terminal
    from irbench.stats import escape_latex

    assert csv_cell('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)" and csv_cell("-0.25") == "-0.25"
    assert csv_cell(0.5) == 0.5 and csv_cell("plain") == "plain"
    assert markdown_cell("<img src=x onerror=alert(1)>|x\ny") == (
        "&lt;img src=x onerror=alert(1)&gt;\\|x y")
    latex = escape_latex("b\n\\input{/etc/passwd}")
    assert "\n" not in latex and "\\input" not in latex
    assert terminal("tag\x1b]0;owned\x07\x1b[2K\r") == "tag\\x1b]0;owned\\x07\\x1b[2K\\x0d"


def test_escape_sequences_never_reach_the_terminal(tmp_path, capsys):
    from irbench import cli

    path = make_campaign(tmp_path, systems=2)
    evil = tmp_path / "runs" / "r01.txt"
    evil.write_text(evil.read_text().replace("tag01", "tag\x1b[2J\x1b]0;x\x07"))
    path.write_text(path.read_text().replace("  - glob: ../runs/r*.txt",
                                             "  - glob: ../runs/r*.txt\n    name_from: tag"))
    assert cli.main(["run", "--workers", "1", str(path)]) == 0
    assert cli.main(["systems", str(path)]) == 0
    assert cli.main(["scores", str(path)]) == 0
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out + captured.err and "\\x1b[2J" in captured.out
