"""Pools of cited segments: what to send to support judging, from a campaign's answer runs.

A *unit* to judge is (topic, sentence text, cited segment): whether the segment supports the
sentence. Units are taken from each sentence's citations, ``citations="first"`` (the first
citation of each sentence: what the track's support measures read) or ``"all"`` with
``per_sentence=K`` (up to K citations of each sentence, in the order the run gave them; None:
every citation). Identical units of several runs (two runs, or two sentences of one run,
writing the same sentence text citing the same segment in one topic) are one unit: one
judgment serves them all, keyed as the ``support_shared`` judgment kind keys labels (topic,
sentence text, reference).

:func:`cited_pool` builds a :class:`CitedPool` with whole-column numpy operations: the only
Python loops are one dict lookup per pooled sentence text and per pooled citation (to give
strings exact integer codes, nothing is hashed into numbers). Every *occurrence* (a run, the
sentence's position in its answer, the citation's position in the sentence) is kept, grouped
by unit; a unit's first occurrence, in the runs' priority order, is its *owner*.

Files to send to judging (:data:`WRITERS`), never written over an existing file (it may
hold an assessor's labels):

- ``jsonl``: NIST's support JSONL, one object per (topic, run) owning a unit, with that
  answer's every sentence in order (so that positions are the answer's) and, in each, the
  citations the run owns with ``"support": null``. :func:`irbench.judgments.support.
  read_support` reads it as -1 everywhere; once filled in, a qrels set ``{path: FILE, kind:
  support_shared}`` gives every run sharing a unit its label.
- ``tsv``: the flat ``topic run sentence citation reference label`` with label -1, one row
  per occurrence (a TSV holds no sentence text, so it cannot be shared by text): a unit's rows
  are consecutive, its owner's first; give them one label and score with ``kind: support``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from ..answers import read_answers
from ..errors import AnswerFormatError, FormatError, PoolingError
from ..files import replacing
from ..ids import id_text

CITATIONS = ("first", "all")
FORMATS = ("jsonl", "tsv")
TSV_HEADER = "topic\trun\tsentence\tcitation\treference\tlabel\n"


# ---- which runs: the config's answer systems ------------------------------------------------


def answer_systems(systems: Sequence[Any], names: Sequence[str] = (),
                   per_group: int | None = None) -> list[Any]:
    """The answer systems (``kind == "answers"``) of ``systems`` that feed the pool, in the
    order given (pass the config's pooling order, :func:`irbench.config.types.
    priority_order`: by group, then priority): ``names`` (``--pooled``), else those
    declaring ``pooled: true`` when any answer system declares ``pooled``, else all; then
    each group's first ``per_group``. PoolingError for a name that is no answer system."""
    answers = [s for s in systems if s.kind == "answers"]
    if not answers:
        raise PoolingError("no answer systems in the config (a system with 'answers: FILE', "
                           "or 'kind: answers')")
    known = {s.name for s in answers}
    unknown = [n for n in names if n not in known]
    if unknown:
        import difflib  # only for a name that is no answer system

        close = sorted({c for n in unknown for c in difflib.get_close_matches(n, known, n=3)})
        raise PoolingError(f"--pooled: no answer system {', '.join(repr(n) for n in unknown)}"
                           " in the config" + (f" (did you mean {', '.join(close)}?)"
                                               if close else ""))
    declared = None if all(s.pooled is None for s in answers) else \
        {s.name for s in answers if s.pooled}
    chosen = set(names) if names else (declared if declared is not None else known)
    out, seen = [], {}  # type: list[Any], dict[str, int]
    for system in answers:
        group = system.group or system.name
        if system.name in chosen and (per_group is None or seen.get(group, 0) < per_group):
            seen[group] = seen.get(group, 0) + 1
            out.append(system)
    if not out:
        raise PoolingError("no answer system is pooled (the config declares none 'pooled: "
                           "true'; give --pooled NAME)")
    return out


def read_answer_runs(systems: Iterable[Any], missing: dict[str, str] | None = None) -> list:
    """Each system's :class:`~irbench.answers.AnswerRun` (bounded reads by
    :func:`~irbench.answers.read_answers`). Every problem of every file is collected
    (``FILE:LINE: reason``; a missing or unreadable file, two files of one run id) and raised
    at the end as one :class:`~irbench.errors.AnswerFormatError`."""
    runs, problems, more = [], [], 0
    owners: dict[str, str] = {}
    for system in systems:
        if missing and system.name in missing:
            problems.append(missing[system.name])
            continue
        try:
            run = read_answers(system.path, format=system.answer_format, name=system.name)
        except FormatError as exc:
            problems += exc.problems
            more += exc.more
            continue
        except OSError as exc:
            problems.append(f"{system.path}: cannot read ({exc.strerror or exc})")
            continue
        if run.run_id in owners:
            problems.append(f"{run.path}: run id '{run.run_id}' is also the run id of "
                            f"{owners[run.run_id]}: judgments keyed by run could not tell "
                            "them apart")
            continue
        owners[run.run_id] = run.path
        runs.append(run)
    if problems:
        raise AnswerFormatError(problems, more)
    return runs


# ---- the pool -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class CitedPool:
    """Units to judge and where each occurs, as columns.

    ``runs``: the run ids, in priority order; ``answers``: each run's
    :class:`~irbench.answers.AnswerColumns` (or anything with their attributes);
    ``topics``: the pooled topics (bytes, sorted). Units (``unit_*``, topic by topic, each
    topic's in order of first occurrence): ``unit_topic`` (index into ``topics``),
    ``unit_text``, ``unit_ref``, ``unit_runs`` (how many runs share it) and
    ``unit_offsets``, a CSR over the occurrences. Occurrences (``occ_*``, grouped by unit,
    in priority order within one): ``occ_run`` (index into ``runs``), ``occ_row`` (the
    sentence's row in the run's columns), ``occ_sentence`` (its 0-based position in the
    topic's answer), ``occ_citation`` (the citation's 0-based position in the sentence).
    Counts over the pooled topics: ``sentences``, ``cited_sentences``, ``citations`` (in the
    answers) and ``left_out`` (citations not pooled: after the first, or after K)."""

    runs: tuple[str, ...]
    answers: tuple[Any, ...]
    citations_mode: str
    per_sentence: int | None
    topics: np.ndarray
    unit_topic: np.ndarray
    unit_text: np.ndarray
    unit_ref: np.ndarray
    unit_runs: np.ndarray
    unit_offsets: np.ndarray
    occ_run: np.ndarray
    occ_row: np.ndarray
    occ_sentence: np.ndarray
    occ_citation: np.ndarray
    sentences: int
    cited_sentences: int
    citations: int
    left_out: int

    @property
    def num_units(self) -> int:
        return len(self.unit_topic)

    @property
    def num_occurrences(self) -> int:
        return len(self.occ_run)

    @property
    def saving(self) -> int:
        """Judgments saved by sharing: occurrences that another's judgment serves."""
        return self.num_occurrences - self.num_units

    def owners(self) -> np.ndarray:
        """The occurrence index of each unit's owner (its first occurrence)."""
        return self.unit_offsets[:-1]

    def per_run(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(occurrences, units owned, units no other run shares) of each run (int64)."""
        n = len(self.runs)
        occurrences = np.bincount(self.occ_run, minlength=n)
        owned = np.bincount(self.occ_run[self.owners()], minlength=n)
        alone = np.bincount(self.occ_run[self.owners()[self.unit_runs == 1]], minlength=n)
        return occurrences, owned, alone


def cited_pool(runs: Sequence[Any], citations: str = "first", per_sentence: int | None = None,
               topics: Collection[str | bytes] | None = None) -> CitedPool:
    """The pool of ``runs`` (:class:`~irbench.answers.AnswerRun`, or answer columns: an
    object with ``run_id``, ``topics``, ``sentence_topic``, ``sentence_text``,
    ``citation_offsets`` and ``citation_ref``), in priority order. ``citations``: ``first``
    or ``all`` (then ``per_sentence``: at most K of each sentence; None: every one);
    ``topics``: only these topic ids (None: every topic a run answers)."""
    if citations not in CITATIONS:
        raise PoolingError(f"citations must be {' or '.join(CITATIONS)}, not {citations!r}")
    if per_sentence is not None and (citations != "all" or per_sentence < 1):
        raise PoolingError("per_sentence is a number >= 1 of citations taken with "
                           "citations='all'")
    limit = 1 if citations == "first" else per_sentence
    answers = tuple(getattr(r, "columns", r) for r in runs)
    wanted = None if topics is None else np.array(
        [t if isinstance(t, bytes) else t.encode("utf-8", "surrogatepass") for t in topics],
        dtype=np.bytes_)
    every = [a.topics if wanted is None else a.topics[np.isin(a.topics, wanted)]
             for a in answers]
    pooled = np.unique(np.concatenate(every)) if every else np.zeros(0, dtype="S1")
    gather = _Gather(pooled, limit)
    for index, answer in enumerate(answers):
        gather.add(index, answer)
    return gather.pool(tuple(a.run_id for a in answers), answers, citations, per_sentence)


class _Gather:
    """The occurrences of every run, gathered run by run, then grouped into units."""

    def __init__(self, topics: np.ndarray, limit: int | None):
        self.topics, self.limit = topics, limit
        self.texts: dict[str, int] = {}
        self.refs: dict[str, int] = {}
        self.columns: list[tuple[np.ndarray, ...]] = []
        self.counts = np.zeros(4, dtype=np.int64)  # sentences, cited, citations, left out

    def add(self, run: int, a: Any) -> None:
        offsets = np.asarray(a.citation_offsets, dtype=np.int64)
        sentence_topic = np.asarray(a.sentence_topic, dtype=np.int64)
        at = np.searchsorted(self.topics, a.topics) if len(self.topics) else \
            np.zeros(len(a.topics), dtype=np.int64)
        inside = np.minimum(at, max(len(self.topics) - 1, 0))
        kept_topic = (self.topics[inside] == a.topics) if len(self.topics) else \
            np.zeros(len(a.topics), dtype=bool)
        kept = kept_topic[sentence_topic]
        counts = np.diff(offsets)
        first = np.concatenate(([0], np.cumsum(np.bincount(sentence_topic,
                                                           minlength=len(a.topics)))))
        position = np.arange(len(sentence_topic)) - first[sentence_topic]
        row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        citation = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], counts)
        taken = kept[row] & (citation < self.limit if self.limit is not None else True)
        self.counts += (int(kept.sum()), int((kept & (counts > 0)).sum()),
                        int(counts[kept].sum()), int((kept[row] & ~taken).sum()))
        chosen = np.flatnonzero(taken)
        rows = row[chosen]
        texts = np.asarray(a.sentence_text, dtype=object)
        unique_rows, back = np.unique(rows, return_inverse=True)
        text_code = _codes(texts[unique_rows].tolist(), self.texts)[back]
        ref_code = _codes(np.asarray(a.citation_ref, dtype=object)[chosen].tolist(), self.refs)
        self.columns.append((inside[sentence_topic[rows]], text_code, ref_code,
                             np.full(len(chosen), run, dtype=np.int64), rows, position[rows],
                             citation[chosen]))

    def pool(self, runs: tuple[str, ...], answers: tuple, mode: str,
             per_sentence: int | None) -> CitedPool:
        empty = np.zeros(0, dtype=np.int64)
        topic, text, ref, run, row, sentence, citation = (
            np.concatenate(c) for c in zip(*self.columns, [empty] * 7))
        order = np.lexsort((ref, text, topic))  # stable: ties stay in priority order
        t, x, r = topic[order], text[order], ref[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (t[1:] != t[:-1]) | (x[1:] != x[:-1]) | (r[1:] != r[:-1])
        unit_sorted = np.cumsum(new) - 1
        owner = order[new]  # each unit's first occurrence
        rank = np.lexsort((owner, topic[owner]))  # units by topic, then first occurrence
        renumber = np.empty(len(rank), dtype=np.int64)
        renumber[rank] = np.arange(len(rank))
        unit = renumber[unit_sorted]
        occ = order[np.argsort(unit, kind="stable")]
        unit_of = np.sort(unit)
        offsets = np.searchsorted(unit_of, np.arange(len(rank) + 1)).astype(np.int64)
        occ_run = run[occ]
        changed = np.ones(len(occ), dtype=bool)
        changed[1:] = (occ_run[1:] != occ_run[:-1]) | (unit_of[1:] != unit_of[:-1])
        owners = owner[rank]
        sentences, cited, total, left = (int(v) for v in self.counts)
        return CitedPool(
            runs=runs, answers=answers, citations_mode=mode, per_sentence=per_sentence,
            topics=self.topics, unit_topic=topic[owners],
            unit_text=_decode(self.texts, text[owners]), unit_ref=_decode(self.refs,
                                                                          ref[owners]),
            unit_runs=np.bincount(unit_of[changed], minlength=len(rank)).astype(np.int64),
            unit_offsets=offsets, occ_run=occ_run, occ_row=row[occ],
            occ_sentence=sentence[occ], occ_citation=citation[occ], sentences=sentences,
            cited_sentences=cited, citations=total, left_out=left)


def _codes(values: list, codes: dict) -> np.ndarray:
    """Each value's code in ``codes``, new values given the next codes."""
    return np.fromiter((codes.setdefault(v, len(codes)) for v in values), dtype=np.int64,
                       count=len(values))


def _decode(codes: dict, wanted: np.ndarray) -> np.ndarray:
    values = np.empty(len(codes), dtype=object)
    values[:] = list(codes)
    return values[wanted]


# ---- files to send to judging ---------------------------------------------------------------


def cited_format(path: str, given: str | None = None) -> str:
    """The format to write ``path`` in: ``given``, else ``tsv`` for a ``.tsv`` or ``.txt``
    name, else ``jsonl``."""
    if given is not None:
        if given not in FORMATS:
            raise PoolingError(f"format must be {' or '.join(FORMATS)}, not {given!r}")
        return given
    return "tsv" if path.lower().endswith((".tsv", ".txt")) else "jsonl"


def write_cited(pool: CitedPool, path: str, format: str = "jsonl") -> int:
    """Write the file to send to judging (never over an existing file); the number of
    citations to judge written. PoolingError when it exists or cannot be written."""
    writer = WRITERS[cited_format(path, format)]
    if os.path.lexists(path):
        raise PoolingError(f"{path}: exists already (it may hold an assessor's labels); "
                           "remove it or give another file")
    if len(pool.unit_topic) == 0:
        raise PoolingError(f"{path}: not written: the pool has no cited segment (no answer "
                           "cites anything on these topics)")
    try:  # whole or not at all: an interrupted write leaves no file
        with replacing(path, binary=True) as fh:
            return writer(pool, fh)
    except OSError as exc:
        raise PoolingError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _line(value: dict) -> bytes:
    """One JSON line, UTF-8 as it is; escaped where a text holds lone surrogates."""
    try:
        return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value) + "\n").encode("ascii")


def write_jsonl(pool: CitedPool, fh: IO[bytes]) -> int:
    """NIST's support JSONL: one object per (topic, run) owning a unit (topics in order,
    runs in priority order), every sentence of the answer, each with the citations its run
    owns, support null."""
    owners = pool.owners()
    run, row = pool.occ_run[owners], pool.occ_row[owners]
    topic = pool.unit_topic
    order = np.lexsort((pool.occ_citation[owners], row, run, topic))
    run, row, topic, refs = run[order], row[order], topic[order], pool.unit_ref[order]
    cut = np.flatnonzero((run[1:] != run[:-1]) | (topic[1:] != topic[:-1])) + 1
    for lo, hi in zip(np.concatenate(([0], cut)).tolist(),
                      np.append(cut, len(order)).tolist()):
        answer = pool.answers[int(run[lo])]
        own_topic = int(np.searchsorted(answer.topics, pool.topics[topic[lo]]))
        first, last = np.searchsorted(answer.sentence_topic, [own_topic, own_topic + 1])
        cited: dict[int, list] = {}
        for r, ref in zip(row[lo:hi].tolist(), refs[lo:hi].tolist()):
            cited.setdefault(r, []).append({"reference": ref, "support": None})
        texts = answer.sentence_text[int(first):int(last)]
        fh.write(_line({"topic_id": id_text(pool.topics[topic[lo]]),
                        "run_id": pool.runs[int(run[lo])],
                        "sentences": [{"text": text, "citations": cited.get(i, [])}
                                      for i, text in enumerate(texts, int(first))]}))
    return len(order)


def write_tsv(pool: CitedPool, fh: IO[bytes]) -> int:
    """The flat TSV, one row per occurrence, label -1; ids with whitespace (which the TSV
    cannot hold) are a PoolingError."""
    unit = np.repeat(np.arange(pool.num_units), np.diff(pool.unit_offsets))
    topics = [id_text(t) for t in pool.topics.tolist()]
    runs, refs = list(pool.runs), pool.unit_ref.tolist()
    for value in {*topics, *runs, *refs}:
        if not value or any(c.isspace() for c in value):
            raise PoolingError(f"id {value!r} holds whitespace: write the pool as jsonl")
    lines = [TSV_HEADER]
    for u, r, s, c in zip(unit.tolist(), pool.occ_run.tolist(), pool.occ_sentence.tolist(),
                          pool.occ_citation.tolist()):
        lines.append(f"{topics[pool.unit_topic[u]]}\t{runs[r]}\t{s}\t{c}\t{refs[u]}\t-1\n")
    fh.write("".join(lines).encode("utf-8", "surrogateescape"))
    return len(unit)


WRITERS = {"jsonl": write_jsonl, "tsv": write_tsv}


def cited_summary(pool: CitedPool) -> list[str]:
    """What the pool holds, as lines (the command prints them; run names are its to escape)."""
    mode = ("the first citation of each sentence" if pool.citations_mode == "first" else
            "every citation of each sentence" if pool.per_sentence is None else
            f"up to {pool.per_sentence} citation{'s' if pool.per_sentence > 1 else ''} of "
            "each sentence")
    occ, units = pool.num_occurrences, pool.num_units
    shared = int((pool.unit_runs > 1).sum())
    return [
        f"cited-segment pool of {len(pool.runs)} answer runs over {len(pool.topics)} topics "
        f"({mode}): {units} units to judge (topic, sentence, segment) for {occ} citations",
        f"shared: {shared} units written by 2 or more runs; judging each once saves "
        f"{pool.saving} judgments ({pool.saving / occ if occ else 0:.1%})",
        f"runs per unit: mean {pool.unit_runs.mean() if units else 0:.2f}, max "
        f"{int(pool.unit_runs.max()) if units else 0}; citations per unit: mean "
        f"{occ / units if units else 0:.2f}",
        f"sentences: {pool.sentences}, {pool.cited_sentences} with a citation (covered), "
        f"{pool.sentences - pool.cited_sentences} uncited",
        f"citations: {pool.citations} in the answers, {pool.citations - pool.left_out} "
        f"pooled, {pool.left_out} left out"
        + (" (after each sentence's first)" if pool.citations_mode == "first" else
           f" (after the first {pool.per_sentence} of each sentence)" if pool.per_sentence
           else ""),
    ]
