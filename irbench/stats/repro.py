"""Reproducibility measures (Breuer et al., SIGIR 2020), as repro_eval 0.5.0 computes them.

An original experiment compares a baseline and an advanced run; a reproduction remakes both,
on the same topics (*reproduced*) or on other topics (*replicated*). Four levels say how close
the remake came:

- rankings, topic by topic: Kendall's tau Union (:func:`ktu`) and rank-biased overlap
  (:func:`rbo`, persistence ``p``), each at a cutoff ``depth``, of one original run and its
  reproduction (prepared once by :func:`rank_pair`);
- per-topic effectiveness: RMSE and normalised RMSE of one measure's per-topic scores
  (:func:`closeness`);
- the overall effect: effect ratio (ER) and Delta relative improvement (Delta RI) of the
  (baseline, advanced) pair against the reproduced pair (:func:`effect`);
- the t-test of original against reproduced scores (:func:`t_test`): paired on the same
  topics, unpaired (Student's, equal variances) on other topics.

Rankings are trec_eval's (:func:`irbench.ranked.rank_order`: score descending, ties by docno
descending), the order repro_eval's ``break_ties`` gives a run file that lists each topic by
descending score (repro_eval keeps the file's order otherwise and sorts only adjacent ties).
A docno retrieved twice for a topic counts at its first rank only (repro_eval's dictionaries
keep its first position). Per-topic scores are irbench's own (``irbench.evaluate(...)``).

Where repro_eval departs from the papers' definitions its behaviour is the default, named
``"repro_eval"`` in the variant registries (:data:`KTU_VARIANTS`, :data:`RBO_VARIANTS`); see
each variant's docstring. The rankings' measures are whole-column kernels: no Python loop over
documents or topics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import special as _special

from ..arrays import block_order, doc_hash, doc_words, lookup_topics
from ..errors import StatisticsError
from ..measures import Measure, parse_measure
from ..measures.compute import Evaluation
from ..registry import Registry
from ..trec import Run, display

DEFAULT_DEPTH = 1000  # repro_eval's RUN_LENGTH and RBO_DEPTH
DEFAULT_P = 0.95  # repro_eval's RBO_P


# rankings -------------------------------------------------------------------------------

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


def _block_topics(query_id: np.ndarray) -> np.ndarray:
    if not len(query_id):
        return query_id[:0]
    starts = np.concatenate(([0], np.flatnonzero(query_id[1:] != query_id[:-1]) + 1))
    return np.unique(query_id[starts])


def _same_hash(hashes: np.ndarray) -> np.ndarray:
    """For each row, a row with the same hash: open addressing in a table at most half full,
    whole-array probes (one round settles most rows; a row moves on only past another hash)."""
    size = 1 << max(4, (2 * len(hashes)).bit_length())
    table = np.full(size, -1, dtype=np.int64)
    rep = np.empty(len(hashes), dtype=np.int64)
    pending = np.arange(len(hashes))
    slot = (hashes & np.uint64(size - 1)).astype(np.int64)  # doc_hash's bits are mixed
    while len(pending):
        free = table[slot] < 0
        table[slot[free]] = pending[free]  # one row of those after a free slot stays
        held = table[slot]
        same = hashes[held] == hashes[pending]
        rep[pending[same]] = held[same]
        pending, slot = pending[~same], (slot[~same] + 1) & (size - 1)
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
    order = np.argsort(doc_id[first], kind="stable")
    code = np.empty(len(rep), dtype=np.int64)
    code[first[order]] = np.arange(len(first))
    return code[rep], len(first)


def _rank_rows(topic: np.ndarray, score: np.ndarray, code: np.ndarray) -> np.ndarray | None:
    """:func:`irbench.ranked.rank_order` with the docnos as byte-ordered codes: tied rows are
    sorted by one integer key, (tie group, code descending), instead of by their bytes."""
    order = block_order(topic)
    same_topic = topic[1:] == topic[:-1]
    if order is False or np.any(same_topic & (score[1:] > score[:-1])):
        order = np.lexsort((-score, topic))
        t, s = topic[order], score[order]
        tie = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    else:
        tie = same_topic & (score[1:] == score[:-1])
        if not tie.any():
            return order
        if order is None:
            order = np.arange(len(topic))
        else:  # blocks moved whole: a tie stays inside its block
            tie = np.append(tie, False)[order[:-1]]
    if tie.any():
        in_run = np.zeros(len(tie) + 1, dtype=bool)
        in_run[1:] |= tie
        in_run[:-1] |= tie
        pos = np.flatnonzero(in_run)
        group = np.cumsum(np.concatenate(([True], ~tie)))[pos]
        rows = order[pos]  # stable: timsort finds the groups' runs
        order[pos] = rows[np.argsort(group * (int(code.max()) + 1) - code[rows], kind="stable")]
    return order


def _ranked(run: Run, topics: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic index, docno code) of ``run``'s rows in trec_eval's order."""
    topic = lookup_topics(run.query_id, topics).astype(np.int64)
    order = _rank_rows(topic, run.score, code)
    return (topic, code) if order is None else (topic[order], code[order])


