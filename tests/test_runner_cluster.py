"""irbench run on a real Dask cluster (distributed.LocalCluster of worker processes): the store
after a cluster run equals the store after a local run, for every judgment kind; a worker
killed with SIGKILL mid-run is survived; an unreachable scheduler is a clear error."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import textwrap
from pathlib import Path

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.config import load_config
from irbench.errors import ClusterError
from irbench.runner import run_campaign
from irbench.store import Store

distributed = pytest.importorskip("distributed")

TE = Path(__file__).parent / "data" / "trec_eval_test"


pytestmark = pytest.mark.usefixtures("no_dask_client_left")  # see tests/conftest.py


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


def _contents(config) -> dict:
    """What a campaign's store shows: every per-topic value, mean, profile and analysis."""
    with Store(config.store, read_only=True) as store:
        out = {view: sorted(store.query(f"SELECT * FROM {view}")[1])
               for view in ("per_query", "means")}
        out["profiles"] = {q.name: store.profiles(q.name) for q in config.qrels}
        out["analyses"] = sorted(store.query("SELECT kind, key, params, result FROM analyses")[1])
        out["systems"] = sorted(store.query(
            "SELECT name, sha256, run_tag, status, num_topics, num_docs FROM systems")[1])
    return out


def _kinds_campaign(root: Path) -> Path:
    """Ad hoc, diversity, judgment-group and preference qrels sets over trec_eval's test runs."""
    (root / "configs").mkdir(parents=True)
    runs = root / "runs"
    runs.mkdir()
    for name in ("qrels.test", "qrels.123", "results.test", "results.trunc"):
        shutil.copy(TE / name, runs / name)
    lines = [line.split() for line in (TE / "qrels.test").read_text().splitlines() if line]
    (runs / "diversity.qrels").write_text(
        "".join(f"{q} {1 + i % 3} {d} {r}\n" for i, (q, _, d, r) in enumerate(lines)))
    config = root / "configs" / "k.yaml"
    config.write_text(textwrap.dedent("""\
        collection:
          qrels:
            official: ../runs/qrels.test
            subtopics: {path: ../runs/diversity.qrels, kind: diversity}
            users: {path: ../runs/qrels.123, kind: qrels_jg}
            preferences: {path: ../runs/qrels.test, kind: qrels_prefs}
        systems:
          standard: ../runs/results.test
          short: ../runs/results.trunc
        suites:
          core: [AP, P@10, nDCG@10, alpha_nDCG@20, map_avgjg, prefs_simp]
        report: {reduction_design: buckley-voorhees}
        """))
    return config


def _twin(path: Path, tmp: Path) -> Path:
    """The same campaign in another folder (its own store)."""
    copy = tmp / "twin"
    shutil.copytree(path.parent.parent, copy)
    for store in copy.rglob("*.duckdb"):
        store.unlink()
    return copy / path.parent.name / path.name


@pytest.mark.parametrize("kind", ["adhoc", "kinds"])
def test_a_cluster_run_stores_what_a_local_run_stores(tmp_path, cluster, kind):
    path = (make_campaign(tmp_path / "c", systems=6, topics=6) if kind == "adhoc"
            else _kinds_campaign(tmp_path / "c"))
    twin = _twin(path, tmp_path)
    local = run_campaign(load_config(path), workers=1)
    remote = run_campaign(load_config(twin), cluster=cluster.scheduler_address)
    assert local.failures == remote.failures == []
    assert (local.evaluated, local.analysed) == (remote.evaluated, remote.analysed)
    assert remote.evaluated > 0
    assert _contents(load_config(path)) == _contents(load_config(twin))
    with Store(load_config(twin).store, read_only=True) as store:
        environment = store.query("SELECT environment FROM runner_runs")[1][0][0]
    assert '"name": "dask"' in environment and cluster.scheduler_address in environment
    again = run_campaign(load_config(twin), cluster=cluster.scheduler_address)
    assert (again.evaluated, again.failures) == (0, [])


def test_failures_on_the_cluster_are_the_same_messages(tmp_path, cluster):
    path = make_campaign(tmp_path / "c", systems=3, topics=4)
    with open(tmp_path / "c" / "runs" / "r01.txt", "a") as fh:
        fh.write("t01 Q0 bad 1 not-a-score tag\n")
    twin = _twin(path, tmp_path)
    local = run_campaign(load_config(path), workers=1)
    remote = run_campaign(load_config(twin), cluster=cluster.scheduler_address)
    assert [str(f).replace(str(tmp_path / "twin"), str(tmp_path / "c"))
            for f in remote.failures] == [str(f) for f in local.failures]
    assert len(local.failures) == 1 and "r01.txt:" in str(local.failures[0])


