"""irbench.stats: known answers against scipy, exact enumeration, a textbook ANOVA and Tukey HSD,
corrections, tables, LaTeX, rank agreement and topic-set size design."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from irbench import stats as S
from irbench.errors import EvaluationError, StatisticsError
from irbench.stats.latex import labels


def pair(n=20, shift=0.03, seed=1):
    rng = np.random.default_rng(seed)
    topic = rng.beta(2, 5, n)
    x = np.clip(topic + rng.normal(shift, 0.08, n), 0, 1)
    y = np.clip(topic + rng.normal(0, 0.08, n), 0, 1)
    return x, y


def scores(m=6, n=25, spread=0.05, seed=3, measure="AP"):
    rng = np.random.default_rng(seed)
    v = rng.beta(2, 5, (1, n)) + np.linspace(spread, 0, m)[:, None] + rng.normal(0, 0.05, (m, n))
    return S.Scores(measure, [f"s{i}" for i in range(m)], [f"t{j:02d}" for j in range(n)], v)


# ---- paired tests: known answers -----------------------------------------------------------

@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_t_test_equals_scipy(alternative):
    x, y = pair()
    got = S.t_test(x, y, alternative=alternative)
    ref = st.ttest_rel(x, y, alternative=alternative)
    ci = ref.confidence_interval(0.95)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert (got.ci_low, got.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert got.mean_diff == pytest.approx(np.mean(x - y))
    assert got.effect_size == pytest.approx(np.mean(x - y) / np.std(x - y, ddof=1))
    assert (got.samples, got.seed, got.n) == (None, None, 20)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("data", ["continuous", "ties_and_zeros", "large"])
def test_wilcoxon_equals_scipy(alternative, data):
    x, y = pair(n=60 if data == "large" else 20)
    if data == "ties_and_zeros":
        x, y = np.round(x, 1), np.round(y, 1)
    got = S.wilcoxon_test(x, y, alternative=alternative)
    ref = st.wilcoxon(x, y, alternative=alternative)
    assert (got.statistic, got.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)


def test_sign_test_equals_binomtest():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        x, y = rng.integers(0, 4, n) / 4, rng.integers(0, 4, n) / 4  # ties: zero differences
        d = x - y
        k, m = int((d > 0).sum()), int((d != 0).sum())
        for alternative in ("two-sided", "greater", "less"):
            got = S.sign_test(x, y, alternative=alternative)
            want = st.binomtest(k, m, 0.5, alternative=alternative).pvalue if m else 1.0
            assert got.p_value == pytest.approx(want, rel=1e-12, abs=1e-15)
            assert got.statistic == k


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_randomization_equals_exact_enumeration(alternative):
    x, y = pair(n=10, shift=0.05)
    got = S.randomization_test(x, y, alternative=alternative)
    assert got.exact and got.samples == 2**10 and got.seed is None
    # scipy's permutation test enumerates all 2^n sign patterns when n_resamples >= 2^n
    ref = st.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis),
                              permutation_type="samples", vectorized=True,
                              n_resamples=np.inf, alternative=alternative)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    # and a brute force over itertools.product
    d = x - y
    sums = np.array([np.dot(s, d) for s in itertools.product((1, -1), repeat=len(d))])
    obs = d.sum()
    extreme = {"two-sided": np.abs(sums) >= abs(obs) - 1e-12, "greater": sums >= obs - 1e-12,
               "less": sums <= obs + 1e-12}[alternative]
    assert got.p_value == extreme.mean()


def test_randomization_counts_ties_on_discrete_scores():
    # P@10-like values: many sign patterns give exactly the observed sum
    x = np.array([0.3, 0.5, 0.2, 0.4, 0.1, 0.6, 0.3, 0.2])
    y = np.array([0.2, 0.4, 0.3, 0.4, 0.0, 0.5, 0.1, 0.2])
    got = S.randomization_test(x, y)
    sums = np.array([np.dot(s, np.round((x - y) * 10)) for s in
                     itertools.product((1, -1), repeat=8)])  # integers: ties are exact
    assert got.p_value == (np.abs(sums) >= abs(np.round((x - y) * 10).sum())).mean()


def test_sampled_randomization_is_seeded_and_close_to_exact():
    x, y = pair(n=16, shift=0.03)
    exact = S.randomization_test(x, y, exact=True)
    a = S.randomization_test(x, y, samples=20_000, seed=5)
    b = S.randomization_test(x, y, samples=20_000, seed=5)
    c = S.randomization_test(x, y, samples=20_000, seed=6)
    assert a == b and a.p_value != c.p_value
    assert not a.exact and (a.samples, a.seed) == (20_000, 5)
    b_count = a.p_value * 20_001 - 1  # p = (b + 1) / (B + 1)
    assert b_count == pytest.approx(round(b_count), abs=1e-6)
    assert a.p_value == pytest.approx(exact.p_value, abs=0.01)


def test_p_value_is_never_zero():
    x = np.linspace(0.5, 0.9, 30)
    got = S.randomization_test(x, x - 0.2, samples=999)
    assert got.p_value == 1 / 1000


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bootstrap_equals_exact_enumeration(alternative):
    x, y = pair(n=5, shift=0.05, seed=4)
    got = S.bootstrap_test(x, y, alternative=alternative)
    assert got.exact and got.samples == 5**5
    d = x - y
    z = d - d.mean()
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(5))
    ts = []
    for idx in itertools.product(range(5), repeat=5):
        r = z[list(idx)]
        sd = r.std(ddof=1)
        with np.errstate(divide="ignore"):
            ts.append(0.0 if abs(r.mean()) < 1e-12 else r.mean() / (sd / math.sqrt(5)))
    ts = np.array(ts)
    extreme = {"two-sided": np.abs(ts) >= abs(t_obs) * (1 - 1e-9),
               "greater": ts >= t_obs - 1e-9 * abs(t_obs),
               "less": ts <= t_obs + 1e-9 * abs(t_obs)}[alternative]
    assert got.p_value == pytest.approx(extreme.mean(), abs=1e-12)
    assert got.statistic == pytest.approx(t_obs)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bootstrap_intervals_equal_scipy(method, alternative):
    # same seed, same draws: scipy.stats.bootstrap resamples with rng.integers(0, n, (B, n))
    x, y = pair(n=15, seed=7)
    got = S.paired_test(x, y, "t", ci=method, alternative=alternative, samples=5000, seed=11)
    ref = st.bootstrap((x - y,), np.mean, method=method, n_resamples=5000, rng=11,
                       alternative=alternative).confidence_interval
    assert (got.ci_low, got.ci_high) == pytest.approx((ref.low, ref.high), rel=1e-9)
    assert got.ci_method == method and (got.samples, got.seed) == (5000, 11)


def test_hedges_g():
    x, y = pair(n=20)
    d_av = np.mean(x - y) / np.sqrt((np.var(x, ddof=1) + np.var(y, ddof=1)) / 2)
    g = S.hedges_g(x, y)
    assert g == pytest.approx(d_av * (1 - 3 / (4 * 19 - 1)), rel=1e-3)  # Hedges' approximation
    assert S.paired_test(x, y, "t").hedges_g == g


def test_identical_systems():
    x, _ = pair()
    for test in S.TESTS:
        r = S.paired_test(x, x, test)
        assert (r.statistic, r.p_value, r.mean_diff, r.effect_size) == (0, 1, 0, 0)


def test_misaligned_topics_are_refused():
    with pytest.raises(EvaluationError, match=r"topics t3 only in x; topics t4 only in y"):
        S.paired_test({"t1": .1, "t2": .2, "t3": .3}, {"t1": .1, "t2": .2, "t4": .3})
    with pytest.raises(EvaluationError, match="3 values against 2"):
        S.t_test([.1, .2, .3], [.1, .2])
    with pytest.raises(EvaluationError, match="NaN"):
        S.t_test([.1, np.nan, .3], [.1, .2, .3])
    with pytest.raises(EvaluationError, match="two mappings"):
        S.t_test({"t1": .1, "t2": .2}, [.1, .2])
    # mappings are aligned by topic, whatever their order
    a = S.t_test({"t1": .1, "t2": .5, "t3": .4}, {"t3": .3, "t1": .2, "t2": .1})
    b = S.t_test([.1, .5, .4], [.2, .1, .3])
    assert a == b


def test_bad_choices():
    x, y = pair()
    with pytest.raises(StatisticsError, match="unknown test 'z'"):
        S.paired_test(x, y, "z")
    with pytest.raises(StatisticsError, match="unknown alternative"):
        S.paired_test(x, y, alternative="both")
    with pytest.raises(StatisticsError, match="unknown correction"):
        S.adjust_p([0.1], "sidak")


# ---- many systems --------------------------------------------------------------------------

def test_adjust_p():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> cummax
    assert S.adjust_p(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert S.adjust_p(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert S.adjust_p(p, "bh") == pytest.approx(st.false_discovery_control(p))
    assert S.adjust_p(p, "none") == pytest.approx(p)
    rows = np.array([p, p[::-1]])
    assert S.adjust_p(rows, "holm", axis=1)[1] == pytest.approx(S.adjust_p(p[::-1], "holm"))


def test_compare_all_pairs_equals_one_pair_at_a_time():
    sc = scores(m=5)
    for test in ("randomization", "bootstrap", "t", "wilcoxon", "sign"):
        c = S.compare(sc, test=test, correction="none", samples=2000, seed=3)
        assert len(c.pairs) == 10
        for pc in c.pairs:
            a, b = sc.systems.index(pc.system_a), sc.systems.index(pc.system_b)
            alone = S.paired_test(sc.values[a], sc.values[b], test, samples=2000, seed=3)
            assert pc.result == alone
            assert pc.p_adjusted == alone.p_value


def test_compare_baseline_and_correction_family():
    one, two = scores(measure="AP"), scores(seed=4, measure="nDCG@10")
    c = S.compare([one, two], baseline="s3", test="t", family="all")
    assert [(p.system_a, p.system_b) for p in c.for_measure("AP")] == \
        [("s0", "s3"), ("s1", "s3"), ("s2", "s3"), ("s4", "s3"), ("s5", "s3")]
    raw = np.array([p.result.p_value for p in c.pairs])
    assert [p.p_adjusted for p in c.pairs] == pytest.approx(S.adjust_p(raw, "holm"))
    per = S.compare([one, two], baseline="s3", test="t")  # default family: per measure
    assert per.family == "measure"
    assert [p.p_adjusted for p in per.for_measure("AP")] == \
        pytest.approx(S.adjust_p(raw[:5], "holm"))
    assert [p.p_adjusted for p in per.for_measure("nDCG@10")] == \
        pytest.approx(S.adjust_p(raw[5:], "holm"))
    assert c.pair("AP", "s3", "s0").system_a == "s0"
    assert c.mean("AP", "s0") == pytest.approx(one.values[0].mean())


def test_compare_refuses_incomplete_scores():
    v = scores().values.copy()
    v[2, [3, 7]] = np.nan
    sc = S.Scores("AP", [f"s{i}" for i in range(6)], [f"t{j:02d}" for j in range(25)], v)
    with pytest.raises(EvaluationError, match=r"system 's2' has no AP value for t03, t07"):
        S.compare(sc)
    assert len(sc.common_topics().topics) == 23
    with pytest.raises(StatisticsError, match="unknown baseline 'x'"):
        S.compare(sc.common_topics(), baseline="x")
    with pytest.raises(StatisticsError, match="give no correction"):
        S.compare(sc.common_topics(), test="tukey-hsd", correction="holm")


def test_resolution_note():
    c = S.compare(scores(m=12), test="randomization", samples=999)  # Holm: p < 0.05 / 66
    assert c.notes and "at least 1,320 samples" in c.notes[0]
    assert not S.compare(scores(m=12), samples=5000).notes


# ---- ANOVA and Tukey HSD -------------------------------------------------------------------

# Montgomery, Design and Analysis of Experiments (8th ed., 2013), Example 4.1: tensile strength
# of vascular grafts, 4 extrusion pressures (treatments) x 6 resin batches (blocks), a randomized
# complete block design; Table 4.4 prints SS 178.17 / 192.25 / 109.89 / 480.31, MS_E 7.33,
# F = 8.11, P = 0.0019.
MONTGOMERY = np.array([[90.3, 89.2, 98.2, 93.9, 87.4, 97.9],
                       [92.5, 89.5, 90.6, 94.7, 87.0, 95.8],
                       [85.5, 90.8, 89.6, 86.2, 88.0, 93.4],
                       [82.5, 89.5, 85.6, 87.4, 78.9, 90.7]])


def montgomery():
    return S.Scores("strength", ["8500", "8700", "8900", "9100"],
                    [f"batch{i}" for i in range(1, 7)], MONTGOMERY)


def test_anova_textbook_example():
    a = S.anova_two_way(montgomery())
    assert (a.df_system, a.df_topic, a.df_error) == (3, 5, 15)
    assert round(a.ss_system, 2) == 178.17
    assert round(a.ss_topic, 2) == 192.25
    assert round(a.ss_error, 2) == 109.89
    assert round(a.ss_total, 2) == 480.31
    assert round(a.ms_error, 2) == 7.33
    assert round(a.f_system, 2) == 8.11
    assert round(a.p_system, 4) == 0.0019


def test_tukey_hsd_textbook_example():
    # Tukey's test on Example 4.1: q_0.05(4, 15) = 4.08 from the studentised range table, so
    # T_0.05 = 4.08 * sqrt(7.33 / 6) = 4.51; 8500 and 8700 differ from 9100, no other pair.
    t = S.tukey_hsd(montgomery())
    assert round(t.critical_difference, 2) == 4.50  # 4.51 with q and MS_E rounded as printed
    assert round(st.studentized_range.ppf(0.95, 4, 15), 2) == 4.08
    significant = {(t.systems[i], t.systems[j]) for i in range(4) for j in range(i + 1, 4)
                   if t.p_values[i, j] <= 0.05}
    assert significant == {("8500", "9100"), ("8700", "9100")}
    i, j = 0, 3
    q = abs(t.means[i] - t.means[j]) / math.sqrt(t.ms_error / 6)
    assert t.p_values[i, j] == pytest.approx(st.studentized_range.sf(q, 4, 15), rel=1e-9)


def test_tukey_interpolated_sf_is_accurate():
    from irbench.stats.anova import _range_sf

    q = np.random.default_rng(0).uniform(0.1, 7, 200)  # > DIRECT_SF values: interpolated
    got = _range_sf(q, 30, 600)[::8]
    assert got == pytest.approx(st.studentized_range.sf(q[::8], 30, 600), rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("k, df, top", [(129, 128 * 49, 60.0), (10, 9 * 49, 30.0)])
def test_tukey_interpolation_holds_when_one_difference_is_far_out(k, df, top):
    """One huge q used to stretch an even grid over [0, max q] (errors up to 1e-3 in p near
    q = 4 for 129 systems); the grid now stops where p < 1e-13."""
    from irbench.stats.anova import _range_sf

    q = np.concatenate([np.random.default_rng(k).uniform(0.01, 10, 150), [top]])
    got, want = _range_sf(q, k, df), st.studentized_range.sf(q, k, df)
    large = want > 1e-12
    assert np.abs(got[large] / want[large] - 1).max() < 2e-6
    assert np.abs(got[~large] - want[~large]).max(initial=0) < 1e-9


def test_randomized_tukey_hsd():
    sc = scores(m=6, spread=0.08)
    a = S.randomized_tukey_hsd(sc, samples=3000, seed=2)
    assert S.randomized_tukey_hsd(sc, samples=3000, seed=2).p_values.tolist() == \
        a.p_values.tolist()
    diff = np.abs(a.means[:, None] - a.means[None, :])
    iu = np.triu_indices(6, 1)
    order = np.argsort(diff[iu])
    assert np.all(np.diff(a.p_values[iu][order]) <= 1e-12)  # larger difference, smaller p
    assert np.all(a.p_values[iu] >= 1 / 3001)
    # without system effects it agrees with the parametric Tukey HSD on normal scores (with
    # real differences the shuffled scores carry them, and it is the more conservative)
    null = scores(m=6, spread=0.0)
    assert np.abs(S.randomized_tukey_hsd(null, samples=3000, seed=2).p_values
                  - S.tukey_hsd(null).p_values).max() < 0.03
    c = S.compare(sc, test="randomized-tukey-hsd", samples=3000, seed=2)
    assert c.correction == "randomized-tukey-hsd"
    assert c.pair("AP", "s0", "s5").p_adjusted == a.p_values[0, 5]


# ---- tables and LaTeX ----------------------------------------------------------------------

def separated():
    # three clear tiers: {a, b} >> {c} >> {d, e}
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.4, 40)
    v = np.array([base + 0.3, base + 0.299, base + 0.15, base, base + 0.001])
    v = v + rng.normal(0, 0.01, v.shape)
    return S.Scores("AP", ["a_1", "b&2", "c", "d", "e"], [f"t{j}" for j in range(40)], v)


def test_pairwise_matrix_and_classes():
    c = S.compare(separated(), test="t")
    m = S.pairwise_matrix(c, "AP", "mean_diff")
    assert np.isnan(np.diag(m.values)).all()
    assert m.values[0, 2] == pytest.approx(-m.values[2, 0])
    assert m.values[0, 2] == pytest.approx(0.15, abs=0.01)
    p = S.pairwise_matrix(c, "AP", "p_adjusted").values
    assert np.allclose(p, p.T, equal_nan=True)
    assert S.equivalence_classes(c, "AP") == (("a_1", "b&2"), ("c",), ("d", "e"))
    assert S.beaten(c, "AP")["c"] == ("d", "e")
    with pytest.raises(StatisticsError, match="need all pairs"):
        S.equivalence_classes(S.compare(separated(), baseline="c"), "AP")


def test_latex_table():
    c = S.compare([separated(), S.Scores("P@10", separated().systems, separated().topics,
                                         separated().values[::-1])], test="t")
    tex = S.latex_table(c)
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"\begin{tabular}{clcc}" in tex
    rows = [line for line in tex.splitlines() if line.startswith(("a &", "b &", "c &"))]
    assert rows[0].startswith(r"a & a\_1 & \textbf{")
    assert r"$^{cde}$" in rows[0]  # beats c, d and e on AP
    assert rows[1].startswith(r"b & b\&2 & ")
    assert "paired t-test with Holm correction per measure" in tex


def test_escape_latex():
    assert S.escape_latex(r"a_b&c%d#e$f{g}h~i^j\k") == (
        r"a\_b\&c\%d\#e\$f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")
    assert labels(28)[-3:] == ["z", "aa", "ab"]


# ---- agreement -----------------------------------------------------------------------------

def _tau_ap_brute(reference, other):
    order = sorted(range(len(other)), key=lambda i: -other[i])
    total = 0.0
    for i in range(1, len(order)):
        c = sum(reference[order[j]] > reference[order[i]] for j in range(i))
        total += c / i
    return 2 / (len(order) - 1) * total - 1


def test_tau_ap():
    truth = np.array([8.0, 7, 6, 5])
    assert S.tau_ap(truth, truth) == 1 and S.tau_ap(truth, -truth) == -1
    top = np.array([7.0, 8, 6, 5])  # the top two swapped: (N - 3) / (N - 1)
    bottom = np.array([8.0, 7, 5, 6])  # the bottom two swapped: 7/9 for N = 4
    assert S.tau_ap(truth, top) == pytest.approx(1 / 3)
    assert S.tau_ap(truth, bottom) == pytest.approx(7 / 9)
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b = rng.random(12), rng.random(12)
        assert S.tau_ap(a, b) == pytest.approx(_tau_ap_brute(a, b))


def test_rank_agreement():
    one, two = scores(seed=3), scores(seed=9)
    r = S.rank_agreement(one, two)
    ref = st.kendalltau(one.means, two.means)
    assert (r.tau, r.p_value) == pytest.approx((ref.statistic, ref.pvalue))
    assert r.pairs == 15 and r.swaps == round((1 - r.tau) / 2 * 15)
    assert S.swaps([1, 2, 3, 3], [1, 3, 2, 5]) == 1


def test_discriminative_power():
    sc = separated()
    d = S.discriminative_power(sc, test="t", alpha=0.05)
    assert (d.pairs, d.significant) == (10, 8)  # all but a-b and d-e
    assert d.share == 0.8 and np.all(np.diff(d.p_values) >= 0)


# ---- planning ------------------------------------------------------------------------------

def test_topic_set_size_t_design():
    # G*Power 3: paired t-test, d_z = 0.5, alpha 0.05 two-tailed, power 0.8 -> 34 pairs, actual
    # power 0.8078; d_z = 0.3 -> 90
    plan = S.topic_set_size(0.05, 0.1**2)
    assert plan.topics == 34 and plan.achieved_power == pytest.approx(0.8078, abs=1e-4)
    assert S.topic_set_size(0.03, 0.1**2).topics == 90
    assert S.power(33, 0.05, 0.01) < 0.8 <= S.power(34, 0.05, 0.01)


def test_topic_set_size_anova_design():
    # with two systems the blocked ANOVA's F is the paired t squared
    for n in (10, 25, 60):
        assert S.power(n, 0.04, 0.02, design="anova", systems=2) == pytest.approx(
            S.power(n, 0.04, 2 * 0.02, design="t"), rel=1e-6)
    # Monte Carlo: 5 systems, two at +-d/2, 20 topics; the F test rejects as often as predicted
    rng = np.random.default_rng(0)
    m, n, d, sigma, sims = 5, 20, 0.1, 0.1, 4000
    effects = np.array([d / 2, -d / 2, 0, 0, 0])[None, :, None]
    v = effects + rng.normal(0, 1, (sims, 1, n)) + rng.normal(0, sigma, (sims, m, n))
    resid = v - v.mean(2, keepdims=True) - v.mean(1, keepdims=True) + v.mean((1, 2), keepdims=True)
    ms_s = n * ((v.mean(2) - v.mean((1, 2))[:, None]) ** 2).sum(1) / (m - 1)
    ms_e = (resid**2).sum((1, 2)) / ((m - 1) * (n - 1))
    rejected = (ms_s / ms_e > st.f.ppf(0.95, m - 1, (m - 1) * (n - 1))).mean()
    predicted = S.power(n, d, sigma**2, design="anova", systems=m)
    assert rejected == pytest.approx(predicted, abs=0.025)
    plan = S.topic_set_size(d, sigma**2, design="anova", systems=m, current_topics=n)
    assert plan.current_power == pytest.approx(predicted)
    assert S.power(plan.topics - 1, d, sigma**2, design="anova", systems=m) < 0.8
    assert plan.achieved_power >= 0.8


def test_estimate_variance_is_the_mean_pairwise_variance():
    sc = scores(m=7)
    i, j = np.triu_indices(7, 1)
    mean_var = np.var(sc.values[i] - sc.values[j], axis=1, ddof=1).mean()
    assert S.estimate_variance(sc, "t") == pytest.approx(mean_var)
    assert S.estimate_variance(sc, "anova") == pytest.approx(mean_var / 2)
    plan = S.plan_topics(sc, 0.05)
    assert plan.current_topics == 25 and plan.systems == 7


def test_more_samples_than_sign_vectors_samples_when_enumeration_is_too_large(monkeypatch):
    """Asking for at least 2^topics samples with more than 20 topics sampled nothing and
    raised; exact enumeration is used only when it fits, else the asked samples are drawn.
    (The enumeration limit is lowered here so that the arrays stay small.)"""
    from irbench.stats import resampling

    monkeypatch.setattr(resampling, "MAX_EXACT_SIGNS", 2**10)
    flips = resampling.sign_flips(11, 2**11 + 1, seed=3)
    assert not flips.exact and flips.samples == 2**11 + 1 and flips.seed == 3
    small = resampling.sign_flips(10, 5000, seed=3)
    assert small.exact and small.samples == 1024
    counts = resampling.bootstrap_counts(5, 5**5, seed=1)  # 3,125 draws > 2^10
    assert not counts.exact and counts.samples == 5**5


def test_a_wilcoxon_p_value_does_not_depend_on_the_other_pairs():
    """Each pair gets the method scipy would choose for it alone (exact without zeros or
    ties, else the normal approximation), recorded in the result."""
    import scipy.stats as st

    rng = np.random.default_rng(4)
    a, b = rng.random(30), rng.random(30)
    c = a.copy()
    c[5] = b[5]  # c - b has a zero
    alone = S.paired_test(a, b, "wilcoxon")
    assert alone.method == "exact" and alone.p_value == st.wilcoxon(a, b).pvalue
    from irbench.stats.paired import paired_columns

    batch = paired_columns(np.column_stack([a, c]), np.column_stack([b, b]), "wilcoxon")
    assert batch.p_value[0] == alone.p_value  # beside a pair with a zero, still exact
    assert list(batch.method) == ["exact", "approx"]
    assert batch.p_value[1] == st.wilcoxon(c, b).pvalue


def test_randomized_tukey_hsd_does_not_depend_on_the_order_of_the_systems():
    rng = np.random.default_rng(9)
    names = [f"s{i}" for i in range(8)]
    values = rng.random((8, 25)) + np.linspace(0, 0.3, 8)[:, None]
    forward = S.randomized_tukey_hsd(S.Scores("AP", names, [f"t{j}" for j in range(25)],
                                              values), samples=2000, seed=5)
    backward = S.randomized_tukey_hsd(S.Scores("AP", names[::-1], [f"t{j}" for j in range(25)],
                                               values[::-1]), samples=2000, seed=5)
    assert np.array_equal(forward.p_values, backward.p_values[::-1, ::-1])
    assert forward.critical_difference == backward.critical_difference


def test_discriminative_power_of_a_tukey_test_needs_no_correction():
    rng = np.random.default_rng(2)
    topics = [f"t{j}" for j in range(20)]
    ap = S.Scores("AP", ["a", "b", "c"], topics, rng.random((3, 20)))
    power = S.discriminative_power(ap, test="randomized-tukey-hsd", samples=200)
    assert power.correction == "randomized-tukey-hsd" and power.pairs == 3


def test_compare_has_one_default_for_the_api_and_the_command_line():
    """All pairs of 3+ systems: the randomised Tukey HSD (as irbench compare); a baseline or two
    systems: randomisation with Holm."""
    sc = scores(m=6, spread=0.08)
    assert S.compare(sc).test == "randomized-tukey-hsd"
    assert S.compare(sc, baseline="s0").test == "randomization"
    assert S.compare(sc.select(["s0", "s1"])).test == "randomization"
    assert S.compare(sc).family == "measure"


def test_a_tukey_test_over_all_measures_is_bonferroni_corrected_across_them():
    one, two = scores(measure="AP", spread=0.08), scores(seed=4, measure="nDCG@10", spread=0.08)
    per = S.compare([one, two], test="tukey-hsd")
    every = S.compare([one, two], test="tukey-hsd", family="all")
    assert [p.result.p_value for p in per.pairs] == [p.result.p_value for p in every.pairs]
    assert [p.p_adjusted for p in every.pairs] == pytest.approx(
        [min(1.0, 2 * p.p_adjusted) for p in per.pairs])
    assert "Bonferroni over the 2 measures" in S.describe(every)
    alone = S.compare(one, test="tukey-hsd", family="all")  # one measure: nothing to add
    assert [p.p_adjusted for p in alone.pairs] == [p.p_adjusted for p in per.for_measure("AP")]


def test_latex_superscripts_stay_unambiguous_past_26_systems():
    rng = np.random.default_rng(1)
    v = rng.beta(2, 5, (1, 30)) + np.linspace(0.3, 0, 30)[:, None] + rng.normal(0, 0.02, (30, 30))
    sc = S.Scores("AP", [f"s{i}" for i in range(30)], [f"t{j}" for j in range(30)], v)
    rows = [r for r in S.latex_table(S.compare(sc, test="t", correction="none")).splitlines()
            if r.startswith("a & ")]
    from irbench.stats.latex import labels

    sup = rows[0].split("$^{")[1].split("}$")[0]
    assert "," in sup and all(label in labels(30) for label in sup.split(","))


@pytest.mark.parametrize("test", ["tukey-hsd", "randomized-tukey-hsd"])
def test_all_pairs_intervals_agree_with_the_tukey_p_values(test):
    """Simultaneous intervals (mean difference +/- the critical difference) beside Tukey
    p-values: never an interval that excludes 0 beside p = 0.7 (per-pair t intervals did)."""
    sc = scores(m=8, spread=0.06)
    c = S.compare(sc, test=test, alpha=0.05)
    assert {p.result.ci_method for p in c.pairs} == {"tukey"}
    for pair in c.pairs:
        excludes_zero = pair.result.ci_low > 0 or pair.result.ci_high < 0
        if abs(pair.p_adjusted - 0.05) > 0.01:  # away from the boundary (resampling noise)
            assert excludes_zero == pair.significant, (pair.system_a, pair.system_b)
        assert pair.result.confidence == pytest.approx(0.95)
