"""Ids with bytes that are not UTF-8 (issue 35): one rule (irbench.ids.id_text: each such byte
as ``\\xNN``) in every path that writes them (pool build --name, qrels --import, judging), and
a value the store cannot hold is a refused write, never a 'damaged' store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from irbench import cli
from irbench.errors import StoreValueError
from irbench.ids import id_bytes, id_candidates, id_text, ids_text
from irbench.store import Store
from irbench.store.connection import storage_error
from irbench.trec import display

ROOT = Path(__file__).resolve().parents[1]
BAD = b"doc\xff\xfe"
SHOWN = "doc\\xff\\xfe"


def test_one_rule_for_ids_from_bytes_or_text():
    for raw in (BAD, b"caf\xe9", "café".encode(), b"plain", b"\xed\xa0\x80"):
        text = id_text(raw)
        assert text == display(raw)  # as messages and assessor files show it
        assert id_text(raw.decode("utf-8", "surrogateescape")) == text  # however decoded
        assert id_bytes(text) == raw and raw in id_candidates(text)
        text.encode("utf-8")  # always storable
    assert id_text("\ud800") == "\\xed\\xa0\\x80"  # a JSON lone surrogate: its bytes
    assert list(ids_text(np.array([BAD, b"x"]))) == [SHOWN, "x"]
    assert list(ids_text(np.array([BAD.decode("utf-8", "surrogateescape")], dtype=object))) \
        == [SHOWN]
    assert id_candidates("a\\xff") == (b"a\xff", b"a\\xff")  # the one ambiguity, both tried


def test_a_value_the_store_cannot_hold_is_not_damage():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a VARCHAR, b BIGINT)")
    for bad in ([BAD.decode("utf-8", "surrogateescape"), 1], ["x", 2**70]):
        with pytest.raises(duckdb.Error) as info:
            con.execute("INSERT INTO t VALUES (?, ?)", bad)
        error = storage_error("s.duckdb", info.value)
        assert isinstance(error, StoreValueError) and error.damaged is None
        assert "damaged" not in str(error) and "refused" in str(error)
    damaged = storage_error("s.duckdb", duckdb.IOException("Corrupt database file: checksum"))
    assert damaged.damaged == "s.duckdb" and not isinstance(damaged, StoreValueError)


@pytest.fixture
def campaign(tmp_path):
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "2", "--topics", "3",
                     "--pool-depth", "5", "--seed", "2"]) == 0
    run = next(iter(sorted((folder / "runs").iterdir())))
    data = run.read_bytes()
    first = data.split(b"\n", 1)[0].split()
    run.write_bytes(data.replace(first[2], BAD))  # the top document of the first topic
    return folder / "campaign.yaml", first[0].decode()


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "irbench", *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(180)
def test_a_docno_not_utf8_in_a_run_is_pooled_and_stored_on_every_rerun(campaign, tmp_path):
    config, topic = campaign
    for attempt in (1, 2):
        done = _cli("pool", "build", str(config), "--param", "k=5", "--name", "d5",
                    "-o", str(tmp_path / f"assess{attempt}"))
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "stored the pool as 'd5'" in done.stderr
        assessor = (tmp_path / f"assess{attempt}" / f"{topic}.qrels").read_text()
        assert f"{topic} 0 {SHOWN} -1" in assessor
    with Store(str(config.parent / "campaign.duckdb"), read_only=True) as store:
        topics, docs = store.pool_documents("d5")
        _, rows = store.query("SELECT count(*) FROM pool_provenance WHERE doc_id = ?", [SHOWN])
    assert (topic, SHOWN) in set(zip(topics, docs)) and rows[0][0] >= 1


@pytest.mark.timeout(120)
def test_a_qrels_import_of_a_docno_not_utf8_is_stored_not_damage(campaign, tmp_path):
    config, topic = campaign
    labels = tmp_path / "odd.qrels"
    labels.write_bytes(f"{topic} 0 ".encode() + BAD + b" 1\n" + f"{topic} 0 D-2 0\n".encode())
    done = _cli("qrels", str(config), "--import", str(labels), "--as", "odd")
    assert done.returncode == 0, done.stderr
    assert "damaged" not in done.stderr and "2 judgments by 'odd'" in done.stdout
    assert not list(config.parent.glob("*.judgments*.tsv"))  # no salvage of a sound store
    out = tmp_path / "back.qrels"
    assert _cli("qrels", str(config), "--judge", "odd", "-o", str(out)).returncode == 0
    assert f"{topic} 0 {SHOWN} 1\n" in out.read_text()
    again = _cli("qrels", str(config), "--import", str(labels), "--as", "odd")
    assert "nothing changed" in again.stdout  # the same text both times


@pytest.mark.timeout(120)
def test_a_pairs_file_with_a_docno_not_utf8_names_it_as_the_store_would(campaign, tmp_path):
    """``irbench judge --pairs``: such a docno (not in the collection) is named by the same
    rule, and nothing fails."""
    import yaml

    config, topic = campaign
    data = yaml.safe_load(config.read_text())
    data["judges"] = {"m": {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                            "api_key_env": "BAD_IDS_KEY"}}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    pairs = tmp_path / "pairs.txt"
    pairs.write_bytes(f"{topic} ".encode() + BAD + b"\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BAD_IDS_KEY": "k"}
    done = subprocess.run([sys.executable, "-m", "irbench", "judge", str(config), "--judge",
                           "m", "--pairs", str(pairs)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert f"1 documents are not in the collection and were not judged: {SHOWN}" \
        in done.stderr


@pytest.mark.timeout(180)
def test_a_docno_not_utf8_handed_out_in_a_file_is_judged_back_from_it(campaign, tmp_path):
    """``pool next`` writes such a docno as ``\\xNN`` text (the one rule); the assessor's file
    given back to ``pool judge`` is looked up as the bytes it stands for, and ``pool status``
    says complete only once every document handed out is judged."""
    config, topic = campaign
    assert _cli("pool", "start", str(config), "--name", "p", "--param", "k=5").returncode == 0
    batch = tmp_path / "batch.txt"
    done = _cli("pool", "next", str(config), "--name", "p", "-o", str(batch))
    assert done.returncode == 0, done.stderr
    lines = batch.read_text().splitlines()
    assert f"{topic} 0 {SHOWN} -1" in lines
    status = _cli("pool", "status", str(config), "--name", "p")
    assert "more to judge" in status.stdout, status.stdout + status.stderr
    filled = tmp_path / "judged.txt"
    filled.write_text("".join(f"{q} 0 {d} 1\n" for q, _, d, _ in map(str.split, lines)))
    judged = _cli("pool", "judge", str(config), "--name", "p", "-j", str(filled))
    assert judged.returncode == 0, judged.stderr
    assert f"{len(lines)} new judgments recorded" in judged.stdout
    again = _cli("pool", "next", str(config), "--name", "p", "-o", str(tmp_path / "b2.txt"))
    assert again.returncode == 0, again.stderr
    status = _cli("pool", "status", str(config), "--name", "p")
    assert "complete" in status.stdout and "more to judge" not in status.stdout, status.stdout
    with Store(str(config.parent / "campaign.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT count(*) FROM judgments WHERE pool = 'p' AND doc_id = ?",
                              [SHOWN])
    assert rows[0][0] == 1
