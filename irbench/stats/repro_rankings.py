"""The two rankings the reproducibility measures compare (:mod:`irbench.stats.repro`): an
original run and its reproduction ranked in trec_eval's order, their documents as integer keys
shared by both runs.

Ranking and keying code each docno once per pair: rows are grouped by a hash of their docno's
words, only the distinct docnos are sorted (by their bytes), tied scores are sorted by those
codes, and keys (topic, docno) are numbered through a bitmap. Whole columns only: no Python
loop over documents or topics.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..arrays import doc_hash, doc_words, index_type
from ..ranked import rank_order
from ..trec import Run, display


@dataclass(frozen=True, eq=False)
class RankedRun:
    """One run of a :class:`RankedPair`: its documents in rank order, topic after topic, as
    integer keys shared with the other run (equal keys: the same docno of the same topic;
    within a topic a larger key is a docno earlier in byte order, and every key of a topic is
    below every key of a later topic); ``offsets``: where each topic starts (T + 1)."""

    keys: np.ndarray
    offsets: np.ndarray
    num_keys: int

    @property
    def length(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def topic(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.offsets) - 1), self.length)

    @cached_property
    def rank(self) -> np.ndarray:
        """Each row's rank within its topic, from 0."""
        return np.arange(len(self.keys)) - self.offsets[self.topic]

    @cached_property
    def by_key(self) -> np.ndarray:
        """The rows in key order (keys are distinct and below num_keys: no sort)."""
        slot = np.full(self.num_keys, -1, dtype=np.int64)
        slot[self.keys] = np.arange(len(self.keys))
        return slot[slot >= 0]

    @cached_property
    def key_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(topic, rank) of each row, the rows in key order."""
        return np.take(self.topic, self.by_key), np.take(self.rank, self.by_key)

    @cached_property
    def rank_of_key(self) -> np.ndarray:
        """Each key's rank in this run (from 0), the largest int64 for a key it lacks."""
        out = np.full(self.num_keys, np.iinfo(np.int64).max, dtype=np.int64)
        out[self.keys] = self.rank
        return out


@dataclass(frozen=True, eq=False)
class RankedPair:
    """An original run and its reproduction ranked once (:func:`rank_pair`).

    topics: every topic of either run (byte order, as text); original, reproduced: each
    run's ranking (:class:`RankedRun`).
    """

    topics: tuple[str, ...]
    original: RankedRun
    reproduced: RankedRun

    @property
    def in_both(self) -> np.ndarray:
        """Whether both runs rank at least one document for each topic."""
        return (self.original.length > 0) & (self.reproduced.length > 0)


def _blocks(query_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the topic of each block of rows with one topic, the blocks' lengths)."""
    if not len(query_id):
        return query_id[:0], np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(query_id[1:] != query_id[:-1]) + 1))
    return query_id[starts], np.diff(np.append(starts, len(query_id)))


def _same_hash(hashes: np.ndarray) -> np.ndarray:
    """For each row, a row with the same hash: open addressing in a table at most half full,
    whole-array probes. The first round fills the empty table and settles most rows; a row
    moves on to the next slot only past another hash (rows of one hash move together)."""
    kind = index_type(2 * len(hashes))  # row numbers: int32, half the memory traffic
    size = 1 << max(4, (2 * len(hashes)).bit_length())
    table = np.full(size, -1, dtype=kind)
    slot = (hashes & np.uint64(size - 1)).astype(kind)  # doc_hash's bits are mixed
    table[slot] = np.arange(len(hashes), dtype=kind)  # one row of a slot's rows stays
    rep = table[slot]
    pending = np.flatnonzero(hashes[rep] != hashes).astype(kind)
    slot = slot[pending]
    while len(pending):
        slot = (slot + 1) & kind(size - 1)
        free = table[slot] < 0
        table[slot[free]] = pending[free]
        held = table[slot]
        same = hashes[held] == hashes[pending]
        rep[pending[same]] = held[same]
        pending, slot = pending[~same], slot[~same]
    return rep


def _doc_codes(doc_id: np.ndarray) -> tuple[np.ndarray, int]:
    """(each row's docno as its index among the distinct docnos in byte order, their number).

    Rows are grouped by a hash of their words that vary (a shared prefix left out), so only
    the distinct docnos are sorted. One such word: the hash is a bijection of it, so equal
    hashes are equal docnos; more: the words are compared to confirm, and two docnos sharing
    a hash have every docno sorted instead."""
    words = doc_words(doc_id)
    lead = 0
    while len(words) and lead < words.shape[1] - 1 and bool(
            np.all(words[:, lead] == words[0, lead])):
        lead += 1  # one step per 8 bytes of prefix
    words = words[:, lead:]
    rep = _same_hash(doc_hash(doc_id, words))
    if words.shape[1] > 1 and not np.array_equal(words[rep], words):
        docnos, code = np.unique(doc_id, return_inverse=True)
        return code.ravel(), len(docnos)
    first = np.flatnonzero(rep == np.arange(len(rep)))
    order = np.lexsort(words[first].byteswap().T[::-1])  # big-endian: numeric = byte order
    code = np.empty(len(rep), dtype=np.int64)
    code[first[order]] = np.arange(len(first))
    return code[rep], len(first)


