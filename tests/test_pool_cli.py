"""`irbench pool` on the bundled demo campaign."""

from __future__ import annotations

from pathlib import Path

import irbench
from irbench import cli

DEMO = Path(__file__).resolve().parent.parent / "configs" / "demo.yaml"
QRELS = Path(__file__).resolve().parent.parent / "runs" / "demo" / "qrels.txt"


def test_build_reproduces_the_official_depth_20_pool(tmp_path, capsys):
    out = tmp_path / "assess"
    rc = cli.main(["pool", "build", str(DEMO), "--param", "k=20", "--per-group", "1",
                   "-o", str(out)])
    assert rc == 0
    official = irbench.read_qrels(str(QRELS))
    assert f"{len(official)} documents over 25 topics" in capsys.readouterr().out
    pooled = set()
    for f in out.glob("*.qrels"):
        for line in f.read_text().splitlines():
            qid, _, doc, _ = line.split()
            pooled.add((qid, doc))
    assert pooled == {(q.decode(), d.decode()) for q, d in zip(official.query_id,
                                                              official.doc_id)}


def test_bias_and_simulate_and_strategies(capsys):
    assert cli.main(["pool", "bias", str(DEMO), "--param", "k=20", "--per-group", "1"]) == 0
    assert "leaving one group out of the depth-20 pool" in capsys.readouterr().out
    assert cli.main(["pool", "simulate", str(DEMO), "--per-group", "1",
                     "--strategies", "budgeted,mtf"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("relevant found (of 460 official relevant)") and "mtf" in out
    assert cli.main(["pool", "strategies"]) == 0
    assert "depth" in capsys.readouterr().out


def test_bad_requests(capsys):
    assert cli.main(["pool", "build", str(DEMO), "--strategy", "nope"]) == 1
    assert "unknown pooling strategy 'nope'" in capsys.readouterr().err
    assert cli.main(["pool", "build", str(DEMO), "--pooled", "nobody"]) == 1
    assert "no system 'nobody'" in capsys.readouterr().err
    assert cli.main(["pool", "build"]) == 1
    assert cli.main(["pool", "build", str(DEMO), "--param", "k"]) == 1
