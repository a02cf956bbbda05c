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
from functools import cached_property
from typing import Any

import numpy as np

from ..evaluation import evaluate
from ..trec import Qrels, Run, read_qrels, read_run

DEFAULT_PERSISTENCE = 0.9


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Topic ids and docnos (bytes, sorted) that prepared rankings' codes index, and how
    many distinct (topic, docno) pairs the runs rank (``pairs``)."""

    topics: np.ndarray
    docs: np.ndarray
    pairs: int


@dataclass(frozen=True, eq=False)
class Rankings:
    """One run's rankings: rows by topic code then rank (trec_eval's order); ``offsets``
    (len(vocabulary.topics) + 1) bound each topic's rows; ``doc`` the docno codes and
    ``pair`` the (topic, docno) codes of the rows."""

    name: str
    offsets: np.ndarray
    doc: np.ndarray
    pair: np.ndarray
    vocabulary: Vocabulary

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
        small = len(self.doc) == 0 or int(self.sizes.max()) < np.iinfo(np.int16).max
        out = np.full(self.vocabulary.pairs, -1, np.int16 if small else np.int32)
        out[self.pair] = self.row_rank
        return out


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


def prepare_rankings(runs: Sequence[Run]) -> list[Rankings]:
    """The runs' rankings in trec_eval's order over one shared vocabulary. A docno a run
    lists twice for a topic keeps its better rank."""
    empty = [np.empty(0, bytes)]
    topic_all = np.concatenate([np.asarray(r.query_id, dtype=bytes) for r in runs] or empty)
    doc_all = np.concatenate([np.asarray(r.doc_id, dtype=bytes) for r in runs] or empty)
    topics, topic_code = np.unique(topic_all, return_inverse=True)
    docs, doc_code = np.unique(doc_all, return_inverse=True)
    pairs, pair_code = np.unique(topic_code.astype(np.int64) * max(len(docs), 1) + doc_code,
                                 return_inverse=True)
    vocabulary = Vocabulary(topics, docs, len(pairs))
    out, start = [], 0
    for run in runs:
        end = start + len(run.score)
        rows = slice(start, end)
        out.append(_rankings(run.name, topic_code[rows], doc_code[rows], pair_code[rows],
                             np.asarray(run.score, dtype=np.float64), vocabulary))
        start = end
    return out


def _rankings(name: str, topic: np.ndarray, doc: np.ndarray, pair: np.ndarray,
              score: np.ndarray, vocabulary: Vocabulary) -> Rankings:
    order = np.lexsort((-doc, -score, topic))  # trec_eval: score, then docno, descending
    topic, doc, pair = topic[order], doc[order], pair[order]
    seen = np.zeros(vocabulary.pairs, bool)
    seen[pair[::-1]] = True  # cheap test first: a docno listed twice is rare
    if int(seen.sum()) < len(pair):  # its first (best) row stays
        first = np.sort(np.unique(pair, return_index=True)[1])
        topic, doc, pair = topic[first], doc[first], pair[first]
    offsets = np.searchsorted(topic, np.arange(len(vocabulary.topics) + 1))
    return Rankings(name=name, offsets=offsets, doc=doc.astype(np.int64),
                    pair=pair.astype(np.int64), vocabulary=vocabulary)


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
                   persistence: float = DEFAULT_PERSISTENCE, batch: int = 32):
    """:func:`diff_scores` of every pair (i < j) of ``rankings``, in that order; each run
    against up to ``batch`` others at once."""
    for i, a in enumerate(rankings):
        others = rankings[i + 1:]
        for at in range(0, len(others), batch):
            yield from diff_against(a, others[at:at + batch], k, persistence)


def diff_against(a: Rankings, bs: Sequence[Rankings], k: int = 10,
                 persistence: float = DEFAULT_PERSISTENCE) -> list[DiffScores]:
    """:func:`diff_scores` of ``a`` against each of ``bs``, all in one pass: a group is
    (run of ``bs``, topic). Only the documents both rank are visited: what the others add to
    each score is a closed form of the group's sizes (harmonic numbers, RBO's sums)."""
    if any(a.vocabulary is not b.vocabulary for b in bs):
        raise ValueError("rankings prepared apart: prepare both runs in one prepare_rankings")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not 0 < persistence < 1:
        raise ValueError(f"RBO's persistence must be between 0 and 1, not {persistence}")
    if not bs:
        return []
    topics_n, runs_n, rows_a = len(a.offsets) - 1, len(bs), len(a.pair)
    which = np.repeat(np.arange(runs_n), [len(b.pair) for b in bs])
    rank_a_of_b = a.rank_of[np.concatenate([b.pair for b in bs])]
    rows = np.flatnonzero(rank_a_of_b >= 0)  # b's rows a ranks too, by topic and b's rank
    run = which[rows]
    topic = np.concatenate([b.row_topic for b in bs])[rows]
    group = run * topics_n + topic
    rb = np.concatenate([b.row_rank for b in bs])[rows]
    ra = rank_a_of_b[rows].astype(np.int64)
    size_a = np.tile(a.sizes, runs_n)
    size_b = np.concatenate([b.sizes for b in bs])
    shared = np.bincount(group, minlength=runs_n * topics_n)
    first = np.r_[0, np.cumsum(shared)[:-1]]
    u = np.arange(len(rows)) - first[group]  # rank among the shared, in b's order
    start = run * rows_a + a.offsets[topic]
    mark = np.zeros(runs_n * rows_a + 1, bool)  # the shared documents in a's order
    mark[start + ra + 1] = True
    seen = np.cumsum(mark, dtype=np.int32)
    v = seen[start + ra + 1] - seen[start] - 1  # rank among the shared, in a's order
    concordant = dominance(group, v, u)  # above in both runs
    w_ab, c_ab = _tau_sums(group, rb, ra, v, concordant, size_a, size_b, shared)
    w_ba, c_ba = _tau_sums(group, ra, rb, u, concordant, size_b, size_a, shared)
    total = np.bincount(group, w_ab + w_ba, minlength=len(shared)) + c_ab + c_ba
    n = size_a + size_b - shared  # the mean of both directions: 1 - (S_ab + S_ba) / (n - 1)
    tau = np.ones(len(shared))
    np.subtract(1.0, total / np.maximum(n - 1, 1), out=tau, where=n > 1)
    tau[(size_a == 0) | (size_b == 0)] = -1.0
    rbo = _rbo(group, np.maximum(ra, rb) + 1, size_a, size_b, shared, persistence)
    shared_top = np.bincount(group[(ra < k) & (rb < k)], minlength=len(size_a))
    top_union = np.minimum(size_a, k) + np.minimum(size_b, k) - shared_top
    jaccard = shared_top / np.maximum(top_union, 1)
    names = np.array([t.decode("utf-8", "replace") for t in a.vocabulary.topics], object)
    out = []
    for i, b in enumerate(bs):
        part = slice(i * topics_n, (i + 1) * topics_n)
        present = np.flatnonzero(size_a[part] + size_b[part] - shared[part] > 0)
        at = present + i * topics_n
        out.append(DiffScores(
            a=a.name, b=b.name, k=k, persistence=persistence, topics=tuple(names[present]),
            tau_ap=tau[at], rbo=rbo[at], jaccard=jaccard[at], size_a=size_a[at],
            size_b=size_b[at], shared=shared[at], shared_top=shared_top[at]))
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
    weight = np.zeros(len(rank_y))
    np.divide(rank_y - concordant, rank_y, out=weight, where=rank_y > 0)
    only = size_x - shared
    h = _harmonic(int(max((size_x + size_y).max(initial=0), 1)))  # h[i + 1] = H(i)
    top = h[size_y + only]  # H(size_y + q - 1)
    below = only[group] - (rank_x - place_x)  # only-x documents under each shared one
    weight += top[group] - h[size_y[group] + below]
    return weight, only - shared * (top - h[size_y])


BITSET_WORDS = 1 << 22  # 32 MB of uint64 words at most per block of topics


def dominance(group: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For each element: how many elements of its group are before it in both orders,
    ``first`` and ``second`` being each element's rank (0-based, distinct) in two orders
    within its group. Elements are given grouped by ``group`` in ``first``'s order. Bitsets:
    row r of a group holds the elements whose ``first`` rank is below r (an OR accumulated
    down the rows), so the count is a popcount of the row below its ``second`` rank; topics
    go in blocks (the largest first) so that no block exceeds :data:`BITSET_WORDS`."""
    n = len(first)
    count = np.zeros(n, np.int64)
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
        close = int(np.searchsorted(-sizes[todo], -(largest * 7 // 8), side="right")) - at
        block = todo[at:at + max(1, min(take, close))]  # sizes within 1/8: little padding
        take = len(block)
        at += take
        need = len(block) * (largest + 1) * words
        if len(buffer) < need:
            buffer = np.empty(need, np.uint64)
        bits = buffer[:need].reshape(len(block), largest + 1, words)
        bits.fill(0)
        _count_block(block, sizes, starts, first, second, bits, count)
    return count


def _count_block(block, sizes, starts, first, second, bits, count) -> None:
    rows_n, words = bits.shape[1] - 1, bits.shape[2]
    lengths = sizes[block]
    slot = np.repeat(np.arange(len(block)), lengths)
    element = np.repeat(starts[block] - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + \
        np.arange(int(lengths.sum()))
    r, c = first[element], second[element]
    flat = bits.reshape(-1)
    word, one = c >> 6, np.left_shift(np.uint64(1), (c & 63).astype(np.uint64))
    at_row = slot * (rows_n + 1) + r  # the element's row; it is set in the next one
    flat[(at_row + 1) * words + word] = one
    np.bitwise_or.accumulate(bits, axis=1, out=bits)  # row r: the elements above rank r
    base = at_row * words
    total = np.bitwise_count(flat[base + word] & (one - np.uint64(1))).astype(np.int64)
    for w in range(words - 1):  # the whole words before each element's bit (loop: <= 16)
        later = np.flatnonzero(word > w)
        total[later] += np.bitwise_count(flat[base[later] + w])
    count[element] = total


def _rbo(topic: np.ndarray, depth: np.ndarray, size_a: np.ndarray, size_b: np.ndarray,
         shared: np.ndarray, p: float) -> np.ndarray:
    """Extrapolated RBO (Webber, Moffat and Zobel 2010, eq. 32, lists of any lengths) of
    every topic from the shared documents: ``depth`` (1-based) is where each joins both
    prefixes, so that X_d = how many joined by d and sum_d X_d / d p^d = sum over them of
    G(l) - G(depth - 1), G(n) = sum_{d<=n} p^d / d."""
    topics_n = len(size_a)
    short, long = np.minimum(size_a, size_b), np.maximum(size_a, size_b)
    g, pw = _rbo_tables(int(max(long.max(initial=0), 1)), p)
    first = np.bincount(topic, g[long[topic]] - g[depth - 1], minlength=topics_n)
    x_s = np.bincount(topic[depth <= short[topic]], minlength=topics_n)
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
    delta = values[1] - values[0]
    rows = [TopicDiff(topic=t, tau_ap=float(scores.tau_ap[i]), rbo=float(scores.rbo[i]),
                      jaccard=float(scores.jaccard[i]), measure_a=float(values[0][i]),
                      measure_b=float(values[1][i]), delta=float(delta[i]),
                      size_a=int(scores.size_a[i]), size_b=int(scores.size_b[i]),
                      shared=int(scores.shared[i]))
            for i, t in enumerate(scores.topics)]
    rows.sort(key=_SORT[by])
    return RunDiff(a=runs[0].name, b=runs[1].name, by=by, measure=measure, k=k,
                   persistence=persistence, topics=tuple(rows), rankings=(a, b), qrels=qrels)


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
