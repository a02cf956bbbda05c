"""Agreement between judges (issue 27): Cohen's kappa equal to scikit-learn's
cohen_kappa_score and Krippendorff's alpha equal to the krippendorff package (to 1e-12), on
the demo's qrels and a synthetic 4-level set; pairs matched by (topic, document); the command
line's table, CSV and JSON."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import irbench
from irbench import cli
from irbench.errors import EvaluationError
from irbench.judgments.agreement import (
    agreement,
    alpha_of,
    cohen_kappa,
    kappa_of_confusion,
    krippendorff_alpha,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")

DEMO = Path(__file__).resolve().parent.parent / "runs" / "demo"


def _sklearn(a, b, weights=None) -> float:
    with warnings.catch_warnings():  # its own warning for one label only: NaN, as ours
        warnings.simplefilter("ignore")
        return float(sklearn_metrics.cohen_kappa_score(a, b, weights=weights))


def _same(x: float, y: float) -> bool:
    return (np.isnan(x) and np.isnan(y)) or abs(x - y) <= 1e-12


def _four_level(tmp_path, seed=3, topics=30, docs=40, noise=0.35):
    """Two 4-level qrels over overlapping (topic, doc) pairs: the other agrees with the
    reference except on a random share, and each judged some pairs the other did not."""
    rng = np.random.default_rng(seed)
    ref, other = [], []
    for t in range(topics):
        for d in range(docs):
            grade = int(min(3, rng.poisson(0.8)))
            if rng.random() < 0.9:
                ref.append(f"q{t} 0 d{t}-{d} {grade}\n")
            if rng.random() < 0.85:
                guess = grade if rng.random() > noise else int(rng.integers(0, 4))
                other.append(f"q{t} 0 d{t}-{d} {guess}\n")
    a, b = tmp_path / "ref.qrels", tmp_path / "llm.qrels"
    a.write_text("".join(ref))
    b.write_text("".join(other))
    return a, b


def _pairs(a: Path, b: Path) -> tuple[list[int], list[int], list[str]]:
    """The labels of the pairs both judged, by a plain dictionary (the test's own join)."""
    def read(path):
        return {(q, d): int(r) for q, _, d, r in map(str.split, path.read_text().splitlines())}
    ra, rb = read(a), read(b)
    common = sorted(set(ra) & set(rb))
    return [ra[k] for k in common], [rb[k] for k in common], [k[0] for k in common]


@pytest.mark.parametrize("which", ["demo", "four-level"])
def test_kappa_and_alpha_equal_the_reference_packages(tmp_path, which):
    if which == "demo":
        a, b = DEMO / "qrels.txt", tmp_path / "other.qrels"
        rng = np.random.default_rng(9)  # the demo's judgments, a share of them changed
        lines = []
        for line in a.read_text().splitlines():
            q, it, d, r = line.split()
            if rng.random() < 0.8:
                lines.append(f"{q} {it} {d} {r if rng.random() > 0.3 else rng.integers(0, 3)}\n")
        b.write_text("".join(lines))
    else:
        a, b = _four_level(tmp_path)
    x, y, topics = _pairs(a, b)
    got = agreement(a, b, relevance_level=2)
    assert got.pairs == len(x) and got.only_reference + got.pairs == len(
        a.read_text().splitlines())
    assert _same(got.kappa, _sklearn(x, y))
    assert _same(got.kappa_linear, _sklearn(x, y, "linear"))
    assert _same(got.kappa_quadratic, _sklearn(x, y, "quadratic"))
    assert _same(got.kappa_binary, _sklearn(np.array(x) >= 2, np.array(y) >= 2))
    data = np.array([x, y], dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        assert _same(getattr(got, f"alpha_{level}"),
                     krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    assert got.agreed == pytest.approx(np.mean(np.array(x) == np.array(y)), abs=1e-15)
    assert got.confusion.sum() == len(x)
    for t in got.per_topic:  # per topic, the topic's own pairs
        keep = [i for i, q in enumerate(topics) if q == t.topic]
        xt, yt = [x[i] for i in keep], [y[i] for i in keep]
        assert t.pairs == len(keep) and _same(t.kappa, _sklearn(xt, yt))


def test_kappa_and_alpha_on_random_labels_equal_the_references():
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(2, 200))
        a = rng.integers(0, int(rng.integers(1, 5)), n)
        b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 4, n))
        for weights in (None, "linear", "quadratic"):
            assert _same(cohen_kappa(a, b, weights), _sklearn(a, b, weights))
        data = np.vstack([a, b, np.where(rng.random(n) < 0.7, a, 3)]).astype(float)
        data[rng.random(data.shape) < 0.15] = np.nan  # missing labels, many judges
        for level in ("nominal", "ordinal", "interval"):
            try:
                expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            except ValueError:  # the package refuses data with one value: ours says NaN
                expected = float("nan")
            assert _same(krippendorff_alpha(data, level), expected)


