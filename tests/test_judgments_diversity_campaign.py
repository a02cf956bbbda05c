"""Diversity qrels sets in campaign configs: scored by irbench run as irbench eval scores them."""

from __future__ import annotations

import csv
import textwrap
from pathlib import Path

import numpy as np
import pytest
from campaigns import make_campaign

import irbench
from irbench import cli
from irbench.config import load_config
from irbench.errors import ConfigError
from irbench.judgments.diversity import collapse, evaluate_diversity, read_diversity_qrels
from irbench.runner import run_campaign
from irbench.store import Store

SUITE = "core: [AP, nDCG@10, alpha-nDCG@10, ERR-IA@20, S-recall@10, P-IA@5]"


def write_diversity_qrels(path: Path, topics: list[str], seed: int = 3) -> None:
    """Three subtopics per topic; each judges 40 of the documents make_campaign's runs use."""
    rng = np.random.default_rng(seed)
    lines = []
    for t in topics:
        for sub in (1, 2, 3):
            docs = np.sort(rng.choice(300, size=40, replace=False))
            rel = (rng.random(40) < 0.3).astype(int)
            lines += [f"{t} {sub} {t}-D{d:04d} {r}" for d, r in zip(docs, rel)]
    path.write_text("\n".join(lines) + "\n")


def diversity_campaign(root: Path, weights: bool = False) -> Path:
    config = make_campaign(root, suites=SUITE, extra_qrels=False)
    topics = [f"t{i:02d}" for i in range(1, 6)]
    write_diversity_qrels(root / "runs" / "div.txt", topics)
    extra = ""
    if weights:
        (root / "runs" / "weights.txt").write_text(
            "".join(f"{t} 1 0.6\n{t} 2 0.3\n{t} 3 0.1\n" for t in topics))
        extra = ", intent_weights: ../runs/weights.txt"
    text = config.read_text().replace(
        "qrels: {official: ../runs/qrels.txt}",
        "qrels: {official: ../runs/qrels.txt, web: {path: ../runs/div.txt, kind: diversity"
        f"{extra}}}}}")
    config.write_text(text)
    return config


def stored(config) -> dict:
    with Store(config.store, read_only=True) as store:
        _, rows = store.query("SELECT system, qrels, measure, query_id, value FROM per_query")
    out: dict = {}
    for system, qrels, measure, qid, value in rows:
        out.setdefault((system, qrels, measure), {})[qid] = value
    return out


@pytest.mark.parametrize("weights", [False, True])
def test_a_diversity_set_is_scored_like_irbench_eval(tmp_path, weights):
    path = diversity_campaign(tmp_path, weights)
    config = load_config(path)
    report = run_campaign(config, workers=1)
    assert report.failures == [] and report.evaluated == 8
    got = stored(config)
    div_path = str(tmp_path / "runs" / "div.txt")
    weight_file = str(tmp_path / "runs" / "weights.txt") if weights else None
    div_measures = ["AP", "nDCG@10", "alpha-nDCG@10", "ERR-IA@20", "S-recall@10", "P-IA@5"]
    for system in config.systems:
        ev = evaluate_diversity(div_path, system.path, div_measures, complete=True,
                                intent_weights=weight_file)
        for m in div_measures:
            want = {q: v for q, v in zip(ev.topics, ev[m])}
            assert got[(system.name, "web", str(irbench.parse_measure(m)))] == pytest.approx(
                want, rel=1e-12, abs=1e-15)
        adhoc = irbench.evaluate(config.qrels_path("official"), system.path,
                                 ["AP", "nDCG@10"], complete=True)
        assert got[(system.name, "official", "AP")] == pytest.approx(
            dict(zip(adhoc.topics, adhoc["AP"])), rel=1e-12, abs=1e-15)
        # diversity measures are not taken by the ad hoc set
        assert (system.name, "official", "alpha-nDCG@10") not in got
    # ad hoc measures on a diversity set use its collapsed judgments
    collapsed = collapse(read_diversity_qrels(div_path))
    first = config.systems[0]
    ap = irbench.evaluate(collapsed, first.path, ["AP"], complete=True)
    assert got[(first.name, "web", "AP")] == pytest.approx(dict(zip(ap.topics, ap["AP"])))
    with Store(config.store, read_only=True) as store:
        rows = store.query("SELECT name, kind, intent_weights IS NOT NULL, "
                           "intent_weights_sha256 IS NOT NULL FROM qrels_sets ORDER BY name")[1]
    assert rows == [("official", "adhoc", False, False), ("web", "diversity", weights, weights)]