def _rank_rows(topic: np.ndarray, score: np.ndarray, code: np.ndarray) -> np.ndarray | None:
    """:func:`irbench.ranked.rank_order` with the docnos as byte-ordered codes: tied rows are
    sorted by one integer key, (tie group, code descending), instead of by their bytes."""
    def by_code(order: np.ndarray, tie: np.ndarray) -> None:
        in_run = np.zeros(len(tie) + 1, dtype=bool)
        in_run[1:] |= tie
        in_run[:-1] |= tie
        pos = np.flatnonzero(in_run)
        group = np.cumsum(np.concatenate(([True], ~tie)))[pos]
        rows = order[pos]  # stable: timsort finds the groups' runs
        order[pos] = rows[np.argsort(group * (int(code.max()) + 1) - code[rows], kind="stable")]

    return rank_order(topic, score, lambda rows: code[rows], ties=by_code)


def _ranked(blocks: tuple[np.ndarray, np.ndarray], score: np.ndarray, topics: np.ndarray,
            code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic index, docno code) of a run's rows (its :func:`_blocks`, scores and codes) in
    trec_eval's order."""
    topic = np.repeat(np.searchsorted(topics, blocks[0]), blocks[1])
    order = _rank_rows(topic, score, code)
    return (topic, code) if order is None else (topic[order], code[order])


def _keys(sparse: np.ndarray, size: int, split: int) -> tuple[np.ndarray, int, bool]:
    """Keys below ``size`` renumbered 0, 1, ... in their order (a bitmap when ``size`` is
    small next to the keys, else a sort), their number, and whether either side (the keys
    before ``split``, those after) holds a key twice."""
    if size > 8 * len(sparse) + 4096:
        distinct, dense = np.unique(sparse, return_inverse=True)
        return dense.ravel(), len(distinct), True
    seen = np.zeros(size, dtype=bool)
    seen[sparse] = True
    number = np.cumsum(seen, dtype=index_type(size)) - 1
    row = np.full(size, -1, dtype=index_type(len(sparse)))
    twice = False
    for part in (sparse[:split], sparse[split:]):  # a key of a side: its last row there
        row[part] = np.arange(len(part), dtype=row.dtype)
        twice = twice or bool(np.any(row[part] != np.arange(len(part))))
    return number[sparse], int(number[-1]) + 1 if size else 0, twice


def rank_pair(original: Run, reproduced: Run) -> RankedPair:
    """Rank both runs and give their docnos shared keys (see :class:`RankedRun`): each
    docno coded once over both runs, keys (topic, docno code descending) made dense."""
    blocks_o, blocks_r = _blocks(original.query_id), _blocks(reproduced.query_id)
    topics = np.union1d(blocks_o[0], blocks_r[0])
    code, width = _doc_codes(np.concatenate((original.doc_id, reproduced.doc_id)))
    width = max(width, 1)
    split = len(original.doc_id)
    t_o, c_o = _ranked(blocks_o, original.score, topics, code[:split])
    t_r, c_r = _ranked(blocks_r, reproduced.score, topics, code[split:])
    sparse = np.concatenate((t_o, t_r)) * width + (width - 1 - np.concatenate((c_o, c_r)))
    keys, num_keys, twice = _keys(sparse, len(topics) * width, split)

    def side(keys: np.ndarray, t: np.ndarray) -> RankedRun:
        if twice:
            keys, t = _first_copies(keys, t)
        counts = np.bincount(t, minlength=len(topics))
        return RankedRun(keys=keys, offsets=np.concatenate(([0], np.cumsum(counts))),
                         num_keys=num_keys)

    return RankedPair(topics=tuple(display(x) for x in topics),
                      original=side(keys[:split], t_o), reproduced=side(keys[split:], t_r))


def _first_copies(keys: np.ndarray, topic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ranked ``keys`` without the later copies of a key (a docno ranked twice)."""
    if not len(keys) or np.bincount(keys).max() <= 1:
        return keys, topic
    _, first = np.unique(keys, return_index=True)
    first.sort()
    return keys[first], topic[first]
