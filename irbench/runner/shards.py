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


def evaluate_sharded(qrels, path: str, measures: Sequence[Measure],
                     options: EvalOptions = EvalOptions(), shards: int | None = None,
                     intersection: bool = False) -> Sharded:
    """Evaluate the run file at ``path`` on ad hoc ``qrels`` (a :class:`~irbench.trec.Qrels`)
    one topic shard at a time, so memory is bounded by a shard, not the run: the file is read
    once in pieces, each result line spilled to its topic's shard (:func:`topic_shards`) in a
    temporary folder, then each shard is read, ranked against the qrels of its topics and
    scored. The per-topic values are those of one whole evaluation, and the summaries are
    computed from all of them in topic order as one evaluation computes them: the numbers are
    identical. Problems in the file are reported with its own line numbers (a
    :class:`FormatError`). ``intersection``: score only the topics the run answers."""
    for m in measures:
        try:  # a summary that needs the whole ranking (num_q, runid, micro averages) fails
            summarise(m, np.zeros(1), None)
        except (AttributeError, TypeError):
            raise IrbenchError(f"{m} cannot be computed in topic shards (its summary needs "
                               "the whole run)") from None
    size = os.path.getsize(path)
    shards = shards or max(1, -(-size // SHARD_BYTES))
    joined = trec.PartJoiner(path)
    num_docs, answered = 0, []
    with tempfile.TemporaryDirectory(prefix="irbench-shards-") as spill:
        held: list[list] = [[] for _ in range(shards)]
        held_bytes, flushes = 0, 0

        def flush():
            nonlocal held_bytes, flushes
            for k, parts in enumerate(held):
                if parts:
                    q, d, sc, ln = (trec.concat(list(c)) for c in zip(*parts))
                    np.savez(os.path.join(spill, f"{k}-{flushes}.npz"), q=q, d=d, s=sc, ln=ln)
                    parts.clear()
            held_bytes, flushes = 0, flushes + 1

        for piece in _pieces(path):
            columns = joined.add(trec.parse_run([piece]))
            if columns is not None:
                q, d, sc, ln = columns
                shard = topic_shards(q, shards)
                order = np.argsort(shard, kind="stable")
                bounds = np.searchsorted(shard[order], np.arange(shards + 1))
                for k in range(shards):  # a loop over shards, not topics
                    rows = order[bounds[k]:bounds[k + 1]]
                    if len(rows):
                        held[k].append((q[rows], d[rows], sc[rows], ln[rows]))
                held_bytes += len(piece)
                num_docs += len(sc)
                answered.append(np.unique(q))
            if held_bytes >= _SPILL_BYTES:
                flush()
        flush()
        joined.problems.raise_if_any()
        runid = joined.runid
        if num_docs == 0:
            raise FormatError([f"{path}:1: empty run: no result lines"])
        qrels_shard = topic_shards(qrels.query_id, shards)
        topics = []
        values: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
        for k in range(shards):
            parts = [np.load(os.path.join(spill, f"{k}-{f}.npz")) for f in range(flushes)
                     if os.path.exists(os.path.join(spill, f"{k}-{f}.npz"))]
            keep = qrels_shard == k
            if not keep.any():
                continue  # no judged topic here: nothing of these lines is scored
            sub = trec.Qrels(qrels.name, qrels.query_id[keep], qrels.doc_id[keep],
                             qrels.relevance[keep], qrels.line[keep], qrels.path)
            if parts:
                columns = [trec.concat([p[c] for p in parts]) for c in ("q", "d", "s", "ln")]
            else:  # every judged topic of this shard is missing from the run
                empty = np.zeros(0, dtype="S1")
                columns = [empty, empty, np.zeros(0), np.zeros(0, np.int64)]
            q, d, sc, ln = columns
            run = trec.Run(os.path.basename(path), trec.display(runid), q, d, sc, ln, path=path)
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
    return Sharded(all_topics[order], merged,
                   {m: summarise(m, merged[m], None) for m in measures},
                   np.unique(trec.concat(answered)), num_docs, trec.display(runid), shards)
