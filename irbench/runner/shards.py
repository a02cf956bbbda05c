"""One huge run file scored in topic shards, so memory is bounded by a shard, not the run.

:func:`evaluate_sharded` reads the file once in pieces and spills each result line to its
topic's shard (:func:`topic_shards`) in a temporary folder; each shard is then read, ranked
against the qrels of its topics and scored. The per-topic values are those of one whole
evaluation, and the summaries are computed from all of them in topic order, as one evaluation
computes them: the numbers are identical.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .. import trec
from ..errors import FormatError, IrbenchError
from ..measures import Measure
from ..measures.base import summarise
from ..measures.compute import restrict, score_ranked
from ..ranked import EvalOptions, PreparedQrels

# a run file bigger than this is evaluated in topic shards (IRBENCH_SHARD_BYTES; 0: never)
SHARD_BYTES = int(os.environ.get("IRBENCH_SHARD_BYTES") or 256 << 20)
_SPILL_BYTES = 64 << 20  # parsed run data kept in memory before it is spilled to the shards
_HASH_PRIME = np.uint64(1099511628211)


def topic_shards(query_id: np.ndarray, shards: int) -> np.ndarray:
    """The shard of each topic id (a fixed-width bytes array): a polynomial hash of its bytes,
    the same whatever the array's width (NUL padding adds nothing), modulo ``shards``."""
    width = query_id.dtype.itemsize
    raw = np.ascontiguousarray(query_id).view(np.uint8).reshape(len(query_id), width)
    h = np.zeros(len(query_id), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width - 1, -1, -1):  # over an id's bytes, last first: padding adds 0
            h = h * _HASH_PRIME + raw[:, j].astype(np.uint64)
    return (h % np.uint64(shards)).astype(np.int64)


@dataclass
class Sharded:
    """A run evaluated in topic shards: per-topic values in topic order, and summaries."""

    topics: np.ndarray                # the qrels topics scored, sorted (as one ranking has them)
    values: dict                      # Measure -> per-topic float64
    summaries: dict                   # Measure -> summary, as trec_eval computes it
    answered: np.ndarray              # the topics the run answers, sorted
    num_docs: int                     # result lines
    runid: str                        # the tag of the last result line
    shards: int


def _pieces(path: str) -> Iterator[bytes]:
    """Whole-line pieces of about ``trec.text.CHUNK`` bytes of a (possibly gzip) run file."""
    with open(path, "rb") as raw:
        fh = gzip.open(raw) if raw.read(2) == trec.GZIP_MAGIC else raw
        raw.seek(0)
        first = True
        while True:
            piece = fh.read(trec.text.CHUNK)
            if not piece:
                return
            if not piece.endswith(b"\n"):
                piece += fh.readline()
            yield trec.without_bom(piece) if first else piece
            first = False


