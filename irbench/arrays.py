"""Whole-array primitives the ranking and the measures share: docno hashing, a hash table of
keys probed with array steps, topic lookups, segment-wise sums and maxima, a stable radix order,
runs of tied rows sorted by their bytes.

Nothing here knows about runs or qrels: inputs and outputs are numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np


class KeyTable:
    """Row numbers of distinct uint64 keys: a hash table probed with whole-array steps.

    Open addressing with linear probing, at most a quarter full, so one probe settles most
    keys; the few still unsettled after ``_PROBES`` probes are found by binary search. A key's
    first slot comes from all its bits, mixed: keys that share their low bits (one docno in
    many topics: the topic sits in the high bits) spread over the table instead of queueing
    behind each other.
    """

    _PROBES = 2

    def __init__(self, keys: np.ndarray):
        self.keys = keys
        kind = index_type(len(keys))  # row numbers: int32 when they fit (half the table)
        # keys come topic by topic (in runs): the stable sort (a timsort) is the faster one
        self.sorted_rows = np.argsort(keys, kind="stable").astype(kind)
        self.sorted_keys = keys[self.sorted_rows]
        size = 1 << max(4, (4 * len(keys)).bit_length())
        self.mask = size - 1
        self.rows = np.full(size, -1, dtype=kind)
        pending = np.arange(len(keys), dtype=kind)
        slot = self._slot(keys)
        self.rounds = 0  # whole-array placement rounds: about log(len(keys)), never len(keys)
        while len(pending):
            self.rounds += 1
            free = np.flatnonzero(self.rows[slot] < 0)
            self.rows[slot[free]] = pending[free]  # keys after one free slot: one stays
            won = np.zeros(len(pending), dtype=bool)  # read back: whichever stayed won
            won[free] = self.rows[slot[free]] == pending[free]
            pending, slot = pending[~won], (slot[~won] + 1) & self.mask

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        return (_mix(keys ^ _SLOT_SEED) & np.uint64(self.mask)).astype(np.int64)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Row number of each key, -1 for keys not in the table."""
        out = np.full(len(keys), -1, dtype=np.int64)
        todo = np.arange(len(keys))
        slot = self._slot(keys)
        for _ in range(self._PROBES):
            row = self.rows[slot]
            filled = row >= 0
            hit = filled & (self.keys[row] == keys[todo])  # row -1 reads a key, masked off
            out[todo[hit]] = row[hit]
            more = filled & ~hit
            todo, slot = todo[more], (slot[more] + 1) & self.mask
            if len(todo) == 0:
                return out
        rest = keys[todo]
        pos = np.minimum(np.searchsorted(self.sorted_keys, rest), len(self.sorted_keys) - 1)
        hit = self.sorted_keys[pos] == rest
        out[todo[hit]] = self.sorted_rows[pos[hit]]
        return out


_HASH_SEED = np.uint64(0x9E3779B97F4A7C15)
_SLOT_SEED = np.uint64(0xD6E8FEB86659FD93)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, in place: every output bit depends on every input bit."""
    x ^= x >> _S30
    x *= _MIX1
    x ^= x >> _S27
    x *= _MIX2
    x ^= x >> _S31
    return x


def doc_words(doc_id: np.ndarray) -> np.ndarray:
    """Docnos as rows of little-endian uint64 words of their bytes, zero-padded."""
    n, width = len(doc_id), doc_id.dtype.itemsize
    nwords = max(1, -(-width // 8))
    if width == 0 or n == 0:
        return np.zeros((n, nwords), dtype="<u8")
    raw = np.ascontiguousarray(doc_id).view(np.uint8).reshape(n, width)
    if width == 8 * nwords:
        return raw.view("<u8")
    padded = np.zeros((n, 8 * nwords), dtype=np.uint8)
    padded[:, :width] = raw
    return padded.view("<u8")


def doc_hash(doc_id: np.ndarray, words: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of each docno's bytes, the same whatever the array's string width.

    Words that are all zero (padding) are skipped, so ``b"d1"`` hashes alike in ``S2`` and
    ``S20`` arrays. Equal docnos hash equal; unequal ones may collide, so callers compare
    bytes on every match.
    """
    words = doc_words(doc_id) if words is None else words
    h = _mix(words[:, 0] ^ _HASH_SEED)
    for j in range(1, words.shape[1]):
        w = words[:, j]
        used = w != 0
        if not used.any():
            break
        step = _mix(h ^ w)
        h = step if used.all() else np.where(used, step, h)
    return h


def topic_keys(topic: np.ndarray, hashes: np.ndarray, num_topics: int) -> np.ndarray:
    """uint64 keys: the topic index in the high bits (exact), the top of the hash below."""
    bits = np.uint64(max(1, int(num_topics).bit_length()))
    return (topic.astype(np.uint64) << (np.uint64(64) - bits)) | (hashes >> bits)


