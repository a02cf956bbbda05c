"""Judging (topic, document) pairs with a model judge, resumably.

:func:`judge_pairs` renders each pair's request, takes the answers the store already holds for
the same model and request (they cost nothing: a rerun, or another judge name over the same
model and prompt, records them as its own), asks the model for the rest at the judge's
concurrency, and appends every answer to the journal as it arrives (:mod:`.journal`), folded
into the store every :data:`FOLD_EVERY` answers. The budget (the judge's ``max_calls`` and
``max_total_tokens``, counting what the store holds for it, and a run's own ``max_calls``)
stops new calls cleanly; calls in flight finish and are kept.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import JudgeError
from ..store import ModelAnswer
from .client import Caller, CallFailed, Reply
from .journal import Journal
from .prompts import Rendering, request_sha256
from .spec import JudgeSpec

FOLD_EVERY = 200  # answers between two saves into the store (the journal keeps them between)
GIVE_UP_AFTER = 20  # requests failing one after another (after their retries) stop judging


class DocumentSource(Protocol):
    def get_many(self, docnos: list[str]) -> list[Any]: ...

    def __contains__(self, docno: object) -> bool: ...


@dataclass
class JudgingSummary:
    """What one judging run did."""

    asked: int = 0  # pairs asked for
    missing: list[str] = field(default_factory=list)  # documents not in the collection
    cached: int = 0  # answers the store held already
    answered: int = 0  # new answers (calls paid for)
    unparsed: int = 0  # answers without a grade among the judge's labels
    failed: int = 0  # requests that failed after their retries
    failures: list[str] = field(default_factory=list)  # the first reasons
    prompt_tokens: int = 0
    completion_tokens: int = 0
    budget_left: int = 0  # pairs not asked because the budget was spent
    leftovers: int = 0  # answers a killed run left in the journal, now folded


@dataclass(frozen=True)
class Pending:
    query_id: str
    doc_id: str
    messages: list[dict[str, str]]
    sha256: str


def build_requests(rendering: Rendering, spec: JudgeSpec, pairs: Sequence[tuple[str, str]],
                   statement: Callable[[str], dict[str, str]], documents: DocumentSource,
                   summary: JudgingSummary) -> list[Pending]:
    """The request of every pair whose document the collection has (the others are listed
    in ``summary.missing``)."""
    present = {d: d in documents for d in {d for _, d in pairs}}
    wanted = [(q, d) for q, d in pairs if present[d]]
    summary.missing = sorted(d for d, there in present.items() if not there)
    docs = documents.get_many([d for _, d in wanted])
    out = []
    for (q, d), doc in zip(wanted, docs):
        messages = rendering.messages(statement(q), d, doc.title, doc.text)
        out.append(Pending(q, d, messages, request_sha256(messages, spec.temperature,
                                                          spec.max_tokens)))
    return out


class Budget:
    """Calls and tokens left to a judge (None: no limit)."""

    def __init__(self, spec: JudgeSpec, used_calls: int, used_tokens: int,
                 run_calls: int | None):
        limits = [x for x in (spec.max_calls and spec.max_calls - used_calls, run_calls)
                  if x is not None]
        self.calls = min(limits) if limits else None
        self.tokens = (spec.max_total_tokens - used_tokens if spec.max_total_tokens
                       else None)

    def allows(self) -> bool:
        return (self.calls is None or self.calls > 0) and (self.tokens is None
                                                           or self.tokens > 0)

    def take_call(self) -> None:
        if self.calls is not None:
            self.calls -= 1

    def take_tokens(self, reply: Reply) -> None:
        if self.tokens is not None:
            self.tokens -= reply.prompt_tokens + reply.completion_tokens


def judge_pairs(spec: JudgeSpec, requests: Sequence[Pending], store: Any, journal: Journal,
                *, pool: str = "", budget: Budget, summary: JudgingSummary,
                caller: Caller | None = None, progress: Callable[[int], None] = lambda n: None,
                rendering: Rendering | None = None) -> JudgingSummary:
    """Judge ``requests`` (see the module docstring); returns ``summary`` filled in."""
    rendering = rendering or spec.prompt.compile()
    summary.asked = len(requests)
    cached = store.cached_answers(spec.model, [(r.sha256, r.query_id, r.doc_id)
                                               for r in requests])
    again = [ModelAnswer(model=spec.model, prompt_sha256=r.sha256, query_id=r.query_id,
                         doc_id=r.doc_id, judge=spec.name, answer=cached[key][1],
                         relevance=cached[key][0], prompt_tokens=0, completion_tokens=0,
                         seconds=0.0)
             for r in requests if (key := (r.sha256, r.query_id, r.doc_id)) in cached]
    store.save_answers(again, pool)
    summary.cached = len(again)
    progress(len(again))
    todo = [r for r in requests if (r.sha256, r.query_id, r.doc_id) not in cached]
    if not todo:
        return summary
    own = caller is None
    caller = caller or Caller(spec)
    try:
        _ask_all(spec, todo, caller, rendering, journal, pool, budget, summary, progress)
    finally:
        journal.fold()
        if own:
            caller.close()
    return summary


def _ask_all(spec: JudgeSpec, todo: Sequence[Pending], caller: Caller, rendering: Rendering,
             journal: Journal, pool: str, budget: Budget, summary: JudgingSummary,
             progress: Callable[[int], None]) -> None:
    queue = iter(todo)
    in_flight: dict[cf.Future, Pending] = {}
    streak = 0
    with cf.ThreadPoolExecutor(max_workers=spec.concurrency,
                               thread_name_prefix=f"judge-{spec.name}") as pool_:
        try:
            while True:
                while len(in_flight) < 2 * spec.concurrency and budget.allows():
                    item = next(queue, None)
                    if item is None:
                        break
                    budget.take_call()
                    in_flight[pool_.submit(caller.ask, item.messages)] = item
                if not in_flight:
                    break
                done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    item = in_flight.pop(future)
                    streak = _take(future, item, spec, rendering, journal, pool, budget,
                                   summary, streak)
                    progress(1)
                if streak >= GIVE_UP_AFTER:
                    raise JudgeError(f"judge '{spec.name}': {streak} requests in a row failed "
                                     f"after their retries (last: {summary.failures[-1]}); "
                                     "what was answered is kept, run again to go on")
                if len(journal.pending) >= FOLD_EVERY:
                    journal.fold()
        except BaseException:
            for future in in_flight:
                future.cancel()
            raise
    summary.budget_left = sum(1 for _ in queue)


def _take(future: cf.Future, item: Pending, spec: JudgeSpec, rendering: Rendering,
          journal: Journal, pool: str, budget: Budget, summary: JudgingSummary,
          streak: int) -> int:
    """Record one finished request; returns the count of failures in a row."""
    try:
        reply = future.result()
    except CallFailed as exc:
        summary.failed += 1
        if len(summary.failures) < 5:
            summary.failures.append(f"{item.query_id} {item.doc_id}: {exc}")
        return streak + 1
    budget.take_tokens(reply)
    grade = rendering.grade(reply.content)
    summary.answered += 1
    summary.unparsed += grade is None
    summary.prompt_tokens += reply.prompt_tokens
    summary.completion_tokens += reply.completion_tokens
    journal.append(ModelAnswer(model=spec.model, prompt_sha256=item.sha256,
                               query_id=item.query_id, doc_id=item.doc_id, judge=spec.name,
                               answer=reply.content, relevance=grade,
                               prompt_tokens=reply.prompt_tokens,
                               completion_tokens=reply.completion_tokens,
                               seconds=reply.seconds), pool)
    return 0
