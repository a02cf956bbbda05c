"""The random-effects meta-analysis across collections (irbench.stats.meta, issue 41): per
collection effects by hand, the combined estimate against statsmodels' combine_effects."""

from __future__ import annotations

import builtins
import math
import pickle

import numpy as np
import pytest

from irbench.errors import StatisticsError, StatisticsExtraError
from irbench.stats.meta import (
    EFFECTS,
    Effect,
    collection_effect,
    hedges_j,
    meta_analysis,
)

TOL = 1e-10


def _collections(rng, sizes=(50, 12, 31, 7, 25), shifts=(0.05, -0.02, 0.12, 0.0, 0.08)):
    """Five collections of uneven topic counts, with effects that differ between them."""
    out = {}
    for i, (n, shift) in enumerate(zip(sizes, shifts)):
        base = rng.uniform(0.1, 0.7, n)
        out[f"c{i}"] = (np.clip(base + shift + rng.normal(0, 0.05, n), 0, 1), base)
    return out


def _oracle(effects, method="dl", alpha=0.05):
    sm = pytest.importorskip("statsmodels.stats.meta_analysis")
    eff = np.array([e.effect for e in effects.values()])
    var = np.array([e.variance for e in effects.values()])
    return sm.combine_effects(eff, var, method_re=method, alpha=alpha)


# ---- per collection ------------------------------------------------------------------------

def test_raw_effect_by_hand_on_three_topics():
    # differences 0.1, 0.3, 0.2: mean 0.2, sample variance 0.01, over n = 3
    e = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2], kind="raw")
    assert (e.n, e.kind, e.hedges, e.reason) == (3, "raw", False, "")
    assert e.effect == pytest.approx(0.2, abs=1e-15)
    assert e.variance == pytest.approx(0.01 / 3, abs=1e-15)


def test_nan_topics_are_dropped_pairwise():
    e = collection_effect([0.5, np.nan, 0.6, 0.4, 0.9], [0.4, 0.1, 0.3, 0.2, np.nan])
    assert e.n == 3
    assert e.effect == pytest.approx(0.2, abs=1e-15)


def test_smd_by_hand_on_three_topics():
    # d_z = 0.2 / 0.1 = 2; variance 1/3 + 4/6 = 1; J(df=2) = 1 - 3/7 = 4/7
    e = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2], kind="smd", hedges=False)
    assert e.effect == pytest.approx(2.0, abs=1e-12)
    assert e.variance == pytest.approx(1.0, abs=1e-12)
    g = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2], kind="smd")
    assert hedges_j(2) == pytest.approx(4 / 7)
    assert (g.hedges, g.effect) == (True, pytest.approx(8 / 7, abs=1e-12))
    assert g.variance == pytest.approx(16 / 49, abs=1e-12)


def test_smd_is_the_one_sample_smd_of_the_differences():
    # d_z of paired data is the one-sample standardised mean of the differences; its Hedges
    # correction with df = n - 1 tends to statsmodels' two-group one as n grows, and d_z
    # itself equals mean / sd by numpy
    rng = np.random.default_rng(7)
    x, y = rng.uniform(0, 1, 40), rng.uniform(0, 1, 40)
    d = x - y
    e = collection_effect(x, y, kind="smd", hedges=False)
    assert e.effect == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert e.variance == pytest.approx(1 / 40 + e.effect ** 2 / 80, abs=1e-12)


def test_too_few_topics_and_no_variance_are_left_out_with_a_reason():
    one = collection_effect([0.5, np.nan], [0.4, 0.2])
    assert one.n == 1 and not one.usable and "1 paired topic" in one.reason
    assert math.isnan(one.effect) and math.isnan(one.variance)
    flat = collection_effect([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], kind="smd")
    assert not flat.usable and "all 0.1" in flat.reason and "no variance" in flat.reason
    same = collection_effect([0.5, 0.6], [0.5, 0.6])
    assert "all 0" in same.reason


def test_bad_inputs_are_named_errors():
    with pytest.raises(StatisticsError, match="equal length"):
        collection_effect([0.1, 0.2], [0.1])
    with pytest.raises(StatisticsError, match="infinite"):
        collection_effect([0.1, np.inf], [0.1, 0.2])
    with pytest.raises(StatisticsError, match="did you mean 'smd'"):
        collection_effect([0.1, 0.2], [0.1, 0.3], kind="smdd")
    with pytest.raises(StatisticsError, match="positive variance"):
        Effect(effect=0.1, variance=0.0, n=3)
    with pytest.raises(StatisticsError, match="no value"):
        Effect(effect=0.1, variance=math.nan, n=1, reason="why")
    assert list(EFFECTS) == ["raw", "smd"]


# ---- the meta-analysis against statsmodels ------------------------------------------------

