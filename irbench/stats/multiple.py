"""Many systems: all pairs, or every system against a baseline, over one or many measures, with a
correction for multiple comparisons.

:func:`compare` runs one paired test over every pair at once (the resampling tests share one
sign-flip or bootstrap matrix, so all pairs cost one matrix product), then adjusts the p-values
over the family: every pair of every measure (``family="all"``, the default) or each measure on
its own (``family="measure"``). Corrections: ``none``, ``bonferroni``, ``holm`` (the default),
``bh`` (Benjamini-Hochberg, ``scipy.stats.false_discovery_control``), ``by``
(Benjamini-Yekutieli). The Tukey HSD tests (``tukey-hsd`` on the two-way ANOVA,
``randomized-tukey-hsd``) control the family-wise error rate over all pairs of a measure
themselves; with them leave ``correction`` out (it is recorded as the test's name).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from ..errors import EvaluationError, StatisticsError
from ..trec import pandas_module
from .anova import randomized_tukey_hsd, tukey_hsd
from .choices import (  # noqa: F401
    COMPARE_TESTS,
    CORRECTIONS,
    DEFAULT_CORRECTION,
    DEFAULT_FAMILY,
    FAMILIES,
    TUKEY_TESTS,
    default_test,
)
from .paired import DEFAULT_SAMPLES, DEFAULT_SEED, Columns, TestResult, paired_columns
from .scores import Scores, check_alternative, check_choice


def adjust_p(p, method: str = DEFAULT_CORRECTION, axis: int = -1) -> np.ndarray:
    """p-values adjusted for multiple comparisons along ``axis`` (each slice is one family).

    ``bonferroni``: min(1, m p). ``holm``: step-down, the i-th smallest becomes
    max_{j <= i} min(1, (m - j + 1) p_(j)) (Holm 1979). ``bh`` / ``by``:
    ``scipy.stats.false_discovery_control``. ``none``: unchanged.
    """
    check_choice("correction", method, CORRECTIONS)
    p = np.asarray(p, dtype=np.float64)
    if p.size == 0 or method == "none":
        return p.copy()
    if np.isnan(p).any():
        raise EvaluationError("cannot adjust NaN p-values")
    m = p.shape[axis]
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    if method in ("bh", "by"):
        return _st.false_discovery_control(p, axis=axis, method=method)
    moved = np.moveaxis(p, axis, -1)
    order = np.argsort(moved, axis=-1, kind="stable")
    ranked = np.take_along_axis(moved, order, axis=-1) * (m - np.arange(m))
    ranked = np.minimum(1.0, np.maximum.accumulate(ranked, axis=-1))
    out = np.empty_like(moved)
    np.put_along_axis(out, order, ranked, axis=-1)
    return np.moveaxis(out, -1, axis)


@dataclass(frozen=True)
class PairComparison:
    """One pair on one measure: ``result`` tests system_a - system_b; ``p_adjusted`` is the
    p-value after the comparison's correction, ``significant`` whether it is <= alpha."""

    measure: str
    system_a: str
    system_b: str
    mean_a: float
    mean_b: float
    result: TestResult
    p_adjusted: float
    significant: bool

    def row(self) -> dict:
        """This pair as one row of :meth:`Comparison.to_frame` (keys: :data:`ROW`)."""
        r = self.result
        return {"measure": self.measure, "system_a": self.system_a, "system_b": self.system_b,
                "mean_a": self.mean_a, "mean_b": self.mean_b, "mean_diff": r.mean_diff,
                "ci_low": r.ci_low, "ci_high": r.ci_high, "statistic": r.statistic,
                "p_value": r.p_value, "p_adjusted": self.p_adjusted,
                "effect_size": r.effect_size, "hedges_g": r.hedges_g, "n": r.n,
                "significant": self.significant}


FAMILY_WORDS = {"measure": "each measure a family", "all": "one family over the measures"}

