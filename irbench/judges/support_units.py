"""What a support judge labels, and the whole of ``irbench judge --support``:
:func:`judge_support`.

The units are (topic, sentence text, cited segment), taken from the config's answer runs by
:func:`irbench.pooling.cited_pool` (each sentence's first citation, or ``citations="all"``
every one; one unit however many runs, or sentences of one run, wrote that sentence citing that
segment in that topic), or from a file ``irbench pool cited`` wrote (NIST's support JSONL with
``support: null``; its sentences' texts are the units', whatever labels it holds). A prompt that
shows the whole answer (:func:`irbench.judges.support_task.uses_answer`) makes the unit each
run's (topic, answer, sentence, segment): its requests are the same only where the answers are,
and each run's sentence gets its label (the run and the sentence's position kept with it).

Judging is relevance judging's (:func:`irbench.judges.judging.judge_pairs`): the answers the
store holds for the same model, endpoint and request are taken without a call, the rest asked
at the judge's concurrency within its budget, each answer journaled the moment it arrives; a
request that several units make (the same answer shown twice) is asked once, the others then
take its answer from the store. Labels go to ``answer_labels``
(:meth:`irbench.store.Store.save_answers`); a judge with ``samples: n`` asks each request n
times, and its label, the samples' vote, goes there too (:func:`.judging.record_votes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config.types import priority_order
from ..errors import JudgeError
from ..ids import id_text
from ..judgments.support import read_support
from ..topics import read_topics
from .journal import Journal, journal_path
from .judging import (
    Budget,
    DocumentSource,
    JudgingSummary,
    Pending,
    judge_pairs,
    record_votes,
    sampled,
)
from .prompts import Rendering, request_sha256
from .run import check_judgeable, counted
from .spec import JudgeSpec
from .support_task import SupportContext, uses_answer
from .tasks import SENTENCE_SEGMENT, get_task

CITATIONS = ("first", "all")


@dataclass(frozen=True)
class Unit:
    """One (topic, sentence, cited segment) to judge; ``answer``, ``run_id`` and
    ``position`` when the prompt shows the whole answer (the run's, and the sentence's
    0-based position in it)."""

    query_id: str
    sentence: str
    reference: str
    answer: str = ""
    run_id: str | None = None
    position: int | None = None


@dataclass(frozen=True)
class RunUnits:
    """The units of the config's answer runs (``citations``: first or all)."""

    citations: str = "first"

    def units(self, config: Any, with_answers: bool) -> list[Unit]:
        from ..pooling import answer_systems, cited_pool, read_answer_runs

        answering = [s for s in config.systems if s.kind == "answers"]
        if not answering:
            raise JudgeError(f"{config.path}: no answer systems to judge (a system with "
                             "'answers: FILE'), or give --units FILE")
        systems = answer_systems(priority_order(config.systems), [s.name for s in answering])
        pool = cited_pool(read_answer_runs(systems, config.missing_runs), self.citations)
        if with_answers:
            return _occurrences(pool)
        topics = [id_text(t) for t in pool.topics.tolist()]
        return [Unit(topics[t], text, ref) for t, text, ref in zip(
            pool.unit_topic.tolist(), pool.unit_text.tolist(), pool.unit_ref.tolist())]


@dataclass(frozen=True)
class FileUnits:
    """The units of a support pool file (``irbench pool cited -o FILE``, NIST's JSONL)."""

    path: str

    def units(self, config: Any, with_answers: bool) -> list[Unit]:
        if with_answers:
            raise JudgeError(f"{self.path}: the judge's prompt shows the whole answer, which "
                             "a support pool file does not hold: judge the config's answer "
                             "runs (without --units)")
        labels = read_support(self.path)
        if not len(labels) or all(t is None for t in labels.text.tolist()):
            raise JudgeError(f"{self.path}: no sentence text to judge (a TSV pool names no "
                             "sentences: write the pool as jsonl, 'irbench pool cited -o "
                             "FILE.jsonl')")
        seen = dict.fromkeys((id_text(t), text, ref) for t, text, ref in zip(
            labels.topic_id.tolist(), labels.text.tolist(), labels.reference.tolist())
            if text is not None)
        return [Unit(*key) for key in seen]


Source = RunUnits | FileUnits


def _occurrences(pool: Any) -> list[Unit]:
    """Every occurrence of the pool's units, with its run's answer (its sentences joined)."""
    out = []
    topics = [id_text(t) for t in pool.topics.tolist()]
    unit = np.repeat(np.arange(pool.num_units), np.diff(pool.unit_offsets))
    answers: dict[tuple[int, int], str] = {}
    for u, run, row, position in zip(unit.tolist(), pool.occ_run.tolist(),
                                     pool.occ_row.tolist(), pool.occ_sentence.tolist()):
        columns = pool.answers[run]
        key = (run, int(columns.sentence_topic[row]))
        if key not in answers:
            rows = np.flatnonzero(np.asarray(columns.sentence_topic) == key[1])
            answers[key] = " ".join(columns.sentence_text[rows].tolist())
        out.append(Unit(topics[pool.unit_topic[u]], pool.unit_text[u], pool.unit_ref[u],
                        answer=answers[key], run_id=pool.runs[run], position=position))
    return out


