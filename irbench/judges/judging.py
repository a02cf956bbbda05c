"""Judging (topic, document) pairs with a model judge, resumably.

:func:`judge_pairs` renders each pair's request, takes the answers the store already holds for
the same model, endpoint and request (they cost nothing: a rerun, or another judge name over
the same model, server and prompt, records them as its own; those of another endpoint only
when the judge's ``reuse_answers_from`` names it; a label taken so gives way to the judge's own
answer when one is recorded: :meth:`irbench.store.Store.save_answers`), asks the model for the
rest at the judge's concurrency, and appends every answer to the journal as it arrives
(:mod:`.journal`), folded into the store every :data:`FOLD_EVERY` answers. The budget (the
judge's ``max_calls`` and ``max_total_tokens``, counting what the store holds for it, and a
run's own ``max_calls``) stops new calls cleanly; calls in flight finish and are kept.
A judge with ``samples: n`` has each request asked n times (:func:`sampled`: each sample a
request of its own, keyed apart, kept without a label), its label the samples' vote
(:func:`record_votes`, once all n are in the store).

The requests run as asyncio tasks on an event loop of the run's own: Ctrl-C (or SIGTERM)
cancels every request in flight at once, whatever its server is doing, and the answers
already received are folded into the store before the interruption goes on. What the run
shares (the judge, its task, caller, rendering, journal, budget, summary and progress) is one
:class:`JudgingRun`; the store is anything with the two methods of :class:`AnswerStore`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..errors import JudgeError
from ..store import ModelAnswer
from .client import Caller, CallFailed, Reply
from .journal import Journal
from .prompts import Rendering, request_sha256, vote_sha256
from .spec import JudgeSpec
from .tasks import Task, get_task
from .votes import vote

FOLD_EVERY = 200  # answers between two saves into the store (the journal keeps them between)
GIVE_UP_AFTER = 20  # requests failing one after another (after their retries) stop judging


class DocumentSource(Protocol):
    def get_many(self, docnos: list[str], limit: int | None = None) -> list[Any]: ...

    def __contains__(self, docno: object) -> bool: ...


class AnswerStore(Protocol):
    """What judging needs of a store (the :class:`irbench.store.Store` has it): the answers
    it holds for a model's requests at an endpoint (and at the ``endpoints``, or first given
    to the ``judges``, that a judge may reuse), keyed (request sha256, topic, docno), as
    (label, answer, endpoint); and keeping answers, asked for a pool (returns notes on answers
    it stored normalised)."""

    def cached_answers(self, model: str, endpoint: str, keys: Sequence[tuple[str, str, str]],
                       *, endpoints: Sequence[str] = (), judges: Sequence[str] = ()
                       ) -> Mapping[tuple[str, str, str], tuple[int | None, str, str]]: ...

    def save_answers(self, answers: Sequence[ModelAnswer], pool: str = ""
                     ) -> Sequence[str] | None: ...


@dataclass
class JudgingSummary:
    """What one judging run did."""

    asked: int = 0  # pairs asked for
    missing: list[str] = field(default_factory=list)  # documents not in the collection
    cached: int = 0  # answers the store held already
    reused: int = 0  # of them, answers of another endpoint (reuse_answers_from)
    answered: int = 0  # new answers (calls paid for)
    requests: int = 0  # HTTP requests made, retries and failed requests included
    unparsed: int = 0  # answers without a grade among the judge's labels
    failed: int = 0  # requests that failed after their retries
    failures: list[str] = field(default_factory=list)  # the first reasons
    notes: list[str] = field(default_factory=list)  # the first answers' odd token counts
    prompt_tokens: int = 0
    completion_tokens: int = 0
    budget_left: int = 0  # pairs not asked because the budget was spent
    leftovers: int = 0  # answers a killed run left in the journal, now folded
    journal_notes: list[str] = field(default_factory=list)  # answers stored normalised, or
    # quarantined (:attr:`Journal.notes`), as irbench.judges.run.judge leaves them
    unvoted: int = 0  # requests whose samples were all answered, none with a grade: no label

    @property
    def none_succeeded(self) -> bool:
        """Whether requests were made and every one failed (answers the store held, or a
        budget that allowed no request, are no failure)."""
        return self.failed > 0 and self.answered == 0


@dataclass(frozen=True)
class Pending:
    """One request to make: for (topic ``query_id``, document ``doc_id``), or, for a task
    judging generated answers, for (topic, ``sentence``, cited segment ``doc_id``) (of run
    ``run_id``'s sentence at ``position`` when the prompt saw the whole answer)."""

    query_id: str
    doc_id: str
    messages: list[dict[str, str]]
    sha256: str
    sentence: str | None = None
    run_id: str | None = None
    position: int | None = None
    sample: int | None = None  # which of the judge's samples (None: a judge without samples)

    def unit(self, task: Task) -> dict[str, Any]:
        """The answer-task fields of its :class:`ModelAnswer` (none for relevance)."""
        if self.sentence is None:
            return {}
        return {"task": task.name, "sentence": self.sentence, "run_id": self.run_id,
                "position": self.position}


def build_requests(rendering: Rendering, spec: JudgeSpec, pairs: Sequence[tuple[str, str]],
                   statement: Callable[[str], dict[str, str]], documents: DocumentSource,
                   summary: JudgingSummary, task: Task | None = None) -> list[Pending]:
    """The request of every pair whose document the collection has (the others are listed
    in ``summary.missing``), rendered over ``task``'s context (the judge's task by
    default)."""
    task = task or get_task(spec.task)
    present = {d: d in documents for d in {d for _, d in pairs}}
    wanted = [(q, d) for q, d in pairs if present[d]]
    summary.missing = sorted(d for d, there in present.items() if not there)
    docs = documents.get_many([d for _, d in wanted], limit=rendering.limit)
    out = []
    for (q, d), doc in zip(wanted, docs):
        messages = rendering.render(task.context_of(statement(q), d, doc.title, doc.text,
                                                    rendering.limit))
        out.append(Pending(q, d, messages, request_sha256(messages, spec.temperature,
                                                          spec.max_tokens, task.name)))
    return out


class VotingStore(AnswerStore, Protocol):
    """An answer store that records the votes of samples (the :class:`irbench.store.Store`)."""

    def record_votes(self, votes: Sequence[ModelAnswer], pool: str = "") -> int: ...


def sample_keys(request: Pending, spec: JudgeSpec, task: Task) -> list[str]:
    """The request sha256 of each of the judge's ``samples`` of ``request``: sample 0 is the
    request itself (a judge without samples asks it), sample i > 0 keyed apart
    (:func:`.prompts.request_sha256`'s ``sample``)."""
    return [request.sha256] + [request_sha256(request.messages, spec.temperature,
                                              spec.max_tokens, task.name, i)
                               for i in range(1, spec.samples)]


def sampled(requests: Sequence[Pending], spec: JudgeSpec, task: Task) -> list[Pending]:
    """What is asked for ``requests``: each of them, for a judge without samples; else each
    request's ``samples`` (:func:`sample_keys`), one after another, each a request of its own
    (cached and journalled on its own, kept in ``model_answers`` without a label)."""
    if spec.samples == 1:
        return list(requests)
    return [replace(r, sha256=sha, sample=i) for r in requests
            for i, sha in enumerate(sample_keys(r, spec, task))]


def record_votes(spec: JudgeSpec, requests: Sequence[Pending], store: VotingStore, *,
                 summary: JudgingSummary, task: Task, pool: str = "") -> int:
    """For a judge asking ``samples`` of each request, the label of each of ``requests`` whose
    samples the store all holds: the vote (:func:`.votes.vote`, the judge's ``vote``) of the
    samples with a grade (none: no label, counted in ``summary.unvoted``), recorded as the
    judge's (:meth:`irbench.store.Store.record_votes`) under :func:`.prompts.vote_sha256`
    with the note ``{"vote", "labels" (None: no grade), "requests"}`` as its answer. A
    request with a sample unanswered gets none yet (a rerun asks for what is missing).
    Returns how many labels were new; a judge without samples records none here."""
    if spec.samples == 1 or not requests:
        return 0
    keys = [[(sha, r.query_id, r.doc_id) for sha in sample_keys(r, spec, task)]
            for r in requests]
    got = store.cached_answers(spec.model, spec.base_url, [k for ks in keys for k in ks],
                               endpoints=spec.reuse_endpoints, judges=spec.reuse_judges)
    made = []
    for r, ks in zip(requests, keys):
        if any(k not in got for k in ks):
            continue
        labels = [got[k][0] for k in ks]
        label = vote(labels, spec.vote)
        if label is None:
            summary.unvoted += 1
            continue
        shas = [k[0] for k in ks]
        note = json.dumps({"vote": spec.vote, "labels": labels, "requests": shas})
        made.append(ModelAnswer(
            model=spec.model, prompt_sha256=vote_sha256(shas, spec.vote), query_id=r.query_id,
            doc_id=r.doc_id, judge=spec.name, answer=note, relevance=label, prompt_tokens=0,
            completion_tokens=0, seconds=0.0, endpoint=spec.base_url, **r.unit(task)))
    return store.record_votes(made, pool)


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


def judge_pairs(spec: JudgeSpec, requests: Sequence[Pending], store: AnswerStore,
                journal: Journal, *, pool: str = "", budget: Budget, summary: JudgingSummary,
                caller: Caller | None = None, progress: Callable[[int], None] = lambda n: None,
                rendering: Rendering | None = None, task: Task | None = None
                ) -> JudgingSummary:
    """Judge ``requests`` (see the module docstring); returns ``summary`` filled in."""
    summary.asked = len(requests)
    task = task or get_task(spec.task)
    cached = store.cached_answers(spec.model, spec.base_url,
                                  [(r.sha256, r.query_id, r.doc_id) for r in requests],
                                  endpoints=spec.reuse_endpoints, judges=spec.reuse_judges)
    # kept under the endpoint that gave it (already stored: the store keeps it once)
    again = [ModelAnswer(model=spec.model, prompt_sha256=r.sha256, query_id=r.query_id,
                         doc_id=r.doc_id, judge=spec.name, answer=cached[key][1],
                         relevance=cached[key][0], prompt_tokens=0, completion_tokens=0,
                         seconds=0.0, endpoint=cached[key][2], requests=None, sample=r.sample,
                         **r.unit(task))
             for r in requests if (key := (r.sha256, r.query_id, r.doc_id)) in cached]
    store.save_answers(again, pool)
    summary.cached = len(again)
    summary.reused = sum(1 for a in again if a.endpoint != spec.base_url)
    progress(len(again))
    todo = [r for r in requests if (r.sha256, r.query_id, r.doc_id) not in cached]
    if not todo:
        return summary
    run = JudgingRun(spec=spec, task=task, caller=caller or Caller(spec),
                     rendering=rendering or spec.prompt.compile(), journal=journal, pool=pool,
                     budget=budget, summary=summary, progress=progress)
    try:
        _run(run.ask_all(todo))
    finally:
        journal.fold()  # what was received, also when interrupted
    return summary


def _run(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` on an event loop of its own, in this thread (where Ctrl-C cancels it); on
    a thread of its own when this one runs a loop already (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(work)
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(work)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="irbench-judging", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


@dataclass(kw_only=True)
class JudgingRun:
    """What one judging run shares while its requests are in flight: the judge and its task,
    the caller, the compiled prompt, the journal the answers go to (asked for ``pool``), the
    budget, the summary filled in, the progress callback (answers taken) and the count of
    requests failed in a row (:data:`GIVE_UP_AFTER` of them stop the run)."""

    spec: JudgeSpec
    task: Task
    caller: Caller
    rendering: Rendering
    journal: Journal
    budget: Budget
    summary: JudgingSummary
    pool: str = ""
    progress: Callable[[int], None] = lambda n: None
    streak: int = 0

    async def ask_all(self, todo: Sequence[Pending]) -> None:
        """Ask for ``todo`` at the judge's concurrency while the budget allows."""
        queue = iter(todo)
        in_flight: dict[asyncio.Task, Pending] = {}
        async with self.caller:
            try:
                while True:
                    while len(in_flight) < self.spec.concurrency and self.budget.allows():
                        item = next(queue, None)
                        if item is None:
                            break
                        self.budget.take_call()
                        in_flight[asyncio.ensure_future(self.caller.ask(item.messages))] = item
                    if not in_flight:
                        break
                    done, _ = await asyncio.wait(in_flight,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        self.take(task, in_flight.pop(task))
                        self.progress(1)
                    self.check_streak()
                    if len(self.journal.pending) >= FOLD_EVERY:
                        self.journal.fold()
            finally:  # a fault, a judge error, Ctrl-C: what is in flight is dropped, unpaid
                for task in in_flight:
                    task.cancel()
                await asyncio.gather(*in_flight, return_exceptions=True)
        self.summary.budget_left = sum(1 for _ in queue)

    def check_streak(self) -> None:
        if self.streak >= GIVE_UP_AFTER:
            raise JudgeError(f"judge '{self.spec.name}': {self.streak} requests in a row "
                             f"failed after their retries (last: {self.summary.failures[-1]}); "
                             "what was answered is kept, run again to go on")

    def take(self, task: asyncio.Task, item: Pending) -> None:
        """Record one finished request: its answer into the journal, or its failure."""
        summary = self.summary
        try:
            reply = task.result()
        except CallFailed as exc:
            summary.requests += exc.requests
            summary.failed += 1
            if len(summary.failures) < 5:
                summary.failures.append(f"{item.query_id} {item.doc_id}: {exc}")
            self.streak += 1
            return
        self.streak = 0
        summary.requests += reply.requests
        if reply.note and len(summary.notes) < 5:
            summary.notes.append(f"{item.query_id} {item.doc_id}: {reply.note}")
        self.budget.take_tokens(reply)
        grade = self.task.parse(self.rendering, reply.content, item.messages)
        summary.answered += 1
        summary.unparsed += grade is None
        summary.prompt_tokens += reply.prompt_tokens
        summary.completion_tokens += reply.completion_tokens
        self.journal.append(ModelAnswer(
            model=self.spec.model, prompt_sha256=item.sha256, query_id=item.query_id,
            doc_id=item.doc_id, judge=self.spec.name, answer=reply.content, relevance=grade,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            seconds=reply.seconds, endpoint=self.spec.base_url, requests=reply.requests,
            sample=item.sample, **item.unit(self.task)), self.pool)
