"""One call judges what a campaign asks: :func:`judge`, the whole of ``irbench judge``.

It folds what a killed run left in the journal, takes the targets' pairs (a pool, the holes
of a qrels set, a file of pairs: :mod:`.targets`), checks their topics against the config's
topic file, renders each pair's request by the judge's task (:mod:`.tasks`), and judges them
within the judge's budget (:func:`.judging.judge_pairs`), every answer kept the moment it
arrives. A judge with ``samples: n`` asks each request n times (:func:`.judging.sampled`:
each sample a request of its own, budget and progress counting every one), and its label is
the vote of the samples (:func:`.judging.record_votes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..documents.spec import DocumentsSpec
from ..errors import JudgeError
from ..topics import read_topics
from .client import Caller
from .journal import Journal, journal_path
from .judging import (
    Budget,
    DocumentSource,
    JudgingSummary,
    VotingStore,
    build_requests,
    judge_pairs,
    record_votes,
    sampled,
)
from .spec import JudgeSpec
from .targets import PoolSource, Targets
from .tasks import PAIR, get_task


class JudgingStore(VotingStore, PoolSource, Protocol):
    """What :func:`judge` needs of a store (the :class:`irbench.store.Store` has it)."""

    def remember_judge(self, name: str, kind: str, model: str, base_url: str,
                       settings: str) -> None: ...

    def judge_usage(self, judge: str) -> tuple[int, int]: ...


def check_judgeable(config: Any) -> DocumentsSpec:
    """The collection's documents a judge reads; a :class:`JudgeError` if the config gives it
    nothing to read (no documents or no topics)."""
    if config.documents is None:
        raise JudgeError(f"{config.path}: a judge reads documents: give collection.documents")
    if config.topics is None:
        raise JudgeError(f"{config.path}: a judge reads the topics: give collection.topics")
    return config.documents


def judge(config: Any, spec: JudgeSpec, targets: Targets, *, store: JudgingStore,
          documents: DocumentSource, max_calls: int | None = None,
          caller: Caller | None = None,
          progress: Callable[[int, int], None] | None = None) -> JudgingSummary:
    """Judge ``targets`` with the model judge ``spec`` of ``config`` (see the module
    docstring): answers into ``store`` (open for writing), documents read from
    ``documents`` (open). ``max_calls``: at most this many requests in this run (besides the
    judge's budget); ``caller``: the client (a :class:`Caller` of ``spec`` by default);
    ``progress(done, total)``: called as pairs are answered. Returns what the run did; the
    notes of the journal (answers stored normalised or quarantined) are its
    ``journal_notes``."""
    task = get_task(spec.task)
    if task.unit != PAIR:
        raise JudgeError(f"judge '{spec.name}': task '{task.name}' judges "
                         f"({', '.join(task.unit)}) units; targets give (topic, document) pairs")
    check_judgeable(config)
    topics = read_topics(config.topics)
    journal = Journal(journal_path(config.store), store.save_answers)
    leftovers = journal.fold_leftovers()
    pairs, pool = targets.pairs(config, store)
    unknown = sorted({q for q, _ in pairs} - set(topics.query_id))
    if unknown:
        raise JudgeError(f"{len(unknown)} topics are not in {config.topics}: "
                         + ", ".join(unknown[:10]))
    summary = JudgingSummary(leftovers=leftovers)
    rendering = spec.prompt.compile()
    requests = build_requests(rendering, spec, pairs, topics.statement, documents, summary,
                              task)
    store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
    budget = Budget(spec, *store.judge_usage(spec.name), max_calls)
    asked = sampled(requests, spec, task)
    judge_pairs(spec, asked, store, journal, pool=pool, budget=budget, summary=summary,
                caller=caller, progress=counted(progress, len(asked)),
                rendering=rendering, task=task)
    record_votes(spec, requests, store, summary=summary, task=task, pool=pool)
    summary.asked = len(requests)
    summary.journal_notes = list(journal.notes)
    return summary


def counted(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    """``progress(done, total)`` as judging reports it: answers taken, a few at a time."""
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], total)

    return step
