"""Assessor files: what to judge per topic, and reading the judgments back.

Per topic two files with the same rows: ``<topic>.qrels`` in TREC qrels shape with relevance
``-1`` (not judged yet), and ``<topic>.csv`` with columns ``query_id,doc_id,relevance,position``
and the relevance empty. Rows are in judging order for adaptive strategies and in docno order
otherwise, so assessors never see rank order. Assessors fill in the relevance; reading a file
back keeps the judged rows (levels 0, 1, 2 ...), skips rows still ``-1`` or empty, and reports
every malformed row and every document not in the pool, each as ``path:line: reason``.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import numpy as np

from ..errors import JudgmentError, PoolingError
from ..files import write_file
from ..trec import MAX_ID_BYTES, MAX_RELEVANCE, Qrels, display
from .pool import Pool, judgment_values

_SAFE = re.compile(r"^[A-Za-z0-9._-]+$")
CSV_COLUMNS = ("query_id", "doc_id", "relevance", "position")


def write_assessor_files(pool: Pool, folder: str | os.PathLike) -> list[Path]:
    """Write ``<topic>.qrels`` and ``<topic>.csv`` for every topic with documents to judge."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PoolingError(f"cannot create {out}: {exc.strerror or exc}") from None
    rows = pool.assessor_order()
    topic = pool.topic[rows]
    written: list[Path] = []
    bounds = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1], [True])))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        qid = display(pool.topics[topic[a]])
        if not _SAFE.match(qid):
            raise PoolingError(f"topic id {qid!r} cannot be a file name")
        docs = [display(d) for d in pool.doc_id[rows[a:b]]]
        qrels_path = out / f"{qid}.qrels"
        csv_path = out / f"{qid}.csv"
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows((qid, d, "", i + 1) for i, d in enumerate(docs))
        try:
            write_file(qrels_path, "".join(f"{qid} 0 {d} -1\n" for d in docs))
            write_file(csv_path, buf.getvalue())
        except OSError as exc:
            raise PoolingError(f"cannot write {exc.filename or out}: "
                               f"{exc.strerror or exc}") from None
        written += [qrels_path, csv_path]
    return written


def _text(path: str, data: bytes) -> str:
    """The file as text, or a JudgmentError naming the line of the first byte that is not
    UTF-8 text (a binary file, a spreadsheet saved in another encoding)."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise JudgmentError([f"{path}:{line}: not a text file (NUL byte)"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise JudgmentError([f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                             "save the file as UTF-8"]) from None


def read_assessor_file(path: str | os.PathLike, pool: Pool | None = None) -> Qrels:
    """The judgments in an assessor file (``.csv`` or qrels shape) as :class:`Qrels`.

    With ``pool``, every judged document must be one the pool hands out for judging.
    Problems raise one :class:`JudgmentError` listing each as ``path:line: reason``.
    """
    path = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise JudgmentError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    text = _text(path, data)
    rows = _csv_rows(path, text) if path.endswith(".csv") else _qrels_rows(text)
    problems, q, d, r, ln = [], [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    for line, fields in rows:
        if isinstance(fields, str):
            problems.append(f"{path}:{line}: {fields}")
            continue
        qid, doc, value = fields
        if value in ("", "-1"):
            continue
        if not re.fullmatch(r"\d+", value) or int(value) > MAX_RELEVANCE:
            problems.append(f"{path}:{line}: relevance {value[:40]!r} is not a level 0, 1, "
                            "2 ... (leave it empty or -1 if not judged)")
            continue
        too_long = [(what, len(v.encode())) for what, v in (("topic id", qid), ("docno", doc))
                    if len(v.encode()) > MAX_ID_BYTES]
        if too_long:
            what, size = too_long[0]
            problems.append(f"{path}:{line}: {what} of {size:,} bytes: at most "
                            f"{MAX_ID_BYTES:,} bytes")
            continue
        if (qid, doc) in seen:
            problems.append(f"{path}:{line}: docno '{doc}' of topic '{qid}' judged twice "
                            f"(first at line {seen[(qid, doc)]})")
            continue
        seen[(qid, doc)] = line
        q.append(qid)
        d.append(doc)
        r.append(int(value))
        ln.append(line)
    qrels = Qrels(name=os.path.basename(path),
                  query_id=np.array([s.encode() for s in q], dtype=np.bytes_) if q else
                  np.zeros(0, "S1"),
                  doc_id=np.array([s.encode() for s in d], dtype=np.bytes_) if d else
                  np.zeros(0, "S1"),
                  relevance=np.array(r, dtype=np.int64), line=np.array(ln, dtype=np.int64),
                  path=path)
    if pool is not None and len(qrels):
        index = Qrels("pool", pool.query_id[pool.sampled], pool.doc_id[pool.sampled],
                      np.zeros(int(pool.sampled.sum()), dtype=np.int64),
                      np.arange(int(pool.sampled.sum())))
        topic = np.searchsorted(pool.topics, qrels.query_id)
        topic = np.where(pool.topics[np.minimum(topic, len(pool.topics) - 1)] == qrels.query_id,
                         topic, -1)
        inside = judgment_values(pool.topics, topic, qrels.doc_id, index) >= 0
        for i in np.flatnonzero(~inside):
            problems.append(f"{path}:{int(qrels.line[i])}: docno '{display(qrels.doc_id[i])}' "
                            f"of topic '{display(qrels.query_id[i])}' is not in the pool")
    if problems:
        problems.sort(key=lambda p: int(p.split(":")[-2]) if p.split(":")[-2].isdigit() else 0)
        raise JudgmentError(problems[:20], max(0, len(problems) - 20))
    return qrels


def _qrels_rows(text: str):
    for line, raw in enumerate(text.split("\n"), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = raw.split()
        if len(fields) != 4:
            yield line, f"expected 4 columns (qid iter docno rel), got {len(fields)}"
            continue
        yield line, (fields[0], fields[2], fields[3])


def _csv_rows(path: str, text: str):
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or [h.strip() for h in header[:3]] != list(CSV_COLUMNS[:3]):
        yield 1, f"the header must start with {','.join(CSV_COLUMNS[:3])}"
        return
    for line, row in enumerate(reader, 2):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) < 3:
            yield line, f"expected at least 3 columns (query_id, doc_id, relevance), got {len(row)}"
            continue
        yield line, (row[0].strip(), row[1].strip(), row[2].strip())
