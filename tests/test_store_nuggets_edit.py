"""A person's edits of a nugget list in the store (issue 40): add, change, merge, split and
delete, each one transaction keeping every version (who, derived_from, deleted_by); the list's
order after splits and merges between neighbours; a stale or unknown id refused with nothing
written; bad texts and importances refused; two topics edited in turn; a model's rerun keeping
the edits; ``irbench qrels --nuggets`` writing the edited list."""

from __future__ import annotations

import json
import pickle
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from irbench import cli
from irbench.config import load_config
from irbench.store import AnswerLabel, NuggetEditError, NuggetVersion, Store
from irbench.store.nuggets import list_order

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "rag.yaml"
MODEL = {"1": [("a", "vital"), ("b", "okay"), ("c", "okay")], "2": [("x", "vital"),
                                                                     ("y", "okay")]}


@pytest.fixture
def store(tmp_path):
    with Store(str(tmp_path / "s.duckdb")) as s:
        assert s.record_model_nuggets("nug", MODEL) == 5
        yield s


def texts(store, qid="1", judge="nug"):
    return [n.text for n in store.live_nuggets(judge).get(qid, [])]


def ids(store, qid="1"):
    return {n.text: n.nugget_id for n in store.live_nuggets("nug")[qid]}


def table(store):
    return store.query("SELECT * FROM nuggets ORDER BY nugget_id")[1]


def test_add_and_change_return_the_new_nugget_and_keep_the_history(store):
    added = store.add_nugget("nug", "1", "  d, new  ", "vital", "ann")
    assert (added.text, added.importance, added.position, added.origin, added.made_by) == \
        ("d, new", "vital", 3, "person", "ann")
    assert added.nugget_id.startswith("p-") and texts(store) == ["a", "b", "c", "d, new"]
    b = ids(store)["b"]
    changed = store.change_nugget("nug", b, "bob", text="b, better")
    assert (changed.text, changed.importance, changed.position, changed.made_by) == \
        ("b, better", "okay", 1, "bob")
    vital = store.change_nugget("nug", changed.nugget_id, "cy", importance="vital")
    assert (vital.text, vital.importance) == ("b, better", "vital")
    assert store.change_nugget("nug", vital.nugget_id, "cy", text="b, better ") == vital
    assert texts(store) == ["a", "b, better", "c", "d, new"]
    history = {v.nugget_id: v for v in store.nugget_history("nug", "1")}
    assert all(isinstance(v, NuggetVersion) for v in history.values())
    assert (history[b].deleted_by, history[b].made_by, history[b].origin) == \
        ("bob", "nug", "model")
    assert history[changed.nugget_id].derived_from == (b,)
    assert history[changed.nugget_id].deleted_by == "cy"
    assert history[vital.nugget_id].derived_from == (changed.nugget_id,)
    assert history[vital.nugget_id].deleted_at is None
    assert history[added.nugget_id].derived_from == ()
    order = [v.text for v in store.nugget_history("nug", "1")]
    assert order[-3:] == ["d, new", "b, better", "b, better"]  # oldest first
    times = [v.created_at for v in store.nugget_history("nug", "1")]
    assert times == sorted(times) and times[-1] > times[-2] > times[-3]
    assert history[b].deleted_at == history[changed.nugget_id].created_at  # one edit, one time


def test_a_split_s_parts_stay_where_the_nugget_was_between_its_neighbours(store):
    n = ids(store)
    parts = store.split_nugget("nug", n["b"], [("b1", "vital"), ("b2", "okay")], "ann")
    assert [(p.text, p.importance, p.position, p.made_by) for p in parts] == \
        [("b1", "vital", 1, "ann"), ("b2", "okay", 1, "ann")]
    assert texts(store) == ["a", "b1", "b2", "c"]
    # b1 has neighbours on both sides, b2 at its own position: its parts go between them
    inner = store.split_nugget("nug", parts[0].nugget_id,
                               [("b1a", "okay"), ("b1b", "okay"), ("b1c", "vital")], "bob")
    assert texts(store) == ["a", "b1a", "b1b", "b1c", "b2", "c"]
    store.split_nugget("nug", inner[1].nugget_id, [("m1", "okay"), ("m2", "okay")], "bob")
    assert texts(store) == ["a", "b1a", "m1", "m2", "b1c", "b2", "c"]
    store.change_nugget("nug", ids(store)["m1"], "cy", text="m1!")
    assert texts(store) == ["a", "b1a", "m1!", "m2", "b1c", "b2", "c"]
    store.split_nugget("nug", ids(store)["a"], [("a1", "okay"), ("a2", "okay")], "cy")
    store.split_nugget("nug", ids(store)["c"], [("c1", "okay"), ("c2", "okay")], "cy")
    assert texts(store) == ["a1", "a2", "b1a", "m1!", "m2", "b1c", "b2", "c1", "c2"]
    history = {v.nugget_id: v for v in store.nugget_history("nug", "1")}
    assert history[n["b"]].deleted_by == "ann"
    assert history[parts[0].nugget_id].deleted_by == "bob"
    assert {history[p.nugget_id].derived_from for p in inner} == {(parts[0].nugget_id,)}
    assert texts(store, "2") == ["x", "y"]


