"""The answer formats the tracks publish, as data: where each field is, how citations are
written, the track's limits. A registry, looked up by name (``format=``) or told from a file's
first JSON object (:func:`detect`).

Sources (read, not copied):

* ``rag24``, TREC RAG 2024 (castorini/ragnarok, ``src/ragnarok/scripts/rag24_validation.py``
  and ``docs/rag24.md``): one object per line and topic, ``{run_id, topic_id, topic,
  references, response_length, answer: [{text, citations}]}``; citations are indexes into
  ``references``; at most 20 references; an answer of at most 400 words, a word being what
  ``str.split`` finds in the NFKC-normalised text of each sentence.
* ``rag25``, TREC RAG 2025 (ragnarok, ``src/ragnarok/scripts/rag25_validation.py`` and
  ``docs/rag25.md``): ``{metadata: {team_id, run_id, type, narrative_id, narrative, prompt?},
  references, answer: [{text, citations}]}``; citations as indexes ("format 1") or as segment
  ids found in ``references`` ("format 2"); ``type`` automatic or manual; at most 100
  references and 400 words.
* ``ragtime``, TREC RAGTIME 2025 and the tracks sharing its validator (hltcoe/rag-run-validator,
  ``rag_run_validator/data/default.json``): ``{metadata: {team_id, run_id, topic_id},
  responses: [{text, citations}], references}``; citations a list of document ids or a
  ``{docid: confidence}`` map; length limits come with each topic (none by default here).
* ``neuclir24``, the NeuCLIR 2024 report task (NIST's run checker ``check_neuclir_report_run``
  and the track's pages, neuclir.github.io): ``{request_id, run_id, collection_ids,
  sentences: [{text, citations}]}``; citations are document ids, at most 2 per sentence; a
  report of at most 2,000 characters (NFKC).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import OptionError

Path = tuple[str, ...]  # keys from the line's object down to a field


@dataclass(frozen=True)
class Limits:
    """A track's rules on one answer; None: not checked. ``references``: length of the
    references list; ``words``/``characters``: of the whole answer (NFKC, words split at
    whitespace, as the tracks' checkers count); ``citations_per_sentence``."""

    references: int | None = None
    words: int | None = None
    characters: int | None = None
    citations_per_sentence: int | None = None


@dataclass(frozen=True)
class CitationForms:
    """How a format writes a sentence's citations: ``indexes`` (integers into the
    references list), ``ids`` (a list of segment or document ids), ``maps`` (an object of id
    to confidence). ``in_references``: a cited id must be in the references list (else a
    citation outside it is only a warning)."""

    indexes: bool = False
    ids: bool = False
    maps: bool = False
    in_references: bool = False


@dataclass(frozen=True)
class AnswerFormat:
    """One format: ``signature`` (top-level keys its objects have) and ``absent`` (keys they
    never have) tell it from the others; the paths say where each field is. ``required``:
    paths besides run id, topic, sentences and references a line must have; ``recommended``:
    paths whose absence is a warning."""

    name: str
    summary: str
    signature: tuple[str, ...]
    run_id: Path
    topic_id: Path
    sentences: Path
    references: Path | None
    citations: CitationForms
    limits: Limits
    absent: tuple[str, ...] = ()
    topic_text: Path | None = None
    team: Path | None = None
    run_type: Path | None = None
    run_types: frozenset[str] | None = None
    declared_words: Path | None = None
    extra: tuple[tuple[str, Path], ...] = ()
    required: tuple[Path, ...] = ()
    recommended: tuple[Path, ...] = field(default=())

    def matches(self, obj: dict) -> bool:
        return (all(key in obj for key in self.signature)
                and not any(key in obj for key in self.absent))


FORMATS: dict[str, AnswerFormat] = {}


def register(fmt: AnswerFormat) -> AnswerFormat:
    """Add ``fmt`` to :data:`FORMATS`; ValueError for a name already there."""
    if fmt.name in FORMATS:
        raise ValueError(f"answer format {fmt.name!r} registered twice")
    FORMATS[fmt.name] = fmt
    return fmt


def format_named(name: str) -> AnswerFormat:
    """The format called ``name``; OptionError naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise OptionError(f"unknown answer format {name!r} (known: "
                          f"{', '.join(sorted(FORMATS))})") from None


def detect(obj: dict) -> AnswerFormat | None:
    """The one format whose signature ``obj`` has, or None (none, or more than one)."""
    found = [fmt for fmt in FORMATS.values() if fmt.matches(obj)]
    return found[0] if len(found) == 1 else None


def path_text(path: Path) -> str:
    """``metadata.run_id`` for ('metadata', 'run_id')."""
    return ".".join(path)


register(AnswerFormat(
    name="rag24", summary="TREC RAG 2024: citations are indexes into references",
    signature=("topic_id", "answer"), absent=("metadata",),
    run_id=("run_id",), topic_id=("topic_id",), sentences=("answer",),
    references=("references",), citations=CitationForms(indexes=True),
    limits=Limits(references=20, words=400), topic_text=("topic",),
    declared_words=("response_length",), recommended=(("topic",), ("response_length",))))

register(AnswerFormat(
    name="rag25", summary="TREC RAG 2025: citations as indexes (format 1) or segment ids "
                          "(format 2), metadata in an object",
    signature=("metadata", "answer"),
    run_id=("metadata", "run_id"), topic_id=("metadata", "narrative_id"),
    sentences=("answer",), references=("references",),
    citations=CitationForms(indexes=True, ids=True, in_references=True),
    limits=Limits(references=100, words=400), topic_text=("metadata", "narrative"),
    team=("metadata", "team_id"), run_type=("metadata", "type"),
    run_types=frozenset({"automatic", "manual"}), extra=(("prompt", ("metadata", "prompt")),),
    required=(("metadata", "team_id"),),
    recommended=(("metadata", "type"), ("metadata", "narrative"))))

register(AnswerFormat(
    name="ragtime", summary="TREC RAGTIME 2025 (hltcoe's rag-run-validator): citations as "
                            "document ids or {docid: confidence} maps",
    signature=("metadata", "responses"),
    run_id=("metadata", "run_id"), topic_id=("metadata", "topic_id"),
    sentences=("responses",), references=("references",),
    citations=CitationForms(ids=True, maps=True), limits=Limits(),
    team=("metadata", "team_id"), required=(("metadata", "team_id"),)))

register(AnswerFormat(
    name="neuclir24", summary="NeuCLIR 2024 report generation: citations as document ids, "
                              "no references list",
    signature=("request_id", "sentences"),
    run_id=("run_id",), topic_id=("request_id",), sentences=("sentences",), references=None,
    citations=CitationForms(ids=True), limits=Limits(characters=2000, citations_per_sentence=2),
    extra=(("collection_ids", ("collection_ids",)),), required=(("collection_ids",),)))
