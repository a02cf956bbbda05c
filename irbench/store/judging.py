"""Judgments that know their judge, and the answers of model judges (mixed into Store).

Every row of ``judgments`` names its judge (an assessor, a model judge of the config, or the
name given to imported qrels), its kind (``human`` or ``model``) and when it was made; a model's
judgment also carries the model, the sha256 of the request (:func:`irbench.judges.prompts.
request_sha256`) and its raw answer, or, for a judge asking ``samples`` of each request, the
vote's sha256 and a JSON note ``{"vote": ..., "labels": [...], "requests": [...]}`` of its
samples (:meth:`Judging.record_votes`). Several judges may label one (topic, document); the
qrels rules (:mod:`irbench.judgments.rules`) choose. :meth:`Judging.record_judgments` is the
one writer of the table (files judged into a pool, imported qrels, model judges, the browser).

``model_answers`` is the cache of every answer a model gave (every sample), parsed or not,
keyed by (model, endpoint, request sha256, topic, document): a request is never paid for twice.
The endpoint is the judge's base_url as ``judges`` keeps it (never a credential): two servers
serving models of one name never share answers unless a judge's config says so
(``reuse_answers_from``: :meth:`Judging.cached_answers`). Each answer keeps the HTTP requests
it took (retries included; NULL before irbench counted them). A model judge's label is its
own endpoint's answer once the store holds one: a label taken from another endpoint's answer
gives way when its own is recorded (:meth:`Judging.save_answers`; migration 18).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import StoreValueError
from ..ids import id_text, ids_text
from .answer_labels import ONE_MODEL_LABEL, AnswerLabel, AnswerLabels
from .records import WRITTEN_FIELDS, Judgment, JudgmentColumns

WRITTEN = WRITTEN_FIELDS  # judged_at: now()
_SQL_TYPES = {"relevance": "INTEGER", "batch": "INTEGER", "suggested": "INTEGER",
              "seconds": "DOUBLE"}  # every other column VARCHAR
FROM_FILE = ("pool", "query_id", "doc_id", "source", "judge")  # a file's label: once
ONE_ANSWER = ("judge", "prompt_sha256", "query_id", "doc_id")  # a model's judgment: once


@dataclass(frozen=True, kw_only=True)
class ModelAnswer:
    """One answer of a model judge: ``relevance`` None when it could not be parsed."""

    model: str
    prompt_sha256: str
    query_id: str
    doc_id: str
    judge: str
    answer: str
    relevance: int | None
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    endpoint: str | None = None  # the judge's base_url; None: not known (a journal line of an
    #                              earlier irbench): stored as its judge's base_url (judges)
    requests: int | None = None  # HTTP requests it took, retries included; None: not known
    # the judge task when it labels generated answers (None: relevance, kept in judgments);
    # its labels go to answer_labels, the unit (topic, ``sentence``, doc_id: the segment),
    # for one run's sentence when ``run_id`` and ``position`` are given
    task: str | None = None
    sentence: str | None = None
    run_id: str | None = None
    position: int | None = None
    sample: int | None = None  # which of its judge's samples (None: none): not a label


UNKNOWN_ENDPOINT = "unknown"  # the endpoint of an answer whose server the store cannot know
#                               (no base_url is: it is an http(s) URL); migration 16 writes it
MAX_TOKENS = 2**31 - 1  # a token count above this (a server's error: no answer is that long)
                       # or below 0 is unknown: stored as 0, as the judge client counts it
                       # (irbench.judges.client); a sum over 2**32 answers still fits a BIGINT
MIN_RELEVANCE, MAX_RELEVANCE = -(2**31), 2**31 - 1  # the INTEGER column
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEYS = ("model", "prompt_sha256", "judge")
_GIVEN = "irbench_judgments"  # the registered columns record_judgments reads
_LABELS = "irbench_labels"  # those replace_judged compares
# who labelled what: judgments of (topic, document) and labels of generated answers
_LABELLED = ("(SELECT judge, judge_kind, model FROM judgments UNION ALL "
             "SELECT judge, judge_kind, model FROM answer_labels)")


def _from_file(rows: JudgmentColumns) -> JudgmentColumns:
    """``rows`` as labels read from a file are stored: ids, pool, source and judge by
    :func:`irbench.ids.id_text`, relevance a whole number. A column is kept as it is when it
    is so already (valid UTF-8 text; whole numbers): checked a column at a time."""
    changed: dict[str, Any] = {}
    for name in ("query_id", "doc_id", "pool", "source", "judge"):
        value = getattr(rows, name)
        if not isinstance(value, np.ndarray):
            changed[name] = id_text(value)
        elif not _all_text(value.tolist()):
            changed[name] = ids_text(value)
    relevance = rows.relevance
    if not isinstance(relevance, np.ndarray):
        changed["relevance"] = int(relevance)  # type: ignore[arg-type]
    elif relevance.dtype.kind not in "iu":
        changed["relevance"] = np.array([int(r) for r in relevance.tolist()] + [None],
                                        dtype=object)[:-1]
    return replace(rows, **changed) if changed else rows


@contextmanager
def _registered(con: Any, name: str) -> Iterator[None]:
    """Unregister the table ``name`` after the block; after a failed statement (the
    transaction aborted: DuckDB refuses to unregister then) the rollback drops it, and the
    statement's error is the one raised."""
    try:
        yield
    except BaseException:
        with suppress(Exception):
            con.unregister(name)
        raise
    con.unregister(name)


