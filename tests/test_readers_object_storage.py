"""Inputs by URL, against a real S3-compatible server started here (moto's server mode, on
localhost): a campaign whose topics, qrels and runs are s3:// objects (its runs found by a glob
over a prefix) stores what the same campaign on local files stores; unchanged objects are not
evaluated again, a changed one is; a missing object is that system's failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.config import load_config
from irbench.errors import ConfigError
from irbench.runner import run_campaign
from irbench.store import Store

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")


@pytest.fixture(scope="module")
def bucket():
    """A bucket on a moto S3 server of this module; boto's usual environment points to it."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    _, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    fs.mkdir("campaign")
    try:
        yield fs
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


def _stored(config) -> dict:
    with Store(config.store, read_only=True) as store:
        return {"per_query": sorted(store.query("SELECT * FROM per_query")[1]),
                "means": sorted(store.query("SELECT * FROM means")[1]),
                "profiles": store.profiles("official"),
                "analyses": sorted(store.query("SELECT key, result FROM analyses")[1]),
                "systems": sorted(store.query("SELECT name, sha256, run_tag FROM systems")[1])}


def _on_s3(fs, path: Path, prefix: str) -> Path:
    """The campaign's inputs uploaded under s3://campaign/PREFIX/, and a config naming them by
    URL (its store stays local)."""
    runs = path.parent.parent / "runs"
    for file in sorted(runs.iterdir()):
        if file.suffix in (".txt", ".tsv"):
            fs.pipe(f"campaign/{prefix}/{file.name}", file.read_bytes())
    s3 = f"s3://campaign/{prefix}"
    config = path.parent / "s3.yaml"
    config.write_text(path.read_text()
                      .replace("../runs/topics.tsv", f"{s3}/topics.tsv")
                      .replace("../runs/qrels.txt", f"{s3}/qrels.txt")
                      .replace("../runs/shallow.txt", f"{s3}/shallow.txt")
                      .replace("../runs/r*.txt", f"{s3}/r*.txt")
                      + "store: ../s3.duckdb\n")
    return config


def test_a_campaign_on_s3_stores_what_it_stores_on_local_files(tmp_path, bucket):
    path = make_campaign(tmp_path, systems=4, topics=5)
    path.write_text(path.read_text() + "report: {reduction_design: buckley-voorhees}\n")
    remote = _on_s3(bucket, path, "same")
    config = load_config(remote)
    assert [s.path for s in config.systems] == [f"s3://campaign/same/r{i:02d}.txt"
                                                for i in range(4)]
    assert config.topics == "s3://campaign/same/topics.tsv"
    local = run_campaign(load_config(path), workers=1)
    report = run_campaign(config, workers=1)
    assert local.failures == report.failures == [] and report.evaluated == 8
    assert report.analysed == ["judgment-reduction", "qrels-agreement"]
    assert _stored(load_config(path)) == _stored(config)  # same sha256, same numbers

    again = run_campaign(load_config(remote), workers=1)
    assert (again.evaluated, again.reused) == (0, 8)
    bucket.pipe("campaign/same/r02.txt",
                (tmp_path / "runs" / "r01.txt").read_bytes().replace(b"tag01", b"tag02"))
    changed = run_campaign(load_config(remote), workers=1)
    assert (changed.evaluated, changed.reused, [str(f) for f in changed.failures]) == (2, 6, [])


def test_a_missing_object_is_its_systems_failure(tmp_path, bucket, capsys):
    path = make_campaign(tmp_path, systems=2, topics=3, extra_qrels=False)
    remote = _on_s3(bucket, path, "missing")
    remote.write_text(remote.read_text().replace(
        "  - glob: s3://campaign/missing/r*.txt",
        "  - glob: s3://campaign/missing/r*.txt\n"
        "  - {name: gone, run: s3://campaign/missing/gone.txt}"))
    assert cli.main(["run", "--quiet", "--workers", "1", str(remote)]) == 1
    err = capsys.readouterr().err
    assert "system 'gone': s3://campaign/missing/gone.txt: cannot read (no such object)" in err
    with Store(load_config(remote).store, read_only=True) as store:
        assert len(store.profiles("official")) == 2  # the others are stored

    remote.write_text(remote.read_text().replace("s3://campaign/missing/r*.txt",
                                                 "s3://campaign/nowhere/r*.txt"))
    with pytest.raises(ConfigError, match="'s3://campaign/nowhere/r\\*.txt' matches no object"):
        load_config(remote)
    remote.write_text(remote.read_text().replace("store: ../s3.duckdb",
                                                 "store: s3://campaign/store.duckdb"))
    with pytest.raises(ConfigError, match="store: a URL is taken for topics, qrels and run"):
        load_config(remote)


