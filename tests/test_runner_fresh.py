"""A fresh store (none when ``irbench run`` began) is opened, and told the campaign, while the
first runs are scored (the engine's ``meanwhile``), and what is stored is what the usual order
stores."""

from __future__ import annotations

import os

import pytest
from campaigns import make_campaign

from irbench.config import load_config
from irbench.runner import inputs, run_campaign
from irbench.store import Store

VIEWS = ("per_query", "means", "systems", "qrels_sets", "topics", "suites", "measures")


def _contents(store_path: str) -> dict:
    with Store(store_path, read_only=True) as store:
        out = {}
        for view in VIEWS:
            columns, rows = store.query(f"SELECT * FROM {view}")
            keep = [i for i, c in enumerate(columns) if c not in ("runner_id",)]
            out[view] = sorted(tuple(row[i] for i in keep) for row in rows)
        out["runners"] = store.query("SELECT status, evaluated, reused, failed "
                                     "FROM runner_runs")[1]
    return out


def test_a_fresh_store_is_opened_once_the_runs_are_being_scored(tmp_path, monkeypatch):
    """The store is opened after the qrels are read and the runs planned, as the engine's
    ``meanwhile`` (in this process: before the first outcome is handled), and stores what
    the usual order stores."""
    from irbench.runner import engine

    config = load_config(make_campaign(tmp_path / "c", systems=3))
    events: list[str] = []
    opened, read_qrels, mapped = Store.__init__, inputs.Inputs.read_qrels, engine.InProcess.map

    def open_store(self, *args, **kwargs):
        events.append("open")
        opened(self, *args, **kwargs)

    def reading(self, *args, **kwargs):
        events.append("qrels")
        return read_qrels(self, *args, **kwargs)

    def mapping(self, fn, items, shared, on_result, on_lost=None, meanwhile=None):
        events.append(f"map with meanwhile: {meanwhile is not None}")
        return mapped(self, fn, items, shared,
                      lambda *a: (events.append("outcome"), on_result(*a)), on_lost, meanwhile)

    monkeypatch.setattr(Store, "__init__", open_store)
    monkeypatch.setattr(inputs.Inputs, "read_qrels", reading)
    monkeypatch.setattr(engine.InProcess, "map", mapping)
    report = run_campaign(config, workers=1, fresh=True)
    # (a first store made by the migrations opens twice: a file made, then the store)
    first = [events.index(e) for e in ("qrels", "map with meanwhile: True", "open", "outcome")]
    assert first == sorted(first) and events.count("outcome") == 3
    assert report.failures == [] and report.evaluated == 6
    monkeypatch.undo()
    fresh = _contents(config.store)
    os.remove(config.store)
    assert run_campaign(config, workers=1).evaluated == 6
    assert _contents(config.store) == fresh


def test_a_fresh_store_on_worker_processes_stores_what_the_usual_order_does(tmp_path,
                                                                             monkeypatch):
    from irbench.runner import campaign

    monkeypatch.setattr(campaign, "PARALLEL_MIN_BYTES", 0)  # worker processes, however small
    config = load_config(make_campaign(tmp_path / "c", systems=12))
    report = run_campaign(config, workers=2, fresh=True)
    assert report.failures == [] and report.evaluated == 24
    fresh = _contents(config.store)
    os.remove(config.store)
    assert run_campaign(config, workers=2).evaluated == 24
    assert _contents(config.store) == fresh


def test_a_store_that_appeared_meanwhile_is_scored_into_as_usual(tmp_path):
    """Another run made the store between this run's look and its opening: the runs are
    scored again (the plan was made before the store was opened) and the store holds what
    it held, with this run's runner row."""
    config = load_config(make_campaign(tmp_path / "c", systems=3))
    run_campaign(config, workers=1)
    before = _contents(config.store)
    again = run_campaign(config, workers=1, fresh=True)
    assert (again.evaluated, again.reused, again.failures) == (6, 0, [])
    after = _contents(config.store)
    assert after.pop("runners")[-1] == ("ok", 6, 0, 0)
    before.pop("runners")
    assert after == before


def test_a_fresh_store_that_cannot_be_opened_is_the_error(tmp_path):
    """The path of the store turned out to be something else by the time it was opened: a
    StoreError, and no outcome was written anywhere."""
    from irbench.errors import StoreError

    config = load_config(make_campaign(tmp_path / "c", systems=3))
    with open(config.store, "w") as fh:
        fh.write("SQLite format 3\0 not a store")
    with pytest.raises(StoreError, match="not an irbench score store"):
        run_campaign(config, workers=1, fresh=True)


@pytest.mark.parametrize("missing", [True, False])
def test_a_fresh_store_records_failures_and_missing_runs(tmp_path, missing):
    path = make_campaign(tmp_path / "c", systems=3)
    (tmp_path / "c" / "runs" / "r01.txt").write_text("not a run\n")
    if missing:
        path.write_text(path.read_text().replace(
            "  - glob: ../runs/r*.txt\n",
            "  - glob: ../runs/r*.txt\n  - {name: gone, run: ../runs/gone.txt}\n"))
    config = load_config(path, strict=False)
    report = run_campaign(config, workers=1, fresh=True)
    failed = sorted(f.subject for f in report.failures)
    assert failed == [*(["system 'gone'"] if missing else []), "system 'r01'"]
    with Store(config.store, read_only=True) as store:
        rows = dict(store.query("SELECT name, status FROM systems")[1])
        runner_rows = store.query("SELECT status, failed FROM runner_runs")[1]
    assert rows["r00"] == rows["r02"] == "ok" and rows["r01"] == "failed"
    assert rows.get("gone") == ("failed" if missing else None)
    assert runner_rows == [("failed", len(failed))]
