"""The values the documents package hands over: what a collection is (:class:`DocumentsSpec`),
one document (:class:`Document`), the error for bad or missing documents
(:class:`DocumentError`), and :class:`Problems`, which gathers an input's problems so that one
error names them all."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FormatError

FORMATS = ("auto", "trec", "jsonl")
# JSONL: the id is the first of these fields an object has, unless id_field is given
DEFAULT_ID_FIELDS = ("docid", "doc_id", "id", "_id")
# JSONL: the text is every one of these fields an object has, in this order, joined by a blank
# line, unless text_fields is given (MS MARCO v2 has title, headings, segment; Pyserini's JSONL
# has contents; BEIR has title, text)
DEFAULT_TEXT_FIELDS = ("title", "headings", "text", "contents", "body", "segment")
IRDS_PREFIX = "irds:"


class DocumentError(FormatError):
    """Documents that cannot be read (each problem with its FILE:LINE) or that are not in the
    collection (each missing docno named)."""


@dataclass(frozen=True)
class Document:
    """One document: its docno, its text (markup removed) and its title ("" if none)."""

    docno: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class DocumentsSpec:
    """Where document text comes from: files (``paths``, each TREC SGML or JSONL, plain or
    gzip) or an ir_datasets dataset (``irds``, its id, with or without ``irds:``).

    ``format``: ``auto`` (told per file from its first bytes), ``trec`` or ``jsonl``.
    ``id_field`` and ``text_fields`` apply to JSONL only; None means the defaults
    :data:`DEFAULT_ID_FIELDS` and :data:`DEFAULT_TEXT_FIELDS`."""

    paths: tuple[str, ...] = ()
    format: str = "auto"
    id_field: str | None = None
    text_fields: tuple[str, ...] | None = None
    irds: str | None = None

    def __post_init__(self) -> None:
        problems = []
        if isinstance(self.paths, str):
            problems.append("documents: paths must be a sequence of paths, not one string")
        elif bool(self.paths) == bool(self.irds):
            problems.append("documents: give either paths or irds, not both or neither")
        if self.format not in FORMATS:
            problems.append(f"documents: format {self.format!r} is not one of "
                            f"{', '.join(FORMATS)}")
        if isinstance(self.text_fields, str):
            problems.append("documents: text_fields must be a sequence of field names")
        if problems:
            raise DocumentError(problems)
        object.__setattr__(self, "paths", tuple(str(p) for p in self.paths))
        if self.text_fields is not None:
            object.__setattr__(self, "text_fields", tuple(self.text_fields))

    @property
    def irds_id(self) -> str:
        """The ir_datasets id without its ``irds:`` prefix ("" for files)."""
        name = self.irds or ""
        return name[len(IRDS_PREFIX):] if name.startswith(IRDS_PREFIX) else name


class Problems:
    """Problems found in an input, each ``FILE:LINE: reason``; the first :attr:`LIMIT` are
    kept and the rest counted, so a wholly wrong file does not fill the memory."""

    LIMIT = 1000

    def __init__(self) -> None:
        self.found: list[str] = []
        self.more = 0

    def add(self, path: str, line: int | None, reason: str) -> None:
        if len(self.found) >= self.LIMIT:
            self.more += 1
            return
        where = path if line is None else f"{path}:{line}"
        self.found.append(f"{where}: {reason}")

    def __bool__(self) -> bool:
        return bool(self.found)

    def check(self) -> None:
        """Raise the problems found so far as one DocumentError, if any."""
        if self.found:
            raise DocumentError(self.found, self.more)
