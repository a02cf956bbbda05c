"""The judgment-reduction experiment (issue 14.2): Buckley & Voorhees's design by default (the
same fraction of relevant and non-relevant judgments per topic, at least one relevant kept,
dropped judgments removed), Yilmaz & Aslam's sampled design as a named option, and tau against
the same measure and against MAP on the full judgments, stored and on the page."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from campaigns import make_campaign
from scipy import stats as st

import irbench
from irbench import cli
from irbench.analyses.reduction import DESIGNS, FRACTIONS, judgment_reduction, reduced_qrels
from irbench.ranked import EvalOptions
from irbench.trec import Qrels


def _qrels(seed: int = 3, topics: int = 50) -> Qrels:
    """Topics with 1 to 3 relevant documents (levels 1-2) among 30 to 120 judged, plus a few
    pooled-but-unjudged (-1) rows; the campaign a reduction to 3% strips of relevant ones."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(topics):
        relevant, other = int(rng.integers(1, 4)), int(rng.integers(30, 121))
        levels = [int(rng.integers(1, 3)) for _ in range(relevant)] + [0] * other + [-1] * 2
        rows += [(f"t{t:02d}", f"d{t:02d}-{i:03d}", lvl)
                 for i, lvl in enumerate(rng.permutation(levels))]
    return irbench.read_qrels(rows)


def _per_topic(qrels: Qrels, mask: np.ndarray) -> dict[bytes, int]:
    topics, counts = np.unique(qrels.query_id[mask], return_counts=True)
    return dict(zip(topics.tolist(), counts.tolist()))


def _half_up(x: float) -> int:
    return int(math.floor(x + 0.5 + 1e-9))


@pytest.mark.parametrize("fraction", [0.5, 0.2, 0.1, 0.05, 0.03])
def test_buckley_voorhees_keeps_the_fraction_of_each_class_and_one_relevant(fraction):
    full = _qrels()
    reduced = reduced_qrels(full, fraction, seed=7)
    assert DESIGNS["buckley-voorhees"] is DESIGNS[next(iter(DESIGNS))]  # the default
    rel_full, rel_kept = _per_topic(full, full.relevance >= 1), \
        _per_topic(reduced, reduced.relevance >= 1)
    non_full, non_kept = _per_topic(full, full.relevance == 0), \
        _per_topic(reduced, reduced.relevance == 0)
    for topic, n in rel_full.items():
        assert rel_kept[topic] == max(1, _half_up(fraction * n))  # never a topic without one
        assert non_kept.get(topic, 0) == _half_up(fraction * non_full[topic])
    assert (reduced.relevance == -1).sum() == (full.relevance == -1).sum()  # left as they are
    # dropped judgments are removed, not marked: every kept row is a row of the full qrels
    full_rows = set(zip(full.query_id.tolist(), full.doc_id.tolist(), full.relevance.tolist()))
    kept_rows = set(zip(reduced.query_id.tolist(), reduced.doc_id.tolist(),
                        reduced.relevance.tolist()))
    assert kept_rows <= full_rows and len(kept_rows) == len(reduced)


def test_the_relevance_level_decides_what_is_relevant():
    full = _qrels()
    reduced = reduced_qrels(full, 0.03, seed=1, relevance_level=2)
    topics_with_2 = set(_per_topic(full, full.relevance >= 2))
    assert set(_per_topic(reduced, reduced.relevance >= 2)) == topics_with_2


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_subsets_are_nested_over_fractions_and_depend_on_the_seed(design):
    full = _qrels()

    def kept(q: Qrels) -> set:
        return set(zip(q.query_id[q.relevance >= 0].tolist(),
                       q.doc_id[q.relevance >= 0].tolist()))

    subsets = [kept(reduced_qrels(full, f, 11, design)) for f in FRACTIONS]
    assert all(small <= large for large, small in zip(subsets, subsets[1:]))
    assert subsets[0] == kept(full)
    assert kept(reduced_qrels(full, 0.3, 12, design)) != subsets[FRACTIONS.index(0.3)]


def test_the_sampled_design_marks_dropped_judgments_unjudged():
    full = _qrels()
    reduced = reduced_qrels(full, 0.1, seed=5, design="sampled")
    assert len(reduced) == len(full)  # nothing removed
    judged_full = _per_topic(full, full.relevance >= 0)
    judged_kept = _per_topic(reduced, reduced.relevance >= 0)
    for topic, n in judged_full.items():
        assert judged_kept[topic] == math.ceil(0.1 * n)
    assert set(np.unique(reduced.relevance[reduced.relevance < 0]).tolist()) == {-1}


def _runs(qrels: Qrels, n: int = 8, seed: int = 4):
    """Runs of growing quality over the qrels' documents."""
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(n):
        rows = []
        for topic in np.unique(qrels.query_id):
            mask = qrels.query_id == topic
            docs, rel = qrels.doc_id[mask], qrels.relevance[mask]
            score = rng.random(len(docs)) + (r / n) * (rel > 0)
            rows += [(topic.decode(), d.decode(), float(s)) for d, s in zip(docs, score)]
        runs.append(irbench.read_run(rows, name=f"r{r}"))
    return runs


