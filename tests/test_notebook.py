"""A lab's notebook (issue 23): the README's notebook example runs as written on the bundled
demo campaign (scored into a temporary copy, never into the repository's runs/), and the pieces
it leans on hold: ``irbench.stats`` after a bare ``import irbench`` (still lazy),
``Scores.from_frame(..., qrels=)``, ``Comparison.to_frame`` / ``_repr_html_`` / ``repr``, and a
bare string refused where a list of measures is expected."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from campaigns import copy_demo

import irbench
from irbench import cli
from irbench.errors import EvaluationError, OutputError, UnknownMeasureError

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
NOTEBOOK_START = "import irbench, pandas as pd\n"  # how the README's notebook block begins


def _notebook_block() -> str:
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
              if b.startswith(NOTEBOOK_START)]
    assert len(blocks) == 1, "the README has one python block starting " + NOTEBOOK_START
    return blocks[0]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A scored copy of the bundled demo campaign: configs/ and runs/demo/ as in the
    repository, its store at runs/demo.duckdb beside them."""
    root = tmp_path_factory.mktemp("demo")
    assert cli.main(["run", "--quiet", "--workers", "1", str(copy_demo(root))]) == 0
    assert (root / "runs" / "demo.duckdb").exists()
    return root


@pytest.fixture
def in_demo(demo, monkeypatch) -> Path:
    monkeypatch.chdir(demo)  # the README's paths are relative to the repository's root
    return demo


def _run_like_a_notebook(source: str) -> tuple[dict, list]:
    """Execute ``source`` cell by cell as a notebook would: each statement in turn, keeping
    the value of every expression statement (what a notebook shows)."""
    namespace: dict = {}
    shown = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Expr):
            shown.append(eval(compile(ast.Expression(node.value), "README.md", "eval"),
                              namespace))
        else:
            exec(compile(ast.Module([node], type_ignores=[]), "README.md", "exec"), namespace)
    return namespace, shown


class _Table(HTMLParser):
    """Tags, header cells, body rows and all text of an HTML fragment."""

    def __init__(self):
        super().__init__()
        self.tags, self.head, self.rows, self.text = [], [], [], []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            text = "".join(self._cell)
            (self.head if tag == "th" else self.rows[-1]).append(text)
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


# ---- the README's notebook example --------------------------------------------------------

def test_the_readme_notebook_block_runs_as_written_on_the_demo(in_demo):
    matplotlib = pytest.importorskip("matplotlib")  # .plot.barh(): the report extra
    matplotlib.use("Agg")
    source = _notebook_block()
    assert "[...]" not in source and "..." not in source  # real data, no placeholders
    namespace, shown = _run_like_a_notebook(source)
    frame, axes, comparison = shown

    # frame in, tidy frame out: every qrels topic (complete=True scores the missing ones 0)
    assert list(frame.columns) == ["query_id", "measure", "value"]
    assert sorted(set(frame.measure)) == ["AP", "RR@10"]
    assert len(frame) == 2 * 25
    ap = frame[frame.measure == "AP"].set_index("query_id").value
    assert ap["401"] == pytest.approx(1 / 23)  # one relevant document, 23 relevant in total
    assert (ap.drop("401") == 0).all()
    rr = frame[frame.measure == "RR@10"].set_index("query_id").value
    assert rr["401"] == 1.0

    # the bar chart of the official means, one bar per system
    assert len(axes.patches) == 12

    # the comparison: all 66 pairs of the 12 systems on the official qrels, as the store has them
    from irbench.store import Store

    assert isinstance(comparison, irbench.stats.Comparison)
    assert len(comparison.pairs) == 66 and comparison.measures == ("AP",)
    with Store(str(in_demo / "runs" / "demo.duckdb"), read_only=True) as store:
        stored = irbench.stats.Scores.from_store(store, "official", "AP")
    framed = irbench.stats.Scores.from_frame(namespace["ap"], qrels="official")
    assert framed.select(stored.systems).values.tolist() == stored.values.tolist()
    want = irbench.stats.compare(stored)
    for pair in want.pairs:
        got = comparison.pair("AP", pair.system_a, pair.system_b)
        assert got.p_adjusted == pair.p_adjusted and got.significant == pair.significant
    assert len(comparison.to_frame()) == 66  # the comment's suggestion works too


