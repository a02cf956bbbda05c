"""ir_metadata blocks in run headers (https://www.ir-metadata.org, PRIMAD schema v0.1).

A run may describe itself in comment lines::

    # ir_metadata.start
    # tag: h2oloo-bm25
    # actor:
    #   team: h2oloo
    # method:
    #   automatic: true
    # ir_metadata.end
    401 Q0 doc1 1 12.5 h2oloo-bm25

The lines between the markers lose their leading ``#`` and one space, and the rest is YAML,
read with ``yaml.safe_load`` only. Problems carry the line of the run file they are on.

:func:`run_fields` reads the fields irbench treats as first class: ``group`` (``actor.team``,
or a top-level ``group``), ``type`` (``manual``/``automatic``, from ``method.automatic`` or a
top-level ``type``), ``tag``, and the irbench extensions ``official`` (true/false) and
``priority`` (a whole number, 1 = pooled first).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..errors import FormatError

START = b"ir_metadata.start"
END = b"ir_metadata.end"
RUN_TYPES = ("automatic", "manual")
MAX_BLOCK_BYTES = 1 << 16  # ir_metadata is a header of a few hundred bytes
MAX_DEPTH = 32  # PRIMAD nests three or four levels


@dataclass(frozen=True)
class MetadataBlock:
    """The ir_metadata of a run: ``data`` (``{}`` when absent or unreadable), the line of its
    start marker (0 when absent), and ``(line, message)`` problems."""

    data: dict = field(default_factory=dict, hash=False)
    line: int = 0
    problems: tuple[tuple[int, str], ...] = ()


def find_ir_metadata(data: bytes) -> MetadataBlock:
    """The ir_metadata block in a run file's bytes (only the block is looked at)."""
    start = _marker(data, START, 0)
    if start < 0:
        return MetadataBlock()
    first = data.count(b"\n", 0, start) + 1
    body_from = data.find(b"\n", start)
    end = _marker(data, END, start) if body_from >= 0 else -1
    if end < 0:
        return MetadataBlock(line=first, problems=(
            (first, "ir_metadata.start without a matching ir_metadata.end"),))
    problems: list[tuple[int, str]] = []
    text_lines: list[str] = []
    body = data[body_from + 1:data.rfind(b"\n", 0, end) + 1]
    if len(body) > MAX_BLOCK_BYTES:
        return MetadataBlock(line=first, problems=((first, (
            f"ir_metadata block of {len(body):,} bytes: at most {MAX_BLOCK_BYTES:,}")),))
    for offset, raw in enumerate(body.splitlines()):
        line = first + 1 + offset
        stripped = raw.lstrip()
        if stripped and not stripped.startswith(b"#"):
            problems.append((line, "line inside the ir_metadata block is not a '#' comment"))
            text_lines.append("")
            continue
        content = stripped[1:]
        if content.startswith(b" "):
            content = content[1:]
        try:
            text_lines.append(content.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append((line, "ir_metadata line is not UTF-8"))
            text_lines.append("")
    if problems:
        return MetadataBlock(line=first, problems=tuple(problems))
    text = "\n".join(text_lines)
    try:
        refused = _refused_event(text)
        if refused is not None:
            event, reason = refused
            return MetadataBlock(line=first, problems=((
                first + 1 + event.start_mark.line, reason),))
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first + 1 + mark.line if mark is not None else first
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return MetadataBlock(line=first, problems=((line, f"ir_metadata is not valid YAML: "
                                                           f"{reason}"),))
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return MetadataBlock(line=first, problems=(
            (first, "ir_metadata must be a YAML mapping (key: value lines)"),))
    return MetadataBlock(data=value, line=first)


def _refused_event(text: str) -> tuple[yaml.Event, str] | None:
    """(the event, why) of the first YAML event irbench refuses before loading, or None:
    an alias (never expanded: a few bytes of aliases can mean gigabytes) or a collection
    nested deeper than MAX_DEPTH (PyYAML builds nested collections recursively, and a block
    of '[' would exhaust Python's stack)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            return event, "ir_metadata may not use YAML aliases"
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return event, f"ir_metadata is nested more than {MAX_DEPTH} levels deep"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def _marker(data: bytes, marker: bytes, after: int) -> int:
    """Offset of the next line that is ``# <marker>``, or -1. Each line holding the marker
    text is looked at once (a line repeating it 100,000 times is not copied each time). A
    file without '#' has none: found in 0.03 ms of a 2 MB run instead of 0.6."""
    at = data.find(marker, after) if data.find(b"#", after) >= 0 else -1
    while at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        line_end = data.find(b"\n", at)
        line_end = line_end if line_end >= 0 else len(data)
        prefix = data[line_start:at].strip()  # '#', or '##' ...
        if prefix and not prefix.lstrip(b"#") and not data[at + len(marker):line_end].strip():
            return line_start
        at = data.find(marker, line_end)
    return -1


def run_fields(metadata: dict) -> tuple[dict[str, Any], list[str]]:
    """(first-class fields present in ``metadata``, problems with them).

    Fields: group, type, tag, official, priority (see the module docstring).
    """
    fields: dict[str, Any] = {}
    problems: list[str] = []
    actor = metadata.get("actor")
    method = metadata.get("method")
    group = metadata.get("group", actor.get("team") if isinstance(actor, dict) else None)
    if group is not None:
        if isinstance(group, (str, int)) and str(group).strip():
            fields["group"] = str(group)
        else:
            problems.append("ir_metadata group (actor.team) must be text")
    if "type" in metadata:
        if metadata["type"] in RUN_TYPES:
            fields["type"] = metadata["type"]
        else:
            problems.append(f"ir_metadata type must be {' or '.join(RUN_TYPES)}")
    elif isinstance(method, dict) and "automatic" in method:
        if isinstance(method["automatic"], bool):
            fields["type"] = "automatic" if method["automatic"] else "manual"
        else:
            problems.append("ir_metadata method.automatic must be true or false")
    if "tag" in metadata:
        if isinstance(metadata["tag"], (str, int)):
            fields["tag"] = str(metadata["tag"])
        else:
            problems.append("ir_metadata tag must be text")
    if "official" in metadata:
        if isinstance(metadata["official"], bool):
            fields["official"] = metadata["official"]
        else:
            problems.append("ir_metadata official must be true or false")
    if "priority" in metadata:
        value = metadata["priority"]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            fields["priority"] = value
        else:
            problems.append("ir_metadata priority must be a whole number >= 1")
    return fields, problems


def read_ir_metadata(path: str | os.PathLike) -> dict:
    """The ir_metadata of the run file at ``path`` (``{}`` if it has none); gzip is fine.

    Raises :class:`FormatError` naming the file and line of every problem in the block.
    """
    from .lines import Unreadable, read_file  # its checks' rules: not for every run scored

    path = os.fspath(path)
    try:
        data = read_file(path)
    except Unreadable as exc:
        raise FormatError([f"{path}: {exc}"]) from None
    block = find_ir_metadata(data)
    if block.problems:
        raise FormatError([f"{path}:{line}: {message}" for line, message in block.problems])
    return block.data
