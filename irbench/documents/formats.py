"""Reading the documents out of collection files, each plain or gzip (told by the gzip magic
bytes, not the name), read in chunks so that a file of any size takes bounded memory.

TREC SGML: ``<DOC> ... <DOCNO> X </DOCNO> ... </DOC>``, any number of documents per file. Tags
are matched in any case, ``<DOC>`` may carry attributes, and CRLF line ends become LF. A
document's text is its content without the DOCNO element, with SGML/HTML markup removed
(``<script>``/``<style>`` elements and comments whole, the tags of inline elements such as
``<b>``, ``<a>``, ``<span>`` without a trace, other tags in a row, with the spaces after them,
replaced by one space), HTML entities decoded, runs of blank lines (lines of spaces count as
blank) collapsed to one, and the spaces at both ends removed. The first ``<HEADLINE>``,
``<TITLE>`` or ``<HEAD>`` element (an HTML head: the title inside it) gives the title as well,
its spaces collapsed; its words stay in the text too. The docno is the DOCNO element's content
stripped of whitespace. Bytes that are not UTF-8 (latin-1) become U+FFFD.

JSONL: one JSON object per line. The docno is the ``id_field``, by default the first of
:data:`~.spec.DEFAULT_ID_FIELDS` the object has; the text is the ``text_fields`` the object
has, joined by a blank line (by default those of :data:`~.spec.DEFAULT_TEXT_FIELDS`: title
first, so the title is also in the text); a ``title`` field is also the title. A list of
strings counts as its items, one per line.

``auto`` tells each file's format from its first byte that is not a space: ``<`` for TREC,
``{`` for JSONL.

Any input is read in time linear in its size (:mod:`.markup`) and in bounded memory: a
document (a ``<DOC>`` element, a JSON line) longer than :data:`MAX_DOCUMENT_BYTES` is a
problem at the line it starts on, skipped without being held; a JSON line nested deeper than
Python's recursion limit is a problem too.
"""

from __future__ import annotations

import gzip
import html
import itertools
import json
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, NamedTuple, cast

from ..ids import id_text
from .markup import TITLE_NAMES, drop_inline_tags, first_element, strip_tags
from .spec import DEFAULT_ID_FIELDS, DEFAULT_TEXT_FIELDS, DocumentsSpec, Problems

CHUNK = 16 << 20  # bytes read at a time
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"

# <DOC ...>, </DOC>, <DOCNO>, </DOCNO> in any case: group 1 "/" for a closing tag, group 2 the
# name (3 letters for DOC). A tag ends in '>': it is looked for only up to the last one, where
# each scan of [^>]* ends at a '>' (linear; past it, each "<DOC " would scan to the end)
DOC_TAG = re.compile(rb"<(/?)([Dd][Oo][Cc](?:[Nn][Oo])?)(?:\s[^>]*)?>")
BLANK_LINES = re.compile(rb"\n[ \t\f\v]*\n\s*")  # spaces between two line ends count as blank
MAX_DOCUMENT_BYTES = 128 << 20  # one document's record (a <DOC> element, a JSON line) at most
PARTIAL_TAG = 4096  # a tag cut by a chunk's end is looked for in its last bytes


class ParsedDocument(NamedTuple):
    """One document as read from its file: docno, title and text in UTF-8, and the line its
    record starts on."""

    docno: bytes
    title: bytes
    text: bytes
    line: int


@contextmanager
def opened(path: str) -> Iterator[IO[bytes]]:
    """``path`` open for reading bytes, inflated if it starts with the gzip magic bytes."""
    with open(path, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        if magic == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=raw, mode="rb") as inflated:
                yield cast(IO[bytes], inflated)
        else:
            yield raw


def detect_format(start: bytes) -> str | None:
    """``trec`` or ``jsonl`` from a file's first bytes; None if neither (or empty)."""
    first = start.removeprefix(UTF8_BOM).lstrip()[:1]
    return "trec" if first == b"<" else "jsonl" if first == b"{" else None


def read_documents(path: str, spec: DocumentsSpec,
                   problems: Problems) -> Iterator[ParsedDocument]:
    """The documents of one file, in file order; its problems go to ``problems`` (a missing
    or unreadable file, a damaged gzip stream, records that cannot be read)."""
    count = 0
    try:
        with opened(path) as stream:
            first = stream.read(CHUNK)
            fmt = spec.format if spec.format != "auto" else detect_format(first)
            if fmt is None:
                problems.add(path, None, "an empty file" if not first.strip() else
                             "cannot tell the format from the first bytes (neither '<' of "
                             "TREC SGML nor '{' of JSONL); give the format")
                return
            chunks = itertools.chain([first], iter(lambda: stream.read(CHUNK), b""))
            parse = trec_documents if fmt == "trec" else jsonl_documents
            for doc in parse(chunks, path, spec, problems):
                count += 1
                yield doc
    except FileNotFoundError:
        problems.add(path, None, "file not found")
        return
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        problems.add(path, None, f"cannot be read: {exc}")
        return
    if not count:
        problems.add(path, None, f"no documents found (read as {fmt.upper()})")


