"""A UTF-8 byte-order mark at the start of a run, qrels or topics file is dropped (trec_eval
keeps it in the first topic id, so that topic loses a document: a documented difference)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

import irbench
from irbench import trec
from irbench.runner import parallel
from irbench.topics import read_topics

BOM = b"\xef\xbb\xbf"
QRELS = b"401 0 d1 1\n401 0 d2 0\n402 0 d3 1\n"
RUN = b"401 Q0 d1 1 2.0 r\n401 Q0 d2 2 1.0 r\n402 Q0 d3 1 1.0 r\n"


def _write(tmp_path, name, data, gz=False):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


@pytest.mark.parametrize("gz", [False, True])
def test_runs_and_qrels_lose_the_mark(tmp_path, gz):
    qrels = trec.read_qrels(_write(tmp_path, "qrels", BOM + QRELS, gz))
    run = trec.read_run(_write(tmp_path, "run", BOM + RUN, gz))
    assert qrels.query_id.tolist() == [b"401", b"401", b"402"]
    assert run.query_id.tolist() == [b"401", b"401", b"402"]
    plain = irbench.evaluate(io.BytesIO(QRELS), io.BytesIO(RUN), ["AP", "NumRet"])
    marked = irbench.evaluate(io.BytesIO(BOM + QRELS), io.BytesIO(BOM + RUN), ["AP", "NumRet"])
    assert marked.topics == plain.topics == ("401", "402")
    assert np.array_equal(marked["NumRet"], [2, 1]) and np.array_equal(marked["AP"], plain["AP"])


def test_a_mark_inside_a_file_is_kept(tmp_path):
    run = trec.read_run(_write(tmp_path, "run", RUN + BOM + b"403 Q0 d4 1 1.0 r\n"))
    assert run.query_id[-1] == BOM + b"403"


def test_a_large_run_read_in_parts_loses_the_mark(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "_PARALLEL_READ_BYTES", 1)
    lines = b"".join(b"%d Q0 d%d %d 1.0 r\n" % (t, d, d) for t in range(1, 50)
                     for d in range(1, 40))
    path = _write(tmp_path, "big", BOM + lines)
    whole = trec.read_run(path)
    parts = parallel.read_run(path, workers=2)
    assert whole.query_id[0] == parts.query_id[0] == b"1"
    assert np.array_equal(whole.doc_id, parts.doc_id)


def test_topics_lose_the_mark(tmp_path):
    path = _write(tmp_path, "topics.tsv", BOM + b"401\tfirst\n402\tsecond\n")
    assert read_topics(path).query_id == ("401", "402")
