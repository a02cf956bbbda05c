"""One answer (a JSON line) read by its format and checked against the track's rules, and
the rules across the lines of a file (one run id, each topic once, known topics).

Every problem names the field, as the format writes it (``answer[2].citations[0]: index 20
outside the 20 references``). A line with a problem adds nothing to the run; the reading goes
on to collect the problems of every line. Beyond the track's :class:`~.formats.Limits`, a line
is bounded in what it may hold (:data:`MAX_SENTENCES`, :data:`MAX_CITATIONS`,
:data:`MAX_REFERENCES`, ids of at most :data:`~irbench.trec.MAX_ID_BYTES` bytes): more is a
problem, not a slow or huge run.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Collection, Container
from dataclasses import dataclass, field

from ..ids import id_text
from ..trec import MAX_ID_BYTES
from .formats import AnswerFormat, Limits, Path, path_text
from .lines import JSON_TYPES
from .problems import Problems
from .records import TopicMeta

MAX_SENTENCES = 10_000  # sentences in one answer at most
MAX_CITATIONS = 1_000  # citations of one sentence at most
MAX_REFERENCES = 10_000  # references of one answer at most
SHOWN = 80  # characters of an id or value quoted in a message

MISSING = object()
_SPACE_OR_NUL = re.compile(r"[\s\x00]")  # \s: what str.isspace finds


@dataclass
class Answer:
    """One topic's answer as read from its line, citations resolved to ids."""

    topic_id: str
    run_id: str
    texts: list[str]
    words: list[int]
    citations: list[list[str]]
    confidence: list[float]
    references: list[str]
    meta: TopicMeta


@dataclass
class FileRules:
    """The rules across one file's lines, and what they remember: the run id and team of the
    first answer, the line of each topic, which citation form (index or id) came first."""

    problems: Problems
    warnings: Problems
    known_ids: Container[str] | None = None
    known_topics: Collection[str] | None = None
    run_id: tuple[str, int] | None = None
    team: tuple[str, int] | None = None
    topic_lines: dict[str, int] = field(default_factory=dict)
    forms: dict[str, int] = field(default_factory=dict)

    def accept(self, answer: Answer, number: int) -> bool:
        """Whether ``answer`` (from line ``number``) may join the run: one run id per file,
        each topic once, a known topic when the topics are given."""
        ok = True
        if self.run_id is None:
            self.run_id = (answer.run_id, number)
        elif answer.run_id != self.run_id[0]:
            self.problems.add(number, f"run id {_q(answer.run_id)}, but {_q(self.run_id[0])} "
                                      f"on line {self.run_id[1]} (one run per file)")
            ok = False
        team = answer.meta.team
        if team is not None and self.team is None:
            self.team = (team, number)
        elif team is not None and self.team is not None and team != self.team[0]:
            self.warnings.add(number, f"team {_q(team)}, but {_q(self.team[0])} on line "
                                      f"{self.team[1]}")
        first = self.topic_lines.get(answer.topic_id)
        if first is not None:
            self.problems.add(number, f"topic {_q(answer.topic_id)} answered again (first on "
                                      f"line {first})")
            return False
        if self.known_topics is not None and answer.topic_id not in self.known_topics:
            self.problems.add(number, f"unknown topic {_q(answer.topic_id)}")
            return False
        if ok:
            self.topic_lines[answer.topic_id] = number
        return ok

    def finish(self) -> None:
        """Warnings for the known topics no line answered."""
        if self.known_topics is None:
            return
        for topic in sorted(set(self.known_topics) - set(self.topic_lines)):
            self.warnings.add_file(f"no answer for topic {_q(topic)}")


def _q(value: object) -> str:
    """A value quoted for a message, cut at :data:`SHOWN` characters."""
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= SHOWN else f"{text[:SHOWN]}..."
    if len(value) > SHOWN:
        value = f"{value[:SHOWN]}... ({len(value):,} characters)"
    return repr(value)


