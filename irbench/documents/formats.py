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
"""

from __future__ import annotations

import gzip
import html
import itertools
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, NamedTuple, cast

from .spec import DEFAULT_ID_FIELDS, DEFAULT_TEXT_FIELDS, DocumentsSpec, Problems

CHUNK = 16 << 20  # bytes read at a time
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"

# <DOC ...>, </DOC>, <DOCNO>, </DOCNO> in any case: group 1 "/" for a closing tag, group 2 the
# name (3 letters for DOC)
DOC_TAG = re.compile(rb"<(/?)([Dd][Oo][Cc](?:[Nn][Oo])?)(?:\s[^>]*)?>")
TITLE_ELEMENT = re.compile(rb"<(headline|title|head)(?:\s[^>]*)?>(.*?)</\1\s*>",
                           re.IGNORECASE | re.DOTALL)
HTML_TITLE = re.compile(rb"<title(?:\s[^>]*)?>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
# inline HTML elements, whose tags go without a space ("<b>bold</b>." stays "bold."); the
# lookahead lets the scan skip a tag by its first letter, without re.IGNORECASE (which would
# try the pattern at every byte)
INLINE_NAMES = ("a", "abbr", "b", "big", "cite", "code", "em", "font", "i", "mark", "q", "s",
                "small", "span", "strike", "strong", "sub", "sup", "tt", "u")


def any_case(name: str) -> bytes:
    return "".join(f"[{c.lower()}{c.upper()}]" for c in name).encode()


INLINE_TAG = re.compile(rb"<(?=/?[AaBbCcEeFfIiMmQqSsTtUu])/?(?:"
                        + b"|".join(any_case(n) for n in INLINE_NAMES) + rb")(?=[\s>/])[^>]*>")
SCRIPT_OR_STYLE = b"(?:" + any_case("script") + b"|" + any_case("style") + b")"
ONE_TAG = (rb"<(?:" + SCRIPT_OR_STYLE + rb"\b.*?</" + SCRIPT_OR_STYLE
           + rb"\s*>|!--.*?-->|/?[A-Za-z!?][^>]*>)")
MARKUP = re.compile(ONE_TAG + rb"(?:[ \t]*" + ONE_TAG + rb")*[ \t]*", re.DOTALL)  # tags in a row
BLANK_LINES = re.compile(rb"\n[ \t\f\v]*\n\s*")  # spaces between two line ends count as blank


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
    chunk's end is read again whole with the next chunk."""
    carry, line, open_line = b"", 1, None
    for data in chunks:
        buf = carry + data if carry else data
        docs, cut, open_line = scan_trec(buf, line, path, problems)
        yield from docs
        line += buf.count(b"\n", 0, cut)
        carry = buf[cut:]
    if open_line is not None:
        problems.add(path, open_line, "<DOC> not closed at the end of the file")


def scan_trec(buf: bytes, line: int, path: str,
              problems: Problems) -> tuple[list[ParsedDocument], int, int | None]:
    """The documents closed in ``buf`` (whose first byte is on ``line``), where the next
    chunk should start reading it again, and the line of a ``<DOC>`` still open there."""
    docs: list[ParsedDocument] = []
    counted, at = 0, line
    open_at, open_line, body = -1, 0, 0
    docno_tags: list[re.Match[bytes]] = []
    for tag in DOC_TAG.finditer(buf):
        start = tag.start()
        at += buf.count(b"\n", counted, start)
        counted = start
        closing, is_doc = bool(tag.group(1)), len(tag.group(2)) == 3
        if is_doc and not closing:
            if open_at >= 0:
                problems.add(path, open_line, f"<DOC> not closed before the next <DOC> "
                                              f"(line {at})")
            open_at, open_line, body, docno_tags = start, at, tag.end(), []
        elif is_doc:
            if open_at < 0:
                problems.add(path, at, "</DOC> without a <DOC> before it")
                continue
            doc = trec_record(buf[body:start], docno_tags, body, open_line, path, problems)
            if doc is not None:
                docs.append(doc)
            open_at = -1
        elif open_at >= 0:
            docno_tags.append(tag)
    if open_at >= 0:
        return docs, open_at, open_line
    partial = buf.rfind(b"<", max(0, len(buf) - 4096))  # a tag the chunk's end cut
    if partial >= 0 and buf.find(b">", partial) < 0:
        return docs, partial, None
    return docs, len(buf), None


def trec_record(content: bytes, docno_tags: list[re.Match[bytes]], offset: int, line: int,
                path: str, problems: Problems) -> ParsedDocument | None:
    """One ``<DOC>`` element's document from its ``content`` (which starts at ``offset`` of
    the buffer the ``docno_tags`` were found in)."""
    opening = next((t for t in docno_tags if not t.group(1)), None)
    if opening is None:
        problems.add(path, line, "<DOC> without <DOCNO>")
        return None
    closing = next((t for t in docno_tags if t.group(1) and t.start() > opening.start()), None)
    if closing is None:
        problems.add(path, line, "<DOCNO> not closed")
        return None
    docno = content[opening.end() - offset:closing.start() - offset].strip()
    if not docno:
        problems.add(path, line, "empty <DOCNO>")
        return None
    rest = content[:opening.start() - offset] + content[closing.end() - offset:]
    title, text = strip_markup(rest)
    return ParsedDocument(utf8(docno), title, text, line)


def strip_markup(content: bytes) -> tuple[bytes, bytes]:
    """The title and the text of a document's SGML/HTML content (see the module's notes)."""
    if b"\r" in content:
        content = content.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    content = INLINE_TAG.sub(b"", content)
    title = b""
    element = TITLE_ELEMENT.search(content)
    if element is not None:
        inner = element.group(2)
        if element.group(1).lower() == b"head":
            inside = HTML_TITLE.search(inner)
            inner = inside.group(1) if inside is not None else inner
        title = b" ".join(MARKUP.sub(b" ", inner).split())
    text = BLANK_LINES.sub(b"\n\n", MARKUP.sub(b" ", content)).strip()
    return plain(title), plain(text)


def utf8(data: bytes) -> bytes:
    """``data`` as valid UTF-8 (bytes that are not become U+FFFD)."""
    return data.decode("utf-8", "replace").encode("utf-8")


def plain(data: bytes) -> bytes:
    """:func:`utf8`, with HTML entities (``&amp;``, ``&#233;``) decoded."""
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
        if number == 1:
            raw = raw.removeprefix(UTF8_BOM)
        if raw.strip():
            doc = jsonl_record(raw, number, id_fields, text_fields, path, problems)
            if doc is not None:
                yield doc


def numbered_lines(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """The lines of a stream given in chunks, each with its number from 1."""
    carry, number = b"", 1
    for data in chunks:
        buf = carry + data if carry else data
        end = buf.rfind(b"\n") + 1
        lines = buf[:end].split(b"\n")[:-1]
        yield from zip(itertools.count(number), lines)
        number += len(lines)
        carry = buf[end:]
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
    return ParsedDocument(docno.encode("utf-8", "replace"), title.encode("utf-8", "replace"),
                          text.encode("utf-8", "replace"), number)


def field_text(value: object) -> str:
    """A JSON field's value as text: a string as it is, a list one item per line."""
    if isinstance(value, list):
        return "\n".join(field_text(item) for item in value if item is not None)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
