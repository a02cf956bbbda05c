"""irbench.stats.across: the systems x collections table, mean and mean rank, per-collection
paired tests against the baseline with the family corrected across collections, win/tie/loss,
and each system's random-effects meta-analysis (checked against scipy and statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from irbench.errors import StatisticsError
from irbench.stats.across import CollectionScores, across
from irbench.stats.multiple import adjust_p

SYSTEMS = ("base", "better", "same", "worse")


def _collections(seed: int = 7) -> list[CollectionScores]:
    rng = np.random.default_rng(seed)
    out = []
    for name, n, shift in (("c1", 40, 0.04), ("c2", 25, 0.09), ("c3", 60, 0.15)):
        base = rng.uniform(0.2, 0.7, n)
        values = np.vstack([base, base + shift + rng.normal(0, 0.05, n),
                            base + rng.normal(0, 0.05, n), base - 0.1 + rng.normal(0, 0.05, n)])
        out.append(CollectionScores(name, SYSTEMS, tuple(f"q{i}" for i in range(n)),
                                    np.clip(values, 0, 1)))
    return out


@pytest.mark.timeout(60)
def test_table_means_and_ranks():
    scores = _collections()
    result = across(scores, "AP")
    by = {s.name: s for s in result.systems}
    for j, c in enumerate(scores):
        for i, name in enumerate(SYSTEMS):
            assert by[name].means[j] == pytest.approx(c.values[i].mean(), abs=1e-15)
    assert [s.name for s in result.systems][0] == "better"  # best mean first
    for name in SYSTEMS:
        ranks = [st.rankdata(-np.array([c.values[k].mean() for k in range(4)]))[
            SYSTEMS.index(name)] for c in scores]
        assert by[name].mean_rank == pytest.approx(np.mean(ranks))
        assert by[name].mean == pytest.approx(np.mean(by[name].means))
    assert result.baseline is None and all(not s.tests for s in result.systems)


@pytest.mark.timeout(60)
def test_tests_against_the_baseline_are_one_family_across_collections():
    scores = _collections()
    result = across(scores, "AP", baseline="base", test="t", correction="holm")
    by = {s.name: s for s in result.systems}
    raw = []
    for c in scores:
        for name in ("better", "same", "worse"):
            raw.append(st.ttest_rel(c.values[SYSTEMS.index(name)], c.values[0]).pvalue)
    adjusted = adjust_p(raw, "holm")
    k = 0
    for c in scores:
        for name in ("better", "same", "worse"):
            cell = next(t for t in by[name].tests if t.collection == c.name)
            assert cell.p_value == pytest.approx(raw[k], rel=1e-12)
            assert cell.p_adjusted == pytest.approx(adjusted[k], rel=1e-12)
            k += 1
    assert (by["better"].wins, by["better"].ties, by["better"].losses) == (3, 0, 0)
    assert (by["worse"].wins, by["worse"].losses) == (0, 3)
    assert by["same"].wins + by["same"].ties + by["same"].losses == 3
    assert by["base"].tests == () and by["base"].meta is None


@pytest.mark.timeout(60)
def test_the_meta_analysis_is_statsmodels_combine_effects_on_the_raw_differences():
    pytest.importorskip("statsmodels")
    from statsmodels.stats.meta_analysis import combine_effects

    scores = _collections()
    result = across(scores, "AP", baseline="base", test="t")
    meta = next(s for s in result.systems if s.name == "better").meta
    assert meta is not None
    d = [c.values[1] - c.values[0] for c in scores]
    effect = np.array([x.mean() for x in d])
    variance = np.array([x.var(ddof=1) / len(x) for x in d])
    ref = combine_effects(effect, variance, method_re="dl")
    assert ref.tau2 > 0  # collections that differ: the random effects are not the fixed
    assert meta.effect == pytest.approx(ref.mean_effect_re, abs=1e-10)
    assert meta.se == pytest.approx(ref.sd_eff_w_re, abs=1e-10)
    assert meta.q == pytest.approx(ref.q, abs=1e-10)
    assert meta.tau2 == pytest.approx(max(ref.tau2, 0.0), abs=1e-10)


@pytest.mark.timeout(60)
def test_a_system_missing_from_a_collection_and_a_missing_baseline():
    scores = _collections()
    cut = CollectionScores("c2", SYSTEMS[:3], scores[1].topics, scores[1].values[:3])
    result = across([scores[0], cut, scores[2]], "AP", baseline="base", test="t")
    worse = next(s for s in result.systems if s.name == "worse")
    assert worse.collections == 2 and math.isnan(worse.means[1])
    assert worse.mean == pytest.approx(np.mean([worse.means[0], worse.means[2]]))
    assert {t.collection for t in worse.tests} == {"c1", "c3"}
    with pytest.raises(StatisticsError, match="baseline 'nobody'"):
        across(scores, "AP", baseline="nobody")
    with pytest.raises(StatisticsError, match="no collection"):
        across([], "AP")
