"""The whole of ``irbench judge CONFIG --judge NAME --nuggets``: :func:`judge_nuggets`.

A nugget judge (a judge whose ``task:`` is one of the nugget tasks, :data:`.tasks.
NUGGET_TASKS`) runs AutoNuggetizer's three steps (:mod:`.nugget_judging`) with its one model,
server and settings; each step asks with its own task's prompt and system message (the
judge's ``prompt:`` and ``system:`` are those of the step of its ``task:``, the others
AutoNuggetizer's), its ``window``, ``batch`` and ``max_nuggets`` config keys sizing them:

1. creation, from each topic's relevant segments in the config's first qrels set of
   documents (labels 1 and up, most relevant first), at most ``max_document_chars`` each;
2. importance of each topic's nuggets; each finished list is stored in the ``nuggets``
   table as the judge's (:meth:`irbench.store.Store.record_model_nuggets`: the same list
   stored again changes nothing, a person's edits of it stay);
3. assignment of the judge's stored list as it stands (a desk's edits included) in every
   answer of the config's answer runs; each label given is recorded in ``answer_labels``
   (task ``nugget``, reference the nugget's id, run_id the run; once per judge, request,
   nugget and run).

Every answer is kept in the store's ``model_answers`` (the unit, ``create/W``,
``importance/B`` or ``assign/B``, in place of a document id) the moment the journal holds
it: a run killed midway is resumed by running it again, paying for no answer twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..config.types import priority_order
from ..errors import JudgeError
from ..judgments import kind as judgment_kind
from ..store.answer_labels import NUGGET, ONE_MODEL_LABEL, AnswerLabel
from ..topics import read_topics
from .client import Caller
from .journal import journal_path
from .judging import DocumentSource
from .nugget_judging import (
    AnswerText,
    Asking,
    NuggetList,
    NuggetSummary,
    ScoredNugget,
    assign_nuggets,
    create_nuggets,
    label_importance,
    relevant_segments,
)
from .nugget_prompts import SYSTEM, USER
from .nugget_tasks import ASSIGNMENT
from .run import check_judgeable
from .spec import JudgeSpec
from .tasks import NUGGET_TASKS, get_task

STEP_CREATE, STEP_IMPORTANCE, STEP_ASSIGN = NUGGET_TASKS


@dataclass
class NuggetRun:
    """What ``irbench judge --nuggets`` did: the judging's summary, the qrels set the
    segments came from, segments the collection lacks, topics with a list stored, nuggets
    added to the store, answers assigned and labels recorded (a rerun records none)."""

    summary: NuggetSummary
    qrels: str
    missing: list[str] = field(default_factory=list)
    lists: int = 0
    added: int = 0
    assigned: int = 0
    labels: int = 0
    journal_notes: list[str] = field(default_factory=list)


def step_spec(spec: JudgeSpec, task_name: str) -> JudgeSpec:
    """The judge as it asks one step: itself for the step of its task, else the same judge
    with that step's task and AutoNuggetizer's prompt and system message."""
    if spec.task == task_name:
        return spec
    task = get_task(task_name)
    return replace(spec, task=task.name, prompt_name=task.prompt, prompt=replace(
        spec.prompt, user=USER[task.prompt], system=SYSTEM[task.prompt], labels=task.labels,
        source=task.prompt))


def document_qrels(config: Any) -> Any:
    """The config's first qrels set of documents (of a kind scoring ranked runs)."""
    for qrels in config.qrels:
        if "run" in judgment_kind(qrels.kind).scores:
            return qrels
    raise JudgeError(f"{config.path}: the nugget judge makes nuggets from the relevant "
                     "segments of a qrels set of documents: the config has none (add one "
                     "under collection.qrels)")