def test_changed_intent_weights_recompute_only_the_diversity_set(tmp_path):
    path = diversity_campaign(tmp_path, weights=True)
    assert run_campaign(load_config(path), workers=1).evaluated == 8
    weights = tmp_path / "runs" / "weights.txt"
    weights.write_text(weights.read_text().replace(" 0.6\n", " 0.7\n"))
    report = run_campaign(load_config(path), workers=1)
    assert (report.evaluated, report.reused, report.failures) == (4, 4, [])
    report = run_campaign(load_config(path), workers=1)
    assert (report.evaluated, report.reused) == (0, 8)


def test_diversity_problems_are_named(tmp_path, capsys):
    path = diversity_campaign(tmp_path, weights=True)
    (tmp_path / "runs" / "weights.txt").write_text("t01 1 heavy\n")
    assert cli.main(["run", "--quiet", "--workers", "1", str(path)]) == 1
    err = capsys.readouterr().err
    assert "qrels 'web'" in err and "weights.txt:1:" in err
    assert "Traceback" not in err
    # the ad hoc set was scored all the same
    assert ("r00", "official", "AP") in stored(load_config(path))


@pytest.mark.parametrize("qrels, message", [
    ("{official: ../runs/qrels.txt, web: {path: ../runs/qrels.txt, kind: subtopics}}",
     "collection.qrels.web.kind: must be adhoc, diversity, qrels_jg, prefs, qrels_prefs, support, "
     "support_shared or nuggets"),
    ("{official: {path: ../runs/qrels.txt, intent_weights: ../runs/qrels.txt}}",
     "collection.qrels.official.intent_weights: only a diversity qrels set has intent weights"),
    ("{official: {kind: diversity}}", "collection.qrels.official: 'path' is missing"),
    ("{official: {path: ../runs/qrels.txt, weights: x}}",
     "collection.qrels.official.weights: unknown key (path, kind, intent_weights, model)"),
])
def test_diversity_config_errors(tmp_path, qrels, message):
    make_campaign(tmp_path, extra_qrels=False)
    path = tmp_path / "configs" / "d.yaml"
    path.write_text(textwrap.dedent(f"""\
        collection:
          qrels: {qrels}
        systems:
          - glob: ../runs/r*.txt
        suites:
          core: [AP]
        """))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert any(message in p for p in info.value.problems), info.value.problems


def test_a_diversity_set_first_leads_the_leaderboard_and_report(tmp_path, capsys):
    path = diversity_campaign(tmp_path)
    text = path.read_text()
    text = text.replace("qrels: {official: ../runs/qrels.txt, web: {path: ../runs/div.txt, "
                        "kind: diversity}}",
                        "qrels: {web: {path: ../runs/div.txt, kind: diversity}, "
                        "official: ../runs/qrels.txt}")
    path.write_text(text)
    assert cli.main(["run", "--workers", "1", str(path)]) == 0
    out = capsys.readouterr().out
    assert "on qrels 'web', by AP" in out and "alpha_nDCG@10" in out
    assert cli.main(["report", str(path), "--format", "csv"]) == 0
    header, *rows = csv.reader(capsys.readouterr().out.splitlines())
    assert "alpha_nDCG@10" in header and len(rows) == 4
    config = load_config(path)
    with Store(config.store, read_only=True) as store:
        means = dict(store.query("SELECT system, value FROM means WHERE qrels = 'web' AND "
                                 "measure = 'alpha_nDCG@10'")[1])
    column = header.index("alpha_nDCG@10")
    for row in rows:
        assert float(row[column]) == pytest.approx(means[row[header.index("system")]])
    assert cli.main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "index.html").stat().st_size > 10_000
