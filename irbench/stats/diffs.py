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

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..evaluation import evaluate
from ..trec import Qrels, Run, read_qrels, read_run

DEFAULT_PERSISTENCE = 0.9


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Topic ids and docnos (bytes, sorted) that prepared rankings' codes index."""

    topics: np.ndarray
    docs: np.ndarray


@dataclass(frozen=True, eq=False)
class Rankings:
    """One run's rankings: rows by topic code then rank (trec_eval's order); ``offsets``
    (len(vocabulary.topics) + 1) bound each topic's rows; ``doc`` the docno codes; ``key``
    (topic code * number of docnos + doc code) sorted, with ``key_rank`` each key's rank."""

    name: str
    offsets: np.ndarray
    doc: np.ndarray
    key: np.ndarray
    key_rank: np.ndarray
    vocabulary: Vocabulary

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)


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
    topics, topic_code = np.unique(topic_all.astype(bytes), return_inverse=True)
    docs, doc_code = np.unique(doc_all.astype(bytes), return_inverse=True)
    vocabulary = Vocabulary(topics, docs)
    out, start = [], 0
    for run in runs:
        end = start + len(run.score)
        out.append(_rankings(run.name, topic_code[start:end], doc_code[start:end],
                             np.asarray(run.score, dtype=np.float64), vocabulary))
        start = end
    return out


def _rankings(name: str, topic: np.ndarray, doc: np.ndarray, score: np.ndarray,
              vocabulary: Vocabulary) -> Rankings:
    order = np.lexsort((-doc, -score, topic))  # trec_eval: score, then docno, descending
    topic, doc = topic[order], doc[order]
    key = topic.astype(np.int64) * max(len(vocabulary.docs), 1) + doc
    unique_key, first = np.unique(key, return_index=True)
    if len(unique_key) < len(key):  # a docno listed twice: its first (best) row stays
        keep = np.zeros(len(key), bool)
        keep[first] = True
        topic, doc, key = topic[keep], doc[keep], key[keep]
        first = np.unique(key, return_index=True)[1]
    offsets = np.searchsorted(topic, np.arange(len(vocabulary.topics) + 1))
    rank = np.arange(len(key)) - np.repeat(offsets[:-1], np.diff(offsets))
    return Rankings(name=name, offsets=offsets, doc=doc.astype(np.int64), key=key[first],
                    key_rank=rank[first], vocabulary=vocabulary)


def _ranks_in(other: Rankings, run: Rankings) -> np.ndarray:
    """For each of ``run``'s rows, its document's rank in ``other`` (-1: absent)."""
    topic = np.repeat(np.arange(len(run.offsets) - 1), run.sizes)
    key = topic * max(len(run.vocabulary.docs), 1) + run.doc
    at = np.searchsorted(other.key, key)
    at_ok = np.minimum(at, max(len(other.key) - 1, 0))
    found = (at < len(other.key)) & (other.key[at_ok] == key) if len(other.key) else \
        np.zeros(len(key), bool)
    return np.where(found, other.key_rank[at_ok] if len(other.key) else -1, -1)


def diff_scores(a: Rankings, b: Rankings, k: int = 10,
                persistence: float = DEFAULT_PERSISTENCE) -> DiffScores:
    """Every topic's tau_AP, RBO and Jaccard@k between ``a`` and ``b`` (prepared together by
    :func:`prepare_rankings`)."""
    if a.vocabulary is not b.vocabulary:
        raise ValueError("rankings prepared apart: prepare both runs in one prepare_rankings")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not 0 < persistence < 1:
        raise ValueError(f"RBO's persistence must be between 0 and 1, not {persistence}")
    size_a, size_b = a.sizes, b.sizes
    rank_b_of_a, rank_a_of_b = _ranks_in(b, a), _ranks_in(a, b)
    topics_n = len(size_a)
    topic_a = np.repeat(np.arange(topics_n), size_a)
    topic_b = np.repeat(np.arange(topics_n), size_b)
    rank_a = np.arange(len(topic_a)) - np.repeat(a.offsets[:-1], size_a)
    rank_b = np.arange(len(topic_b)) - np.repeat(b.offsets[:-1], size_b)
    shared_b = rank_a_of_b >= 0
    shared = np.bincount(topic_b[shared_b], minlength=topics_n)
    # concordant pairs of shared documents: above in b and above in a
    below = np.zeros(len(topic_b), np.int64)
    below[shared_b] = dominance(topic_b[shared_b], rank_a_of_b[shared_b])
    dominated = below[shared_b]
    # the same counts keyed by a's rows (each shared document once in each run)
    below_a = np.zeros(len(topic_a), np.int64)
    shared_a = rank_b_of_a >= 0
    a_rows = a.offsets[topic_b[shared_b]] + rank_a_of_b[shared_b]
    below_a[a_rows] = dominated
    tau_ab = _tau_direction(topic_a, rank_a, shared_a, topic_b, rank_b, rank_a_of_b, below,
                            size_a, size_b, shared)
    tau_ba = _tau_direction(topic_b, rank_b, shared_b, topic_a, rank_a, rank_b_of_a, below_a,
                            size_b, size_a, shared)
    union = size_a + size_b - shared
    present = union > 0
    tau = (tau_ab + tau_ba) / 2
    one_empty = (size_a == 0) | (size_b == 0)
    tau[one_empty] = -1.0
    depth = np.maximum(rank_a_of_b, rank_b)[shared_b]  # where each shared document joins
    rbo = _rbo(topic_b[shared_b], depth, size_a, size_b, persistence)
    top = shared_b & (rank_b < k) & (rank_a_of_b < k)
    shared_top = np.bincount(topic_b[top], minlength=topics_n)
    top_union = np.minimum(size_a, k) + np.minimum(size_b, k) - shared_top
    jaccard = shared_top / np.maximum(top_union, 1)
    names = tuple(t.decode("utf-8", "replace") for t in a.vocabulary.topics[present])
    return DiffScores(a=a.name, b=b.name, k=k, persistence=persistence, topics=names,
                      tau_ap=tau[present], rbo=rbo[present], jaccard=jaccard[present],
                      size_a=size_a[present], size_b=size_b[present], shared=shared[present],
                      shared_top=shared_top[present])