def test_the_old_readme_line_now_says_to_pick_a_qrels_set(demo):
    per_query = irbench.open_store(str(demo / "configs" / "demo.yaml")).per_query()
    with pytest.raises(EvaluationError) as exc:
        irbench.stats.Scores.from_frame(per_query, "AP")
    assert str(exc.value) == ("the frame holds 2 qrels sets in its 'qrels' column "
                              "(depth5, official): pick one with qrels=")


# ---- 1. irbench.stats after import irbench, lazily -----------------------------------------

def test_irbench_stats_after_a_bare_import_and_only_when_used():
    code = ("import sys, irbench\n"
            "assert 'stats' in dir(irbench)\n"
            "before = sorted(m for m in ('numpy', 'scipy', 'irbench.stats') if m in sys.modules)\n"
            "compare = irbench.stats.compare\n"
            "print(before, compare.__module__, 'scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    assert out.stdout.split() == ["[]", "irbench.stats.multiple", "True"]


def test_irbench_stats_is_the_stats_package():
    import irbench.stats as stats

    assert irbench.stats is stats
    with pytest.raises(AttributeError, match="no attribute 'statz'"):
        irbench.statz


# ---- 2. Scores.from_frame with qrels= ------------------------------------------------------

def _two_qrels_frame():
    return pd.DataFrame({"system": ["a", "a", "b", "b"] * 2,
                         "qrels": ["official", "depth5"] * 4,
                         "measure": ["AP"] * 4 + ["P@10"] * 4,
                         "query_id": ["1", "1", "1", "1", "1", "1", "1", "1"],
                         "value": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]})


def test_from_frame_picks_a_qrels_set_as_it_picks_a_measure():
    frame = _two_qrels_frame()
    scores = irbench.stats.Scores.from_frame(frame, "AP", qrels="depth5")
    assert scores.measure == "AP" and scores.systems == ("a", "b")
    assert scores.values.tolist() == [[0.2], [0.4]]
    official = irbench.stats.Scores.from_frame(frame, "P@10", qrels="official")
    assert official.values.tolist() == [[0.5], [0.7]]
    one_set = frame[frame.qrels == "official"]
    assert irbench.stats.Scores.from_frame(one_set, "AP").values.tolist() == [[0.1], [0.3]]


@pytest.mark.parametrize("kwargs, message", [
    ({"measure": "AP"}, "the frame holds 2 qrels sets in its 'qrels' column (official, "
                        "depth5): pick one with qrels="),
    ({"qrels": "depth5"}, "the frame holds 2 measures in its 'measure' column (AP, P@10): "
                          "pick one with measure="),
    ({"measure": "AP", "qrels": "deep"}, "no rows of qrels 'deep' (the frame's 'qrels' column "
                                         "has official, depth5)"),
])
def test_from_frame_refuses_an_ambiguous_or_absent_choice(kwargs, message):
    with pytest.raises(EvaluationError) as exc:
        irbench.stats.Scores.from_frame(_two_qrels_frame(), **kwargs)
    assert str(exc.value) == message


def test_from_frame_refuses_qrels_for_a_frame_without_the_column():
    frame = _two_qrels_frame().drop(columns="qrels")
    with pytest.raises(EvaluationError, match="qrels='official' given, but the frame has no "
                                              "'qrels' column"):
        irbench.stats.Scores.from_frame(frame, "AP", qrels="official")