def test_a_merge_is_one_nugget_where_the_first_of_them_was(store):
    n = ids(store)
    store.split_nugget("nug", n["b"], [("b1", "okay"), ("b2", "okay"), ("b3", "okay")], "ann")
    parts = ids(store)
    merged = store.merge_nuggets("nug", [parts["b3"], parts["b1"]], "b1 and b3", "vital", "bob")
    assert (merged.text, merged.importance, merged.position, merged.made_by) == \
        ("b1 and b3", "vital", 1, "bob")
    assert texts(store) == ["a", "b1 and b3", "b2", "c"]
    whole = store.merge_nuggets("nug", [n["c"], n["a"], merged.nugget_id], "all", "okay", "cy")
    assert whole.position == 0 and texts(store) == ["all", "b2"]
    history = {v.nugget_id: v for v in store.nugget_history("nug", "1")}
    assert history[merged.nugget_id].derived_from == (parts["b3"], parts["b1"])
    assert history[whole.nugget_id].derived_from == (n["c"], n["a"], merged.nugget_id)
    assert {history[x].deleted_by for x in (n["a"], n["c"], merged.nugget_id)} == {"cy"}
    assert {history[x].deleted_by for x in (parts["b1"], parts["b3"])} == {"bob"}
    assert history[parts["b2"]].deleted_at is None


def test_delete_ends_the_nugget_and_keeps_it_in_the_history(store):
    b = ids(store)["b"]
    assert store.delete_nugget("nug", b, "ann") is None
    assert texts(store) == ["a", "c"]
    (version,) = [v for v in store.nugget_history("nug", "1") if v.nugget_id == b]
    assert version.deleted_by == "ann" and version.deleted_at is not None
    assert store.add_nugget("nug", "1", "b", "okay", "ann").position == 3
    assert texts(store) == ["a", "c", "b"]


@pytest.mark.timeout(60)
def test_a_stale_or_unknown_id_is_refused_and_nothing_is_written(store):
    n = ids(store)
    store.change_nugget("nug", n["b"], "ann", text="b, ann's")
    before = table(store)
    x = ids(store, "2")["x"]
    refused = [
        lambda: store.change_nugget("nug", n["b"], "bob", text="b, bob's"),  # ended by ann
        lambda: store.split_nugget("nug", n["b"], [("1", "okay"), ("2", "okay")], "bob"),
        lambda: store.delete_nugget("nug", n["b"], "bob"),
        lambda: store.merge_nuggets("nug", [n["a"], n["b"]], "ab", "okay", "bob"),
        lambda: store.merge_nuggets("nug", [n["a"], x], "ax", "okay", "bob"),  # two topics
        lambda: store.delete_nugget("nug", "n-unknown", "bob"),
        lambda: store.delete_nugget("other", n["a"], "bob"),  # another list's
        lambda: store.change_nugget("nug", "p-" + "\x1b[31m" * 40, "bob", text="z"),
    ]
    for edit in refused:
        with pytest.raises(NuggetEditError) as error:
            edit()
        assert error.value.stale and "reload the list" in str(error.value)
        assert "\x1b" not in str(error.value) and len(str(error.value)) < 200
    assert f"nugget {n['b']} was changed or deleted meanwhile: reload the list" in str(
        pytest.raises(NuggetEditError, store.delete_nugget, "nug", n["b"], "bob").value)
    assert table(store) == before
    assert texts(store) == ["a", "b, ann's", "c"]