def test_irbench_eval_reads_urls_as_files(tmp_path, bucket, capsys):
    path = make_campaign(tmp_path, systems=2, topics=4, extra_qrels=False)
    _on_s3(bucket, path, "eval")
    runs = tmp_path / "runs"
    local = [str(runs / "qrels.txt"), str(runs / "r00.txt"), str(runs / "r01.txt")]
    remote = ["s3://campaign/eval/qrels.txt", "s3://campaign/eval/r00.txt",
              "s3://campaign/eval/r01.txt"]
    outputs = []
    for args in (local, remote):
        capsys.readouterr()
        assert cli.main(["eval", "-q", "-m", "all_trec", *args]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1].replace("s3://campaign/eval/", str(runs) + "/")
    assert cli.main(["eval", "-m", "map", remote[0], "s3://campaign/eval/none.txt"]) == 2
    assert "s3://campaign/eval/none.txt: cannot read (no such object)" in \
        capsys.readouterr().err


def test_a_huge_run_at_a_url_is_streamed_in_topic_shards(tmp_path, bucket, monkeypatch):
    """A run object bigger than IRBENCH_SHARD_BYTES is hashed and scored as a stream, like a
    local file (issue 25): never read whole, the same numbers as the local campaign."""
    from irbench.runner import inputs, shards

    path = make_campaign(tmp_path, systems=3, topics=12, depth=40, extra_qrels=False)
    remote = _on_s3(bucket, path, "sharded")
    size = min(p.stat().st_size for p in (tmp_path / "runs").glob("r*.txt"))
    monkeypatch.setenv("IRBENCH_SHARD_BYTES", str(size // 3))
    sharded = []
    real = shards.evaluate_sharded
    monkeypatch.setattr(shards, "evaluate_sharded",
                        lambda qrels, where, *a, **k: sharded.append(where) or
                        real(qrels, where, *a, **k))
    real_load = inputs.load

    def load(where):
        assert not (where.startswith("s3://") and "/r0" in where), f"{where} read whole"
        return real_load(where)

    monkeypatch.setattr(inputs, "load", load)
    monkeypatch.setattr("irbench.runner.score.load", load)
    report = run_campaign(load_config(remote), workers=1)
    assert report.failures == [] and report.evaluated == 3
    assert sorted(sharded) == [f"s3://campaign/sharded/r{i:02d}.txt" for i in range(3)]
    monkeypatch.delenv("IRBENCH_SHARD_BYTES")
    run_campaign(load_config(path), workers=1)
    local, far = _stored(load_config(path)), _stored(load_config(remote))
    assert local["per_query"] == far["per_query"] and local["means"] == far["means"]
    assert local["systems"] == far["systems"]  # the same sha256 and run tags


def test_run_tags_of_objects_read_only_their_first_lines(tmp_path, bucket, monkeypatch):
    from irbench.trec import sources, text

    bucket.pipe("campaign/tags/a.txt", b"# a comment\n1 Q0 d1 1 2.0 alpha\n" + b"x" * 300_000)
    monkeypatch.setattr(sources, "read_url", lambda url: pytest.fail(f"{url} read whole"))
    assert text.run_tag("s3://campaign/tags/a.txt") == "alpha"
    assert text.run_tag("s3://campaign/tags/missing.txt") == ""


def test_an_unreachable_server_is_not_a_missing_object(tmp_path):
    """fsspec's http file system says 'not found' when the connection is refused; the
    message says what happened (issue 25)."""
    import socket

    pytest.importorskip("aiohttp")
    from irbench.trec.sources import url_stat

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nobody listens there
    with pytest.raises(OSError) as exc:
        url_stat(f"http://127.0.0.1:{port}/runs/r1.txt")
    assert "cannot connect" in str(exc.value) and "no such object" not in str(exc.value)
