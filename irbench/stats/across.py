"""Which system is better across several test collections (:func:`across`).

The input is, per collection, one measure's per-topic scores of the systems
(:class:`CollectionScores`: a systems x topics matrix, NaN where a system has no value). The
result (:class:`Across`) is what a lab reads off a benchmark of several collections:

- the systems x collections table of mean scores, each system's mean over the collections it
  was evaluated on (BEIR's and MTEB's figure) and its mean rank (rank 1 the best of a
  collection, ties averaged, over the collections it was evaluated on);
- per collection, each system against the baseline with a paired test (:func:`~irbench.stats.
  paired.paired_test`, on the topics both scored), the p-values of every system and collection
  adjusted as one family (Holm by default: :func:`~irbench.stats.multiple.adjust_p`);
  win / tie / loss counts: collections where the system is significantly better, not
  significantly different, significantly worse (adjusted p <= alpha);
- what a system given as a command cost: wall seconds per topic to make its run (averaged
  over the collections) and its peak memory (the largest), from the store's ``commands``;
- per system, a random-effects meta-analysis of its per-collection effects against the
  baseline (:mod:`irbench.stats.meta`: the raw or standardised mean difference,
  DerSimonian-Laird), as Soboroff (CIKM 2018) recommends for a result over several
  collections; without statsmodels (the ``stats`` extra) it is left out with a note.

Nothing here reads the store; :class:`Across` is plain data (JSON, CSV and the report read
it)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from ..errors import StatisticsError, StatisticsExtraError
from .choices import DEFAULT_CORRECTION, DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST
from .meta import Effect, MetaResult, collection_effect, meta_analysis
from .multiple import adjust_p
from .paired import paired_test


@dataclass(frozen=True)
class CollectionScores:
    """One collection's per-topic values of one measure: ``values[system, topic]`` (NaN:
    no value), systems and topics in the store's order (sorted by name)."""

    name: str
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    # what a system given as a command cost to make its run here: (wall seconds, peak bytes)
    costs: Mapping[str, tuple[float, int]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CellTest:
    """A system against the baseline on one collection."""

    collection: str
    n: int  # topics both scored
    mean_diff: float
    p_value: float
    p_adjusted: float
    outcome: str  # 'win', 'tie' or 'loss'


@dataclass(frozen=True, kw_only=True)
class SystemAcross:
    """One system over the collections."""

    name: str
    means: tuple[float, ...]  # per collection (NaN: not evaluated on it), in Across order
    mean: float  # over the collections it was evaluated on
    mean_rank: float
    collections: int  # evaluated on
    wins: int = 0
    ties: int = 0
    losses: int = 0
    tests: tuple[CellTest, ...] = ()
    meta: MetaResult | None = None
    # a system given as a command: its wall seconds per topic to make its run, averaged over
    # the collections, and its largest peak memory (bytes); None for a submitted run
    seconds_per_topic: float | None = None
    peak_rss_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class Across:
    """The comparison across collections (see the module docstring); ``systems`` by mean
    over the collections, best first (the baseline among them)."""

    measure: str
    collections: tuple[str, ...]
    systems: tuple[SystemAcross, ...]
    baseline: str | None
    test: str
    correction: str
    alpha: float
    effect: str
    notes: tuple[str, ...] = ()


def across(scores: Sequence[CollectionScores], measure: str, *, baseline: str | None = None,
           test: str = DEFAULT_TEST, correction: str = DEFAULT_CORRECTION,
           alpha: float = 0.05, effect: str = "raw", method: str = "dl",
           samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED) -> Across:
    """The comparison of the systems of ``scores`` across its collections (see the module
    docstring); without ``baseline`` only the table, means and ranks. StatisticsError for
    no collection, or a baseline evaluated on none."""
    if not scores:
        raise StatisticsError("no collection to compare across")
    names = sorted({s for c in scores for s in c.systems})
    means = np.full((len(names), len(scores)), np.nan)
    ranks = np.full_like(means, np.nan)
    index = {name: i for i, name in enumerate(names)}
    for j, c in enumerate(scores):
        rows = np.array([index[s] for s in c.systems], dtype=np.int64)
        with warnings.catch_warnings():  # a system without a value: an all-NaN row
            warnings.simplefilter("ignore", RuntimeWarning)
            m = np.nanmean(c.values, axis=1) if c.values.size else np.full(len(rows), np.nan)
        means[rows, j] = m
        ok = ~np.isnan(m)
        ranks[rows[ok], j] = _st.rankdata(-m[ok])
    notes: list[str] = []
    tested = _tests(scores, names, baseline, test, correction, alpha, samples, seed)
    metas = _metas(scores, names, baseline, effect, method, notes)
    out = []
    for i, name in enumerate(names):
        present = ~np.isnan(means[i])
        cells = tested.get(name, ())
        cost = [(c.costs[name][0] / max(len(c.topics), 1), c.costs[name][1])
                for c in scores if name in c.costs]
        out.append(SystemAcross(
            name=name, means=tuple(float(v) for v in means[i]),
            mean=float(means[i][present].mean()) if present.any() else math.nan,
            mean_rank=float(ranks[i][present].mean()) if present.any() else math.nan,
            collections=int(present.sum()),
            wins=sum(t.outcome == "win" for t in cells),
            ties=sum(t.outcome == "tie" for t in cells),
            losses=sum(t.outcome == "loss" for t in cells),
            tests=tuple(cells), meta=metas.get(name),
            seconds_per_topic=float(np.mean([t for t, _ in cost])) if cost else None,
            peak_rss_bytes=max(b for _, b in cost) if cost else None))
    out.sort(key=lambda s: (-s.mean if not math.isnan(s.mean) else math.inf, s.name))
    if baseline is not None and "__missing__" in metas:
        notes.append(str(metas["__missing__"]))
    return Across(measure=measure, collections=tuple(c.name for c in scores),
                  systems=tuple(out), baseline=baseline, test=test, correction=correction,
                  alpha=alpha, effect=effect, notes=tuple(notes))


def _pairs(c: CollectionScores, system: str, baseline: str) -> tuple[np.ndarray, np.ndarray]:
    """The system's and the baseline's values on the topics both scored in ``c``."""
    x = c.values[c.systems.index(system)]
    y = c.values[c.systems.index(baseline)]
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _tests(scores: Sequence[CollectionScores], names: list[str], baseline: str | None,
           test: str, correction: str, alpha: float, samples: int, seed: int | None
           ) -> dict[str, list[CellTest]]:
    """Every system against the baseline on every collection both were evaluated on, the
    p-values adjusted as one family."""
    if baseline is None:
        return {}
    if not any(baseline in c.systems for c in scores):
        raise StatisticsError(f"baseline '{baseline}' has no scores on any collection")
    found = []  # (system, collection, n, mean diff, p)
    for c in scores:
        if baseline not in c.systems:
            continue
        for name in names:
            if name == baseline or name not in c.systems:
                continue
            x, y = _pairs(c, name, baseline)
            if len(x) < 2:
                continue
            r = paired_test(x, y, test, samples=samples, seed=seed)
            p = r.p_value if not math.isnan(r.p_value) else 1.0  # identical scores: no
            found.append((name, c.name, len(x), r.mean_diff, p))  # difference to find
    adjusted = adjust_p([f[4] for f in found], correction) if found else np.empty(0)
    out: dict[str, list[CellTest]] = {}
    for (name, collection, n, diff, p), q in zip(found, adjusted.tolist()):
        outcome = "tie" if q > alpha or diff == 0 else ("win" if diff > 0 else "loss")
        out.setdefault(name, []).append(CellTest(collection=collection, n=n, mean_diff=diff,
                                                 p_value=p, p_adjusted=q, outcome=outcome))
    return out


def _metas(scores: Sequence[CollectionScores], names: list[str], baseline: str | None,
           effect: str, method: str, notes: list[str]) -> dict:
    """Each system's meta-analysis against the baseline (none without statsmodels: a
    note)."""
    if baseline is None:
        return {}
    out: dict = {}
    for name in names:
        if name == baseline:
            continue
        effects: dict[str, Effect] = {}
        for c in scores:
            if name in c.systems and baseline in c.systems:
                effects[c.name] = collection_effect(*_pairs(c, name, baseline), kind=effect)
        if not effects:
            continue
        try:
            out[name] = meta_analysis(effects, method=method)
        except StatisticsExtraError as exc:
            notes.append(f"no meta-analysis: {exc}")
            return {}
        except StatisticsError as exc:  # no collection with an effect to weigh
            notes.append(f"{name}: no meta-analysis: {exc}")
    return out