def _columns(rows: Sequence[Judgment] | JudgmentColumns) -> JudgmentColumns:
    return rows if isinstance(rows, JudgmentColumns) else JudgmentColumns.from_rows(rows)


def _all_text(values: list) -> bool:
    """Whether every value is text that is valid UTF-8 (id_text keeps it as it is)."""
    try:
        "".join(values).encode("utf-8")
        return True
    except (TypeError, UnicodeEncodeError):
        return False


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}..."


def storable_text(text: str) -> str:
    """``text`` with each lone surrogate (not UTF-8: a JSON ``\\ud800`` gives one) written as
    its escape ``\\ud800``; any other text as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def token_count(value: object) -> int | None:
    """A model's usage count as irbench keeps it: a whole number from 0 to
    :data:`MAX_TOKENS`; 0 when absent; None when it is not one (a server's error: counted as
    0, with a note). The one rule of the judge client and of the journal's fold."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not value.is_integer():  # also inf and nan
            return None
        value = int(value)
    return value if 0 <= value <= MAX_TOKENS else None


def _tokens(value: object, name: str, notes: list[str]) -> int:
    count = token_count(value)
    if count is None:
        notes.append(f"{name} {_shown(value)} is not a whole number from 0 to {MAX_TOKENS:,}: "
                     "stored as 0")
        return 0
    return count


