"""Hostile bytes against every reader and against `irbench check` / `irbench validate` (issue
15.1): random bytes, mutations of valid files and long tokens. A reader either reads the file
or raises one of irbench's own errors naming the file (never UnicodeDecodeError, ValueError,
IndexError, MemoryError ...), and its peak memory stays under a bound proportional to the
input: MEMORY_FLOOR + MEMORY_PER_BYTE x size (traced by tracemalloc, which sees numpy's
buffers). The per-byte factor is measured, not guessed: reading a run holds its bytes, the
split lines, the token columns (as wide as the widest token, at most 1,024 bytes) and their
sorted copies, about 40 bytes per input byte for the densest files here; the bound is 100.
Deterministic: hypothesis is derandomized and bounded."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irbench import cli, judgments, read_qrels, read_run
from irbench.answers import read_answers
from irbench.errors import IrbenchError
from irbench.judgments.diversity import read_intent_weights
from irbench.pooling import read_assessor_file
from irbench.submissions.ir_metadata import find_ir_metadata
from irbench.topics import read_topics
from irbench.trec import read_zscores

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "trec_eval_golden"
MEMORY_FLOOR = 64 << 20
MEMORY_PER_BYTE = 100
SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _kind(name):
    return lambda path: judgments.prepare(name, path)


READERS = {
    "run": read_run, "qrels": read_qrels, "topics": read_topics,
    "assessor": read_assessor_file, "zscores": read_zscores,
    "intent weights": read_intent_weights,
    **{f"judgments {k}": _kind(k) for k in judgments.KINDS},
    "answers": read_answers,
}
NAN_TEXT = "__nan__"


def _valid(name: str) -> bytes:
    """A valid input of the reader's own format, to mutate."""
    run = (DATA / "submissions" / "good-1.txt").read_bytes()
    qrels = b"401 0 DOC-401-01 1\n401 0 DOC-401-02 0\n402 0 DOC-402-01 2\n"
    return {
        "run": run, "qrels": qrels, "topics": (DATA / "submissions" / "topics.tsv").read_bytes(),
        "assessor": qrels, "zscores": b"401 map 0.25 0.1\n402 map 0.3 0.05\n",
        "intent weights": b"401 1 0.5\n401 2 0.5\n",
        "judgments adhoc": qrels,
        "judgments diversity": b"401 1 DOC-401-01 1\n401 2 DOC-401-02 0\n",
        "judgments qrels_jg": b"401 jg1 DOC-401-01 1\n401 jg2 DOC-401-02 0\n",
        "judgments prefs": b"401 jg1 s1 DOC-401-01 2\n401 jg1 s1 DOC-401-02 1\n",
        "judgments qrels_prefs": qrels,
        "judgments support": SUPPORT, "judgments support_shared": SUPPORT,
        "judgments nuggets": NUGGETS, "answers": ANSWERS,
    }[name]


SEGMENT = "msmarco_v2.1_doc_36_1381771658#3_2852387502"
SUPPORT = (json.dumps({"topic_id": "401", "run_id": "r1", "sentences": [
    {"text": "One two.", "citations": [{"reference": SEGMENT, "support": "FS"},
                                      {"reference": "d2", "support": 1}]},
    {"text": NAN_TEXT, "citations": []}]}).replace(f'"{NAN_TEXT}"', "NaN") + "\n" + json.dumps(
    {"topic_id": "402", "run_id": "r1", "sentences": [
        {"text": "Three.", "sentenceID": 0,
         "citations": [{"reference": "d3", "support": 0}]}]}) + "\n").encode()
NUGGETS = "".join(json.dumps({"qid": t, "run_id": "r1", "nuggets": [
    {"text": "a fact", "importance": "vital", "assignment": "support"},
    {"text": "another", "importance": "okay", "assignment": "partial_support"}]}) + "\n"
    for t in ("401", "402")).encode()
ANSWERS = "".join(json.dumps({"run_id": "r1", "topic_id": t, "topic": "q",
                              "references": [SEGMENT, "d2"], "response_length": 4,
                              "answer": [{"text": "One two.", "citations": [0, 1]},
                                         {"text": "Three four.", "citations": []}]}) + "\n"
                  for t in ("401", "402")).encode()


