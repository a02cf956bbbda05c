"""The nugget judge, as AutoNuggetizer works (castorini/nuggetizer), through irbench's judging
loop: :func:`create_nuggets`, :func:`label_importance`, :func:`assign_nuggets`.

Each step makes its requests (:mod:`.nugget_tasks`: their contexts, rendered by the judge's
prompt, AutoNuggetizer's by default) and hands them to :func:`.judging.judge_pairs`, which
takes the answers the answer store holds, asks for the rest at the judge's concurrency within
its budget, and journals every answer the moment it arrives. A request is a unit
``(topic, unit)``: ``create/W`` (window W of the topic's relevant segments), ``importance/B``
and ``assign/B`` (batch B of its nuggets; the answer's text is in the request, so the same
answer and batch is asked once, whichever runs gave it). Each is asked ``samples`` times
(:mod:`.votes`: sample i > 0 keyed apart), every sample's answer kept; its labels are the
vote of the samples that parsed.

Creation is iterative: window W's request carries the nuggets the answers to windows 0..W-1
gave. The windows of all topics go round by round (window 0 of every topic, then window 1
...), each round one call of the judging loop. Nothing of that state is kept but the answers:
a run killed midway is resumed by running it again: the journal is folded into the answer
store first, window 0's requests are made again (the same bytes, the same keys) and found
there, which gives the same list, hence the same requests for window 1, and so on: every
answer received is reused, none paid twice; only what was never received is asked. A topic
whose window went unanswered (budget spent, request failed) stops there and is listed in
``unfinished``; its list is not given (a rerun finishes it).

What AutoNuggetizer does that this does not: it asks again (up to 500 times, at temperature
0.2) until an answer parses; here a failed answer is kept, counted (``unparsed``) and left
out of the vote (samples are the way to ask again). When no sample of a request parsed,
AutoNuggetizer's own fallbacks hold: creation keeps the list so far, importance is okay,
assignment is failed (written as not_support, which AutoNuggetizer's scores count as it
counts failed: 0; the record keeps None).

Answers are kept by an :class:`~.judging.AnswerStore`: the store's ``model_answers`` (the
unit in place of a document id; ``irbench judge --nuggets``, :mod:`.nugget_run`) or
:class:`AnswerFile` (a JSON-lines file); outputs are records written as nuggetizer's JSON
lines (:func:`write_nugget_lists`, :func:`write_assignments`), which
:mod:`irbench.judgments.nuggets` reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..ids import ids_text
from .client import Caller
from .journal import Journal
from .judging import AnswerStore, Budget, DocumentSource, JudgingSummary, Pending, judge_pairs
from .nugget_parse import normalised
from .nugget_records import (
    AnswerFile,
    AssignedNugget,
    Assignments,
    NuggetList,
    NuggetSummary,
    ScoredNugget,
    write_assignments,
    write_nugget_lists,
)
from .nugget_tasks import (
    ASSIGNMENT,
    ASSIGNMENT_NAMES,
    BATCH,
    IMPORTANCE,
    IMPORTANCE_NAMES,
    MAX_NUGGETS,
    WINDOW,
    AssignContext,
    CreateContext,
    ImportanceContext,
    bounds,
    read_labels,
    read_nuggets,
)
from .prompts import Context, request_sha256
from .spec import JudgeSpec
from .tasks import get_task
from .votes import vote

__all__ = ["AnswerFile", "AnswerText", "Assignments", "AssignedNugget", "NuggetList",
           "NuggetSummary", "ScoredNugget", "assign_nuggets", "create_nuggets",
           "label_importance", "relevant_segments", "write_assignments",
           "write_nugget_lists"]

Unit = tuple[str, str]  # (topic, unit): create/W, importance/B, assign/B


@dataclass(frozen=True)
class AnswerText:
    """One generated answer to judge: its topic, run and text (its sentences joined by
    spaces, as AutoNuggetizer joins them)."""

    qid: str
    run_id: str
    text: str


@dataclass(kw_only=True)
class Asking:
    """What the steps of one nugget judging share: the judge (its task set per step), where
    answers are kept and journalled, the budget, the client, and the summary."""

    spec: JudgeSpec
    answers: AnswerStore
    journal: Journal
    budget: Budget
    caller: Caller | None = None
    summary: NuggetSummary = field(default_factory=NuggetSummary)
    progress: Callable[[int], None] = lambda n: None
    # (requests done, requests of this call, the task asked): a progress bar's, call by call
    report: Callable[[int, int, str], None] | None = None

    @classmethod
    def open(cls, spec: JudgeSpec, answers: AnswerStore, journal_path: str, *,
             max_calls: int | None = None, caller: Caller | None = None,
             used: tuple[int, int] = (0, 0)) -> Asking:
        """Fold what a killed run left in the journal at ``journal_path`` into ``answers``;
        the budget is the judge's (``used``: the calls and tokens it spent before;
        ``max_calls``: at most so many requests in this run)."""
        journal = Journal(journal_path, answers.save_answers)
        leftovers = journal.fold_leftovers()
        out = cls(spec=spec, answers=answers, journal=journal, caller=caller,
                  budget=Budget(spec, used[0], used[1], max_calls))
        out.summary.leftovers = leftovers
        return out

    def ask(self, task_name: str, requests: Sequence[tuple[Unit, Context]]
            ) -> list[list[str | None]]:
        """Each request asked ``samples`` times (what the answer store holds taken; the same
        request twice asked once): its answers by sample (None: none received), in the
        order of ``requests``."""
        return [[a for _, a in samples] for samples in self.ask_keyed(task_name, requests)]

    def ask_keyed(self, task_name: str, requests: Sequence[tuple[Unit, Context]]
                  ) -> list[list[tuple[str, str | None]]]:
        """As :meth:`ask`, each answer with its request's sha256."""
        task = get_task(task_name)
        spec = self.spec
        rendering = spec.prompt.compile()
        keys: list[list[tuple[str, str, str]]] = []
        pending: dict[tuple[str, str, str], Pending] = {}
        for (qid, unit), context in requests:
            messages = rendering.render(context)
            keys.append([])
            for sample in range(spec.samples):
                sha = request_sha256(messages, spec.temperature, spec.max_tokens, task.name,
                                     sample)
                keys[-1].append((sha, qid, unit))
                pending.setdefault((sha, qid, unit), Pending(qid, unit, messages, sha))
        if not pending:
            return [[] for _ in keys]
        ran = JudgingSummary()
        done = [0]

        def step(n: int) -> None:
            self.progress(n)
            done[0] += n
            if self.report is not None:
                self.report(done[0], len(pending), task_name)

        try:
            judge_pairs(spec, list(pending.values()), self.answers, self.journal,
                        budget=self.budget, summary=ran, caller=self.caller,
                        progress=step, rendering=rendering, task=task)
        finally:
            self.summary.add(ran)
        got = self.answers.cached_answers(spec.model, spec.base_url, list(pending),
                                          endpoints=spec.reuse_endpoints,
                                          judges=spec.reuse_judges)
        return [[(k[0], got[k][1] if k in got else None) for k in samples]
                for samples in keys]