def test_tau_against_the_measure_and_against_map_equal_scipy():
    qrels = _qrels(topics=12)
    runs = _runs(qrels)
    options = EvalOptions(complete=True)
    result = judgment_reduction(runs, qrels, options, fractions=(1.0, 0.2), seeds=(0,),
                                measures=("AP", "Bpref", "infAP"))
    assert result.design == "buckley-voorhees"

    def means(q: Qrels, measure: str) -> np.ndarray:
        prepared = irbench.PreparedQrels(q)
        return np.array([irbench.evaluate(prepared, run, [measure], options).summary(measure)
                         for run in runs])

    small = reduced_qrels(qrels, 0.2, 0)
    full_map = means(qrels, "AP")
    for i, measure in enumerate(result.measures):
        full, reduced = means(qrels, measure), means(small, measure)
        assert result.tau[i, 0] == 1.0
        assert result.tau[i, 1] == pytest.approx(st.kendalltau(full, reduced).statistic)
        assert result.tau_map[i, 0] == pytest.approx(st.kendalltau(full_map, full).statistic)
        assert result.tau_map[i, 1] == pytest.approx(st.kendalltau(full_map, reduced).statistic)
        assert result.rmse[i, 1] == pytest.approx(np.sqrt(np.mean((reduced - full) ** 2)))
    assert result.tau_map[0, 0] == pytest.approx(1.0)  # AP against MAP, same judgments


def test_run_computes_the_analysis_the_report_only_reads(tmp_path, capsys):
    """irbench run computes the experiment the config's report asks for and stores it with its
    parameters; the report reads it (run files moved away, store read-only); an analysis of
    other inputs is never shown as current; irbench analyse computes it on demand."""
    import shutil

    from irbench.store import Store

    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    config = path.read_text()
    store_path = str(tmp_path / "runs" / "c.duckdb")

    def stored() -> list[tuple[str, dict]]:
        with Store(store_path, read_only=True) as store:
            _, rows = store.query("SELECT params, result FROM analyses WHERE kind = ?",
                                  ["judgment-reduction"])
        return [(json.loads(p)["design"], json.loads(r)) for p, r in rows]

    def report() -> tuple[str, str]:
        capsys.readouterr()
        assert cli.main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
        return (tmp_path / "rep" / "index.html").read_text(), capsys.readouterr().err

    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    assert stored() == []  # the config does not ask for it
    page, err = report()
    assert 'id="reduction"' not in page and "set report.reduction_design" in err
    assert "set report.reduction_design" in page

    path.write_text(config + "report: {reduction_design: buckley-voorhees}\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    assert "report analyses computed: judgment-reduction" in capsys.readouterr().err
    assert [d for d, r in stored()] == ["buckley-voorhees"]
    assert all("tau_map" in r for _, r in stored())
    shutil.move(tmp_path / "runs", tmp_path / "moved")  # the report reads the store alone
    shutil.copytree(tmp_path / "moved", tmp_path / "runs", ignore=shutil.ignore_patterns("r*.txt"))
    page, err = report()
    assert "Design <b>buckley-voorhees</b>" in page and "SIGIR 2004" in page
    for caption in ("tau against the same measure on all judgments",
                    "tau against MAP on all judgments", "RMS error of the means"):
        assert f"<caption>{caption}</caption>" in page
    assert 'id="judged"' in page and 'id="precision-recall"' in page  # the run's profiles
    shutil.rmtree(tmp_path / "runs")
    shutil.move(tmp_path / "moved", tmp_path / "runs")

    path.write_text(config + "report: {reduction_design: sampled}\n")  # stale now
    page, err = report()
    assert 'id="reduction"' not in page and "computed from other inputs" in err
    assert cli.main(["analyse", str(path)]) == 0
    assert "computed judgment-reduction" in capsys.readouterr().err
    assert [d for d, r in stored()] == ["sampled"]  # one per kind: the stale one is gone
    assert "Design <b>sampled</b>" in report()[0]
    assert cli.main(["analyse", str(path)]) == 0
    assert "up to date" in capsys.readouterr().err

    with open(tmp_path / "runs" / "r01.txt", "a") as fh:  # a run changes after the run
        fh.write("t01 Q0 extra-doc 999 -5.0 tag\n")
    assert cli.main(["analyse", str(path)]) == 0  # the store still shows the scored run
    assert "up to date" in capsys.readouterr().err
    path.write_text(config + "report: {reduction_design: buckley-voorhees}\n")
    assert cli.main(["analyse", str(path)]) == 1  # never an analysis of other runs' scores
    assert "r01.txt: the run of system 'r01' changed since 'irbench run' scored it" in \
        capsys.readouterr().err
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    assert "report analyses computed: judgment-reduction" in capsys.readouterr().err
    assert [d for d, r in stored()] == ["buckley-voorhees"]
    path.write_text(path.read_text().replace("buckley-voorhees", "uniform"))
    assert cli.main(["check", str(path)]) == 1
    assert "report.reduction_design: must be one of buckley-voorhees, sampled, not 'uniform'" in \
        capsys.readouterr().err


def test_the_experiment_reports_its_progress():
    qrels = _qrels(topics=6)
    heard = []
    judgment_reduction(_runs(qrels, n=3), qrels, EvalOptions(complete=True),
                       fractions=(1.0, 0.5, 0.1), seeds=(0, 1), measures=("AP",),
                       progress=lambda done, total, what: heard.append((done, total, what)))
    assert [h[:2] for h in heard] == [(k, 6) for k in range(1, 7)]
    assert heard[-1][2] == "fewer judgments: seed 1, 10%"


def test_the_analyses_name_the_default_design_without_importing_it():
    from irbench import analyses
    from irbench.analyses import reduction

    assert analyses.DEFAULT_DESIGN == reduction.DEFAULT_DESIGN


def test_the_config_knows_every_reduction_design():
    from irbench.config.report import REDUCTION_DESIGNS

    assert REDUCTION_DESIGNS == tuple(DESIGNS)  # the config checks names without scipy