def storable_answer(answer: ModelAnswer) -> tuple[ModelAnswer, list[str]]:
    """``answer`` as the store can keep it, and what was changed: ids by
    :func:`irbench.ids.id_text`; lone surrogates in its text escaped; a token count outside
    0..MAX_TOKENS (or not a number) stored as 0; a relevance that is not a whole number of the
    INTEGER range stored as none (the answer text is kept); seconds that are not a finite
    number >= 0 as 0; a request count that is not a whole number >= 1 as unknown. A
    :class:`StoreValueError` if it has no model, request, judge or ids (text or, for ids, text
    or bytes), or an endpoint that is not text: such an answer cannot be keyed."""
    notes: list[str] = []
    for name in _KEYS + ("query_id", "doc_id"):
        value = getattr(answer, name)
        if not isinstance(value, str) and not (name.endswith("_id")
                                                and isinstance(value, bytes)):
            raise StoreValueError(f"its {name} {_shown(value)} is not text")
    endpoint = answer.endpoint
    if endpoint is not None:
        if not isinstance(endpoint, str):
            raise StoreValueError(f"its endpoint {_shown(endpoint)} is not text")
        endpoint = storable_text(endpoint)
    requests = answer.requests
    if requests is not None and (isinstance(requests, bool) or not isinstance(requests, int)
                                 or not 1 <= requests <= MAX_RELEVANCE):
        notes.append(f"requests {_shown(requests)} is not a whole number >= 1: stored as "
                     "unknown")
        requests = None
    keys = {name: storable_text(getattr(answer, name)) for name in _KEYS}
    query_id, doc_id = id_text(answer.query_id), id_text(answer.doc_id)
    if any(keys[n] != getattr(answer, n) for n in _KEYS) or (query_id, doc_id) != (
            answer.query_id, answer.doc_id):
        notes.append("lone surrogates or bytes not UTF-8 in its ids, model or judge: "
                     "escaped")
    text = answer.answer
    if not isinstance(text, str):
        notes.append(f"its answer {_shown(text)} is not text: stored as its JSON text")
        text = json.dumps(text, default=repr)
    elif (escaped := storable_text(text)) != text:
        notes.append("lone surrogates in the answer (not UTF-8): stored as \\uXXXX escapes")
        text = escaped
    relevance = answer.relevance
    if relevance is not None and (isinstance(relevance, bool) or not isinstance(relevance, int)
                                  or not MIN_RELEVANCE <= relevance <= MAX_RELEVANCE):
        notes.append(f"relevance {_shown(relevance)} is not a whole number: stored without a "
                     "grade (the answer is kept)")
        relevance = None
    seconds = answer.seconds
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not math.isfinite(seconds) or seconds < 0:
        notes.append(f"seconds {_shown(seconds)} is not a finite number >= 0: stored as 0")
        seconds = 0.0
    return ModelAnswer(model=keys["model"], prompt_sha256=keys["prompt_sha256"],
                       judge=keys["judge"], query_id=query_id, doc_id=doc_id, answer=text,
                       relevance=relevance,
                       prompt_tokens=_tokens(answer.prompt_tokens, "prompt_tokens", notes),
                       completion_tokens=_tokens(answer.completion_tokens, "completion_tokens",
                                                 notes),
                       seconds=float(seconds), endpoint=endpoint, requests=requests,
                       **_unit(answer, notes)), notes


def _unit(answer: ModelAnswer, notes: list[str]) -> dict[str, Any]:
    """The answer-task fields and sample of ``answer`` as the store keeps them (text escaped,
    a position not a whole number >= 0 as none); a :class:`StoreValueError` for a task,
    sentence or run that is not text, a sample not a whole number."""
    out: dict[str, Any] = {"sample": answer.sample}
    if answer.sample is not None and not isinstance(answer.sample, int):
        raise StoreValueError(f"its sample {_shown(answer.sample)} is not a whole number")
    for name in ("task", "sentence", "run_id"):
        value = getattr(answer, name)
        if value is not None and not isinstance(value, str):
            raise StoreValueError(f"its {name} {_shown(value)} is not text")
        out[name] = None if value is None else storable_text(value)
    position = answer.position
    if position is not None and (isinstance(position, bool) or not isinstance(position, int)
                                 or not 0 <= position <= MAX_RELEVANCE):
        notes.append(f"position {_shown(position)} is not a whole number >= 0: stored as none")
        position = None
    out["position"] = position
    return out


def _label_of(a: ModelAnswer, pool: str) -> Judgment | AnswerLabel | None:
    """A storable answer's label: a judgment, an answer task's label, or None (no grade)."""
    if a.relevance is None:
        return None
    if a.task not in (None, "relevance"):
        return AnswerLabel(task=str(a.task), query_id=a.query_id, sentence_text=a.sentence,
                           reference=a.doc_id, run_id=a.run_id, sentence=a.position,
                           label=a.relevance, judge=a.judge, judge_kind="model", pool=pool,
                           source=f"model:{a.model}", model=a.model,
                           prompt_sha256=a.prompt_sha256, answer=a.answer)
    return Judgment(pool=pool, query_id=a.query_id, doc_id=a.doc_id, relevance=a.relevance,
                    judge=a.judge, judge_kind="model", source=f"model:{a.model}",
                    model=a.model, prompt_sha256=a.prompt_sha256, answer=a.answer)


