"""`irds:<dataset-id>` topics and qrels in a config and as irbench eval's qrels (issue 16),
offline: each test runs irbench in a subprocess whose IR_DATASETS_HOME holds the files
ir_datasets reads for antique/test (as its downloader leaves them), with every proxy pointed
at a closed port so that no download could happen even if one were tried."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ir_datasets")

REPO = Path(__file__).resolve().parent.parent
QUERIES = "3990512\thow can we get concentration onsomething?\n714612\twhy is the sky blue?\n"
QRELS = ("3990512 Q0 3990512_0 4\n3990512 Q0 1139066_1 2\n714612 Q0 714612_0 3\n"
         "714612 Q0 9999_1 1\n")
RUN = "3990512 Q0 3990512_0 1 2.0 r\n3990512 Q0 1139066_1 2 1.0 r\n714612 Q0 9999_1 1 1.0 r\n"


def _irbench(tmp_path: Path, *argv, home: Path | None = None, code: str | None = None):
    env = dict(os.environ, PYTHONPATH=str(REPO), IR_DATASETS_HOME=str(home or tmp_path / "irds"),
               IRBENCH_CACHE_DIR=str(tmp_path / "cache"), HTTP_PROXY="http://127.0.0.1:9",
               HTTPS_PROXY="http://127.0.0.1:9", IR_DATASETS_DL_TRIES="1")
    command = [sys.executable, "-c", code, *argv] if code else \
        [sys.executable, "-m", "irbench", *argv]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def campaign(tmp_path):
    data = tmp_path / "irds" / "antique" / "test"
    data.mkdir(parents=True)
    (data / "queries.txt").write_text(QUERIES)
    (data / "qrels").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "topics.tsv").write_text(QUERIES)
    (tmp_path / "c.yaml").write_text(
        "collection:\n  topics: irds:antique/test\n  qrels: irds:antique/test\n"
        "systems: {r: run.txt}\nsuites: {core: [AP, nDCG@10, P@10]}\n")
    (tmp_path / "plain.yaml").write_text(
        "collection:\n  topics: topics.tsv\n  qrels: qrels.txt\nstore: plain.duckdb\n"
        "systems: {r: run.txt}\nsuites: {core: [AP, nDCG@10, P@10]}\n")
    return tmp_path


def test_a_campaign_on_an_ir_datasets_dataset_scores_as_on_its_files(campaign):
    assert _irbench(campaign, "check", "c.yaml").returncode == 0
    ran = _irbench(campaign, "run", "--workers", "1", "c.yaml")
    assert ran.returncode == 0, ran.stderr
    plain = _irbench(campaign, "run", "--workers", "1", "plain.yaml")
    assert plain.returncode == 0, plain.stderr
    ours = _irbench(campaign, "scores", "c.yaml", "--per-query", "--format", "csv").stdout
    theirs = _irbench(campaign, "scores", "plain.yaml", "--per-query", "--format", "csv").stdout
    assert ours == theirs and ours.count("\n") == 1 + 3 * 2
    written = campaign / "cache" / "irds" / "antique" / "test"
    assert (written / "qrels.txt").read_text() == QRELS
    assert (written / "topics.tsv").read_text() == QUERIES
    evaluated = _irbench(campaign, "eval", "-m", "map", "irds:antique/test", "run.txt")
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout == _irbench(campaign, "eval", "-m", "map", "qrels.txt",
                                        "run.txt").stdout


def test_files_ir_datasets_would_download_are_named_not_fetched(campaign):
    empty = campaign / "nothing"
    empty.mkdir()
    checked = _irbench(campaign, "check", "c.yaml", home=empty)
    assert checked.returncode == 2
    assert "Traceback" not in checked.stderr
    assert ("c.yaml:2: collection.topics: 'irds:antique/test': ir_datasets has not downloaded "
            f"{empty / 'antique' / 'test' / 'queries.txt'}") in checked.stderr
    assert "irbench does not download" in checked.stderr
    assert not (campaign / "cache" / "irds").exists()


def test_an_unknown_dataset_and_a_malformed_id(campaign):
    (campaign / "bad.yaml").write_text(
        "collection:\n  topics: irds:no/such/dataset\n  qrels: irds:../etc\n"
        "systems: {r: run.txt}\nsuites: {core: [AP]}\n")
    checked = _irbench(campaign, "check", "bad.yaml")
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert "bad.yaml:2: collection.topics: 'irds:no/such/dataset': ir_datasets knows no " \
           "dataset 'no/such/dataset'" in checked.stderr
    assert "bad.yaml:3: collection.qrels: 'irds:../etc': not an ir_datasets id" in \
        checked.stderr


BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "ir_datasets" or name.startswith("ir_datasets."):
            raise ImportError("no ir_datasets here")
sys.meta_path.insert(0, Block())
from irbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_the_message_says_how_to_install_it(campaign):
    checked = _irbench(campaign, "check", "c.yaml", code=BLOCK)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert "reading ir_datasets needs the irds extra: pip install 'irbench[irds]'" in \
        checked.stderr
