"""A campaign judged by model judges of one model name on several servers (real local stand-ins,
tests/chat_server.py), for the tests of answers keyed by their endpoint (issue 37): the
simulated campaign with its first ``PAIRS`` qrels pairs to judge, its config naming the
judges, ``irbench judge`` on those pairs, a judge's labels, and a store as irbench wrote it at
schema 15."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb
import yaml
from chat_server import ChatServer

from irbench import cli
from irbench.store import MIGRATIONS, Store

PAIRS = 6
MODEL = "llama"
JUDGMENT = ("pool", "query_id", "doc_id", "relevance", "source", "judge", "judge_kind", "model",
            "prompt_sha256", "answer")


def always(grade: int) -> Callable[[dict], str]:
    """A stand-in's rule: every answer gives ``grade``."""
    return lambda body: f"##final score: {grade}"


def make_template(folder: Path, seed: int) -> Path:
    """``irbench simulate`` into ``folder``/camp, with pairs.txt: its first ``PAIRS`` qrels
    pairs (topic, docno)."""
    folder = folder / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "3",
                     "--pool-depth", "5", "--seed", str(seed)]) == 0
    lines = (folder / "qrels.txt").read_text().splitlines()[:PAIRS]
    (folder / "pairs.txt").write_text("".join(f"{x.split()[0]} {x.split()[2]}\n"
                                              for x in lines))
    return folder


def entry(server: ChatServer, **more) -> dict:
    """A judge of model ``MODEL`` at ``server``: no backoff, one retry."""
    return {"base_url": server.base_url, "model": MODEL, "backoff": 0, "retries": 1,
            "timeout": 10, "concurrency": 2, **more}


def config_with(template: Path, tmp_path: Path, judges: dict) -> Path:
    """The template copied to ``tmp_path``/camp once; its config's judges set to ``judges``
    (each call, the same folder); the config's path."""
    folder = tmp_path / "camp"
    if not folder.exists():
        shutil.copytree(template, folder)
    config = folder / "campaign.yaml"
    data = yaml.safe_load(config.read_text())
    data["judges"] = judges
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


def store_path(config: Path) -> str:
    return str(config.parent / "campaign.duckdb")


def run_judge(config: Path, name: str, capsys) -> tuple[int, str, str]:
    """``irbench judge --judge NAME --pairs pairs.txt`` in this process: its exit status,
    stdout and stderr (no traceback)."""
    rc = cli.main(["judge", str(config), "--judge", name, "--pairs",
                   str(config.parent / "pairs.txt")])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def labels_of(config: Path, name: str) -> dict[tuple[str, str], int]:
    """The judge's labels: (topic, docno) -> relevance."""
    with Store(store_path(config), read_only=True) as store:
        cols = store.judgment_columns(None, [name])
    return dict(zip(zip(cols["query_id"].tolist(), cols["doc_id"].tolist()),
                    cols["relevance"].tolist()))


def schema_15_store(path: str, judges: Iterable[tuple], answers: Iterable[tuple],
                    judgments: Iterable[tuple] = ()) -> None:
    """A store as irbench wrote it at schema 15 (answers keyed by model name alone): its
    migrations, its judges (name, model, base_url, config), answers and judgments (the
    ``JUDGMENT`` columns)."""
    con = duckdb.connect(path)
    con.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
                "applied_at TIMESTAMP)")
    for version, (name, sql) in enumerate(MIGRATIONS[:15], 1):
        con.execute(sql)
        con.execute("INSERT INTO migrations VALUES (?, ?, now())", [version, name])
    con.executemany("INSERT INTO judges VALUES (?, 'model', ?, ?, ?, now())", list(judges))
    con.executemany("INSERT INTO model_answers VALUES (?, ?, ?, ?, ?, ?, ?, 5, 2, 0.1, now())",
                    list(answers))
    rows = list(judgments)
    if rows:
        con.executemany(f"INSERT INTO judgments ({', '.join(JUDGMENT)}, judged_at) "
                        f"VALUES ({', '.join('?' * len(JUDGMENT))}, now())", rows)
    con.close()
