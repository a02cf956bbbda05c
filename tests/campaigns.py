"""Small seeded campaigns on disk for runner and store tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np


def write_run(path: Path, rng: np.random.Generator, topics: list[str], depth: int, tag: str,
              docs_per_topic: int = 300) -> None:
    lines = []
    for t in topics:
        docs = rng.choice(docs_per_topic, size=min(depth, docs_per_topic), replace=False)
        scores = np.round(np.sort(rng.random(len(docs)))[::-1] * 100, 2)  # some ties
        lines += [f"{t} Q0 {t}-D{d:04d} {i + 1} {s:.2f} {tag}"
                  for i, (d, s) in enumerate(zip(docs, scores))]
    path.write_text("\n".join(lines) + "\n")


def write_qrels(path: Path, rng: np.random.Generator, topics: list[str], judged: int = 60,
                docs_per_topic: int = 300, max_level: int = 2) -> None:
    lines = []
    for t in topics:
        docs = np.sort(rng.choice(docs_per_topic, size=judged, replace=False))
        levels = rng.integers(0, max_level + 1, size=judged)
        lines += [f"{t} 0 {t}-D{d:04d} {lvl}" for d, lvl in zip(docs, levels)]
    path.write_text("\n".join(lines) + "\n")


REPO = Path(__file__).resolve().parent.parent


def copy_demo(folder: Path) -> Path:
    """The bundled demo campaign (configs/ and runs/demo/, no store) copied into ``folder``;
    the path of its config. Tests never write into the repository's runs/."""
    shutil.copytree(REPO / "configs", folder / "configs")
    shutil.copytree(REPO / "runs" / "demo", folder / "runs" / "demo",
                    ignore=shutil.ignore_patterns("*.duckdb*"))
    (folder / "runs" / "demo.duckdb").unlink(missing_ok=True)
    return folder / "configs" / "demo.yaml"


def make_campaign(root: Path, systems: int = 4, topics: int = 5, depth: int = 50,
                  seed: int = 7, suites: str = "core: [AP, nDCG@10, P@10, GMAP, Bpref, RR]",
                  evaluation: str = "", extra_qrels: bool = True) -> Path:
    """configs/c.yaml beside runs/ (r00.txt ..., qrels.txt, shallow.txt, topics.tsv)."""
    rng = np.random.default_rng(seed)
    (root / "configs").mkdir(parents=True, exist_ok=True)
    runs = root / "runs"
    runs.mkdir(exist_ok=True)
    ids = [f"t{i:02d}" for i in range(1, topics + 1)]
    (runs / "topics.tsv").write_text("".join(f"{t}\ttopic {t}\n" for t in ids))
    write_qrels(runs / "qrels.txt", rng, ids)
    if extra_qrels:
        write_qrels(runs / "shallow.txt", rng, ids, judged=20)
    for i in range(systems):
        write_run(runs / f"r{i:02d}.txt", rng, ids, depth, f"tag{i:02d}")
    qrels = "{official: ../runs/qrels.txt" + (", shallow: ../runs/shallow.txt}" if extra_qrels
                                               else "}")
    config = root / "configs" / "c.yaml"
    config.write_text(textwrap.dedent(f"""\
        collection:
          topics: ../runs/topics.tsv
          qrels: {qrels}
        systems:
          - glob: ../runs/r*.txt
        suites:
          {suites}
        """) + (f"evaluation: {evaluation}\n" if evaluation else ""))
    return config


def hold_store(path: str) -> subprocess.Popen:
    """Another process holding the store's file lock until its stdin closes; returns once the
    lock is held (it says so on stdout), so nothing here depends on timing."""
    code = ("import sys, duckdb; con = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "sys.stdin.read(); con.close()")
    holder = subprocess.Popen([sys.executable, "-c", code, path], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def release(holder: subprocess.Popen) -> None:
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0


def simulated_with_judge(folder: Path, judges: dict, *, groups: int, topics: int, depth: int,
                         seed: int) -> Path:
    """``irbench simulate`` a campaign into ``folder`` (documents included) and declare
    ``judges`` (the config's ``judges:`` mapping) in its config; returns the config's path."""
    import yaml

    from irbench import cli

    assert cli.main(["simulate", str(folder), "--groups", str(groups), "--topics", str(topics),
                     "--pool-depth", str(depth), "--seed", str(seed)]) == 0
    config = folder / "campaign.yaml"
    data = yaml.safe_load(config.read_text())
    data["judges"] = judges
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config
