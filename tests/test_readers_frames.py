"""Data frames in and out (issue 16): runs and qrels as pandas (and Polars, Arrow) frames with
the column names ir_measures uses, named tuples as ir_measures and ir_datasets give them, tidy
frames of results and of a campaign's store, and scores for the statistics from a frame."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
from campaigns import make_campaign

import irbench
from irbench import cli, stats
from irbench.errors import EvaluationError, FormatError
from irbench.pooling import build_table

pd = pytest.importorskip("pandas")

DEMO = Path(__file__).resolve().parent.parent / "runs" / "demo"
MEASURES = ["AP", "nDCG@10", "P@10", "RR", "Bpref", "infAP", "GMAP"]


def _frame(path: Path, kind: str) -> pd.DataFrame:
    """A run or qrels file as a frame, read without irbench (columns as ir_measures names)."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    if kind == "run":
        return pd.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                             "score": [float(r[4]) for r in rows]})
    return pd.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                         "relevance": [int(r[3]) for r in rows],
                         "iteration": [r[1] for r in rows]})


@pytest.mark.parametrize("run", ["groupA-1", "groupC-3"])
def test_frames_in_give_the_values_files_give(run):
    qrels_path, run_path = DEMO / "qrels.txt", DEMO / "runs" / f"{run}.txt"
    want = irbench.evaluate(str(qrels_path), str(run_path), MEASURES)
    got = irbench.evaluate(_frame(qrels_path, "qrels"), _frame(run_path, "run"), MEASURES)
    assert got.topics == want.topics
    for m in MEASURES:
        assert np.array_equal(got[m], want[m]), m
        assert got.summary(m) == want.summary(m)


def test_named_tuples_as_ir_measures_and_ir_datasets_give_them():
    Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")  # their field order
    ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
    qrels = [Qrel("1", "a", 1, "0"), Qrel("1", "b", 0, "0"), Qrel("2", "c", 2, "Q0")]
    run = [ScoredDoc("1", "b", 2.0), ScoredDoc("1", "a", 1.0), ScoredDoc("2", "c", 5.0)]
    ev = irbench.evaluate(qrels, run, ["AP", "RR"])
    assert ev.topics == ("1", "2")
    assert ev["RR"].tolist() == [0.5, 1.0]


def test_integer_and_non_ascii_ids():
    run = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": ["été", "b", "ü"],
                        "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": [1, 2], "doc_id": ["été", "ü"], "relevance": [1, 1]})
    read = irbench.read_run(run)
    assert read.query_id.tolist() == [b"1", b"1", b"2"]
    assert read.doc_id.tolist() == ["été".encode(), b"b", "ü".encode()]
    assert irbench.evaluate(qrels, run, ["AP"])["AP"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("frame, message", [
    ({"qid": ["1"], "docno": ["a"], "score": [1.0]},
     "<run>: a run data frame needs the columns query_id, doc_id (it has qid, docno, score"),
    ({"query_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "<run>:2: query_id is missing"),
    ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("inf")]},
     "<run>:2: score is not a finite number: inf"),
    ({"query_id": ["1"], "doc_id": ["d" * 1025], "score": [1.0]},
     "<run>:1: doc_id of 1,025 bytes: at most 1,024 bytes"),
    ({"query_id": [], "doc_id": [], "score": []}, "<run>:1: empty run: no rows"),
])
def test_bad_run_frames_name_the_row_and_the_reason(frame, message):
    with pytest.raises(FormatError) as exc:
        irbench.read_run(pd.DataFrame(frame))
    assert message in str(exc.value)


def test_bad_qrels_frames():
    with pytest.raises(FormatError, match=r"<qrels>:2: relevance is not an integer in range: "
                                          r"1\.5"):
        irbench.read_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                                         "relevance": [1, 1.5]}))
    with pytest.raises(FormatError, match="duplicate judgment of docno 'a' for topic '1'"):
        irbench.read_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"],
                                         "relevance": [1, 0]}))


