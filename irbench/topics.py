"""Topic sets: a TREC topic file (``<top><num> Number: 401 ...``), an XML topic file, or a TSV
of ``query_id<TAB>text``.

XML topic files are those of the TREC Web, Session and Deep Learning tracks
(``<topic number="201" type="single"><query>...</query>``), CLEF
(``<topic><identifier>10.2452/401-AH</identifier><title>...``) and NTCIR
(``<TOPIC><NUM>0001</NUM><TITLE>...``): a topic's id is its ``number`` or ``id`` attribute, else
its ``num``, ``number``, ``identifier`` or ``qid`` element; its text the ``query`` or ``title``,
else the first words of the ``description`` (entities such as ``&amp;`` decoded).

In a TREC ``<top>`` file a zero-padded number is read as the number: the TREC-1 to TREC-3
files write ``<num> Number: 051`` where their qrels and runs write ``51``. A field runs to the
next tag of the format (``<desc>``, ``</title>``, ...); any other ``<`` is part of its text
("a<b comparisons" stays whole), as is one in an XML element that does not start a tag.

A topic file is only read for its ids and a short text (the title, else the first words of the
description) shown in reports. Topic ids are strings, as everywhere in irbench.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass, field
from functools import cached_property

from .errors import FormatError
from .trec import read_source, too_long

_TOP_OPEN_RE = re.compile(rb"<top>", re.I)
_TOP_CLOSE_RE = re.compile(rb"</top>", re.I)
# the tags of TREC <top> blocks (TREC-1 to 3 have all of these but query; later tracks top,
# num, title, desc, narr, some closed): a field runs to the next of them, opening or closing;
# any other '<' is the field's text ("a<b comparisons" stays whole). Its trailing blanks are
# dropped by _clean.
_TREC_TAGS = (b"top", b"head", b"num", b"dom", b"title", b"desc", b"smry", b"narr", b"con",
              b"fac", b"nat", b"def", b"query")
_FIELD_TAG = rb"</?(?:" + b"|".join(_TREC_TAGS) + rb")\s*>"
_FIELD_END = rb"(?=" + _FIELD_TAG + rb"|\Z)"
_NUM_RE = re.compile(rb"<num>\s*(?:Number:\s*)?((?:(?!" + _FIELD_TAG + rb")\S)+)", re.I)
_TITLE_RE = re.compile(rb"<title>\s*(?:Topic:)?(.*?)" + _FIELD_END, re.S | re.I)
_DESC_RE = re.compile(rb"<desc>\s*(?:Description:)?(.*?)" + _FIELD_END, re.S | re.I)
_NARR_RE = re.compile(rb"<narr>\s*(?:Narrative:)?(.*?)" + _FIELD_END, re.S | re.I)
_XML_OPEN_RE = re.compile(rb"<topic\b([^>]*)>", re.I)
_XML_CLOSE_RE = re.compile(rb"</topic\s*>", re.I)
_XML_ID_ATTR_RE = re.compile(rb"\b(?:number|id)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)
_XML_ID_TAGS = (b"num", b"number", b"identifier", b"qid")
_XML_TEXT_TAGS = (b"query", b"title")
_XML_DESC_TAGS = (b"description", b"desc")
_XML_NARR_TAGS = (b"narrative", b"narr")
_NUMBER_RE = re.compile(rb"\A\s*Number:", re.I)
_ELEMENT_OPEN_RES: dict[tuple[bytes, ...], re.Pattern[bytes]] = {
    names: re.compile(rb"<(" + b"|".join(names) + rb")\b", re.I)
    for names in (_XML_ID_TAGS, _XML_TEXT_TAGS, _XML_DESC_TAGS, _XML_NARR_TAGS)}
# a tag as XML writes one (attributes name="value"); none spans a '<', so the search is linear
_TAG_RE = re.compile(rb"</?[A-Za-z_][\w:.-]*(?:\s+[\w:.-]+\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'))*"
                     rb"\s*/?>")
_CDATA_OPEN, _CDATA_CLOSE = b"<![CDATA[", b"]]>"
_COMMENT_RE, _COMMENT_CLOSE = re.compile(rb"<!--.*?-->", re.S), b"-->"

# Every pattern here is matched in time linear in the file: a file of unclosed tags
# ("<top><top>...", "<topic <topic ...", "<![CDATA[" x 100,000) would make a lazy
# "<top>(.*?)</top>" scan to the end of the file once per tag; see _blocks and _element.


@dataclass(frozen=True)
class Topics:
    """Topic ids in file order with their short text; ``path`` is where they came from;
    ``fields``: each topic's statement for judges and assessors, {"title", "description",
    "narrative"} (what the file has of them, whole)."""

    query_id: tuple[str, ...]
    text: tuple[str, ...]
    path: str
    fields: tuple[dict[str, str], ...] = field(default=(), compare=False)

    @cached_property
    def position(self) -> dict[str, int]:
        """{topic id: its index}."""
        return {q: i for i, q in enumerate(self.query_id)}

    def statement(self, query_id: str) -> dict[str, str]:
        """The fields of topic ``query_id`` (``query_id`` and at least ``title``)."""
        at = self.position[query_id]
        found = self.fields[at] if self.fields else {}
        return {"query_id": query_id, "title": found.get("title") or self.text[at],
                "description": found.get("description", ""),
                "narrative": found.get("narrative", "")}

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
    path, data = read_source(source)
    if re.search(rb"<top>", data, re.I):
        ids, texts, lines, fields = _trec_topics(data)
    elif re.search(rb"<topic[\s>]", data, re.I):
        ids, texts, lines, fields = _xml_topics(data)
    else:
        ids, texts, lines = _tsv_topics(data)
        fields = [{"title": text} for text in texts]
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
    return Topics(tuple(ids), tuple(texts), path, tuple(fields))


def _blocks(data: bytes, open_re: re.Pattern, close_re: re.Pattern):
    """(opening tag match, body) of each block: an opening tag, then the body up to the next
    closing tag (opening tags inside the body are part of it); what a lazy
    ``open(.*?)close`` finds, in linear time. A tag's line is counted as blocks are found."""
    last_gt = data.rfind(b">") + 1  # an opening tag ends in '>': none starts after the last
    closes = [(m.start(), m.end()) for m in close_re.finditer(data)]
    starts = [c[0] for c in closes]
    at = 0
    for m in open_re.finditer(data, 0, last_gt):
        if m.start() < at:
            continue  # inside the previous block
        k = bisect.bisect_left(starts, m.end())
        if k == len(closes):
            return  # no closing tag after it, nor after any later opening tag
        yield m, data[m.end():closes[k][0]]
        at = closes[k][1]


