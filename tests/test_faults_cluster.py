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


pytestmark = pytest.mark.usefixtures("no_dask_client_left")  # see tests/conftest.py


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


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _RealCluster:
    """A `dask scheduler` and a `dask worker` process, as an organiser starts them."""

    def __init__(self):
        import subprocess
        import sys

        self.address = f"tcp://127.0.0.1:{_free_port()}"
        port = self.address.rsplit(":", 1)[1]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", port, "--no-dashboard"], **quiet)
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads",
             "1", "--no-dashboard"], **quiet)
        with distributed.Client(self.address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)

    def close(self) -> None:
        for process in (self.worker, self.scheduler):
            process.kill()
            process.wait()


def test_a_lost_scheduler_is_a_message_and_the_next_run_finishes(tmp_path, capsys,
                                                                    monkeypatch):
    from irbench.config import load_config
    from irbench.runner import campaign
    from irbench.store import Store

    config = make_campaign(tmp_path / "camp", systems=6, extra_qrels=False)
    cluster = _RealCluster()
    real = campaign.outcome_record
    seen = []

    def record(*args, **kwargs):  # the scheduler dies once the first system is back
        if not seen:
            cluster.scheduler.kill()
            cluster.scheduler.wait()
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(campaign, "outcome_record", record)
    try:
        rc = cli.main(["run", "--quiet", "--cluster", cluster.address, str(config)])
    finally:
        cluster.close()
    err = capsys.readouterr().err
    assert rc == 1 and "lost the Dask scheduler" in err and "Traceback" not in err
    with Store(load_config(config).store, read_only=True) as store:
        _, rows = store.query("SELECT status FROM runner_runs")
    assert rows == [("failed",)]
    monkeypatch.setattr(campaign, "outcome_record", real)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    twin = make_campaign(tmp_path / "twin", systems=6, extra_qrels=False)
    assert cli.main(["run", "--quiet", "--workers", "1", str(twin)]) == 0
    stored = []
    for path in (config, twin):
        with Store(load_config(path).store, read_only=True) as store:
            stored.append(sorted(store.query("SELECT * FROM per_query")[1]))
    assert stored[0] == stored[1]
