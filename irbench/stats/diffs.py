"""How two runs' rankings differ, topic by topic (issue 42): tau_AP averaged in both
directions over the union of the two rankings (as diffir computes it), extrapolated rank-biased
overlap (RBO), and the Jaccard overlap of the top k, every topic at once in whole columns.

Each run's ranking of a topic is trec_eval's order (score descending, then docno descending),
so tied scores rank as ``irbench eval`` ranks them. Documents are coded in one vocabulary shared
by every run prepared together (:func:`prepare_rankings`), and a pair of runs is compared by
joins on those codes: no Python loop over documents, none over topics.

tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008) as diffir (MacAvaney et al., 2022) computes
it: the two rankings' union, a document absent from a run scored below all of that run's
documents; tau_AP(x, y) ranks by y and counts, for each document, how many documents above
it x orders strictly below it, divided by its position - 1; the score is the mean of
tau_AP(A, B) and tau_AP(B, A). Documents tied in y (those absent from a run) are ordered as
diffir's stable sort leaves them: the one x ranks higher is placed lower, so every pair of them
with distinct x counts as discordant. Of a topic that one run has no document for, every
score is its floor (tau_AP -1, RBO 0, Jaccard 0): the runs share nothing there.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..evaluation import evaluate
from ..trec import Qrels, Run, read_qrels, read_run
from .diffcodes import Rankings, prepare_rankings, rank_type

DEFAULT_PERSISTENCE = 0.9


@dataclass(frozen=True, eq=False)
class DiffScores:
    """Per-topic scores of how run ``b`` differs from run ``a``, aligned to ``topics`` (every
    topic either run ranks a document for, in byte order). ``size_a``/``size_b``: documents
    ranked; ``shared``: documents both rank; ``shared_top``: of the top ``k``."""

    a: str
    b: str
    k: int
    persistence: float
    topics: tuple[str, ...]
    tau_ap: np.ndarray
    rbo: np.ndarray
    jaccard: np.ndarray
    size_a: np.ndarray
    size_b: np.ndarray
    shared: np.ndarray
    shared_top: np.ndarray


@functools.cache
def _harmonic(n: int) -> np.ndarray:
    """H[i + 1] = 1 + 1/2 + ... + 1/i (H[0] = 0 stands for H(-1), H[1] for H(0))."""
    return np.r_[0.0, 0.0, np.cumsum(1.0 / np.arange(1, n + 1))]


@functools.cache
def _rbo_tables(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """G[d] = sum of p^i / i and P[d] = sum of p^i for i = 1..d (G[0] = P[0] = 0)."""
    powers = p ** np.arange(1, n + 1, dtype=np.float64)
    return (np.r_[0.0, np.cumsum(powers / np.arange(1, n + 1))], np.r_[0.0, np.cumsum(powers)])


def diff_scores(a: Rankings, b: Rankings, k: int = 10,
                persistence: float = DEFAULT_PERSISTENCE) -> DiffScores:
    """Every topic's tau_AP, RBO and Jaccard@k between ``a`` and ``b`` (prepared together by
    :func:`prepare_rankings`)."""
    return diff_against(a, [b], k, persistence)[0]


def diff_all_pairs(rankings: Sequence[Rankings], k: int = 10,
                   persistence: float = DEFAULT_PERSISTENCE, batch: int = 24,
                   share: tuple[int, int] = (0, 1)):
    """:func:`diff_scores` of every pair (i < j) of ``rankings``, in that order; each run
    against up to ``batch`` others at once. ``share`` (w, n): only the pairs whose first run
    is every n-th from the w-th (worker w of n). Each run's rank lookup is written into one
    table and wiped after its pairs (no table per run)."""
    if not rankings:
        return
    _check(rankings[0], rankings[1:], k, persistence)
    work: dict = {}  # buffers reused from batch to batch
    table = np.full(rankings[0].vocabulary.pairs, -1,
                    rank_type(np.concatenate([r.sizes for r in rankings])))
    for i in range(share[0], len(rankings), share[1]):
        a = rankings[i]
        table[a.pair] = a.row_rank
        others = rankings[i + 1:]
        for at in range(0, len(others), batch):
            yield from _against(a, table, others[at:at + batch], k, persistence, work)
        table[a.pair] = -1


def diff_against(a: Rankings, bs: Sequence[Rankings], k: int = 10,
                 persistence: float = DEFAULT_PERSISTENCE) -> list[DiffScores]:
    """:func:`diff_scores` of ``a`` against each of ``bs``, all in one pass: a group is
    (run of ``bs``, topic). Only the documents both rank are visited: what the others add to
    each score is a closed form of the group's sizes (harmonic numbers, RBO's sums)."""
    _check(a, bs, k, persistence)
    return _against(a, a.rank_of, bs, k, persistence)


def _check(a: Rankings, bs: Sequence[Rankings], k: int, persistence: float) -> None:
    if any(a.vocabulary is not b.vocabulary for b in bs):
        raise ValueError("rankings prepared apart: prepare both runs in one prepare_rankings")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not 0 < persistence < 1:
        raise ValueError(f"RBO's persistence must be between 0 and 1, not {persistence}")


def _rows(bs: Sequence[Rankings]) -> tuple[np.ndarray, np.ndarray]:
    """The (topic, docno) codes of ``bs``'s rows one run after another, and where each
    (run, topic) starts in them (+ the end): a slice of the vocabulary's column when the runs
    were prepared next to each other, in that order."""
    vocabulary, topics_n = bs[0].vocabulary, len(bs[0].offsets) - 1
    first = bs[0].index
    if all(b.index == first + i for i, b in enumerate(bs)):
        bounds = vocabulary.bounds[first * topics_n:(first + len(bs)) * topics_n + 1]
        return vocabulary.pair_rows[bounds[0]:bounds[-1]], bounds - bounds[0]
    starts = np.cumsum([0] + [len(b.pair) for b in bs])
    bounds = np.concatenate([b.offsets[:-1] + s for b, s in zip(bs, starts)] + [starts[-1:]])
    return np.concatenate([b.pair for b in bs]), bounds


def _against(a: Rankings, rank_of: np.ndarray, bs: Sequence[Rankings], k: int,
             persistence: float, work: dict | None = None) -> list[DiffScores]:
    if not bs:
        return []
    topics_n, runs_n, rows_a = len(a.offsets) - 1, len(bs), len(a.pair)
    pairs, bounds = _rows(bs)
    rank_a_of_b = rank_of[pairs]
    rows = np.flatnonzero(rank_a_of_b >= 0)  # b's rows a ranks too, by (run, topic), b's rank
    cuts = np.searchsorted(rows, bounds)
    shared = np.diff(cuts)  # per group: (run of bs, topic)
    group = np.repeat(np.arange(len(shared)), shared)  # intp: indices index fastest
    rb = rows - bounds[group]
    ra = rank_a_of_b[rows].astype(np.intp)
    u = np.arange(len(rows)) - cuts[group]  # rank among the shared, in b's order
    size_a = np.tile(a.sizes, runs_n)
    size_b = np.diff(bounds)
    start = (np.arange(runs_n)[:, None] * rows_a + a.offsets[:-1]).ravel()  # group in a's rows
    in_a = start[group] + ra + 1
    mark = _zeros(work, runs_n * rows_a + 1)  # the shared documents in a's order
    mark[in_a] = 1
    seen = np.cumsum(mark, out=mark)
    v = seen[in_a] - seen[start][group] - 1  # rank among the shared, in a's order
    concordant = dominance(group, v, u)  # above in both runs
    w_ab, c_ab = _tau_sums(group, rb, ra, v, concordant, size_a, size_b, shared)
    w_ba, c_ba = _tau_sums(group, ra, rb, u, concordant, size_b, size_a, shared)
    w_ab += w_ba
    total = np.bincount(group, w_ab, minlength=len(shared)) + c_ab + c_ba
    n = size_a + size_b - shared  # the mean of both directions: 1 - (S_ab + S_ba) / (n - 1)
    tau = np.ones(len(shared))
    np.subtract(1.0, total / np.maximum(n - 1, 1), out=tau, where=n > 1)
    tau[(size_a == 0) | (size_b == 0)] = -1.0
    rbo = _rbo(group, np.maximum(ra, rb), size_a, size_b, shared, persistence)
    shared_top = np.bincount(group[(ra < k) & (rb < k)], minlength=len(size_a))
    top_union = np.minimum(size_a, k) + np.minimum(size_b, k) - shared_top
    jaccard = shared_top / np.maximum(top_union, 1)
    names = np.array([t.decode("utf-8", "replace") for t in a.vocabulary.topics], object)
    out, every = [], tuple(names)
    for i, b in enumerate(bs):
        part = slice(i * topics_n, (i + 1) * topics_n)
        present = np.flatnonzero(n[part] > 0)
        at = part if len(present) == topics_n else present + i * topics_n  # all: views
        out.append(DiffScores(
            a=a.name, b=b.name, k=k, persistence=persistence,
            topics=every if len(present) == topics_n else tuple(names[present]),
            tau_ap=tau[at], rbo=rbo[at], jaccard=jaccard[at], size_a=size_a[at],
            size_b=size_b[at], shared=shared[at], shared_top=shared_top[at]))
    return out


def _zeros(work: dict | None, n: int) -> np.ndarray:
    """``n`` int32 zeros, in the buffer of ``work`` when there is one (fresh pages cost more
    than zeroing)."""
    if work is None:
        return np.zeros(n, np.int32)
    if len(work.get("zeros", ())) < n:
        work["zeros"] = np.empty(n, np.int32)
    out = work["zeros"][:n]
    out.fill(0)
    return out


def _tau_sums(group, rank_y, rank_x, place_x, concordant, size_x, size_y, shared):
    """The sum S of tau_AP(x, y) = 1 - 2 S / (n - 1), every group's, from the shared
    documents alone, as (a weight per shared document, a constant per group). Their ranks in
    y and x, ``place_x`` their rank among the shared in x's order, ``concordant`` how many
    shared documents are above each in both. Ranked by y: y's documents, then those only x
    ranks in reverse of x's order. A shared document at y rank r > 0 adds
    (r - concordant) / r; the documents only x ranks (q of them, j = 0..q-1 of them below
    each) add sum (size_y - m + j) / (size_y + j) = q - m (H(size_y + q - 1) - H(size_y - 1)),
    and for each shared document, those above it in x's order add 1 / (size_y + j) each."""
    weight = (rank_y - concordant) / np.maximum(rank_y, 1)  # at rank 0: 0 / 1
    only = size_x - shared
    h = _harmonic(int(max((size_x + size_y).max(initial=0), 1)))  # h[i + 1] = H(i)
    top = h[size_y + only]  # H(size_y + q - 1)
    below = (size_y + only)[group] + (place_x - rank_x)  # size_y + only-x ones under each
    weight += top[group] - h[below]
    return weight, only - shared * (top - h[size_y])