def test_results_as_a_tidy_frame():
    runs = [DEMO / "runs" / f"group{g}-1.txt" for g in "AB"]
    evs = [irbench.evaluate(str(DEMO / "qrels.txt"), str(p), ["AP", "P@10", "runid"])
           for p in runs]
    one = irbench.to_frame(evs[0])
    assert list(one.columns) == ["query_id", "measure", "value"]
    assert len(one) == 2 * 25  # runid, a text measure, is left out
    ap = one[one.measure == "AP"]
    assert ap.value.tolist() == evs[0]["AP"].tolist()
    assert ap.query_id.tolist() == list(evs[0].topics)
    many = irbench.to_frame(evs)
    assert list(many.columns) == ["system", "query_id", "measure", "value"]
    assert sorted(set(many.system)) == ["groupA-1.txt", "groupB-1.txt"]
    named = irbench.to_frame({"a": evs[0], "b": evs[1]})
    assert sorted(set(named.system)) == ["a", "b"]
    assert named.groupby(["system", "measure"]).value.mean()[("a", "AP")] == \
        pytest.approx(evs[0].summary("AP"))


def test_a_campaign_store_as_frames(tmp_path, capsys):
    path = make_campaign(tmp_path)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    capsys.readouterr()
    store = irbench.open_store(str(path))
    per_query = store.per_query(qrels="official", measures=["AP"])
    assert list(per_query.columns) == ["system", "qrels", "measure", "query_id", "value"]
    assert len(per_query) == 4 * 5
    means = store.means(qrels="official", measures=["AP"])
    by_system = per_query.groupby("system").value.mean()
    for row in means.itertuples():
        assert row.value == pytest.approx(by_system[row.system])
    # the statistics take the frame as they take the store
    from irbench.store import Store

    with Store(str(tmp_path / "runs" / "c.duckdb"), read_only=True) as s:
        stored = stats.Scores.from_store(s, "official", "AP")
    framed = stats.Scores.from_frame(per_query).select(stored.systems)
    assert framed.topics == stored.topics
    assert np.array_equal(framed.values, stored.values)
    whole = store.per_query(qrels="official")
    with pytest.raises(EvaluationError, match="pick one with measure="):
        stats.Scores.from_frame(whole)
    assert stats.Scores.from_frame(whole, "AP").select(stored.systems).values.tolist() == \
        stored.values.tolist()


def test_scores_from_a_frame_refuse_a_repeated_cell():
    frame = pd.DataFrame({"system": ["a", "a"], "query_id": ["1", "1"], "value": [0.1, 0.2]})
    with pytest.raises(EvaluationError, match="system 'a' has two values for topic '1'"):
        stats.Scores.from_frame(frame)


def test_pools_take_frames():
    runs = [(f"group{g}-1", f"group{g}", _frame(DEMO / "runs" / f"group{g}-1.txt", "run"))
            for g in "AB"]
    table = build_table(runs)
    files = build_table([(name, group, str(DEMO / "runs" / f"{name}.txt"))
                         for name, group, _ in runs])
    assert table.runs == files.runs and table.num_candidates == files.num_candidates


@pytest.mark.parametrize("module", ["pyarrow", "polars"])
def test_arrow_tables_and_polars_frames(module):
    lib = pytest.importorskip(module)
    make = lib.table if module == "pyarrow" else lib.DataFrame
    run = {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 3.0]}
    qrels = {"query_id": ["1", "2"], "doc_id": ["b", "c"], "relevance": [1, 1]}
    assert irbench.evaluate(make(qrels), make(run), ["RR"])["RR"].tolist() == [0.5, 1.0]
    with pytest.raises(FormatError, match="<run>:2: query_id is missing"):
        irbench.read_run(make({"query_id": ["1", None], "doc_id": ["a", "b"],
                               "score": [1.0, 2.0]}))


def test_text_ids_without_pyarrow_give_the_same_columns(monkeypatch):
    """Text id columns come from their Arrow buffers when pyarrow is installed, else through
    numpy: the same bytes either way (non-ASCII, integers and empty ids included)."""
    import irbench.trec as trec

    run = pd.DataFrame({"query_id": [7, 7, 8], "doc_id": ["été", "b", "日本"],
                        "score": [3.0, 2.0, 1.0]})
    first = irbench.read_run(run)
    monkeypatch.setattr(trec.frames, "_arrow_strings", lambda column: None)
    second = irbench.read_run(run)
    assert first.query_id.tolist() == second.query_id.tolist() == [b"7", b"7", b"8"]
    assert first.doc_id.tolist() == second.doc_id.tolist() == \
        ["été".encode(), b"b", "日本".encode()]
    with pytest.raises(FormatError, match="<run>:2: doc_id is empty"):
        irbench.read_run(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", ""],
                                       "score": [1.0, 2.0]}))