def _read(name: str, data: bytes, suffix: str = ".txt") -> None:
    """Feed ``data`` to reader ``name`` from a file; assert the contract."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input" + suffix)
        Path(path).write_bytes(data)
        tracemalloc.start()
        try:
            READERS[name](path)
        except IrbenchError as exc:
            text = str(exc)
            assert text and "Traceback" not in text
            assert path in text or "input" in text, text  # names the file
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        size = os.path.getsize(path)
        assert peak <= MEMORY_FLOOR + MEMORY_PER_BYTE * size, (name, peak, size)


@st.composite
def mutated(draw, name: str) -> bytes:
    data = bytearray(_valid(name))
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "truncate"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif op == "duplicate":
            data[at:at] = data[max(0, at - 40):at]
        else:
            del data[at:]
    return bytes(data)


@st.composite
def long_token(draw, name: str) -> bytes:
    lines = _valid(name).split(b"\n")
    i = draw(st.integers(0, max(0, len([x for x in lines if x.strip()]) - 1)))
    fields = lines[i].split()
    if not fields:
        return _valid(name)
    j = draw(st.integers(0, len(fields) - 1))
    fields[j] = b"x" * draw(st.integers(1000, 200_000))
    lines[i] = b" ".join(fields)
    return b"\n".join(lines)


@pytest.mark.parametrize("name", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_random_bytes(name, data):
    _read(name, data.draw(st.binary(max_size=4096)))


@pytest.mark.parametrize("name", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_mutations_of_valid_files(name, data):
    _read(name, data.draw(mutated(name)))


@pytest.mark.parametrize("name", sorted(READERS))
@settings(derandomize=True, max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_long_tokens(name, data):
    _read(name, data.draw(long_token(name)))


@pytest.mark.parametrize("name", ["run", "qrels"])
def test_one_long_docno_in_many_lines_stays_in_bounds(name):
    """The case that once needed 5.65 GiB: one 1 MB docno in a 5,785-line run (numpy made
    every docno 1 MB wide); now a FILE:LINE error in a few MB."""
    valid = _valid(name).split(b"\n")[0]
    fields = valid.split()
    lines = [b" ".join(fields)] * 5785
    doc = 2 if name == "run" else 2
    long = list(fields)
    long[doc] = b"d" * (1 << 20)
    lines[3000] = b" ".join(long)
    _read(name, b"\n".join(lines) + b"\n")


def test_gzip_of_random_bytes_and_gzip_bombs():
    _read("run", gzip.compress(b"\x00\xff" * 1000), ".gz")
    _read("run", b"\x1f\x8b" + os.urandom(200), ".gz")  # gzip magic, garbage after


@SETTINGS
@given(data=st.binary(max_size=4096))
def test_ir_metadata_blocks(data):
    block = b"# ir_metadata.start\n" + data + b"\n# ir_metadata.end\n"
    try:
        find_ir_metadata(block + b"401 Q0 d 1 1.0 tag\n")
    except IrbenchError:
        pass


_CONFIG = """collection: {topics: topics.tsv, qrels: qrels.txt}
systems: {r: run.txt}
suites: {core: [AP, P@10]}
"""


@settings(derandomize=True, max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_check_and_validate_never_show_a_traceback(data):
    """`irbench check` and `irbench validate` on a campaign whose run file is hostile: exit 0
    or 1 (a problem found), a message, no traceback."""
    run = data.draw(st.one_of(st.binary(max_size=2048), mutated("run"), long_token("run")))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "topics.tsv").write_bytes(_valid("topics"))
        (root / "qrels.txt").write_bytes(_valid("qrels"))
        (root / "run.txt").write_bytes(run)
        (root / "c.yaml").write_text(_CONFIG)
        for argv in (["check", str(root / "c.yaml")], ["validate", str(root / "c.yaml")]):
            import contextlib
            import io

            err, out = io.StringIO(), io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                rc = cli.main(argv)
            assert rc in (0, 1), (argv, rc, err.getvalue())
            assert "Traceback" not in err.getvalue() + out.getvalue()
            if rc == 1:
                assert err.getvalue() or out.getvalue()
