"""A submitted run and what the campaign says of it: the record the config declares and the
store keeps (``Store.declared_systems``), shared by both without either knowing the other;
and where a system's run comes from: its *source*, one registry.

A system's ``path`` is read by the source that claims it: ``file`` (a local path) or ``url``
(``s3://``, ``gs://``, ``https://`` ... through fsspec). The sources are asked in the reverse
order of registration, so that a source registered after ``url`` for a scheme of its own
(``cmd://``, say) reads those paths and ``url`` the others. The runner
(:mod:`irbench.runner.inputs`: ``stat_of``, ``load``, ``open_stream``) and the pooling run
table (:meth:`irbench.config.Config.run_table`) read every run through :func:`source_of`.
The next kind of source is one module of functions plus one :func:`register_source` call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from .answers import read_answers
from .registry import Registry
from .trec import Loaded, Run, is_url, open_binary, read_run, read_url, url_stat

SYSTEM_KINDS = ("run", "answers")  # a ranked run; generated answers (irbench.answers)


@dataclass(frozen=True)
class System:
    """A submitted run and what the config says about it. ``kind``: ``run`` (a ranked run
    file) or ``answers`` (generated answers with citations, read by
    :func:`irbench.answers.read_answers` in ``answer_format``, None: told from the file)."""

    name: str
    path: str
    group: str = ""
    type: str = ""
    description: str = ""
    baseline: bool = False
    official: bool = True
    priority: int | None = None  # pooling order within a group: 1 first
    pooled: bool | None = None  # its top documents were judged (None: not declared)
    metadata: dict = field(default_factory=dict, hash=False, compare=False)
    kind: str = "run"
    answer_format: str | None = None
    # a system given as a command (irbench.runner.commands.CommandSpec): irbench run executes it
    # to write its run at ``path`` when its key changed (irbench.runner.produced)
    command: Any = field(default=None, hash=False, compare=False)


@dataclass(frozen=True, kw_only=True)
class RunSource:
    """Where runs of one kind come from.

    ``claims(path)``: whether this source reads ``path``. ``stat(path)``: (size, a version
    token) cheaply, without reading it: an unchanged (size, token) is not read again (the
    store's file facts); ``versioned=False`` says a token of 0 means the source gave none (then
    it is always read again). ``read(path)``: its bytes, whole. ``open(path)``: a binary
    stream of it (``read(n)`` and ``readline(n)``), for runs too big to hold. ``run(path,
    name)``: the :class:`~irbench.trec.Run` (default: :func:`~irbench.trec.read_run` of
    ``read(path)``). ``present(path)``: whether the run is there, asked when the config is
    read (a missing run is listed in ``Config.missing_runs``); None: not asked (the run tells
    when it is read). Errors: OSError (with ``strerror``) for what cannot be read,
    :class:`~irbench.errors.FormatError` for what is not a run.
    """

    name: str
    claims: Callable[[str], bool]
    stat: Callable[[str], tuple[int, int]]
    read: Callable[[str], bytes]
    open: Callable[[str], AbstractContextManager[Any]]
    read_run: Callable[[str, str], Run] | None = None
    versioned: bool = True
    present: Callable[[str], bool] | None = None

    def run(self, path: str, name: str) -> Run:
        """The run at ``path``, called ``name``."""
        if self.read_run is not None:
            return self.read_run(path, name)
        return read_run(Loaded(path, self.read(path)), name=name)


SOURCES: Registry[RunSource] = Registry("run source")


def register_source(source: RunSource) -> RunSource:
    """Add a source of runs; a second source of the same name is a bug (ValueError)."""
    return SOURCES.add(source)


def source_of(path: str) -> RunSource:
    """The source that reads ``path``: the last registered that claims it."""
    for source in reversed(SOURCES.values()):
        if source.claims(path):
            return source
    raise ValueError(f"no run source reads {path!r} (sources: {', '.join(SOURCES)})")


def read_system_run(system: System) -> Run:
    """The run of ``system``, read through its source; of an answer run, its references as a
    ranked run (what pools and the report's analyses of documents take of it)."""
    source = source_of(system.path)
    if system.kind == "answers":
        return run_of(system, Loaded(system.path, source.read(system.path)))
    return source.run(system.path, system.name)


def run_of(system: System, data: Loaded) -> Run:
    """The ranked run in ``data``, the file of ``system`` read already: the file itself, or
    an answer run's references as a ranking."""
    if system.kind == "answers":
        from .answers.scored import references_run  # answer runs only

        answers = read_answers(data, format=system.answer_format, name=system.name)
        return references_run(answers, system.name)
    return read_run(data, name=system.name)


# ---- file: a local path; url: an object read through fsspec --------------------------------


def _is_local(path: str) -> bool:
    return not is_url(path)


def _file_stat(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def _file_read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _read_run(path: str, name: str) -> Run:
    return read_run(path, name=name)  # a local file in whole-line pieces, never whole


register_source(RunSource(name="file", claims=_is_local, stat=_file_stat, read=_file_read,
                          open=open_binary, read_run=_read_run, present=os.path.isfile))
register_source(RunSource(name="url", claims=is_url, stat=url_stat, read=read_url,
                          open=open_binary, read_run=_read_run, versioned=False))