class _Lines:
    """Line numbers of increasing offsets into ``data``, counted once over the file."""

    def __init__(self, data: bytes):
        self.data, self.at, self.line = data, 0, 1

    def __call__(self, offset: int) -> int:
        self.line += self.data.count(b"\n", self.at, offset)
        self.at = offset
        return self.line


def _id_problem(qid: str) -> str | None:
    return too_long([("topic id", qid.encode())])


def _trec_topics(data: bytes):
    ids: list[str] = []
    texts: list[str] = []
    lines: list[tuple[int, str | None]] = []  # (line, problem or None)
    fields: list[dict[str, str]] = []
    line_of = _Lines(data)
    for match, block in _blocks(data, _TOP_OPEN_RE, _TOP_CLOSE_RE):
        line = line_of(match.start())
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
        problem = _id_problem(qid)
        if problem:
            lines.append((line, problem))
            continue
        ids.append(qid.lstrip("0") or "0" if qid.isdigit() else qid)
        texts.append(text)
        lines.append((line, None))
        narr = _NARR_RE.search(block)
        fields.append({"title": _clean(title.group(1)) if title else "",
                       "description": _clean(desc.group(1)) if desc else "",
                       "narrative": _clean(narr.group(1)) if narr else ""})
    return ids, texts, lines, fields


