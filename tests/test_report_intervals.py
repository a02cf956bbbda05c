"""The intervals beside the leaderboard's means (issue 38): a seeded bootstrap BCa interval from
scipy.stats.bootstrap that stays in the measure's range, named in the caption, the same in
every export and on the run pages. scipy.stats.bootstrap called directly is the oracle."""

from __future__ import annotations

import csv
import io
import json
import re
import warnings

import numpy as np
import pytest
from campaigns import make_campaign
from scipy import stats as sps
from test_report import Page

from irbench import cli
from irbench.config import load_config
from irbench.errors import StatisticsError
from irbench.measures.base import REGISTRY
from irbench.report.exports import export_leaderboard
from irbench.report.intervals import has_interval
from irbench.report.leaderboard import leaderboard
from irbench.stats import intervals as iv
from irbench.stats.intervals import mean_intervals
from irbench.store import Store

# every registered ad hoc measure whose value is a mean of per-topic values (44 of them), with
# a cutoff where the family needs one
CUTOFF = {"IPrec": "IPrec@0.5", "P": "P@5", "R": "R@10", "Success": "Success@10",
          "judged": "judged@10", "relative_P": "relative_P@10", "unj": "unj@10"}
MEASURES = [CUTOFF.get(name, name) for name, family in sorted(REGISTRY.items())
            if family.needs == "adhoc" and has_interval(CUTOFF.get(name, name))]
BOUNDED = ["AP", "P@5", "P@10", "RR", "nDCG", "nDCG@10", "Rprec", "R@10", "R@100", "Bpref",
           "infAP", "ERR", "nERR", "RBP(p=0.8)", "Success@10", "judged@10", "set_P",
           "set_recall", "set_F", "F", "11pt_avg", "iprec_at_recall_0.00", "Q", "AUC", "BEP",
           "IPrec@0.5", "unj@10"]
NO_WARNINGS = pytest.mark.filterwarnings("error")


