"""Scoring one system of a campaign, in whichever process the engine runs it: its file read
once and hashed, the submission checks, its topics checked, then
:func:`~irbench.measures.compute.score_run` on every qrels set it needs (or, for a file too
big to hold, :func:`~irbench.runner.shards.evaluate_sharded`). Everything is a value: a
:class:`Task` in, an :class:`Outcome` out, the :class:`Context` shared by every task."""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..answers import AnswerRun, read_answers
from ..arrays import distinct
from ..config import Settings, Validation
from ..documents.spec import DocumentsSpec
from ..errors import EvaluationError, FormatError, IrbenchError
from ..measures import Measure
from ..measures.compute import score_run
from ..ranked import PreparedQrels
from ..store import PROFILE_PREFIX, Evaluated, FileFacts
from ..submissions.ir_metadata import find_ir_metadata
from ..trec import GZIP_MAGIC, display, read_run
from . import shards
from .inputs import QrelsSets, load, open_stream, stat_of, unknown_topics

if TYPE_CHECKING:  # a config with topics reads them (irbench.runner.inputs)
    from ..topics import Topics


@dataclass(frozen=True)
class Wanted:
    """The measures to compute for one qrels set: the config's (``suite``) and the values
    kept for the report's profile only (``profile``)."""

    suite: tuple[Measure, ...]
    profile: tuple[Measure, ...] = ()

    def missing(self, have: set[str] | frozenset[str]) -> Wanted:
        """These measures less those the store ``have`` (by canonical name)."""
        if not have:
            return self
        return Wanted(tuple(m for m in self.suite if str(m) not in have),
                      tuple(m for m in self.profile if PROFILE_PREFIX + str(m) not in have))

    def measures(self) -> list[Measure]:
        """Every measure to compute, each once."""
        return list(dict.fromkeys(self.suite + self.profile))

    def __bool__(self) -> bool:
        return bool(self.suite or self.profile)


NOTHING = Wanted(())


@dataclass(frozen=True, kw_only=True)
class Task:
    """One system to score: what each qrels set needs of it."""

    system: str
    path: str
    wanted: dict[str, Wanted]
    hashed: bool = True  # False: the file's hash is unknown, so drop what the store has
    check_only: bool = False  # irbench check: rank against every set, compute nothing
    kind: str = "run"  # run, or answers (irbench.system.SYSTEM_KINDS)
    answer_format: str | None = None