# ---- TREC SGML ------------------------------------------------------------------------------

def trec_documents(chunks: Iterable[bytes], path: str, spec: DocumentsSpec,
                   problems: Problems) -> Iterator[ParsedDocument]:
    """The ``<DOC>`` elements of a TREC SGML stream given in chunks. A document cut by a
    chunk's end is read again whole with the next chunk; one longer than
    :data:`MAX_DOCUMENT_BYTES` is a problem, and skipped up to its ``</DOC>`` (or the next
    ``<DOC>``) without being held."""
    carry, line, open_line, skipping = b"", 1, None, False
    for data in chunks:
        buf = carry + data if carry else data
        docs, cut, open_line, skipping = scan_trec(buf, line, path, problems, skipping)
        yield from docs
        if open_line is not None and len(buf) - cut > MAX_DOCUMENT_BYTES:
            problems.add(path, open_line, f"a document longer than {MAX_DOCUMENT_BYTES:,} "
                                          "bytes (its </DOC> missing?): not read")
            open_line, skipping, cut = None, True, partial_tag(buf)
        line += buf.count(b"\n", 0, cut)
        carry = buf[cut:]
    if open_line is not None:
        problems.add(path, open_line, "<DOC> not closed at the end of the file")


def scan_trec(buf: bytes, line: int, path: str, problems: Problems, skipping: bool = False
              ) -> tuple[list[ParsedDocument], int, int | None, bool]:
    """The documents closed in ``buf`` (whose first byte is on ``line``), where the next
    chunk should start reading it again, the line of a ``<DOC>`` still open there, and
    whether a document too long is still being skipped (``skipping``: ``buf`` starts inside
    one, which ends at the first ``</DOC>`` or ``<DOC>``)."""
    docs: list[ParsedDocument] = []
    counted, at = 0, line
    open_at, open_line, body = -1, 0, 0
    docno: list[re.Match[bytes]] = []  # the first <DOCNO> of the open <DOC>, its </DOCNO>
    for tag in DOC_TAG.finditer(buf, 0, buf.rfind(b">") + 1):
        start = tag.start()
        at += buf.count(b"\n", counted, start)
        counted = start
        closing, is_doc = bool(tag.group(1)), len(tag.group(2)) == 3
        if skipping:
            if not is_doc:
                continue
            skipping = False
            if closing:
                continue
        if is_doc and not closing:
            if open_at >= 0:
                problems.add(path, open_line, f"<DOC> not closed before the next <DOC> "
                                              f"(line {at})")
            open_at, open_line, body, docno = start, at, tag.end(), []
        elif is_doc:
            if open_at < 0:
                problems.add(path, at, "</DOC> without a <DOC> before it")
                continue
            doc = trec_record(buf[body:start], docno, body, open_line, path, problems)
            if doc is not None:
                docs.append(doc)
            open_at = -1
        elif open_at >= 0 and len(docno) < 2 and closing == bool(docno):
            docno.append(tag)
    if open_at >= 0:
        return docs, open_at, open_line, False
    return docs, partial_tag(buf), None, skipping


def partial_tag(buf: bytes) -> int:
    """Where a tag the end of ``buf`` cut starts (the next chunk reads it again), else the
    end of ``buf``."""
    partial = buf.rfind(b"<", max(0, len(buf) - PARTIAL_TAG))
    if partial >= 0 and buf.find(b">", partial) < 0:
        return partial
    return len(buf)


def trec_record(content: bytes, docno: list[re.Match[bytes]], offset: int, line: int,
                path: str, problems: Problems) -> ParsedDocument | None:
    """One ``<DOC>`` element's document from its ``content`` (which starts at ``offset`` of
    the buffer its first ``<DOCNO>`` and the ``</DOCNO>`` after it were found in)."""
    if not docno:
        problems.add(path, line, "<DOC> without <DOCNO>")
        return None
    if len(docno) < 2:
        problems.add(path, line, "<DOCNO> not closed")
        return None
    opening, closing = docno
    name = content[opening.end() - offset:closing.start() - offset].strip()
    if not name:
        problems.add(path, line, "empty <DOCNO>")
        return None
    rest = content[:opening.start() - offset] + content[closing.end() - offset:]
    title, text = strip_markup(rest)
    return ParsedDocument(id_text(name).encode(), title, text, line)