# The columns of Comparison.to_frame, in order, with their headings in Comparison._repr_html_.
ROW = {"measure": "measure", "system_a": "system a", "system_b": "system b",
       "mean_a": "mean a", "mean_b": "mean b", "mean_diff": "a - b", "ci_low": "CI low",
       "ci_high": "CI high", "statistic": "statistic", "p_value": "p", "p_adjusted": "p adj.",
       "effect_size": "d_z", "hedges_g": "g", "n": "topics", "significant": "significant"}


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare`: the settings it ran with and one
    :class:`PairComparison` per (measure, pair), measures in the order given and pairs in
    system order (all pairs: a before b; baseline: each other system against it)."""

    measures: tuple[str, ...]
    systems: tuple[str, ...]
    topics: tuple[int, ...]  # topic count of each measure
    means: np.ndarray = field(repr=False)  # (measures, systems)
    baseline: str | None
    test: str
    correction: str
    family: str
    alternative: str
    alpha: float
    samples: int
    seed: int | None
    pairs: tuple[PairComparison, ...] = field(repr=False)
    notes: tuple[str, ...] = ()  # caveats about the outcome, for the reader

    def for_measure(self, measure: str) -> tuple[PairComparison, ...]:
        self._index(measure)
        return tuple(p for p in self.pairs if p.measure == measure)

    def pair(self, measure: str, a: str, b: str) -> PairComparison:
        """The comparison of a and b on ``measure`` as stored (either orientation)."""
        for p in self.pairs:
            if p.measure == measure and {p.system_a, p.system_b} == {a, b}:
                return p
        raise StatisticsError(f"no comparison of '{a}' and '{b}' on {measure}")

    def mean(self, measure: str, system: str) -> float:
        return float(self.means[self._index(measure), self.systems.index(system)])

    def to_frame(self):
        """One row per pair (columns :data:`ROW`: measure, system_a, system_b, mean_a,
        mean_b, mean_diff = a - b, ci_low, ci_high, statistic, p_value, p_adjusted,
        effect_size, hedges_g, n, significant) as a pandas DataFrame; the settings (test,
        correction, family, alternative, alpha, samples, seed, baseline, notes) are in its
        ``attrs``. pandas is imported here only (``pip install 'irbench[pandas]'``)."""
        pd = pandas_module("Comparison.to_frame")
        frame = pd.DataFrame([p.row() for p in self.pairs], columns=list(ROW))
        frame.attrs.update(self._settings())
        return frame

    def _settings(self) -> dict:
        return {"test": self.test, "correction": self.correction, "family": self.family,
                "alternative": self.alternative, "alpha": self.alpha, "samples": self.samples,
                "seed": self.seed, "baseline": self.baseline, "notes": list(self.notes)}

    def _summary(self) -> str:
        """One line: what was compared, how, and how many pairs are significant."""
        against = (f"{len(self.systems) - 1} systems against {self.baseline}"
                   if self.baseline is not None else f"{len(self.systems)} systems, all pairs")
        topics = ", ".join(f"{m} on {n} topics" for m, n in zip(self.measures, self.topics))
        how = (self.test if self.correction == self.test
               else f"{self.test} test, {self.correction} correction")
        if len(self.measures) > 1:
            how += f" ({FAMILY_WORDS[self.family]})"
        hits = sum(p.significant for p in self.pairs)
        return (f"{against}; {topics}; {how}, alpha {self.alpha:g}: {hits} of "
                f"{len(self.pairs)} pairs significant")

    def __repr__(self) -> str:
        return f"<Comparison: {self._summary()}>"

    def _repr_html_(self) -> str:
        """The pairs as an HTML table, for notebooks; every name is escaped."""
        def cell(key: str, value) -> str:
            if isinstance(value, bool):
                text = "yes" if value else ""
            elif isinstance(value, float):
                text = f"{value:.4g}" if key in ("p_value", "p_adjusted") else f"{value:.4f}"
            else:
                text = str(value)
            align = "" if isinstance(value, str) else ' style="text-align:right"'
            return f"<td{align}>{html.escape(text)}</td>"

        head = "".join(f"<th>{html.escape(h)}</th>" for h in ROW.values())
        body = "".join("<tr>" + "".join(cell(k, v) for k, v in p.row().items()) + "</tr>"
                       for p in self.pairs)
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.notes)
        return (f'<table class="irbench-comparison"><caption>{html.escape(self._summary())}'
                f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                + notes)

    def _index(self, measure: str) -> int:
        if measure not in self.measures:
            raise StatisticsError(f"no measure '{measure}' in this comparison (it has "
                             f"{', '.join(self.measures)})")
        return self.measures.index(measure)


def compare(scores: Scores | Sequence[Scores], *, baseline: str | None = None,
            test: str | None = None, correction: str | None = None,
            family: str = DEFAULT_FAMILY,
            alternative: str = "two-sided", samples: int = DEFAULT_SAMPLES,
            seed: int | None = DEFAULT_SEED, alpha: float = 0.05, ci: str = "t",
            confidence: float = 0.95, exact: bool | None = None) -> Comparison:
    """Compare systems pairwise on one measure (a :class:`Scores`) or several.

    baseline: compare every other system with this one (differences system - baseline);
    None: all pairs. test: one of :data:`COMPARE_TESTS`; None picks
    :func:`~irbench.stats.choices.default_test` (``randomization``, 10,000 samples, seed 0,
    against a baseline or for two systems; ``randomized-tukey-hsd`` for all pairs of three or
    more), the same default as ``irbench compare``. correction: one of :data:`CORRECTIONS`
    (default ``holm``; must be left out for the Tukey tests). family: the comparisons a
    correction covers, ``measure`` (default: each measure's pairs on their own) or ``all``
    (every pair of every measure); a Tukey test covers all pairs of one measure itself, and
    with ``family="all"`` over M measures its p-values are multiplied by M (Bonferroni over
    the measures). Every measure must hold the same systems, each scored on every topic
    (EvaluationError otherwise).
    """
    items = [scores] if isinstance(scores, Scores) else list(scores)
    if not items:
        raise StatisticsError("nothing to compare: no measure given")
    test, correction = _settle_test(test, correction, baseline=baseline,
                                    systems=len(items[0].systems), family=family,
                                    alternative=alternative, alpha=alpha)
    items, systems = _aligned(items, baseline)
    a_idx, b_idx = _pairs(systems, baseline)
    level = alpha / len(items) if family == "all" else alpha  # a Tukey test's own level
    tested = [_test_measure(s, a_idx, b_idx, test, alternative=alternative, samples=samples,
                            seed=seed, level=level, ci=ci, confidence=confidence, exact=exact)
              for s in items]
    p_all = np.array([t.p_value for t in tested])  # (measures, pairs)
    adjusted = _adjust_family(p_all, test, correction, family)
    means = np.array([s.values.mean(axis=1) for s in items])
    out = []
    for k, (s, t) in enumerate(zip(items, tested)):
        out += _measure_pairs(s.measure, len(s.topics), t, systems=systems,
                              pairs=(a_idx, b_idx), means=means[k], adjusted=adjusted[k],
                              test=test, alternative=alternative, ci=ci,
                              confidence=confidence, alpha=alpha)
    notes = _notes(test, tested[0].exact, correction, family, p_all, samples=samples,
                   alpha=alpha)
    return Comparison(measures=tuple(s.measure for s in items), systems=systems,
                      topics=tuple(len(s.topics) for s in items), means=means,
                      baseline=baseline, test=test, correction=correction, family=family,
                      alternative=alternative, alpha=alpha, samples=samples, seed=seed,
                      pairs=tuple(out), notes=notes)


def _settle_test(test: str | None, correction: str | None, *, baseline: str | None,
                 systems: int, family: str, alternative: str, alpha: float) -> tuple[str, str]:
    """(test, correction) :func:`compare` runs with: the default test filled in, every choice
    checked; a Tukey test is its own correction."""
    if test is None:
        test = default_test(baseline, systems)
    check_choice("test", test, COMPARE_TESTS)
    check_choice("family", family, FAMILIES)
    check_alternative(alternative)
    if not 0 < alpha < 1:
        raise StatisticsError(f"alpha must lie between 0 and 1, got {alpha}")
    if test not in TUKEY_TESTS:
        return test, check_choice("correction", correction or DEFAULT_CORRECTION, CORRECTIONS)
    if correction not in (None, test):
        raise StatisticsError(f"{test} controls the family-wise error rate itself; give no "
                         f"correction with it (got '{correction}')")
    if alternative != "two-sided":
        raise StatisticsError(f"{test} is two-sided only")
    return test, test


def _aligned(items: list[Scores], baseline: str | None) -> tuple[list[Scores], tuple[str, ...]]:
    """The measures with their systems in the first measure's order, and that order; each
    measure given once, holding the same systems (at least 2, the baseline among them), each
    scored on every topic."""
    measures = [s.measure for s in items]
    if len(set(measures)) != len(measures):
        raise StatisticsError("a measure is given twice")
    systems = items[0].systems
    for s in items[1:]:
        if set(s.systems) != set(systems):
            raise EvaluationError(f"measures {items[0].measure} and {s.measure} hold different "
                                  "systems")
    items = [s if s.systems == systems else s.select(systems) for s in items]
    if len(systems) < 2:
        raise EvaluationError("a comparison needs at least 2 systems")
    if baseline is not None and baseline not in systems:
        raise StatisticsError(f"unknown baseline '{baseline}' (systems: {', '.join(systems)})")
    for s in items:
        s.check_complete()
    return items, systems


@dataclass(frozen=True)
class _Tested:
    """One measure's test over every pair: ``cols`` describes the differences (mean, interval,
    effect sizes); statistic, p_value and the resampling behind them are the test's (the Tukey
    test's with one, whose simultaneous intervals are mean difference +- ``critical``)."""

    cols: Columns
    statistic: np.ndarray
    p_value: np.ndarray
    samples: int | None
    seed: int | None
    exact: bool
    critical: float | None


def _test_measure(s: Scores, a_idx: np.ndarray, b_idx: np.ndarray, test: str, *,
                  alternative: str, samples: int, seed: int | None, level: float, ci: str,
                  confidence: float, exact: bool | None) -> _Tested:
    """``test`` of every pair (a_idx[j] - b_idx[j]) on one measure; a Tukey test at ``level``,
    so that its intervals are simultaneous at the family's level, as its p-values are."""
    tukey = test in TUKEY_TESTS
    cols = paired_columns(s.values[a_idx].T, s.values[b_idx].T, None if tukey else test,
                          alternative=alternative, samples=samples, seed=seed, ci=ci,
                          confidence=confidence, exact=exact)
    if not tukey:
        return _Tested(cols=cols, statistic=cols.statistic, p_value=cols.p_value,
                       samples=cols.samples, seed=cols.seed, exact=cols.exact, critical=None)
    tk = (tukey_hsd(s, level) if test == "tukey-hsd"
          else randomized_tukey_hsd(s, samples, seed, level))
    return _Tested(cols=cols, statistic=tk.statistic[a_idx, b_idx],
                   p_value=tk.p_values[a_idx, b_idx], samples=tk.samples, seed=tk.seed,
                   exact=False, critical=tk.critical_difference)


def _adjust_family(p_all: np.ndarray, test: str, correction: str, family: str) -> np.ndarray:
    """The (measures, pairs) p-values adjusted over each family. A Tukey test has adjusted
    over the pairs of each measure; over all measures, Bonferroni across them."""
    if test in TUKEY_TESTS:
        return np.minimum(p_all * len(p_all), 1.0) if family == "all" else p_all
    if family == "all":
        return adjust_p(p_all.ravel(), correction).reshape(p_all.shape)
    return adjust_p(p_all, correction, axis=1)


def _measure_pairs(measure: str, n: int, tested: _Tested, *, systems: tuple[str, ...],
                   pairs: tuple[np.ndarray, np.ndarray], means: np.ndarray,
                   adjusted: np.ndarray, test: str, alternative: str, ci: str,
                   confidence: float, alpha: float) -> list[PairComparison]:
    """One :class:`PairComparison` per pair of one measure (``means`` and ``adjusted`` are
    that measure's rows; ``n`` its topic count)."""
    out = []
    for j, (a, b) in enumerate(zip(*pairs)):
        result = _pair_result(tested, j, test=test, alternative=alternative, n=n, ci=ci,
                              confidence=confidence, alpha=alpha)
        out.append(PairComparison(measure=measure, system_a=systems[a], system_b=systems[b],
                                  mean_a=float(means[a]), mean_b=float(means[b]),
                                  result=result, p_adjusted=float(adjusted[j]),
                                  significant=bool(adjusted[j] <= alpha)))
    return out


def _pair_result(tested: _Tested, j: int, *, test: str, alternative: str, n: int, ci: str,
                 confidence: float, alpha: float) -> TestResult:
    """The :class:`TestResult` of pair ``j``: its interval from ``ci`` at ``confidence``, or
    the Tukey test's simultaneous interval at ``1 - alpha``."""
    cols, critical = tested.cols, tested.critical
    diff = float(cols.mean_diff[j])
    low, high, how, level = (float(cols.ci_low[j]), float(cols.ci_high[j]), ci,
                             confidence) if critical is None else (
        diff - critical, diff + critical, "tukey", 1 - alpha)
    return TestResult(test=test, statistic=float(tested.statistic[j]),
                      p_value=float(tested.p_value[j]), alternative=alternative, n=n,
                      mean_diff=diff, ci_low=low, ci_high=high, ci_method=how,
                      confidence=level, effect_size=float(cols.effect_size[j]),
                      hedges_g=float(cols.hedges_g[j]), samples=tested.samples,
                      seed=tested.seed, exact=tested.exact,
                      method="" if cols.method is None else str(cols.method[j]))


def _notes(test: str, exact: bool, correction: str, family: str, p_all: np.ndarray, *,
           samples: int, alpha: float) -> tuple[str, ...]:
    """Caveats for the reader: a resampling test whose smallest p-value cannot survive a
    family-wise correction over the (measures, pairs) p-values ``p_all``."""
    resampled = test in ("randomization", "bootstrap") and not exact
    size = p_all.size if family == "all" else p_all.shape[1]  # comparisons in a family
    if resampled and correction in ("bonferroni", "holm") and size / (samples + 1) > alpha:
        return (f"no p-value of a test with {samples:,} samples is below "
                f"1/{samples + 1:,}, so none can survive the {correction} correction over "
                f"{size:,} comparisons at alpha {alpha:g}; use at least "
                f"{int(np.ceil(size / alpha)):,} samples, or randomized-tukey-hsd",)
    return ()


def _pairs(systems: Sequence[str], baseline: str | None) -> tuple[np.ndarray, np.ndarray]:
    m = len(systems)
    if baseline is not None:
        base = list(systems).index(baseline)
        a = np.array([i for i in range(m) if i != base], dtype=int)
        return a, np.full(len(a), base)
    a, b = np.triu_indices(m, k=1)
    return a, b
