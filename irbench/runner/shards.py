"""One huge run file scored in topic shards, so memory is bounded by a shard, not the run.

:func:`evaluate_sharded` reads the file once in pieces (a gzip file decompressed as a stream,
within the whole-file path's expansion limit) and spills each result line to its topic's shard
(:func:`topic_shards`) in a temporary folder; each shard is then read, ranked against the
qrels of its topics and scored, in groups of topics no bigger than a shard when a few topics
hold most of the lines (a single topic bigger than :data:`TOPIC_LIMIT` shards is refused,
naming the limit). The per-topic values are those of one whole evaluation, and the summaries
are computed from all of them in topic order, as one evaluation computes them: the numbers
are identical.

The spill folder (``irbench-shards-PID-*`` in the temporary folder) is removed when scoring
ends, however it ends short of SIGKILL; :func:`sweep_spills` removes those of processes that
are gone (a killed run's), and runs at the start of every ``irbench run`` and before each
sharded evaluation.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .. import trec
from ..cache import SpillFolder, alive, spill_prefix
from ..errors import FormatError, IrbenchError, OptionError
from ..measures import Measure
from ..measures.base import summarise
from ..measures.compute import restrict, topic_values
from ..ranked import EvalOptions, PreparedQrels
from ..system import source_of
from .engine import release_freed_memory

# a run file bigger than this is evaluated in topic shards (IRBENCH_SHARD_BYTES; 0: never)
SHARD_BYTES = 256 << 20
# the most of the file one shard holds: scoring a shard takes about 4x its bytes, and a
# 2.6 GB run in shards of 256 MiB peaked 1 GiB higher than in shards of 64 MiB, in no less time
SHARD_PIECE = 64 << 20
TOPIC_LIMIT = 4  # a topic whose lines fill more than this many shards is refused
SCORE_ROWS = 1 << 19  # ranked lines of a shard scored at once: bounds the measures' arrays
_SPILL_BYTES = 64 << 20  # parsed run data kept in memory before it is spilled to the shards
_HASH_PRIME = np.uint64(1099511628211)


def shard_bytes() -> int:
    """The size above which a run file is scored in topic shards (0: never):
    ``IRBENCH_SHARD_BYTES`` when set, else :data:`SHARD_BYTES`; a value that is not a whole
    number of bytes is an :class:`OptionError`."""
    raw = os.environ.get("IRBENCH_SHARD_BYTES", "").strip()
    if not raw:
        return SHARD_BYTES
    if not re.fullmatch(r"[0-9]{1,19}", raw):
        raise OptionError(f"IRBENCH_SHARD_BYTES={raw!r}: must be a whole number of bytes (e.g. "
                         f"{256 << 20} for 256 MiB), or 0 to never score a run in shards")
    return int(raw)


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
    first_line: np.ndarray            # the line of each answered topic's first result
    num_docs: int                     # result lines
    runid: str                        # the tag of the last result line
    shards: int


def _pieces(path: str, stats: dict) -> Iterator[bytes]:
    """Whole-line pieces of about ``trec.text.CHUNK`` bytes of a (possibly gzip) run file or
    object at a URL, read as a stream; ``stats["bytes"]`` counts the text read. A gzip file is
    decompressed as a stream within the whole-file path's limit for ``stats["size"]`` bytes
    (:func:`irbench.trec.gunzip`), with its messages."""
    with source_of(path).open(path) as raw:  # the run's source (irbench.system)
        head = raw.read(2)
        blocks = itertools.chain([head], iter(lambda: raw.read(trec.text.CHUNK), b""))
        text: Iterator[bytes] = blocks
        if head == trec.GZIP_MAGIC or path.endswith(".gz"):
            text = trec.inflate(blocks, trec.gunzip_limit(stats["size"]))
        try:
            yield from _whole_lines(text, stats)
        except ValueError as exc:
            raise FormatError([f"{path}:1: {exc}"]) from None


def _whole_lines(blocks: Iterator[bytes], stats: dict) -> Iterator[bytes]:
    held, first = b"", True
    for block in blocks:
        held += block
        if len(held) < trec.text.CHUNK:
            continue
        cut = held.rfind(b"\n") + 1
        if cut == 0:
            continue  # one line longer than a piece: kept whole
        piece, held = held[:cut], held[cut:]
        stats["bytes"] += len(piece)
        yield trec.without_bom(piece) if first else piece
        first = False
    if held:
        stats["bytes"] += len(held)
        yield trec.without_bom(held) if first else held


def sweep_spills(folder: str | None = None) -> list[str]:
    """Remove the spill folders this host's irbench processes left when they were killed
    (their process is gone); the folders removed."""
    folder = folder or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    mine = re.escape(spill_prefix().rsplit("-", 2)[0]) + r"-([0-9]+)-.*"  # this host's
    for entry in entries:
        match = re.fullmatch(mine, entry.name)
        try:
            if (match is None or not entry.is_dir(follow_symlinks=False)
                    or entry.stat(follow_symlinks=False).st_uid != os.getuid()
                    or alive(int(match[1]))):
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


@dataclass(frozen=True)
class Whole:
    """What a summary may ask of the whole evaluation besides its per-topic values (NumRel's
    under -c: the qrels lines with a relevance above 0 of each topic scored), known to a run
    scored in shards."""

    options: EvalOptions
    num_lines_rel_positive: np.ndarray


def _needs_ranking(measure: Measure, options: EvalOptions) -> bool:
    """Whether ``measure``'s summary needs more than :class:`Whole` gives (the ranking)."""
    try:
        summarise(measure, np.zeros(1), Whole(options, np.zeros(1, dtype=np.int64)))
    except (AttributeError, TypeError):
        return True
    return False


