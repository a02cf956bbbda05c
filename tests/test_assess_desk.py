"""The judging desk of irbench assess without HTTP: who gets which document, the rules for a
document labelled twice, topics per assessor, and a restart from the store."""

from __future__ import annotations

import pytest

from irbench import cli
from irbench.assess.serve import DeskOptions, add_assessor, opened
from irbench.assess.writer import WriteFailed, Writer
from irbench.config import load_config
from irbench.errors import JudgmentError, StoreError
from irbench.pooling.persist import decode_state
from irbench.store import Assessor, Click, Store

ANN = Assessor(name="ann", role="assessor", topics=("401",), pool="web")
BOB = Assessor(name="bob", role="assessor", topics=("401", "402"), pool="web")
ALL = Assessor(name="cat", role="assessor", topics=(), pool="web")


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "3", "--topics", "3",
                     "--pool-depth", "5", "--seed", "5"]) == 0
    path = folder / "campaign.yaml"
    return path


def _start(path, strategy: str = "depth", *extra: str):
    assert cli.main(["pool", "start", str(path), "--name", "web", "--strategy", strategy,
                     *extra]) == 0
    return load_config(path)


def test_topics_holds_and_the_order_of_the_strategy(config):
    cfg = _start(config, "depth", "--param", "k=3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        a = desk.next_for(ANN)
        assert a.query_id == "401" and not a.again
        assert desk.next_for(ANN) == a  # two tabs: the same document
        b = desk.next_for(BOB)
        assert (b.query_id, b.doc_id) != (a.query_id, a.doc_id)  # held by ann: not bob's
        other = next(i for i in [desk.next_for(ALL)] if i is not None)
        with pytest.raises(JudgmentError):  # not one of ann's topics
            desk.judge(ANN, "403" if other.query_id != "403" else "402", other.doc_id, 1, 1.0)
        desk.judge(ANN, a.query_id, a.doc_id, 2, 3.5)
        assert desk.next_for(ANN) != a
        assert desk.progress(ANN).judged == 1


def test_the_rules_for_a_document_labelled_twice(config):
    cfg = _start(config, "depth", "--param", "k=3")
    twice = DeskOptions(overlap=1.0)  # every document judged twice
    with opened(cfg, "web", None, twice) as (desk, store, _):
        a = desk.next_for(ANN)
        desk.judge(ANN, a.query_id, a.doc_id, 2, 1.0)
        again = desk.undo(ANN)  # the same assessor: the latest label is the pool's
        assert again.again and again.previous == 2 and again.doc_id == a.doc_id
        desk.judge(ANN, a.query_id, a.doc_id, 1, 1.0)
        cand = desk.state.candidate(a.query_id.encode(), a.doc_id.encode())
        assert desk.state.relevance[cand] == 1
        bob = Assessor(name="bob", role="assessor", topics=("401",), pool="web")
        second = desk.next_for(bob)  # the overlap: bob gets ann's document first
        assert (second.query_id, second.doc_id) == (a.query_id, a.doc_id)
        desk.judge(bob, a.query_id, a.doc_id, 0, 1.0)
        assert desk.state.relevance[cand] == 1  # a second assessor never changes the pool's
        clicks = store.clicks("web")
        assert [(c.relevance, c.judge) for c in clicks] == [(2, "ann"), (1, "ann"), (0, "bob")]
        assert desk.next_for(bob) is None  # 401 is ann's: bob waits for her next label
        b = desk.next_for(ANN)
        desk.judge(ANN, b.query_id, b.doc_id, 0, 1.0)
        assert desk.next_for(bob).doc_id == b.doc_id  # second labels only, as they come


def test_a_restart_goes_on_from_the_store(config):
    cfg = _start(config, "mtf", "--budget", "4")
    add_assessor(cfg, "web", ALL.name, (), "assessor", None)  # holds its topic after it
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        judged = []
        for _ in range(3):
            item = desk.next_for(ALL)
            desk.judge(ALL, item.query_id, item.doc_id, 1, 0.5)
            judged.append((item.query_id, item.doc_id))
        before = desk.progress(ALL)
    with opened(load_config(config), "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        assert desk.progress(ALL) == before
        again = desk.undo(ALL)  # the last judgment, found in the store
        assert (again.query_id, again.doc_id) == judged[-1] and again.previous == 1
        item = desk.next_for(ALL)
        assert (item.query_id, item.doc_id) == judged[-1]  # held for re-judging


def test_an_adaptive_pool_hands_out_as_it_goes_until_its_budget(config):
    cfg = _start(config, "mtf", "--budget", "2")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        count = 0
        while (item := desk.next_for(ALL)) is not None:
            desk.judge(ALL, item.query_id, item.doc_id, count % 2, 0.1)
            count += 1
        assert count == 6 and desk.progress(ALL).done  # 3 topics x budget 2


def test_a_name_belongs_to_one_pool(config, capsys):
    _start(config, "depth", "--param", "k=3")
    assert cli.main(["pool", "start", str(config), "--name", "other"]) == 0
    base = ["assess", str(config), "--add-assessor", "dan"]
    assert cli.main([*base, "--pool", "web"]) == 0
    assert cli.main([*base, "--pool", "web"]) == 0  # a new link, the same pool
    capsys.readouterr()
    assert cli.main([*base, "--pool", "other"]) == 1
    assert "'dan' assesses pool 'web' already" in capsys.readouterr().err


def test_a_label_from_an_assessor_file_stays_the_pools(config, tmp_path):
    cfg = _start(config, "depth", "--param", "k=3")
    batch = tmp_path / "batch.txt"
    assert cli.main(["pool", "next", str(config), "--name", "web", "-o", str(batch),
                     "--batch", "2"]) == 0
    q, _, d, _ = batch.read_text().splitlines()[0].split()
    batch.write_text(f"{q} 0 {d} 2\n")
    assert cli.main(["pool", "judge", str(config), "--name", "web", "-j", str(batch)]) == 0
    with opened(cfg, "web", None, DeskOptions(overlap=1.0)) as (desk, _, _):
        cand = desk.state.candidate(q.encode(), d.encode())
        for _ in range(2):  # not handed to anyone: refused, however often
            with pytest.raises(JudgmentError):
                desk.judge(ALL, q, d, 0, 1.0)
        assert desk.state.relevance[cand] == 2
        seen = set()
        while (item := desk.next_for(ALL)) is not None:
            seen.add((item.query_id, item.doc_id))
            desk.judge(ALL, item.query_id, item.doc_id, 0, 0.1)
        assert (q, d) not in seen and desk.state.relevance[cand] == 2


def test_the_pool_commands_see_the_clicks_made_since_the_state_was_saved(config, capsys,
                                                                         tmp_path):
    """A server killed before it saved the state again: irbench pool status/next apply the
    clicks stored since (and a click is never applied twice)."""
    cfg = _start(config, "depth", "--param", "k=3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):  # left without a checkpoint
        for _ in range(2):
            item = desk.next_for(ALL)
            desk.judge(ALL, item.query_id, item.doc_id, 1, 0.2)
        again = desk.undo(ALL)
        desk.judge(ALL, again.query_id, again.doc_id, 0, 0.2)  # relabelled
        relabelled = (again.query_id, again.doc_id)
    capsys.readouterr()
    assert cli.main(["pool", "status", str(config), "--name", "web"]) == 0
    assert ", 2 judged," in capsys.readouterr().out
    assert cli.main(["pool", "next", str(config), "--name", "web", "-o",
                     str(tmp_path / "b.txt"), "--batch", "1"]) == 0
    with opened(load_config(config), "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        cand = desk.state.candidate(relabelled[0].encode(), relabelled[1].encode())
        assert desk.state.relevance[cand] == 0 and desk.progress(ALL).judged == 2


def test_without_the_assess_extra_a_message_not_a_traceback(config, capsys, monkeypatch):
    import sys

    _start(config)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if uvicorn were not installed
    assert cli.main(["assess", str(config), "--pool", "web"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'irbench[assess]'" in err and "Traceback" not in err


def test_the_provisional_leaderboard_scores_the_topics_judged_to_the_end(config):
    import irbench
    from irbench.assess.organiser import organiser_view

    cfg = _start(config, "mtf", "--budget", "2")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        view = organiser_view(desk, store.clicks("web"), [])
        assert view.leaderboard == () and "no topic" in view.leaderboard_note
        count = 0
        while (item := desk.next_for(ALL)) is not None:
            desk.judge(ALL, item.query_id, item.doc_id, (count + 1) % 2, 0.1)
            count += 1
        view = organiser_view(desk, store.clicks("web"), [])
        assert view.leaderboard_note.startswith("3 of 3 topics judged to the end")

        def expected() -> dict[str, float]:
            qrels = desk.state.qrels()
            return {n: round(irbench.evaluate(qrels, run, ["AP"], complete=True).summary("AP"),
                             4)
                    for n, run in zip(desk.state.table.runs, desk.state.table.sources)}

        assert {n: float(v) for n, v in view.leaderboard} == pytest.approx(expected(),
                                                                              abs=1e-12)
        assert organiser_view(desk, store.clicks("web"), []) == view  # cached: no change
        item = desk.undo(ALL)  # a label of a topic judged to the end changed: the board too
        desk.judge(ALL, item.query_id, item.doc_id, 1 - item.previous, 0.1)
        again = organiser_view(desk, store.clicks("web"), [])
        assert again.leaderboard != view.leaderboard
        assert {n: float(v) for n, v in again.leaderboard} == pytest.approx(expected(),
                                                                               abs=1e-12)


def _click(doc: str, relevance: int = 1) -> Click:
    return Click(query_id="401", doc_id=doc, relevance=relevance, judge="ann", suggested=None,
                 seconds=0.5)


def test_clicks_queued_together_are_one_commit_in_the_order_made(config):
    """The writer's group commit: what is queued while it writes goes in the next commit,
    the pool's state after exactly the clicks queued before it."""
    cfg = _start(config, "depth", "--param", "k=3")
    with Store(str(cfg.store)) as store:
        writer = Writer(store, "web")
        state = decode_state(*store.load_pool("web"))
        done = [writer.click(_click(f"d{i}", i % 3)) for i in range(5)]  # before it starts
        done.append(writer.state("depth", state, 5))
        done.append(writer.click(_click("d5")))
        assert not any(f.done() for f in done)
        with writer:
            pass  # the block's end waits for everything queued
        assert all(f.result() is None for f in done) and writer.commits == 1
        clicks = store.clicks("web")
        assert [(c.doc_id, c.relevance) for c in clicks] == [(f"d{i}", i % 3) for i in range(5)] + [
            ("d5", 1)]
        assert store.clicks_applied("web") == 5


def test_states_queued_together_are_written_once_the_last(config, monkeypatch):
    """Several states in one group (one transaction): only the last is encoded and written,
    with the clicks queued before it as applied; every click is stored, in order."""
    import irbench.assess.writer as writer_module

    cfg = _start(config, "depth", "--param", "k=3")
    encoded = []
    real = writer_module.encode_state
    monkeypatch.setattr(writer_module, "encode_state",
                        lambda data: encoded.append(data) or real(data))
    with Store(str(cfg.store)) as store:
        writer = Writer(store, "web")
        state = decode_state(*store.load_pool("web"))
        done = [writer.click(_click("d0")), writer.state("depth", state, 1),
                writer.click(_click("d1")), writer.click(_click("d2")),
                writer.state("depth", {**state, "seed": 7}, 3), writer.click(_click("d3"))]
        with writer:
            pass
        assert all(f.result() is None for f in done) and writer.commits == 1
        assert len(encoded) == 1 and encoded[0]["seed"] == 7
        assert [c.doc_id for c in store.clicks("web")] == ["d0", "d1", "d2", "d3"]
        assert store.clicks_applied("web") == 3


def test_a_failed_write_refuses_every_judgment_after_it(config, monkeypatch):
    """A commit that fails (the disk) fails its whole group and every later write, with a
    message to restart; nothing of the group is in the store."""
    cfg = _start(config, "depth", "--param", "k=3")
    with Store(str(cfg.store)) as store:
        writer = Writer(store, "web")
        first = writer.click(_click("d0"))
        state = writer.state("depth", decode_state(*store.load_pool("web")), 1)

        def full(*args):
            raise StoreError("No space left on device")

        monkeypatch.setattr(writer.store, "save_clicks", full)
        with writer:
            for done in (first, state):
                with pytest.raises(WriteFailed, match="No space left.*start it again"):
                    done.result()
            with pytest.raises(WriteFailed):
                writer.click(_click("d1")).result()
        assert store.clicks("web") == [] and store.clicks_applied("web") == 0


def test_the_desk_says_when_the_store_cannot_be_written(config, monkeypatch):
    cfg = _start(config, "depth", "--param", "k=3")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
        item = desk.next_for(ALL)

        def full(*args):
            raise StoreError("No space left on device")

        monkeypatch.setattr(desk.save.__self__.store, "save_clicks", full)  # the writer's
        with pytest.raises(WriteFailed, match="No space left"):
            desk.judge(ALL, item.query_id, item.doc_id, 1, 0.5)
        other = desk.next_for(ALL)
        with pytest.raises(WriteFailed):
            desk.judge(ALL, other.query_id, other.doc_id, 1, 0.5)
        assert store.clicks("web") == []