def relevant_segments(qrels, documents: DocumentSource, *, min_relevance: int = 1,
                      limit: int | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """Each topic's relevant segments (judged ``min_relevance`` or more in ``qrels``), most
    relevant first, then by docno: their text, at most ``limit`` characters each; and the
    docnos the collection lacks (left out)."""
    q = ids_text(qrels.query_id).astype(str).tolist()
    d = ids_text(qrels.doc_id).astype(str).tolist()
    rows = sorted((qid, -int(rel), doc) for qid, doc, rel in zip(q, d, qrels.relevance.tolist())
                  if rel >= min_relevance)
    missing = sorted({doc for _, _, doc in rows if doc not in documents})
    kept = [(qid, doc) for qid, _, doc in rows if doc not in missing]
    texts = documents.get_many([doc for _, doc in kept], limit=limit)
    out: dict[str, list[str]] = {}
    for (qid, _), document in zip(kept, texts):
        out.setdefault(qid, []).append(document.text[:limit] if limit else document.text)
    return out, missing


def create_nuggets(asking: Asking, queries: Mapping[str, str],
                   segments: Mapping[str, Sequence[str]], *, window: int = WINDOW,
                   max_nuggets: int = MAX_NUGGETS) -> dict[str, list[str]]:
    """Each topic's nuggets (text, in the order the answers gave them) from its ``segments``
    (:func:`relevant_segments`), window by window (see the module docstring); a topic without
    segments gets none (listed in ``asking.summary.no_segments``), one left unfinished none
    either (``unfinished``)."""
    spec = asking.spec
    limit = spec.prompt.max_document_chars
    asking.summary.no_segments += sorted(q for q in queries if not segments.get(q))
    spans = {q: bounds(len(segments[q]), window) for q in queries if segments.get(q)}
    lists: dict[str, list[str]] = {q: [] for q in spans}
    going = set(spans)
    for at in range(max((len(s) for s in spans.values()), default=0)):
        requests: list[tuple[Unit, Context]] = []
        for qid in sorted(q for q in going if at < len(spans[q])):
            start, end = spans[qid][at]
            texts = [t[:limit] for t in segments[qid][start:end]]
            requests.append(((qid, f"create/{at}"), CreateContext.of(
                qid, queries[qid], texts, lists[qid], max_nuggets)))
        answers = asking.ask("nugget_create", requests)
        for ((qid, _), _), samples in zip(requests, answers):
            if any(a is None for a in samples):
                going.discard(qid)
                continue
            parsed = [read_nuggets(a) for a in samples if a is not None]
            asking.summary.unparsed += sum(p is None for p in parsed)
            given = [p for p in parsed if p is not None]
            if given:  # none parsed: the list so far stays (AutoNuggetizer's fallback)
                lists[qid] = voted_nuggets(given)[:max_nuggets]
    asking.summary.unfinished += sorted(set(spans) - going)
    return {q: lists[q] for q in sorted(going)}


def voted_nuggets(samples: Sequence[Sequence[str]]) -> list[str]:
    """The nuggets more than half the samples give (compared by :func:`normalised` text),
    each as the first sample giving it writes it, in the order of the first sample giving
    each (one sample: its list, duplicates dropped)."""
    seen: dict[str, tuple[str, set[int]]] = {}
    for i, sample in enumerate(samples):
        for text in sample:
            key = normalised(text)
            seen.setdefault(key, (text, set()))[1].add(i)
    return [text for text, given in seen.values() if 2 * len(given) > len(samples)]


def label_importance(asking: Asking, queries: Mapping[str, str],
                     nuggets: Mapping[str, Sequence[str]], *, batch: int = BATCH
                     ) -> list[NuggetList]:
    """Each topic's nugget list with its nuggets' importance (vital or okay), batch by batch;
    a topic with a batch unanswered is left out (``unfinished``)."""
    requests: list[tuple[Unit, Context]] = []
    for qid in sorted(nuggets):
        for b, (start, end) in enumerate(bounds(len(nuggets[qid]), batch)):
            requests.append(((qid, f"importance/{b}"), ImportanceContext.of(
                qid, queries[qid], nuggets[qid][start:end])))
    labels = iter(_batch_labels(asking, "nugget_importance", requests, IMPORTANCE))
    out = []
    for qid in sorted(nuggets):
        got = [next(labels) for _ in bounds(len(nuggets[qid]), batch)]
        if any(x is None for x in got):
            asking.summary.unfinished.append(qid)
            continue
        flat = [x for part in got if part is not None for x in part.labels]
        out.append(NuggetList(qid=qid, query=queries[qid], nuggets=tuple(
            ScoredNugget(text=text, importance=IMPORTANCE_NAMES[0 if x is None else x],
                         failed=x is None) for text, x in zip(nuggets[qid], flat))))
    return out


def assign_nuggets(asking: Asking, lists: Iterable[NuggetList],
                   answers: Iterable[AnswerText], *, batch: int = BATCH) -> list[Assignments]:
    """Each answer's assignment of its topic's nuggets (support, partial_support,
    not_support), batch by batch; an answer to a topic without a list is left out (counted in
    ``no_nuggets``), one with a batch unanswered too (``unfinished``: ``topic run``)."""
    by_topic = {x.qid: x for x in lists}
    todo = []
    requests: list[tuple[Unit, Context]] = []
    for answer in answers:
        found = by_topic.get(answer.qid)
        if found is None or not found.nuggets:
            asking.summary.no_nuggets += 1
            continue
        texts = [n.text for n in found.nuggets]
        spans = bounds(len(texts), batch)
        requests += [((answer.qid, f"assign/{b}"), AssignContext.of(
            answer.qid, found.query, answer.text, texts[start:end]))
            for b, (start, end) in enumerate(spans)]
        todo.append((answer, found, len(spans)))
    labels = iter(_batch_labels(asking, "nugget_assign", requests, ASSIGNMENT))
    out = []
    for answer, found, n in todo:
        got = [next(labels) for _ in range(n)]
        if any(x is None for x in got):
            asking.summary.unfinished.append(f"{answer.qid} {answer.run_id}")
            continue
        flat = [(x, part.request, part.answer) for part in got if part is not None
                for x in part.labels]
        out.append(Assignments(qid=answer.qid, run_id=answer.run_id, nuggets=tuple(
            AssignedNugget(text=n.text, importance=n.importance,
                           assignment=None if x is None else ASSIGNMENT_NAMES[x],
                           nugget_id=n.nugget_id, request=sha, answer=text)
            for n, (x, sha, text) in zip(found.nuggets, flat))))
    return out


@dataclass(frozen=True)
class BatchLabels:
    """A batch request's labels, one per nugget (the vote of its samples that parsed; None
    for each when none did), its first sample's request sha256 and answer."""

    labels: list[int | None]
    request: str
    answer: str


def _batch_labels(asking: Asking, task: str, requests: Sequence[tuple[Unit, Context]],
                  known: Mapping[str, int]) -> list[BatchLabels | None]:
    """Each request's labels (:class:`BatchLabels`); None for a request with a sample
    unanswered."""
    out: list[BatchLabels | None] = []
    for (_, context), keyed in zip(requests, asking.ask_keyed(task, requests)):
        samples = [a for _, a in keyed]
        if any(a is None for a in samples):
            out.append(None)
            continue
        length = int(context.names()["num_nuggets"])
        parsed = [read_labels(a, known, length) for a in samples if a is not None]
        failed = sum(p is None for p in parsed)
        asking.summary.unparsed += failed
        given = [p for p in parsed if p is not None]
        if not given:
            asking.summary.failed_batches += 1
        out.append(BatchLabels(
            [vote([p[i] for p in given], asking.spec.vote) if given else None
             for i in range(length)], keyed[0][0], str(samples[0])))
    return out
