"""Support judgments of generated answers: whether each cited segment supports its sentence.

Two files are read, both into one :class:`SupportLabels` (one row per judged citation):

- **NIST's JSONL**, as the TREC RAG track releases it: one JSON object per (topic, run),
  ``{"topic_id", "run_id", "sentences": [{"text", "citations": [{"reference", "support"}]}]}``
  (the layout of issue 39; the judging scripts behind it are described by Thakur et al.,
  "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus LLM Judges",
  SIGIR 2025, arXiv:2504.15205). What real files hold and irbench takes:

  * ``support`` as a number (2, 1, 0, -1, or 2.0 ...) or a string: ``"2"``, ``"full"``,
    ``"Full Support"``, ``"full_support"``, ``"FS"``, ``"partial"``, ``"PS"``, ``"no
    support"``, ``"NS"``, ... (the organisers' GPT-4o script writes FS / PS / NS, its
    prompt the words "Full Support", "Partial Support", "No Support"; open_rag_eval writes
    full_support / partial_support / no_support). ``null``, an empty string and JSON's
    ``NaN`` read as -1 (not judged), each with a warning;
  * a sentence ``text`` that is JSON's ``NaN`` literal (a data frame's missing value written
    out): read as no text (None), with a warning; Python's ``json`` reads the literal, so the
    line is not lost;
  * a sentence id under ``sentenceID``, ``sentenceId`` or ``sentence_id``: the sentence's
    index is its position in ``sentences`` (answers are in order), the id is checked against
    it (a warning when it is neither the position nor the position + 1), and a file that
    spells the key two ways gets a warning at the first line of the second spelling;
  * ``reference``: a segment id, kept whole (MS MARCO v2.1 ids hold ``#``), or an index
    into the object's ``references`` list.

- **A flat TSV**, ``topic run sentence citation reference label`` (tab- or space-separated,
  ``sentence`` and ``citation`` 0-based positions, ``label`` as above without spaces); a
  line starting with ``#`` is a comment (an id with ``#`` inside is kept whole), a first line
  naming the columns is a header.

Every problem is collected as ``FILE:LINE: reason`` (up to 20 shown) and raised as one
:class:`~irbench.errors.FormatError`; oddities that still read are ``warnings`` of the result,
as ``FILE:LINE: ...`` strings. Reads are bounded: the file by :func:`irbench.trec.read_source`
(gzip within a ratio), a line's bytes, the sentences of an answer, the citations of a
sentence, the rows of a file and an id's bytes.

The rows are keyed ``(topic, run, sentence index, reference)``, which is how they join an
answer run's citations (:class:`PreparedSupport`); ``by_text=True`` keys them ``(topic,
sentence text, reference)`` instead, so that one judgment of a sentence and a segment serves
every run that wrote the same sentence citing the same segment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import EvaluationError
from ..measures.answers import NOT_JUDGED
from ..trec import MAX_ID_BYTES, Problems, read_source, shown

MAX_LINE_BYTES = 64 << 20  # one JSON line (one topic of one run); longer is an error
MAX_SENTENCES = 10_000  # sentences of one answer
MAX_CITATIONS = 1_000  # citations of one sentence
MAX_ROWS = 50_000_000  # judged citations in one file
SENTENCE_ID_KEYS = ("sentenceID", "sentenceId", "sentence_id")


class JsonConstant(str):
    """``NaN``, ``Infinity`` or ``-Infinity`` as JSON text holds it (Python's ``json`` reads
    these literals; the readers keep them apart from numbers to say where they were)."""


def json_objects(path: str, data: bytes, problems: Problems,
                 max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank JSON line of ``data``; a line too long, not
    JSON, nested too deep or not an object is a problem (collected), never a traceback."""
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        if len(raw) > max_line_bytes:
            problems.add(line_no, f"line of {len(raw):,} bytes (at most {max_line_bytes:,})")
            continue
        try:
            value = json.loads(raw, parse_constant=JsonConstant)
        except RecursionError:
            problems.add(line_no, "JSON nested too deep")
            continue
        except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
            problems.add(line_no, f"not JSON ({str(exc)[:200]})")
            continue
        if not isinstance(value, dict):
            problems.add(line_no, f"expected a JSON object, got {type(value).__name__}")
            continue
        yield line_no, value


