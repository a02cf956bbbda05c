"""Content checks of one run: topics, documents per topic, duplicates, rank order, docnos.

They work on the :class:`~.lines.Columns` of a file: topic ids are interned once (runs list a
topic's lines together, so only the first line of each stretch is looked up), and every check
is a sort, a ``bincount`` or a comparison of neighbours over whole arrays.
"""

from __future__ import annotations

import re

import numpy as np

from ..topics import Topics
from .lines import Columns, read_file, text_of
from .problems import Collector

SHOWN_IDS = 10


def check_content(cols: Columns, out: Collector, topics: Topics | None) -> int:
    """Run the content checks; return the number of distinct topics answered."""
    names, code = _intern(cols.query_id)
    counts = np.bincount(code, minlength=len(names))
    first_line = np.full(len(names), np.iinfo(np.int64).max)
    np.minimum.at(first_line, code, cols.line)
    rules = out.rules
    if topics is not None:
        known = np.array([q.encode("utf-8") for q in topics.query_id])
        unknown = np.flatnonzero(~np.isin(names, known))
        out.add_many("unknown_topic", first_line[unknown], lambda i: (
            f"unknown topic '{text_of(names[unknown[i]])}' ({_count(counts[unknown[i]])}; "
            f"not in {topics.path})"))
        answered = set(names[np.isin(names, known)].tolist())
        missing = [q for q, b in zip(topics.query_id, known) if b not in answered]
        if rules.min_topics is None:
            for qid in missing:
                out.add("missing_topic", 0, f"no documents retrieved for topic '{qid}'")
        elif len(topics) - len(missing) < rules.min_topics:
            out.add("missing_topic", 0, f"documents retrieved for {len(topics) - len(missing)}"
                    f" of {len(topics)} topics; at least {rules.min_topics} required "
                    f"(missing: {_some(missing)})")
    elif rules.min_topics is not None and len(names) < rules.min_topics:
        out.add("missing_topic", 0, f"documents retrieved for {len(names)} topics; at least "
                f"{rules.min_topics} required")
    if out.on("max_docs") or out.on("min_docs"):
        _docs_per_topic(cols, out, names, code, counts, first_line)
    if out.on("duplicate_doc"):
        _duplicates(cols, out, names, code)
    if out.on("rank_order"):
        _rank_order(cols, out, names, code)
    if out.on("docno") and (rules.docno_pattern or rules.docnos):
        _docnos(cols, out)
    return len(names)


def _intern(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct topic ids sorted, each line's index into them)."""
    if not len(qid):
        return qid, np.zeros(0, dtype=np.int64)
    head = np.flatnonzero(np.concatenate(([True], qid[1:] != qid[:-1])))
    names, inverse = np.unique(qid[head], return_inverse=True)
    return names, np.repeat(inverse, np.diff(np.append(head, len(qid))))


def _docs_per_topic(cols, out, names, code, counts, first_line) -> None:
    rules = out.rules
    over = np.flatnonzero(counts > rules.max_docs)
    if len(over) and out.on("max_docs"):
        order = np.argsort(code, kind="stable")  # each topic's lines in file order
        start = np.concatenate(([0], np.cumsum(counts)[:-1]))
        at = cols.line[order[start[over] + rules.max_docs]]
        out.add_many("max_docs", at, lambda i: (
            f"{counts[over[i]]} documents retrieved for topic '{text_of(names[over[i]])}', at "
            f"most {rules.max_docs} allowed (this is document {rules.max_docs + 1})"))
    under = np.flatnonzero(counts < rules.min_docs)
    out.add_many("min_docs", first_line[under], lambda i: (
        f"{_count(counts[under[i]], 'document')} retrieved for topic "
        f"'{text_of(names[under[i]])}', at least {rules.min_docs} required"))


def _duplicates(cols, out, names, code) -> None:
    # one bytes key per line, topic (big-endian) then docno: a stable sort of it orders by
    # (topic, docno, line) three times faster than np.lexsort over the two columns
    width = cols.doc_id.dtype.itemsize
    key = np.empty(len(code), dtype=[("topic", ">u4"), ("doc", f"S{width}")])
    key["topic"] = code
    key["doc"] = cols.doc_id
    key = key.view(f"S{width + 4}").ravel()
    order = np.argsort(key, kind="stable")
    c, d, key = code[order], cols.doc_id[order], key[order]
    same = key[1:] == key[:-1]
    dup = np.flatnonzero(same) + 1
    if not len(dup):
        return
    head = np.flatnonzero(np.concatenate(([True], ~same)))
    owner = head[np.searchsorted(head, dup, side="right") - 1]
    line = cols.line[order]
    out.add_many("duplicate_doc", line[dup], lambda i: (
        f"document '{text_of(d[dup[i]])}' retrieved more than once for topic "
        f"'{text_of(names[c[dup[i]]])}' (first at line {line[owner[i]]})"))


def _rank_order(cols, out, names, code) -> None:
    """Within a topic, sorted by rank, a score may not rise. One problem per topic."""
    ok = np.flatnonzero(cols.rank_ok & cols.score_ok)
    order = ok[np.lexsort((cols.line[ok], cols.rank[ok], code[ok]))]
    c, r, s = code[order], cols.rank[order], cols.score[order]
    rise = np.flatnonzero((c[1:] == c[:-1]) & (s[1:] > s[:-1]) & (r[1:] > r[:-1])) + 1
    if not len(rise):
        return
    first = rise[np.concatenate(([True], c[rise][1:] != c[rise][:-1]))]  # first per topic
    line = cols.line[order]
    out.add_many("rank_order", line[first], lambda i: (
        f"rank {r[first[i]]} has a higher score than rank {r[first[i] - 1]} (line "
        f"{line[first[i] - 1]}) in topic '{text_of(names[c[first[i]]])}'; trec_eval orders by "
        f"score, not rank"))


def _docnos(cols, out) -> None:
    rules = out.rules
    docs, inverse = np.unique(cols.doc_id, return_inverse=True)
    bad = np.zeros(len(docs), dtype=bool)
    reason = ""
    if rules.docnos:
        valid = np.array(read_file(rules.docnos).split())
        bad |= ~np.isin(docs, valid)
        reason = f"not in {rules.docnos}"
    if rules.docno_pattern:
        bad |= _not_matching(docs, rules.docno_pattern)
        reason = " and ".join(filter(None, [reason, f"not matching '{rules.docno_pattern}'"]))
    lines = np.flatnonzero(bad[inverse])
    out.add_many("docno", cols.line[lines], lambda i: (
        f"unknown document id '{text_of(cols.doc_id[lines[i]])}' ({reason})"))


def _not_matching(docs: np.ndarray, pattern: str) -> np.ndarray:
    """Which docnos do not match ``pattern`` in full: one regex scan over all of them joined
    by newlines, finding only the lines that do not match."""
    joined = b"\n".join(docs.tolist())
    body = pattern.encode("utf-8")
    scan = re.compile(rb"^(?!(?:" + body + rb")$)[^\n]*$", re.M)
    starts = [m.start() for m in scan.finditer(joined)]
    if not starts:
        return np.zeros(len(docs), dtype=bool)
    lens = np.char.str_len(docs) + 1
    offsets = np.concatenate(([0], np.cumsum(lens)[:-1]))
    bad = np.zeros(len(docs), dtype=bool)
    bad[np.searchsorted(offsets, starts)] = True
    return bad


def _count(n: int, word: str = "line") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")
