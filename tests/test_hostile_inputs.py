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
