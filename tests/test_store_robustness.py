"""Stores from other versions, damaged stores, foreign files, readers that wait, read-only
stores (issue 15.6, 15.8, 15.12): each case a message saying what is wrong and what to do, exit
status 3, no traceback, and the file left as it was."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import duckdb
import numpy as np
import pytest
from campaigns import hold_store, make_campaign, release

from irbench import cli
from irbench.config import load_config
from irbench.runner import stamp
from irbench.store import MIGRATIONS, Store

# The text of every applied migration, pinned: editing one in place leaves the stores it made
# stamped as migrated without the change (as migration 1 once did). Add a migration instead.
PINNED = {
    1: "6be3e06defbfb5a4ac4aa3b88a1599309e54e3f6786c9145036c9e75bb1eca2d",
    2: "f8c284c2ad14bf2838d95ac9f8e01abf0c6a7273d5d031ca8bb9ad16253dba13",
    3: "bebabef27da712c728ef2104da84e190b446406ae7dc575a202ae64e0a2f61e7",
    4: "ab9e774b90d39eb57e6a8cc6b3c79a694b3dcb7ca90b6e4612e8a20061829705",
    5: "ac264cda8cff3be4d905cab22de15605bb01dff26a0b54b58ad0ae1d146602ef",
    6: "7f3a27f34902b5649e761902a0511b1c75544adf608619944e20fe582f5053e9",
    7: "dd9a5899e429fd861e3fba2353ee07868fbf9012add105ab89e143ec53bebf2b",
    8: "2378e346200c9a9eea0b897cdd963bb1cadb86a1d8228e42930c61e7b726bacc",
    9: "6a870f3520f434e421ebb99b674b93355adc5c08e4f5310f4b02820d12a0f71b",
    10: "b7d2578a1be409ad2b4c7688b8059a975b26890938b072b3616ae9ad69c278db",
    11: "4c50485d4c0aa9f111e3123fcfdd53ce393f9f805b419ef04705e06c92149dd4",
    12: "cbde06fd6878ddafdcad03bbd0822123b8bbbc9ecc397a70611c4462d590fcd4",
    13: "5e7e10d4c5dcbf0d7fd141b63f0b161a44eaa9b42fa000a6efed2dba96289f4e",
    14: "e13cc6b2b76c15d8af9b8f07a1fc8932ff2e55c9b2ee2074b55191be2df2c401",
    15: "bf878b766cbc18468b32cd9000afea5ce5def9400c1a3413660c9e3d4dc914f7",
    16: "04e53a884f530b4cb5c6736354e4b6f778c0046516c54acba45be3b7d6094b5e",
    17: "27bb09c79f7231561848aabf0bcafd03c3cd03d9d6691d141310e2972a6b4463",
    18: "df5567a8fc26bc7de763f556c781234c512ac5e59eee3f363c6633765b3973e7",
    19: "fbc7526c401b612ca0261fb237d2ab94e40db30ef2b9a3daaaacc65d2816155d",
    20: "d88e9736f3c373aa958fef8c15aef07e769c87e0386efea265fa0eeb7c4540a1",
    21: "a05c4578f1a63ea605c08fbca642c92cf540fcc19f48a22eeed862ff9a9b7eb3",
    22: "993803181009938c659a837306ce3235726e4284b511e418c1fd04faabdc4ef3",
}

# Migration 1 as irbench first shipped it (commit 5f2db42): qrels_sets without level_counts,
# topics and topics_sha256 (pinned above, so this cannot drift from the shipped text).
ADDED_IN_PLACE = " level_counts BIGINT[],\n        topics VARCHAR[], topics_sha256 VARCHAR,"
FIRST_SCHEMA = MIGRATIONS[0][1].replace(ADDED_IN_PLACE, "")
assert FIRST_SCHEMA != MIGRATIONS[0][1]  # the columns commit 0f8fe24 added in place


def test_no_applied_migration_is_ever_edited():
    got = {i: hashlib.sha256(sql.encode()).hexdigest() for i, (_, sql) in enumerate(MIGRATIONS, 1)}
    assert {i: got[i] for i in PINNED} == PINNED
    assert stamp.STORE_SCHEMA == len(MIGRATIONS)


def _cli(capsys, *argv) -> tuple[int, str]:
    rc = cli.main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return rc, captured.err


def _sql(store: str, *statements: str) -> None:
    """Change the store behind irbench's back, as another program would."""
    con = duckdb.connect(store)
    for statement in statements:
        con.execute(statement)
    con.close()


def _bytes(path) -> bytes:
    return Path(path).read_bytes()


