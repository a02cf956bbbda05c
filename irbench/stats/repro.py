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

Rankings are trec_eval's (:func:`irbench.ranked.rank_order`'s order, made by
:mod:`irbench.stats.repro_rankings`: score descending, ties by docno descending), the order
repro_eval's ``break_ties`` gives a run file that lists each topic by descending score
(repro_eval keeps the file's order otherwise and sorts only adjacent ties). A docno retrieved
twice for a topic counts at its first rank only (repro_eval's dictionaries
keep its first position). Per-topic scores are irbench's own (``irbench.evaluate(...)``).

Where repro_eval departs from the papers' definitions its behaviour is the default, named
``"repro_eval"`` in the variant registries (:data:`KTU_VARIANTS`, :data:`RBO_VARIANTS`); see
each variant's docstring. The rankings' measures are whole-column kernels: no Python loop over
documents or topics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special as _special

from ..errors import StatisticsError
from ..measures import Measure, parse_measure
from ..measures.compute import Evaluation
from ..registry import Registry
from .repro_rankings import RankedPair
from .repro_rankings import RankedRun as RankedRun  # re-exported: the rankings' API
from .repro_rankings import rank_pair as rank_pair

DEFAULT_DEPTH = 1000  # repro_eval's RUN_LENGTH and RBO_DEPTH
DEFAULT_P = 0.95  # repro_eval's RBO_P


# rankings (ranked and keyed by irbench.stats.repro_rankings) ------------------------------

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


_BRUTE_BITS = 4  # the ranks' lowest bits: pairs in groups of 16 ranks compared one by one


def _discordant(order: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per topic, the pairs of positions i < j with order[i] > order[j], where ``order``
    holds topic after topic (n[t] positions each) the ranks 0 .. n[t] - 1.

    One pass per high bit of the ranks, most significant first, over the positions arranged
    by (topic, the rank's higher bits), the original order kept within: a pair is counted at
    the highest bit where its ranks differ, as a zero preceded by a one in its group. Ranks are
    dense, so a group's first position is its topic's start plus its first rank, and each pass
    partitions every group stably (zeros, then ones) by cumulative sums. Groups of the last
    16 ranks compare each position with the next 15. O(n log n) in int32 whole columns, no
    masked ufuncs or ``np.where`` (each several times slower than arithmetic on a 0/1 bit)."""
    total = int(n.sum())
    if not total:
        return np.zeros(len(n))
    kind = np.int32 if total < 1 << 31 else np.int64  # half the memory traffic
    n = n.astype(kind)
    ends = np.cumsum(n, dtype=kind)
    tstart, tlen = np.repeat(ends - n, n), np.repeat(n, n)
    pos = np.arange(total, dtype=kind)
    found = np.zeros(total, dtype=kind)
    vals, moved = order.astype(kind), np.empty(total, dtype=kind)
    ones = np.zeros(total + 1, dtype=kind)
    top = int(order.max()).bit_length()
    low = min(_BRUTE_BITS, top)
    for b in range(top - 1, low - 1, -1):
        shifted = vals >> b
        bit = shifted & 1
        first = (shifted >> 1) << (b + 1)  # the group's first rank
        start = first + tstart
        np.cumsum(bit, dtype=kind, out=ones[1:])
        ones_in = ones[:-1] - np.take(ones, start)  # ones before this position in its group
        found += ones_in * (1 - bit)
        back = pos - ones_in  # a zero's place; a one's: after the group's zeros
        ahead = np.minimum(tlen - first, 1 << b) + start + ones_in
        moved[back + bit * (ahead - back)] = vals
        vals, moved = moved, vals
    if low:
        width = 1 << low
        first = vals & ~kind(width - 1)
        left = np.minimum(tlen - first, width) + first + tstart - pos  # to the group's end
        later = np.concatenate((vals, np.zeros(width, dtype=kind)))
        for k in range(1, width):  # a loop over 15 offsets
            found += (vals > later[k:k + total]) & (left > k)
    sums = np.concatenate(([0], np.cumsum(found, dtype=np.int64)))
    return (sums[ends] - sums[ends - n]).astype(np.float64)


def _ktu_repro_eval(pair: RankedPair, depth: int) -> np.ndarray:
    """repro_eval's KTU: each ranking cut at ``depth``; the union of the two cuts sorted by
    docno; the i-th document of each ranking replaced by its position in that sorted union;
    Kendall's tau (tau-b; no ties can occur) of the two position lists, pair i with pair i."""
    o, r = pair.original, pair.reproduced
    n = np.minimum(np.minimum(o.length, r.length), depth)
    start = np.concatenate(([0], np.cumsum(n)))  # where each topic's paired ranks start
    (t_o, rank_o), (t_r, rank_r) = o.key_order, r.key_order  # the pairs by x, by y
    if np.any(n < o.length):
        kept = rank_o < n[t_o]
        t_o, rank_o = t_o[kept], rank_o[kept]
    if np.any(n < r.length):
        kept = rank_r < n[t_r]
        t_r, rank_r = t_r[kept], rank_r[kept]
    begin = np.take(start, t_r)
    rank_y = np.empty(int(start[-1]), dtype=np.int64)  # each pair's rank by y in its topic
    rank_y[begin + rank_r] = np.arange(len(t_r)) - begin
    discordant = _discordant(np.take(rank_y, np.take(start, t_o) + rank_o), n)
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
    rank, keys, topic = o.rank, o.keys, o.topic
    if width < longest:  # else every rank is above the cutoff: no copies
        top = rank < width
        rank, keys, topic = rank[top], keys[top], topic[top]
    both = np.maximum(rank, r.rank_of_key[keys])  # first d - 1 in both
    shared = both < width
    cells = np.bincount(topic[shared] * width + both[shared], minlength=num_topics * width)
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