def may_repeat(topic: np.ndarray, hashes: np.ndarray, num_topics: int) -> bool:
    """False when no two rows share (topic, docno); True means they might (check exactly)."""
    # rows come topic by topic, so the keys are in runs: numpy's stable sort (a timsort for
    # uint64) takes 40% less time on them than its quicksort (3,500,000 keys: 0.15 s, 0.25 s)
    keys = np.sort(topic_keys(topic, hashes, num_topics), kind="stable")
    return bool(np.any(keys[1:] == keys[:-1]))


def duplicate_rows(topic: np.ndarray, doc_id: np.ndarray, order_key: np.ndarray) -> tuple:
    """Rows repeating an earlier (by ``order_key``) row's (topic, docno): (dups, their firsts).

    Exact: sorts the docno strings themselves. Callers first rule duplicates out cheaply with
    :func:`may_repeat`.
    """
    o = np.lexsort((order_key, doc_id, topic))
    t, d = topic[o], doc_id[o]
    same = (t[1:] == t[:-1]) & (d[1:] == d[:-1])
    if not same.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    dup_pos = np.flatnonzero(same) + 1
    first_pos = starts[np.searchsorted(starts, dup_pos, side="right") - 1]
    return o[dup_pos], o[first_pos]


def lookup_topics(query_id: np.ndarray, topics: np.ndarray,
                  starts: np.ndarray | None = None) -> np.ndarray:
    """Index into ``topics`` of each row's topic (int32), -1 if absent; one lookup per block
    (``starts``: the blocks' :func:`block_starts`, when known)."""
    n = len(query_id)
    if n == 0 or len(topics) == 0:
        return np.full(n, -1, dtype=np.int32)
    starts = block_starts(query_id) if starts is None else starts
    block_qid = query_id[starts]
    pos = np.minimum(np.searchsorted(topics, block_qid), len(topics) - 1)
    block_topic = np.where(topics[pos] == block_qid, pos, -1).astype(np.int32)
    return np.repeat(block_topic, np.diff(np.append(starts, n)))