BITSET_WORDS = 1 << 16  # 512 KB of uint64 words at most per block of topics: in cache


def dominance(group: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For each element: how many elements of its group are before it in both orders,
    ``first`` and ``second`` being each element's rank (0-based, distinct) in two orders
    within its group. Elements are given grouped by ``group``. Bitsets: row r of a group
    holds the elements whose ``first`` rank is below r (an OR accumulated down the rows), so
    the count is a popcount of the row below its ``second`` rank; groups go in blocks of
    like sizes (the largest first) so that no block exceeds :data:`BITSET_WORDS`."""
    n = len(first)
    count = np.zeros(n, np.int32)
    if n == 0:
        return count
    sizes = np.bincount(group)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    todo = np.argsort(-sizes, kind="stable")
    todo = todo[sizes[todo] > 1]
    at, buffer = 0, np.empty(0, np.uint64)  # one buffer: fresh pages cost more than zeroing
    while at < len(todo):
        largest = int(sizes[todo[at]])
        words = (largest + 63) // 64
        take = max(1, BITSET_WORDS // ((largest + 1) * words))
        close = int(np.searchsorted(-sizes[todo], -(largest * 3 // 4), side="right")) - at
        block = todo[at:at + max(1, min(take, close))]  # sizes within 1/4: little padding
        at += len(block)
        need = len(block) * (largest + 1) * words
        if len(buffer) < need:
            buffer = np.empty(need, np.uint64)
        bits = buffer[:need].reshape(len(block), words, largest + 1)
        bits.fill(0)
        _count_block(block, sizes, starts, first, second, bits, count)
    return count


def _count_block(block, sizes, starts, first, second, bits, count) -> None:
    """One block's counts; ``bits`` (groups, words, rows + 1) zeros: for each group and
    word of the ``second`` ranks, the rows (``first`` ranks) are contiguous, so the OR runs
    down contiguous memory and the words' popcounts add up slab by slab."""
    words, rows_n = bits.shape[1], bits.shape[2] - 1
    lengths = sizes[block]
    slot = np.repeat(np.arange(len(block), dtype=np.int64), lengths)
    element = np.repeat(starts[block] - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + \
        np.arange(int(lengths.sum()))
    c = second[element]
    word = c >> 6
    one = np.left_shift(np.uint64(1), (c & 63).astype(np.uint64))
    at = (slot * words + word) * (rows_n + 1) + first[element]  # its row; set in the next
    flat = bits.reshape(-1)
    flat[at + 1] = one
    np.bitwise_or.accumulate(bits, axis=2, out=bits)  # row r: the elements above rank r
    one -= np.uint64(1)
    one &= flat[at]
    total = np.bitwise_count(one).astype(np.int32)
    if words > 1:  # and the whole words before the element's: a running popcount
        ones = np.bitwise_count(bits[:, :-1])
        before = np.zeros(bits.shape, np.int16 if rows_n < 2**15 else np.int32)
        before[:, 1] = ones[:, 0]
        for w in range(2, words):  # a loop over words (<= 16), each a slab of every group
            np.add(before[:, w - 1], ones[:, w - 1], out=before[:, w])
        total += before.reshape(-1)[at]
    count[element] = total


def _rbo(topic: np.ndarray, depth: np.ndarray, size_a: np.ndarray, size_b: np.ndarray,
         shared: np.ndarray, p: float) -> np.ndarray:
    """Extrapolated RBO (Webber, Moffat and Zobel 2010, eq. 32, lists of any lengths) of
    every topic from the shared documents: ``depth`` + 1 is where each joins both
    prefixes, so that X_d = how many joined by d and sum_d X_d / d p^d = sum over them of
    G(l) - G(depth), G(n) = sum_{d<=n} p^d / d."""
    topics_n = len(size_a)
    short, long = np.minimum(size_a, size_b), np.maximum(size_a, size_b)
    g, pw = _rbo_tables(int(max(long.max(initial=0), 1)), p)
    first = np.bincount(topic, g[long[topic]] - g[depth], minlength=topics_n)
    x_s = np.bincount(topic[depth < short[topic]], minlength=topics_n)
    has = short > 0
    rbo = np.zeros(topics_n)
    s, lg, xs = short[has], long[has], x_s[has]
    tail = xs / s * ((pw[lg] - pw[s]) - s * (g[lg] - g[s]))
    rbo[has] = ((1 - p) / p * (first[has] + tail)
                + ((shared[has] - xs) / lg + xs / s) * p ** lg)
    return rbo


# ---- two runs, as a user has them ------------------------------------------------------------

BY = ("tauap", "rbo", "jaccard", "measure")
SNIPPET_CHARS = 240  # of a document's text around the query's first term
TEXT_LIMIT = 20_000  # characters of a document read for its snippet


@dataclass(frozen=True)
class TopicDiff:
    """One topic: the ranking scores, the measure of each run and B - A (NaN: no measure
    asked, or the topic is not judged), and how many documents each ranks and both rank."""

    topic: str
    tau_ap: float
    rbo: float
    jaccard: float
    measure_a: float
    measure_b: float
    delta: float
    size_a: int
    size_b: int
    shared: int


@dataclass(frozen=True)
class Entry:
    """A document of one run's top k: its rank (1-based), judgment (None: unjudged), its rank
    in the other run (None: absent), and, with documents, its title and a snippet whose
    ``highlights`` are (start, end) spans of the query's terms."""

    rank: int
    docno: str
    judgment: int | None
    other_rank: int | None
    title: str = ""
    snippet: str = ""
    highlights: tuple[tuple[int, int], ...] = ()


def move(entry: Entry, side: str) -> str:
    """How a document of run ``side``'s list moved between A and B."""
    other = "B" if side == "A" else "A"
    if entry.other_rank is None:
        return f"absent from {other}"
    ranks = (entry.rank, entry.other_rank) if side == "A" else (entry.other_rank, entry.rank)
    return "same rank" if ranks[0] == ranks[1] else f"moved from {ranks[0]} to {ranks[1]}"


@dataclass(frozen=True)
class SideBySide:
    """A topic's two top-k lists."""

    topic: str
    a: tuple[Entry, ...]
    b: tuple[Entry, ...]


@dataclass(frozen=True, eq=False)
class RunDiff:
    """How run ``b`` differs from run ``a``: ``topics`` sorted by ``by`` (the most different
    first: lowest tau_AP, RBO or Jaccard; largest |B - A| of the measure), then topic id."""

    a: str
    b: str
    by: str
    measure: str | None
    k: int
    persistence: float
    topics: tuple[TopicDiff, ...]
    rankings: tuple[Rankings, Rankings]
    qrels: Any = None  # irbench.trec.Qrels or None

    def side_by_side(self, topic: str, documents=None, query: str = "") -> SideBySide:
        """The top ``k`` of each run for ``topic``; with ``documents`` (an open
        :class:`irbench.documents.Documents`) each document's title and a snippet with the
        terms of ``query`` highlighted."""
        if topic not in {t.topic for t in self.topics}:
            raise KeyError(topic)
        a, b = self.rankings
        judged = _judgments(self.qrels, topic)
        at = int(np.searchsorted(a.vocabulary.topics, topic.encode()))
        sides = []
        for run, other in ((a, b), (b, a)):
            docs = run.doc[run.offsets[at]:run.offsets[at + 1]][:self.k]
            rows = other.doc[other.offsets[at]:other.offsets[at + 1]]
            where = {int(d): i + 1 for i, d in enumerate(rows)}  # k x depth: display only
            names = [n.decode("utf-8", "replace") for n in run.vocabulary.docs[docs]]
            sides.append(tuple(Entry(i + 1, name, judged.get(name),
                                     where.get(int(d)))
                               for i, (d, name) in enumerate(zip(docs, names))))
        if documents is not None:
            sides = [_with_text(side, documents, query) for side in sides]
        return SideBySide(topic, sides[0], sides[1])


def _with_text(entries, documents, query: str) -> tuple[Entry, ...]:
    present = [e.docno for e in entries if e.docno in documents]
    texts = {doc.docno: doc for doc in documents.get_many(present, limit=TEXT_LIMIT)}
    out = []
    for e in entries:
        doc = texts.get(e.docno)
        if doc is None:
            out.append(e)
            continue
        snippet, spans = snippet_of(doc.text, query)
        out.append(replace(e, title=doc.title[:SNIPPET_CHARS], snippet=snippet,
                           highlights=spans))
    return tuple(out)


def query_terms(query: str) -> list[str]:
    """The query's words (letters and digits, two or more), lower case, each once."""
    return list(dict.fromkeys(w.lower() for w in re.findall(r"\w{2,}", query)))


def snippet_of(text: str, query: str, width: int = SNIPPET_CHARS
               ) -> tuple[str, tuple[tuple[int, int], ...]]:
    """``width`` characters of ``text`` (whitespace collapsed) around the first of the
    query's terms, and the spans of every term in it (whole words, any case)."""
    text = " ".join(text[:TEXT_LIMIT].split())
    terms = query_terms(query)
    if not terms:
        return text[:width], ()
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.I)
    first = pattern.search(text)
    start = max(0, (first.start() if first else 0) - width // 4)
    piece = text[start:start + width]
    return piece, tuple((m.start(), m.end()) for m in pattern.finditer(piece))


def diff(qrels, run_a, run_b, *, measure: str | None = None, by: str = "tauap", k: int = 10,
         persistence: float = DEFAULT_PERSISTENCE) -> RunDiff:
    """How ``run_b`` differs from ``run_a`` on every topic either ranks (paths, in-memory
    data, or :class:`~irbench.trec.Run`; ``qrels``: a path or Qrels, None without judgments):
    tau_AP, RBO (``persistence``), Jaccard of the top ``k`` and, with a ``measure``, each
    run's value and B - A; sorted by ``by`` (tauap, rbo, jaccard or measure)."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
    if by == "measure" and measure is None:
        raise ValueError("sorting by the measure needs a measure")
    runs = [r if isinstance(r, Run) else read_run(r) for r in (run_a, run_b)]
    if qrels is not None and not isinstance(qrels, Qrels):
        qrels = read_qrels(qrels)
    a, b = prepare_rankings(runs)
    scores = diff_scores(a, b, k, persistence)
    nan = np.full(len(scores.topics), np.nan)
    values = [nan, nan]
    if measure is not None and qrels is not None:
        values = [_per_topic(evaluate(qrels, run, [measure]), measure, scores.topics)
                  for run in runs]
    return run_diff(scores, (a, b), values[0], values[1], measure=measure, qrels=qrels, by=by)


def run_diff(scores: DiffScores, rankings: tuple[Rankings, Rankings], measure_a: np.ndarray,
             measure_b: np.ndarray, *, measure: str | None = None, qrels=None,
             by: str = "tauap") -> RunDiff:
    """The :class:`RunDiff` of ``scores`` (of ``rankings``, A and B) with each run's value of
    ``measure`` per topic (aligned to ``scores.topics``; NaN: none), topics sorted by ``by``."""
    delta = measure_b - measure_a
    rows = [TopicDiff(topic=t, tau_ap=float(scores.tau_ap[i]), rbo=float(scores.rbo[i]),
                      jaccard=float(scores.jaccard[i]), measure_a=float(measure_a[i]),
                      measure_b=float(measure_b[i]), delta=float(delta[i]),
                      size_a=int(scores.size_a[i]), size_b=int(scores.size_b[i]),
                      shared=int(scores.shared[i]))
            for i, t in enumerate(scores.topics)]
    rows.sort(key=_SORT[by])
    return RunDiff(a=scores.a, b=scores.b, by=by, measure=measure, k=scores.k,
                   persistence=scores.persistence, topics=tuple(rows),
                   rankings=(rankings[0], rankings[1]), qrels=qrels)


def _per_topic(evaluation, measure: str, topics: tuple[str, ...]) -> np.ndarray:
    at = {t: i for i, t in enumerate(evaluation.topics)}
    values = evaluation[measure]
    return np.array([float(values[at[t]]) if t in at else np.nan for t in topics])


def _judgments(qrels, topic: str) -> dict[str, int]:
    """{docno: judgment} of one topic (its rows only)."""
    if qrels is None:
        return {}
    rows = np.flatnonzero(np.asarray(qrels.query_id, dtype=bytes) == topic.encode())
    docs = np.asarray(qrels.doc_id, dtype=bytes)[rows]
    return {d.decode("utf-8", "replace"): int(r) for d, r in zip(docs, qrels.relevance[rows])}


_SORT = {
    "tauap": lambda t: (t.tau_ap, t.topic),
    "rbo": lambda t: (t.rbo, t.topic),
    "jaccard": lambda t: (t.jaccard, t.topic),
    "measure": lambda t: (-abs(t.delta) if not np.isnan(t.delta) else np.inf, t.topic),
}
