"""Run diffs' prepared rankings (issue 42): every run's rankings in trec_eval's order over
one shared vocabulary of codes: docno codes in byte order, and (topic, docno) codes that
index a run's rank lookup.

Codes come from 64-bit keys of the docnos' bytes, found in hash tables filled one run at a
time in whole-array rounds (no array as long as all the runs together but the codes), and
each row's bytes are checked against its code's docno: should two docnos share a key, every
code comes from sorting the bytes instead. Only the distinct docnos are sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..arrays import doc_words, lookup_topics
from ..ranked import rank_order
from ..trec import Run


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Topic ids and docnos (bytes, sorted) that prepared rankings' codes index, and how
    many distinct (topic, docno) pairs the runs rank (``pairs``). ``pair_rows``: every
    prepared run's (topic, docno) codes, one run after another; ``bounds``: where each
    (run, topic) starts in it (runs x topics + 1), so that runs prepared next to each other
    are compared without copying their rows."""

    topics: np.ndarray
    docs: np.ndarray
    pairs: int
    pair_rows: np.ndarray
    bounds: np.ndarray


@dataclass(frozen=True, eq=False)
class Rankings:
    """One run's rankings: rows by topic code then rank (trec_eval's order); ``offsets``
    (len(vocabulary.topics) + 1) bound each topic's rows; ``doc`` the docno codes and
    ``pair`` the (topic, docno) codes of the rows; ``index`` its place in the runs prepared
    together."""

    name: str
    offsets: np.ndarray
    doc: np.ndarray
    pair: np.ndarray
    vocabulary: Vocabulary
    index: int = 0

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def row_topic(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.offsets) - 1, dtype=np.int32), self.sizes)

    @cached_property
    def row_rank(self) -> np.ndarray:
        return (np.arange(len(self.doc)) - self.offsets[:-1][self.row_topic]).astype(np.int32)

    @cached_property
    def rank_of(self) -> np.ndarray:
        """Each (topic, docno) code's rank (0-based) in this run, -1 where absent."""
        out = np.full(self.vocabulary.pairs, -1, rank_type(self.sizes))
        out[self.pair] = self.row_rank
        return out


def rank_type(sizes: np.ndarray):
    return np.int16 if len(sizes) == 0 or int(sizes.max()) < np.iinfo(np.int16).max \
        else np.int32


def prepare_rankings(runs: Sequence[Run]) -> list[Rankings]:
    """The runs' rankings in trec_eval's order over one shared vocabulary. A docno a run
    lists twice for a topic keeps its better rank."""
    ids = [(np.asarray(r.query_id, dtype=bytes), np.asarray(r.doc_id, dtype=bytes))
           for r in runs]
    topics = np.unique(np.concatenate([_block_values(q) for q, _ in ids] or
                                      [np.empty(0, bytes)]))
    topic_code = [lookup_topics(q, topics) for q, _ in ids]
    docs, pair_doc, pair_code = (_hashed_codes([d for _, d in ids], topic_code)
                                 or _sorted_codes(ids, topics))
    ranked = []
    for run, (_, doc_id), topic, pair in zip(runs, ids, topic_code, pair_code):
        order = rank_order(topic, np.asarray(run.score, dtype=np.float64), doc_id.__getitem__)
        ranked.append((run.name, topic, pair) if order is None else
                      (run.name, topic[order], pair[order]))
    return _assemble(ranked, topics, docs, pair_doc)