def _positive_lines(qrels: trec.Qrels, topics: np.ndarray) -> np.ndarray:
    """Per topic of ``topics``: its qrels lines with a relevance above 0."""
    ids, counts = np.unique(qrels.query_id[qrels.relevance > 0], return_counts=True)
    at = np.minimum(np.searchsorted(ids, topics), max(len(ids) - 1, 0))
    found = (len(ids) > 0) & (ids[at] == topics) if len(ids) else np.zeros(len(topics), bool)
    return np.where(found, counts[at] if len(ids) else 0, 0).astype(np.int64)


def evaluate_sharded(qrels: trec.Qrels, path: str, measures: Sequence[Measure],
                     options: EvalOptions = EvalOptions(), shards: int | None = None,
                     intersection: bool = False, limit: int | None = None) -> Sharded:
    """Evaluate the run file at ``path`` on ad hoc ``qrels`` one topic shard at a time (see the
    module docstring). Problems in the file are reported with its own line numbers (a
    :class:`FormatError`). ``intersection``: score only the topics the run answers.

    ``shards``: how many (default: one per :data:`SHARD_PIECE` of the file, or per ``limit``
    bytes when that is smaller). ``limit`` (default :func:`shard_bytes`) also bounds the
    lines scored at once when a few topics fill a shard: a group of topics holds up to
    ``limit`` bytes' worth of lines, one topic up to ``TOPIC_LIMIT`` times that."""
    for m in measures:
        if _needs_ranking(m, options):  # num_q, runid, micro averages
            raise IrbenchError(f"{m} cannot be computed in topic shards (its summary needs "
                               "the whole run)")
    size = source_of(path).stat(path)[0]  # the run's source (irbench.system)
    scale = 1  # shards whose lines one group of topics may hold
    if not shards:
        limit = limit or shard_bytes() or size or 1
        piece = min(limit, SHARD_PIECE)
        shards, scale = max(1, -(-size // piece)), max(1, limit // piece)
    sweep_spills()
    with SpillFolder() as folder:
        assert folder is not None  # not optional: no folder raises
        spill = _Spill(folder, shards)
        spill.text["size"] = size
        joined = spill.read(path)
        runid = trec.display(joined.runid)
        qrels_shard = topic_shards(qrels.query_id, shards).astype(np.int32)  # 5,000,000: 20 MB
        topics = []
        values: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
        budget = spill.row_budget() * scale
        for k in range(shards):
            in_shard = qrels_shard == k
            if not in_shard.any():
                continue  # no judged topic here: nothing of these lines is scored
            for group, keep in _judged_groups(spill.groups(k, budget, path), in_shard,
                                              qrels.query_id):
                sub = trec.Qrels(name=qrels.name, query_id=qrels.query_id[keep],
                                 doc_id=qrels.doc_id[keep], relevance=qrels.relevance[keep],
                                 line=qrels.line[keep], path=qrels.path)
                q, d, sc, ln = spill.columns(k, group)
                run = trec.Run(name=os.path.basename(path), runid=runid, query_id=q,
                               doc_id=d, score=sc, line=ln, path=path)
                ranked = PreparedQrels(sub).rank(run, options)
                del sub, q, d, sc, ln, run
                if intersection:
                    ranked = restrict(ranked, ~ranked.missing)
                topics.append(ranked.topics)  # bytes, in the order one ranking has them
                for start, end in _slices(ranked.offsets, SCORE_ROWS):
                    part = topic_values(ranked.topics_between(start, end), list(measures))
                    for m in measures:
                        values[m].append(np.asarray(part[m], dtype=np.float64))
                    del part
                del ranked
                release_freed_memory()
    all_topics = trec.concat(topics) if topics else np.zeros(0, dtype="S1")
    order = np.argsort(all_topics, kind="stable")
    merged = {}
    for m in measures:  # each measure's pieces let go as it is joined
        parts = values.pop(m)
        merged[m] = (np.concatenate(parts) if parts else np.zeros(0))[order]
        del parts
    answered, first_line = spill.first_lines()
    whole = Whole(options, _positive_lines(qrels, all_topics[order]))
    done = Sharded(topics=all_topics[order], values=merged,
                   summaries={m: summarise(m, merged[m], whole) for m in measures},
                   answered=answered, first_line=first_line, num_docs=spill.num_docs,
                   runid=runid, shards=shards)
    del all_topics, order, topics
    release_freed_memory()  # the joins' temporaries, before the caller stores the results
    return done


def _slices(offsets: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """(start, end) topic ranges covering a ranking whose topic ``t`` holds rows
    ``offsets[t]`` to ``offsets[t + 1]``: about ``rows`` rows each, a bigger topic alone."""
    num_topics = len(offsets) - 1
    if num_topics <= 0:
        return [(0, 0)]
    cuts = np.searchsorted(offsets, np.arange(rows, int(offsets[-1]), rows), side="right") - 1
    edges = np.unique(np.concatenate(([0], cuts, [num_topics])))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a] or [(0, 0)]


def _judged_groups(groups: list[np.ndarray | None], in_shard: np.ndarray,
                   query_id: np.ndarray) -> Iterator[tuple[np.ndarray | None, np.ndarray]]:
    """(topics of a group or None for the whole shard, which qrels rows it scores): every
    judged topic of the shard in exactly one, those the run does not answer in a last one."""
    if len(groups) == 1 and groups[0] is None:
        yield None, in_shard
        return
    covered = np.zeros(len(query_id), dtype=bool)
    for group in groups:
        keep = in_shard & np.isin(query_id, np.asarray(group))
        covered |= keep
        if keep.any():
            yield group, keep
    rest = in_shard & ~covered
    if rest.any():
        yield np.unique(query_id[rest]), rest


class _Spill:
    """A run's result lines by topic shard in a temporary folder: parsed lines are held in
    memory up to ``_SPILL_BYTES`` of the file, then written, one ``.npz`` per shard and
    flush."""

    def __init__(self, folder: str, shards: int):
        self.folder, self.shards = folder, shards
        self.held: list[list] = [[] for _ in range(shards)]
        self.held_bytes = self.flushes = self.num_docs = 0
        self.rows = np.zeros(shards, dtype=np.int64)  # result lines per shard
        self.written: dict[int, list[int]] = {}  # shard -> the flushes that wrote a file
        self.answered: list[np.ndarray] = []  # per piece: its topics, and the line of each
        self.answered_lines: list[np.ndarray] = []  # one's first result in it
        self.text = {"bytes": 0, "size": 0}  # the file's size, and its text read

    def read(self, path: str) -> trec.PartJoiner:
        """Read the file at ``path`` once, in pieces, into the shards; its problems are
        raised (a :class:`FormatError`) once all are known."""
        joined = trec.PartJoiner(path)
        for piece in _pieces(path, self.text):
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
        self.rows += np.diff(bounds)
        self.num_docs += len(sc)
        topics, first = np.unique(q, return_index=True)
        self.answered.append(topics)
        self.answered_lines.append(ln[first])

    def first_lines(self) -> tuple[np.ndarray, np.ndarray]:
        """(the topics the run answers, sorted; the line of each one's first result)."""
        topics = trec.concat(self.answered)
        lines = np.concatenate(self.answered_lines)
        order = np.lexsort((lines, topics))  # by topic, then line
        topics, lines = topics[order], lines[order]
        first = np.concatenate(([True], topics[1:] != topics[:-1])) if len(topics) else \
            np.zeros(0, dtype=bool)
        return topics[first], lines[first]

    def _file(self, shard: int, flush: int) -> str:
        return os.path.join(self.folder, f"{shard}-{flush}.npz")

    def _flush(self) -> None:
        for k, parts in enumerate(self.held):
            if parts:
                q, d, sc, ln = (trec.concat(list(c)) for c in zip(*parts))
                np.savez(self._file(k, self.flushes), q=q, d=d, s=sc, ln=ln)
                self.written.setdefault(k, []).append(self.flushes)
                parts.clear()
        self.held_bytes, self.flushes = 0, self.flushes + 1

    def _parts(self, shard: int) -> list:
        """The shard's spill files, each loaded; one that was written and is gone (the
        folder swept or removed by hand) is an error, never a shard scored without it."""
        parts = []
        for f in self.written.get(shard, ()):
            try:
                parts.append(np.load(self._file(shard, f)))
            except FileNotFoundError:
                raise IrbenchError(f"{self._file(shard, f)}: a spill file of this run "
                                   "vanished while it was scored (the temporary folder was "
                                   "cleaned?); nothing was stored: run again") from None
        return parts

    def row_budget(self) -> int:
        """Result lines a shard holds on average (at least 1)."""
        return max(1, -(-self.num_docs // self.shards))

    def groups(self, shard: int, budget: int, path: str) -> list[np.ndarray | None]:
        """The shard's topics in groups of at most ``budget`` result lines (one topic may
        hold more, up to ``TOPIC_LIMIT`` times), or ``[None]``: the whole shard at once."""
        if self.rows[shard] <= 2 * budget:
            return [None]
        ids = trec.concat([p["q"] for p in self._parts(shard)])
        topics, counts = np.unique(ids, return_counts=True)
        del ids
        worst = int(np.argmax(counts))
        if counts[worst] > TOPIC_LIMIT * budget:
            share = counts[worst] / max(self.num_docs, 1) * self.text["bytes"]
            raise IrbenchError(
                f"{path}: topic '{trec.display(topics[worst])}' has {int(counts[worst]):,} "
                f"result lines (about {share / 2**20:,.0f} MiB of the file), more than "
                f"{TOPIC_LIMIT} topic shards hold ({TOPIC_LIMIT * budget:,} lines): scoring "
                "it would hold them in memory at once; set IRBENCH_SHARD_BYTES higher (now "
                f"{shard_bytes():,} bytes) to score this run")
        starts = np.concatenate([[0], np.cumsum(counts)])
        cuts = np.searchsorted(starts, np.arange(budget, starts[-1], budget), side="right") - 1
        bounds = np.unique(np.concatenate([[0], cuts, [len(topics)]]))
        groups: list[np.ndarray | None] = [topics[a:b] for a, b in zip(bounds[:-1], bounds[1:])
                                           if b > a]
        return groups

    def columns(self, shard: int, topics: np.ndarray | None = None) -> list[np.ndarray]:
        """(query_id, doc_id, score, line) of the shard's lines (of ``topics`` only, if given),
        in the file's order; one spill file is in memory at a time besides them."""
        kept = []
        for p in self._parts(shard):
            if topics is None:
                kept.append([p[c] for c in ("q", "d", "s", "ln")])
            else:
                mask = np.isin(p["q"], topics)
                kept.append([p[c][mask] for c in ("q", "d", "s", "ln")])
        if not kept:  # every judged topic of this shard is missing from the run
            empty = np.zeros(0, dtype="S1")
            return [empty, empty, np.zeros(0), np.zeros(0, np.int64)]
        return [trec.concat([part[i] for part in kept]) for i in range(4)]
