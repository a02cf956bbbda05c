"""Run files scored by worker processes (:mod:`irbench.runner.engine`) for ``irbench eval``:
many runs at once, or one big run read in parts.

:func:`evaluate_paths` gives each worker whole runs to read, rank and score
(:func:`irbench.read_run`, then :func:`~irbench.measures.compute.score_run`'s ranking and
scoring), so only the small per-topic results travel back; results come in input order. With
a single run, :func:`read_run` parses a big file in byte ranges, one per worker, and the run
is ranked and scored here.

Errors do not stop the other runs: each :class:`RunResult` carries either an evaluation or
the error its run raised, and whether that happened while reading the file (``"read"``: a
:class:`FormatError` listing the file's problems) or afterwards (``"evaluate"``: a missing
topic, a duplicate docno). A caller that must report every file's problems before any output,
as ``irbench eval`` does, can look at all results first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import trec
from ..answers import read_answers
from ..cache import SpillFolder
from ..errors import FormatError, IrbenchError
from ..measures import Measure
from ..measures.base import summarise
from ..measures.compute import (
    Evaluation,
    compute,
    score_ranked,
    summary_needs_ranking,
    topic_values,
)
from ..ranked import EvalOptions, PreparedQrels, Ranked, rank_rows, ranked_alone, ranked_of
from .engine import InProcess, Processes, worker_count

_PARALLEL_READ_BYTES = 1 << 25  # plain run files this big are read in parts by workers


@dataclass
class RunResult:
    """What became of one run file: ``evaluation`` (and ``ranked`` if asked for) or ``error``.

    ``stage`` is ``"read"`` when reading the file failed (``error`` is a :class:`FormatError`),
    ``"evaluate"`` when ranking or scoring it did, and ``""`` on success.
    """

    path: str
    evaluation: Evaluation | None = None
    ranked: Ranked | None = None
    error: IrbenchError | None = None
    stage: str = ""


def evaluate_paths(
    prepared: PreparedQrels,
    paths: Sequence[str],
    measures: Sequence[Measure],
    options: EvalOptions = EvalOptions(),
    workers: int | None = None,
    keep_ranked: bool = False,
    answers: bool = False,
) -> list[RunResult]:
    """Read, rank and score each run file in ``paths``; one :class:`RunResult` per path, in order.

    ``workers``: processes to use (default: one per CPU, at most one per run); 1, or a single
    path, evaluates in this process. ``keep_ranked`` also returns each run's :class:`Ranked`
    (needed for z-scores; it is as large as the run, so off by default). ``answers``: the
    files are answer runs (:func:`irbench.answers.read_answers`), scored by prepared answer
    judgments (support labels, nugget assignments).
    """
    paths = [os.fspath(p) for p in paths]
    prepared.adhoc.ready()  # its lookup table built here, before any worker forks
    shared = _Shared(prepared, tuple(measures), options, keep_ranked, answers)
    if len(paths) == 1 and not answers:  # read (and if it can, ranked) in parts by the workers
        done = rank_in_parts(paths[0], shared, workers)
        if done is not None:
            return [done]
        return [_evaluate(paths[0], shared, lambda path: read_run(path, workers=workers))]
    count = worker_count(workers, len(paths))
    results: dict[int, RunResult] = {}
    engine = Processes(count) if count > 1 else InProcess()
    engine.map(_evaluate_nth, list(enumerate(paths)), shared,
               lambda item, result: results.__setitem__(item[0], result))
    return [results[i] for i in range(len(paths))]


class _Shared:
    """What every run of :func:`evaluate_paths` is scored with (a plain class: see
    :mod:`irbench.runner.engine`)."""

    def __init__(self, prepared: PreparedQrels, measures: tuple[Measure, ...],
                 options: EvalOptions, keep_ranked: bool, answers: bool = False):
        self.prepared, self.measures = prepared, measures
        self.options, self.keep_ranked = options, keep_ranked
        self.answers = answers


def read_run(source, name: str | None = None, workers: int | None = None) -> trec.Run:
    """:func:`irbench.read_run`, with a big plain run file parsed in parts by worker processes.

    The file is cut at line starts into one byte range per worker; the parts' line numbers,
    problems and columns are joined as if one process had read the file. Small files, gzip
    files, stdin, file objects and in-memory data are read here as usual.
    """
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    ranges = None if path is None or path == "-" else _byte_ranges(path, workers, _line_starts)
    if path is None or ranges is None:  # an unreadable file: read_run reports it as usual
        return trec.read_run(source, name)
    parsed: dict[tuple, Any] = {}
    with _spill_folder("parts-") as folder:
        Processes(len(ranges)).map(_parse_range, ranges, folder, parsed.__setitem__)
        parts = []
        for r in ranges:
            part, files = parsed[r]
            if isinstance(part, FormatError):
                raise part
            if files:  # the columns come back through files, not the workers' pipes
                part = replace(part, columns=tuple(_loaded(f) for f in files))
            parts.append(part)
    return trec.run_of_parts(path, parts, name)


def rank_in_parts(path: str, shared: _Shared, workers: int | None) -> RunResult | None:
    """One big plain run file read, ranked and scored without its columns coming back: the
    file is cut where a topic ends into one byte range per worker, and each worker parses and
    ranks its own topics (:func:`~irbench.ranked.rank_rows`) and scores them, returning only
    their values per topic; here they are joined in topic order and summarised. For the
    measures whose summary needs the whole ranking (num_q, runid, micro averages), or when the
    ranking is kept (-Z), workers also return each row's topic and level (a few bytes a row),
    joined here (:func:`~irbench.ranked.ranked_of`) and scored. None when this does not
    apply: a small, gzip or unreadable file, judgments that rank with more than levels, or a
    run whose topics straddle the cuts (not grouped by topic) or that a worker could not rank
    (a duplicate docno: the whole-file path names its lines). A file's format problems are
    its result."""
    ranges = (_byte_ranges(path, workers, _topic_starts)
              if type(shared.prepared) is PreparedQrels else None)
    if ranges is None:
        return None
    here = () if shared.keep_ranked else tuple(
        m for m in shared.measures if not summary_needs_ranking(m))  # scored by the workers
    rows = len(here) < len(shared.measures)  # what is left needs the whole ranking here
    got: dict[tuple, Any] = {}
    with _spill_folder("ranks-") as folder:
        Processes(len(ranges)).map(_rank_range, ranges, (shared, folder, here, rows),
                                   got.__setitem__)
        answers = [got[r] for r in ranges]
        joined = trec.PartJoiner(path)
        try:
            for part, _ in answers:
                if isinstance(part, FormatError):
                    raise part
                joined.add(part)
            joined.problems.raise_if_any()
        except FormatError as exc:
            return RunResult(path, error=exc, stage="read")
        done = [ranking for _, ranking in answers]
        if any(r is not None and r.rerank for r in done) or all(r is None for r in done):
            return None
        rankings = [r.loaded() for r in done if r is not None]
    if (np.sum([r.present for r in rankings], axis=0) > 1).any():
        return None  # a topic in two parts: not grouped by topic
    run = _rowless(trec.default_name(path), trec.display(joined.runid), path)
    try:
        ranked = (ranked_of([r.rows for r in rankings], run, shared.prepared, shared.options)
                  if rows else None)
        for r in rankings:
            r.rows = None  # the parts' columns, no longer needed while scoring
        evaluation = _joined(rankings, ranked, run, shared, here)
    except IrbenchError as exc:
        return RunResult(path, error=exc, stage="evaluate")
    return RunResult(path, evaluation, ranked if shared.keep_ranked else None)


def _joined(rankings: list, ranked: Ranked | None, run: trec.Run, shared: _Shared,
            here: tuple[Measure, ...]) -> Evaluation:
    """The evaluation made of the parts' values per topic of the measures in ``here`` (in
    topic order; a topic no part holds is missing: an error, or with -c scored as trec_eval
    -c scores it) and of the others scored on the joined ``ranked``."""
    prepared, options = shared.prepared, shared.options
    whole = [m for m in shared.measures if m not in here]
    values, summaries = compute(ranked, whole) if whole and ranked is not None else ({}, {})
    present = np.logical_or.reduce([r.present for r in rankings])
    for m in here:
        kind = np.result_type(*(r.values[m] for r in rankings))
        values[m] = np.zeros(len(prepared.topics), dtype=kind)
        for r in rankings:
            values[m][r.present] = r.values[m]
    if here and not present.all():  # the missing topics' fake rows, as the whole run has
        none = (np.zeros(0, np.int64), np.zeros(0, np.int64), present)
        fill = topic_values(ranked_of([none], run, prepared, options), list(here))
        for m in here:
            values[m][~present] = fill[m][~present]
    summaries.update({m: summarise(m, values[m], None) for m in here})
    return Evaluation(run_name=run.name, runid=run.runid,
                      topics=tuple(trec.display(t) for t in prepared.topics),
                      values={m: values[m] for m in shared.measures},
                      summaries={m: summaries[m] for m in shared.measures}, options=options)


_ALIGN_BYTES = 1 << 23  # a cut looks this far for the end of a topic, else cuts at a line


def _topic_starts(fh, size: int, count: int) -> list[int]:
    """0, ``count - 1`` offsets where a topic's lines start (the first line whose topic
    differs from the line before), spread evenly over the file, and ``size``."""
    bounds = [0]
    for k in range(1, count):
        fh.seek(max(bounds[-1], k * size // count))
        fh.readline()  # to the start of the next line
        at = fh.tell()
        first = fh.readline().split(maxsplit=1)
        topic = first[0] if first else b""
        scanned = 0
        while scanned < _ALIGN_BYTES:
            start = fh.tell()
            line = fh.readline()
            if not line:
                at = size
                break
            fields = line.split(maxsplit=1)
            if fields and not fields[0].startswith(b"#") and fields[0] != topic:
                at = start
                break
            scanned += len(line)
        bounds.append(min(max(at, bounds[-1]), size))
    return bounds + [size]


class _Ranking:
    """What a worker sends back for its part: which topics it holds (``present``), and either
    their values per measure (``values``) or its rows' (topic, level, present) (``rows``, as
    arrays or ``.npy`` files in the spill folder); ``rerank``: it could not rank them alone."""

    def __init__(self, present: np.ndarray | None = None, values: dict | None = None,
                 rows: tuple | list | None = None, rerank: bool = False):
        self.present, self.values, self.rows, self.rerank = present, values, rows, rerank

    def loaded(self) -> _Ranking:
        """With its rows read from their files (each removed once loaded)."""
        if self.rows is None:
            return self
        topic, level, present = (_loaded(f) if isinstance(f, str) else f for f in self.rows)
        return _Ranking(present, self.values, (topic, level, present))


def _rank_range(item: tuple[str, int, int], context: tuple):
    """Parse and rank the whole lines in bytes ``[start, end)`` of ``path`` (a worker's part),
    score its topics for the measures ``here`` and keep its rows if ``rows_wanted``: (the
    part without its columns, its :class:`_Ranking`, or None without rows or with problems),
    or (the FormatError, None)."""
    shared, folder, here, rows_wanted = context
    path, start, end = item
    try:
        part = trec.parse_run(_range_pieces(path, start, end))
    except FormatError as exc:
        return exc, None
    except OSError as exc:
        return FormatError([f"{path}: cannot read ({exc.strerror})"]), None
    if part.columns is None or part.problems or part.nul_line is not None:
        return replace(part, columns=None), None
    q, d, score, line = part.columns
    run = trec.Run(name="", runid="", query_id=q, doc_id=d, score=score, line=line, path=path)
    part = replace(part, columns=tuple(c[:0] for c in part.columns))  # rows, none sent
    try:
        topic, level, present = rank_rows(run, shared.prepared, shared.options)
    except IrbenchError:
        return part, _Ranking(rerank=True)
    del run, q, d, score, line
    values = None
    if here:
        alone = ranked_alone(topic, level, present, _rowless(), shared.prepared,
                             shared.options)
        values = topic_values(alone, list(here))
        if not rows_wanted:
            return part, _Ranking(present, values=values)
    narrow = np.result_type(np.min_scalar_type(int(level.min(initial=0))),
                            np.min_scalar_type(int(level.max(initial=0))))
    rows = (topic, level.astype(narrow), present)
    files = None if folder is None else _saved(folder, start, rows)
    return part, _Ranking(present, values, rows if files is None else files)


def _rowless(name: str = "", runid: str = "", path: str | None = None) -> trec.Run:
    """A run without rows: what names a ranking joined from parts (its rows are elsewhere)."""
    empty = np.zeros(0, dtype="S1")
    return trec.Run(name=name, runid=runid, query_id=empty, doc_id=empty, score=np.zeros(0),
                    line=np.zeros(0, dtype=np.int64), path=path)


def _loaded(name: str) -> np.ndarray:
    """A worker's column, its file removed at once (on a tmpfs it holds memory)."""
    column = np.load(name, allow_pickle=False)
    os.unlink(name)
    return column


def _byte_ranges(path: str, workers: int | None,
                 cut: Callable[[Any, int, int], list[int]]) -> list[tuple[str, int, int]] | None:
    """(path, start, end) of one byte range per worker of a big plain file, the bounds given by
    ``cut(file, size, count)``; None for one worker, a small, gzip or unreadable file."""
    count = worker_count(workers, 1 << 30)
    if count <= 1 or path.endswith(".gz"):
        return None
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            if size < _PARALLEL_READ_BYTES or fh.read(2) == trec.GZIP_MAGIC:
                return None
            bounds = cut(fh, size, count)
    except OSError:
        return None
    return [(path, a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _spill_folder(kind: str) -> Any:
    """A temporary folder (a context manager, see :class:`irbench.cache.SpillFolder`) for the
    workers' columns; without one (no room, no temporary folder) they come through the
    pipes: ``None``."""
    return SpillFolder(kind, optional=True)


def _saved(folder: str, start: int, columns) -> list[str] | None:
    """A worker's columns saved as ``.npy`` files in ``folder``, or None (all removed) when
    there is no room: the pipe, then. Files, not the pipe: a pipe moves big arrays in small
    pieces, pickled, with several copies (seconds of system time for a 800 MB run)."""
    files: list[str] = []
    try:
        for k, column in enumerate(columns):
            files.append(os.path.join(folder, f"{start}-{k}.npy"))
            np.save(files[-1], column, allow_pickle=False)
    except OSError:
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return None
    return files


def _line_starts(fh, size: int, count: int) -> list[int]:
    """0, ``count - 1`` offsets of line starts spread evenly over the file, and ``size``."""
    bounds = [0]
    for k in range(1, count):
        fh.seek(max(bounds[-1], k * size // count))
        fh.readline()  # to the start of the next line
        bounds.append(min(fh.tell(), size))
    return bounds + [size]


def _parse_range(item: tuple[str, int, int], folder: str | None):
    """Parse the whole lines in bytes ``[start, end)`` of ``path`` (a worker's part): (the
    part without its columns, the ``.npy`` files in ``folder`` holding them: :func:`_saved`),
    or (the FormatError, None)."""
    path, start, end = item
    try:
        part = trec.parse_run(_range_pieces(path, start, end))
    except FormatError as exc:  # returned, not raised: the parent joins the parts' problems
        return exc, None
    except OSError as exc:
        return FormatError([f"{path}: cannot read ({exc.strerror})"]), None
    if part.columns is None or folder is None:
        return part, None
    files = _saved(folder, start, part.columns)
    return (part, None) if files is None else (replace(part, columns=None), files)


def _range_pieces(path: str, start: int, end: int):
    """Whole-line pieces of about ``trec.text.CHUNK`` bytes of bytes ``[start, end)`` of
    ``path``."""
    with open(path, "rb") as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            piece = fh.read(min(trec.text.CHUNK, end - pos))
            if not piece:
                return
            if not piece.endswith(b"\n") and pos + len(piece) < end:
                piece += fh.readline()  # ranges end at line starts: this stays inside
            first = pos == 0
            pos += len(piece)
            yield trec.without_bom(piece) if first else piece


def _evaluate(path: str, shared: _Shared, read=trec.read_run) -> RunResult:
    """Read, rank and score one run file (in whichever process calls this; its errors pickle
    whole: see :mod:`irbench.errors`)."""
    try:
        run = read(path)
    except FormatError as exc:
        return RunResult(path, error=exc, stage="read")
    try:
        ranked = shared.prepared.rank(run, shared.options)
        name, runid = run.name, run.runid
        del run  # the columns are not needed while scoring
        evaluation = score_ranked(ranked, shared.measures, name, runid, shared.options)
    except IrbenchError as exc:
        return RunResult(path, error=exc, stage="evaluate")
    return RunResult(path, evaluation, ranked if shared.keep_ranked else None)


def _evaluate_nth(item: tuple[int, str], shared: _Shared) -> RunResult:
    if shared.answers:
        return _evaluate(item[1], shared, read_answers)
    return _evaluate(item[1], shared)


__all__ = ["RunResult", "evaluate_paths", "rank_in_parts", "read_run"]
