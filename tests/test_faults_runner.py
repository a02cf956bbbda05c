"""Faults of a run on this machine (issue 25). The sharded path keeps every limit of the
whole-file path: the gzip expansion limit and its messages, a truncated .gz as that run's
failure, stray topics named with their line, memory per shard bounded when one topic holds
most lines (split into topic groups, or refused naming the limit); spill folders removed on
SIGTERM and Ctrl-C and swept once their process is gone; Ctrl-C with worker processes a
message, the next run finishing; IRBENCH_SHARD_BYTES checked."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from campaigns import make_campaign

import irbench
from irbench import cli
from irbench.errors import FormatError, IrbenchError, OptionError
from irbench.measures import parse_measure
from irbench.ranked import EvalOptions
from irbench.runner import shards
from irbench.runner.shards import evaluate_sharded, shard_bytes, sweep_spills
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent
MEASURES = [parse_measure(m) for m in ("AP", "nDCG@10", "P@10", "RR", "Bpref", "R@100")]
OPTIONS = EvalOptions(complete=True)


def _skewed(tmp_path, big=3000, small=40, topics=30, seed=5):
    """A run whose topic 'q0' holds most of the lines, and qrels of every topic (some that
    the run does not answer)."""
    rng = np.random.default_rng(seed)
    counts = {"q0": big, **{f"q{i}": small for i in range(1, topics)}}
    lines = [f"{t} Q0 d{rng.integers(0, 2 * n)}x{j} {j} {rng.normal():.6f} tag"
             for t, n in counts.items() for j in range(n)]
    run = tmp_path / "run.txt"
    run.write_text("".join(lines[i] + "\n" for i in rng.permutation(len(lines))))
    qrels = tmp_path / "qrels.txt"
    judged = {f"{t} 0 d{d}x{j}": rng.integers(0, 3) for t, n in
              {**counts, "q98": 5, "q99": 5}.items() for j in range(3)
              for d in rng.integers(0, 2 * n, 3)}
    qrels.write_text("".join(f"{k} {v}\n" for k, v in judged.items()))
    return run, irbench.read_qrels(qrels)


def _whole(qrels, run):
    return irbench.evaluate(irbench.PreparedQrels(qrels), irbench.read_run(run), MEASURES,
                            OPTIONS)


def test_a_dominant_topic_is_scored_in_topic_groups_with_the_same_numbers(tmp_path,
                                                                            monkeypatch):
    run, qrels = _skewed(tmp_path)
    whole = _whole(qrels, run)
    groups_seen = []
    real = shards._Spill.groups
    monkeypatch.setattr(shards._Spill, "groups",
                        lambda self, *a: groups_seen.append(real(self, *a)) or groups_seen[-1])
    got = evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, shards=4)
    assert any(g != [None] and len(g) > 1 for g in groups_seen)  # a shard was split
    assert [irbench.trec.display(t) for t in got.topics] == list(whole.topics)
    for m in MEASURES:
        np.testing.assert_array_equal(got.values[m], whole[str(m)])
        assert got.summaries[m] == whole.summary(str(m))


def test_a_topic_bigger_than_the_limit_is_refused_naming_it(tmp_path):
    run, qrels = _skewed(tmp_path, big=6000)
    with pytest.raises(IrbenchError, match=r"topic 'q0' has 6,000 result lines .*more than 4 "
                                           r"topic shards hold .*IRBENCH_SHARD_BYTES"):
        evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, shards=16)


def test_a_run_over_the_limit_is_cut_into_shards_of_at_most_a_piece(tmp_path, monkeypatch):
    """Shards hold at most SHARD_PIECE bytes of the file whatever the limit (a shard's scoring
    takes about 4x its bytes), and the limit, not the piece, bounds one topic's lines; a
    shard's ranking is scored SCORE_ROWS lines at a time (here fewer than one topic holds)."""
    run, qrels = _skewed(tmp_path, big=6000)
    size = run.stat().st_size
    whole = _whole(qrels, run)
    monkeypatch.setattr(shards, "SHARD_PIECE", size // 16 + 1)
    monkeypatch.setattr(shards, "SCORE_ROWS", 97)
    with pytest.raises(IrbenchError, match=r"topic 'q0' has 6,000 result lines"):
        evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, limit=size // 16 + 1)
    got = evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, limit=size // 2)
    assert got.shards == 16  # pieces, not halves; q0 fits what half the file holds
    assert [irbench.trec.display(t) for t in got.topics] == list(whole.topics)
    for m in MEASURES:
        np.testing.assert_array_equal(got.values[m], whole[str(m)])
        assert got.summaries[m] == whole.summary(str(m))


def test_a_campaign_of_sharded_runs_never_builds_the_qrels_lookup_table(tmp_path, monkeypatch):
    """Topic shards rank against qrels of their own topics: the campaign's prepared set only
    gives its rows and counts, so its lookup table (220 MB for 5,000,000 judgments) is never
    built."""
    config = make_campaign(tmp_path, systems=2, extra_qrels=False)
    size = min(p.stat().st_size for p in (tmp_path / "runs").glob("r*.txt"))
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", str(size // 3))  # every run in shards
    built = []
    real = irbench.PreparedQrels.ready
    monkeypatch.setattr(irbench.PreparedQrels, "ready",
                        lambda self: built.append(len(self.topics)) or real(self))
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 0
    with Store(str(tmp_path / "runs" / "c.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT count(DISTINCT system), count(DISTINCT query_id) "
                              "FROM per_query")
    assert rows[0][0] == 2 and rows[0][1] > 1
    assert built and max(built) < rows[0][1]  # only the shards' own qrels were looked up


def _gz_problem(path: Path) -> str:
    with pytest.raises(FormatError) as whole:
        irbench.read_run(path)
    return str(whole.value)


def test_a_gzip_bomb_is_refused_as_on_the_whole_file_path(tmp_path, monkeypatch):
    monkeypatch.setattr(irbench.trec.sources, "GUNZIP_FLOOR", 4096)
    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(gzip.compress(b"1 Q0 d1 1 1.0 tag\n" * 200_000))
    qrels = irbench.read_qrels({"1": {"d1": 1}})
    expected = _gz_problem(path)
    assert "expands to more than" in expected
    with pytest.raises(FormatError) as sharded:
        evaluate_sharded(qrels, str(path), MEASURES, OPTIONS, shards=2)
    assert str(sharded.value) == expected


def test_a_truncated_gzip_file_is_that_runs_message(tmp_path):
    run, qrels = _skewed(tmp_path, big=200)
    data = gzip.compress(run.read_bytes())
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(data[: len(data) // 2])
    expected = _gz_problem(cut)
    assert "not a valid gzip file" in expected
    with pytest.raises(FormatError) as sharded:
        evaluate_sharded(qrels, str(cut), MEASURES, OPTIONS, shards=3)
    assert str(sharded.value) == expected
    good = tmp_path / "good.txt.gz"
    good.write_bytes(data + gzip.compress(b""))  # two members: read whole, as gunzip does
    got = evaluate_sharded(qrels, str(good), MEASURES, OPTIONS, shards=3)
    np.testing.assert_array_equal(got.values[MEASURES[0]], _whole(qrels, run)[str(MEASURES[0])])


def test_a_truncated_gzip_run_fails_alone_in_a_campaign(tmp_path, capsys, monkeypatch):
    config = make_campaign(tmp_path, systems=3, extra_qrels=False)
    runs = tmp_path / "runs"
    data = gzip.compress((runs / "r01.txt").read_bytes())
    (runs / "r01.txt").unlink()
    (runs / "r01.txt.gz").write_bytes(data[: len(data) // 2])
    config.write_text(config.read_text().replace("glob: ../runs/r*.txt", "glob: ../runs/r*"))
    size = min(p.stat().st_size for p in runs.glob("r*"))  # the .gz
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", str(size // 2))  # every run in shards
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 1
    err = capsys.readouterr().err
    assert "r01.txt.gz:1: not a valid gzip file" in err and "Traceback" not in err
    with Store(str(tmp_path / "runs" / "c.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT DISTINCT system FROM means ORDER BY system")
    assert [r[0] for r in rows] == ["r00", "r02"]


@pytest.mark.parametrize("value", ["abc", "1e6", "-5", "12.5", "9" * 30])
def test_a_bad_shard_size_is_a_message(value, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", value)
    with pytest.raises(OptionError, match="IRBENCH_SHARD_BYTES=.*must be a whole number"):
        shard_bytes()
    config = make_campaign(tmp_path, systems=2, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 1
    err = capsys.readouterr().err
    assert "IRBENCH_SHARD_BYTES" in err and "Traceback" not in err


def test_shard_size_from_the_environment(monkeypatch):
    monkeypatch.delenv("IRBENCH_SHARD_BYTES", raising=False)
    assert shard_bytes() == shards.SHARD_BYTES
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", " 0 ")
    assert shard_bytes() == 0


def _host_prefix() -> str:
    from irbench.cache import spill_prefix

    return spill_prefix().rsplit("-", 2)[0]  # irbench-shards-HOST


def test_spill_folders_of_gone_processes_are_swept(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = tmp_path / f"{_host_prefix()}-{int(gone.stdout)}-abc"
    alive = tmp_path / f"{_host_prefix()}-{os.getpid()}-def"
    other = tmp_path / "irbench-shards-xyz"  # not ours to judge: no pid
    elsewhere = tmp_path / f"irbench-shards-otherhost-{int(gone.stdout)}-ghi"  # another host's
    for folder in (dead, alive, other, elsewhere):
        folder.mkdir()
        (folder / "0-0.npz").write_bytes(b"x")
    assert sweep_spills(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and alive.exists() and other.exists() and elsewhere.exists()


# a campaign whose scoring signals itself as soon as the first piece of its run is spilled
SIGNALLED = """
import os, signal, sys
from irbench import cli
from irbench.runner import shards

real = shards._Spill._add

def add(self, columns):
    real(self, columns)
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))

shards._Spill._add = add
sys.exit(cli.main(["run", "--workers", "1", "--quiet", sys.argv[1]]))
"""


@pytest.mark.parametrize("sig, status, word", [("SIGTERM", 143, "terminated"),
                                               ("SIGINT", 130, "interrupted")])
def test_a_signal_while_sharding_leaves_no_spill_folder_and_no_traceback(tmp_path, sig,
                                                                         status, word):
    config = make_campaign(tmp_path / "camp", systems=1, extra_qrels=False)
    spill = tmp_path / "tmp"
    spill.mkdir()
    size = (tmp_path / "camp" / "runs" / "r00.txt").stat().st_size
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(spill),
               IRBENCH_SHARD_BYTES=str(size // 3),
               IRBENCH_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", SIGNALLED, str(config), sig],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == status, proc.stderr
    assert f"irbench: {word}: what was complete is kept" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(spill.iterdir()) == []
    with Store(str(tmp_path / "camp" / "runs" / "c.duckdb"), read_only=True) as store:
        _, rows = store.query("SELECT status FROM runner_runs")
    assert rows == [("interrupted",)]
    rerun = subprocess.run([sys.executable, "-m", "irbench", "run", "--quiet", str(config)],
                           capture_output=True, text=True, env=env)
    assert rerun.returncode == 0, rerun.stderr


def test_a_bad_shard_size_in_a_subprocess_is_not_a_traceback(tmp_path):
    config = make_campaign(tmp_path, systems=1, extra_qrels=False)
    env = dict(os.environ, PYTHONPATH=str(REPO), IRBENCH_SHARD_BYTES="1e6",
               IRBENCH_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "irbench", "run", "--quiet", str(config)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("irbench: error: IRBENCH_SHARD_BYTES='1e6'")
    assert "Traceback" not in proc.stderr


def test_import_does_not_read_the_environment():
    code = textwrap.dedent("""
        import os
        os.environ["IRBENCH_SHARD_BYTES"] = "abc"
        import irbench.runner.shards
        print("imported")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stdout.strip() == "imported", proc.stderr


def test_a_stray_topic_is_the_same_message_whole_or_in_shards(tmp_path, capsys, monkeypatch):
    """Topics outside the topic set: 'PATH:LINE: topics not in the topic set: ...' with the
    line of the first, on both paths (issue 25)."""
    messages = []
    for sharded in (False, True):
        config = make_campaign(tmp_path / str(sharded), systems=2, extra_qrels=False)
        run = tmp_path / str(sharded) / "runs" / "r01.txt"
        lines = run.read_text().splitlines(keepends=True)
        lines[7:7] = ["zz9 Q0 dx 1 1.0 tag01\n", "aa1 Q0 dy 1 1.0 tag01\n"]
        run.write_text("".join(lines))
        size = run.stat().st_size
        if sharded:
            monkeypatch.setenv("IRBENCH_SHARD_BYTES", str(size // 3))
        assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 1
        err = capsys.readouterr().err
        line = next(x for x in err.splitlines() if "topics not in the topic set" in x)
        messages.append(line.replace(str(tmp_path / str(sharded)), "CAMPAIGN"))
    assert messages[0] == messages[1]
    assert "r01.txt:9: topics not in the topic set: 'aa1', 'zz9'" in messages[1]


# a campaign scored by worker processes that gets Ctrl-C once the first system is back
INTERRUPTED = """
import os, signal, sys
from irbench import cli
from irbench.runner import campaign

campaign.PARALLEL_MIN_BYTES = 0  # worker processes even for a small campaign
real = campaign.outcome_record

def record(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)

campaign.outcome_record = record
sys.exit(cli.main(["run", "--workers", "2", "--quiet", sys.argv[1]]))
"""


def test_ctrl_c_with_worker_processes_is_a_message_and_the_next_run_finishes(tmp_path):
    config = make_campaign(tmp_path / "camp", systems=6, extra_qrels=False)
    env = dict(os.environ, PYTHONPATH=str(REPO), IRBENCH_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", INTERRUPTED, str(config)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 130, proc.stderr
    assert "irbench: interrupted: what was complete is kept" in proc.stderr
    assert "Traceback" not in proc.stderr
    rerun = subprocess.run([sys.executable, "-m", "irbench", "run", "--quiet", "--workers", "1",
                            str(config)], capture_output=True, text=True, env=env)
    assert rerun.returncode == 0, rerun.stderr
    twin = make_campaign(tmp_path / "twin", systems=6, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(twin)]) == 0
    stored = []
    for path in (config, twin):
        from irbench.config import load_config

        with Store(load_config(path).store, read_only=True) as store:
            stored.append(sorted(store.query("SELECT * FROM per_query")[1]))
    assert stored[0] == stored[1]


def test_irbench_run_sweeps_what_a_killed_run_left(tmp_path, monkeypatch):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    spill = tmp_path / "tmp"
    left = spill / f"{_host_prefix()}-{int(gone.stdout)}-xyz"
    left.mkdir(parents=True)
    (left / "0-0.npz").write_bytes(b"x" * 1000)
    monkeypatch.setattr("tempfile.tempdir", str(spill))
    config = make_campaign(tmp_path / "camp", systems=1, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 0
    assert not left.exists()


def test_one_topic_group_in_a_shard_is_scored(tmp_path):
    """A shard split into topic groups that makes one group (its heaviest topic sorts first)
    used to raise; every judged topic is scored once, as one evaluation scores it (review)."""
    ids = [str(i).encode() for i in range(100, 200)]
    where = shards.topic_shards(np.array(ids), 4)
    same = sorted(t for t, s in zip(ids, where) if s == where[0])[:2]
    other = [t for t, s in zip(ids, where) if s != where[0]][:2]
    lines = [f"{same[0].decode()} Q0 d{r} {r} {1000 - r} tag\n" for r in range(300)]
    for topic in [same[1], *other]:
        lines += [f"{topic.decode()} Q0 d{r} {r} {1000 - r} tag\n" for r in range(10)]
    run, qrels_path = tmp_path / "g.run", tmp_path / "g.qrels"
    run.write_text("".join(lines))
    qrels_path.write_text("".join(f"{t.decode()} 0 d1 1\n" for t in [*same, *other]))
    qrels = irbench.read_qrels(qrels_path)
    got = evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, shards=4)
    whole = _whole(qrels, run)
    for m in MEASURES:
        np.testing.assert_array_equal(got.values[m], whole[str(m)])


def test_a_spill_file_that_vanishes_is_an_error_not_a_wrong_number(tmp_path, monkeypatch):
    run, qrels = _skewed(tmp_path, big=200)
    real = shards._Spill.columns

    def columns(self, shard, topics=None):  # another host's sweep, or a cleaner, strikes
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        return real(self, shard, topics)

    monkeypatch.setattr(shards._Spill, "columns", columns)
    with pytest.raises(IrbenchError, match="a spill file of this run vanished"):
        evaluate_sharded(qrels, str(run), MEASURES, OPTIONS, shards=3)



def test_irbench_check_ranks_a_sharded_run(tmp_path, capsys, monkeypatch):
    """irbench check on a run big enough for shards ranks it too: a duplicate docno is found
    as on the whole-file path (review)."""
    config = make_campaign(tmp_path, systems=2, extra_qrels=False)
    run = tmp_path / "runs" / "r01.txt"
    lines = run.read_text().splitlines(keepends=True)
    lines.insert(5, lines[3])  # the same docno twice for one topic
    run.write_text("".join(lines))
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", str(run.stat().st_size // 3))
    sharded = []
    real = shards.evaluate_sharded
    monkeypatch.setattr(shards, "evaluate_sharded",
                        lambda q, where, *a, **k: sharded.append(where) or real(q, where, *a, **k))
    assert cli.main(["check", str(config)]) == 1
    err = capsys.readouterr().err
    assert "system 'r01'" in err and "Traceback" not in err
    assert str(run) in sharded


def test_the_ir_metadata_of_a_gzip_run_is_found_on_the_sharded_path(tmp_path, monkeypatch):
    import gzip as gz

    from irbench.config import load_config

    config = make_campaign(tmp_path, systems=2, extra_qrels=False)
    runs = tmp_path / "runs"
    text = (runs / "r01.txt").read_text()
    block = "# ir_metadata.start\n# implementation:\n#   source: https://example.org/r01\n" \
            "# ir_metadata.end\n"
    (runs / "r01.txt").unlink()
    (runs / "r01.txt.gz").write_bytes(gz.compress((block + text).encode()))
    config.write_text(config.read_text().replace("glob: ../runs/r*.txt", "glob: ../runs/r*"))
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", str((runs / "r01.txt.gz").stat().st_size // 2))
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 0
    with Store(load_config(config).store, read_only=True) as store:
        _, rows = store.query("SELECT name, ir_metadata FROM systems ORDER BY name")
    assert rows[1][0] == "r01" and "example.org/r01" in (rows[1][1] or "")