class Checked(NamedTuple):
    """What the submission checks said of a run."""

    verdict: str             # accepted, warned, rejected
    problems: str            # JSON list of the problems
    lines: tuple[str, ...]   # the report, one line per problem


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What scoring one system gave: its file's facts, what it answers, its results or why it
    has none."""

    system: str
    path: str
    facts: FileFacts | None = None  # None: the file could not be read
    run_tag: str = ""
    topics: tuple[str, ...] = ()  # the topics the run answers
    num_docs: int = 0
    results: tuple[Evaluated, ...] = ()
    error: str | None = None
    reused: tuple[str, ...] = ()  # qrels sets whose results the store already had
    metadata: dict | None = None  # the run's ir_metadata block
    checked: Checked | None = None
    warnings: tuple[str, ...] = ()  # an answer run's: what its reader accepted, sets skipped

    @property
    def sha256(self) -> str:
        return self.facts.sha256 if self.facts is not None else ""


@dataclass(frozen=True, kw_only=True)
class Context:
    """What every task is scored with (the engine's shared value)."""

    qrels: QrelsSets
    qrels_sha: dict[str, str]
    topic_set: frozenset | None
    settings: Settings
    done: dict = field(default_factory=dict)  # (run sha256, qrels sha256) -> measures stored
    topics: Topics | None = None  # the Topics, for the submission checks
    validation: Validation | None = None  # None: no submission checks
    shard_bytes: int = 0  # a run file bigger than this is scored in topic shards (0: never)
    documents: DocumentsSpec | None = None  # answer runs' ids are checked against these


def score_safely(task: Task, ctx: Context) -> Outcome:
    """:func:`score_system`, with a file that cannot be read as the system's failure."""
    try:
        return score_system(task, ctx)
    except OSError as exc:
        return Outcome(system=task.system, path=task.path,
                       error=f"{task.path}: cannot read ({exc.strerror})")


def in_shards(size: int, shard_bytes: int) -> bool:
    """Whether a run file of ``size`` bytes is scored in topic shards (``shard_bytes``: the
    size above which one is; 0: never), when its qrels sets are all ad hoc."""
    return bool(shard_bytes) and size > shard_bytes


def score_system(task: Task, ctx: Context) -> Outcome:
    """Read one run, check its topics, and evaluate it on every qrels set it needs."""
    if task.kind == "answers":
        return score_answers(task, ctx)
    size, _ = stat_of(task.path)
    if in_shards(size, ctx.shard_bytes) and all(
            isinstance(ctx.qrels[q], PreparedQrels) for q in task.wanted):
        return score_in_shards(task, ctx)
    facts, data = load(task.path)
    todo, reused = _todo(task, ctx, facts.sha256)
    if todo is None:
        return Outcome(system=task.system, path=task.path, facts=facts, reused=reused)
    metadata = find_ir_metadata(data.data).data
    kept: dict = {"system": task.system, "path": task.path, "facts": facts, "metadata": metadata}
    checked = _check_submission(ctx, task.path)
    if checked is not None and checked.verdict == "rejected" and \
            ctx.validation is not None and ctx.validation.on_error == "fail":
        return Outcome(**kept, checked=checked,
                       error="rejected by the submission checks:\n" + "\n".join(checked.lines))
    try:
        run = read_run(data, name=task.system)
    except FormatError as exc:
        return Outcome(**kept, checked=checked, error=str(exc))
    del kept["metadata"]
    topics = distinct(run.query_id, run.topic_starts)
    kept.update(run_tag=run.runid, topics=tuple(display(t) for t in topics), num_docs=len(run))
    stray = unknown_topics(task.path, run.query_id, run.line, ctx.topic_set)
    if stray is not None:
        return Outcome(**kept, error=stray)
    options = ctx.settings.options()
    intersection = ctx.settings.topics == "intersection"
    results = []
    try:
        for qrels_name, wanted in todo.items():
            if not wanted and not task.check_only:
                continue
            if not wanted:  # checked: the run ranks against this set
                ctx.qrels[qrels_name].rank(run, options)
                continue
            scored = score_run(ctx.qrels[qrels_name], run, wanted.measures(), options,
                               intersection)
            results.append(_evaluated(task, ctx, qrels_name, facts.sha256, wanted,
                                      scored.topics, scored.values, scored.summaries))
    except (FormatError, EvaluationError) as exc:
        return Outcome(**kept, error=str(exc))
    return Outcome(**kept, results=tuple(results), reused=reused, metadata=metadata,
                   checked=checked)


def score_answers(task: Task, ctx: Context) -> Outcome:
    """Read one answer run (checked by its format's rules as it is read) and evaluate it on
    every qrels set it needs: answer judgments (support labels, nugget assignments) score its
    answers; judgments of documents score its references as a ranked run, a topic it does not
    answer counting as trec_eval -c counts it. A set of answer judgments that does not know
    the run (NIST judged some runs only) gives it no value, with a warning."""
    from ..answers.scored import references_run  # answer runs only: not imported for others
    from ..judgments.answered import AnswerJudgments

    facts, data = load(task.path)
    todo, reused = _todo(task, ctx, facts.sha256)
    if todo is None:
        return Outcome(system=task.system, path=task.path, facts=facts, reused=reused)
    kept: dict = {"system": task.system, "path": task.path, "facts": facts}
    try:
        answers = read_answers(data, format=task.answer_format, topics=ctx.topic_set,
                               name=task.system)
    except FormatError as exc:
        return Outcome(**kept, error=str(exc))
    try:
        unknown = unknown_ids(answers, ctx.documents)
    except FormatError as exc:  # the documents themselves do not read
        return Outcome(**kept, error=str(exc))
    if unknown:
        return Outcome(**kept, error="\n".join(unknown))
    warnings = [f"system '{task.system}': {w}" for w in answers.warnings]
    if answers.warnings_more:
        warnings.append(f"system '{task.system}': ... and {answers.warnings_more} more "
                        "warnings")
    c = answers.columns
    kept.update(run_tag=answers.run_id, topics=tuple(answers.topic_ids),
                num_docs=int(len(c.reference_ids)))
    options = ctx.settings.options()
    intersection = ctx.settings.topics == "intersection"
    results, run = [], None
    try:
        for qrels_name, wanted in todo.items():
            prepared = ctx.qrels[qrels_name]
            if isinstance(prepared, AnswerJudgments):
                if not prepared.has_run(answers):
                    warnings.append(f"system '{task.system}': qrels '{qrels_name}' has no "
                                    f"judgments of run '{answers.run_id}': not scored on it")
                    continue
                if not wanted:
                    continue
                scored = score_run(prepared, answers, wanted.measures(), options, intersection)
            else:
                run = run or references_run(answers, task.system)
                if not wanted:
                    continue
                scored = score_run(prepared, run, wanted.measures(),
                                   replace(options, complete=True), intersection)
            results.append(_evaluated(task, ctx, qrels_name, facts.sha256, wanted,
                                      scored.topics, scored.values, scored.summaries))
    except (FormatError, EvaluationError) as exc:
        return Outcome(**kept, error=str(exc), warnings=tuple(warnings))
    return Outcome(**kept, results=tuple(results), reused=reused, warnings=tuple(warnings))


def unknown_ids(answers: AnswerRun, spec: DocumentsSpec | None) -> list[str]:
    """``FILE:LINE: ...`` of each reference or cited id of ``answers`` that the collection's
    documents lack (the first :data:`~irbench.errors.FormatError.MAX_SHOWN`, then a count);
    none without documents. The ids are looked up at once."""
    if spec is None:
        return []
    c = answers.columns
    ids = np.concatenate([c.reference_ids, c.citation_ref]).tolist()
    from ..documents import open_documents

    with open_documents(spec) as docs:
        missing = docs.missing(ids)
    if not missing:
        return []
    # each id's topic (its first appearance), for the line of that topic's answer
    topic_of = np.concatenate([np.repeat(np.arange(c.num_topics), np.diff(c.reference_offsets)),
                               c.sentence_topic[c.citation_sentence()]])
    first = dict(zip(reversed(ids), reversed(topic_of.tolist())))
    shown = [f"{answers.path}:{answers.meta[first[docno]].line}: '{docno}' is not in the "
             f"collection's documents ({docs.name})"
             for docno in missing[:FormatError.MAX_SHOWN]]
    more = len(missing) - len(shown)
    return shown + ([f"... and {more} more ids not in the collection"] if more else [])


def _todo(task: Task, ctx: Context, sha: str
          ) -> tuple[dict[str, Wanted] | None, tuple[str, ...]]:
    """(what to compute per qrels set, or None when the store has it all; the sets whose
    results the store has). A file whose hash was unknown at planning time (e.g. touched)
    computes only what the store lacks for its content."""
    if task.hashed:
        return task.wanted, ()
    todo = {q: wanted.missing(ctx.done.get((sha, ctx.qrels_sha[q]), set()))
            for q, wanted in task.wanted.items()}
    reused = tuple(q for q, wanted in todo.items() if not wanted)
    return (None if len(reused) == len(todo) else todo), reused


def _evaluated(task: Task, ctx: Context, qrels_name: str, sha: str, wanted: Wanted,
               topics: tuple[str, ...], values: dict, summaries: dict) -> Evaluated:
    return Evaluated(
        system=task.system, qrels=qrels_name, run_sha256=sha,
        qrels_sha256=ctx.qrels_sha[qrels_name], topics=topics,
        values={m: np.asarray(values[m], dtype=np.float64) for m in wanted.suite},
        summaries={m: float(summaries[m]) for m in wanted.suite},
        profile={m: float(summaries[m]) for m in wanted.profile})


def _check_submission(ctx: Context, path: str) -> Checked | None:
    """What the submission checks say of the run at ``path``, or None without checks."""
    if ctx.validation is None:
        return None
    from ..submissions import check_run, report_lines

    check = check_run(path, ctx.validation.rules, ctx.topics)
    lines = tuple(report_lines(check, ctx.validation.rules.max_shown))
    problems = json.dumps([{"line": p.line, "check": p.check, "severity": p.severity,
                            "message": p.message} for p in check.problems])
    return Checked(check.verdict, problems, lines)


def score_in_shards(task: Task, ctx: Context) -> Outcome:
    """A run file (or object at a URL) too big to hold: hashed as a stream and scored in topic
    shards (:func:`irbench.runner.shards.evaluate_sharded`), one qrels set at a time; for
    ``irbench check``, ranked in shards against every set (which finds duplicates and stray
    topics) with nothing computed. Its submission checks are not run (they read the whole
    file)."""
    size, mtime = stat_of(task.path)
    digest = hashlib.sha256()
    with open_stream(task.path) as fh:  # a local file or an object at a URL, as a stream
        head = fh.read(1 << 20)
        digest.update(head)
        for block in iter(lambda: fh.read(1 << 24), b""):
            digest.update(block)
    facts = FileFacts(task.path, size, mtime, digest.hexdigest())
    if head[:2] == GZIP_MAGIC:  # the block is looked for in the start of the text
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1 << 22)
        except zlib.error:  # not gzip after all: reading it says so, with its line
            head = b""
    metadata = find_ir_metadata(head).data
    todo, reused = _todo(task, ctx, facts.sha256)
    todo = todo or {}
    results: list[Evaluated] = []
    kept: dict = {"system": task.system, "path": task.path, "facts": facts}
    try:
        for qrels_name, wanted in todo.items():
            if not wanted and not task.check_only:
                continue
            done = shards.evaluate_sharded(
                ctx.qrels[qrels_name].qrels, task.path, wanted.measures(),
                ctx.settings.options(), intersection=ctx.settings.topics == "intersection",
                limit=ctx.shard_bytes)
            answered = tuple(display(t) for t in done.answered)
            scored = answered if np.array_equal(done.topics, done.answered) else \
                tuple(display(t) for t in done.topics)  # one tuple of 1,000,000 names, not two
            kept.update(run_tag=done.runid, topics=answered, num_docs=done.num_docs)
            stray = unknown_topics(task.path, done.answered, done.first_line, ctx.topic_set)
            if stray is not None:  # as the whole-file path words it, line and all
                return Outcome(**kept, error=stray)
            if not wanted:  # checked: the run ranks against this set
                continue
            results.append(_evaluated(task, ctx, qrels_name, facts.sha256, wanted, scored,
                                      done.values, done.summaries))
    except IrbenchError as exc:
        return Outcome(**kept, error=str(exc), metadata=metadata)
    return Outcome(**kept, results=tuple(results), reused=reused, metadata=metadata)