def answer_texts(config: Any) -> list[AnswerText]:
    """Every answer of the config's answer runs: its topic, run id and sentences' text
    joined by spaces (as AutoNuggetizer joins them)."""
    from ..pooling import answer_systems, read_answer_runs

    answering = [s for s in config.systems if s.kind == "answers"]
    if not answering:
        raise JudgeError(f"{config.path}: no answer runs to judge (a system with 'answers: "
                         "FILE')")
    systems = answer_systems(priority_order(config.systems), [s.name for s in answering])
    return [AnswerText(a.topic_id, run.run_id, " ".join(s.text for s in a.sentences))
            for run in read_answer_runs(systems, config.missing_runs) for a in run.answers()]


def judge_nuggets(config: Any, spec: JudgeSpec, *, store: Any, documents: DocumentSource,
                  max_calls: int | None = None, caller: Caller | None = None,
                  progress: Callable[[int, int, str], None] | None = None) -> NuggetRun:
    """Judge the config's answer runs with the nugget judge ``spec`` (see the module
    docstring): answers, nuggets and labels into ``store`` (open for writing), segments read
    from ``documents`` (open). ``progress(done, total, task)``: called as the requests of
    each round (a creation window of every topic, importance, assignment) are answered."""
    if spec.task not in NUGGET_TASKS:
        raise JudgeError(f"judge '{spec.name}' judges task '{spec.task}', not nuggets (give it "
                         f"'task: {STEP_CREATE}' in the config)")
    check_judgeable(config)
    topics = read_topics(config.topics)
    qrels = document_qrels(config)
    answers = answer_texts(config)
    queries = {q: topics.statement(q)["title"] for q in topics.query_id}
    segments, missing = relevant_segments(qrels.read(), documents,
                                          limit=spec.prompt.max_document_chars)
    unknown = sorted(({a.qid for a in answers} | set(segments)) - set(queries))
    if unknown:
        raise JudgeError(f"{len(unknown)} topics of the answer runs or of qrels set "
                         f"'{qrels.name}' are not in {config.topics}: " + ", ".join(unknown[:10]))
    store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
    asking = Asking.open(step_spec(spec, STEP_CREATE), store, journal_path(config.store),
                         max_calls=max_calls, caller=caller, used=store.judge_usage(spec.name))
    asking.report = progress
    made = create_nuggets(asking, queries, segments, window=spec.window,
                          max_nuggets=spec.max_nuggets)
    asking.spec = step_spec(spec, STEP_IMPORTANCE)
    lists = label_importance(asking, queries, made, batch=spec.batch)
    out = NuggetRun(summary=asking.summary, qrels=qrels.name, missing=missing,
                    lists=len(lists))
    out.added = store.record_model_nuggets(spec.name, {
        x.qid: [(n.text, n.importance) for n in x.nuggets] for x in lists})
    asking.spec = step_spec(spec, STEP_ASSIGN)
    rows = assign_nuggets(asking, stored_lists(store, spec.name, queries), answers,
                          batch=spec.batch)
    out.assigned = len(rows)
    out.labels = store.record_answer_labels(_labels(spec, rows), once_per=ONE_MODEL_LABEL)
    out.journal_notes = list(asking.journal.notes)
    return out


def stored_lists(store: Any, judge: str, queries: dict[str, str]) -> list[NuggetList]:
    """The judge's lists as the store holds them (live nuggets, with their ids)."""
    return [NuggetList(qid=qid, query=queries[qid], nuggets=tuple(
        ScoredNugget(text=n.text, importance=n.importance, nugget_id=n.nugget_id)
        for n in nuggets)) for qid, nuggets in sorted(store.live_nuggets(judge).items())
        if qid in queries]


def _labels(spec: JudgeSpec, rows: Sequence[Any]) -> list[AnswerLabel]:
    """The answer labels of the assignments given (a nugget no sample labelled has none)."""
    return [AnswerLabel(task=NUGGET, query_id=r.qid, reference=str(n.nugget_id),
                        run_id=r.run_id, label=ASSIGNMENT[n.assignment], judge=spec.name,
                        judge_kind="model", source=f"model:{spec.model}", model=spec.model,
                        prompt_sha256=n.request, answer=n.answer)
            for r in rows for n in r.nuggets if n.assignment is not None]