def _tau_direction(topic_x, rank_x, shared_x, topic_y, rank_y, x_rank_of_y, concordant,
                   size_x, size_y, shared) -> np.ndarray:
    """tau_AP(x, y) of every topic: ranked by y (y's documents by rank, then those only x
    ranks, in reverse of x's order), discordant where x orders strictly the other way."""
    topics_n = len(size_x)
    # documents of y that x ranks too: those above (rank_y of them) less the concordant
    in_x = x_rank_of_y >= 0
    above = rank_y[in_x]
    ratio = np.zeros(len(above))
    np.divide(above - concordant[in_x], above, out=ratio, where=above > 0)
    total = np.bincount(topic_y[in_x], ratio, minlength=topics_n).astype(np.float64)
    # documents only x ranks: below all of y's; above each, those only x ranks worse
    only = ~shared_x
    starts = np.repeat(np.r_[0, np.cumsum(size_x)[:-1]], size_x)
    shared_seen = np.cumsum(shared_x) - np.cumsum(shared_x)[starts] + shared_x[starts]
    only_seen = np.cumsum(only) - np.cumsum(only)[starts] + only[starts]
    shared_after = (shared[topic_x] - shared_seen)[only]
    only_after = (size_x - shared)[topic_x][only] - only_seen[only]
    position = size_y[topic_x][only] + only_after  # 0-based place in y's order
    discordant = (size_y - shared)[topic_x][only] + shared_after + only_after
    ratio = np.zeros(len(position))
    np.divide(discordant, position, out=ratio, where=position > 0)
    total = total + np.bincount(topic_x[only], ratio, minlength=topics_n)
    n = size_x + size_y - shared
    tau = np.ones(topics_n)
    np.subtract(1.0, 2.0 * total / np.maximum(n - 1, 1), out=tau, where=n > 1)
    return tau


def dominance(group: np.ndarray, value: np.ndarray) -> np.ndarray:
    """For each element (groups contiguous, elements in sequence order within a group): how
    many earlier elements of its group have a smaller value (values distinct in a group,
    non-negative). One stable partition per bit of the values, no loop over elements."""
    n = len(value)
    count = np.zeros(n, np.int64)
    if n == 0:
        return count
    bits = max(int(value.max()).bit_length(), 1)
    order = np.arange(n)
    index = np.arange(n)
    for k in range(bits - 1, -1, -1):
        v = value[order]
        bit = (v >> k) & 1
        key = group[order].astype(np.int64) * (1 << (bits - k)) + (v >> (k + 1))
        start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        gid = np.cumsum(np.r_[True, key[1:] != key[:-1]]) - 1
        zero = 1 - bit
        cz = np.cumsum(zero)
        zeros_before = cz - zero - (cz[start] - zero[start])[gid]
        ones = bit == 1
        count[order[ones]] += zeros_before[ones]
        zeros_in = np.add.reduceat(zero, start)[gid]
        first = start[gid]
        place = np.where(ones, first + zeros_in + (index - first - zeros_before),
                         first + zeros_before)
        moved = np.empty_like(order)
        moved[place] = order
        order = moved
    return count


def _rbo(topic: np.ndarray, depth: np.ndarray, size_a: np.ndarray, size_b: np.ndarray,
         p: float) -> np.ndarray:
    """Extrapolated RBO (Webber, Moffat and Zobel 2010, eq. 32, lists of any lengths) of
    every topic: ``depth`` (0-based) is where each shared document joins both prefixes."""
    topics_n = len(size_a)
    short, long = np.minimum(size_a, size_b), np.maximum(size_a, size_b)
    starts = np.r_[0, np.cumsum(long)[:-1]]
    joined = np.bincount(starts[topic] + depth, minlength=int(long.sum()))
    row_topic = np.repeat(np.arange(topics_n), long)
    cum = np.cumsum(joined)
    overlap = cum - np.r_[0, cum][starts][row_topic]  # X_d, d = 1..long of each topic
    d = (np.arange(len(row_topic)) - starts[row_topic] + 1).astype(np.float64)
    weight = p ** d
    s = short[row_topic]
    x_s = np.zeros(topics_n)
    has = short > 0
    x_s[has] = overlap[(starts + short - 1)[has]]
    x_l = np.zeros(topics_n)
    x_l[long > 0] = overlap[(starts + long - 1)[long > 0]]
    term = overlap / d
    tail = d > s
    term[tail] += (x_s[row_topic] * (d - s) / np.maximum(s * d, 1))[tail]
    total = np.bincount(row_topic, term * weight, minlength=topics_n).astype(np.float64)
    rbo = np.zeros(topics_n)
    ok = has
    rbo[ok] = ((1 - p) / p * total[ok]
               + ((x_l - x_s)[ok] / long[ok] + x_s[ok] / short[ok]) * p ** long[ok])
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
