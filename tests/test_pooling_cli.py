"""`irbench pool` on the bundled demo campaign."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaigns import copy_demo

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
    assert cli.main(["pool", "stats", str(DEMO), "--param", "k=20", "--per-group", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pool: 1488 documents over 25 topics, 1488 judged, 460 relevant")
    assert "judged@10" in out
    assert cli.main(["pool", "strategies"]) == 0
    assert "depth" in capsys.readouterr().out


def test_bias_lists_every_run_and_exports_csv_and_json(tmp_path, capsys):
    import csv
    import io
    import json

    base = ["pool", "bias", str(DEMO), "--param", "k=20", "--per-group", "1"]
    assert cli.main(base) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("AP, leaving one group out of the depth-20 pool: mean change ")
    assert lines[1].split()[:4] == ["run", "group", "left", "out"]
    assert len(lines) == 3 + 12  # every run of the demo, not the 5 most affected
    assert cli.main(base + ["--top", "2", "--measure", "AP", "--measure", "P@10"]) == 0
    out = capsys.readouterr().out
    assert "(the 2 runs most affected of 12)" in out and out.count("\ngroup") == 4
    assert cli.main(base + ["--format", "csv", "--measure", "AP", "--measure", "P@10"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 24 and {r["measure"] for r in rows} == {"AP", "P@10"}
    ap = [r for r in rows if r["measure"] == "AP"]
    changes = [float(r["change"]) for r in ap]
    assert changes == sorted(changes)  # the most affected first
    assert ap[0]["left_out"] == ap[0]["run"].split("-")[0]
    assert float(ap[0]["reduced"]) - float(ap[0]["full"]) == pytest.approx(changes[0])
    out_file = tmp_path / "bias.json"
    assert cli.main(base + ["--format", "json", "--top", "3", "-o", str(out_file)]) == 0
    assert capsys.readouterr().out == ""
    doc = json.loads(out_file.read_text())
    assert doc["by"] == "group" and doc["pool"]["k"] == 20 and doc["coverage"]["exact"]
    (ap_doc,) = doc["measures"]
    assert ap_doc["measure"] == "AP" and len(ap_doc["runs"]) == 3
    assert [r["run"] for r in ap_doc["runs"]] == [r["run"] for r in ap[:3]]
    assert ap_doc["max_drop"] == pytest.approx(-changes[0])
    with pytest.raises(SystemExit) as refused:  # a usage error, from the parser
        cli.main(base + ["--top", "0"])
    assert refused.value.code == 2
    assert "argument --top: must be a positive integer, not 0" in capsys.readouterr().err


def test_bias_csv_neutralises_formulas_in_names(tmp_path, capsys):
    import csv
    import io
    import shutil

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "runs" / "demo", tmp_path / "runs" / "demo")
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "demo.yaml"
    config.write_text(DEMO.read_text().replace(
        "  - name: groupA-1\n", "  - name: \"=HYPERLINK(\\\"http://x\\\")\"\n").replace(
        "  - {glob: ../runs/demo/runs/groupB-*.txt, group: groupB}",
        "  - {glob: ../runs/demo/runs/groupB-*.txt, group: '@evil'}"))
    assert cli.main(["pool", "bias", str(config), "--param", "k=20", "--per-group", "1",
                     "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert "'=HYPERLINK(\"http://x\")" in {r["run"] for r in rows}
    assert "'@evil" in {r["left_out"] for r in rows}
    assert not any(v.startswith(("=", "@")) for r in rows for v in r.values())


def test_bad_requests(capsys):
    assert cli.main(["pool", "build", str(DEMO), "--strategy", "nope"]) == 1
    assert "unknown pooling strategy 'nope'" in capsys.readouterr().err
    assert cli.main(["pool", "build", str(DEMO), "--pooled", "nobody"]) == 1
    assert "no system 'nobody'" in capsys.readouterr().err
    assert cli.main(["pool", "build", str(DEMO), "--pooled", "groupA1"]) == 1
    assert "no system 'groupA1' in the config (did you mean groupA-1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse: a usage error, with the usage
        cli.main(["pool", "build"])
    assert exc.value.code == 2
    assert "irbench pool build: error: the following arguments are required: config" in \
        capsys.readouterr().err
    assert cli.main(["pool", "build", str(DEMO), "--param", "k"]) == 1


@pytest.mark.parametrize("action", ["build", "stats", "simulate", "bias", "start", "next",
                                    "judge", "status"])
def test_each_pool_subcommand_has_its_own_help(action, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["pool", action, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: irbench pool {action} ")
    takes = {"build": "--strategy", "bias": "--format", "simulate": "--strategies",
             "next": "--batch", "judge": "--judgments", "start": "--budget",
             "stats": "--per-group", "status": "--name"}[action]
    assert takes in out
    if action in ("stats", "bias", "status"):
        assert "--judgments" not in out and "--batch" not in out  # only its own options


def test_judging_over_days(tmp_path, capsys):

    config = str(copy_demo(tmp_path))
    official = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, r = line.split()
        official[(q, d)] = r
    base = ["pool"]
    assert cli.main(base + ["start", config, "--name", "p", "--strategy", "mtf",
                            "--per-group", "1", "--budget", "6"]) == 0
    assert cli.main(base + ["start", config, "--name", "p"]) == 1  # exists already
    judged = 0
    for day in range(3):  # each command is a new process's worth of state: the store keeps it
        batch = tmp_path / f"batch{day}.txt"
        assert cli.main(base + ["next", config, "--name", "p", "-o", str(batch)]) == 0
        lines = batch.read_text().splitlines()
        assert lines and all(line.endswith(" -1") for line in lines)
        filled = tmp_path / f"judged{day}.txt"
        filled.write_text("".join(f"{q} 0 {d} {official.get((q, d), '0')}\n"
                                  for q, _, d, _ in (line.split() for line in lines)))
        if day == 1:  # a bad file is refused whole, and nothing recorded before is lost
            bad = tmp_path / "bad.txt"
            bad.write_text(filled.read_text() + "401 0 SIM-99999999 1\n")
            assert cli.main(base + ["judge", config, "--name", "p", "-j", str(bad)]) == 2
            assert "is not in the pool" in capsys.readouterr().err
        assert cli.main(base + ["judge", config, "--name", "p", "-j", str(filled)]) == 0
        judged += len(lines)
    capsys.readouterr()
    # the same file again (a natural re-submit after a crash): nothing recorded twice
    assert cli.main(base + ["judge", config, "--name", "p", "-j", str(filled)]) == 0
    assert "0 new judgments recorded" in capsys.readouterr().out
    # an assessor file is never overwritten by the next batch
    before = filled.read_text()
    assert cli.main(base + ["next", config, "--name", "p", "-o", str(filled)]) == 1
    assert "exists already" in capsys.readouterr().err and filled.read_text() == before
    assert cli.main(base + ["status", config, "--name", "p"]) == 0
    assert f"{judged} judged, 0 handed out" in capsys.readouterr().out
    assert cli.main(base + ["build", config, "--param", "k=20", "--per-group", "1",
                            "--name", "official"]) == 0
    from irbench.store import Store

    with Store(str(tmp_path / "runs" / "demo.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT count(*), count(DISTINCT batch) FROM judgments")
        assert rows == [(judged, 3)]
        _, docs = store.query("SELECT count(*) FROM pool_docs WHERE pool = 'official'")
        _, prov = store.query("SELECT count(*), count(DISTINCT run), max(rank) "
                              "FROM pool_provenance WHERE pool = 'official'")
    assert docs == [(len(official),)] and prov == [(4 * 25 * 20, 4, 20)]


def test_simulate_honours_the_strategy_parameters(capsys):
    """--param reaches every simulated strategy that declares it (max_depth: candidates only
    down to the judged depth); a parameter no strategy takes is refused, not ignored."""
    base = ["pool", "simulate", str(DEMO), "--per-group", "1", "--strategies", "budgeted,mtf"]
    assert cli.main(base) == 0
    full = capsys.readouterr().out
    assert cli.main(base + ["--param", "max_depth=3"]) == 0
    shallow = capsys.readouterr().out
    assert shallow != full
    assert cli.main(base + ["--param", "maxdepth=20"]) == 1
    assert "parameter 'maxdepth' is taken by none of the strategies" in capsys.readouterr().err