def oracle(row: np.ndarray, seed: int, samples: int = 10_000) -> tuple[float, float]:
    """scipy.stats.bootstrap on one row, as its documentation shows it, with the mean summed
    in one order (sorted) so that a resample of the same values as the row has the same
    mean: with np.mean, one in another order may differ in the last bit and float rounding
    decides its side in BCa's bias correction (for 3 topics 6 resamples in 27 are the row)."""
    def mean(x, axis=-1):
        return np.sort(x, axis=axis).mean(axis=axis)

    ci = sps.bootstrap((row,), mean, n_resamples=samples, method="BCa",
                       rng=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


# ---- the statistic against scipy ---------------------------------------------------------

@NO_WARNINGS
@pytest.mark.parametrize("n", [2, 3, 5, 25, 50])
def test_equals_scipy_bootstrap_called_directly(n):
    """Continuous (AP-like, skewed) values: every row as scipy.stats.bootstrap gives it alone,
    to the 8 significant digits the ends are rounded to."""
    rng = np.random.default_rng(n)
    values = rng.beta(0.4, 2.0, size=(7, n))
    found = mean_intervals(values, seed=11)
    for k, row in enumerate(values):
        low, high = oracle(row, 11)
        assert found.low[k] == pytest.approx(low, abs=1e-8)
        assert found.high[k] == pytest.approx(high, abs=1e-8)
        assert found.methods[k] == "BCa"


@NO_WARNINGS
def test_ties_at_the_mean_are_ties_as_with_exact_numbers():
    """P@10's values are tenths: resamples whose mean equals the observed one are common, and
    float rounding would decide which side they fall on. The oracle: scipy on the same
    values in whole numbers (exact in floating point), divided by 10."""
    rng = np.random.default_rng(3)
    tenths = rng.integers(0, 11, size=(6, 25))
    found = mean_intervals(tenths / 10, seed=5)
    for k, row in enumerate(tenths):
        low, high = oracle(row.astype(np.float64), 5)
        assert found.low[k] == pytest.approx(low / 10, abs=1e-8)
        assert found.high[k] == pytest.approx(high / 10, abs=1e-8)


@NO_WARNINGS
def test_a_row_gets_the_same_interval_alone_with_missing_topics_or_in_any_batch(monkeypatch):
    rng = np.random.default_rng(8)
    values = rng.random((40, 20)) ** 3
    values[5, [2, 9]] = np.nan  # a system without two topics: its 18 values
    whole = mean_intervals(values, seed=2)
    monkeypatch.setattr(iv, "CHUNK_BYTES", 8 * 10_000 * 3)  # three rows per scipy call
    chunked = mean_intervals(values, seed=2)
    assert np.array_equal(whole.low, chunked.low) and np.array_equal(whole.high, chunked.high)
    alone = mean_intervals(values[5], seed=2)
    assert (alone.low[0], alone.high[0]) == (whole.low[5], whole.high[5])
    low, high = oracle(values[5][np.isfinite(values[5])], 2)
    assert whole.low[5] == pytest.approx(low, abs=1e-8) and whole.topics[5] == 18


@NO_WARNINGS
def test_seeded_the_same_seed_the_same_numbers():
    values = np.random.default_rng(1).beta(0.5, 1.5, size=(10, 30))
    a, b = mean_intervals(values, seed=4), mean_intervals(values, seed=4)
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    c = mean_intervals(values, seed=5)
    assert not np.array_equal(a.low, c.low)
    assert (a.seed, a.samples, a.confidence) == (4, 10_000, 0.95)
    assert a.describe() == ("95% bootstrap BCa interval of the mean (scipy.stats.bootstrap, "
                            "10,000 resamples of the topics, seed 4)")


EXTREMES = {
    "all 0": [0.0] * 50,
    "all 1": [1.0] * 50,
    "one non-zero topic": [0.0] * 49 + [0.06],
    "one topic at 1": [0.0] * 49 + [1.0],
    "all 1 but one": [1.0] * 49 + [0.0],
    "two topics": [0.0, 1.0],
    "two topics, equal": [0.3, 0.3],
    "one topic": [0.7],
    "one topic at 0": [0.0],
    "P@10-like, skewed": [0.0] * 40 + [0.1] * 8 + [0.3, 1.0],
    "RR near 1": [1.0] * 45 + [0.5, 0.5, 0.333, 0.25, 0.1],
}


@NO_WARNINGS
@pytest.mark.parametrize("case", list(EXTREMES))
def test_extreme_cases_stay_in_range_and_hold_the_mean(case):
    """Where a t-interval leaves [0, 1] (AP [-0.0012, 0.0064], RR [0.8564, 1.0103]): within
    [min, max] of the values, around the mean; one value or all equal: the value itself."""
    x = np.array(EXTREMES[case])
    found = mean_intervals(x, seed=0)
    low, high, method = found.low[0], found.high[0], found.methods[0]
    assert 0.0 <= x.min() <= low <= x.mean() + 1e-12 and x.mean() - 1e-12 <= high <= x.max() <= 1
    if np.ptp(x) == 0:
        assert (low, high, method) == (x[0], x[0], "point")
    else:
        assert method == "BCa" and (low, high) == pytest.approx(oracle(x, 0), abs=1e-8)
    t_half = sps.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else 0
    if case == "one non-zero topic":  # the t-interval's lower end is below 0; this one is not
        assert x.mean() - t_half < 0 <= low


@NO_WARNINGS
def test_degenerate_rows_without_a_warning():
    """BCa is undefined for equal values (scipy warns and gives NaN) and for resamples all on
    one side of the mean (seen with very few resamples): the point, or the percentile interval
    of the same resamples, marked; no warning escapes (the filter turns one into a failure)."""
    values = np.array([[0.2] * 10, [np.nan] * 10, [0.5] + [np.nan] * 9,
                       list(np.linspace(0, 1, 10))])
    found = mean_intervals(values, seed=0)
    assert found.methods == ("point", "", "point", "BCa")
    assert np.isnan(found.low[1]) and np.isnan(found.mean[1]) and found.topics[1] == 0
    assert (found.low[2], found.high[2]) == (0.5, 0.5)
    rng = np.random.default_rng(0)
    few = mean_intervals(rng.random((30, 10)), samples=2, seed=0)  # z0 = +-inf for some rows
    assert "percentile" in few.methods and set(few.methods) <= {"BCa", "percentile"}
    assert np.isfinite(few.low).all() and (few.low <= few.high).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = sps.bootstrap((rng.random(5) * 0 + 0.4,), np.mean, method="BCa",
                               rng=np.random.default_rng(0)).confidence_interval
    assert np.isnan(direct.low)  # what scipy alone gives for equal values
    assert mean_intervals(np.empty((0, 0))).methods == ()


def test_bad_arguments_are_named_errors():
    with pytest.raises(StatisticsError, match="confidence"):
        mean_intervals([0.1, 0.2], confidence=1.5)
    with pytest.raises(StatisticsError, match="samples"):
        mean_intervals([0.1, 0.2], samples=0)


# ---- the report -------------------------------------------------------------------------

def _crafted(root, topics: int):
    """A campaign whose runs give every measure its extreme cases: 'perfect' (the 10 relevant
    documents first), 'none' (no relevant document), 'one' (perfect on the first topic only),
    'mixed' (seeded)."""
    (root / "configs").mkdir(parents=True)
    runs = root / "runs"
    runs.mkdir()
    ids = [f"t{i}" for i in range(1, topics + 1)]
    qrels = [f"{t} 0 {t}-{kind}{k} {int(kind == 'R')}" for t in ids for kind in "RN"
             for k in range(10)]
    (runs / "qrels.txt").write_text("\n".join(qrels) + "\n")
    rng = np.random.default_rng(topics)

    def ranking(t, good):
        docs = ([f"{t}-R{k}" for k in range(10)] if good else []) + \
            [f"{t}-N{k}" for k in range(10)] + [f"{t}-U{k}" for k in range(30)]
        return docs

    plans = {"perfect": lambda i, t: ranking(t, True), "none": lambda i, t: ranking(t, False),
             "one": lambda i, t: ranking(t, i == 0),
             "mixed": lambda i, t: list(rng.permutation(ranking(t, True)))}
    for name, plan in plans.items():
        lines = [f"{t} Q0 {d} {r + 1} {100 - r} {name}" for i, t in enumerate(ids)
                 for r, d in enumerate(plan(i, t))]
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n")
    suite = ", ".join(f"'{m}'" for m in MEASURES + ["P@10", "nDCG@10", "R@100", "GMAP"])
    config = root / "configs" / "c.yaml"
    config.write_text("collection:\n  qrels: {official: ../runs/qrels.txt}\n  size: 1000\n"
                      "systems:\n  - glob: ../*.txt\n"
                      f"suites:\n  all: [{suite}]\n")
    assert cli.main(["run", "--workers", "1", "--quiet", str(config)]) == 0
    return config


@NO_WARNINGS
@pytest.mark.timeout(300)
@pytest.mark.parametrize("topics", [1, 2, 5])
def test_every_measure_extreme_cases_in_the_leaderboard(tmp_path, topics):
    """Every ad hoc mean measure on runs giving all 0, all 1 (where the measure reaches it),
    one non-zero topic, over 5, two and one topic: each printed interval lies within the run's
    lowest and highest per-topic value (so in the measure's range: [0, 1] for the bounded
    ones) and holds the mean; GMAP has none."""
    config = load_config(_crafted(tmp_path, topics))
    with Store(config.store, read_only=True) as store:
        board = leaderboard(config, store, seed=0)
        matrices = {m: store.score_matrix("official", m) for m in board.measures}
    checked = 0
    for row in board.rows:
        for m, cell in zip(board.measures, row.cells):
            names, _, values = matrices[m]
            x = values[names.index(row.name)]
            if m == "GMAP":
                assert cell.ci == "" and cell.low is None
                continue
            assert cell.interval in ("BCa", "point"), (row.name, m)
            assert x.min() <= cell.low <= cell.value + 1e-9, (row.name, m, cell)
            assert cell.value - 1e-9 <= cell.high <= x.max(), (row.name, m, cell)
            if m in BOUNDED:
                assert 0 <= cell.low <= cell.high <= 1, (row.name, m)
            if topics == 1 or np.ptp(x) == 0:
                assert cell.interval == "point" and cell.low == cell.high == x[0]
            assert cell.ci == f"[{cell.low:.4f}, {cell.high:.4f}]"
            checked += 1
    assert checked == len(board.rows) * (len(board.measures) - 1) >= 4 * 45
    ap = {r.name: r.cells[board.measures.index("AP")] for r in board.rows}
    assert (ap["perfect"].low, ap["none"].high) == (1.0, 0.0)
    if topics == 5:  # one non-zero topic: from 0, not below it
        assert ap["one"].low == 0.0 and ap["one"].interval == "BCa"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("intervals")
    path = make_campaign(root, systems=5, topics=12, extra_qrels=False,
                         suites="core: [AP, P@10, GMAP, RR]")
    path.write_text(path.read_text().replace(
        "  - glob: ../runs/r*.txt",
        "  - glob: ../runs/r0[0-3].txt\n  - {name: base, run: ../runs/r04.txt, baseline: true}")
        .replace("  core: [AP, P@10, GMAP, RR]\n",
                 "  core: [AP, P@10, GMAP, RR]\n  more: [nDCG@10, Rprec]\n"))
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    return path


def _report(capsys, path, *args) -> str:
    capsys.readouterr()
    assert cli.main(["report", str(path), *args]) == 0
    return capsys.readouterr().out


@pytest.mark.timeout(300)
def test_caption_page_and_every_export_show_the_same_intervals(campaign, tmp_path, capsys):
    out = tmp_path / "rep"
    _report(capsys, campaign, "--out", str(out), "--seed", "7", "--participants")
    html = (out / "index.html").read_text()
    method = ("95% bootstrap BCa interval of the mean (scipy.stats.bootstrap, 10,000 resamples "
              "of the topics, seed 7)")
    caption = html.split('<section id="leaderboard">')[1].split("</p>")[0]
    assert method in " ".join(caption.split()) and "t-interval" not in html
    provenance = " ".join(html.split('id="provenance"')[1].split())
    assert "seed 7 (the significance tests and the leaderboard's bootstrap intervals" in \
        provenance.replace("&#39;", "'")  # the seed, recorded
    header, *rows = Page.of(html).tables[0]
    measures = header[6:]
    page = {}
    for row in rows:
        for m, cell in zip(measures, row[6:]):
            found = re.search(r"\[(\S+), (\S+)\]", cell)
            page[(row[1].removesuffix(" (baseline)"), m)] = found.groups() if found else None
    assert page[("base", "GMAP")] is None and page[("base", "AP")] is not None
    data = json.loads(_report(capsys, campaign, "--format", "json", "--seed", "7"))
    assert data["interval"].startswith(method)
    records = list(csv.DictReader(io.StringIO(_report(capsys, campaign, "--format", "csv",
                                                      "--seed", "7"))))
    latex = _report(capsys, campaign, "--format", "latex", "--seed", "7")
    assert "% below each mean: 95\\% bootstrap BCa interval" in latex and "seed 7" in latex
    markdown = _report(capsys, campaign, "--format", "markdown", "--seed", "7")
    assert f"Beside each mean: {method}" in markdown
    latex_rows = iter(line for line in latex.splitlines() if "footnotesize" in line)
    core = [s for s in data["systems"] if s["suite"] == "core"]  # "more": its own table
    for system, record in zip(core, [r for r in records if r["suite"] == "core"]):
        shown_latex = re.findall(r"\[(\S+), (\S+)\]", next(latex_rows))
        for m in measures:
            expected = page[(system["system"], m)]
            low, high = system[f"{m} ci low"], system[f"{m} ci high"]
            if expected is None:
                assert low is None and record[f"{m} ci low"] == ""
                continue
            assert (f"{low:.4f}", f"{high:.4f}") == expected
            assert (float(record[f"{m} ci low"]), float(record[f"{m} ci high"])) == (low, high)
            assert system[f"{m} ci method"] == record[f"{m} ci method"] == "BCa"
            assert 0 <= low <= system[m] <= high <= 1
            assert f"[{low:.4f}, {high:.4f}]" in markdown
        assert shown_latex == [page[(system["system"], m)] for m in measures
                               if page[(system["system"], m)] is not None]
    # the run pages: the leaderboard's intervals, and the other suite's computed alike
    config = load_config(campaign)
    with Store(config.store, read_only=True) as store:
        more = {m: store.score_matrix("official", m) for m in ("nDCG@10", "Rprec")}
    for system in core:
        name = system["system"]
        run_page = (out / "systems" / f"{name}.html").read_text()
        assert method in run_page
        table = {r[0]: r for r in Page.of(run_page).tables[1][1:]}
        for m in measures:
            expected = page[(name, m)]
            assert table[m][5] == (f"[{expected[0]}, {expected[1]}]" if expected else "")
        for m, (names, _, values) in more.items():
            found = mean_intervals(values[names.index(name)], seed=7)
            assert table[m][5] == f"[{found.low[0]:.4f}, {found.high[0]:.4f}]"


@pytest.mark.timeout(300)
def test_the_report_seed_decides_the_intervals(campaign, capsys):
    def intervals(seed: str) -> list:
        data = json.loads(_report(capsys, campaign, "--format", "json", "--seed", seed))
        return [(s["AP ci low"], s["AP ci high"], s["RR ci low"]) for s in data["systems"]
                if s["suite"] == "core"]

    assert intervals("3") == intervals("3")
    assert intervals("3") != intervals("4")


def test_exports_carry_the_fallback_and_point_methods():
    """A hand-made leaderboard with a percentile fallback and a point: the method column and
    the marked text in every format."""
    from irbench.report.contract import Cell, Leaderboard, SystemRow
    from irbench.report.intervals import caption

    cells = (Cell(value=0.5, text="0.5000", ci="[0.4000, 0.6000]*", low=0.4, high=0.6,
                  interval="percentile", best=True, mark="", p_adjusted=""),
             Cell(value=1.0, text="1.0000", ci="[1.0000, 1.0000]", low=1.0, high=1.0,
                  interval="point", best=True, mark="", p_adjusted=""))
    board = Leaderboard(qrels="q", measures=("AP", "P@10"), topics=3, baseline="", test="none",
                        interval=caption(0, {"percentile", "point"}),
                        rows=(SystemRow(rank=1, name="s", group="", type="", baseline=False,
                                        official=True, pooled="", cells=cells),))
    record = json.loads(export_leaderboard(board, "json"))["systems"][0]
    assert (record["AP ci method"], record["P@10 ci method"]) == ("percentile", "point")
    assert "*: a percentile interval of the same resamples" in board.interval
    assert "every topic has that value" in board.interval
    assert r"[0.4000, 0.6000]\*" in export_leaderboard(board, "markdown")
    assert "{\\footnotesize [0.4000, 0.6000]*}" in export_leaderboard(board, "latex")
    assert "percentile" in export_leaderboard(board, "csv")
