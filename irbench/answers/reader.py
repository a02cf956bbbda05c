"""Reading an answer run: one pass over a file's JSON lines (:mod:`.lines`), each read and
checked by its format (:mod:`.checks`), gathered into columns (:mod:`.columns`).

The format is declared (``format="rag25"``) or told from the file's first JSON object
(:func:`~.formats.detect`); the track's limits are the format's unless ``limits`` is given.
Every problem of the file is collected (up to :data:`~irbench.errors.FormatError.MAX_SHOWN`
shown, the rest counted) and raised at the end as one
:class:`~irbench.errors.AnswerFormatError`; warnings ride on the :class:`~.records.AnswerRun`.
"""

from __future__ import annotations

from collections.abc import Collection, Container

from ..trec import Source, run_name
from .checks import FileRules, LineReader
from .columns import ColumnsBuilder
from .formats import FORMATS, Limits, detect, format_named
from .lines import MAX_LINE_BYTES, json_objects, numbered_lines, opened
from .problems import Problems
from .records import AnswerRun


def read_answers(source: Source, format: str | None = None, limits: Limits | None = None,
                 known_ids: Container[str] | None = None,
                 topics: Collection[str] | None = None,
                 max_line_bytes: int = MAX_LINE_BYTES, name: str | None = None) -> AnswerRun:
    """The answer run in ``source`` (a path, ``-``, a URL, a file object or a
    :class:`~irbench.trec.Loaded` file; gzip or not).

    ``format``: a name in :data:`~.formats.FORMATS`, or None to tell it from the first
    object. ``limits``: the track's rules (default: the format's). ``known_ids``: the segment
    or document ids of the collection; a reference or citation outside it is a problem.
    ``topics``: the campaign's topic ids; an answer to another topic is a problem, a topic
    with no answer a warning. ``name``: the system's name (default: the file's, as a run
    file's). Raises AnswerFormatError with every problem, each as
    ``FILE:LINE: reason``; OptionError for an unknown format name."""
    declared = format_named(format) if format is not None else None
    with opened(source) as (path, blocks):
        problems, warnings = Problems(path), Problems(path)
        rules = FileRules(problems=problems, warnings=warnings, known_ids=known_ids,
                          known_topics=topics)
        builder, metas = ColumnsBuilder(), []
        fmt = declared
        reader = None if fmt is None else LineReader(fmt, limits or fmt.limits, rules)
        for number, obj in json_objects(numbered_lines(blocks, max_line_bytes), problems,
                                        max_line_bytes):
            if reader is None:
                fmt = detect(obj)
                if fmt is None:
                    problems.add(number, _undetected(obj))
                    continue
                reader = LineReader(fmt, limits or fmt.limits, rules)
            answer = reader.read(obj, number)
            if answer is None or not rules.accept(answer, number):
                continue
            builder.add(answer.topic_id.encode("utf-8"), answer.texts, answer.words,
                        answer.citations, answer.confidence, answer.references)
            metas.append(answer.meta)
    if rules.run_id is None and not problems:
        problems.add_file("no answer in the file")
    rules.finish()
    problems.raise_if_any()
    assert fmt is not None and rules.run_id is not None  # an answer was read
    columns, extras = builder.finish(rules.run_id[0])
    return AnswerRun(path=path, format=fmt.name,
                     team=rules.team[0] if rules.team is not None else None,
                     columns=columns, meta=tuple(metas[i] for i in extras.topic_order.tolist()),
                     sentence_words=extras.sentence_words,
                     citation_confidence=extras.citation_confidence,
                     warnings=tuple(warnings.shown), warnings_more=warnings.more,
                     name=name or run_name(path))


def _undetected(obj: dict) -> str:
    keys = ", ".join(repr(k)[:40] for k in list(obj)[:8]) + (", ..." if len(obj) > 8 else "")
    known = "; ".join(f"{fmt.name}: {', '.join(fmt.signature)}" for fmt in FORMATS.values())
    return (f"cannot tell the answer format from the keys {{{keys}}} (each format's keys: "
            f"{known}); declare it with format=")


def answer_tag(source: Source, format: str | None = None) -> str:
    """The run id of the first answer of a file (a glob's ``name_from: tag``), or ''. Only
    the first JSON object is read (a line of at most :data:`MAX_LINE_BYTES`)."""
    try:
        with opened(source) as (path, blocks):
            problems = Problems(path)
            for _number, obj in json_objects(numbered_lines(blocks, MAX_LINE_BYTES), problems,
                                             MAX_LINE_BYTES):
                fmt = format_named(format) if format is not None else detect(obj)
                value: object = obj
                for key in fmt.run_id if fmt is not None else ():
                    value = value.get(key) if isinstance(value, dict) else None
                return value if isinstance(value, str) and fmt is not None else ""
    except OSError:
        return ""
    return ""