def _assemble(ranked, topics, docs, pair_doc) -> list[Rankings]:
    """Rankings of (name, topic codes, pair codes) in rank order: a (topic, docno) listed
    twice keeps its first row; the rows of every run in one column."""
    names, offsets, pair_parts = [], [], []
    stamp = np.full(len(pair_doc), -1, np.int32)
    for name, topic, pair in ranked:
        stamp[pair] = np.arange(len(pair), dtype=np.int32)  # the last row of each pair wins
        if np.any(stamp[pair] != np.arange(len(pair))):  # rare: a docno listed twice
            first = np.sort(np.unique(pair, return_index=True)[1])
            topic, pair = topic[first], pair[first]
        names.append(name)
        offsets.append(np.searchsorted(topic, np.arange(len(topics) + 1)))
        pair_parts.append(pair)
    starts = np.r_[0, np.cumsum([len(p) for p in pair_parts])].astype(np.int64)
    bounds = np.concatenate([o[:-1] + s for o, s in zip(offsets, starts)] + [starts[-1:]])
    pair_rows = np.concatenate(pair_parts or [np.empty(0, np.intp)]).astype(np.intp)
    vocabulary = Vocabulary(topics, docs, len(pair_doc), pair_rows, bounds.astype(np.int64))
    doc_rows = pair_doc[pair_rows]
    return [Rankings(name=n, offsets=o, doc=doc_rows[s:e], pair=pair_rows[s:e],
                     vocabulary=vocabulary, index=i)
            for i, (n, o, s, e) in enumerate(zip(names, offsets, starts, starts[1:]))]


def _block_values(query_id: np.ndarray) -> np.ndarray:
    """The topic id of each block of equal consecutive rows."""
    if len(query_id) == 0:
        return query_id
    return query_id[np.r_[0, np.flatnonzero(query_id[1:] != query_id[:-1]) + 1]]


_WORD_MUL = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)
_SLOT_MUL = np.uint64(0x9FB21C651E98DF25)
_TOPIC_MUL = np.uint64(0xFF51AFD7ED558CCD)


