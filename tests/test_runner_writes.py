"""When ``irbench run`` writes the store (irbench.runner.record.Writes): whole systems per
transaction, at least every FLUSH_SECONDS, at once after a failure, and the last systems with
the files' hashes in one commit once every run is scored (a write costs 40 ms whatever its
size: writing the systems scored so far when a worker had no more runs made the run slower)."""

from __future__ import annotations

from campaigns import make_campaign

from irbench.config import load_config
from irbench.runner import campaign, record, run_campaign
from irbench.store import Store


def _flushes(monkeypatch) -> list[int]:
    sizes: list[int] = []
    flush = record.Writes.flush

    def counted(self):
        if self.pending:
            sizes.append(len(self.pending))
        flush(self)

    monkeypatch.setattr(record.Writes, "flush", counted)
    return sizes


def test_worker_processes_systems_are_written_once_with_the_hashes(tmp_path, monkeypatch):
    monkeypatch.setattr(campaign, "PARALLEL_MIN_BYTES", 0)  # worker processes, however small
    monkeypatch.setattr(record, "FLUSH_SECONDS", 1e9)  # none on time
    sizes = _flushes(monkeypatch)
    config = load_config(make_campaign(tmp_path / "c", systems=12))
    report = run_campaign(config, workers=3)
    assert report.failures == [] and report.evaluated == 24
    assert sizes == [12]
    with Store(config.store, read_only=True) as store:
        assert store.query("SELECT count(*) FROM systems WHERE status = 'ok'")[1] == [(12,)]
        assert store.query("SELECT count(*) FROM files WHERE path LIKE '%/runs/r%.txt'")[1] == [(12,)]


def test_in_this_process_the_systems_are_written_once(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "FLUSH_SECONDS", 1e9)
    sizes = _flushes(monkeypatch)
    config = load_config(make_campaign(tmp_path / "c", systems=5))
    assert run_campaign(config, workers=1).evaluated == 10
    assert sizes == [5]


def test_a_failed_system_is_written_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "FLUSH_SECONDS", 1e9)
    sizes = _flushes(monkeypatch)
    (tmp_path / "c").mkdir()
    path = make_campaign(tmp_path / "c", systems=4)
    (tmp_path / "c" / "runs" / "r01.txt").write_text("not a run\n")
    config = load_config(path, strict=False)
    report = run_campaign(config, workers=1)
    assert [f.subject for f in report.failures] == ["system 'r01'"]
    assert sizes == [2, 2]  # r00 and the failed r01, then r02 and r03


def test_two_systems_with_the_same_file_share_its_evaluation(tmp_path):
    """Their results are one evaluation's, written once in the same write (the summaries and
    profiles of an evaluation met twice are replaced, not inserted twice)."""
    import shutil

    path = make_campaign(tmp_path / "c", systems=3)
    runs = tmp_path / "c" / "runs"
    shutil.copy(runs / "r00.txt", runs / "r03.txt")
    config = load_config(path)
    report = run_campaign(config, workers=1)
    assert report.failures == [] and report.evaluated == 8
    with Store(config.store, read_only=True) as store:
        shown = dict(store.query("SELECT system, evaluation_id FROM current "
                                 "WHERE qrels = 'official'")[1])
        counts = store.query("SELECT count(*), count(DISTINCT (evaluation_id, measure)) "
                             "FROM summaries")[1]
    assert shown["r00"] == shown["r03"] and len(set(shown.values())) == 3
    assert counts[0][0] == counts[0][1]
