"""Answer measures through everything that reads a store (issue 39): a campaign of four
answer runs and a ranked run (tests/data/answers_compare: 8 topics; NIST-style support labels
and a model's of the same citations, as JSONL and as the flat TSV; two nugget assignment
sets; document qrels the answers' references are scored on).

The values the store holds are those of ``irbench eval`` and of the issue's formulas, written
here once more as plain loops over the files; ``compare`` (paired tests, Holm, intervals),
``compare-qrels`` (tau, tau_AP, differences that appear or vanish, label agreement), the
leaderboards per suite, ``scores`` exports and the notebook's frames are checked against
scipy, scikit-learn and the krippendorff package on those values. A ranked run has no row on
an answer set, and an answer measure is refused on document qrels.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess
import sys
import warnings
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from irbench import cli, open_store
from irbench.errors import EvaluationError, NotStoredError, UsageError

DATA = Path(__file__).resolve().parent / "data" / "answers_compare"
RUNS = ("a1", "a2", "a3", "a4")
TOPICS = tuple(f"t{i}" for i in range(1, 9))
VITAL_STRICT = "nugget_score(importance=vital,strict=true)"
WEIGHT = {2: 1.0, 1: 0.5, 0: 0.0}
HARD = {2: 1.0, 1: 0.0, 0: 0.0}
ASSIGNED = {"support": 2, "partial_support": 1, "not_support": 0}


# ---- the campaign and the test's own reading of its files -------------------------------


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("answers") / "campaign"
    shutil.copytree(DATA, folder)
    config = folder / "config.yaml"
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    return config


def _answers(run: str) -> dict[str, list[tuple[str, list[str]]]]:
    """{topic: [(sentence text, cited segment ids)]} of one answer file."""
    out = {}
    for line in (DATA / "answers" / f"{run}.jsonl").read_text().splitlines():
        obj = json.loads(line)
        out[obj["topic_id"]] = [(s["text"], [obj["references"][i] for i in s["citations"]])
                                for s in obj["answer"]]
    return out


def _support_jsonl(name: str) -> dict[tuple, int]:
    """{(topic, run, sentence, reference): label} of a NIST-style JSONL."""
    out = {}
    for line in (DATA / "judgments" / name).read_text().splitlines():
        obj = json.loads(line)
        for s, sentence in enumerate(obj["sentences"]):
            for c in sentence["citations"]:
                out[obj["topic_id"], obj["run_id"], s, c["reference"]] = int(c["support"])
    return out


def _support_tsv(name: str) -> dict[tuple, int]:
    rows = [line.split("\t") for line in (DATA / "judgments" / name).read_text().splitlines()]
    return {(t, r, int(s), ref): int(label) for t, r, s, _, ref, label in rows[1:]}


def _texts(name: str) -> dict[tuple, int]:
    """{(topic, sentence text, reference): label} of a JSONL (labels agree across runs)."""
    out = {}
    for line in (DATA / "judgments" / name).read_text().splitlines():
        obj = json.loads(line)
        for sentence in obj["sentences"]:
            for c in sentence["citations"]:
                key = (obj["topic_id"], sentence["text"], c["reference"])
                assert out.setdefault(key, int(c["support"])) == int(c["support"])
    return out


def _assignments(name: str) -> dict[tuple, tuple[str, bool, int]]:
    """{(topic, run, nugget position): (text, vital, 2/1/0)}."""
    out = {}
    for line in (DATA / "judgments" / name).read_text().splitlines():
        obj = json.loads(line)
        for n, nugget in enumerate(obj["nuggets"]):
            out[obj["qid"], obj["run_id"], n] = (nugget["text"], nugget["importance"] == "vital",
                                                 ASSIGNED[nugget["assignment"]])
    return out


def _support_scores(labels: dict[tuple, int], weight=WEIGHT) -> dict[str, dict]:
    """The issue's formulas: per run and topic, over the first citation of each sentence,
    -1 left out of both denominators, an uncited sentence in recall's; 0 for a topic the run
    did not answer. The topics are those the labels name."""
    topics = sorted({k[0] for k in labels})
    out: dict[str, dict] = {"support_precision": {}, "support_recall": {}}
    for run in RUNS:
        answers = _answers(run)
        for t in topics:
            total = judged = sentences = unjudged = 0.0
            for s, (_, cited) in enumerate(answers.get(t, [])):
                sentences += 1
                if not cited:
                    continue
                label = labels.get((t, run, s, cited[0]), -1)
                if label < 0:
                    unjudged += 1
                    continue
                judged += 1
                total += weight[label]
            out["support_precision"][run, t] = total / judged if judged else 0.0
            out["support_recall"][run, t] = (total / (sentences - unjudged)
                                             if sentences - unjudged else 0.0)
    return out


def _nugget_scores(assigned: dict[tuple, tuple]) -> dict[str, dict]:
    """Vital-strict and A (all nuggets, partial 0.5) per run and topic; an empty set 0, and
    0 on a topic the run did not answer (a3's t8, though it has assignments)."""
    topics = sorted({k[0] for k in assigned})
    out: dict[str, dict] = {VITAL_STRICT: {}, "nugget_score": {}}
    for run in RUNS:
        answered = _answers(run)
        for t in topics:
            mine = [v for k, v in sorted(assigned.items()) if k[:2] == (t, run)
                    and t in answered]
            vital = [1.0 if g == 2 else 0.0 for _, is_vital, g in mine if is_vital]
            every = [g / 2 for _, _, g in mine]
            out[VITAL_STRICT][run, t] = sum(vital) / len(vital) if vital else 0.0
            out["nugget_score"][run, t] = (sum(every) / len(every)
                                                           if every else 0.0)
    return out


EXPECTED = {  # qrels set: measure -> {(run, topic): value}, by the formulas above
    "support": lambda: {**_support_scores(_support_jsonl("support.jsonl")),
                        "support_precision(weight=hard)": _support_scores(
                            _support_jsonl("support.jsonl"), HARD)["support_precision"]},
    "support_llm": lambda: {**_support_scores(_support_tsv("support_llm.tsv")),
                            "support_precision(weight=hard)": _support_scores(
                                _support_tsv("support_llm.tsv"), HARD)["support_precision"]},
    "nuggets": lambda: _nugget_scores(_assignments("assign.jsonl")),
    "nuggets_llm": lambda: _nugget_scores(_assignments("assign_llm.jsonl")),
}
EXPECTED["shared"] = EXPECTED["support"]  # labels that agree across runs: the same values


def _means(values: dict) -> dict[str, float]:
    return {run: float(np.mean([v for (r, _), v in values.items() if r == run]))
            for run in RUNS}


def _main(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _sklearn_kappa(a, b, weights=None) -> float:
    metrics = pytest.importorskip("sklearn.metrics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(metrics.cohen_kappa_score(a, b, weights=weights))


def _alpha(rows, level: str = "ordinal") -> float:
    krippendorff = pytest.importorskip("krippendorff")
    return float(krippendorff.alpha(reliability_data=np.array(rows, dtype=float),
                                    level_of_measurement=level))


# ---- the store's values ------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("qrels", ["support", "support_llm", "shared", "nuggets", "nuggets_llm"])
def test_stored_values_are_the_formulas_and_irbench_eval(campaign, capsys, qrels):
    expected = EXPECTED[qrels]()
    frame = open_store(campaign).per_query(qrels)
    assert set(frame["system"]) == set(RUNS)  # no ranked run on an answer set
    assert not frame["value"].isna().any()
    stored = {(r.measure, r.system, r.query_id): r.value for r in frame.itertuples()}
    for measure, values in expected.items():
        assert {k[1:]: v for k, v in stored.items() if k[0] == measure} == pytest.approx(
            values, abs=1e-12), measure
        means = open_store(campaign).means(qrels, measures=[measure])
        assert dict(zip(means["system"], means["value"])) == pytest.approx(
            _means(values), abs=1e-12)
    # irbench eval on the same files: the same per-topic values
    spec = {"support": ("support", "support.jsonl"), "shared": ("support", "support.jsonl"),
            "support_llm": ("support", "support_llm.tsv"),
            "nuggets": ("nuggets", "assign.jsonl"), "nuggets_llm": ("nuggets", "assign_llm.jsonl")}
    kind, name = spec[qrels]
    measures = [a for m in expected for a in ("-m", m)]
    code, out, _ = _main(capsys, "eval", "-R", kind, "-q", *measures, "--format", "json",
                         DATA / "judgments" / name,
                         *(DATA / "answers" / f"{r}.jsonl" for r in RUNS))
    assert code == 0
    evaluated = {(x["measure"], x["run"], x["topic"]): x["value"] for x in json.loads(out)}
    for measure, values in expected.items():
        assert {(r, t): evaluated[measure, r, t] for r, t in values} == pytest.approx(
            values, abs=1e-12)
        assert {r: evaluated[measure, r, "all"] for r in RUNS} == pytest.approx(
            _means(values), abs=1e-12)


@pytest.mark.timeout(120)
def test_document_qrels_score_every_system_and_take_no_answer_measure(campaign, capsys):
    frame = open_store(campaign).means("official")
    assert set(frame["system"]) == {"bm25", *RUNS}  # the answers' references, ranked
    assert set(frame["measure"]) == {"AP", "nDCG@10"} and not frame["value"].isna().any()
    code, _, err = _main(capsys, "scores", campaign, "--qrels", "official", "--measure",
                         "support_precision")
    assert code == NotStoredError.exit_code
    assert "measure 'support_precision' is not scored on qrels 'official' (adhoc judgments " \
           "do not give it)" in err
    code, _, err = _main(capsys, "scores", campaign, "--qrels", "support", "--measure", "AP")
    assert code == NotStoredError.exit_code and "(support judgments do not give it)" in err
    code, _, err = _main(capsys, "scores", campaign, "--qrels", "support", "--system", "bm25")
    assert code == NotStoredError.exit_code
    assert "system 'bm25' is a ranked run: support judgments (qrels 'support') do not score " \
           "it" in err and "irbench run" not in err


@pytest.mark.timeout(120)
def test_scores_exports_hold_the_answer_systems_only(campaign, capsys, tmp_path):
    expected = EXPECTED["support_llm"]()
    code, out, _ = _main(capsys, "scores", campaign, "--qrels", "support_llm", "--format",
                         "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["system"] for r in rows} == set(RUNS) and all(r["value"] for r in rows)
    for measure in ("support_precision", "support_recall"):
        got = {r["system"]: float(r["value"]) for r in rows if r["measure"] == measure}
        assert got == pytest.approx(_means(expected[measure]), abs=1e-12)
    code, out, _ = _main(capsys, "scores", campaign, "--qrels", "nuggets", "--per-query",
                         "--measure", VITAL_STRICT, "--format", "json")
    assert code == 0
    got = {(r["system"], r["query_id"]): r["value"] for r in json.loads(out)}
    assert got == pytest.approx(EXPECTED["nuggets"]()[VITAL_STRICT], abs=1e-12)
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    folder = tmp_path / "parquet"
    code, _, _ = _main(capsys, "scores", campaign, "--per-query", "--format", "parquet",
                       "--partition-by", "qrels", "-o", folder)
    assert code == 0
    frame = pandas.read_parquet(folder)
    answer_sets = frame[~frame["qrels"].astype(str).eq("official")]
    assert set(answer_sets["system"]) == set(RUNS) and not frame["value"].isna().any()
    support = frame[frame["qrels"].astype(str).eq("support")
                    & frame["measure"].eq("support_recall")]
    assert dict(zip(zip(support["system"], support["query_id"]), support["value"])) == \
        pytest.approx(EXPECTED["support"]()["support_recall"], abs=1e-12)


@pytest.mark.timeout(120)
def test_the_leaderboard_of_every_suite_on_an_answer_set(campaign):
    from irbench.config import load_config
    from irbench.report.leaderboard import leaderboards_on
    from irbench.store import Store

    config = load_config(str(campaign))
    with Store(config.store, read_only=True) as store:
        boards = {b.suite: b for b in leaderboards_on(config, store, "support", 0)}
        official = leaderboards_on(config, store, "official", 0)
    expected = EXPECTED["support"]()
    assert boards["main"].measures == ("support_precision", "support_recall", "answer_words")
    assert boards["more"].measures == ("support_precision(weight=hard)",)
    for board in boards.values():
        means = {m: _means(expected[m]) for m in board.measures if m in expected}
        first = board.measures[0]
        assert [r.name for r in board.rows] == sorted(RUNS, key=lambda s: (-means[first][s], s))
        for row in board.rows:
            for measure, cell in zip(board.measures, row.cells):
                assert cell.value is not None and math.isfinite(cell.value)
                if measure in means:
                    assert cell.value == pytest.approx(means[measure][row.name], abs=1e-12)
    assert [b.suite for b in official] == ["main"]  # 'more' has no measure of documents
    assert official[0].measures == ("AP", "nDCG@10")
    assert {r.name for r in official[0].rows} == {"bm25", *RUNS}


# ---- compare --------------------------------------------------------------------------------


def _t_pairs(values: dict, order: list[str]) -> dict[tuple[str, str], dict]:
    """Paired t-tests of every pair (first the better by mean), Holm over the pairs, t
    intervals: scipy's, on the per-topic values."""
    from scipy import stats as st

    x = {r: np.array([values[r, t] for t in sorted({t for _, t in values})]) for r in order}
    pairs = list(combinations(order, 2))
    found = {}
    for a, b in pairs:
        d = x[a] - x[b]
        half = st.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
        found[a, b] = {"p": float(st.ttest_rel(x[a], x[b]).pvalue), "diff": d.mean(),
                       "ci": (d.mean() - half, d.mean() + half),
                       "d_z": d.mean() / d.std(ddof=1)}
    ranked = sorted(found, key=lambda k: found[k]["p"])  # Holm, step down
    running = 0.0
    for i, key in enumerate(ranked):
        running = max(running, min(1.0, (len(pairs) - i) * found[key]["p"]))
        found[key]["p_holm"] = running
    return found


@pytest.mark.timeout(120)
def test_compare_on_support_labels_is_scipy_on_the_stored_values(campaign, capsys):
    expected = EXPECTED["support"]()["support_precision"]
    code, out, err = _main(capsys, "compare", campaign, "--qrels", "support", "--measure",
                           "support_precision", "--all-pairs", "--test", "t", "--correction",
                           "holm", "--format", "json")
    assert code == 0 and "bm25" not in err  # a ranked run is not 'missing' from support
    result = json.loads(out)
    means = _means(expected)
    order = sorted(RUNS, key=lambda r: -means[r])
    assert result["systems"] == order
    reference = _t_pairs(expected, order)
    pairs = result["measures"][0]["pairs"]
    assert len(pairs) == 6 and result["measures"][0]["topics"] == 8
    for pair in pairs:
        want = reference[pair["system_a"], pair["system_b"]]
        assert pair["mean_diff"] == pytest.approx(want["diff"], abs=1e-12)
        assert pair["p_value"] == pytest.approx(want["p"], rel=1e-9)
        assert pair["p_adjusted"] == pytest.approx(want["p_holm"], rel=1e-9)
        assert (pair["ci_low"], pair["ci_high"]) == pytest.approx(want["ci"], rel=1e-9)
        assert pair["effect_size"] == pytest.approx(want["d_z"], rel=1e-9)
        assert pair["significant"] == (want["p_holm"] < 0.05)
    assert any(p["significant"] for p in pairs)  # a1 above a4 by NIST's labels
    # against a baseline, with bootstrap intervals, on nugget scores: every row numbers
    code, out, err = _main(capsys, "compare", campaign, "--qrels", "nuggets", "--baseline",
                           "a4", "--ci", "bca", "--format", "csv")
    assert code == 0 and "bm25" not in err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["system_a"] for r in rows} | {r["system_b"] for r in rows} == set(RUNS)
    assert all(math.isfinite(float(r[c])) for r in rows for c in ("ci_low", "ci_high",
                                                                  "p_adjusted"))


# ---- compare-qrels --------------------------------------------------------------------------


def _significant(values: dict) -> set[tuple[str, str]]:
    means = _means(values)
    order = sorted(RUNS, key=lambda r: -means[r])
    return {k for k, v in _t_pairs(values, order).items() if v["p_holm"] < 0.05}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("sets", "measures"), [
    (("support", "support_llm"), ("support_precision", "support_recall")),
    (("nuggets", "nuggets_llm"), (VITAL_STRICT, "nugget_score"))])
def test_compare_qrels_across_two_answer_label_sets(campaign, capsys, sets, measures):
    from scipy import stats as st

    from irbench import stats

    code, out, _ = _main(capsys, "compare-qrels", campaign, *sets,
                         *(a for m in measures for a in ("--measure", m)), "--format", "json")
    assert code == 0
    found = json.loads(out)
    assert [(b["measure"], b["reference"], b["other"]) for b in found["leaderboards"]] == [
        (m, *sets) for m in measures]
    changed = 0
    for board, measure in zip(found["leaderboards"], measures):
        a, b = EXPECTED[sets[0]]()[measure], EXPECTED[sets[1]]()[measure]
        ma, mb = _means(a), _means(b)
        x, y = np.array([ma[r] for r in RUNS]), np.array([mb[r] for r in RUNS])
        assert board["systems"] == 4 and board["topics"] == 8
        assert board["tau"] == pytest.approx(st.kendalltau(x, y).statistic, abs=1e-12)
        assert board["tau_ap"] == pytest.approx(stats.tau_ap(x, y), abs=1e-12)
        sig_a, sig_b = _significant(a), _significant(b)

        def unordered(pairs):
            return {frozenset(p) for p in pairs}

        assert unordered(board["significant_both"]) == unordered(sig_a & sig_b)
        assert unordered(board["significant_only_reference"]) == unordered(sig_a) - unordered(
            sig_b)
        assert unordered(board["significant_only_other"]) == unordered(sig_b) - unordered(sig_a)
        changed += len(board["significant_only_reference"]) + len(board["significant_only_other"])
    assert changed  # the data make some difference vanish or appear
    labels = found["labels"][0]
    if sets[0] == "support":
        ref, other = _support_jsonl("support.jsonl"), _support_tsv("support_llm.tsv")
        ref = {k: v for k, v in ref.items() if v >= 0}
        other = {k: v for k, v in other.items() if v >= 0}
        assert labels["keys"] == ["topic", "run", "sentence", "reference"]
    else:
        ref = {k: v[2] for k, v in _assignments("assign.jsonl").items()}
        other = {k: v[2] for k, v in _assignments("assign_llm.jsonl").items()}
        assert labels["keys"] == ["topic", "run", "nugget"]
    common = sorted(set(ref) & set(other))
    assert (labels["pairs"], labels["only_reference"], labels["only_other"]) == (
        len(common), len(set(ref) - set(other)), len(set(other) - set(ref)))
    u, v = [ref[k] for k in common], [other[k] for k in common]
    assert labels["kappa"] == pytest.approx(_sklearn_kappa(u, v), abs=1e-12)
    assert labels["alpha_ordinal"] == pytest.approx(_alpha([u, v]), abs=1e-12)
    code, out, _ = _main(capsys, "compare-qrels", campaign, *sets, "--measure", measures[0])
    assert code == 0
    assert f"{measures[0]}: {sets[1]} against {sets[0]}, 4 systems x 8 common topics" in out
    assert f"Kendall's tau {found['leaderboards'][0]['tau']:.4f}" in out
    assert f"labels of {sets[1]} against {sets[0]}: {len(common)} (" in out


@pytest.mark.timeout(120)
def test_compare_qrels_picks_the_sets_that_score_the_measure(campaign, capsys):
    code, out, err = _main(capsys, "compare-qrels", campaign, "--reference", "support",
                           "--measure", "support_precision", "--format", "json")
    assert code == 0  # against the other support sets, not the document or nugget sets
    found = json.loads(out)
    assert [b["other"] for b in found["leaderboards"]] == ["support_llm", "shared"]
    assert found["leaderboards"][1]["tau"] == 1.0  # the same labels, keyed by text
    # support and shared label different keys: not compared, said so
    assert [label["other"] for label in found["labels"]] == ["support_llm"]
    assert "the labels of shared are not compared with support's" in err
    code, _, err = _main(capsys, "compare-qrels", campaign, "official", "support")
    assert code == UsageError.exit_code
    assert "measure 'AP' is not scored on qrels set 'support' (support judgments do not " \
           "give it)" in err
    code, _, err = _main(capsys, "compare-qrels", campaign)
    assert code == UsageError.exit_code
    assert "has no other qrels set scoring AP to compare with 'official'" in err
    code, _, err = _main(capsys, "compare-qrels", campaign, "support", "--reference", "x")
    assert code == UsageError.exit_code and "not both" in err


# ---- agreement ------------------------------------------------------------------------------


def _agreement_json(capsys, *argv) -> dict:
    code, out, err = _main(capsys, "agreement", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _check(record: dict, ref: dict, other: dict) -> None:
    """One agreement record against the test's own join, scikit-learn and krippendorff."""
    common = sorted(set(ref) & set(other))
    u, v = [ref[k] for k in common], [other[k] for k in common]
    assert (record["pairs"], record["only_reference"], record["only_other"]) == (
        len(common), len(set(ref) - set(other)), len(set(other) - set(ref)))
    assert record["kappa"] == pytest.approx(_sklearn_kappa(u, v), abs=1e-12)
    assert record["kappa_linear"] == pytest.approx(_sklearn_kappa(u, v, "linear"), abs=1e-12)
    assert record["kappa_binary"] == pytest.approx(
        _sklearn_kappa(np.array(u) >= 1, np.array(v) >= 1), abs=1e-12)
    assert record["alpha_ordinal"] == pytest.approx(_alpha([u, v]), abs=1e-12)
    assert record["alpha_nominal"] == pytest.approx(_alpha([u, v], "nominal"), abs=1e-12)
    counts = Counter(zip(u, v))
    grades = record["grades"]
    assert record["confusion"] == [[counts[g, h] for h in grades] for g in grades]
    assert record["agreed"] == pytest.approx(np.mean(np.array(u) == np.array(v)), abs=1e-15)


@pytest.mark.timeout(60)
def test_support_labels_agree_on_their_citations(capsys):
    j = DATA / "judgments"
    ref = {k: v for k, v in _support_jsonl("support.jsonl").items() if v >= 0}
    other = {k: v for k, v in _support_tsv("support_llm.tsv").items() if v >= 0}
    found = _agreement_json(capsys, "--kind", "support", j / "support.jsonl",
                            j / "support_llm.tsv", "--per-topic")
    record = found["agreements"][0]
    assert record["keys"] == ["topic", "run", "sentence", "reference"]
    _check(record, ref, other)
    assert other.keys() - ref.keys() == {("t1", "other-run", 0, next(
        k[3] for k in other if k[1] == "other-run"))}  # the one row of a run NIST did not judge
    for topic in record["per_topic"]:
        keys = [k for k in sorted(set(ref) & set(other)) if k[0] == topic["topic"]]
        assert topic["pairs"] == len(keys)
        assert topic["kappa"] == pytest.approx(
            _sklearn_kappa([ref[k] for k in keys], [other[k] for k in keys]), abs=1e-12)
    # the JSONL of the model's labels: the same citations, the same agreement
    same = _agreement_json(capsys, "--kind", "support", j / "support.jsonl",
                           j / "support_llm.jsonl")["agreements"][0]
    assert same["pairs"] == record["pairs"] and same["kappa"] == record["kappa"]
    # two qrels sets of a config, read as their kind
    by_config = _agreement_json(capsys, "--config", DATA / "config.yaml", "support",
                                "support_llm")["agreements"][0]
    assert (by_config["reference"], by_config["other"]) == ("support", "support_llm")
    assert by_config["kappa"] == record["kappa"] and by_config["pairs"] == record["pairs"]


@pytest.mark.timeout(60)
def test_shared_support_labels_agree_on_sentence_texts(capsys):
    j = DATA / "judgments"
    ref, other = _texts("support.jsonl"), _texts("support_llm.jsonl")
    ref = {k: v for k, v in ref.items() if v >= 0}
    other = {k: v for k, v in other.items() if v >= 0}
    record = _agreement_json(capsys, "--kind", "support_shared", j / "support.jsonl",
                             j / "support_llm.jsonl")["agreements"][0]
    assert record["keys"] == ["topic", "text", "reference"]
    assert record["pairs"] < len(_support_jsonl("support.jsonl"))  # one per sentence text
    _check(record, ref, other)


@pytest.mark.timeout(60)
def test_nugget_assignments_agree_as_two_one_zero(capsys):
    j = DATA / "judgments"
    ref = {k: v[2] for k, v in _assignments("assign.jsonl").items()}
    other = {k: v[2] for k, v in _assignments("assign_llm.jsonl").items()}
    found = _agreement_json(capsys, "--kind", "nuggets", j / "assign.jsonl",
                            j / "assign_llm.jsonl", j / "assign.jsonl")
    record = found["agreements"][0]
    assert record["keys"] == ["topic", "run", "nugget"] and record["grades"] == [0, 1, 2]
    _check(record, ref, other)
    assert record["only_reference"] == 3  # a4's t3, which the model did not assign
    assert found["agreements"][1]["kappa"] == 1.0
    keys = sorted(set(ref) | set(other))
    rows = [[ref.get(k, np.nan) for k in keys], [other.get(k, np.nan) for k in keys],
            [ref.get(k, np.nan) for k in keys]]
    assert found["all_judges_alpha"]["ordinal"] == pytest.approx(_alpha(rows), abs=1e-12)
    code, out, _ = _main(capsys, "agreement", "--kind", "nuggets", j / "assign.jsonl",
                         j / "assign_llm.jsonl")
    assert code == 0
    assert "agreement with assign.jsonl on the (topic, run, nugget) keys both judged" in out
    common = sorted(set(ref) & set(other))
    kappa = _sklearn_kappa([ref[k] for k in common], [other[k] for k in common])
    row = next(line.split() for line in out.splitlines() if line.startswith("assign_llm"))
    assert row[1:4] == [str(len(common)), f"{np.mean([ref[k] == other[k] for k in common]):.4f}",
                        f"{kappa:.4f}"]


@pytest.mark.timeout(60)
def test_labels_that_cannot_be_compared_are_errors_naming_why(capsys, tmp_path):
    j = DATA / "judgments"
    code, _, err = _main(capsys, "agreement", "--config", DATA / "config.yaml", "support",
                         "nuggets")
    assert code == EvaluationError.exit_code
    assert "support is keyed by (topic, run, sentence, reference) and nuggets by (topic, run, " \
           "nugget)" in err
    renamed = tmp_path / "other_nuggets.jsonl"  # another nugget list at the same positions
    lines = (j / "assign_llm.jsonl").read_text().splitlines(True)
    renamed.write_text("".join([lines[0], lines[1].replace("nugget 1 of t2", "another"),
                                *lines[2:]]))
    code, _, err = _main(capsys, "agreement", "--kind", "nuggets", j / "assign.jsonl", renamed)
    assert code == EvaluationError.exit_code
    assert f"{j / 'assign.jsonl'}:2 and {renamed}:2: topic 't2', run 'a1', nugget 1 is not " \
           "the same item" in err
    clash = tmp_path / "clash.jsonl"  # two runs' identical sentence and segment, judged apart
    first = json.loads((j / "support.jsonl").read_text().splitlines()[0])
    second = json.loads(json.dumps(first))
    second["run_id"] = "copy"
    citation = second["sentences"][0]["citations"][0]
    citation["support"] = (citation["support"] + 1) % 3
    clash.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    code, _, err = _main(capsys, "agreement", "--kind", "support_shared", clash, clash)
    assert code == EvaluationError.exit_code
    assert f"{clash}:2: topic 't1', text 'Fact 0 of t1.', reference '{citation['reference']}' " \
           f"judged {citation['support']} here" in err and f"at {clash}:1" in err
    code, _, err = _main(capsys, "agreement", "--kind", "support_shared",
                         j / "support_llm.tsv", j / "support_llm.tsv")
    assert code == EvaluationError.exit_code and "no judged citation with a sentence text" in err
    code, _, err = _main(capsys, "agreement", "--config", DATA / "config.yaml", "--kind",
                         "support", "support", "support_llm")
    assert code == UsageError.exit_code and "--kind goes with files" in err


@pytest.mark.timeout(60)
def test_agreement_from_a_shell(tmp_path):
    """The command itself, as a user runs it: CSV on stdout, the note on stderr, no
    traceback for labels that cannot be compared."""
    j = DATA / "judgments"
    done = subprocess.run([sys.executable, "-m", "irbench", "agreement", "--kind", "support",
                           str(j / "support.jsonl"), str(j / "support_llm.tsv"), "--format",
                           "csv"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    header, row = done.stdout.splitlines()
    record = dict(zip(header.split(","), row.split(",")))
    ref = {k: v for k, v in _support_jsonl("support.jsonl").items() if v >= 0}
    other = {k: v for k, v in _support_tsv("support_llm.tsv").items() if v >= 0}
    common = sorted(set(ref) & set(other))
    assert int(record["pairs"]) == len(common)
    assert float(record["kappa"]) == pytest.approx(
        _sklearn_kappa([ref[k] for k in common], [other[k] for k in common]), abs=1e-12)
    assert "(topic, run, sentence, reference) keys judged by both" in done.stderr
    done = subprocess.run([sys.executable, "-m", "irbench", "agreement", "--kind", "nuggets",
                           str(j / "support.jsonl"), str(j / "assign.jsonl")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{j / 'support.jsonl'}:1: no 'nuggets' list" in done.stderr