def distinct(values: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """``np.unique(values)``, sorting only the first of each block of equal neighbours: a
    run's topic ids come topic after topic, so a few dozen are sorted instead of every row
    (and numpy's unique, which imports numpy.ma: 15 ms in each worker, is not called).
    ``starts``: the blocks' :func:`block_starts`, when known."""
    if len(values) == 0:
        return np.sort(values)
    firsts = np.sort(values[block_starts(values) if starts is None else starts])
    return firsts[block_starts(firsts)]


def block_starts(values: np.ndarray) -> np.ndarray:
    """The index of the first row of each block of equal neighbours in ``values`` (not
    empty)."""
    return np.r_[0, np.flatnonzero(values[1:] != values[:-1]) + 1]


def block_order(topic: np.ndarray) -> np.ndarray | Literal[False] | None:
    """The permutation putting topic blocks in topic order, when each topic is one block of
    consecutive rows: None if they already are in order, False if some topic is split."""
    n = len(topic)
    if n == 0:
        return None
    starts = block_starts(topic)
    block_topic = topic[starts]
    by_topic = np.argsort(block_topic, kind="stable")
    sorted_topic = block_topic[by_topic]
    if np.any(sorted_topic[1:] == sorted_topic[:-1]):
        return False
    if np.all(by_topic[1:] > by_topic[:-1]):
        return None
    lengths = np.diff(np.append(starts, n))[by_topic]
    new_starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return np.arange(n) + np.repeat(starts[by_topic] - new_starts, lengths)


def pair_order(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``np.lexsort((second, first))``: rows by ``first``, then ``second``, ties in row order.
    Without sorting strings when each ``first`` is one block of rows with ``second``
    ascending within it (qrels files usually are: topic after topic, docnos in order)."""
    blocks = block_order(first)
    if blocks is not False:
        a = first if blocks is None else first[blocks]
        b = second if blocks is None else second[blocks]
        if not np.any((a[1:] == a[:-1]) & (b[1:] < b[:-1])):
            return np.arange(len(first)) if blocks is None else blocks
    return np.lexsort((second, first))


def stable_int_order(values: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative integers below 2**32 (LSD radix over 16-bit digits)."""
    if len(values) == 0 or int(values.max()) < (1 << 16):
        return np.argsort(values.astype(np.uint16), kind="stable")
    low = np.argsort((values & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((values[low] >> 16).astype(np.uint16), kind="stable")]


def index_type(n: int):
    return np.int32 if n < 2**31 - 1 else np.int64


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum restarting at every segment start.

    Integers: one running sum minus each segment's base (exact). Floats: each segment summed
    on its own, left to right, in a topics x depth matrix, so a topic's values never depend on
    the topics before it (a running sum minus a base would round differently); when the
    matrix would be more than twice the values (very uneven segments), segments are summed in
    groups of equal length instead."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.cumsum(values)
    counts = np.diff(offsets)
    if values.dtype.kind != "f":
        cs = np.cumsum(values)
        base = np.concatenate(([0], cs))[offsets[:-1]]
        return cs - np.repeat(base, counts)
    kind = np.result_type(values.dtype, np.float64)
    width = int(counts.max())
    if int(counts.min()) == width:  # segments of one length (runs of equal depth): a matrix
        return np.cumsum(values.astype(kind, copy=False).reshape(len(counts), width),
                         axis=1).ravel()
    out = np.empty(len(values), dtype=kind)
    position = np.arange(len(values)) - np.repeat(offsets[:-1], counts)
    segment = np.repeat(np.arange(len(counts)), counts)
    if len(counts) * width <= 2 * len(values) + 1024:  # zeros after the shorter segments
        matrix = np.zeros((len(counts), width), dtype=kind)
        matrix[segment, position] = values
        out[:] = np.cumsum(matrix, axis=1)[segment, position]
        return out
    # very uneven segments: a loop over the distinct segment lengths, not over segments
    for n in np.unique(counts[counts > 0]).tolist():
        chosen = counts == n
        rows = np.flatnonzero(chosen)
        take = chosen[segment]
        matrix = np.zeros((len(rows), n), dtype=out.dtype)
        index = np.searchsorted(rows, segment[take])
        matrix[index, position[take]] = values[take]
        out[take] = np.cumsum(matrix, axis=1)[index, position[take]]
    return out


def suffix_max_at(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each segment ``t`` (ending at ``ends[t]``) and each of its ``starts[t, j]`` (a row
    nondecreasing, each within the segment): the maximum of ``values[starts[t, j]:ends[t]]``,
    0 where that is empty (``values`` are >= 0). One reduction over the pieces between
    consecutive starts, then a running maximum over each row's few pieces from its end: no
    sort, exact for any floats."""
    segments, width = starts.shape
    if segments == 0 or width == 0:
        return np.zeros(starts.shape)
    bounds = np.concatenate((starts, ends[:, None]), axis=1).astype(np.intp)
    padded = np.concatenate((values.astype(np.float64, copy=False), [0.0]))
    pieces = np.maximum.reduceat(padded, bounds.ravel()).reshape(segments, width + 1)[:, :-1]
    pieces[bounds[:, :-1] == bounds[:, 1:]] = 0.0  # reduceat gives an empty piece its start
    return np.maximum.accumulate(pieces[:, ::-1], axis=1)[:, ::-1]


def sort_ties(order: np.ndarray, tie: np.ndarray,
               take: Callable[[np.ndarray], np.ndarray]) -> None:
    """Sort each run of tied positions of ``order`` (``tie[i]``: positions i and i+1 tie) by
    the byte strings ``take(rows)`` of its rows, descending, in place."""
    pos, group = _runs(tie)
    rows = order[pos]
    big_endian = doc_words(take(rows)).byteswap()  # numeric order = byte order
    order[pos] = rows[desc_within(group, big_endian)]


def desc_within(group: np.ndarray, words: np.ndarray, j: int = 0) -> np.ndarray:
    """Permutation sorting rows by ``group`` ascending, then ``words[:, j:]`` descending.

    Sorts by word ``j`` (a fast unstable sort), then stably by group (radix sorts of 16-bit
    digits); rows still equal on both are ordered by the next word, recursively. Rows equal
    on every word (the same docno) are left in any order.
    """
    perm = np.argsort(~words[:, j])
    perm = perm[stable_int_order(group[perm])]
    if j + 1 == words.shape[1]:
        return perm
    g, w = group[perm], words[perm, j]
    same = (g[1:] == g[:-1]) & (w[1:] == w[:-1])
    if not same.any():
        return perm
    pos, run = _runs(same)
    sub = perm[pos]
    perm[pos] = sub[desc_within(run, words[sub], j + 1)]
    return perm


def _runs(same: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, run numbers) of the positions in runs of equal neighbours, where
    ``same[i]`` says positions i and i+1 are equal; run numbers rise along the positions."""
    in_run = np.zeros(len(same) + 1, dtype=bool)
    in_run[1:] |= same
    in_run[:-1] |= same
    pos = np.flatnonzero(in_run)
    return pos, np.cumsum(np.concatenate(([True], ~same)))[pos]