def build_support_requests(rendering: Rendering, spec: JudgeSpec, units: Sequence[Unit],
                           statement: Callable[[str], Mapping[str, str]],
                           documents: DocumentSource, summary: JudgingSummary,
                           with_answers: bool) -> list[Pending]:
    """The request of every unit whose segment the collection has (the others listed in
    ``summary.missing``); each segment read once."""
    task = get_task(spec.task)
    present = {d: d in documents for d in {u.reference for u in units}}
    wanted = [u for u in units if present[u.reference]]
    summary.missing = sorted(d for d, there in present.items() if not there)
    distinct = list(dict.fromkeys(u.reference for u in wanted))
    docs = dict(zip(distinct, documents.get_many(distinct, limit=rendering.limit)))
    out = []
    for u in wanted:
        doc = docs[u.reference]
        messages = rendering.render(SupportContext.of(
            statement(u.query_id), u.sentence, u.reference, doc.title, doc.text,
            rendering.limit, u.answer))
        out.append(Pending(u.query_id, u.reference, messages,
                           request_sha256(messages, spec.temperature, spec.max_tokens,
                                          task.name),
                           sentence=u.sentence, run_id=u.run_id if with_answers else None,
                           position=u.position if with_answers else None))
    return out


def judge_support(config: Any, spec: JudgeSpec, source: Source, *, store: Any,
                  documents: DocumentSource, max_calls: int | None = None,
                  caller: Any = None,
                  progress: Callable[[int, int], None] | None = None) -> JudgingSummary:
    """Judge the support units of ``source`` with the support judge ``spec`` (see the module
    docstring); as :func:`irbench.judges.run.judge` does for pairs."""
    task = get_task(spec.task)
    if task.unit != SENTENCE_SEGMENT:
        raise JudgeError(f"judge '{spec.name}' judges task '{task.name}', not support "
                         "(give it 'task: support' in the config)")
    check_judgeable(config)
    topics = read_topics(config.topics)
    journal = Journal(journal_path(config.store), store.save_answers)
    leftovers = journal.fold_leftovers()
    rendering = spec.prompt.compile()
    with_answers = uses_answer(rendering)
    units = source.units(config, with_answers)
    unknown = sorted({u.query_id for u in units} - set(topics.query_id))
    if unknown:
        raise JudgeError(f"{len(unknown)} topics are not in {config.topics}: "
                         + ", ".join(unknown[:10]))
    summary = JudgingSummary(leftovers=leftovers)
    requests = build_support_requests(rendering, spec, units, topics.statement, documents,
                                      summary, with_answers)
    if units and not requests:
        raise JudgeError(f"none of the {len(summary.missing)} cited segments is in the "
                         f"collection's documents ({_where(config.documents)}; first: "
                         f"{', '.join(summary.missing[:3])}): is collection.documents the "
                         "collection the answers cite?")
    store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
    used_calls, used_tokens = store.judge_usage(spec.name)
    budget = Budget(spec, used_calls, used_tokens, max_calls)
    asked = sampled(requests, spec, task)
    first, again = _once(asked)
    step = counted(progress, len(asked))
    judge_pairs(spec, first, store, journal, budget=budget, summary=summary, caller=caller,
                progress=step, rendering=rendering, task=task)
    if again:  # the same request for another run's sentence: its answer is in the store now
        more = JudgingSummary()
        judge_pairs(spec, again, store, journal, budget=budget, summary=more, caller=caller,
                    progress=step, rendering=rendering, task=task)
        _add(summary, more)
    record_votes(spec, requests, store, summary=summary, task=task)
    summary.asked = len(requests)
    summary.journal_notes = list(journal.notes)
    return summary


def _once(requests: list[Pending]) -> tuple[list[Pending], list[Pending]]:
    """The first request of each (request, topic, segment), and the others."""
    seen: set[tuple[str, str, str]] = set()
    first: list[Pending] = []
    again: list[Pending] = []
    for r in requests:
        key = (r.sha256, r.query_id, r.doc_id)
        (again if key in seen else first).append(r)
        seen.add(key)
    return first, again


def _add(summary: JudgingSummary, more: JudgingSummary) -> None:
    for name in ("cached", "reused", "answered", "requests", "unparsed", "failed",
                 "prompt_tokens", "completion_tokens", "budget_left"):
        setattr(summary, name, getattr(summary, name) + getattr(more, name))
    summary.failures += more.failures[:max(0, 5 - len(summary.failures))]
    summary.notes += more.notes[:max(0, 5 - len(summary.notes))]


def _where(documents: Any) -> str:
    """The collection's files (or ir_datasets id), for a message."""
    return documents.irds or ", ".join(documents.paths)