class Judging(AnswerLabels):
    """Judgments with their judges, model answers, usage (mixed into Store); the labels of
    generated answers (:class:`AnswerLabels`) that a model judge's answers give."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def record_judgments(self, rows: Sequence[Judgment] | JudgmentColumns, *,
                         once_per: Sequence[str] = (), new_batch: bool = False) -> int:
        """Record ``rows`` (:class:`Judgment` records, or :class:`JudgmentColumns`) in the
        order given (one statement: the caller's transaction, if one is open, makes it part
        of a larger commit), each judged now(). ``once_per``: the columns that identify a
        judgment already made (:data:`FROM_FILE`, :data:`ONE_ANSWER`): a row whose values in
        them equal those of a stored row, or of an earlier row given, is not recorded; empty,
        every row is (the browser's clicks). ``new_batch``: each row in the next batch of its
        pool (a file's labels), not its own ``batch``. Returns how many were recorded. The
        only writer of ``judgments``: array columns are read as a registered table, a column
        with one value for all rows as a parameter."""
        if unknown := [name for name in once_per if name not in WRITTEN]:
            raise ValueError(f"not columns of judgments: {unknown}")
        columns = _columns(rows)
        if not len(columns):
            return 0
        table: dict[str, np.ndarray] = {}
        selected, params = [], list[Any]()
        for name in WRITTEN:
            sql_type = _SQL_TYPES.get(name, "VARCHAR")
            value = getattr(columns, name)
            if isinstance(value, np.ndarray):
                table[name] = value.astype(object) if value.dtype.kind in "US" else value
                selected.append(f"CAST(r.{name} AS {sql_type}) AS {name}")
            else:
                selected.append(f"?::{sql_type} AS {name}")
                params.append(value.item() if isinstance(value, np.generic) else value)
        given = f"SELECT r.i, {', '.join(selected)} FROM "
        if table:
            table["i"] = np.arange(len(columns))
            given += f"{_GIVEN} r"
        else:  # every column one value: no table to register
            given += "range(?) r(i)"
            params.append(len(columns))
        if once_per:  # the first row given with each key
            given += (f" QUALIFY row_number() OVER (PARTITION BY {', '.join(once_per)} "
                      "ORDER BY r.i) = 1")
        if new_batch:  # the pool's batches so far + 1 (1 for a pool without any)
            given = ("SELECT g.* REPLACE (coalesce(b.next, 1) AS batch) FROM "
                     f"({given}) g LEFT JOIN (SELECT pool, max(batch) + 1 AS next FROM "
                     "judgments GROUP BY pool) b ON b.pool = g.pool")
        where = " AND ".join(f"j.{name} = n.{name}" for name in once_per)
        if where:
            where = f"WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE {where}) "
        names = ", ".join(WRITTEN)
        row = self._with_table(_GIVEN, table, (
            f"INSERT INTO judgments ({names}, judged_at) SELECT {names}, now() "
            f"FROM ({given}) n {where}ORDER BY n.i"), params)
        return int(row[0])

    def _with_table(self, name: str, table: dict[str, np.ndarray], sql: str,
                    params: list) -> Any:
        """The first row of ``sql`` reading the numpy columns ``table`` (none: nothing
        registered) as the table ``name``."""
        if not table:
            return self.con.execute(sql, params).fetchall()[0]
        with self.transaction():  # BEGIN first: DuckDB registers on a finished result only
            self.con.register(name, table)
            with _registered(self.con, name):  # fetched to the end: likewise to unregister
                return self.con.execute(sql, params).fetchall()[0]

    def record_judged(self, rows: Sequence[Judgment] | JudgmentColumns) -> int:
        """Record labels read from a file (an assessor's file judged into a pool, a qrels
        file imported) as the next batch of their pool; a (pool, topic, document) their
        judge already labelled from the same source is not recorded again. Ids, pool,
        source and judge as :func:`irbench.ids.id_text` gives them, relevance a whole
        number. Returns how many were new."""
        return self.record_judgments(_from_file(_columns(rows)), once_per=FROM_FILE,
                                     new_batch=True)

    def replace_judged(self, rows: Sequence[Judgment] | JudgmentColumns
                       ) -> tuple[int, int, int, int]:
        """Make ``rows`` (labels of one judge from one source, for one pool) the labels that
        judge has from that source (a qrels file imported again, corrected): a label that
        changed replaces the one stored, a pair the file no longer has is removed, one it
        adds is recorded (:meth:`record_judged`), in one transaction. Returns (new,
        replaced, unchanged, removed)."""
        columns = _from_file(_columns(rows))
        if not len(columns):
            return 0, 0, 0, 0
        mine = []
        for name in ("pool", "source", "judge"):
            value = getattr(columns, name)
            if isinstance(value, np.ndarray):
                if not (value == value[0]).all():
                    raise ValueError(f"replace_judged: rows of one {name}")
                value = value[0]
            mine.append(value)
        labels = {"q": columns.query_id, "d": columns.doc_id, "r": columns.relevance}
        labels = {k: v if isinstance(v, np.ndarray) else np.full(len(columns), v, dtype=object)
                  for k, v in labels.items()}
        given = (f"SELECT DISTINCT ON (q, d) * FROM (SELECT CAST(q AS VARCHAR) AS q, "
                 f"CAST(d AS VARCHAR) AS d, CAST(r AS INTEGER) AS r FROM {_LABELS})")
        with self.transaction():  # BEGIN first: DuckDB registers on a finished result only
            self.con.register(_LABELS, labels)
            with _registered(self.con, _LABELS):
                row = self.con.execute(
                    f"WITH n AS ({given}), o AS (SELECT DISTINCT ON (query_id, doc_id) "
                    "query_id AS q, doc_id AS d, relevance AS r FROM judgments WHERE pool = ? "
                    "AND source = ? AND judge = ? ORDER BY query_id, doc_id, judged_at DESC) "
                    "SELECT count(*) FILTER (WHERE o.q IS NULL), count(*) FILTER (WHERE n.q IS "
                    "NOT NULL AND o.q IS NOT NULL AND n.r IS DISTINCT FROM o.r), count(*) "
                    "FILTER (WHERE n.r = o.r), count(*) FILTER (WHERE n.q IS NULL) "
                    "FROM n FULL JOIN o ON n.q = o.q AND n.d = o.d", mine).fetchall()[0]
                if row[1] or row[3]:
                    self.con.execute(
                        "DELETE FROM judgments j WHERE pool = ? AND source = ? AND judge = ? "
                        f"AND NOT EXISTS (SELECT 1 FROM ({given}) n WHERE n.q = j.query_id "
                        "AND n.d = j.doc_id AND n.r = j.relevance)", mine)
            self.record_judged(columns)
        return int(row[0]), int(row[1]), int(row[2]), int(row[3])

    def remember_judge(self, name: str, kind: str, model: str, base_url: str,
                       settings: str) -> None:
        """What a judge is (its settings as JSON, never its key), kept beside its labels."""
        self.con.execute(
            "INSERT INTO judges VALUES (?, ?, ?, ?, ?, now()) ON CONFLICT (name) DO UPDATE SET "
            "kind = excluded.kind, model = excluded.model, base_url = excluded.base_url, "
            "settings = excluded.settings, updated_at = now()",
            [name, kind, model, base_url, settings])

    def cached_answers(self, model: str, endpoint: str, keys: Sequence[tuple[str, str, str]],
                       *, endpoints: Sequence[str] = (), judges: Sequence[str] = ()
                       ) -> dict[tuple[str, str, str], tuple[int | None, str, str]]:
        """{(request sha256, topic, document): (parsed relevance or None, answer, endpoint)}
        of the ``keys`` this model has answered already at ``endpoint`` (a base_url), or, when
        the judge's config allows it, at one of ``endpoints`` or to one of ``judges`` (the
        judge that first got the answer; answers of an endpoint the store does not know are
        reusable so only). An answer of ``endpoint`` itself is taken first, else the earliest."""
        if not keys:
            return {}
        asked = {(storable_text(s), id_text(q), id_text(d)): (s, q, d) for s, q, d in keys}
        s, q, d = (list(column) for column in zip(*asked))
        rows = self.con.execute(
            "SELECT a.prompt_sha256, a.query_id, a.doc_id, a.relevance, a.answer, a.endpoint "
            "FROM model_answers a "
            "JOIN (SELECT unnest(?::VARCHAR[]) AS s, unnest(?::VARCHAR[]) AS q, "
            "unnest(?::VARCHAR[]) AS d) k ON a.prompt_sha256 = k.s AND a.query_id = k.q "
            "AND a.doc_id = k.d WHERE a.model = ? AND (a.endpoint = ? OR list_contains(?, "
            "a.endpoint) OR list_contains(?, a.judge)) QUALIFY row_number() OVER (PARTITION "
            "BY a.prompt_sha256, a.query_id, a.doc_id ORDER BY a.endpoint = ? DESC, "
            "a.answered_at, a.endpoint) = 1",
            [s, q, d, model, endpoint, list(endpoints), list(judges), endpoint]).fetchall()
        return {asked[(r[0], r[1], r[2])]: (r[3], r[4], r[5]) for r in rows
                if (r[0], r[1], r[2]) in asked}

    def save_answers(self, answers: Sequence[ModelAnswer], pool: str = "") -> list[str]:
        """Keep ``answers`` (an answer already kept is kept once) and record each parsed one
        but a sample's (:meth:`record_votes`) as its judge's label (once per judge, request
        and unit), in one transaction. An answer without an endpoint (a journal line of an
        earlier irbench) is kept as its judge's (the base_url the judges table holds for it),
        else as :data:`UNKNOWN_ENDPOINT`. An answer of the judge's own endpoint replaces the
        judge's label taken from another endpoint's answer (:meth:`_give_way`). Each answer
        is first made storable (:func:`storable_answer`); returns what was changed, one line
        per answer changed. A :class:`StoreValueError` (rolled back) if one still cannot be
        stored: the caller may then save them one by one."""
        if not answers:
            return []
        columns: dict[str, list] = {name: [] for name in (
            "model", "endpoint", "prompt_sha256", "query_id", "doc_id", "judge", "answer",
            "relevance", "prompt_tokens", "completion_tokens", "seconds", "requests")}
        changed: list[str] = []
        judgments: list[Judgment] = []  # of the answers parsed
        labels: list[AnswerLabel] = []  # of the answers of an answer task, parsed
        pool = id_text(pool)
        for given in answers:
            a, notes = storable_answer(given)
            if notes:
                changed.append(f"topic {a.query_id} document {a.doc_id} (judge {a.judge}): "
                               + "; ".join(notes))
            for name, values in columns.items():
                values.append(getattr(a, name))
            made = None if a.sample is not None else _label_of(a, pool)  # samples: a vote
            if isinstance(made, AnswerLabel):
                labels.append(made)
            elif made is not None:
                judgments.append(made)
        table = {name: np.array(values, dtype=object) for name, values in columns.items()}
        with self.transaction():  # BEGIN first: DuckDB registers on a finished result only
            self.con.register("irbench_answers", table)
            try:
                self.con.execute(
                    "INSERT INTO model_answers (model, endpoint, prompt_sha256, query_id, "
                    "doc_id, judge, answer, relevance, prompt_tokens, completion_tokens, "
                    "seconds, answered_at, requests) SELECT a.model, coalesce(nullif(CAST("
                    "a.endpoint AS VARCHAR), ''), nullif(j.base_url, ''), ?), "
                    "a.prompt_sha256, a.query_id, a.doc_id, a.judge, a.answer, "
                    "CAST(a.relevance AS INTEGER), CAST(a.prompt_tokens AS BIGINT), "
                    "CAST(a.completion_tokens AS BIGINT), CAST(a.seconds AS DOUBLE), now(), "
                    "CAST(a.requests AS INTEGER) "
                    "FROM irbench_answers a LEFT JOIN judges j ON j.name = a.judge "
                    "ON CONFLICT DO NOTHING", [UNKNOWN_ENDPOINT])
                self._give_way(judgments)
            finally:
                self.con.unregister("irbench_answers")
            self.record_judgments(judgments, once_per=ONE_ANSWER)
            self.record_answer_labels(labels, once_per=ONE_MODEL_LABEL)
        return changed

    def record_votes(self, votes: Sequence[ModelAnswer], pool: str = "") -> int:
        """Record each vote of a request's samples (keyed by the vote's sha256, its
        ``answer`` the samples' note: :func:`irbench.judges.judging.record_votes`) as its
        judge's label, once per judge, vote and unit (not in ``model_answers``)."""
        made = [_label_of(storable_answer(v)[0], id_text(pool)) for v in votes]
        with self.transaction():
            return self.record_judgments(
                [m for m in made if isinstance(m, Judgment)], once_per=ONE_ANSWER
            ) + self.record_answer_labels([m for m in made if isinstance(m, AnswerLabel)],
                                          once_per=ONE_MODEL_LABEL)

    def _give_way(self, judgments: list[Judgment]) -> int:
        """Remove the judgments the answers given (registered as ``irbench_answers``, just
        stored) replace: a judge's model judgment of a request whose answer differs from the
        one the store keeps for the judge's own endpoint (its known base_url in ``judges``),
        when the answer given is that one: the label came from another endpoint's answer
        (``reuse_answers_from`` since dropped; an earlier irbench caching by model name alone;
        the judge's former server). Each of ``judgments`` (the answers' labels, in order) that
        replaces one takes its pool, in place (suggestions for that pool keep coming from this
        judge). An own answer without a grade removes the borrowed label. Returns how many."""
        rows = self.con.execute(
            "DELETE FROM judgments j USING irbench_answers a, judges g, model_answers m "
            "WHERE g.name = a.judge AND nullif(g.base_url, '') IS NOT NULL "
            "AND coalesce(nullif(CAST(a.endpoint AS VARCHAR), ''), g.base_url) = g.base_url "
            "AND m.model = a.model AND m.endpoint = g.base_url "
            "AND m.prompt_sha256 = a.prompt_sha256 AND m.query_id = a.query_id "
            "AND m.doc_id = a.doc_id AND m.answer = a.answer "
            "AND j.judge_kind = 'model' AND j.judge = a.judge AND j.model = a.model "
            "AND j.prompt_sha256 = a.prompt_sha256 AND j.query_id = a.query_id "
            "AND j.doc_id = a.doc_id AND j.answer IS DISTINCT FROM m.answer "
            "RETURNING j.judge, j.prompt_sha256, j.query_id, j.doc_id, j.pool").fetchall()
        pools = {tuple(r[:4]): r[4] for r in rows}
        for i, made in enumerate(judgments):
            key = (made.judge, made.prompt_sha256, made.query_id, made.doc_id)
            if key in pools and pools[key] != made.pool:
                judgments[i] = replace(made, pool=pools[key])
        return len(rows)

    def judgment_columns(self, pool: str | None = None, judges: Sequence[str] = ()
                         ) -> dict[str, np.ndarray]:
        """Every judgment (of ``pool``, of ``judges``; None/empty: all) as columns query_id,
        doc_id, relevance, judge, judge_kind and order (0, 1, ... in the order recorded),
        sorted by topic, document, judge and order."""
        where, params = ["relevance IS NOT NULL"], list[Any]()
        if pool is not None:
            where.append("pool = ?")
            params.append(pool)
        if judges:
            where.append("list_contains(?, judge)")
            params.append(list(judges))
        frame = self.con.execute(
            "SELECT query_id, doc_id, relevance, judge, judge_kind, "
            "row_number() OVER (ORDER BY judged_at, rowid) - 1 AS position FROM judgments "
            f"WHERE {' AND '.join(where)} ORDER BY query_id, doc_id, judge, position",
            params).fetchnumpy()
        return {name: np.asarray(frame[name]) for name in
                ("query_id", "doc_id", "relevance", "judge", "judge_kind", "position")}

    def judge_usage(self, judge: str) -> tuple[int, int]:
        """(calls, tokens) answered for ``judge`` so far: what its budget has spent."""
        row = self.con.execute("SELECT count(*), coalesce(sum(prompt_tokens + "
                               "completion_tokens), 0) FROM model_answers WHERE judge = ?",
                               [judge]).fetchone()
        return int(row[0]), int(row[1])

    def judge_counts(self) -> list[tuple]:
        """(judge, kind, model, judgments (labels of generated answers too), topics, model
        calls (answers it got), HTTP requests of those calls (retries included; of the calls
        whose count is known), calls whose request count is not known (stored before irbench
        counted them), prompt tokens, completion tokens, unparsed answers, samples of each
        request (a model judge of the judges table; None otherwise)) per judge, by name."""
        return self.con.execute(
            "WITH j AS (SELECT judge, any_value(judge_kind) AS kind, any_value(model) AS model, "
            "count(*) AS n, count(DISTINCT query_id) AS topics FROM (SELECT judge, "
            "judge_kind, model, query_id FROM judgments UNION ALL SELECT judge, judge_kind, "
            "model, query_id FROM answer_labels) GROUP BY judge), "
            "a AS (SELECT judge, count(*) AS calls, sum(requests) AS http, "
            "count(*) FILTER (WHERE requests IS NULL) AS unknown, sum(prompt_tokens) AS pt, "
            "sum(completion_tokens) AS ct, count(*) FILTER (WHERE relevance IS NULL) AS bad "
            "FROM model_answers GROUP BY judge) "
            "SELECT coalesce(j.judge, a.judge), coalesce(j.kind, 'model'), j.model, "
            "coalesce(j.n, 0), coalesce(j.topics, 0), coalesce(a.calls, 0), "
            "coalesce(a.http, 0), coalesce(a.unknown, 0), coalesce(a.pt, 0), "
            "coalesce(a.ct, 0), coalesce(a.bad, 0), CASE WHEN g.kind = 'model' THEN coalesce("
            "CASE WHEN json_valid(g.settings) THEN try_cast(json_extract(g.settings, "
            "'$.samples') AS INTEGER) END, 1) END FROM j FULL JOIN a ON j.judge = a.judge "
            "LEFT JOIN judges g ON g.name = coalesce(j.judge, a.judge) ORDER BY 1").fetchall()

    def record_qrels_made(self, sha256: str, path: str, rule: str, judges: Sequence[str]
                          ) -> None:
        """Remember that the qrels file with this content was written from ``judges``'
        judgments by ``rule``: a qrels set of the config with this sha256 then knows who
        judged it (their kinds and models)."""
        self.con.execute(
            "INSERT OR REPLACE INTO qrels_made SELECT ?, ?, ?, list_sort(?::VARCHAR[]), "
            f"(SELECT list(DISTINCT judge_kind ORDER BY judge_kind) FROM {_LABELLED} "
            "WHERE list_contains(?, judge)), (SELECT coalesce(list(DISTINCT model ORDER BY "
            f"model) FILTER (WHERE model IS NOT NULL), []) FROM {_LABELLED} "
            "WHERE list_contains(?, judge)), now()",
            [sha256, path, rule, list(judges), list(judges), list(judges)])

    def qrels_judges(self) -> dict[str, tuple[list[str], list[str], list[str]]]:
        """{qrels set name: (judges, their kinds, their models)} for the sets whose file was
        written by ``irbench qrels`` from this store."""
        rows = self.con.execute(
            "SELECT s.name, m.judges, m.kinds, m.models FROM qrels_sets s "
            "JOIN qrels_made m ON s.sha256 = m.sha256 ORDER BY s.name").fetchall()
        return {r[0]: (list(r[1]), list(r[2]), list(r[3])) for r in rows}

    def system_descriptions(self) -> dict[str, str]:
        """{system: its metadata and ir_metadata (JSON texts) and description, lower case}:
        what the report searches for a judge's model."""
        rows = self.con.execute(
            "SELECT name, lower(concat_ws(' ', metadata, ir_metadata, description)) "
            "FROM systems ORDER BY name").fetchall()
        return {r[0]: r[1] or "" for r in rows}

    def pool_documents(self, pool: str) -> tuple[list[str], list[str]] | None:
        """(topics, documents) of a built pool (``irbench pool build --name``), or None."""
        if self.con.execute("SELECT count(*) FROM pool_builds WHERE pool = ?",
                            [pool]).fetchone()[0] == 0:
            return None
        rows = self.con.execute("SELECT query_id, doc_id FROM pool_docs WHERE pool = ? "
                                "ORDER BY query_id, position, doc_id", [pool]).fetchall()
        return [r[0] for r in rows], [r[1] for r in rows]
