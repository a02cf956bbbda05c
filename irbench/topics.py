"""Topic sets: a TREC topic file (``<top><num> Number: 401 ...``) or a TSV of ``query_id<TAB>text``.

A topic file is only read for its ids and a short text (the title, else the first words of the
description) shown in reports. Topic ids are strings, as everywhere in irbench.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import FormatError
from .trec import _read_source

_TOP_RE = re.compile(rb"<top>(.*?)</top>", re.S | re.I)
_NUM_RE = re.compile(rb"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE_RE = re.compile(rb"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)
_DESC_RE = re.compile(rb"<desc>\s*(?:Description:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)


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
    """Read a TREC topic file or a ``query_id<TAB>text`` TSV (chosen by whether ``<top>`` occurs).

    Raises :class:`FormatError` naming the file and line of every problem: a block without
    ``<num>``, a TSV line without a tab, a repeated topic id, no topics at all.
    """
    path, data = _read_source(source)
    if re.search(rb"<top>", data, re.I):
        ids, texts, lines = _trec_topics(data)
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
        ids.append(_clean(num.group(1)))
        texts.append(text)
        lines.append((line, None))
    return ids, texts, lines


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