_WHITESPACE = re.compile(r"\s")


def id_value(value: object, what: str) -> tuple[str | None, str | None]:
    """``(id, None)`` for a usable id (a string, or an integer written as one), else
    ``(None, reason)``: ids are kept whole, so one with whitespace or over MAX_ID_BYTES bytes
    is refused."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None, f"{what} is {type(value).__name__}, not a string"
    text = str(value)
    if not text:
        return None, f"{what} is empty"
    if len(text) > MAX_ID_BYTES // 4:  # may be over the bytes allowed: count them
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_ID_BYTES:
            return None, f"{what} of {size:,} bytes (at most {MAX_ID_BYTES})"
    if _WHITESPACE.search(text):  # str.isspace's characters, searched in C
        return None, f"{what} '{shown(text.encode('utf-8', 'surrogatepass'))}' holds whitespace"
    return text, None


# ---- labels -------------------------------------------------------------------------------

_LABEL_WORDS = {
    2: ("2", "full", "full support", "fully supported", "fs", "support", "supported"),
    1: ("1", "partial", "partial support", "partially supported", "ps"),
    0: ("0", "none", "no", "no support", "not support", "not supported", "unsupported", "ns"),
    NOT_JUDGED: ("-1", "not judged", "unjudged"),
}
LABELS = {word: label for label, words in _LABEL_WORDS.items() for word in words}
_SPACES = re.compile(r"[\s_]+")


def support_label(value: object) -> tuple[int | None, str | None, str | None]:
    """``(label, warning, error)`` of a support value as files write it: 2 full, 1 partial,
    0 none, -1 not judged (see the module docstring for the spellings)."""
    if value is None or isinstance(value, JsonConstant) or value == "":
        return NOT_JUDGED, f"support {_shown(value)} read as not judged (-1)", None
    if isinstance(value, bool):
        return None, None, f"support {_shown(value)} is not a label"
    if isinstance(value, (int, float)):
        if value in (2, 1, 0, -1):
            return int(value), None, None
        return None, None, f"support {_shown(value)} is not 2, 1, 0 or -1"
    if isinstance(value, str) and len(value) <= 64:
        label = LABELS.get(_SPACES.sub(" ", value.strip().lower()))
        if label is None and re.fullmatch(r"[+-]?\d+(\.0*)?", value.strip()):
            label = LABELS.get(str(int(float(value))))
        if label is not None:
            return label, None, None
    return None, None, (f"support {_shown(value)} is not a label (2, 1, 0, -1, full, "
                        "partial, none, ...)")


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, JsonConstant):
        return str(value)
    return shown(json.dumps(value).encode())


# ---- the records --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class SupportLabels:
    """Support labels as columns, one row per judged citation, in file order.

    ``topic_id``: bytes (as an answer run's ``topics``); ``run_id`` and ``reference``: object
    arrays of str, whole; ``sentence``: the sentence's 0-based index in the answer;
    ``citation``: the citation's 0-based position in the sentence; ``label``: int8 (2, 1, 0,
    -1); ``text``: object array, the sentence's text (None when the file gives none, or NaN);
    ``line``: each row's line. ``judge``: who gave the labels (a person or a model), when
    said. ``judged_topics``: every topic the file names, also one whose answers cite nothing
    (it is evaluated: a run's answer to it scores 0). ``warnings``: ``FILE:LINE: ...``
    oddities that still read."""

    name: str
    topic_id: np.ndarray
    run_id: np.ndarray
    sentence: np.ndarray
    citation: np.ndarray
    reference: np.ndarray
    label: np.ndarray
    text: np.ndarray
    line: np.ndarray
    path: str | None = None
    judge: str | None = None
    warnings: tuple[str, ...] = ()
    judged_topics: np.ndarray | None = None  # bytes, sorted: every topic the file judges

    def __len__(self) -> int:
        return len(self.label)

    @property
    def runs(self) -> list[str]:
        """The run ids, in order of first appearance."""
        return list(dict.fromkeys(self.run_id.tolist()))


class _Rows:
    """The rows being read, with the (topic, run, sentence, reference) keys seen so far: a
    key judged twice with two labels is an error (same label: one row kept)."""

    def __init__(self, problems: Problems, warnings: Problems):
        self.problems, self.warnings = problems, warnings
        self.rows: list[tuple] = []  # (topic, run, sentence, reference, citation, label,
        #                               text, line), one tuple a row: columns at the end
        self.seen: dict[tuple, int] = {}  # key -> its row
        self.topics: set[str] = set()  # every topic named, judged citations or not

    def add(self, key: tuple[str, str, int, str], citation: int, label: int, text,
            line: int) -> None:
        first = self.seen.get(key)
        if first is not None:
            row = self.rows[first]
            if row[5] != label:
                self.problems.add(line, f"reference '{key[3]}' of sentence {key[2]} judged "
                                  f"{label} here and {row[5]} at line {row[7]}")
            return
        if len(self.rows) >= MAX_ROWS:
            self.problems.add(line, f"more than {MAX_ROWS:,} judged citations")
            return
        self.seen[key] = len(self.rows)
        self.topics.add(key[0])
        self.rows.append((*key, citation, label, text, line))

    def labels(self, path: str, name: str | None, judge: str | None) -> SupportLabels:
        if not self.problems and not self.seen:
            self.problems.add(1, "no support judgments")
        self.problems.raise_if_any()
        columns = tuple(map(list, zip(*self.rows))) if self.rows else ([],) * 8
        self.rows, self.seen = [], {}
        topic, run, sentence, reference, citation, label, text, line = columns
        return SupportLabels(
            name=name or os.path.basename(path),
            topic_id=np.array([t.encode("utf-8", "surrogatepass") for t in topic],
                              dtype=np.bytes_),
            run_id=object_array(run), sentence=np.array(sentence, dtype=np.int64),
            citation=np.array(citation, dtype=np.int64), reference=object_array(reference),
            label=np.array(label, dtype=np.int8), text=object_array(text),
            line=np.array(line, dtype=np.int64), path=path, judge=judge,
            warnings=warning_lines(self.warnings),
            judged_topics=np.array(sorted(t.encode("utf-8", "surrogatepass")
                                          for t in self.topics), dtype=np.bytes_)
            if self.topics else np.zeros(0, dtype="S1"))


def object_array(values: list) -> np.ndarray:
    """``values`` as a 1-d object array (strings kept as they are, None kept)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def warning_lines(warnings: Problems) -> tuple[str, ...]:
    """The collected warnings as ``FILE:LINE: ...`` lines, and how many more there were."""
    more = (f"... and {warnings.more} more warnings",) if warnings.more else ()
    return tuple(warnings.shown) + more


# ---- NIST's JSONL ---------------------------------------------------------------------------


def read_support(source, name: str | None = None, *, judge: str | None = None
                 ) -> SupportLabels:
    """Read support judgments: NIST's JSONL when the first non-blank byte is ``{``, else the
    flat TSV (see the module docstring). ``source``: a path (``.gz`` read), ``-``, a file
    object or a :class:`~irbench.trec.Loaded`."""
    path, data = read_source(source)
    head = data.lstrip()[:1]
    read = _read_jsonl if head == b"{" else _read_tsv
    return read(path, data, name, judge)


def _read_jsonl(path: str, data: bytes, name: str | None, judge: str | None) -> SupportLabels:
    problems, warnings = Problems(path), Problems(path)
    rows = _Rows(problems, warnings)
    answers: dict[tuple[str, str], int] = {}
    spellings: set[str] = set()
    for line_no, obj in json_objects(path, data, problems):
        topic, why = id_value(obj.get("topic_id"), "topic_id")
        run, why_run = id_value(obj.get("run_id"), "run_id")
        sentences = obj.get("sentences")
        reason = why or why_run or _list_problem(sentences, "sentences", MAX_SENTENCES)
        if reason is not None or topic is None or run is None:
            problems.add(line_no, reason or "no topic_id or run_id")
            continue
        if (topic, run) in answers:
            problems.add(line_no, f"topic '{topic}' of run '{run}' again (first at line "
                         f"{answers[topic, run]})")
            continue
        answers[topic, run] = line_no
        rows.topics.add(topic)
        references = obj.get("references")
        for index, sentence in enumerate(sentences or ()):
            _read_sentence(sentence, index, (topic, run, references, line_no), rows,
                           spellings)
    return rows.labels(path, name, judge)


def _list_problem(value: object, what: str, limit: int) -> str | None:
    if not isinstance(value, list):
        return f"no '{what}' list" if value is None else f"'{what}' is not a list"
    if len(value) > limit:
        return f"{len(value):,} {what} (at most {limit:,})"
    return None


def _read_sentence(sentence: object, index: int, where: tuple, rows: _Rows,
                   spellings: set[str]) -> None:
    topic, run, references, line = where
    problems, warnings = rows.problems, rows.warnings
    if not isinstance(sentence, dict):
        problems.add(line, f"sentence {index} is not a JSON object")
        return
    text = sentence.get("text")
    if isinstance(text, JsonConstant):
        warnings.add(line, f"sentence {index}: text is {text} (read as no text)")
        text = None
    elif text is not None and not isinstance(text, str):
        problems.add(line, f"sentence {index}: text is {type(text).__name__}, not a string")
        return
    _check_sentence_id(sentence, index, line, warnings, spellings)
    citations = sentence.get("citations", [])
    reason = _list_problem(citations, "citations", MAX_CITATIONS)
    if reason is not None:
        problems.add(line, f"sentence {index}: {reason}")
        return
    for position, citation in enumerate(citations):
        if not isinstance(citation, dict):
            problems.add(line, f"sentence {index} citation {position} is not a JSON object")
            continue
        reference, why = _reference(citation.get("reference"), references)
        label, warning, error = support_label(citation.get("support"))
        if why or error or reference is None or label is None:
            problems.add(line, f"sentence {index} citation {position}: {why or error}")
            continue
        if warning:
            warnings.add(line, f"sentence {index} citation {position}: {warning}")
        rows.add((topic, run, index, reference), position, label, text, line)


def _check_sentence_id(sentence: dict, index: int, line: int, warnings: Problems,
                       spellings: set[str]) -> None:
    """Warn once at the first line of a second spelling of the sentence id key, and where
    the id is neither the position nor the position + 1."""
    for key in SENTENCE_ID_KEYS:
        if key not in sentence:
            continue
        if key not in spellings:
            if spellings:
                warnings.add(line, f"sentence id key spelled '{key}' here, "
                             f"'{sorted(spellings)[0]}' before")
            spellings.add(key)
        value = sentence[key]
        number = value if isinstance(value, int) and not isinstance(value, bool) else (
            int(value) if isinstance(value, str) and value.strip().isdigit() else None)
        if number is None or number not in (index, index + 1):
            warnings.add(line, f"sentence {index}: {key} {_shown(value)} is not its position "
                         "(the position is used)")


def _reference(value: object, references: object) -> tuple[str | None, str | None]:
    """The reference a citation names: a segment id, or an index into ``references``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not isinstance(references, list):
            return None, f"reference {value} is an index but the line has no references list"
        if not 0 <= value < len(references):
            return None, f"reference {value} is outside the {len(references)} references"
        value = references[value]
    return id_value(value, "reference")


# ---- the flat TSV ---------------------------------------------------------------------------

TSV_COLUMNS = ("topic", "run", "sentence", "citation", "reference", "label")


def _read_tsv(path: str, data: bytes, name: str | None, judge: str | None) -> SupportLabels:
    problems, warnings = Problems(path), Problems(path)
    rows = _Rows(problems, warnings)
    header_allowed = True
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        if len(raw) > MAX_LINE_BYTES:
            problems.add(line_no, f"line of {len(raw):,} bytes (at most {MAX_LINE_BYTES:,})")
            continue
        text = raw.decode("utf-8", "surrogateescape")
        if not text.strip() or text.startswith("#"):
            continue
        fields = [f.strip() for f in text.split("\t")] if "\t" in text else text.split()
        if header_allowed and tuple(f.lower() for f in fields) == TSV_COLUMNS:
            header_allowed = False
            continue
        header_allowed = False
        _tsv_row(fields, line_no, rows)
    return rows.labels(path, name, judge)


def _tsv_row(fields: list[str], line: int, rows: _Rows) -> None:
    if len(fields) != len(TSV_COLUMNS):
        rows.problems.add(line, f"expected {len(TSV_COLUMNS)} columns ({' '.join(TSV_COLUMNS)})"
                          f", got {len(fields)}")
        return
    topic, run, sentence, citation, reference, value = fields
    ids = [id_value(v, what) for v, what in ((topic, "topic"), (run, "run"),
                                             (reference, "reference"))]
    reason = next((why for _, why in ids if why), None)
    positions = [int(v) if v.isascii() and v.isdigit() and len(v) < 10 else None
                 for v in (sentence, citation)]
    label, warning, error = support_label(value)
    if reason is None and None in positions:
        reason = "sentence and citation are positions (0, 1, 2 ...)"
    if reason or error or label is None or positions[0] is None or positions[1] is None:
        rows.problems.add(line, reason or error or "no label")
        return
    if warning:
        rows.warnings.add(line, warning)
    rows.add((topic, run, positions[0], reference), positions[1], label, None, line)


# ---- joining an answer run ----------------------------------------------------------------


class PreparedSupport:
    """Support labels ready to give each citation of an answer run its label.

    :meth:`labels_for` takes an answer run's columns (``run_id``, ``topics``,
    ``sentence_topic``, ``citation_offsets``, ``citation_ref`` and, with ``by_text``,
    ``sentence_text``: the attributes of ``irbench.answers.AnswerColumns``) and returns the
    int8 label of each citation, -1 where no judgment matches. Ids and texts are interned
    once in dicts (exact: nothing is hashed into numbers); a run's join is then a sort and a
    binary search over integer keys.

    ``by_text=True`` keys the labels by (topic, sentence text, reference) over every run:
    a sentence a run shares with another, citing the same segment, takes that judgment; two
    judgments of one key that disagree are an :class:`EvaluationError` naming their lines.
    Sentences without text are not keyed.
    """

    def __init__(self, labels: SupportLabels, *, by_text: bool = False):
        self.labels = labels
        self.by_text = by_text
        self.codes = {ref: i for i, ref in enumerate(dict.fromkeys(labels.reference.tolist()))}
        self.ref_code = _codes(labels.reference.tolist(), self.codes)
        self.groups: dict[str | None, np.ndarray]
        if by_text:
            pairs = list(zip(labels.topic_id.tolist(), labels.text.tolist()))
            self.sentences = {p: i for i, p in enumerate(dict.fromkeys(
                p for p in pairs if p[1] is not None))}
            self.sentence_key = _codes(pairs, self.sentences)
            rows = np.flatnonzero(self.sentence_key >= 0)
            self.groups = {None: _agreeing(labels, rows, self.sentence_key[rows],
                                           self.ref_code[rows])}
        else:
            self.groups = {run: rows for run, rows in group_rows(labels.run_id).items()}

    def labels_for(self, answer) -> np.ndarray:
        """The int8 support label of each of ``answer``'s citations (-1: no judgment)."""
        offsets = np.asarray(answer.citation_offsets, dtype=np.int64)
        refs = list(answer.citation_ref)
        out = np.full(len(refs), NOT_JUDGED, dtype=np.int8)
        rows = self.groups.get(None if self.by_text else answer.run_id)
        if rows is None or len(rows) == 0 or len(refs) == 0:
            return out
        if self.by_text:
            label_key = self.sentence_key[rows]
            topics = np.asarray(answer.topics)[np.asarray(answer.sentence_topic)]
            sentence_key = _codes(list(zip(topics.tolist(), list(answer.sentence_text))),
                                  self.sentences)
        else:
            rows, label_key = self._sentence_rows(answer, rows)
            sentence_key = np.arange(len(offsets) - 1)
        width = len(self.codes) + 1
        keys = label_key * width + self.ref_code[rows]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        counts = np.diff(offsets)
        wanted_sentence = np.repeat(sentence_key, counts)
        wanted = wanted_sentence * width + _codes(refs, self.codes, missing=len(self.codes))
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        hit = (keys[at] == wanted) & (wanted_sentence >= 0) if len(keys) else \
            np.zeros(len(wanted), dtype=bool)
        out[hit] = self.labels.label[rows[order[at[hit]]]]
        return out

    def _sentence_rows(self, answer, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``answer``'s topics and sentences, and each one's sentence index in
        the answer's columns (topic by topic, in answer order)."""
        topics = np.asarray(answer.topics)
        sentence_topic = np.asarray(answer.sentence_topic, dtype=np.int64)
        topic_id = self.labels.topic_id[rows]
        ti = np.minimum(np.searchsorted(topics, topic_id), max(len(topics) - 1, 0))
        known = topics[ti] == topic_id if len(topics) else np.zeros(len(rows), dtype=bool)
        rows, ti = rows[known], ti[known]
        first = np.searchsorted(sentence_topic, np.arange(len(topics)))
        per_topic = np.bincount(sentence_topic, minlength=len(topics))
        sentence = self.labels.sentence[rows]
        inside = sentence < per_topic[ti]
        return rows[inside], first[ti[inside]] + sentence[inside]


def group_rows(run_id: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of each run id (in file order), found with one sort."""
    runs = np.array(run_id.tolist()) if len(run_id) else np.zeros(0, dtype=str)
    order = np.argsort(runs, kind="stable")
    cut = np.flatnonzero(runs[order][1:] != runs[order][:-1]) + 1
    return {str(runs[order[s]]): order[s:e] for s, e in
            zip(np.concatenate(([0], cut)), np.append(cut, len(order))) if e > s}


def _codes(values: list, codes: dict, missing: int = -1) -> np.ndarray:
    """Each value's code in ``codes`` (``missing`` for a value it lacks)."""
    return np.fromiter((codes.get(v, missing) for v in values), dtype=np.int64,
                       count=len(values))


def _agreeing(labels: SupportLabels, rows: np.ndarray, sentence: np.ndarray,
              ref: np.ndarray) -> np.ndarray:
    """``rows`` with one row per (sentence, reference) key; EvaluationError naming the lines
    of keys judged with two labels (by two runs that wrote the same sentence)."""
    order = np.lexsort((labels.line[rows], ref, sentence))
    s, r, lab = sentence[order], ref[order], labels.label[rows[order]]
    same = (s[1:] == s[:-1]) & (r[1:] == r[:-1])
    clash = np.flatnonzero(same & (lab[1:] != lab[:-1])) + 1
    if len(clash):
        where = labels.path or f"<{labels.name}>"
        lines = labels.line[rows[order]]
        problems = [f"{where}:{int(lines[i])}: the same sentence citing "
                    f"'{labels.reference[rows[order[i]]]}' is judged {int(lab[i])} here and "
                    f"{int(lab[i - 1])} at line {int(lines[i - 1])}" for i in clash[:20]]
        raise EvaluationError("\n".join(problems) + (
            f"\n... and {len(clash) - 20} more" if len(clash) > 20 else ""))
    return rows[order[np.concatenate(([True], ~same))]]