def strip_markup(content: bytes) -> tuple[bytes, bytes]:
    """The title and the text of a document's SGML/HTML content (see the module's notes), in
    time linear in its length (:mod:`.markup`)."""
    if b"\r" in content:
        content = content.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    content = drop_inline_tags(content)
    title = b""
    element = first_element(content, TITLE_NAMES)
    if element is not None:
        name, inner = element
        if name == b"head":
            inside = first_element(inner, (b"title",))
            inner = inside[1] if inside is not None else inner
        title = b" ".join(strip_tags(inner).split())
    text = BLANK_LINES.sub(b"\n\n", strip_tags(content)).strip()
    return plain(title), plain(text)


def plain(data: bytes) -> bytes:
    """``data`` as valid UTF-8 (bytes that are not become U+FFFD: this is text, not an id),
    with HTML entities (``&amp;``, ``&#233;``) decoded."""
    text = data.decode("utf-8", "replace")
    if "&" in text:
        text = html.unescape(text)
    return text.encode("utf-8")


# ---- JSONL ----------------------------------------------------------------------------------

def jsonl_documents(chunks: Iterable[bytes], path: str, spec: DocumentsSpec,
                    problems: Problems) -> Iterator[ParsedDocument]:
    """The objects of a JSON Lines stream given in chunks, one document each."""
    id_fields = (spec.id_field,) if spec.id_field else DEFAULT_ID_FIELDS
    text_fields = spec.text_fields if spec.text_fields is not None else DEFAULT_TEXT_FIELDS
    for number, raw in numbered_lines(chunks):
        if raw is None:
            problems.add(path, number, f"a line longer than {MAX_DOCUMENT_BYTES:,} bytes: "
                                       "not read")
            continue
        if number == 1:
            raw = raw.removeprefix(UTF8_BOM)
        if not raw.strip():
            continue
        try:
            doc = jsonl_record(raw, number, id_fields, text_fields, path, problems)
        except RecursionError:  # json's reader (and ours) go one call deeper per level
            problems.add(path, number, "JSON arrays or objects nested too deeply (more than "
                                       f"some {sys.getrecursionlimit():,} levels)")
            continue
        if doc is not None:
            yield doc


def numbered_lines(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """The lines of a stream given in chunks, each with its number from 1; None for a line
    longer than :data:`MAX_DOCUMENT_BYTES`, which is skipped without being held."""
    carry, number, skipping = b"", 1, False
    for data in chunks:
        if skipping:  # the rest of a line too long, given already
            newline = data.find(b"\n")
            if newline < 0:
                continue
            data, number, skipping = data[newline + 1:], number + 1, False
        buf = carry + data if carry else data
        end = buf.rfind(b"\n") + 1
        lines = buf[:end].split(b"\n")[:-1]
        yield from ((n, raw if len(raw) <= MAX_DOCUMENT_BYTES else None)
                    for n, raw in zip(itertools.count(number), lines))
        number += len(lines)
        carry = buf[end:]
        if len(carry) > MAX_DOCUMENT_BYTES:
            yield number, None
            carry, skipping = b"", True
    if carry:
        yield number, carry


def jsonl_record(raw: bytes, number: int, id_fields: tuple[str, ...],
                 text_fields: tuple[str, ...], path: str,
                 problems: Problems) -> ParsedDocument | None:
    """One JSON line's document."""
    try:
        obj = json.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        problems.add(path, number, f"not JSON: {getattr(exc, 'msg', exc)}")
        return None
    if not isinstance(obj, dict):
        problems.add(path, number, f"not a JSON object but {type(obj).__name__}")
        return None
    key = next((name for name in id_fields if name in obj), None)
    if key is None:
        problems.add(path, number, f"no id field ({' or '.join(map(repr, id_fields))})")
        return None
    value = obj[key]
    docno = str(value).strip() if isinstance(value, (str, int)) else ""
    if not docno or isinstance(value, bool):
        problems.add(path, number, f"the id field {key!r} is {json.dumps(value)[:50]}, not a "
                                   "docno")
        return None
    present = [field_text(obj[name]) for name in text_fields if obj.get(name) is not None]
    if not present:
        problems.add(path, number, "none of the text fields "
                                   f"({', '.join(map(repr, text_fields))}) in the object")
        return None
    title = field_text(obj["title"]) if obj.get("title") is not None else ""
    text = "\n\n".join(part for part in present if part)
    return ParsedDocument(id_text(docno).encode(), title.encode("utf-8", "replace"),
                          text.encode("utf-8", "replace"), number)


def field_text(value: object) -> str:
    """A JSON field's value as text: a string as it is, a list one item per line."""
    if isinstance(value, list):
        return "\n".join(field_text(item) for item in value if item is not None)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