def _get(obj: dict, path: Path) -> object:
    value: object = obj
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def _kind(value: object) -> str:
    return JSON_TYPES.get(type(value), type(value).__name__)


def id_problem(value: object, integers: bool = False) -> str | None:
    """Why ``value`` is not an id (a non-empty string of at most MAX_ID_BYTES bytes with no
    white space or NUL; an integer too when ``integers``), or None."""
    if integers and isinstance(value, int) and not isinstance(value, bool):
        return None
    if not isinstance(value, str):
        return f"{_kind(value)}, not an id"
    if not value:
        return "an empty id"
    if len(value) > MAX_ID_BYTES or len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        return f"an id longer than {MAX_ID_BYTES:,} bytes"
    if _SPACE_OR_NUL.search(value):
        return f"{_q(value)}: an id holds no white space or NUL"
    return None


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate (JSON's ``\\ud800``) as U+FFFD: the store keeps
    UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


class LineReader:
    """Reads one line's object by ``fmt``: its problems go to ``problems`` (then the line adds
    nothing), its oddities to ``warnings``."""

    def __init__(self, fmt: AnswerFormat, limits: Limits, rules: FileRules):
        self.fmt, self.limits, self.rules = fmt, limits, rules

    def read(self, obj: dict, number: int) -> Answer | None:
        fmt = self.fmt
        self.number, self.bad = number, False
        missing = [path for path in (fmt.run_id, fmt.topic_id, fmt.sentences, fmt.references,
                                     *fmt.required)
                   if path is not None and _get(obj, path) is MISSING]
        if missing:
            self.error("missing " + ", ".join(path_text(p) for p in missing))
            return None
        for path in fmt.recommended:
            if _get(obj, path) is MISSING:
                self.rules.warnings.add(number, f"no {path_text(path)}")
        run_id = self._id(obj, fmt.run_id)
        topic_id = self._id(obj, fmt.topic_id, integers=True)
        references = self._references(obj)
        sentences = self._sentences(obj, references)
        meta = self._meta(obj)
        if self.bad or run_id is None or topic_id is None or sentences is None:
            return None
        texts, words, citations, confidence = sentences
        self._lengths(obj, texts, words, citations)
        self._known(references, citations)
        if self.bad:
            return None
        ranked = list(dict.fromkeys(references))  # a repeated reference: its first place
        return Answer(topic_id=topic_id, run_id=run_id, texts=texts, words=words,
                      citations=citations, confidence=confidence, references=ranked,
                      meta=meta)

    def error(self, reason: str) -> None:
        self.rules.problems.add(self.number, reason)
        self.bad = True

    def warn(self, reason: str) -> None:
        self.rules.warnings.add(self.number, reason)

    def _id(self, obj: dict, path: Path, integers: bool = False) -> str | None:
        value = _get(obj, path)
        problem = id_problem(value, integers)
        if problem is not None:
            self.error(f"{path_text(path)}: {problem}")
            return None
        return id_text(str(value))

    def _references(self, obj: dict) -> list[str]:
        path = self.fmt.references
        if path is None:
            return []
        name = path_text(path)
        value = _get(obj, path)
        if not isinstance(value, list):
            self.error(f"{name}: {_kind(value)}, not an array of ids")
            return []
        if len(value) > MAX_REFERENCES:
            self.error(f"{name}: {len(value):,} references, more than irbench reads "
                       f"({MAX_REFERENCES:,})")
            return []
        limit = self.limits.references
        if limit is not None and len(value) > limit:
            self.error(f"{name}: {len(value)} references, more than the track's {limit}")
        out: list[str] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(value):
            problem = id_problem(item)
            if problem is not None:
                self.error(f"{name}[{i}]: {problem}")
                continue
            ref = id_text(item)
            if ref in seen:
                self.warn(f"{name}[{i}]: {_q(ref)} listed again (first at {name}[{seen[ref]}]):"
                          " ranked at its first place only")
            else:
                seen[ref] = i
            out.append(ref)
        return out

    def _sentences(self, obj: dict, references: list[str]):
        path = self.fmt.sentences
        name = path_text(path)
        value = _get(obj, path)
        if not isinstance(value, list):
            self.error(f"{name}: {_kind(value)}, not an array of sentences")
            return None
        if len(value) > MAX_SENTENCES:
            self.error(f"{name}: {len(value):,} sentences, more than irbench reads "
                       f"({MAX_SENTENCES:,})")
            return None
        if not value:
            self.warn(f"{name}: an empty answer")
        texts: list[str] = []
        words: list[int] = []
        citations: list[list[str]] = []
        confidence: list[float] = []
        in_references = set(references)
        for i, sentence in enumerate(value):
            where = f"{name}[{i}]"
            if not isinstance(sentence, dict):
                self.error(f"{where}: {_kind(sentence)}, not an object with text and citations")
                continue
            text = sentence.get("text", MISSING)
            if not isinstance(text, str):
                self.error(f"{where}.text: " + ("missing" if text is MISSING else
                                                f"{_kind(text)}, not a string"))
                text = ""
            cited = self._citations(sentence, where, references, in_references)
            if cited is None:
                continue
            text = clean_text(text)
            texts.append(text)
            words.append(len(unicodedata.normalize("NFKC", text).split()))
            citations.append(cited[0])
            confidence += cited[1]
        return texts, words, citations, confidence

    def _citations(self, sentence: dict, where: str, references: list[str],
                   in_references: set[str]) -> tuple[list[str], list[float]] | None:
        value = sentence.get("citations", MISSING)
        if type(value) is list:
            plain = self._plain(value, where, references, in_references)
            if plain is not None:
                return plain, [math.nan] * len(plain)
        forms = self.fmt.citations
        if isinstance(value, dict) and forms.maps:
            items = list(value.items())
        elif isinstance(value, list):
            items = [(item, None) for item in value]
        else:
            wanted = "an array" + (" or an object of id to confidence" if forms.maps else "")
            self.error(f"{where}.citations: " + ("missing" if value is MISSING else
                                                 f"{_kind(value)}, not {wanted}"))
            return None
        if len(items) > MAX_CITATIONS:
            self.error(f"{where}.citations: {len(items):,} citations, more than irbench reads "
                       f"({MAX_CITATIONS:,})")
            return None
        limit = self.limits.citations_per_sentence
        if limit is not None and len(items) > limit:
            self.error(f"{where}.citations: {len(items)} citations, more than the track's "
                       f"{limit} per sentence")
        ids: list[str] = []
        confidence: list[float] = []
        for j, (item, score) in enumerate(items):
            ref = self._citation(item, score, f"{where}.citations[{j}]", references,
                                 in_references)
            if ref is None:
                continue
            if ref in ids:
                self.warn(f"{where}.citations[{j}]: {_q(ref)} cited again in the sentence: "
                          "counted once")
                continue
            ids.append(ref)
            confidence.append(math.nan if score is None else float(score))
        return ids, confidence

    def _plain(self, value: list, where: str, references: list[str],
               in_references: set[str]) -> list[str] | None:
        """The ids a list of citations cites when it needs no message (each citation valid,
        none repeated, within the limits), else None (:meth:`_citations` then finds what to
        say, citation by citation)."""
        forms, n = self.fmt.citations, len(references)
        limit = self.limits.citations_per_sentence
        if len(value) > MAX_CITATIONS or (limit is not None and len(value) > limit):
            return None
        if forms.indexes and all(type(i) is int and 0 <= i < n for i in value):
            form, cited = "indexes", [references[i] for i in value]
        elif forms.ids and all(type(i) is str for i in value):
            known = (in_references.issuperset(value) if self.fmt.references is not None
                     else all(id_problem(i) is None and id_text(i) == i for i in value))
            if not known:
                return None
            form, cited = "ids", list(value)
        else:
            return None
        if len(set(cited)) != len(cited):
            return None
        if cited and forms.indexes and forms.ids:
            self._form(form, f"{where}.citations[0]")
        return cited

    def _citation(self, item: object, score: object | None, where: str, references: list[str],
                  in_references: set[str]) -> str | None:
        forms = self.fmt.citations
        if score is not None and not (isinstance(score, (int, float))
                                      and not isinstance(score, bool) and math.isfinite(score)):
            self.error(f"{where}: confidence {_q(score)} is not a finite number")
            return None
        if isinstance(item, int) and not isinstance(item, bool) and forms.indexes:
            if forms.ids:
                self._form("indexes", where)
            if not 0 <= item < len(references):
                self.error(f"{where}: index {item} outside the {len(references)} references")
                return None
            return references[item]
        if isinstance(item, str) and forms.ids:
            problem = id_problem(item)
            if problem is not None:
                self.error(f"{where}: {problem}")
                return None
            ref = id_text(item)
            if forms.indexes:
                self._form("ids", where)
            if self.fmt.references is not None and ref not in in_references:
                reason = f"{where}: {_q(ref)} is not in references"
                if forms.in_references:
                    self.error(reason)
                else:
                    self.warn(reason)
            return ref
        wanted = " or ".join(w for w, on in (("an index", forms.indexes), ("an id", forms.ids))
                             if on)
        self.error(f"{where}: {_kind(item)}, not {wanted}")
        return None

    def _form(self, form: str, where: str) -> None:
        """A file cites by index or by id, not both (RAG 2025's format 1 or format 2)."""
        forms = self.rules.forms
        forms.setdefault(form, self.number)
        other = "ids" if form == "indexes" else "indexes"
        if other in forms:
            self.error(f"{where}: a citation as {'an index' if form == 'indexes' else 'an id'}, "
                       f"but as {other} on line {forms[other]} (one form per file)")

    def _lengths(self, obj: dict, texts: list[str], words: list[int],
                 citations: list[list[str]]) -> None:
        total = sum(words)
        limits = self.limits
        if limits.words is not None and total > limits.words:
            self.error(f"an answer of {total} words, more than the track's {limits.words}")
        if limits.characters is not None:
            chars = sum(len(unicodedata.normalize("NFKC", text)) for text in texts)
            if chars > limits.characters:
                self.error(f"an answer of {chars:,} characters, more than the track's "
                           f"{limits.characters:,}")
        path = self.fmt.declared_words
        declared = MISSING if path is None else _get(obj, path)
        if declared is not MISSING and declared != total and path is not None:
            self.warn(f"{path_text(path)} is {_q(declared)}, the answer has {total} words")

    def _known(self, references: list[str], citations: list[list[str]]) -> None:
        known = self.rules.known_ids
        if known is None:
            return
        seen = dict.fromkeys(references)
        for cited in citations:
            seen.update(dict.fromkeys(cited))
        for ref in seen:
            if ref not in known:
                self.error(f"{_q(ref)} is not in the collection")

    def _meta(self, obj: dict) -> TopicMeta:
        fmt = self.fmt
        text = self._text(obj, fmt.topic_text)
        team = self._text(obj, fmt.team)
        run_type = self._text(obj, fmt.run_type)
        if fmt.run_types is not None and run_type is not None \
                and run_type not in fmt.run_types:
            self.error(f"{path_text(fmt.run_type or ())}: {_q(run_type)}, not "
                       + " or ".join(sorted(fmt.run_types)))
        extra = {name: value for name, path in fmt.extra
                 if (value := self._text(obj, path)) is not None}
        return TopicMeta(line=self.number, topic_text=text, team=team, run_type=run_type,
                         extra=extra)

    def _text(self, obj: dict, path: Path | None) -> str | None:
        """A metadata field as text (a list of strings joined by spaces), None when absent;
        another value is a problem."""
        if path is None:
            return None
        value = _get(obj, path)
        if value is MISSING or value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return clean_text(" ".join(value))
        if isinstance(value, str):
            return clean_text(value)
        self.error(f"{path_text(path)}: {_kind(value)}, not a string")
        return None