@pytest.fixture
def campaign(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=3, topics=4, depth=20, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    return path, load_config(path).store


def test_a_store_of_the_first_schema_is_migrated_and_runs(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=2, topics=3, depth=10, extra_qrels=False)
    store = load_config(path).store
    con = duckdb.connect(store)
    con.execute(FIRST_SCHEMA)
    con.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
                "applied_at TIMESTAMP)")
    con.execute("INSERT INTO migrations VALUES (1, 'create the score store', now())")
    con.close()
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", str(path))
    assert rc == 0, err
    assert "2 evaluated" in err
    with Store(store, read_only=True) as s:
        _, rows = s.query("SELECT level_counts IS NOT NULL FROM qrels_sets")
    assert rows == [(True,)]


def test_a_truncated_store(campaign, capsys):
    path, store = campaign
    with open(store, "r+b") as fh:
        fh.truncate(5000)
    before = _bytes(store)
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3
    assert f"{store}: the score store is damaged" in err and "restore it from a backup" in err
    assert _bytes(store) == before


def test_flipped_bytes_are_a_checksum_error(campaign, capsys):
    path, store = campaign
    data = bytearray(_bytes(store))
    for offset in range(3 * 4096 + 64, len(data), 4096):  # every block after the headers
        data[offset] ^= 0xFF
    Path(store).write_bytes(bytes(data))
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3
    assert "the score store is damaged" in err
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", str(path))
    assert rc == 3 and "the score store is damaged" in err
    assert _bytes(store) == bytes(data)


def test_a_dropped_view(campaign, capsys):
    path, store = campaign
    _sql(store, "DROP VIEW means")
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3
    assert "lacks part of its schema" in err and "means" in err


def test_a_foreign_duckdb_file_is_not_written_into(campaign, capsys):
    path, store = campaign
    os.unlink(store)
    _sql(store, "CREATE TABLE customers (id INTEGER, name VARCHAR)",
         "INSERT INTO customers VALUES (1, 'a')")
    before = _bytes(store)
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", "--rehash", str(path))
    assert rc == 3
    assert "a DuckDB database but not an irbench score store (it holds customers)" in err
    assert _bytes(store) == before
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3 and "not an irbench score store" in err


def test_an_sqlite_file_is_refused_before_duckdb_opens_it(campaign, capsys):
    import sqlite3

    path, store = campaign
    os.unlink(store)
    con = sqlite3.connect(store)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = _bytes(store)
    for argv in (["run", "--workers", "1", "--quiet", "--rehash", str(path)],
                 ["scores", str(path)], ["report", str(path), "--format", "csv"]):
        rc, err = _cli(capsys, *argv)
        assert rc == 3, argv
        assert f"{store}: not an irbench score store (an SQLite database)" in err
    assert _bytes(store) == before


def test_a_store_of_a_newer_irbench(campaign, capsys):
    path, store = campaign
    _sql(store, "INSERT INTO migrations VALUES (99, 'from the future', now())")
    for argv in (["scores", str(path)], ["run", "--workers", "1", "--quiet", str(path)]):
        rc, err = _cli(capsys, *argv)
        assert rc == 3
        assert "made by a newer irbench (schema 99" in err and "upgrade irbench" in err


def test_a_store_of_an_older_irbench_read_only(campaign, capsys):
    path, store = campaign
    _sql(store, "DELETE FROM migrations WHERE version = (SELECT max(version) FROM migrations)")
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3
    assert "made by an older irbench" in err and "run 'irbench run CONFIG' once" in err
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", str(path))
    assert rc == 0, err  # migrated
    assert _cli(capsys, "scores", str(path))[0] == 0


