"""Submission rules: which checks run, how severe each is, and their limits.

``Rules()`` holds NIST-like defaults (taken from NIST's TREC checker scripts, e.g. the 2022
Deep Learning track's ``check_dl.pl``: at most 1000 documents per topic and at least one for
every topic, ``Q0`` in column 2, a run tag of 1-25 letters, digits, ``-`` or ``_``, one run tag
per file, no duplicate document per topic, and no more than 25 problems shown). A rules file
changes some of them::

    checks:                  # severity per check: error, warning or off
      rank_order: error
      tag_filename: warning
    max_docs: 100
    min_topics: 45           # null (the default): every topic of the topic set
    docno_pattern: 'msmarco_doc_\\d\\d_\\d+'
    max_runs_per_group: 5
    groups:                  # group -> its run tags (else ir_metadata, else the tag)
      h2oloo: [h2oloo-bm25, h2oloo-t5]

:func:`load_rules` reads such a file with PyYAML's safe loader and reports every unknown key
and bad value at once, with its file and line, in one :class:`ConfigError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import ConfigError
from ..yamlfile import parse_yaml, read_text

SEVERITIES = ("error", "warning", "off")

CHECKS: dict[str, tuple[str, str]] = {
    # name: (default severity, what it checks)
    "file": ("error", "the file can be read (exists, valid gzip) and has result lines"),
    "file_size": ("error", "the file is at most max_file_size bytes"),
    "binary": ("error", "no NUL byte (a binary file)"),
    "encoding": ("error", "every line is UTF-8, without a byte order mark"),
    "line_endings": ("warning", "lines end in LF, not CRLF or a lone CR"),
    "columns": ("error", "6 columns: qid Q0 docno rank score tag"),
    "q0": ("error", "column 2 is the q0 value (Q0)"),
    "rank": ("error", "the rank is an integer"),
    "score": ("error", "the score is a finite decimal number"),
    "tag": ("error", "one run tag in the whole file"),
    "tag_pattern": ("error", "the run tag matches tag_pattern"),
    "tag_filename": ("off", "the run tag equals the file name (without .gz, .txt, input.)"),
    "missing_topic": ("error", "every topic has results (or at least min_topics topics do)"),
    "unknown_topic": ("error", "no topic outside the topic set"),
    "max_docs": ("error", "at most max_docs documents per topic"),
    "min_docs": ("error", "at least min_docs documents per answered topic"),
    "duplicate_doc": ("error", "no document twice for one topic"),
    "rank_order": ("warning", "ranks agree with scores (trec_eval orders by score)"),
    "docno": ("error", "docnos match docno_pattern / are in the docnos list (when given)"),
    "metadata": ("error", "an ir_metadata block is a valid YAML mapping with valid fields"),
    "metadata_tag": ("warning", "the ir_metadata tag equals the run tag"),
    "runs_per_group": ("error", "at most max_runs_per_group runs per group"),
    "duplicate_tag": ("error", "no run tag used by two files"),
    "answers": ("error", "an answer run (JSON lines) reads by its track's rules (docs/answers.md)"),
    "answer_warning": ("warning", "what an answer run's reader accepts but tells (a declared "
                       "length that differs, a reference listed twice, a topic not answered)"),
}

DEFAULT_TAG_PATTERN = r"[A-Za-z0-9_-]{1,25}"
DEFAULT_GROUP_PATTERN = r"(.+)[-_][^-_]*"


@dataclass(frozen=True)
class Rules:
    """What a submission must satisfy. ``severity`` maps a check name to error/warning/off;
    checks not named keep their default (:data:`CHECKS`).

    q0: the required column-2 value. tag_pattern: a regex the whole run tag must match.
    min_topics: None requires every topic of the topic set, else at least this many answered.
    max_docs / min_docs: documents per answered topic. docno_pattern: a regex every docno must
    match in full; docnos: a file of valid docnos, one per line. max_file_size: bytes (None:
    no limit). max_runs_per_group: None for no limit. groups: group -> run tags.
    group_pattern: a regex on the run tag whose first group names the group when neither the
    rules, the config nor ir_metadata do (``groupA-1`` -> ``groupA``; no match: the whole tag).
    max_shown: problems printed per file before ``... and N more``.
    """

    severity: Mapping[str, str] = field(default_factory=dict, hash=False)
    q0: str = "Q0"
    tag_pattern: str = DEFAULT_TAG_PATTERN
    min_topics: int | None = None
    max_docs: int = 1000
    min_docs: int = 1
    docno_pattern: str | None = None
    docnos: str | None = None
    max_file_size: int | None = None
    max_runs_per_group: int | None = None
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    group_pattern: str = DEFAULT_GROUP_PATTERN
    max_shown: int = 25
    path: str | None = None  # the rules file, if any

    def level(self, check: str) -> str:
        """The severity of ``check``: ``error``, ``warning`` or ``off``."""
        return self.severity.get(check, CHECKS[check][0])

    def on(self, check: str) -> bool:
        return self.level(check) != "off"

    def group_of_tag(self, tag: str) -> str | None:
        """The group the ``groups`` mapping gives this tag, or None."""
        for group, tags in self.groups.items():
            if tag in tags:
                return group
        return None


_KEYS = {f.name for f in fields(Rules)} - {"severity", "path"} | {"checks"}


def load_rules(path: str | os.PathLike) -> Rules:
    """Read a rules file (YAML). Every problem is reported at once in one ConfigError."""
    path = os.fspath(path)
    _, text = read_text(path, "the rules")
    if not text.strip():
        return Rules(path=path)
    data, reader = parse_yaml(path, text)
    if not isinstance(data, dict):
        raise ConfigError([f"{path}:1: rules are a mapping of option: value"])
    rules = build_rules(data, reader.problem, os.path.dirname(os.path.abspath(path)))
    if reader.problems:
        raise ConfigError(sorted(reader.problems, key=_line_of(path)))
    return Rules(**{**rules.__dict__, "path": path})


def rules_from_mapping(data: Mapping[str, Any], folder: str = ".") -> Rules:
    """Rules from an already-parsed mapping (e.g. a config's ``validation`` section)."""
    problems: list[str] = []
    rules = build_rules(dict(data), lambda where, reason: problems.append(
        f"{'.'.join(map(str, where))}: {reason}"), folder)
    if problems:
        raise ConfigError(problems)
    return rules


def _line_of(path: str):
    def key(message: str) -> int:
        head = message[len(path) + 1:].split(":", 1)[0]
        return int(head) if head.isdigit() else 0
    return key


def build_rules(data: dict, problem, folder: str) -> Rules:
    """Rules from a parsed mapping; each bad entry calls ``problem(yaml_path, reason)`` (a
    tuple path such as ``("checks", "q0")``) and is left at its default. Relative ``docnos``
    paths are resolved against ``folder``."""
    values: dict[str, Any] = {}
    for key in data:
        if key not in _KEYS:
            problem((key,), f"unknown key (rules have {', '.join(sorted(_KEYS))})")
    severity = data.get("checks") or {}
    if not isinstance(severity, dict):
        problem(("checks",), "a mapping of check: error, warning or off")
        severity = {}
    for name, level in severity.items():
        if name not in CHECKS:
            problem(("checks", name), f"unknown check (checks are {', '.join(CHECKS)})")
        elif level not in SEVERITIES:
            problem(("checks", name), "must be error, warning or off")
    values["severity"] = {k: v for k, v in severity.items() if k in CHECKS and v in SEVERITIES}
    for key in ("q0", "tag_pattern", "group_pattern", "docno_pattern", "docnos"):
        if key not in data:
            continue
        value = data[key]
        nullable = key in ("docno_pattern", "docnos")
        if value is None and nullable:
            values[key] = None
        elif not isinstance(value, str) or not value:
            problem((key,), "must be text" + (" (or null)" if nullable else ""))
        elif key.endswith("pattern") and _bad_regex(value):
            problem((key,), f"not a regular expression: {_bad_regex(value)}")
        elif key == "group_pattern" and re.compile(value).groups < 1:
            problem((key,), "needs a (group) naming the group")
        elif key == "docnos":
            full = os.path.normpath(os.path.join(folder, os.path.expanduser(value)))
            if not os.path.isfile(full):
                problem((key,), f"no such file '{value}'")
            else:
                values[key] = full
        else:
            values[key] = value
    for key, low, nullable in (("min_topics", 1, True), ("max_docs", 1, False),
                               ("min_docs", 0, False), ("max_runs_per_group", 1, True),
                               ("max_shown", 0, False)):
        if key not in data:
            continue
        value = data[key]
        if value is None and nullable:
            values[key] = None
        elif not isinstance(value, int) or isinstance(value, bool) or value < low:
            problem((key,), f"must be a whole number >= {low}" + (" (or null)" if nullable
                                                                  else ""))
        else:
            values[key] = value
    if "max_file_size" in data:
        try:
            values["max_file_size"] = _size(data["max_file_size"])
        except ValueError:
            problem(("max_file_size",), "a size in bytes, e.g. 50000000 or '50 MB' (or null)")
    if "groups" in data:
        values["groups"] = _groups(data["groups"], problem)
    return Rules(**values)


def _bad_regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        return str(exc)
    return ""


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3,
          "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def _size(value: Any) -> int | None:
    """Bytes from an int or '50 MB'; None stays None. ValueError when unreadable."""
    if value is None:
        return None
    size = 0
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", value)
        if match and match.group(2).lower() in _UNITS:
            size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(value)
    return size


def _groups(value: Any, problem) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        problem(("groups",), "a mapping of group: [run tags]")
        return {}
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for group, tags in value.items():
        if isinstance(tags, (str, int)):
            tags = [tags]
        if not isinstance(tags, list) or not all(isinstance(t, (str, int)) for t in tags):
            problem(("groups", group), "a list of run tags")
            continue
        for tag in map(str, tags):
            if tag in owner:
                problem(("groups", group), f"run tag '{tag}' is also in group '{owner[tag]}'")
            owner[tag] = str(group)
        out[str(group)] = tuple(map(str, tags))
    return out