@pytest.mark.parametrize("kind", ["raw", "smd"])
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_dl_equals_statsmodels(kind, confidence):
    rng = np.random.default_rng(41)
    effects = {name: collection_effect(x, y, kind=kind)
               for name, (x, y) in _collections(rng).items()}
    res = _oracle(effects, "dl", 1 - confidence)
    assert res.tau2 > 0  # the data are heterogeneous: no truncation
    m = meta_analysis(effects, confidence=confidence)
    fe_ci, re_ci, _, _ = res.conf_int(alpha=1 - confidence, use_t=False)
    assert m.effect == pytest.approx(res.mean_effect_re, abs=TOL)
    assert m.se == pytest.approx(res.sd_eff_w_re, abs=TOL)
    assert (m.ci_low, m.ci_high) == (pytest.approx(re_ci[0], abs=TOL),
                                     pytest.approx(re_ci[1], abs=TOL))
    assert m.tau2 == pytest.approx(res.tau2, abs=TOL)
    assert m.i2 == pytest.approx(res.i2, abs=TOL)
    assert m.q == pytest.approx(res.q, abs=TOL)
    assert m.q_df == 4
    assert m.q_p_value == pytest.approx(res.test_homogeneity().pvalue, abs=TOL)
    assert m.fixed_effect == pytest.approx(res.mean_effect_fe, abs=TOL)
    assert m.fixed_se == pytest.approx(res.sd_eff_w_fe, abs=TOL)
    assert m.fixed_ci_low == pytest.approx(fe_ci[0], abs=TOL)
    assert m.z == pytest.approx(res.mean_effect_re / res.sd_eff_w_re, abs=TOL)
    from scipy.stats import norm
    assert m.p_value == pytest.approx(2 * norm.sf(abs(m.z)), abs=TOL)
    assert [r.name for r in m.collections] == list(effects)
    assert [r.weight for r in m.collections] == pytest.approx(list(res.weights_rel_re),
                                                             abs=TOL)
    assert sum(r.weight for r in m.collections) == pytest.approx(1.0)
    assert [r.n for r in m.collections] == [50, 12, 31, 7, 25]
    assert (m.kind, m.method, m.tau2_truncated, m.left_out) == (kind, "dl", False, ())
    assert pickle.loads(pickle.dumps(m)) == m


def test_paule_mandel_equals_statsmodels():
    rng = np.random.default_rng(3)
    effects = {name: collection_effect(x, y) for name, (x, y) in _collections(rng).items()}
    res = _oracle(effects, "pm")
    m = meta_analysis(effects, method="pm")
    assert m.tau2 == pytest.approx(res.tau2, abs=TOL)
    assert m.effect == pytest.approx(res.mean_effect_re, abs=TOL)
    assert m.se == pytest.approx(res.sd_eff_w_re, abs=TOL)


def test_homogeneous_collections_truncate_tau2_at_zero():
    # statsmodels' dl leaves tau^2 = (Q - df) / C negative here; the DerSimonian-Laird
    # estimator is max(0, .), so the random-effects estimate is the fixed-effect one
    effects = {"a": Effect(effect=0.1, variance=0.01, n=20),
               "b": Effect(effect=0.1001, variance=0.02, n=20),
               "c": Effect(effect=0.0999, variance=0.015, n=20)}
    res = _oracle(effects)
    assert res.tau2 < 0 and res.i2 < 0
    m = meta_analysis(effects)
    assert (m.tau2, m.i2, m.tau2_truncated) == (0.0, 0.0, True)
    assert m.effect == pytest.approx(res.mean_effect_fe, abs=TOL)
    assert m.se == pytest.approx(res.sd_eff_w_fe, abs=TOL)
    assert m.q == pytest.approx(res.q, abs=TOL)
    assert (m.effect, m.se) == (m.fixed_effect, m.fixed_se)
    assert [r.weight for r in m.collections] == [r.fixed_weight for r in m.collections]
    pm = meta_analysis(effects, method="pm")  # Paule-Mandel truncates itself
    assert (pm.tau2, pm.effect) == (0.0, m.effect)


def test_one_collection_gives_tau2_zero_and_the_fixed_effect():
    e = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2])
    m = meta_analysis({"only": e})
    assert (m.tau2, m.i2, m.q, m.q_df, m.q_p_value) == (0.0, 0.0, 0.0, 0, None)
    assert m.effect == m.fixed_effect == pytest.approx(0.2)
    assert m.se == pytest.approx(math.sqrt(0.01 / 3))
    assert m.ci_low == pytest.approx(0.2 - 1.959963984540054 * m.se)
    assert m.collections[0].weight == 1.0


def test_left_out_collections_are_named_with_why():
    rng = np.random.default_rng(5)
    effects = {name: collection_effect(x, y) for name, (x, y) in _collections(rng).items()}
    effects["tiny"] = collection_effect([0.3], [0.2])
    effects["flat"] = collection_effect([0.3, 0.4], [0.2, 0.3])
    m = meta_analysis(effects)
    assert [r.name for r in m.collections] == ["c0", "c1", "c2", "c3", "c4"]
    assert [name for name, _ in m.left_out] == ["tiny", "flat"]
    assert "1 paired topic" in dict(m.left_out)["tiny"]
    assert "no variance" in dict(m.left_out)["flat"]
    full = meta_analysis({k: v for k, v in effects.items() if v.usable})
    assert (m.effect, m.tau2) == (full.effect, full.tau2)
    with pytest.raises(StatisticsError, match="tiny: 1 paired topic"):
        meta_analysis({"tiny": effects["tiny"]})


def test_bad_requests_are_named_errors():
    a = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2])
    b = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2], kind="smd")
    with pytest.raises(StatisticsError, match="different kinds"):
        meta_analysis({"a": a, "b": b})
    with pytest.raises(StatisticsError, match="unknown meta-analysis method"):
        meta_analysis({"a": a}, method="reml")
    with pytest.raises(StatisticsError, match="confidence"):
        meta_analysis({"a": a}, confidence=95)
    with pytest.raises(StatisticsError, match="at least one"):
        meta_analysis({})


def test_without_statsmodels_the_error_says_how_to_install_it(monkeypatch):
    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name.startswith("statsmodels"):
            raise ImportError(f"No module named '{name}'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    e = collection_effect([0.5, 0.6, 0.4], [0.4, 0.3, 0.2])
    with pytest.raises(StatisticsExtraError) as caught:
        meta_analysis({"a": e})
    assert "pip install 'irbench[stats]'" in str(caught.value)
    assert "pip install -e '.[stats]'" in str(caught.value)
    assert isinstance(caught.value, StatisticsError)
