"""Declared pools (issue 14.1): `pooled: true|false` per system decides which runs the pool
bias analysis rebuilds the pool from; how much of the qrels that pool holds is shown, with a
warning on the page and on stderr when it is not the judged pool; `pool build --name` records
the runs that contributed."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from irbench import cli
from irbench.config import load_config
from irbench.errors import ConfigError
from irbench.store import Store

DEPTH = 10
# group -> (run, priority, pooled): groups pool 2, 1 and 0 runs, with ties in priority
SYSTEMS = [("A-1", "A", 1, True), ("A-2", "A", 1, True), ("A-3", "A", 2, False),
           ("B-1", "B", 1, False), ("B-2", "B", 1, True), ("B-3", "B", 3, False),
           ("C-1", "C", 1, False), ("C-2", "C", 2, False)]


def _campaign(root: Path, flags: bool = True, report: str = "") -> Path:
    """Runs over 6 topics x 40 documents; qrels judged from the depth-10 pool of exactly the
    runs marked pooled (relevance from a seeded draw per document)."""
    rng = np.random.default_rng(5)
    topics = [f"t{t}" for t in range(1, 7)]
    relevance = {(t, f"{t}-d{d:02d}"): int(rng.random() < 0.3) * int(rng.integers(1, 3))
                 for t in topics for d in range(40)}
    (root / "runs").mkdir(parents=True)
    pooled_docs = set()
    for name, _, _, pooled in SYSTEMS:
        lines = []
        for t in topics:
            order = rng.permutation(40)
            for rank, d in enumerate(order[:25], 1):
                lines.append(f"{t} Q0 {t}-d{d:02d} {rank} {100 - rank} {name}")
                if pooled and rank <= DEPTH:
                    pooled_docs.add((t, f"{t}-d{d:02d}"))
        (root / "runs" / f"{name}.txt").write_text("\n".join(lines) + "\n")
    (root / "runs" / "qrels.txt").write_text("".join(
        f"{t} 0 {d} {relevance[t, d]}\n" for t, d in sorted(pooled_docs)))
    entries = "".join(
        f"  - {{name: {n}, run: runs/{n}.txt, group: {g}, priority: {p}"
        + (f", pooled: {str(pooled).lower()}" if flags else "") + "}\n"
        for n, g, p, pooled in SYSTEMS)
    config = root / "c.yaml"
    config.write_text(textwrap.dedent("""\
        collection: {qrels: runs/qrels.txt}
        suites: {core: [AP, P@10]}
        """) + "systems:\n" + entries
        + f"report: {{pool_depth: {DEPTH}{', ' + report if report else ''}}}\n")
    return config


def _removed_relevant(root: Path) -> dict[str, int]:
    """Independently: per group, the relevant judged documents only its pooled runs brought
    into the depth-10 pool."""
    contributors: dict[tuple[str, str], set[str]] = {}
    for name, group, _, pooled in SYSTEMS:
        if not pooled:
            continue
        for line in (root / "runs" / f"{name}.txt").read_text().splitlines():
            t, _, d, rank, _, _ = line.split()
            if int(rank) <= DEPTH:
                contributors.setdefault((t, d), set()).add(group)
    relevant = {(t, d) for t, _, d, r in (x.split() for x in
                (root / "runs" / "qrels.txt").read_text().splitlines()) if int(r) >= 1}
    out = {g: 0 for _, g, _, _ in SYSTEMS}
    for key, groups in contributors.items():
        if len(groups) == 1 and key in relevant:
            out[next(iter(groups))] += 1
    return out


def _report(path: Path, capsys) -> tuple[str, str, dict]:
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    out = path.parent / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    with Store(load_config(path).store, read_only=True) as store:
        _, rows = store.query("SELECT result FROM analyses WHERE kind = ?",
                              ["leave-one-group-out"])
    return (out / "index.html").read_text(), err, json.loads(rows[-1][0])


def test_declared_pool_is_the_judged_pool(tmp_path, capsys):
    path = _campaign(tmp_path)
    assert load_config(path).pooled_systems() == ("A-1", "A-2", "B-2")
    page, err, data = _report(path, capsys)
    judged = len((tmp_path / "runs" / "qrels.txt").read_text().splitlines())
    assert data["coverage"] == [judged, judged, judged, 0]
    assert f"holds {judged:,} of the {judged:,} judged documents (100.0%); 0 of its" in page
    assert "3 run(s) declared pooled: true" in page
    assert "pool bias" not in err and 'class="warning"' not in page
    expected = _removed_relevant(tmp_path)
    got = {unit: rel for unit, rel in zip(data["unit"], data["removed_relevant"])}
    assert got == {g: n for g, n in expected.items() if g in got}
    assert expected["C"] == 0 and got["C"] == 0  # group C pooled nothing: nothing removed


def test_a_pool_rebuilt_by_priority_is_not_the_judged_one_and_says_so(tmp_path, capsys):
    path = _campaign(tmp_path, flags=False, report="pooled_per_group: 1")
    page, err, data = _report(path, capsys)
    judged, covered, pooled, unjudged = data["coverage"]
    assert covered < judged or unjudged > 0
    assert "irbench: warning: pool bias: the rebuilt pool holds" in err
    assert "not the pool that was judged" in err and "pooled: true|false" in err
    assert 'class="warning"' in page and "not the pool that was judged" in page


def test_pooled_must_be_a_boolean(tmp_path):
    path = _campaign(tmp_path)
    path.write_text(path.read_text().replace("pooled: true", "pooled: yes please", 1))
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "systems[0].pooled" in str(exc.value) or "pooled: must be true or false" in \
        str(exc.value)
    assert "must be true or false" in str(exc.value)


def test_pool_build_uses_and_records_the_declared_runs(tmp_path, capsys):
    path = _campaign(tmp_path)
    assert cli.main(["pool", "build", str(path), "--param", f"k={DEPTH}", "--name", "p1"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    judged = len((tmp_path / "runs" / "qrels.txt").read_text().splitlines())
    assert f"depth pool (seed 0): {judged} documents" in captured.out
    with Store(load_config(path).store, read_only=True) as store:
        _, rows = store.query("SELECT params FROM pool_builds WHERE pool = ?", ["p1"])
    assert json.loads(rows[0][0])["contributing"] == ["A-1", "A-2", "B-2"]
    assert cli.main(["pool", "build", str(path), "--param", f"k={DEPTH}", "--pooled",
                     "A-1"]) == 0
    assert "other runs than the config declares 'pooled: true'" in capsys.readouterr().err
    assert cli.main(["pool", "stats", str(path), "--param", f"k={DEPTH}"]) == 0
    assert f"pool: {judged} documents" in capsys.readouterr().out


def test_pool_bias_command_warns_when_the_pool_is_not_the_judged_one(tmp_path, capsys):
    path = _campaign(tmp_path)
    assert cli.main(["pool", "bias", str(path), "--param", f"k={DEPTH}"]) == 0
    assert "warning" not in capsys.readouterr().err  # the declared pool: the judged one
    assert cli.main(["pool", "bias", str(path), "--param", f"k={DEPTH}", "--pooled", "A-1",
                     "--pooled", "C-1"]) == 0
    assert "not the pool that was judged" in capsys.readouterr().err