@pytest.mark.parametrize("edit,words", [
    (lambda s, n: s.add_nugget("nug", "1", "d", "high", "ann"), "not one of vital, okay"),
    (lambda s, n: s.add_nugget("nug", "1", "   ", "okay", "ann"), "cannot be empty"),
    (lambda s, n: s.add_nugget("nug", "1", "d" * 1001, "okay", "ann"), "at most 1,000"),
    (lambda s, n: s.add_nugget("nug", "1", "d\ne", "okay", "ann"), "control characters"),
    (lambda s, n: s.add_nugget("nug", "1", "d\x00", "okay", "ann"), "control characters"),
    (lambda s, n: s.add_nugget("nug", "1", "d", "okay", " "), "must be named"),
    (lambda s, n: s.add_nugget("nobody", "1", "d", "okay", "ann"), "no nugget list"),
    (lambda s, n: s.change_nugget("nug", n["a"], "ann", importance="Vital"), "not one of"),
    (lambda s, n: s.change_nugget("nug", n["a"], "ann", text=""), "cannot be empty"),
    (lambda s, n: s.change_nugget("nug", n["a"], "ann"), "a new text or importance"),
    (lambda s, n: s.split_nugget("nug", n["a"], [("a1", "okay")], "ann"), "two or more"),
    (lambda s, n: s.split_nugget("nug", n["a"], [("a1", "okay"), ("", "okay")], "ann"),
     "cannot be empty"),
    (lambda s, n: s.split_nugget("nug", n["a"], [("a1", "okay"), ("a2", "x\x1b")], "ann"),
     "importance 'this'"),
    (lambda s, n: s.merge_nuggets("nug", [n["a"]], "a", "okay", "ann"), "two or more"),
    (lambda s, n: s.merge_nuggets("nug", [n["a"], n["a"]], "a", "okay", "ann"), "two or more"),
])
@pytest.mark.timeout(30)
def test_a_bad_text_importance_or_request_is_refused_and_nothing_is_written(store, edit,
                                                                             words):
    before = table(store)
    with pytest.raises(NuggetEditError) as error:
        edit(store, ids(store))
    assert words in str(error.value) and not error.value.stale
    assert table(store) == before


def test_the_error_is_exported_and_pickles_whole():
    error = NuggetEditError("nugget p-1 was changed or deleted meanwhile: reload the list",
                            stale=True)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is NuggetEditError and str(back) == str(error) and back.stale
    assert back.exit_code == 1


def _topic_one(s):
    s.split_nugget("nug", ids(s)["b"], [("b1", "okay"), ("b2", "vital")], "ann")
    yield
    s.merge_nuggets("nug", [ids(s)["a"], ids(s)["b2"]], "a+b2", "vital", "ann")
    yield
    s.add_nugget("nug", "1", "d", "okay", "bob")
    yield
    s.delete_nugget("nug", ids(s)["c"], "bob")


def _topic_two(s):
    s.change_nugget("nug", ids(s, "2")["y"], "cy", text="y!")
    yield
    s.add_nugget("nug", "2", "b1", "okay", "ann")  # the same text as topic 1's part
    yield
    s.split_nugget("nug", ids(s, "2")["x"], [("x1", "okay"), ("x2", "okay")], "cy")
    yield


def _run(path, *sequences):
    with Store(str(path)) as s:
        s.record_model_nuggets("nug", MODEL)
        steps = [seq(s) for seq in sequences]
        while steps:
            for step in list(steps):
                if next(step, StopIteration) is StopIteration:
                    steps.remove(step)
        return s.live_nuggets("nug")


def test_two_topics_edited_in_turn_do_not_interfere_and_ids_are_deterministic(tmp_path):
    both = _run(tmp_path / "both.duckdb", _topic_one, _topic_two)
    one = _run(tmp_path / "one.duckdb", _topic_one)
    two = _run(tmp_path / "two.duckdb", _topic_two)
    assert both["1"] == one["1"] and both["2"] == two["2"]  # the same ids too
    assert [n.text for n in both["1"]] == ["a+b2", "b1", "d"]
    assert [n.text for n in both["2"]] == ["x1", "x2", "y!", "b1"]
    assert len({n.nugget_id for lst in both.values() for n in lst}) == 7


def test_the_same_edit_again_makes_a_new_id(store):
    first = store.add_nugget("nug", "1", "d", "okay", "ann")
    second = store.add_nugget("nug", "1", "d", "okay", "ann")
    store.delete_nugget("nug", first.nugget_id, "ann")
    third = store.add_nugget("nug", "1", "d", "okay", "ann")
    assert len({first.nugget_id, second.nugget_id, third.nugget_id}) == 3
    assert texts(store) == ["a", "b", "c", "d", "d"]
    count = store.query("SELECT count(*), count(DISTINCT nugget_id) FROM nuggets")[1]
    assert count == [(8, 8)]


