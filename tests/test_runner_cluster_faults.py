"""Cluster faults are a system's failure, never the campaign's (issue 25): an item that keeps
killing its workers is lost alone (the others of its batch are scored), the shared value
survives the death of any worker holding it, and bad addresses are messages."""

from __future__ import annotations

import os

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.errors import ClusterError

distributed = pytest.importorskip("distributed")

from irbench.runner.engine import Cluster, dask_client, local_workers  # noqa: E402

POISON = 7


def _square_unless_poison(item: int, shared: int) -> int:
    if item == POISON:
        os._exit(1)  # as the OOM killer ends a worker that reads a huge run
    return item * item + shared


def test_a_poison_item_is_lost_alone_and_the_shared_value_survives():
    got, lost = {}, []

    def on_lost(item, error):
        lost.append((item, type(error).__name__))
        return None

    items = list(range(200))  # batches of several items: the poison's batch-mates survive
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local, \
            distributed.Client(local) as client:
        Cluster(client, local.scheduler_address).map(_square_unless_poison, items, 1000,
                                                      got.__setitem__, on_lost)
    assert lost == [(POISON, "KilledWorker")]
    assert got == {i: (None if i == POISON else i * i + 1000) for i in items}


@pytest.mark.parametrize("address, words", [
    ("tls://127.0.0.1:1", "a tls:// scheduler needs the certificates"),
    ("local:99999", "local:N takes N from 1 to"),
    ("local:0", "local:N takes a number of workers >= 1"),
])
def test_bad_cluster_addresses_are_messages(tmp_path, capsys, address, words):
    config = make_campaign(tmp_path, systems=1, extra_qrels=False)
    assert cli.main(["run", "--quiet", "--cluster", address, str(config)]) in (1, 2)
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "runs" / "c.duckdb").exists()  # refused before the store


def test_local_workers_are_bounded_by_the_cpus(monkeypatch):
    cpus = os.cpu_count() or 1
    assert local_workers("local") == cpus
    assert local_workers(f"local:{cpus}") == cpus
    with pytest.raises(ClusterError, match="IRBENCH_MAX_LOCAL_WORKERS allows more"):
        local_workers(f"local:{cpus + 1}")
    monkeypatch.setenv("IRBENCH_MAX_LOCAL_WORKERS", str(cpus + 1))
    assert local_workers(f"local:{cpus + 1}") == cpus + 1


def test_a_lost_worker_on_the_cluster_is_a_message_naming_the_run():
    from irbench.runner.campaign import _lost
    from irbench.runner.score import Task

    task = Task(system="big", path="runs/big.txt", wanted={})
    outcome = _lost(task, RuntimeError("KilledWorker"), Cluster(client=None))
    assert outcome.error.startswith("runs/big.txt: not scored: Dask workers died while "
                                    "scoring it")


def test_an_unreachable_tls_scheduler_is_a_cluster_error():
    with pytest.raises(ClusterError, match="tls://127.0.0.1:1"):
        with dask_client("tls://127.0.0.1:1", connect_timeout=2):
            pass
