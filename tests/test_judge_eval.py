"""How far to trust a judge (issue 40): ``irbench judge-eval`` and
:func:`irbench.stats.evaluate_judges` on a campaign in tmp_path (tests/data/answers_compare:
a ranked run and four answer runs; two document qrels sets, the second made here by a "model"
that favours a4's references; two support sets, one also read as support_shared; two nugget
assignment sets).

Label agreement equals scikit-learn's cohen_kappa_score (no weights and linear) and the
krippendorff package (ordinal) on the keys both judged, read here from the files by plain
loops; Kendall's tau and Spearman's rho equal scipy.stats on the stored means; the top-k
overlap is counted by hand; the self-preference check is worked by hand (a run whose metadata
names the judge's model and that the judge ranks higher), exact and by seeded permutations;
the command line's JSON, CSV and table carry the same values; a set of another kind family is
skipped with a note, not an error.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import warnings
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats as st

from irbench import cli, open_store
from irbench.config import load_config
from irbench.config.types import QrelsSet
from irbench.errors import EvaluationError
from irbench.stats import evaluate_judges, judge_models, kind_family, names_model, self_preference
from irbench.stats.leaderboards import RankMove
from irbench.store import Store

DATA = Path(__file__).resolve().parent / "data" / "answers_compare"
DOC_MODEL, NUGGET_MODEL, NOBODY = "acme/Judge-7B", "Nugget-Judge", "nobody-model"
ASSIGNED = {"support": 2, "partial_support": 1, "not_support": 0}
PAIRS = (("official", "official_llm"), ("support", "support_llm"), ("support", "shared"),
         ("nuggets", "nuggets_llm"))


def _favour_a4(folder: Path) -> None:
    """judgments/qrels_llm.txt: the official qrels, but every document a4's answers cite is
    grade 2 and every other document 0 (a judge whose labels follow a4's generator)."""
    cited = {}
    for line in (folder / "answers" / "a4.jsonl").read_text().splitlines():
        obj = json.loads(line)
        cited.setdefault(obj["topic_id"], set()).update(obj["references"])
    lines = []
    for line in (folder / "judgments" / "qrels.txt").read_text().splitlines():
        t, it, doc, _ = line.split()
        lines.append(f"{t} {it} {doc} {2 if doc in cited.get(t, ()) else 0}")
    (folder / "judgments" / "qrels_llm.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("judge_eval") / "campaign"
    shutil.copytree(DATA, folder)
    _favour_a4(folder)
    config = folder / "config.yaml"
    doc = yaml.safe_load(config.read_text())
    qrels = doc["collection"]["qrels"]
    qrels["official_llm"] = {"path": "judgments/qrels_llm.txt", "model": DOC_MODEL}
    qrels["support_llm"]["model"] = NOBODY
    qrels["nuggets_llm"]["model"] = NUGGET_MODEL
    for system in doc["systems"]:
        if system["name"] == "a4":  # names the document judge by its last part, other case
            system["metadata"] = {"generator": "JUDGE-7b-instruct"}
        if system["name"] == "a2":
            system["metadata"] = {"llm": "nugget-judge v2"}
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    return config


def _evaluate(campaign: Path, reference: str, **kwargs):
    config = load_config(str(campaign), strict=False, systems=False)
    with Store(config.store, read_only=True) as store:
        return evaluate_judges(config, store, reference, **kwargs)


def _judge(result, name: str):
    return next(j for j in result.judges if j.judge == name)


# ---- the test's own reading of the files ---------------------------------------------------


def _qrels(folder: Path, name: str) -> dict[tuple, int]:
    out = {}
    for line in (folder / "judgments" / name).read_text().splitlines():
        t, _, doc, grade = line.split()
        out[t, doc] = int(grade)
    return out


def _support_jsonl(folder: Path, name: str) -> dict[tuple, int]:
    out = {}
    for line in (folder / "judgments" / name).read_text().splitlines():
        obj = json.loads(line)
        for s, sentence in enumerate(obj["sentences"]):
            for c in sentence["citations"]:
                if int(c["support"]) >= 0:
                    out.setdefault((obj["topic_id"], obj["run_id"], s, c["reference"]),
                                   int(c["support"]))
    return out


def _support_tsv(folder: Path, name: str) -> dict[tuple, int]:
    rows = [line.split("\t") for line in
            (folder / "judgments" / name).read_text().splitlines()[1:]]
    out = {}
    for t, r, s, _, ref, label in rows:
        if int(label) >= 0:
            out.setdefault((t, r, int(s), ref), int(label))
    return out


def _assignments(folder: Path, name: str) -> dict[tuple, int]:
    out = {}
    for line in (folder / "judgments" / name).read_text().splitlines():
        obj = json.loads(line)
        for n, nugget in enumerate(obj["nuggets"]):
            out[obj["qid"], obj["run_id"], n] = ASSIGNED[nugget["assignment"]]
    return out


READ = {"official": lambda f: _qrels(f, "qrels.txt"),
        "official_llm": lambda f: _qrels(f, "qrels_llm.txt"),
        "support": lambda f: _support_jsonl(f, "support.jsonl"),
        "shared": lambda f: _support_jsonl(f, "support.jsonl"),
        "support_llm": lambda f: _support_tsv(f, "support_llm.tsv"),
        "nuggets": lambda f: _assignments(f, "assign.jsonl"),
        "nuggets_llm": lambda f: _assignments(f, "assign_llm.jsonl")}


def _both(folder: Path, reference: str, judge: str) -> tuple[list[int], list[int], int, int]:
    a, b = READ[reference](folder), READ[judge](folder)
    keys = sorted(set(a) & set(b))
    return [a[k] for k in keys], [b[k] for k in keys], len(a) - len(keys), len(b) - len(keys)


def _sklearn_kappa(a, b, weights=None) -> float:
    metrics = pytest.importorskip("sklearn.metrics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(metrics.cohen_kappa_score(a, b, weights=weights))


def _krippendorff(a, b) -> float:
    krippendorff = pytest.importorskip("krippendorff")
    return float(krippendorff.alpha(reliability_data=np.array([a, b], dtype=float),
                                    level_of_measurement="ordinal"))


def _means(campaign: Path, qrels: str, measure: str) -> dict[str, float]:
    frame = open_store(campaign).means(qrels, measures=[measure])
    return dict(zip(frame["system"], frame["value"]))


def _order(means: dict[str, float]) -> list[str]:
    """Best first; ties by name (the store gives the systems sorted by name)."""
    return sorted(means, key=lambda s: (-means[s], s))


# ---- label agreement -------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("reference,judge", PAIRS)
def test_label_agreement_equals_scikit_learn_and_krippendorff(campaign, reference, judge):
    result = _evaluate(campaign, reference)
    labels = _judge(result, judge).labels
    a, b, only_a, only_b = _both(campaign.parent, reference, judge)
    assert labels.pairs == len(a) > 0
    assert (labels.only_reference, labels.only_other) == (only_a, only_b)
    assert labels.kappa == pytest.approx(_sklearn_kappa(a, b), abs=1e-12, nan_ok=True)
    assert labels.kappa_linear == pytest.approx(_sklearn_kappa(a, b, "linear"), abs=1e-12,
                                                nan_ok=True)
    assert labels.alpha_ordinal == pytest.approx(_krippendorff(a, b), abs=1e-12)
    counts = Counter(zip(a, b))
    assert labels.confusion.tolist() == [[counts[g, h] for h in labels.grades]
                                         for g in labels.grades]
    assert labels.grades == tuple(sorted(set(a) | set(b)))


def test_the_model_judges_disagree_with_the_reference_somewhere(campaign):
    """The fixtures are not trivially equal: kappa is below 1 for every model set."""
    for reference, judge in PAIRS:
        if judge != "shared":
            assert _judge(_evaluate(campaign, reference), judge).labels.kappa < 1


# ---- leaderboards -----------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("reference,judge", PAIRS)
def test_tau_spearman_and_top_k_equal_scipy_and_counting(campaign, reference, judge):
    result = _evaluate(campaign, reference, top=(1, 2, 3))
    trust = _judge(result, judge)
    config = load_config(str(campaign), strict=False, systems=False)
    spec = {q.name: q for q in config.qrels}
    expected = [str(m) for m in config.measures if spec[reference].takes(m)
                and spec[judge].takes(m) and m.definition.needs not in ("none", "answer")]
    assert [m.measure for m in trust.measures] == expected and expected
    assert "answer_words" not in expected  # reads no label: the same under every set
    for m in trust.measures:
        ref, other = _means(campaign, reference, m.measure), _means(campaign, judge, m.measure)
        systems = sorted(ref)
        x, y = [ref[s] for s in systems], [other[s] for s in systems]
        c = m.leaderboard
        assert c.systems == len(systems) and c.topics == 8
        assert c.tau == pytest.approx(st.kendalltau(x, y).statistic, abs=1e-12, nan_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = st.spearmanr(x, y).statistic
        assert c.spearman == pytest.approx(rho, abs=1e-12, nan_ok=True)
        a, b = _order(ref), _order(other)
        assert [(t.k, t.overlap) for t in m.top] == [
            (k, len(set(a[:k]) & set(b[:k]))) for k in (1, 2, 3)]
        assert {mv.system: (mv.rank_a, mv.rank_b) for mv in c.moves} == {
            s: (a.index(s) + 1, b.index(s) + 1) for s in systems}


def test_top_k_is_cut_to_the_systems_and_given_once(campaign):
    result = _evaluate(campaign, "nuggets")  # 4 answer runs: 5 and 10 are both 4
    assert result.top == (5, 10)
    assert [(t.k, t.overlap) for t in _judge(result, "nuggets_llm").measures[0].top] == [(4, 4)]


def test_the_favouring_judge_moves_the_leaderboard(campaign):
    trust = _judge(_evaluate(campaign, "official"), "official_llm")
    ap = next(m for m in trust.measures if m.measure == "AP").leaderboard
    ranks = {m.system: (m.rank_a, m.rank_b) for m in ap.moves}
    assert ranks["a4"] == (5, 1)
    assert ap.moves[0].system == "a4"  # the largest rank change first
    assert ap.tau < 1


# ---- the self-preference check -------------------------------------------------------------


def test_self_preference_by_hand_exact():
    # six systems; the judge ranks s5 (named) first, s2 (named) one lower
    moves = [RankMove(system=f"s{i}", rank_a=i, rank_b=b)
             for i, b in zip(range(1, 7), (2, 3, 4, 5, 1, 6))]
    p = self_preference(moves, {"s5", "s2"}, measure="AP", models=("m",))
    gains = {m.system: m.rank_a - m.rank_b for m in moves}
    assert (p.gain_named, p.gain_others) == (pytest.approx(1.5), pytest.approx(-0.75))
    assert p.difference == pytest.approx(2.25)
    observed = gains["s5"] + gains["s2"]
    sums = [gains[a] + gains[b] for a, b in combinations(sorted(gains), 2)]
    assert p.exact and p.p_value == pytest.approx(sum(s >= observed for s in sums) / 15)
    # gains -1, -1, -1, -1, +4, 0: the named sum is 3; of the 15 pairs, the 5 with s5 reach it
    assert p.p_value == pytest.approx(5 / 15)
    alone = self_preference(moves, {"s5"}, measure="AP", models=("m",))
    assert alone.p_value == pytest.approx(1 / 6) and alone.gain_named == 4  # s5 alone: +4
    assert [m.system for m in p.named] == ["s2", "s5"]


def test_self_preference_by_seeded_permutations():
    rng = np.random.default_rng(3)
    judge = rng.permutation(40) + 1
    moves = [RankMove(system=f"s{i:02d}", rank_a=i + 1, rank_b=int(judge[i]))
             for i in range(40)]
    named = {f"s{i:02d}" for i in range(0, 40, 4)}  # 10 of 40: C(40, 10) ways, far too many
    one = self_preference(moves, named, measure="AP", models=("m",), samples=2_000, seed=5)
    again = self_preference(moves, named, measure="AP", models=("m",), samples=2_000, seed=5)
    assert not one.exact and one.p_value == again.p_value  # seeded: the same p
    assert one.p_value * 2_001 == pytest.approx(round(one.p_value * 2_001))  # (1 + r) / (1 + B)
    assert 0 < one.p_value <= 1


def test_self_preference_none_named_or_every_one():
    moves = [RankMove(system="x", rank_a=1, rank_b=2), RankMove(system="y", rank_a=2, rank_b=1)]
    every = self_preference(moves, {"x", "y"}, measure="AP", models=("m",))
    assert np.isnan(every.p_value) and np.isnan(every.gain_others)


def test_names_model_and_judge_models():
    assert names_model('{"llm": "gpt-4o-mini"}', ["openai/GPT-4o"])  # its last part
    assert names_model("built on LLAMA-3", ["llama-3"])
    assert not names_model("bm25 baseline", ["llama-3"])
    spec = QrelsSet("made", "x.qrels")
    made = {"made": (["j1", "j2"], ["model", "model"], ["m1", "m1"]),
            "mixed": (["j1", "ann"], ["model", "human"], ["m1", ""])}
    assert judge_models(spec, made) == ("m1",)
    assert judge_models(QrelsSet("mixed", "x.qrels"), made) == ()  # people judged too
    assert judge_models(QrelsSet("made", "x.qrels", model="given"), made) == ("given",)
    assert kind_family("adhoc") == kind_family("diversity") == kind_family("qrels_jg")
    assert kind_family("support") == kind_family("support_shared") != kind_family("nuggets")


@pytest.mark.timeout(120)
def test_self_preference_on_the_campaign(campaign):
    trust = _judge(_evaluate(campaign, "official"), "official_llm")
    assert trust.models == (DOC_MODEL,)
    for m in trust.measures:
        p = m.self_preference
        assert [x.system for x in p.named] == ["a4"]  # 'JUDGE-7b-instruct' names judge-7b
        ranks = {x.system: (x.rank_a, x.rank_b) for x in m.leaderboard.moves}
        gain = ranks["a4"][0] - ranks["a4"][1]
        assert gain > 0 and p.gain_named == gain  # ranked higher by its judge
        others = [a - b for s, (a, b) in ranks.items() if s != "a4"]
        assert p.gain_others == pytest.approx(np.mean(others))
        assert p.exact and p.p_value == pytest.approx(
            np.mean([v >= gain for v in [gain, *others]]))
    nuggets = _judge(_evaluate(campaign, "nuggets"), "nuggets_llm")
    assert {tuple(x.system for x in m.self_preference.named) for m in nuggets.measures} == {
        ("a2",)}


def test_a_model_no_system_names_is_a_note(campaign):
    trust = _judge(_evaluate(campaign, "support"), "support_llm")
    assert trust.models == (NOBODY,)
    assert all(m.self_preference is None for m in trust.measures)
    assert any(NOBODY in n and "no system" in n for n in trust.notes)


# ---- sets that cannot be compared ----------------------------------------------------------


def test_another_kind_is_skipped_with_a_note(campaign):
    result = _evaluate(campaign, "official")
    assert [j.judge for j in result.judges] == ["official_llm"]
    assert [n for n, _ in result.skipped] == ["support", "support_llm", "shared", "nuggets",
                                              "nuggets_llm"]
    assert all("another family" in why for _, why in result.skipped)


def test_only_sets_of_another_kind_is_an_error(campaign):
    with pytest.raises(EvaluationError, match="no label set .* to compare with 'official'"):
        _evaluate(campaign, "official", judges=["nuggets"])


# ---- the command line ------------------------------------------------------------------------


def _main(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.timeout(120)
def test_cli_json_carries_the_library_values(campaign, capsys):
    code, out, err = _main(capsys, "judge-eval", campaign, "--reference", "official",
                           "--format", "json", "--top", "2", "--top", "3")
    assert code == 0
    doc = json.loads(out)
    result = _evaluate(campaign, "official", top=(2, 3))
    assert doc["reference"] == "official" and doc["settings"]["top"] == [2, 3]
    assert [s["set"] for s in doc["skipped"]] == [n for n, _ in result.skipped]
    assert "irbench: note: nuggets: not compared" in err  # skipped with a note, exit 0
    (judge,) = doc["judges"]
    trust = _judge(result, "official_llm")
    assert judge["models"] == [DOC_MODEL]
    a, b, _, _ = _both(campaign.parent, "official", "official_llm")
    assert judge["labels"]["kappa"] == pytest.approx(_sklearn_kappa(a, b), abs=1e-12)
    assert judge["labels"]["kappa_linear"] == pytest.approx(_sklearn_kappa(a, b, "linear"),
                                                            abs=1e-12)
    assert judge["labels"]["alpha_ordinal"] == pytest.approx(_krippendorff(a, b), abs=1e-12)
    assert judge["labels"]["confusion"] == trust.labels.confusion.tolist()
    for got, m in zip(judge["measures"], trust.measures, strict=True):
        ref = _means(campaign, "official", m.measure)
        other = _means(campaign, "official_llm", m.measure)
        systems = sorted(ref)
        x, y = [ref[s] for s in systems], [other[s] for s in systems]
        assert got["tau"] == pytest.approx(st.kendalltau(x, y).statistic, abs=1e-12)
        assert got["spearman"] == pytest.approx(st.spearmanr(x, y).statistic, abs=1e-12)
        assert got["top"] == [{"k": t.k, "overlap": t.overlap} for t in m.top]
        assert got["significant_vanish"] == [list(p) for p in m.leaderboard.significant_only_a]
        assert got["significant_appear"] == [list(p) for p in m.leaderboard.significant_only_b]
        assert got["self_preference"]["named"] == [
            {"system": x.system, "reference": x.rank_a, "judge": x.rank_b}
            for x in m.self_preference.named]
        assert [x["system"] for x in got["self_preference"]["named"]] == ["a4"]
        assert got["self_preference"]["p_value"] == pytest.approx(m.self_preference.p_value)


@pytest.mark.timeout(120)
def test_cli_csv_and_table(campaign, capsys):
    code, out, _ = _main(capsys, "judge-eval", campaign, "--reference", "nuggets",
                         "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    trust = _judge(_evaluate(campaign, "nuggets"), "nuggets_llm")
    assert [r["measure"] for r in rows] == [m.measure for m in trust.measures]
    assert {r["judge"] for r in rows} == {"nuggets_llm"}
    assert float(rows[0]["kappa"]) == pytest.approx(trust.labels.kappa)
    assert rows[0]["self_preference_named"] == "a2"
    assert rows[0]["top_5"] == "4"  # cut to the 4 answer runs
    code, out, err = _main(capsys, "judge-eval", campaign, "--reference", "support",
                           "--judge", "support_llm", "--judge", "shared")
    assert code == 0
    assert "support_llm (support; model nobody-model)" in out
    assert "shared (support_shared)" in out and "kappa 1.0000" in out
    assert "no system's metadata names its model (nobody-model)" in err


def test_cli_unknown_reference_is_a_message(campaign, capsys):
    code, _, err = _main(capsys, "judge-eval", campaign, "--reference", "offical")
    assert code == 1 and "no qrels set 'offical'" in err and "did you mean 'official'" in err
    code, _, err = _main(capsys, "judge-eval", campaign, "--reference", "official",
                         "--judge", "nuggets")
    assert code == EvaluationError.exit_code and "another family" in err
    assert "Traceback" not in err
