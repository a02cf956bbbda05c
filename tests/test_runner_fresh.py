"""A fresh store (none when ``irbench run`` began) is opened in a thread while the inputs are
read, and what is stored is what the usual order stores."""

from __future__ import annotations

import os
import threading

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


def test_a_fresh_store_is_opened_while_the_inputs_are_read(tmp_path, monkeypatch):
    config = load_config(make_campaign(tmp_path / "c", systems=3))
    read, seen = threading.Event(), []
    opened, read_qrels = Store.__init__, inputs.Inputs.read_qrels

    def open_store(self, *args, **kwargs):
        if not seen:  # the store opened in a thread of its own, the qrels read meanwhile
            seen.append((threading.current_thread() is threading.main_thread(),
                         read.wait(60)))
        opened(self, *args, **kwargs)

    def reading(self, *args, **kwargs):
        read.set()
        return read_qrels(self, *args, **kwargs)

    monkeypatch.setattr(Store, "__init__", open_store)
    monkeypatch.setattr(inputs.Inputs, "read_qrels", reading)
    report = run_campaign(config, workers=1, fresh=True)
    assert seen == [(False, True)]
    assert report.failures == [] and report.evaluated == 6
    monkeypatch.undo()
    fresh = _contents(config.store)
    os.remove(config.store)
    assert run_campaign(config, workers=1).evaluated == 6
    assert _contents(config.store) == fresh


def test_a_store_that_appeared_meanwhile_is_used_as_usual(tmp_path):
    """Another run made the store between this run's look and its opening: what it stored
    is reused, as it would be had the store been there."""
    config = load_config(make_campaign(tmp_path / "c", systems=3))
    run_campaign(config, workers=1)
    before = _contents(config.store)
    again = run_campaign(config, workers=1, fresh=True)
    assert (again.evaluated, again.reused, again.failures) == (0, 6, [])
    after = _contents(config.store)
    assert after.pop("runners")[-1] == ("ok", 0, 6, 0)
    before.pop("runners")
    assert after == before


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
