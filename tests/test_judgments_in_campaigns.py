"""Judgment-group and preference qrels sets in campaign configs (kind: qrels_jg, prefs,
qrels_prefs): stored per-topic values equal irbench eval -R ... on the same files."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

import irbench
from irbench.config import load_config
from irbench.judgments.groups import PreparedJudgmentGroups, read_qrels_jg
from irbench.judgments.preferences import PreparedPrefs, read_qrels_prefs
from irbench.runner import run_campaign
from irbench.store import Store

TREC_EVAL_TEST = Path(__file__).parent / "data" / "trec_eval_test"


@pytest.fixture
def campaign(tmp_path) -> Path:
    (tmp_path / "configs").mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("qrels.test", "qrels.123", "results.test", "results.trunc"):
        shutil.copy(TREC_EVAL_TEST / name, runs / name)
    config = tmp_path / "configs" / "k.yaml"
    config.write_text(textwrap.dedent("""\
        collection:
          qrels:
            official: ../runs/qrels.test
            users: {path: ../runs/qrels.123, kind: qrels_jg}
            preferences: {path: ../runs/qrels.test, kind: qrels_prefs}
        systems:
          standard: ../runs/results.test
          short: ../runs/results.trunc
        suites:
          core: [AP, P@10, map_avgjg, P_avgjg@10, prefs_simp, prefs_num_prefs_poss,
                 prefs_avgjg_Rnonrel]
        """))
    return config


def test_each_kind_takes_its_own_measures(campaign):
    config = load_config(campaign)
    report = run_campaign(config, workers=1)
    assert report.failures == [] and report.evaluated == 6
    with Store(config.store, read_only=True) as store:
        rows = store.query("SELECT system, qrels, measure, query_id, value FROM per_query")[1]
        kinds = dict(store.query("SELECT name, kind FROM qrels_sets")[1])
    got: dict = {}
    for system, qrels, measure, qid, value in rows:
        got.setdefault((system, qrels), {}).setdefault(measure, {})[qid] = value
    assert kinds == {"official": "adhoc", "users": "qrels_jg", "preferences": "qrels_prefs"}
    assert set(got[("standard", "official")]) == {"AP", "P@10"}
    assert set(got[("standard", "users")]) == {"AP_avgjg", "P_avgjg@10"}
    assert set(got[("standard", "preferences")]) == {
        "prefs_simp", "prefs_num_prefs_poss", "prefs_avgjg_Rnonrel"}
    prepared = {"users": PreparedJudgmentGroups(read_qrels_jg(TREC_EVAL_TEST / "qrels.123")),
                "preferences": PreparedPrefs(read_qrels_prefs(TREC_EVAL_TEST / "qrels.test"))}
    for system in config.systems:
        for qrels, measures in (("users", ["AP_avgjg", "P_avgjg@10"]),
                                ("preferences", ["prefs_simp", "prefs_num_prefs_poss",
                                                 "prefs_avgjg_Rnonrel"])):
            ev = irbench.evaluate(prepared[qrels], system.path, measures, complete=True)
            for m in measures:
                assert got[(system.name, qrels)][m] == pytest.approx(
                    dict(zip(ev.topics, ev[m])), abs=1e-15)


def test_measures_without_their_kind_of_set_are_refused(tmp_path, campaign):
    text = "".join(line for line in campaign.read_text().splitlines(keepends=True)
                   if "users:" not in line)
    assert "users" not in text
    campaign.write_text(text)
    with pytest.raises(irbench.errors.ConfigError) as info:
        load_config(campaign)
    assert any("'map_avgjg' needs a judgment-group qrels set" in p
               for p in info.value.problems)


def test_scores_show_the_measures_of_the_chosen_set(campaign, capsys):
    from irbench import cli

    assert cli.main(["run", "--quiet", "--workers", "1", str(campaign)]) == 0
    capsys.readouterr()
    assert cli.main(["scores", str(campaign), "--qrels", "preferences"]) == 0
    header, _, first, *_ = capsys.readouterr().out.splitlines()
    assert header.split() == ["system", "prefs_simp", "prefs_num_prefs_poss",
                              "prefs_avgjg_Rnonrel"]
    assert first.split()[2] == "669704"  # a count, printed whole
    assert cli.main(["scores", str(campaign), "--qrels", "users"]) == 0
    assert capsys.readouterr().out.split()[:3] == ["system", "AP_avgjg", "P_avgjg@10"]


def test_the_report_leads_with_a_preference_set(campaign, capsys):
    from irbench import cli

    lines = campaign.read_text().splitlines(keepends=True)
    prefs = next(line for line in lines if "preferences:" in line)
    lines.remove(prefs)
    lines.insert(lines.index("  qrels:\n") + 1, prefs)
    campaign.write_text("".join(lines))
    assert cli.main(["run", "--quiet", "--workers", "1", str(campaign)]) == 0
    assert cli.main(["report", str(campaign), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| prefs_simp | prefs_num_prefs_poss | prefs_avgjg_Rnonrel |" in out
    assert "**669704** |" in out and "669704.0000" not in out
    assert cli.main(["report", str(campaign), "--out", str(campaign.parent.parent / "r")]) == 0
