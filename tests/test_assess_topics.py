"""The desk for a day's work, without HTTP: an assessor keeps a topic until nothing of it is
left for them, documents come in an order that tells nothing of their ranks, and a model's
labels are suggested only when asked for, from this pool's judge (issue 37)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from irbench import cli
from irbench.assess.desk import Desk
from irbench.assess.serve import AssessError, DeskOptions, opened
from irbench.config import load_config
from irbench.pooling.state import PENDING
from irbench.store import Assessor

ANN = Assessor(name="ann", role="assessor", topics=(), pool="web")
BOB = Assessor(name="bob", role="assessor", topics=(), pool="web")


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    assert cli.main(["simulate", str(folder), "--groups", "4", "--topics", "5",
                     "--pool-depth", "10", "--seed", "11"]) == 0
    return folder / "campaign.yaml"


def _start(path, strategy: str, *extra: str):
    assert cli.main(["pool", "start", str(path), "--name", "web", "--strategy", strategy,
                     *extra]) == 0
    return load_config(path)


def _grade(desk: Desk, query_id: str, doc_id: str) -> int:
    """A fixed label per document (so MTF has something to follow)."""
    return int(doc_id[-1]) % 3 if doc_id[-1].isdigit() else 0


def _judge_to_the_end(desk: Desk, people: list[Assessor], check: bool = True
                      ) -> dict[str, list[tuple]]:
    """Assessors taking turns until none has anything left; what each judged, in order, and
    (``check``, at each switch) that the topic they left had nothing left for them."""
    seen: dict[str, list[tuple]] = {p.name: [] for p in people}
    active = list(people)
    while active:
        for who in list(active):
            item = desk.next_for(who)
            if item is None:
                active.remove(who)
                continue
            mine = seen[who.name]
            if check and mine and mine[-1][0] != item.query_id:  # a switch: the last topic is done
                left = desk.topics.index(mine[-1][0])
                cands = desk._in[left]
                pending = (desk.state.status[cands] == PENDING).sum()
                taken = sum(desk.state.table.cand_topic[c] == left
                            for a, c in desk.held.items() if a != who.name)
                assert pending == taken and not desk.state.open_topics()[left], (
                    who.name, mine[-1][0], item.query_id)
            mine.append((item.query_id, item.doc_id))
            desk.judge(who, item.query_id, item.doc_id, _grade(desk, *mine[-1]), 1.0)
    return seen


def _switches(seen: list[tuple]) -> int:
    return sum(1 for a, b in zip(seen, seen[1:]) if a[0] != b[0])


@pytest.mark.parametrize("strategy, extra", [("mtf", ("--budget", "12")),
                                             ("depth", ("--param", "k=6"))])
def test_two_assessors_judge_topic_by_topic_to_the_end(config, strategy, extra):
    """Each assessor's topic changes only when that topic has nothing left for them: the
    switches are the topics they took, less one."""
    cfg = _start(config, strategy, *extra)
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        seen = _judge_to_the_end(desk, [ANN, BOB])
        assert desk.state.complete and desk.progress().done
    for name, judged in seen.items():
        topics = [q for i, (q, _) in enumerate(judged) if i == 0 or judged[i - 1][0] != q]
        assert len(topics) == len(set(topics)), (name, topics)  # never back to a topic
        assert _switches(judged) == len(topics) - 1
    assert {q for q, _ in seen["ann"]} & {q for q, _ in seen["bob"]} == set()  # one each
    assert sum(len(v) for v in seen.values()) == int(desk.state.judged_total)


def _best_rank(desk: Desk, query_id: str, doc_id: str) -> int:
    table = desk.state.table
    cand = desk.state.candidate(query_id.encode(), doc_id.encode())
    return int(table.rank[table.cand == cand].min())


@pytest.mark.parametrize("strategy, extra", [("mtf", ("--budget", "12")),
                                             ("depth", ("--param", "k=6"))])
def test_the_order_tells_nothing_of_the_ranks(config, strategy, extra):
    """Within a topic, documents come in the seeded shuffle, not by rank: the ranks of what
    an assessor is shown are not in order (they are for the pool's hand-out order), and the
    same seed gives the same order after a restart."""
    cfg = _start(config, strategy, *extra)
    orders = []
    for _ in range(2):  # a second desk from a fresh pool: the same shuffle
        with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, store, _):
            seen = _judge_to_the_end(desk, [ANN])["ann"]
            ranks = [_best_rank(desk, q, d) for q, d in seen]
            step = desk.state.step
            handed = sorted(seen, key=lambda p: step[desk.state.candidate(
                p[0].encode(), p[1].encode())])
        assert ranks != sorted(ranks)
        per_topic = {}
        for (q, _), r in zip(seen, ranks):
            per_topic.setdefault(q, []).append(r)
        assert sum(r != sorted(r) for r in per_topic.values()) >= len(per_topic) - 1
        assert seen != handed  # not the strategy's hand-out order either
        orders.append(seen)
        os.remove(cfg.store)
        cfg = _start(config, strategy, *extra)
    assert orders[0] == orders[1]


def test_docno_order(config):
    cfg = _start(config, "depth", "--param", "k=6")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0, order="docno")) as (desk, _, _):
        seen = _judge_to_the_end(desk, [ANN])["ann"]
    for topic in {q for q, _ in seen}:
        docs = [d for q, d in seen if q == topic]
        assert docs == sorted(docs)


def test_the_second_assessors_overlap_documents_come_shuffled_too(config):
    cfg = _start(config, "depth", "--param", "k=6")
    only = Assessor(name="ann", role="assessor", topics=("401",), pool="web")
    also = Assessor(name="bob", role="assessor", topics=("401",), pool="web")
    with opened(cfg, "web", None, DeskOptions(overlap=1.0)) as (desk, _, _):
        first = _judge_to_the_end(desk, [only])["ann"]
        second = _judge_to_the_end(desk, [also])["bob"]
        assert sorted(second) == sorted(first)  # every document judged twice
        ranks = [_best_rank(desk, q, d) for q, d in second]
        assert ranks != sorted(ranks)


def test_honest_totals_do_not_grow_as_documents_are_handed_out(config):
    cfg = _start(config, "depth", "--param", "k=6")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        before = desk.progress(ANN)
        item = desk.next_for(ANN)
        after = desk.progress(ANN)
        assert before.total == after.total > 0
        assert after.current is not None and after.current.query_id == item.query_id
        assert after.current.judged == 0 and after.current.total > 1
        desk.judge(ANN, item.query_id, item.doc_id, 1, 1.0)
        assert desk.progress(ANN).current.judged == 1
        _judge_to_the_end(desk, [ANN])
        done = desk.progress(ANN)
        assert done.finished and done.judged == done.total == before.total


def test_an_assessor_waiting_on_another_is_not_finished(config):
    cfg = _start(config, "depth", "--param", "k=1")
    one = Assessor(name="ann", role="assessor", topics=("401",), pool="web")
    other = Assessor(name="bob", role="assessor", topics=("401",), pool="web")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0)) as (desk, _, _):
        held = []
        while (item := desk.next_for(one)) is not None:
            if desk.progress(one).current.total - desk.progress(one).current.judged == 1:
                held.append(item)
                break
            desk.judge(one, item.query_id, item.doc_id, 0, 1.0)
        assert desk.next_for(other) is None  # ann holds the last one
        assert not desk.progress(other).finished
        desk.judge(one, held[0].query_id, held[0].doc_id, 1, 1.0)
        assert desk.progress(other).finished


def test_suggestions_only_from_the_judge_asked_for_and_this_pool(config):
    from irbench.store import Judgment, Store

    cfg = _start(config, "depth", "--param", "k=6")
    assert cli.main(["pool", "start", str(config), "--name", "other"]) == 0
    with Store(str(cfg.store)) as store:
        store.record_judgments([
            Judgment(pool="other", query_id="401", doc_id=doc, relevance=2, judge="llm",
                     judge_kind="model", source="model")
            for doc in ("SIM-00000001", "SIM-00000002")])
    with pytest.raises(AssessError, match="no labels for the documents of pool 'web'"):
        with opened(cfg, "web", None, DeskOptions(suggest="llm")):
            pass
    with opened(cfg, "web", None, DeskOptions()) as (desk, _, _):
        assert desk.suggestions == {} and desk.next_for(ANN).suggestion is None
    with opened(cfg, "web", None, DeskOptions()) as (desk, store, _):
        item = desk.next_for(ANN)
        store.record_judgments([Judgment(pool="other", query_id=item.query_id,
                                         doc_id=item.doc_id, relevance=1, judge="llm",
                                         judge_kind="model", source="model"),
                                Judgment(pool="web", query_id=item.query_id,
                                         doc_id=item.doc_id, relevance=0, judge="other-llm",
                                         judge_kind="model", source="model")])
    # the judge's label of a document of web, asked for another pool: the same label; never
    # another judge's
    with opened(cfg, "web", None, DeskOptions(suggest="llm")) as (desk, _, _):
        assert desk.suggestions == {(item.query_id, item.doc_id): 1}
        again = desk.next_for(ANN)
        assert (again.doc_id, again.suggestion) == (item.doc_id, 1)


def test_a_global_strategy_moves_an_assessor_on_when_another_topic_comes_first(config):
    """mtf-global spends one budget across topics: an assessor keeps a topic while its
    priority is the top one, and the budget is not spent on the first topic alone."""
    cfg = _start(config, "mtf-global", "--total", "20")
    with opened(cfg, "web", None, DeskOptions(overlap=0.0, batch=2)) as (desk, _, _):
        seen = _judge_to_the_end(desk, [ANN], check=False)["ann"]
    assert len(seen) == 20
    assert len({q for q, _ in seen}) > 1
    assert np.all(np.bincount([int(q) - 401 for q, _ in seen]) < 20)
