"""YAML read with the line of every value, for messages that name ``FILE:LINE: yaml.path``.

Campaign configs (:mod:`irbench.config`) and submission rules files
(:mod:`irbench.submissions.rules`) are read here, with PyYAML's safe loader only.
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import ConfigError

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_VALUES = 100_000  # values in one file, aliases expanded: a config has hundreds
_PLAIN_TAGS = {f"tag:yaml.org,2002:{name}" for name in (
    "map", "seq", "str", "int", "float", "bool", "null", "timestamp")}


class _TooLarge(Exception):
    """More than MAX_VALUES values once aliases are expanded (a 'billion laughs' file)."""


def yaml_path(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def line_of(lines: dict[tuple, int], path: tuple) -> int:
    """The line of ``path`` in a file whose values' lines are ``lines`` (those of
    :attr:`LineReader.lines`): its own, else its nearest parent's, else 1."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path, 1)


class LineReader:
    """Turns composed YAML nodes into Python values, remembering each path's line."""

    def __init__(self, file: str):
        self.file = file
        self.lines: dict[tuple, int] = {}
        self.problems: list[str] = []
        self._constructor = yaml.constructor.SafeConstructor()
        self._count = 0

    def problem(self, path: tuple, reason: str) -> None:
        line = self.line(path)
        self.problems.append(f"{self.file}:{line}: {yaml_path(path)}: {reason}")

    def line(self, path: tuple) -> int:
        return line_of(self.lines, path)

    def value(self, node, path: tuple = ()) -> Any:
        self._count += 1
        if self._count > MAX_VALUES:
            raise _TooLarge
        self.lines[path] = node.start_mark.line + 1
        if node.tag not in _PLAIN_TAGS:
            self.problem(path, f"YAML tags such as {node.tag!r} are not allowed")
            return None
        if isinstance(node, yaml.MappingNode):
            out: dict = {}
            for key_node, value_node in node.value:
                key = self._constructor.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int)):
                    self.lines[path + (str(key),)] = key_node.start_mark.line + 1
                    self.problem(path + (str(key),), "keys must be plain names")
                    continue
                key = str(key)
                if key in out:
                    self.lines[path + (key,)] = key_node.start_mark.line + 1
                    self.problem(path + (key,), "given twice")
                    continue
                out[key] = self.value(value_node, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, path + (i,)) for i, item in enumerate(node.value)]
        try:
            return self._constructor.construct_object(node, deep=True)
        except ValueError:  # e.g. an integer of thousands of digits
            self.problem(path, f"cannot read the value {node.value[:40]!r}"
                               f"{'...' if len(node.value) > 40 else ''}")
            return None


MAX_DEPTH = 64  # a config nests four or five levels; PyYAML composes nesting recursively


def _too_deep(text: str) -> int | None:
    """The line where collections nest deeper than MAX_DEPTH (3,000 '[' would exhaust
    Python's stack in PyYAML), or None; YAML errors are left to compose to report."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=SAFE_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark.line + 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def parse_yaml(path: str, text: str) -> tuple[Any, LineReader]:
    reader = LineReader(path)
    deep = _too_deep(text)
    if deep is not None:
        raise ConfigError([f"{path}:{deep}: nested more than {MAX_DEPTH} levels deep"])
    try:
        node = yaml.compose(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([f"{path}:{line}: not valid YAML: {reason}"]) from None
    except yaml.constructor.ConstructorError as exc:  # pragma: no cover - compose rarely does
        raise ConfigError([f"{path}:1: not valid YAML: {exc}"]) from None
    if node is None:
        raise ConfigError([f"{path}:1: empty config"])
    try:
        data = reader.value(node)
    except _TooLarge:
        raise ConfigError([f"{path}:1: more than {MAX_VALUES:,} values once YAML aliases are "
                           "expanded"]) from None
    except yaml.YAMLError as exc:  # e.g. a tag the safe loader refuses
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise ConfigError([f"{path}:{line}: {getattr(exc, 'problem', exc)}"]) from None
    return data, reader


def read_text(path: str, what: str) -> tuple[bytes, str]:
    """(bytes, UTF-8 text) of a YAML file; ConfigError naming the file (and line) if not."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read {what} ({exc.strerror})"]) from None
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError([f"{path}:{line}: not UTF-8 text"]) from None
