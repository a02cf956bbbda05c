"""All runs of a campaign as one columnar table, ranked once in trec_eval's order.

Every strategy, statistic and simulation in :mod:`irbench.pooling` works on this table:

* rows sorted by (run, topic, rank); ``rank`` is 1-based in trec_eval's order (score
  descending, then docno descending as raw bytes), the order :func:`irbench.evaluate` ranks in;
* ``run`` / ``topic`` are indices into ``runs`` / ``topics``; ``doc`` is a code into ``docs``
  (every docno of the campaign, sorted, so code order is byte order);
* ``segments``: rows of run ``r`` on topic ``t`` are
  ``segments[r * T + t] : segments[r * T + t + 1]``;
* ``cand``: the *candidate* of each row, an index into (``cand_topic``, ``cand_doc``), the
  distinct (topic, docno) pairs any run retrieved, sorted by topic then docno.

Docnos are interned once into dense integer codes; no strategy ever compares strings.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import doc_hash
from ..errors import FormatError, PoolingError
from ..trec import Run, display, is_frame, read_run


@dataclass(frozen=True, eq=False)
class RunTable:
    """The runs of a campaign as columns (see the module docstring)."""

    runs: tuple[str, ...]
    groups: tuple[str, ...]
    run_group: np.ndarray          # (R,) group index of each run
    topics: np.ndarray             # (T,) topic ids, bytes, sorted
    docs: np.ndarray               # (D,) docnos, bytes, sorted
    run: np.ndarray                # per row: run index (int32)
    topic: np.ndarray              # per row: topic index (int32)
    rank: np.ndarray               # per row: 1-based rank (int32)
    doc: np.ndarray                # per row: docno code (int64)
    cand: np.ndarray               # per row: candidate index (int64)
    segments: np.ndarray           # (R * T + 1,) row offsets of each (run, topic)
    cand_topic: np.ndarray         # (C,) topic index of each candidate
    cand_doc: np.ndarray           # (C,) docno code of each candidate
    sources: tuple[Run, ...]       # the Run objects, for exact re-scoring with evaluate()

    @property
    def num_runs(self) -> int:
        return len(self.runs)

    @property
    def num_topics(self) -> int:
        return len(self.topics)

    @property
    def num_candidates(self) -> int:
        return len(self.cand_doc)

    @property
    def depth(self) -> np.ndarray:
        """(R, T) number of documents each run returned for each topic."""
        return np.diff(self.segments).reshape(self.num_runs, self.num_topics)

    def run_index(self, names: Iterable[str]) -> np.ndarray:
        """Indices of the runs called ``names``; an unknown name is a :class:`PoolingError`."""
        lookup = {name: i for i, name in enumerate(self.runs)}
        names = list(names)
        unknown = [n for n in names if n not in lookup]
        if unknown:
            raise PoolingError(f"unknown run{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(n) for n in unknown)}; the table has "
                             f"{', '.join(self.runs[:10])}{' ...' if len(self.runs) > 10 else ''}")
        return np.array([lookup[n] for n in names], dtype=np.int64)

    def topic_ids(self) -> list[str]:
        return [display(t) for t in self.topics]

    def fingerprint(self) -> dict:
        """What a saved :class:`PoolingState` checks the table against when it is restored."""
        return {"runs": list(self.runs), "rows": int(len(self.doc)),
                "topics": len(self.topics), "candidates": int(self.num_candidates)}

    def lookup(self, topic: np.ndarray, doc_id: np.ndarray) -> np.ndarray:
        """Candidate index of each (topic index, docno bytes) pair; -1 if no run retrieved it."""
        out = np.full(len(doc_id), -1, dtype=np.int64)
        if len(doc_id) == 0 or len(self.docs) == 0:
            return out
        code = np.minimum(np.searchsorted(self.docs, doc_id), len(self.docs) - 1)
        known = (self.docs[code] == doc_id) & (topic >= 0)
        key = self.cand_topic.astype(np.int64) * len(self.docs) + self.cand_doc
        wanted = topic.astype(np.int64) * len(self.docs) + code
        pos = np.minimum(np.searchsorted(key, wanted), len(key) - 1)
        hit = known & (key[pos] == wanted)
        out[hit] = pos[hit]
        return out

    def topic_lookup(self, query_id: np.ndarray) -> np.ndarray:
        """Topic index of each topic id (bytes); -1 for topics no run answered."""
        if len(query_id) == 0:
            return np.zeros(0, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.topics, query_id), len(self.topics) - 1)
        return np.where(self.topics[pos] == query_id, pos, -1).astype(np.int64)


def _entry(item: Any) -> tuple[str, str, Any]:
    """(name, group, run or path) of one input: a tuple, or an object with name/group/run
    (or ``path``, as :class:`irbench.config.System` has)."""
    if isinstance(item, (tuple, list)):
        if len(item) == 2:
            return str(item[0]), "", item[1]
        if len(item) == 3:
            return str(item[0]), str(item[1] or ""), item[2]
        raise PoolingError(f"a run entry is (name, group, run), got {len(item)} values")
    name = getattr(item, "name", None)
    run = getattr(item, "run", None)
    if run is None:
        run = getattr(item, "path", None)
    if name is None or run is None:
        raise PoolingError(f"a run entry needs a name and a run (or path), got {item!r}")
    return str(name), str(getattr(item, "group", "") or ""), run


def _widen(parts: list[np.ndarray]) -> np.ndarray:
    width = max(max((p.dtype.itemsize for p in parts), default=1), 1)
    return np.concatenate([p.astype(f"S{width}", copy=False) for p in parts])


def build_table(runs: Sequence[Any], *, topics: Iterable[str | bytes] | None = None,
                depth: int | None = None, duplicates: str = "error") -> RunTable:
    """Rank every run once and stack them into a :class:`RunTable`.

    runs: ``(name, group, run)`` tuples or objects with ``name``, ``group`` and ``run`` (a
        :class:`~irbench.trec.Run` or a data frame with query_id, doc_id, score) or ``path``
        (read with :func:`~irbench.read_run`); a run
        without a group is its own group. The order given is the priority order (the first
        runs of a group are its priority runs).
    topics: keep only these topics (e.g. the qrels topics); default: every topic of any run.
    depth: keep only each run's top ``depth`` documents per topic.
    duplicates: ``"error"`` (a docno retrieved twice for one topic is a :class:`FormatError`,
        as in trec_eval) or ``"first"`` (keep the better-ranked copy).
    """
    entries = _checked_entries(runs, depth, duplicates)
    sources = _sources(entries)
    groups, run_group = _groups(entries)
    lengths = np.array([len(r) for r in sources], dtype=np.int64)
    run = np.repeat(np.arange(len(sources), dtype=np.int32), lengths)
    qid = _widen([r.query_id for r in sources])
    score = np.concatenate([r.score for r in sources])
    docs, doc = _intern(_widen([r.doc_id for r in sources]))
    line = np.concatenate([r.line for r in sources])
    topic_ids, topic = _topic_index(qid, topics)
    if topics is not None:  # rows of other topics (-1) go
        keep = topic >= 0
        run, score, doc, topic, line = run[keep], score[keep], doc[keep], topic[keep], line[keep]
    topic = topic.astype(np.int32)
    num_segments = len(sources) * len(topic_ids)

    seg = run.astype(np.int64) * len(topic_ids) + topic
    order = np.lexsort((-doc, -score, seg))  # trec_eval: score desc, then docno desc
    run, topic, doc, line, seg = run[order], topic[order], doc[order], line[order], seg[order]
    dup = _duplicates(seg, doc, len(docs))
    if dup.any():
        if duplicates == "error":
            _raise_duplicates(sources, topic_ids, docs, run, topic, doc, line, dup)
        keep = ~dup
        run, topic, doc, seg = run[keep], topic[keep], doc[keep], seg[keep]
    segments = _segments(seg, num_segments)
    rank = (np.arange(len(seg), dtype=np.int64) - segments[seg] + 1).astype(np.int32)
    if depth is not None and len(rank) and rank.max() > depth:
        keep = rank <= depth
        run, topic, doc, seg, rank = run[keep], topic[keep], doc[keep], seg[keep], rank[keep]
        segments = _segments(seg, num_segments)
    cand, cand_topic, cand_doc = _candidates(topic, doc, len(docs))
    return RunTable(
        runs=tuple(e[0] for e in entries), groups=groups, run_group=run_group,
        topics=topic_ids, docs=docs, run=run, topic=topic, rank=rank, doc=doc, cand=cand,
        segments=segments, cand_topic=cand_topic, cand_doc=cand_doc, sources=tuple(sources),
    )


def _checked_entries(runs: Sequence[Any], depth: int | None,
                     duplicates: str) -> list[tuple[str, str, Any]]:
    """(name, group, run or path) of each of ``runs``, after checking the options and that
    there are runs, uniquely named."""
    if duplicates not in ("error", "first"):
        raise PoolingError(f"duplicates must be 'error' or 'first', not {duplicates!r}")
    if depth is not None and depth < 1:
        raise PoolingError(f"depth must be >= 1 (got {depth})")
    entries = [_entry(item) for item in runs]
    if not entries:
        raise PoolingError("no runs to pool")
    names = [e[0] for e in entries]
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise PoolingError(f"run names must be unique: {', '.join(repeated)}")
    return entries


def _sources(entries: list[tuple[str, str, Any]]) -> list[Run]:
    """The :class:`Run` of each entry: given, or read from a path or a data frame."""
    sources: list[Run] = []
    for name, _, run in entries:
        if isinstance(run, Run):
            sources.append(run)
        elif isinstance(run, (str, os.PathLike)) or is_frame(run):
            sources.append(read_run(run, name=name))  # a missing file: FormatError
        else:
            raise PoolingError(f"run {name!r}: expected a Run, a path or a data frame, got "
                               f"{type(run).__name__}")
    return sources


def _groups(entries: list[tuple[str, str, Any]]) -> tuple[tuple[str, ...], np.ndarray]:
    """(groups in order of first appearance, group index of each run); a run without a group
    is its own group."""
    group_names = [e[1] or e[0] for e in entries]
    groups = tuple(dict.fromkeys(group_names))
    gindex = {g: i for i, g in enumerate(groups)}
    return groups, np.array([gindex[g] for g in group_names], dtype=np.int64)


def _topic_index(qid: np.ndarray, topics: Iterable[str | bytes] | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(topic ids sorted, topic index of each row's ``qid``): every topic of the rows, or
    ``topics`` only, with -1 for rows of other topics."""
    if topics is None:
        topic_ids, topic = np.unique(qid, return_inverse=True)
        return topic_ids, topic.ravel()
    wanted = [t if isinstance(t, bytes) else str(t).encode("utf-8") for t in topics]
    if not wanted:
        raise PoolingError("topics is empty: nothing to pool")
    topic_ids = np.unique(np.array(wanted, dtype=np.bytes_))
    pos = np.minimum(np.searchsorted(topic_ids, qid), len(topic_ids) - 1)
    return topic_ids, np.where(topic_ids[pos] == qid, pos, -1)