def test_the_run_stamp_does_not_vouch_for_a_store_damaged_in_place(campaign, capsys):
    path, store = campaign
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", str(path))
    assert rc == 0 and "0 evaluated" in err  # answered from the stamp (or quickly)
    st = os.stat(store)
    data = bytearray(_bytes(store))
    for offset in range(3 * 4096 + 64, len(data), 4096):
        data[offset] ^= 0xFF
    with open(store, "r+b") as fh:  # in place: same inode and size, mtime put back
        fh.write(bytes(data))
    os.utime(store, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert stamp.answer_unchanged_run(["run", "--quiet", str(path)]) is None
    rc, err = _cli(capsys, "run", "--workers", "1", "--quiet", str(path))
    assert rc == 3 and "the score store is damaged" in err


def test_stray_temporary_stores_of_dead_processes_are_removed(tmp_path):
    store = tmp_path / "s.duckdb"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    strays = [tmp_path / f"s.duckdb.new-{dead}", tmp_path / f"s.duckdb.new-{dead}.wal"]
    alive = tmp_path / f"s.duckdb.new-{os.getppid()}"  # a live process: left alone
    for p in (*strays, alive):
        p.write_bytes(b"half made")
    Store(str(store)).close()
    assert not any(p.exists() for p in strays)
    assert alive.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb", alive.name]


@pytest.mark.parametrize("argv", [["scores"], ["systems"], ["compare", "--measure", "AP"],
                                  ["report", "--format", "csv"]])
def test_readers_wait_for_a_running_writer_by_default(campaign, capsys, monkeypatch, argv):
    """While another process holds the store, a reader waits (30 s by default) instead of
    failing: the store's wait loop releases the holder at its first pause, so the reader is
    seen to have been refused once and then to succeed."""
    import irbench.store as store_module

    path, store = campaign
    holder = hold_store(store)
    pauses = []

    def sleep(seconds):
        pauses.append(seconds)
        if len(pauses) == 1:
            release(holder)

    clock = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    clock.sleep = sleep
    monkeypatch.setattr(store_module.connection, "time", clock)
    try:
        rc, err = _cli(capsys, argv[0], str(path), *argv[1:])
    finally:
        if holder.poll() is None:
            release(holder)
    assert rc == 0, err
    assert len(pauses) >= 1


def test_a_reader_told_not_to_wait_says_how(campaign, capsys):
    path, store = campaign
    holder = hold_store(store)
    try:
        rc, err = _cli(capsys, "scores", str(path), "--wait", "0")
    finally:
        release(holder)
    assert rc == 3
    assert "in use by another process" in err and "--wait SECONDS" in err


def test_a_reader_whose_wait_ran_out_does_not_suggest_waiting(campaign, capsys, monkeypatch):
    """--wait 5 spent (on a clock that advances by each pause, not by the wall): the message
    says it waited, not to pass --wait (issue 25)."""
    import irbench.store as store_module

    path, store = campaign
    now = [1000.0]
    clock = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    clock.monotonic = lambda: now[0]
    clock.sleep = lambda seconds: now.__setitem__(0, now[0] + seconds)
    monkeypatch.setattr(store_module.connection, "time", clock)
    holder = hold_store(store)
    try:
        rc, err = _cli(capsys, "scores", str(path), "--wait", "5")
    finally:
        release(holder)
    assert rc == 3 and now[0] >= 1005
    assert "still in use by another process" in err and "after waiting 5 s" in err
    assert "--wait SECONDS" not in err


def test_report_on_a_read_only_store(tmp_path, capsys):
    """An archived campaign on a read-only file system: the report renders with the analyses
    the run stored, and the store is untouched."""
    src = tmp_path / "campaign"
    path = make_campaign(src, systems=3, topics=4, depth=20, extra_qrels=False)
    path.write_text(path.read_text() + "report: {reduction_design: sampled}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    ro = tmp_path / "archive"
    ro.mkdir()
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip("root without a read-only bind mount: file modes do not bind root")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], check=True)
    else:
        shutil.copytree(src, ro, dirs_exist_ok=True)
        for p in sorted(ro.rglob("*"), reverse=True):
            p.chmod(p.stat().st_mode & ~0o222)
        ro.chmod(ro.stat().st_mode & ~0o222)
    try:
        store = load_config(ro / "configs" / "c.yaml").store
        before = _bytes(store)
        out = tmp_path / "page"
        rc, err = _cli(capsys, "report", str(ro / "configs" / "c.yaml"), "--out", str(out))
        assert rc == 0, err
        assert "irbench: note" not in err  # nothing missing, nothing stale
        page = (out / "index.html").read_text()
        assert 'id="reduction"' in page and "Design <b>sampled</b>" in page
        assert _bytes(store) == before
        assert _cli(capsys, "scores", str(ro / "configs" / "c.yaml"))[0] == 0
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], check=True)


def test_a_damaged_store_saves_its_judgments_before_any_advice(campaign, capsys):
    """The advice to move a damaged store away would throw away the assessors' judgments,
    which no rerun makes again: they are copied beside it first, and the message says where
    (issue 25)."""
    path, store = campaign
    _sql(store, "INSERT INTO judgments (pool, query_id, doc_id, relevance, batch, source, "
                "judged_at, judge, judge_kind) VALUES "
                "('p', 't01', 'd1', 2, 1, 'a.qrels', now(), 'ann', 'human'), "
                "('p', 't02', 'd9', 0, 1, 'a.qrels', now(), 'ann', 'human')",
         "DROP VIEW means")
    before = _bytes(store)
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3 and "lacks part of its schema" in err
    rescued = Path(f"{store}.judgments.tsv")
    assert f"its 2 judgments were saved to {rescued}" in err
    lines = rescued.read_text().splitlines()
    assert lines[0].split("\t") == ["pool", "query_id", "doc_id", "relevance", "batch",
                                    "source", "judged_at", "judge", "judge_kind", "model",
                                    "prompt_sha256", "answer", "suggested", "seconds"]
    assert [line.split("\t")[:4] for line in lines[1:]] == [["p", "t01", "d1", "2"],
                                                           ["p", "t02", "d9", "0"]]
    assert _bytes(store) == before  # read only