def evaluate_sharded(qrels: trec.Qrels, path: str, measures: Sequence[Measure],
                     options: EvalOptions = EvalOptions(), shards: int | None = None,
                     intersection: bool = False) -> Sharded:
    """Evaluate the run file at ``path`` on ad hoc ``qrels`` one topic shard at a time (see the
    module docstring). Problems in the file are reported with its own line numbers (a
    :class:`FormatError`). ``intersection``: score only the topics the run answers."""
    for m in measures:
        try:  # a summary that needs the whole ranking (num_q, runid, micro averages) fails
            summarise(m, np.zeros(1), None)
        except (AttributeError, TypeError):
            raise IrbenchError(f"{m} cannot be computed in topic shards (its summary needs "
                               "the whole run)") from None
    shards = shards or max(1, -(-os.path.getsize(path) // SHARD_BYTES))
    with tempfile.TemporaryDirectory(prefix="irbench-shards-") as folder:
        spill = _Spill(folder, shards)
        joined = spill.read(path)
        runid = trec.display(joined.runid)
        qrels_shard = topic_shards(qrels.query_id, shards)
        topics = []
        values: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
        for k in range(shards):
            keep = qrels_shard == k
            if not keep.any():
                continue  # no judged topic here: nothing of these lines is scored
            sub = trec.Qrels(name=qrels.name, query_id=qrels.query_id[keep],
                             doc_id=qrels.doc_id[keep], relevance=qrels.relevance[keep],
                             line=qrels.line[keep], path=qrels.path)
            q, d, sc, ln = spill.columns(k)
            run = trec.Run(name=os.path.basename(path), runid=runid, query_id=q, doc_id=d,
                           score=sc, line=ln, path=path)
            ranked = PreparedQrels(sub).rank(run, options)
            if intersection:
                ranked = restrict(ranked, ~ranked.missing)
            part = score_ranked(ranked, measures, run.name, run.runid, options)
            topics.append(ranked.topics)  # bytes, in the order one ranking has them
            for m in measures:
                values[m].append(np.asarray(part.values[m], dtype=np.float64))
    all_topics = trec.concat(topics) if topics else np.zeros(0, dtype="S1")
    order = np.argsort(all_topics, kind="stable")
    merged = {m: (np.concatenate(values[m]) if values[m] else np.zeros(0))[order]
              for m in measures}
    return Sharded(topics=all_topics[order], values=merged,
                   summaries={m: summarise(m, merged[m], None) for m in measures},
                   answered=np.unique(trec.concat(spill.answered)), num_docs=spill.num_docs,
                   runid=runid, shards=shards)


class _Spill:
    """A run's result lines by topic shard in a temporary folder: parsed lines are held in
    memory up to ``_SPILL_BYTES`` of the file, then written, one ``.npz`` per shard and
    flush."""

    def __init__(self, folder: str, shards: int):
        self.folder, self.shards = folder, shards
        self.held: list[list] = [[] for _ in range(shards)]
        self.held_bytes = self.flushes = self.num_docs = 0
        self.answered: list[np.ndarray] = []

    def read(self, path: str) -> trec.PartJoiner:
        """Read the file at ``path`` once, in pieces, into the shards; its problems are
        raised (a :class:`FormatError`) once all are known."""
        joined = trec.PartJoiner(path)
        for piece in _pieces(path):
            columns = joined.add(trec.parse_run([piece]))
            if columns is not None:
                self._add(columns)
                self.held_bytes += len(piece)
            if self.held_bytes >= _SPILL_BYTES:
                self._flush()
        self._flush()
        joined.problems.raise_if_any()
        if self.num_docs == 0:
            raise FormatError([f"{path}:1: empty run: no result lines"])
        return joined

    def _add(self, columns: tuple) -> None:
        q, d, sc, ln = columns
        shard = topic_shards(q, self.shards)
        order = np.argsort(shard, kind="stable")
        bounds = np.searchsorted(shard[order], np.arange(self.shards + 1))
        for k in range(self.shards):  # a loop over shards, not topics
            rows = order[bounds[k]:bounds[k + 1]]
            if len(rows):
                self.held[k].append((q[rows], d[rows], sc[rows], ln[rows]))
        self.num_docs += len(sc)
        self.answered.append(np.unique(q))

    def _file(self, shard: int, flush: int) -> str:
        return os.path.join(self.folder, f"{shard}-{flush}.npz")

    def _flush(self) -> None:
        for k, parts in enumerate(self.held):
            if parts:
                q, d, sc, ln = (trec.concat(list(c)) for c in zip(*parts))
                np.savez(self._file(k, self.flushes), q=q, d=d, s=sc, ln=ln)
                parts.clear()
        self.held_bytes, self.flushes = 0, self.flushes + 1

    def columns(self, shard: int) -> list[np.ndarray]:
        """(query_id, doc_id, score, line) of the shard's lines, in the file's order."""
        parts = [np.load(self._file(shard, f)) for f in range(self.flushes)
                 if os.path.exists(self._file(shard, f))]
        if not parts:  # every judged topic of this shard is missing from the run
            empty = np.zeros(0, dtype="S1")
            return [empty, empty, np.zeros(0), np.zeros(0, np.int64)]
        return [trec.concat([p[c] for p in parts]) for c in ("q", "d", "s", "ln")]