def test_a_model_rerun_keeps_the_edited_list(store):
    n = ids(store)
    store.split_nugget("nug", n["b"], [("b1", "okay"), ("b2", "okay")], "ann")
    store.delete_nugget("nug", n["a"], "ann")
    store.add_nugget("nug", "2", "z", "vital", "bob")
    edited = store.live_nuggets("nug")
    assert store.record_model_nuggets("nug", MODEL) == 0
    assert store.live_nuggets("nug") == edited
    assert texts(store) == ["b1", "b2", "c"]


def _version(nid, position, at, derived=()):
    return NuggetVersion("1", nid, nid, "okay", position, "person", "nug", "ann",
                         tuple(derived), at, None, None)


@pytest.mark.timeout(30)
def test_the_order_of_a_list_edited_20000_times_is_computed_without_recursion():
    start = datetime(2026, 1, 1)
    versions = [_version("m0", 0, start), _version("m1", 1, start)]
    for i in range(20_000):
        versions.append(_version(f"e{i}", 0, start + timedelta(microseconds=i + 1),
                                 [versions[-1].nugget_id if i else "m0"]))
    versions.append(_version("loop", 0, start, ["loop"]))  # no writer makes one: still sorted
    keys = list_order(versions)
    assert keys["e19999"] == keys["m0"] < keys["m1"] and len(keys) == len(versions)


@pytest.mark.timeout(120)
def test_qrels_nuggets_writes_the_edited_list(tmp_path, capsys):
    data = yaml.safe_load(CONFIG.read_text())
    for key in ("topics", "documents"):
        data["collection"][key] = str((CONFIG.parent / data["collection"][key]).resolve())
    data["collection"]["qrels"] = {
        name: {**q, "path": str((CONFIG.parent / q["path"]).resolve())} if isinstance(q, dict)
        else str((CONFIG.parent / q).resolve())
        for name, q in data["collection"]["qrels"].items()}
    data["systems"] = [{**s, "answers": str((CONFIG.parent / s["answers"]).resolve())}
                       for s in data["systems"] if "answers" in s]
    data.pop("judges", None)
    data["store"] = str(tmp_path / "store.duckdb")
    config = tmp_path / "campaign.yaml"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    with Store(load_config(str(config), strict=False).store) as s:
        s.record_model_nuggets("nug", MODEL)
        s.split_nugget("nug", ids(s)["b"], [("b1", "vital"), ("b2", "okay")], "ann")
        s.change_nugget("nug", ids(s)["c"], "bob", importance="vital")
        s.delete_nugget("nug", ids(s, "2")["x"], "bob")
        b1 = ids(s)["b1"]
        s.record_answer_labels([AnswerLabel(task="nugget", query_id="1", reference=b1,
                                            label=2, judge="nug", judge_kind="model",
                                            run_id="r1")])
    out = tmp_path / "out"
    assert cli.main(["qrels", str(config), "--nuggets", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    written = {x["qid"]: [(n["text"], n["importance"]) for n in x["nuggets"]]
               for x in map(json.loads, (out / "nuggets.jsonl").open())}
    assert written == {"1": [("a", "vital"), ("b1", "vital"), ("b2", "okay"),
                             ("c", "vital")], "2": [("y", "okay")]}
    (assigned,) = [json.loads(x) for x in (out / "assignments.jsonl").open()]
    assert (assigned["qid"], assigned["run_id"]) == ("1", "r1")
    assert [(n["text"], n["assignment"]) for n in assigned["nuggets"]] == [
        ("a", "not_support"), ("b1", "support"), ("b2", "not_support"), ("c", "not_support")]


@pytest.mark.timeout(60)
def test_two_people_changing_one_nugget_at_once_one_is_told_to_reload(store):
    """Two connections (the desk's threads): the second edit of a nugget whose first edit is
    not committed yet meets DuckDB's conflict, reported as a stale edit; the first is kept."""
    b = ids(store)["b"]
    other = store.for_thread()
    try:
        with store.transaction():
            store.change_nugget("nug", b, "ann", text="b, ann's")
            with pytest.raises(NuggetEditError) as error:
                other.change_nugget("nug", b, "bob", text="b, bob's")
        assert error.value.stale and "reload the list" in str(error.value)
        assert texts(store) == texts(other) == ["a", "b, ann's", "c"]
    finally:
        other.close()
