"""Topic sets: a TREC topic file (``<top><num> Number: 401 ...``), an XML topic file, or a TSV
of ``query_id<TAB>text``.

XML topic files are those of the TREC Web, Session and Deep Learning tracks
(``<topic number="201" type="single"><query>...</query>``), CLEF
(``<topic><identifier>10.2452/401-AH</identifier><title>...``) and NTCIR
(``<TOPIC><NUM>0001</NUM><TITLE>...``): a topic's id is its ``number`` or ``id`` attribute, else
its ``num``, ``number``, ``identifier`` or ``qid`` element; its text the ``query`` or ``title``,
else the first words of the ``description`` (entities such as ``&amp;`` decoded).

In a TREC ``<top>`` file a zero-padded number is read as the number: the TREC-1 to TREC-3
files write ``<num> Number: 051`` where their qrels and runs write ``51``.

A topic file is only read for its ids and a short text (the title, else the first words of the
description) shown in reports. Topic ids are strings, as everywhere in irbench.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from .errors import FormatError
from .trec import _read_source

_TOP_RE = re.compile(rb"<top>(.*?)</top>", re.S | re.I)
_NUM_RE = re.compile(rb"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE_RE = re.compile(rb"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)
_DESC_RE = re.compile(rb"<desc>\s*(?:Description:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)
_XML_TOPIC_RE = re.compile(rb"<topic\b([^>]*)>(.*?)</topic\s*>", re.S | re.I)
_XML_ID_ATTR_RE = re.compile(rb"\b(?:number|id)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)
_XML_ID_RE = re.compile(rb"<(num|number|identifier|qid)\b[^>]*>\s*(?:Number:)?(.*?)</\1\s*>",
                        re.S | re.I)
_XML_TEXT_RE = re.compile(rb"<(query|title)\b[^>]*>(.*?)</\1\s*>", re.S | re.I)
_XML_DESC_RE = re.compile(rb"<(description|desc)\b[^>]*>(.*?)</\1\s*>", re.S | re.I)


@dataclass(frozen=True)
class Topics:
    """Topic ids in file order with their short text; ``path`` is where they came from."""

    query_id: tuple[str, ...]
    text: tuple[str, ...]
    path: str

    def __len__(self) -> int:
        return len(self.query_id)


def _clean(raw: bytes) -> str:
    return " ".join(raw.decode("utf-8", "replace").split())


def read_topics(source) -> Topics:
    """Read a TREC topic file, an XML topic file or a ``query_id<TAB>text`` TSV (chosen by
    whether ``<top>``, else ``<topic``, occurs).

    Raises :class:`FormatError` naming the file and line of every problem: a block without
    its id, a TSV line without a tab, a repeated topic id, no topics at all.
    """
    path, data = _read_source(source)
    if re.search(rb"<top>", data, re.I):
        ids, texts, lines = _trec_topics(data)
    elif re.search(rb"<topic[\s>]", data, re.I):
        ids, texts, lines = _xml_topics(data)
    else:
        ids, texts, lines = _tsv_topics(data)
    problems = [f"{path}:{line}: {reason}" for line, reason in lines if reason]
    seen: dict[str, int] = {}
    for qid, (line, _) in zip(ids, [entry for entry in lines if entry[1] is None]):
        if qid in seen:
            problems.append(f"{path}:{line}: topic '{qid}' repeated (first at line {seen[qid]})")
        else:
            seen[qid] = line
    if not problems and not ids:
        problems.append(f"{path}:1: no topics found")
    if problems:
        raise FormatError(problems)
    return Topics(tuple(ids), tuple(texts), path)


def _trec_topics(data: bytes):
    ids, texts, lines = [], [], []
    for match in _TOP_RE.finditer(data):
        block = match.group(1)
        line = data.count(b"\n", 0, match.start()) + 1
        num = _NUM_RE.search(block)
        if num is None:
            lines.append((line, "topic without <num>"))
            continue
        title = _TITLE_RE.search(block)
        desc = _DESC_RE.search(block)
        text = _clean(title.group(1)) if title and title.group(1).strip() else ""
        if not text and desc:
            text = " ".join(_clean(desc.group(1)).split()[:12])
        qid = _clean(num.group(1))
        ids.append(qid.lstrip("0") or "0" if qid.isdigit() else qid)
        texts.append(text)
        lines.append((line, None))
    return ids, texts, lines


def _xml_topics(data: bytes):
    ids, texts, lines = [], [], []
    for match in _XML_TOPIC_RE.finditer(data):
        attrs, block = match.group(1), match.group(2)
        line = data.count(b"\n", 0, match.start()) + 1
        attr = _XML_ID_ATTR_RE.search(attrs)
        element = _XML_ID_RE.search(block)
        raw = (attr.group(1) if attr.group(1) is not None else attr.group(2)) if attr else (
            element.group(2) if element else b"")
        qid = _clean_xml(raw)
        if not qid:
            lines.append((line, "topic without a number attribute or <num>/<identifier>"))
            continue
        text = _XML_TEXT_RE.search(block)
        desc = _XML_DESC_RE.search(block)
        shown = _clean_xml(text.group(2)) if text else ""
        if not shown and desc:
            shown = " ".join(_clean_xml(desc.group(2)).split()[:12])
        ids.append(qid)
        texts.append(shown)
        lines.append((line, None))
    return ids, texts, lines


def _clean_xml(raw: bytes) -> str:
    """Element text without CDATA markers, nested tags and entities."""
    raw = re.sub(rb"<!\[CDATA\[(.*?)\]\]>", rb"\1", raw, flags=re.S)
    return html.unescape(_clean(re.sub(rb"<[^>]*>", b" ", raw)))


def _tsv_topics(data: bytes):
    ids, texts, lines = [], [], []
    for line, raw in enumerate(data.split(b"\n"), 1):
        raw = raw.rstrip(b"\r")
        if not raw.strip() or raw.startswith(b"#"):
            continue
        qid, tab, text = raw.partition(b"\t")
        if not tab or not qid.strip():
            lines.append((line, "expected 'query_id<TAB>text'"))
            continue
        ids.append(_clean(qid))
        texts.append(_clean(text))
        lines.append((line, None))
    return ids, texts, lines