def test_many_judges_with_missing_labels(tmp_path):
    a, b = _four_level(tmp_path, seed=4)
    c = tmp_path / "third.qrels"
    c.write_text("".join(line for i, line in enumerate(b.read_text().splitlines(True))
                         if i % 3))
    sets = [irbench.read_qrels(p) for p in (a, b, c)]
    keys = sorted({(q, d) for s in sets for q, d in zip(s.query_id, s.doc_id)})
    index = {k: i for i, k in enumerate(keys)}
    data = np.full((3, len(keys)), np.nan)
    for j, s in enumerate(sets):
        for q, d, r in zip(s.query_id, s.doc_id, s.relevance):
            data[j, index[(q, d)]] = r
    for level in ("nominal", "ordinal", "interval"):
        assert _same(alpha_of([a, b, c], level),
                     krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_no_pair_in_common_is_an_error():
    with pytest.raises(EvaluationError, match="no \\(topic, document\\) pair in common"):
        agreement({"1": {"a": 1}}, {"2": {"a": 1}})


def test_identical_labels_and_a_single_grade():
    same = agreement({"1": {"a": 1, "b": 0}}, {"1": {"a": 1, "b": 0}})
    assert same.kappa == 1.0 and same.agreed == 1.0
    one_grade = agreement({"1": {"a": 1, "b": 1}}, {"1": {"a": 1, "b": 1}})
    assert np.isnan(one_grade.kappa) and np.isnan(one_grade.alpha_nominal)
    assert np.isnan(kappa_of_confusion(np.array([[3]])))


def test_the_command_line(tmp_path, capsys):
    a, b = _four_level(tmp_path)
    c = tmp_path / "copy.qrels"
    c.write_text(a.read_text())
    assert cli.main(["agreement", str(a), str(b), str(c), "--per-topic"]) == 0
    captured = capsys.readouterr()
    assert "agreement with ref.qrels on the pairs both judged" in captured.out
    assert "all 3 judges together: Krippendorff's alpha nominal" in captured.out
    assert "llm.qrels per topic:" in captured.out
    assert "pairs judged by both" in captured.err
    assert cli.main(["agreement", str(a), str(b), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)["agreements"][0]
    x, y, _ = _pairs(a, b)
    assert record["pairs"] == len(x) and _same(record["kappa"], _sklearn(x, y))
    assert sum(map(sum, record["confusion"])) == len(x)
    assert cli.main(["agreement", str(a), str(b), "--format", "csv", "-o",
                     str(tmp_path / "a.csv")]) == 0
    lines = (tmp_path / "a.csv").read_text().splitlines()
    assert lines[0].startswith("reference,other,pairs") and len(lines) == 2
    assert all(float(v) == float(v) or v == "nan" for v in lines[1].split(",")[5:])  # numbers
    assert irbench.agreement(a, c).kappa == 1.0


def test_leaderboards_compared_across_qrels_sets(tmp_path, capsys):
    """compare-qrels on the demo: the numbers are those of the parts computed apart (scipy's
    Kendall's tau, tau_AP, one stats.compare per set), on the common topics."""
    from campaigns import copy_demo
    from scipy import stats as st

    from irbench import stats
    from irbench.config import load_config
    from irbench.store import Store

    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", str(config)]) == 0
    capsys.readouterr()
    with Store(load_config(config).store, read_only=True) as store:
        a = stats.Scores.from_store(store, "official", "AP")
        b = stats.Scores.from_store(store, "depth5", "AP")
    got = stats.compare_leaderboards(a, b, qrels_a="official", qrels_b="depth5", top_k=5)
    common = [t for t in a.topics if t in set(b.topics)]
    ma = np.array([np.mean(a.values[i, [a.topics.index(t) for t in common]])
                   for i in range(len(a.systems))])
    mb = np.array([np.mean(b.values[b.systems.index(s), [b.topics.index(t) for t in common]])
                   for s in a.systems])
    assert got.topics == len(common) and got.systems == len(a.systems)
    assert got.tau == pytest.approx(st.kendalltau(ma, mb).statistic, abs=1e-12)
    assert got.tau_ap == pytest.approx(stats.tau_ap(ma, mb), abs=1e-12)
    ranks_a = {s: r for r, s in enumerate(np.array(a.systems)[np.argsort(-ma, kind="stable")], 1)}
    ranks_b = {s: r for r, s in enumerate(np.array(a.systems)[np.argsort(-mb, kind="stable")], 1)}
    assert {(m.system, m.rank_a, m.rank_b) for m in got.moves} == {
        (s, ranks_a[s], ranks_b[s]) for s in a.systems}
    assert got.top_overlap == len({s for s, r in ranks_a.items() if r <= 5}
                                  & {s for s, r in ranks_b.items() if r <= 5})
    significant = []
    for scores in (a, b):
        sub = stats.Scores(scores.measure, scores.systems, tuple(common),
                           scores.values[:, [scores.topics.index(t) for t in common]])
        significant.append({frozenset((p.system_a, p.system_b)) for p in
                            stats.compare(sub, test="t", correction="holm").pairs
                            if p.significant})
    assert {frozenset(p) for p in got.significant_both} == significant[0] & significant[1]
    assert {frozenset(p) for p in got.significant_only_a} == significant[0] - significant[1]
    assert {frozenset(p) for p in got.significant_only_b} == significant[1] - significant[0]
    assert cli.main(["compare-qrels", str(config), "--measure", "AP", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "AP: depth5 against official" in out and f"tau {got.tau:.4f}" in out
    assert "labels of depth5 against official" in out
    assert cli.main(["compare-qrels", str(config), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["leaderboards"][0]["reference"] == "official"
    assert record["labels"][0]["kappa"] == 1.0  # depth5 is a subset of the official labels