def test_a_damaged_store_whose_judgments_cannot_be_read_says_keep_it(campaign, capsys):
    path, store = campaign
    with open(store, "r+b") as fh:
        fh.truncate(5000)
    rc, err = _cli(capsys, "scores", str(path))
    assert rc == 3 and "irbench: note:" in err
    assert "could not be read" in err and "keep the file" in err


def test_queued_scores_are_unpivoted_with_every_value_kept(tmp_path):
    """The queued per-topic values (a column per measure) become one ``scores`` row per
    (evaluation, measure, topic), parts with other measures in their own statement, and a NaN
    stays a row (NULL, as DuckDB reads a NaN), as the long rows it replaced were stored."""
    def part(eid, topics, **values):
        return (tuple(values), {"evaluation_id": np.full(len(topics), eid, dtype=np.int64),
                                "query_id": np.array(topics, dtype=object),
                                **{f"v{i}": np.array(v, dtype=np.float64)
                                   for i, v in enumerate(values.values())}})

    with Store(str(tmp_path / "s.duckdb")) as store:
        with store.transaction():
            store._insert_scores([part(7, ["1", "2"], AP=[0.5, np.nan], P=[0.1, 0.2]),
                                  part(8, ["1"], AP=[0.25]),
                                  part(9, ["3"], AP=[0.75], P=[0.0]),
                                  part(10, [], AP=[], P=[])])
        _, rows = store.query("SELECT evaluation_id, measure, query_id, value FROM scores "
                              "ORDER BY evaluation_id, measure, query_id")
    assert rows == [(7, "AP", "1", 0.5), (7, "AP", "2", None), (7, "P", "1", 0.1),
                    (7, "P", "2", 0.2), (8, "AP", "1", 0.25), (9, "AP", "3", 0.75),
                    (9, "P", "3", 0.0)]


def test_releasing_duckdb_memory_leaves_its_limit_and_the_data_as_they_were(tmp_path):
    """Store.release_memory evicts DuckDB's cached blocks (a lower limit, then the default
    again): the limit is DuckDB's default after it, and what was committed reads the same."""
    path = str(tmp_path / "s.duckdb")
    default = duckdb.connect().execute("SELECT current_setting('memory_limit')").fetchone()[0]

    def part(eid, topics):
        return (("AP",), {"evaluation_id": np.full(len(topics), eid, dtype=np.int64),
                          "query_id": np.array(topics, dtype=object),
                          "v0": np.linspace(0, 1, len(topics))})

    with Store(path) as store:
        with store.transaction():
            store._insert_scores([part(1, [f"q{i}" for i in range(50_000)])])
        store.release_memory()
        _, limit = store.query("SELECT current_setting('memory_limit')")
        with store.transaction():
            store._insert_scores([part(2, ["x"])])
        _, rows = store.query("SELECT count(*), sum(value) FROM scores")
    assert limit[0][0] == default
    assert rows[0][0] == 50_001 and rows[0][1] == pytest.approx(25_000.0)


def test_a_store_written_before_keeps_no_credential_of_a_judge(tmp_path):
    """Migration 15: a judge remembered with user:password@ or ?key= in its base_url (which
    the config check refuses now) keeps neither in base_url nor in its settings."""
    path = str(tmp_path / "old.duckdb")
    store = Store(path)
    settings = '{"backoff": 1.0, "base_url": "https://bob:hunter2@llm.example:8443/v1?key=sk-SECRET#f", "model": "m"}'
    store.remember_judge("j", "model", "m", "https://bob:hunter2@llm.example:8443/v1?key=sk-SECRET#f",
                         settings)
    store.remember_judge("plain", "model", "m", "http://127.0.0.1:8000/v1",
                         '{"base_url": "http://127.0.0.1:8000/v1"}')
    store.close()
    _sql(path, MIGRATIONS[14][1])  # migration 15 again (deleting its row would apply the
    #                                later ones again too)
    con = duckdb.connect(path, read_only=True)
    rows = dict(((n, (u, s)) for n, u, s in con.execute(
        "SELECT name, base_url, settings FROM judges").fetchall()))
    con.close()
    assert rows["j"] == ("https://llm.example:8443/v1",
                         '{"backoff": 1.0, "base_url": "https://llm.example:8443/v1", "model": "m"}')
    assert rows["plain"] == ("http://127.0.0.1:8000/v1", '{"base_url": "http://127.0.0.1:8000/v1"}')
    # (the file's freed blocks may still hold the old text until DuckDB reuses them: what a
    # query, an export or a report reads holds no credential)