def _doc_keys(doc_id: np.ndarray) -> np.ndarray:
    """A 64-bit key of each docno: its 8-byte words (zero-padded, so any column width gives
    the same key) times odd constants, summed; equal docnos, equal keys."""
    words = doc_words(doc_id)
    key = np.zeros(len(doc_id), np.uint64)
    for j in range(words.shape[1]):  # a loop over the words of the widest docno: <= 129
        key += words[:, j] * np.uint64(_WORD_MUL[j % 4] + 2 * (j // 4))
    return key


class _Codes:
    """Dense codes of uint64 keys, numbered as first met: open addressing (linear probing)
    filled a batch of keys at a time in whole-array rounds, doubled when half full."""

    def __init__(self, bits: int = 16):
        self.keys = np.empty(1 << (bits - 1), np.uint64)  # the key of each code
        self.n = 0
        self.slots = np.full(1 << bits, -1, np.int32)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        while 2 * (self.n + len(keys)) > len(self.slots):
            self._grow()
        slot = self._slot(keys)
        out = self.slots[slot]  # most keys are met again at their first slot
        hit = self.keys[out] == keys  # (a free slot, -1, reads the last key: masked next)
        hit &= out >= 0
        pending = np.flatnonzero(~hit)
        slot = slot[pending]
        while len(pending):
            code = self.slots[slot]
            free = code < 0
            if free.any():  # rows at a free slot claim it; one per slot wins, a new code
                self.slots[slot[free]] = -2 - pending[free]
                won = free & (self.slots[slot] == -2 - pending)
                new = np.arange(self.n, self.n + int(won.sum()), dtype=np.int32)
                self.slots[slot[won]] = new
                self.keys[new] = keys[pending[won]]
                self.n += len(new)
                code = self.slots[slot]
            hit = self.keys[code] == keys[pending]
            out[pending[hit]] = code[hit]
            pending, slot = pending[~hit], (slot[~hit] + 1) & (len(self.slots) - 1)
        return out

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        shift = np.uint64(64 - (len(self.slots).bit_length() - 1))
        return ((keys * _SLOT_MUL) >> shift).astype(np.int64)

    def _grow(self) -> None:
        keys = self.keys[:self.n]
        self.slots = np.full(2 * len(self.slots), -1, np.int32)
        self.keys = np.empty(len(self.slots) // 2, np.uint64)
        self.keys[:len(keys)] = keys
        pending, slot = np.arange(len(keys), dtype=np.int32), self._slot(keys)
        while len(pending):  # distinct keys: each takes the first free slot it finds
            free = self.slots[slot] < 0
            self.slots[slot[free]] = pending[free]
            placed = free & (self.slots[slot] == pending)
            pending, slot = pending[~placed], (slot[~placed] + 1) & (len(self.slots) - 1)


def _hashed_codes(doc_ids: list[np.ndarray], topic_code: list[np.ndarray]):
    """(docs, the doc code of each pair code, each run's pair codes) from the keys, or None
    when two distinct docnos or (topic, docno) pairs share a key. Pairs are looked up by a
    key of the topic and the docno's key; only a pair met for the first time looks its
    docno up; every row's topic and bytes are checked against its pair's."""
    if not doc_ids:
        return None
    rows = sum(len(d) for d in doc_ids)  # pairs: at most one a row, most seen again
    doc_codes, pair_codes = _Codes(), _Codes(max(16, rows.bit_length()))
    pair_rows, pair_topic, pair_doc, distinct = [], [], [], []
    for doc_id, topic in zip(doc_ids, topic_code):
        key, known = _doc_keys(doc_id), pair_codes.n
        pair = pair_codes(key + topic.astype(np.uint64) * _TOPIC_MUL)
        first = _firsts(pair, known, pair_codes.n)  # the row of each new pair
        known = doc_codes.n
        doc = doc_codes(key[first])
        distinct.append(doc_id[first[_firsts(doc, known, doc_codes.n)]])
        pair_rows.append(pair)
        pair_topic.append(topic[first])
        pair_doc.append(doc)
    topics, docs = np.concatenate(pair_topic), np.concatenate(distinct)
    pair_of_doc = np.concatenate(pair_doc)
    for doc_id, topic, pair in zip(doc_ids, topic_code, pair_rows):
        if np.any(topics[pair] != topic) or np.any(docs[pair_of_doc[pair]] != doc_id):
            return None
    by_topic = np.argsort(topics.astype(np.int16 if len(topics) and topics.max() < 2**15
                                        else np.int32), kind="stable")  # radix sort
    renumber = np.empty(len(topics), np.int32)
    renumber[by_topic] = np.arange(len(topics), dtype=np.int32)
    by_bytes = np.lexsort(doc_words(docs).byteswap().T[::-1])  # big-endian: byte order
    code = np.empty(len(docs), np.int32)
    code[by_bytes] = np.arange(len(docs), dtype=np.int32)
    return docs[by_bytes], code[pair_of_doc[by_topic]], [renumber[p] for p in pair_rows]


def _firsts(codes: np.ndarray, known: int, n: int) -> np.ndarray:
    """The first row of each code from ``known`` to ``n`` (codes new in this batch)."""
    rows = np.flatnonzero(codes >= known)[::-1]
    out = np.empty(n - known, np.intp)
    out[codes[rows] - known] = rows  # the last write, the first row, wins
    return out


def _sorted_codes(ids, topics):
    """The codes of :func:`_hashed_codes` by sorting the bytes (exact whatever the keys)."""
    empty = [np.empty(0, bytes)]
    topic_all = np.concatenate([q for q, _ in ids] or empty)
    docs, doc_code = np.unique(np.concatenate([d for _, d in ids] or empty),
                               return_inverse=True)
    pairs, pair_code = np.unique(np.searchsorted(topics, topic_all).astype(np.int64)
                                 * max(len(docs), 1) + doc_code, return_inverse=True)
    starts = np.cumsum([0] + [len(q) for q, _ in ids])
    return (docs, (pairs % max(len(docs), 1)).astype(np.int32),
            [pair_code[s:e].astype(np.int32) for s, e in zip(starts, starts[1:])])