def test_a_repeated_cell_names_the_column_that_tells_the_rows_apart():
    frame = pd.DataFrame({"system": ["a", "a", "b"], "query_id": ["1", "1", "1"],
                          "run_date": ["monday", "tuesday", "monday"], "note": ["x", "x", "x"],
                          "value": [0.1, 0.2, 0.3]})
    with pytest.raises(EvaluationError) as exc:
        irbench.stats.Scores.from_frame(frame)
    assert str(exc.value) == ("system 'a' has two values for topic '1'; the rows differ in "
                              "column 'run_date' (monday, tuesday): keep one value of it "
                              "(filter the frame) before Scores.from_frame")
    same = frame.drop(columns="run_date")
    with pytest.raises(EvaluationError, match="system 'a' has two values for topic '1'; the "
                                              "rows are the same in every other column"):
        irbench.stats.Scores.from_frame(same)


# ---- 3. a comparison as a frame, an HTML table and a short repr ----------------------------

def _scores(systems=("base", "mid", "top"), topics=8, seed=3):
    rng = np.random.default_rng(seed)
    values = rng.random((len(systems), topics)) * 0.2 + np.arange(len(systems))[:, None] * 0.3
    return irbench.stats.Scores("AP", systems, [str(t) for t in range(topics)], values)


def test_comparison_to_frame_has_a_row_per_pair_with_every_pair_field():
    from irbench.stats.multiple import ROW

    comparison = irbench.stats.compare(_scores(), baseline="base", test="t")
    frame = comparison.to_frame()
    assert list(frame.columns) == list(ROW) == [
        "measure", "system_a", "system_b", "mean_a", "mean_b", "mean_diff", "ci_low",
        "ci_high", "statistic", "p_value", "p_adjusted", "effect_size", "hedges_g", "n",
        "significant"]
    assert len(frame) == len(comparison.pairs) == 2
    for row, pair in zip(frame.itertuples(index=False), comparison.pairs):
        assert (row.measure, row.system_a, row.system_b) == ("AP", pair.system_a, "base")
        assert row.mean_a == pair.mean_a and row.mean_b == pair.mean_b
        assert row.mean_diff == pair.result.mean_diff
        assert (row.ci_low, row.ci_high) == (pair.result.ci_low, pair.result.ci_high)
        assert row.p_value == pair.result.p_value and row.p_adjusted == pair.p_adjusted
        assert row.effect_size == pair.result.effect_size and row.n == 8
        assert row.significant == pair.significant
    assert frame.attrs["test"] == "t" and frame.attrs["correction"] == "holm"
    assert frame.attrs["baseline"] == "base" and frame.attrs["alpha"] == 0.05


def test_comparison_to_frame_and_irbench_to_frame_without_pandas_name_the_extra(monkeypatch):
    comparison = irbench.stats.compare(_scores(), baseline="base", test="t")
    ev = irbench.evaluate([("1", "a", 1)], [("1", "a", 1.0)], ["AP"])
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if it were not installed
    with pytest.raises(OutputError) as exc:
        comparison.to_frame()
    assert str(exc.value) == "Comparison.to_frame needs pandas: pip install 'irbench[pandas]'"
    with pytest.raises(OutputError, match=r"irbench.to_frame needs pandas: pip install "
                                          r"'irbench\[pandas\]'"):
        irbench.to_frame(ev)
    assert "<table" in comparison._repr_html_()  # the HTML table needs no pandas


