"""``irbench compare`` on a small campaign, in-process: formats, defaults, the baseline from the
config, and user errors as IrbenchError (which cli.main prints as ``irbench: error: ...``)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import textwrap

import numpy as np
import pytest
from campaigns import make_campaign

from irbench import stats as S
from irbench.config import load_config
from irbench.errors import (
    EvaluationError,
    NotStoredError,
    StatisticsError,
    UnknownQrelsSetError,
    UsageError,
)
from irbench.runner import run_campaign
from irbench.store import Store


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    path = make_campaign(root, systems=4, topics=15)
    report = run_campaign(load_config(path, strict=False), workers=1)
    assert not report.failures
    return path


def parser() -> argparse.ArgumentParser:
    from irbench.cli import build_parser

    return build_parser(("compare",))  # as irbench builds it (--collection added)


def run(capsys, *argv) -> tuple[int, str, str]:
    args = parser().parse_args(["compare", *map(str, argv)])
    code = args.handler(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_help_names_the_defaults():
    p = parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices["compare"].format_help()
    for words in ("randomization", "10,000 samples", "seed 0", "holm", "baseline: true",
                  "latex"):
        assert words in text


def test_table_all_pairs(campaign, capsys):
    code, out, err = run(capsys, campaign, "--measure", "AP", "--test", "randomization")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("AP on qrels 'official': 4 systems x 15 topics, all pairs; "
                               "a paired randomisation test (10,000 samples, seed 0) with "
                               "Holm correction, alpha 0.05")
    assert lines[1].split()[:4] == ["system_a", "system_b", "mean_a", "mean_b"]
    assert len([line for line in lines if line.startswith("r0")]) == 6
    assert lines[-1].startswith("not significantly different from the best")


def test_csv_equals_the_library(campaign, capsys):
    code, out, _ = run(capsys, campaign, "--measure", "AP", "--measure", "P@10", "--format", "csv",
                       "--test", "t", "--correction", "bh")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 12 and {r["measure"] for r in rows} == {"AP", "P@10"}
    config = load_config(campaign, strict=False)
    with Store(config.store, read_only=True) as store:
        ap = S.Scores.from_store(store, "official", "AP")
    row = next(r for r in rows if r["measure"] == "AP")
    a, b = ap.systems.index(row["system_a"]), ap.systems.index(row["system_b"])
    want = S.t_test(ap.values[a], ap.values[b])
    assert float(row["p_value"]) == pytest.approx(want.p_value, rel=1e-12)
    assert float(row["hedges_g"]) == pytest.approx(want.hedges_g, rel=1e-12)
    assert row["correction"] == "bh" and row["test"] == "t"


def test_json_records_the_seed(campaign, capsys):
    code, out, _ = run(capsys, campaign, "--format", "json", "--seed", "7", "--samples", "500",
                       "--measure", "nDCG@10", "--test", "randomization")
    doc = json.loads(out)
    assert doc["settings"]["seed"] == 7 and doc["settings"]["samples"] == 500
    assert doc["settings"]["test"] == "randomization" and doc["settings"]["correction"] == "holm"
    m = doc["measures"][0]
    assert m["measure"] == "nDCG@10" and m["topics"] == 15 and len(m["pairs"]) == 6
    assert sum(len(g) for g in m["groups"][:1]) >= 1
    means = list(m["means"].values())
    assert means == sorted(means, reverse=True)  # systems best first


def test_latex(campaign, capsys, tmp_path):
    target = tmp_path / "t.tex"
    code, out, _ = run(capsys, campaign, "--format", "latex", "--test", "randomized-tukey-hsd",
                       "--samples", "1000", "-o", target)
    tex = target.read_text()
    assert out == "" and r"\begin{tabular}{clc}" in tex and r"\textbf{" in tex
    assert "randomised Tukey HSD test (1,000 samples, seed 0)" in tex


def test_baseline_from_the_config(campaign, capsys):
    config = campaign.parent / "b.yaml"
    runs = campaign.parent.parent / "runs"
    store = load_config(campaign, strict=False).store
    config.write_text(textwrap.dedent(f"""\
        collection:
          topics: ../runs/topics.tsv
          qrels: {{official: ../runs/qrels.txt}}
        systems:
          - {{name: r00, run: ../runs/r00.txt}}
          - {{name: r01, run: ../runs/r01.txt, baseline: true}}
          - {{name: r02, run: ../runs/r02.txt}}
        suites:
          core: [AP]
        store: {store}
        """))
    assert (runs / "r00.txt").exists()
    code, out, _ = run(capsys, config, "--format", "json")
    doc = json.loads(out)
    assert doc["settings"]["baseline"] == "r01"
    assert {p["system_b"] for p in doc["measures"][0]["pairs"]} == {"r01"}
    assert len(doc["measures"][0]["pairs"]) == 2  # r03 is not declared in b.yaml
    code, out, _ = run(capsys, config, "--format", "json", "--all-pairs")
    assert len(json.loads(out)["measures"][0]["pairs"]) == 3


def test_user_errors(campaign, capsys):
    with pytest.raises(UsageError, match="baseline 'nope' is not among the compared systems"):
        run(capsys, campaign, "--baseline", "nope")
    with pytest.raises(UnknownQrelsSetError, match="no qrels set 'deep'"):
        run(capsys, campaign, "--qrels", "deep")
    with pytest.raises(NotStoredError, match="measure 'ERR@20' is in none of the suites of "
                       ".*add it to a suite under suites: and run 'irbench run "):
        run(capsys, campaign, "--measure", "ERR@20")
    with pytest.raises(StatisticsError, match="give no correction"):
        run(capsys, campaign, "--test", "tukey-hsd", "--correction", "holm")
    with pytest.raises(SystemExit):
        parser().parse_args(["compare", str(campaign), "--test", "anova"])
    capsys.readouterr()


def test_incomplete_scores_are_an_error_unless_common_topics(monkeypatch, campaign, capsys):
    real = Store.score_matrix

    def holes(self, qrels, measure, systems=()):
        names, topics, values = real(self, qrels, measure, systems)
        values = values.copy()
        values[0, 2] = np.nan
        return names, topics, values

    monkeypatch.setattr(Store, "score_matrix", holes)
    with pytest.raises(EvaluationError, match="has no AP value for t03"):
        run(capsys, campaign, "--measure", "AP")
    code, out, _ = run(capsys, campaign, "--measure", "AP", "--common-topics")
    assert code == 0 and "x 14 topics" in out


def test_all_pairs_default_to_randomized_tukey(campaign, capsys):
    code, out, err = run(capsys, campaign, "--measure", "AP", "--format", "json")
    settings = json.loads(out)["settings"]
    assert code == 0 and settings["test"] == "randomized-tukey-hsd"
    assert settings["correction"] == "randomized-tukey-hsd"  # the test is its own correction