def _keys(sparse: np.ndarray, size: int, split: int) -> tuple[np.ndarray, int, bool]:
    """Keys below ``size`` renumbered 0, 1, ... in their order (a bitmap when ``size`` is
    small next to the keys, else a sort), their number, and whether either side (the keys
    before ``split``, those after) holds a key twice."""
    if size > 8 * len(sparse) + 4096:
        distinct, dense = np.unique(sparse, return_inverse=True)
        return dense.ravel(), len(distinct), True
    a = np.bincount(sparse[:split], minlength=size)
    b = np.bincount(sparse[split:], minlength=size)
    number = np.cumsum((a + b) > 0) - 1
    twice = bool(len(sparse)) and (a.max() > 1 or b.max() > 1)
    return number[sparse], int(number[-1]) + 1 if size else 0, twice


def rank_pair(original: Run, reproduced: Run) -> RankedPair:
    """Rank both runs and give their docnos shared keys (see :class:`RankedRun`): each
    docno coded once over both runs, keys (topic, docno code descending) made dense."""
    topics = np.union1d(_block_topics(original.query_id), _block_topics(reproduced.query_id))
    code, width = _doc_codes(np.concatenate((original.doc_id, reproduced.doc_id)))
    width = max(width, 1)
    split = len(original.doc_id)
    t_o, c_o = _ranked(original, topics, code[:split])
    t_r, c_r = _ranked(reproduced, topics, code[split:])
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


@dataclass(frozen=True, kw_only=True)
class TopicAgreement:
    """KTU or RBO of an original ranking and its reproduction, per topic.

    measure: ``KTU`` or ``RBO``; variant: its registry name; depth: the cutoff; p: RBO's
    persistence (None for KTU). topics: every topic of either run; values: one per topic (NaN
    where undefined); in_both: the topic has documents in both runs. mean: the mean over the
    topics in both runs, which is repro_eval's mean over the reproduced run's topics whenever
    repro_eval can compute one (it fails on a topic the original lacks).
    """

    measure: str
    variant: str
    depth: int
    p: float | None
    topics: tuple[str, ...]
    values: np.ndarray
    in_both: np.ndarray

    @property
    def mean(self) -> float:
        kept = self.values[self.in_both]
        kept = kept[~np.isnan(kept)]
        return float(np.mean(kept)) if len(kept) else float("nan")


@dataclass(frozen=True)
class KtuVariant:
    """How KTU is computed: ``compute(pair, depth)`` gives one value per topic."""

    name: str
    compute: Callable[[RankedPair, int], np.ndarray]
    description: str


@dataclass(frozen=True)
class RboVariant:
    """How RBO weighs the overlap: ``combine(overlap)`` of an :class:`Overlap` gives one
    value per topic."""

    name: str
    combine: Callable[[Overlap], np.ndarray]
    description: str


