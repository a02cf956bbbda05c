"""Checking an answer run file (generated answers with citations, irbench.answers) for
``irbench validate``: the answer reader's rules as the file's problems (check ``answers``) and
its warnings (check ``answer_warning``), in the same :class:`~.problems.RunCheck` as a ranked
run's. A file whose first non-blank byte is ``{`` is an answer run (JSON lines)."""

from __future__ import annotations

import re

from ..answers import read_answers
from ..errors import FormatError, OptionError
from ..topics import Topics
from ..trec import Loaded
from .problems import Collector, RunCheck

_AT_LINE = re.compile(r":(\d+): ")


def is_answer_file(data: bytes) -> bool:
    """Whether ``data`` (a file's bytes, or its start) holds JSON lines, not TREC run lines."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def check_answers(path: str, data: bytes, out: Collector, topics: Topics | None,
                  format: str | None = None) -> RunCheck:
    """The problems and warnings of the answer run in ``data`` (the file at ``path``)."""
    known = frozenset(topics.query_id) if topics is not None else None
    try:
        answers = read_answers(Loaded(path, data), format=format, topics=known)
    except (FormatError, OptionError) as exc:
        problems = exc.problems if isinstance(exc, FormatError) else [str(exc)]
        for text in problems:
            _add(out, "answers", path, text)
        if isinstance(exc, FormatError) and exc.more:
            out.add("answers", 0, f"... and {exc.more} more problems")
        return out.result(run_tag="", lines=data.count(b"\n"))
    for text in answers.warnings:
        _add(out, "answer_warning", path, text)
    c = answers.columns
    return out.result(run_tag=answers.run_id, lines=data.count(b"\n"),
                      results=c.num_sentences, topics=c.num_topics)


def _add(out: Collector, check: str, path: str, text: str) -> None:
    """``PATH:LINE: reason`` (or ``PATH: reason``) as a problem at its line."""
    rest = text[len(path):] if text.startswith(path) else text
    match = _AT_LINE.match(rest)
    if match:
        out.add(check, int(match.group(1)), rest[match.end():])
    else:
        out.add(check, 0, rest[2:] if rest.startswith(": ") else rest)