def _xml_topics(data: bytes):
    ids: list[str] = []
    texts: list[str] = []
    lines: list[tuple[int, str | None]] = []  # (line, problem or None)
    fields: list[dict[str, str]] = []
    line_of = _Lines(data)
    for match, block in _blocks(data, _XML_OPEN_RE, _XML_CLOSE_RE):
        line = line_of(match.start())
        attr = _XML_ID_ATTR_RE.search(match.group(1))
        raw = (attr.group(1) if attr.group(1) is not None else attr.group(2)) if attr else (
            _NUMBER_RE.sub(b"", _element(block, _XML_ID_TAGS), count=1))
        qid = _clean_xml(raw)
        if not qid:
            lines.append((line, "topic without a number attribute or <num>/<identifier>"))
            continue
        problem = _id_problem(qid)
        if problem:
            lines.append((line, problem))
            continue
        shown = _clean_xml(_element(block, _XML_TEXT_TAGS))
        if not shown:
            shown = " ".join(_clean_xml(_element(block, _XML_DESC_TAGS)).split()[:12])
        ids.append(qid)
        texts.append(shown)
        lines.append((line, None))
        fields.append({"title": _clean_xml(_element(block, _XML_TEXT_TAGS)),
                       "description": _clean_xml(_element(block, _XML_DESC_TAGS)),
                       "narrative": _clean_xml(_element(block, _XML_NARR_TAGS))})
    return ids, texts, lines, fields


def _element(block: bytes, names: tuple[bytes, ...]) -> bytes:
    """The content of the first element named one of ``names`` that is closed (``b""`` if
    none), as ``<(names)\\b[^>]*>(.*?)</\\1\\s*>`` finds it, in linear time: an opening tag
    ends at the next '>' (found once for a run of tags), and a name without a closing tag
    after one of its elements has none after any later one either, so it is looked for once."""
    unclosed: set[bytes] = set()
    gt = -1
    for m in _ELEMENT_OPEN_RES[names].finditer(block):
        name = m.group(1).lower()
        if name in unclosed:
            continue
        if gt < m.end():
            gt = block.find(b">", m.end())
            if gt < 0:
                break
        close = re.compile(rb"</" + name + rb"\s*>", re.I).search(block, gt + 1)
        if close is None:
            unclosed.add(name)
            if len(unclosed) == len(names):
                break
            continue
        return block[gt + 1:close.start()]
    return b""


def _clean_xml(raw: bytes) -> str:
    """Element text without CDATA markers (what they hold is kept as it is), nested tags
    (:data:`_TAG_RE`: a '<' that does not start one is text) and entities."""
    parts, at = [], 0
    while (start := raw.find(_CDATA_OPEN, at)) >= 0:
        end = raw.find(_CDATA_CLOSE, start + len(_CDATA_OPEN))
        if end < 0:
            break
        parts += [_drop_tags(raw[at:start]),
                  raw[start + len(_CDATA_OPEN):end].replace(b"&", b"&amp;")]
        at = end + len(_CDATA_CLOSE)
    parts.append(_drop_tags(raw[at:]))
    return html.unescape(_clean(b"".join(parts)))


def _drop_tags(raw: bytes) -> bytes:
    """``raw`` with each tag and comment replaced by a space. A comment ends at a '-->': none
    is looked for after the last one (where each '<!--' would scan to the end)."""
    last = raw.rfind(_COMMENT_CLOSE) + len(_COMMENT_CLOSE)
    if last >= len(_COMMENT_CLOSE):
        raw = _COMMENT_RE.sub(b" ", raw[:last]) + raw[last:]
    return _TAG_RE.sub(b" ", raw)


def _tsv_topics(data: bytes):
    ids: list[str] = []
    texts: list[str] = []
    lines: list[tuple[int, str | None]] = []  # (line, problem or None)
    for line, raw in enumerate(data.split(b"\n"), 1):
        raw = raw.rstrip(b"\r")
        if not raw.strip() or raw.startswith(b"#"):
            continue
        qid, tab, text = raw.partition(b"\t")
        if not tab or not qid.strip():
            lines.append((line, "expected 'query_id<TAB>text'"))
            continue
        problem = too_long([("topic id", qid.strip())])
        if problem:
            lines.append((line, problem))
            continue
        ids.append(_clean(qid))
        texts.append(_clean(text))
        lines.append((line, None))
    return ids, texts, lines