KTU_VARIANTS: Registry[KtuVariant] = Registry("KTU variant")
RBO_VARIANTS: Registry[RboVariant] = Registry("RBO variant")


def _variant(registry: Registry, name: str):
    if name not in registry:
        close = registry.closest(name)
        hint = f" (did you mean {close!r}?)" if close else ""
        raise StatisticsError(f"unknown {registry.kind} {name!r}{hint}; "
                              f"known: {', '.join(registry)}")
    return registry[name]


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise StatisticsError(f"depth must be a whole number >= 1, not {depth!r}")


def _discordant(order: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per topic, the pairs of positions i < j with order[i] > order[j], where ``order``
    holds topic after topic (n[t] positions each) the ranks 0 .. n[t] - 1.

    One pass per bit of the ranks, most significant first, over the positions arranged by
    (topic, the rank's higher bits), the original order kept within: a pair is counted at the
    highest bit where its ranks differ, as a zero preceded by a one in its group. Ranks are
    dense, so a group's first position is its topic's start plus its first rank, and each pass
    partitions every group stably (zeros, then ones) by cumulative sums: O(n log n) in whole
    columns."""
    total = int(n.sum())
    if not total:
        return np.zeros(len(n))
    kind = np.int32 if total < 1 << 31 else np.int64  # half the memory traffic
    n = n.astype(kind)
    tpos = np.repeat(np.arange(len(n), dtype=kind), n)
    tstart = np.repeat(np.concatenate(([0], np.cumsum(n)[:-1])).astype(kind), n)
    tlen = np.repeat(n, n)
    pos = np.arange(total, dtype=kind)
    found = np.zeros(total, dtype=np.int64)
    vals = order.astype(kind)
    for b in range(int(order.max()).bit_length() - 1, -1, -1):
        bit = (vals >> b) & 1
        first_rank = vals - (vals & ((2 << b) - 1))  # the group's first rank
        start = tstart + first_rank
        ones = np.cumsum(bit, dtype=kind) - bit
        ones_in = ones - ones[start]  # ones before this position in its group
        zero = bit == 0
        found += np.where(zero, ones_in, 0)
        zeros = np.clip(tlen - first_rank, 0, 1 << b)  # the group's zeros
        new_pos = np.where(zero, pos - ones_in, start + zeros + ones_in)
        moved = np.empty_like(vals)
        moved[new_pos] = vals
        vals = moved
    return np.bincount(tpos, weights=found, minlength=len(n))


def _ktu_repro_eval(pair: RankedPair, depth: int) -> np.ndarray:
    """repro_eval's KTU: each ranking cut at ``depth``; the union of the two cuts sorted by
    docno; the i-th document of each ranking replaced by its position in that sorted union;
    Kendall's tau (tau-b; no ties can occur) of the two position lists, pair i with pair i."""
    o, r = pair.original, pair.reproduced
    n = np.minimum(np.minimum(o.length, r.length), depth)
    start = np.concatenate(([0], np.cumsum(n)))  # where each topic's paired ranks start
    rows = o.by_key[o.rank[o.by_key] < n[o.topic[o.by_key]]]  # the pairs by x, by topic
    paired = start[o.topic[rows]] + o.rank[rows]
    rows_r = r.by_key[r.rank[r.by_key] < n[r.topic[r.by_key]]]
    t_r = r.topic[rows_r]
    rank_y = np.empty(int(start[-1]), dtype=np.int64)  # each pair's rank by y in its topic
    rank_y[start[t_r] + r.rank[rows_r]] = np.arange(len(rows_r)) - start[t_r]
    discordant = _discordant(rank_y[paired], n)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = 1.0 - 4.0 * discordant / (n * (n - 1.0))
    return np.where(n >= 2, tau, np.nan)


KTU_VARIANTS.add(KtuVariant(
    "repro_eval", _ktu_repro_eval,
    "repro_eval 0.5.0: tau of the two rankings' positions in their docno-sorted union, "
    "rank by rank; the paper pairs each document's two ranks instead"))


def ktu(pair: RankedPair, depth: int = DEFAULT_DEPTH, *,
        variant: str = "repro_eval") -> TopicAgreement:
    """Kendall's tau Union of the original ranking and its reproduction, per topic.

    Breuer et al. define KTU as Kendall's tau over the union of the two rankings' documents.
    repro_eval 0.5.0 (the ``"repro_eval"`` variant, the only one registered) cuts both rankings
    at ``depth``, sorts the union of their documents by docno, replaces each ranking's i-th
    document by its position in that list and takes Kendall's tau of the two lists, pairing
    rank i with rank i: two rankings of the same documents in the same order give 1, and the
    value depends on how the documents' ids sort. Score ties are broken by docno descending
    (trec_eval's order), as repro_eval's ``break_ties`` does. Where repro_eval fails, this
    gives: rankings of unequal lengths (scipy raises) -> the common first ranks; a topic with
    fewer than 2 such ranks or missing from either run -> NaN.
    """
    _check_depth(depth)
    chosen = _variant(KTU_VARIANTS, variant)
    return TopicAgreement(measure="KTU", variant=chosen.name, depth=int(depth), p=None,
                          topics=pair.topics, values=chosen.compute(pair, int(depth)),
                          in_both=pair.in_both)


_NEGLIGIBLE = 1e-18  # a weight p^(d-1) below this adds nothing a float64 sum keeps


@dataclass(frozen=True, kw_only=True)
class Overlap:
    """Per topic, what every RBO variant needs, with A_d = |top-d(original) &
    top-d(reproduced)| / d: ``weighted`` = sum of p^(d-1) A_d for d = 1 .. depth, and
    ``last`` = A_depth."""

    weighted: np.ndarray
    last: np.ndarray
    depth: int
    p: float


def _overlap(pair: RankedPair, depth: int, p: float) -> Overlap:
    """The :class:`Overlap` of ``pair``, from a T x w matrix of A_d, w the depth or the
    longest ranking if shorter: below it the shared count stays, A_d = X_w / d, and its
    weights are summed until they vanish (no matrix as wide as a huge depth)."""
    o, r = pair.original, pair.reproduced
    num_topics = len(pair.topics)
    longest = int(max(o.length.max(initial=0), r.length.max(initial=0), 1))
    width = min(depth, longest)
    top = o.rank < width
    both = np.maximum(o.rank[top], r.rank_of_key[o.keys[top]])  # first d - 1 in both
    shared = both < width
    cells = np.bincount(o.topic[top][shared] * width + both[shared],
                        minlength=num_topics * width)
    counts = np.cumsum(cells.reshape(num_topics, width), axis=1)
    d = np.arange(1, width + 1)
    weighted = (counts / d) @ p ** (d - 1.0)
    if depth > width:
        steps = int(np.ceil(np.log(_NEGLIGIBLE) / np.log(p)))
        tail = np.arange(width + 1, min(depth, width + steps) + 1)
        weighted = weighted + counts[:, -1] * float(np.sum(p ** (tail - 1.0) / tail))
    return Overlap(weighted=weighted, last=counts[:, -1] / depth, depth=depth, p=p)


def _rbo_clarke(overlap: Overlap) -> np.ndarray:
    p = overlap.p
    return overlap.weighted * (1 - p) / (1 - p ** overlap.depth)  # / sum of p^(d-1)


def _rbo_truncated(overlap: Overlap) -> np.ndarray:
    return (1 - overlap.p) * overlap.weighted


def _rbo_extrapolated(overlap: Overlap) -> np.ndarray:
    return _rbo_truncated(overlap) + overlap.last * overlap.p ** overlap.depth


RBO_VARIANTS.add(RboVariant(
    "repro_eval", _rbo_clarke,
    "repro_eval 0.5.0 (Clarke et al.'s code): sum of p^(d-1) A_d over d <= depth, divided by "
    "sum of p^(d-1): 1 for equal rankings at least depth long"))
RBO_VARIANTS.add(RboVariant(
    "truncated", _rbo_truncated,
    "Webber et al. 2010, RBO@k: (1 - p) sum of p^(d-1) A_d over d <= depth (the agreement "
    "seen so far; below 1 even for equal rankings)"))
RBO_VARIANTS.add(RboVariant(
    "extrapolated", _rbo_extrapolated,
    "Webber et al. 2010, RBO_ext for rankings at least depth long: RBO@k + A_depth p^depth"))


def rbo(pair: RankedPair, depth: int = DEFAULT_DEPTH, p: float = DEFAULT_P, *,
        variant: str = "repro_eval") -> TopicAgreement:
    """Rank-biased overlap of the original ranking and its reproduction, per topic.

    A_d = |top-d(original) & top-d(reproduced)| / d. Breuer et al. take Webber et al.'s RBO;
    repro_eval 0.5.0 (the default variant) uses Clarke et al.'s normalised form, the weighted
    mean of A_d with weights p^(d-1) for d = 1 .. depth (see :data:`RBO_VARIANTS` for Webber's
    ``truncated`` and ``extrapolated``). A ranking shorter than ``depth`` keeps adding its
    last A_d's numerator over a growing d, as repro_eval's loop does. A topic missing from
    either run has RBO 0 (no overlap) and is left out of the mean.
    """
    _check_depth(depth)
    if not 0 < p < 1:
        raise StatisticsError(f"RBO's persistence p must be between 0 and 1, not {p!r}")
    chosen = _variant(RBO_VARIANTS, variant)
    values = chosen.combine(_overlap(pair, int(depth), float(p)))
    return TopicAgreement(measure="RBO", variant=chosen.name, depth=int(depth), p=float(p),
                          topics=pair.topics, values=values, in_both=pair.in_both)


# per-topic scores -----------------------------------------------------------------------

def _scores(ev: Evaluation, measure: Measure) -> np.ndarray:
    try:
        values = ev[measure]
    except KeyError:
        raise StatisticsError(f"{ev.run_name} has no scores for {measure}") from None
    return np.asarray(values, dtype=np.float64)


def _same_topics(a: Evaluation, b: Evaluation) -> None:
    if tuple(a.topics) != tuple(b.topics):
        only = sorted(set(a.topics) ^ set(b.topics))
        where = f" (in one only: {', '.join(only[:5])})" if only else " (in another order)"
        raise StatisticsError(f"{a.run_name} and {b.run_name} are not scored on the same "
                              f"topics{where}")


@dataclass(frozen=True, kw_only=True)
class Closeness:
    """How close a reproduction's per-topic scores are to the original's, for one measure.

    rmse: sqrt(mean((original - reproduced)^2)) over the topics. nrmse: rmse divided by
    the largest RMSE the original allows for a measure in [0, 1], sqrt(mean(max(x, 1 - x)^2))
    of the original scores x (repro_eval's normalisation). differences: original - reproduced
    per topic (aligned to topics).
    """

    measure: str
    topics: tuple[str, ...]
    rmse: float
    nrmse: float
    differences: np.ndarray


def closeness(original: Evaluation, reproduced: Evaluation,
              measure: Measure | str) -> Closeness:
    """RMSE and normalised RMSE of ``measure``'s per-topic scores (same topics required)."""
    m = parse_measure(measure)
    _same_topics(original, reproduced)
    x, y = _scores(original, m), _scores(reproduced, m)
    if not len(x):
        raise StatisticsError("RMSE needs at least one topic")
    diff = x - y
    rmse = float(np.sqrt(np.mean(diff ** 2)))
    worst = float(np.sqrt(np.mean(np.maximum(x, 1 - x) ** 2)))
    return Closeness(measure=str(m), topics=tuple(original.topics), rmse=rmse,
                     nrmse=rmse / worst, differences=diff)


@dataclass(frozen=True, kw_only=True)
class Effect:
    """The overall effect of the advanced run over the baseline, original and reproduced.

    improvement_*: the mean over topics of advanced - baseline; relative_*: (mean advanced -
    mean baseline) / mean baseline. effect_ratio: improvement_reproduced /
    improvement_original (1: the same effect; 0: none; negative: reversed). delta_ri:
    relative_original - relative_reproduced (0: the same relative improvement). A zero
    denominator gives inf or NaN (IEEE division), as repro_eval does.
    """

    measure: str
    improvement_original: float
    improvement_reproduced: float
    relative_original: float
    relative_reproduced: float
    effect_ratio: float
    delta_ri: float


def _improvement(baseline: Evaluation, advanced: Evaluation,
                 m: Measure) -> tuple[float, float]:
    _same_topics(baseline, advanced)
    b, a = _scores(baseline, m), _scores(advanced, m)
    if not len(a):
        raise StatisticsError("an effect needs at least one topic")
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_b = np.mean(b)
        return float(np.mean(a - b)), float((np.mean(a) - mean_b) / mean_b)


def effect(baseline: Evaluation, advanced: Evaluation, reproduced_baseline: Evaluation,
           reproduced_advanced: Evaluation, measure: Measure | str) -> Effect:
    """Effect ratio and Delta RI; each pair on its own topics (the same or, replicated,
    other topics)."""
    m = parse_measure(measure)
    mi_o, ri_o = _improvement(baseline, advanced, m)
    mi_r, ri_r = _improvement(reproduced_baseline, reproduced_advanced, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.float64(mi_r) / np.float64(mi_o))
    return Effect(measure=str(m), improvement_original=mi_o, improvement_reproduced=mi_r,
                  relative_original=ri_o, relative_reproduced=ri_r, effect_ratio=ratio,
                  delta_ri=ri_o - ri_r)


@dataclass(frozen=True, kw_only=True)
class ReproTest:
    """Two-sided t-test of the original run's per-topic scores against its reproduction's.

    paired: ``ttest_rel`` on the same topics (reproduced) or Student's ``ttest_ind`` (equal
    variances) on other topics (replicated). A small p-value says the reproduction's scores
    differ from the original's. NaN with identical score lists is reported as 1, as repro_eval
    does.
    """

    measure: str
    paired: bool
    statistic: float
    p_value: float
    n_original: int
    n_reproduced: int


def _paired_t(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """scipy's ``ttest_rel`` statistic: mean difference / its standard error."""
    d = x - y
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.mean(d) / np.sqrt(np.var(d, ddof=1) / len(d))), len(d) - 1


def _student_t(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """scipy's ``ttest_ind`` statistic (equal variances): pooled variance."""
    nx, ny = len(x), len(y)
    df = nx + ny - 2
    pooled = ((nx - 1) * np.var(x, ddof=1) + (ny - 1) * np.var(y, ddof=1)) / df
    with np.errstate(divide="ignore", invalid="ignore"):
        return float((np.mean(x) - np.mean(y)) / np.sqrt(pooled * (1 / nx + 1 / ny))), df


def t_test(original: Evaluation, reproduced: Evaluation, measure: Measure | str, *,
           paired: bool = True) -> ReproTest:
    """The t-test of repro_eval's ``RpdEvaluator.ttest`` (``paired``) or ``RplEvaluator.ttest``."""
    m = parse_measure(measure)
    if paired:
        _same_topics(original, reproduced)
    x, y = _scores(original, m), _scores(reproduced, m)
    if len(x) < 2 or len(y) < 2:
        raise StatisticsError("a t-test needs at least 2 topics on each side")
    statistic, df = (_paired_t(x, y) if paired else _student_t(x, y))
    p = float(2 * _special.stdtr(df, -abs(statistic)))
    if np.isnan(p) and len(x) == len(y) and np.array_equal(x, y):
        p = 1.0
    return ReproTest(measure=str(m), paired=paired, statistic=statistic,
                     p_value=p, n_original=len(x), n_reproduced=len(y))