class KillOnce(distributed.WorkerPlugin):
    """A worker plugin of this test only: the first task that reads the marked run file kills
    its own worker process with SIGKILL (a worker dying mid-run, as the OOM killer does);
    the marker is removed first, so Dask's retry on another worker succeeds."""

    name = "irbench-test-kill-once"

    def __init__(self, marker: str):
        self.marker = marker

    def setup(self, worker):
        self.worker = worker

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing":
            try:
                os.unlink(self.marker)  # atomic: exactly one worker wins
            except FileNotFoundError:
                return
            os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_mid_run_is_survived(tmp_path):
    path = make_campaign(tmp_path / "c", systems=5, topics=5)
    twin = _twin(path, tmp_path)
    run_campaign(load_config(path), workers=1)
    marker = tmp_path / "kill-next-task"
    marker.write_text("")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local, \
            distributed.Client(local) as client:
        client.register_plugin(KillOnce(str(marker)))
        report = run_campaign(load_config(twin), cluster=local.scheduler_address)
    assert not marker.exists()  # a worker was killed
    assert report.failures == [] and report.evaluated == 10
    assert _contents(load_config(path)) == _contents(load_config(twin))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=2, topics=3)
    address = f"tcp://127.0.0.1:{_closed_port()}"
    from irbench.runner import engine

    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler at " + address):
        with engine.dask_client(address, connect_timeout=2):
            pass
    assert cli.main(["run", "--quiet", "--cluster", "nonsense address", str(path)]) == 1
    assert "--cluster: 'nonsense address' is not a scheduler address" in \
        capsys.readouterr().err
    assert not Path(load_config(path).store).exists()  # nothing written


def test_local_cluster_from_the_command_line_and_the_config(tmp_path, capsys):
    path = make_campaign(tmp_path, systems=3, topics=4)
    assert cli.main(["run", "--quiet", "--cluster", "local:2", str(path)]) == 0
    assert "6 evaluated" in capsys.readouterr().err
    path.write_text(path.read_text() + "execution: {engine: dask, address: 'local:1'}\n")
    assert cli.main(["run", "--quiet", str(path)]) == 0
    assert "0 evaluated, 6 reused" in capsys.readouterr().err
    path.write_text(path.read_text().replace("address: 'local:1'", "address: 'local:0'"))
    assert cli.main(["check", str(path)]) == 2  # a config problem
    assert "execution.address: local:N takes a number of workers >= 1" in \
        capsys.readouterr().err


class KillClient(distributed.WorkerPlugin):
    """A worker plugin of this test only: when the ``at``-th task starts on any worker, the
    client (the irbench process, pid in a file) is killed with SIGKILL, once."""

    name = "irbench-test-kill-client"

    def __init__(self, folder: str, at: int):
        self.folder, self.at = folder, at

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing":
            return
        started = os.path.join(self.folder, "started")
        os.makedirs(started, exist_ok=True)
        open(os.path.join(started, str(abs(hash(str(key))))), "w").close()
        if len(os.listdir(started)) < self.at:
            return
        try:  # exactly one worker kills
            os.close(os.open(os.path.join(self.folder, "killed"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        with open(os.path.join(self.folder, "client.pid")) as fh:
            os.kill(int(fh.read()), signal.SIGKILL)


def test_a_client_killed_mid_run_leaves_a_store_the_next_run_completes(tmp_path):
    """kill -9 of the irbench process while a cluster scores its runs: the store holds whole
    systems only, and the next run (here on this machine) ends with the same store as a run
    that was never interrupted."""
    import subprocess
    import sys

    path = make_campaign(tmp_path / "c", systems=60, topics=5, depth=20)
    twin = _twin(path, tmp_path)
    run_campaign(load_config(twin), workers=1)
    folder = tmp_path / "signals"
    folder.mkdir()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local, \
            distributed.Client(local) as client:
        client.register_plugin(KillClient(str(folder), at=50))
        proc = subprocess.Popen(
            [sys.executable, "-m", "irbench", "run", "--quiet", "--cluster",
             local.scheduler_address, str(path)],
            env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        (folder / "client.pid").write_text(str(proc.pid))
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err
    assert (folder / "killed").exists()
    with Store(load_config(path).store, read_only=True) as store:
        kept = store.query("SELECT count(*) FROM current")[1][0][0]
        statuses = store.query("SELECT status FROM runner_runs")[1]
    assert kept < 120 and kept % 2 == 0  # whole systems (2 qrels sets each), or none
    assert statuses == [("running",)]  # as the kill left it
    resumed = run_campaign(load_config(path), workers=1)
    assert resumed.failures == [] and resumed.evaluated == 120 - kept
    assert _contents(load_config(path)) == _contents(load_config(twin))
    with Store(load_config(path).store, read_only=True) as store:
        statuses = store.query("SELECT status FROM runner_runs ORDER BY runner_id")[1]
    assert statuses == [("interrupted",), ("ok",)]