def _segments(seg: np.ndarray, num_segments: int) -> np.ndarray:
    """Row offsets of each (run, topic) segment of rows sorted by ``seg``."""
    counts = np.bincount(seg, minlength=num_segments)
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _candidates(topic: np.ndarray, doc: np.ndarray,
                num_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(candidate of each row, topic and docno code of each candidate): the distinct
    (topic, docno) pairs, sorted by topic then docno."""
    key = topic.astype(np.int64) * max(num_docs, 1) + doc
    cand_key, cand = np.unique(key, return_inverse=True)
    cand_topic, cand_doc = np.divmod(cand_key, max(num_docs, 1))
    return cand.astype(np.int64).ravel(), cand_topic.astype(np.int64), cand_doc


def _intern(doc_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct docnos, code of each row): hash first (sorting 64-bit ints is much
    faster than sorting strings), then sort only the distinct docnos. Exact: a hash collision
    is detected by comparing bytes and falls back to sorting the strings."""
    hashes = doc_hash(doc_id)
    uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    reps = doc_id[first]
    if not np.array_equal(reps[inverse], doc_id):  # a collision: two docnos, one hash
        docs, code = np.unique(doc_id, return_inverse=True)
        return docs, code.astype(np.int64).ravel()
    order = np.argsort(reps, kind="stable")
    code_of = np.empty(len(reps), dtype=np.int64)
    code_of[order] = np.arange(len(reps))
    return reps[order], code_of[inverse]


def _duplicates(seg: np.ndarray, doc: np.ndarray, num_docs: int) -> np.ndarray:
    """Rows (in ranked order) repeating a better-ranked row's (run, topic, docno)."""
    out = np.zeros(len(seg), dtype=bool)
    if len(seg) < 2:
        return out
    if len(seg) and int(seg[-1]) < (2**62) // max(num_docs, 1):  # one int64 key: cheap check
        key = np.sort(seg * num_docs + doc)
        if not np.any(key[1:] == key[:-1]):
            return out
    o = np.lexsort((np.arange(len(seg)), doc, seg))
    same = (seg[o][1:] == seg[o][:-1]) & (doc[o][1:] == doc[o][:-1])
    out[o[1:][same]] = True
    return out


def _raise_duplicates(sources, topic_ids, docs, run, topic, doc, line, dup) -> None:
    problems = []
    for i in np.flatnonzero(dup)[:20]:
        src = sources[int(run[i])]
        problems.append(f"{src.path or src.name}:{int(line[i])}: docno "
                        f"'{display(docs[doc[i]])}' retrieved twice for topic "
                        f"'{display(topic_ids[topic[i]])}'")
    raise FormatError(problems, int(dup.sum()) - len(problems))


def contributing_runs(table: RunTable, runs: Iterable[str] | np.ndarray | None = None, *,
                      per_group: int | None = None) -> np.ndarray:
    """Which runs feed the pool, as a (R,) bool mask.

    runs: run names (e.g. the systems marked ``pooled: true``) or a bool mask; None: all.
    per_group: then keep only the first ``per_group`` of them in each group, in table order
        (TREC pools each group's N highest-priority runs).
    """
    if runs is None:
        mask = np.ones(table.num_runs, dtype=bool)
    elif isinstance(runs, np.ndarray) and runs.dtype == bool:
        if runs.shape != (table.num_runs,):
            raise PoolingError(f"contributing mask has shape {runs.shape}, expected "
                             f"({table.num_runs},)")
        mask = runs.copy()
    else:
        mask = np.zeros(table.num_runs, dtype=bool)
        mask[table.run_index(runs)] = True
    if per_group is not None:
        if per_group < 1:
            raise PoolingError(f"per_group must be >= 1 (got {per_group})")
        order = np.flatnonzero(mask)
        g = table.run_group[order]
        seen = np.zeros(len(table.groups), dtype=np.int64)
        keep = np.zeros(table.num_runs, dtype=bool)
        for r, gi in zip(order.tolist(), g.tolist()):  # one pass over runs, not documents
            if seen[gi] < per_group:
                keep[r] = True
                seen[gi] += 1
        mask = keep
    if not mask.any():
        raise PoolingError("no contributing runs: the pool would be empty")
    return mask