def test_comparison_html_is_a_table_with_every_name_escaped():
    hostile = ("<script>alert(1)</script>", "a&b \"quoted\"", "<img src=x onerror=y>")
    comparison = irbench.stats.compare(_scores(hostile), test="t")
    page = comparison._repr_html_()
    assert "<script" not in page and "<img" not in page
    parsed = _Table()
    parsed.feed(page)
    assert set(parsed.tags) == {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    assert parsed.head[:3] == ["measure", "system a", "system b"]
    body = parsed.rows[1:]
    assert len(body) == 3 and all(len(r) == len(parsed.head) for r in body)
    assert {(r[1], r[2]) for r in body} == {(p.system_a, p.system_b) for p in comparison.pairs}
    assert all(r[-1] in ("yes", "") for r in body)


def test_comparison_html_shows_its_notes_escaped():
    comparison = irbench.stats.compare(_scores(), test="randomization", samples=10,
                                       correction="holm")
    assert comparison.notes
    page = comparison._repr_html_()
    parsed = _Table()
    parsed.feed(page)
    assert comparison.notes[0] in "".join(parsed.text)


def test_comparison_repr_is_one_short_line():
    from irbench.stats.choices import FAMILIES
    from irbench.stats.multiple import FAMILY_WORDS

    assert set(FAMILY_WORDS) == set(FAMILIES)
    against = irbench.stats.compare(_scores(), baseline="base", test="t")
    text = repr(against)
    assert text.startswith("<Comparison: 2 systems against base; AP on 8 topics; t test, holm "
                           "correction, alpha 0.05: ") and text.endswith(" of 2 pairs significant>")
    many = [_scores(), irbench.stats.Scores("P@10", ("base", "mid", "top"),
                                            [str(t) for t in range(8)], _scores().values[::-1])]
    tukey = irbench.stats.compare(many, family="all")
    assert repr(tukey).startswith("<Comparison: 3 systems, all pairs; AP on 8 topics, P@10 on 8 "
                                  "topics; randomized-tukey-hsd (one family over the measures)")
    assert "\n" not in repr(tukey) and len(repr(tukey)) < 200


# ---- 4. a bare string where a list of measures is expected ---------------------------------

MESSAGE = "measures must be a list of measure names, not the string 'AP': write ['AP']"
QRELS = ROOT / "runs" / "demo" / "qrels.txt"
RUN = ROOT / "runs" / "demo" / "runs" / "groupA-1.txt"


def _pooled():
    from irbench.pooling import build_pool, build_table

    table = build_table([("groupA-1", "groupA", str(RUN))])
    return table, irbench.read_qrels(str(QRELS)), build_pool(table, "depth", k=5)


def _store_calls(demo):
    from irbench.store import Store

    frames = irbench.open_store(str(demo / "configs" / "demo.yaml"))
    path = str(demo / "runs" / "demo.duckdb")

    def with_store(method):
        def call():
            with Store(path, read_only=True) as store:
                return getattr(store, method)(measures="AP")
        return call

    return {"StoreFrames.per_query": lambda: frames.per_query(measures="AP"),
            "StoreFrames.means": lambda: frames.means(measures="AP"),
            "Store.per_query": with_store("per_query"), "Store.means": with_store("means")}


def _library_calls():
    from irbench.judgments.known import evaluate_known
    from irbench.pooling import leave_one_out, simulate_budgets

    return {
        "evaluate": lambda: irbench.evaluate(str(QRELS), str(RUN), "AP"),
        "evaluate_known": lambda: evaluate_known(str(QRELS), str(QRELS), str(RUN), "AP"),
        "leave_one_out": lambda: leave_one_out(*_pooled(), measures="AP"),
        "simulate_budgets": lambda: simulate_budgets(*_pooled()[:2], measures="AP"),
    }


@pytest.mark.parametrize("name", sorted(_library_calls()))
def test_a_bare_string_of_measures_is_refused(name):
    with pytest.raises(UnknownMeasureError) as exc:
        _library_calls()[name]()
    assert str(exc.value) == MESSAGE


def test_the_store_refuses_a_bare_string_of_measures(demo):
    for name, call in _store_calls(demo).items():
        with pytest.raises(UnknownMeasureError) as exc:
            call()
        assert str(exc.value) == MESSAGE, name


def test_lists_and_tuples_of_measures_still_work():
    listed = irbench.evaluate(str(QRELS), str(RUN), ["AP"])
    tupled = irbench.evaluate(str(QRELS), str(RUN), ("AP", "P@10"))
    assert listed.summary("AP") == tupled.summary("AP")
    assert [str(m) for m in tupled.values] == ["AP", "P@10"]
