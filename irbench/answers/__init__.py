"""Generated answers with citations (TREC RAG 2024 and 2025, RAGTIME, NeuCLIR reports):
reading and checking an answer run, as typed records and as columns for the measures.

Modules: ``formats.py`` (the formats as data, their registry and detection), ``lines.py``
(a file's JSON lines read as untrusted input), ``checks.py`` (one answer read by its format
and the track's rules), ``columns.py`` (:class:`AnswerColumns`, what the kernels read),
``records.py`` (a topic's answer and the run), ``reader.py`` (:func:`read_answers`).
"""

from __future__ import annotations

from .checks import MAX_CITATIONS, MAX_REFERENCES, MAX_SENTENCES  # noqa: F401
from .columns import AnswerColumns, csr_take  # noqa: F401
from .formats import (  # noqa: F401
    FORMATS,
    AnswerFormat,
    CitationForms,
    Limits,
    detect,
    format_named,
    register,
)
from .lines import MAX_LINE_BYTES, MAX_VALUES  # noqa: F401
from .reader import answer_tag, read_answers  # noqa: F401
from .records import AnswerRun, Sentence, TopicAnswer, TopicMeta  # noqa: F401
