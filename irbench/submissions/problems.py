"""What a check finds (:class:`Problem`), a file's outcome (:class:`RunCheck`), and their text.

A file may have a million bad lines; counts stay exact, but only the first
:data:`KEEP_PER_CHECK` problems of each check are built as objects (in file order), and only
``rules.max_shown`` of those are printed, followed by ``... and N more problems in FILE``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .rules import Rules

KEEP_PER_CHECK = 1000


@dataclass(frozen=True)
class Problem:
    """One finding: ``PATH:LINE: SEVERITY: MESSAGE [CHECK]``; ``line`` 0 means the whole file."""

    path: str
    line: int
    check: str
    severity: str  # "error" or "warning"
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message} [{self.check}]"

    def as_dict(self) -> dict:
        return {"path": self.path, "line": self.line or None, "check": self.check,
                "severity": self.severity, "message": self.message}


@dataclass(frozen=True)
class RunCheck:
    """The outcome of checking one run file.

    ``errors``/``warnings`` hold the problems kept (in file order, at most
    :data:`KEEP_PER_CHECK` per check); ``num_errors``/``num_warnings`` are exact. ``group`` is
    the run's group and ``group_source`` where it came from (``rules``, ``config``,
    ``ir_metadata``, ``tag``). ``metadata`` is the run's ir_metadata block (``{}`` if none) and
    ``fields`` the first-class fields read from it (group, type, official, priority, tag).
    """

    path: str
    run_tag: str
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    num_errors: int
    num_warnings: int
    lines: int = 0       # lines in the file
    results: int = 0     # result lines (6 columns)
    topics: int = 0      # distinct topics answered
    group: str = ""
    group_source: str = ""
    metadata: dict = field(default_factory=dict, hash=False, compare=False)
    fields: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def verdict(self) -> str:
        return "rejected" if self.num_errors else "accepted"

    @property
    def accepted(self) -> bool:
        return not self.num_errors

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Errors and warnings kept, in file order (whole-file problems first)."""
        return tuple(sorted(self.errors + self.warnings, key=lambda p: p.line))

    @property
    def omitted(self) -> int:
        """Problems counted but not kept as objects."""
        return self.num_errors + self.num_warnings - len(self.errors) - len(self.warnings)

    def as_dict(self) -> dict:
        return {"path": self.path, "run_tag": self.run_tag, "verdict": self.verdict,
                "errors": self.num_errors, "warnings": self.num_warnings,
                "lines": self.lines, "results": self.results, "topics": self.topics,
                "group": self.group, "group_source": self.group_source,
                "fields": self.fields, "metadata": self.metadata,
                "problems": [p.as_dict() for p in self.problems],
                "problems_omitted": self.omitted}


class Collector:
    """Gathers one file's problems with their severity from the rules; counts are exact."""

    def __init__(self, path: str, rules: Rules):
        self.path = path
        self.rules = rules
        self.kept: dict[str, list[Problem]] = {}
        self.counts: dict[str, int] = {}

    def on(self, check: str) -> bool:
        return self.rules.on(check)

    def add(self, check: str, line: int, message: str) -> None:
        level = self.rules.level(check)
        if level == "off":
            return
        self.counts[check] = self.counts.get(check, 0) + 1
        kept = self.kept.setdefault(check, [])
        if len(kept) < KEEP_PER_CHECK:
            kept.append(Problem(self.path, int(line), check, level, message))

    def add_many(self, check: str, lines: np.ndarray, message: Callable[[int], str]) -> None:
        """One problem per entry of ``lines`` (file line numbers); ``message(i)`` builds the
        text of entry ``i`` and is called for the first entries only (enough to keep)."""
        level = self.rules.level(check)
        if level == "off" or len(lines) == 0:
            return
        kept = self.kept.setdefault(check, [])
        room = max(0, KEEP_PER_CHECK - len(kept))
        first = np.argsort(lines, kind="stable")[:room]
        kept.extend(Problem(self.path, int(lines[i]), check, level, message(int(i)))
                    for i in first)
        self.counts[check] = self.counts.get(check, 0) + len(lines)

    def result(self, **columns) -> RunCheck:
        problems = sorted((p for kept in self.kept.values() for p in kept),
                          key=lambda p: p.line)
        num = {"error": 0, "warning": 0}
        for check, count in self.counts.items():
            num[self.rules.level(check)] += count
        return RunCheck(
            path=self.path,
            errors=tuple(p for p in problems if p.severity == "error"),
            warnings=tuple(p for p in problems if p.severity == "warning"),
            num_errors=num["error"], num_warnings=num["warning"], **columns)


def with_problems(check: RunCheck, extra: Sequence[Problem]) -> RunCheck:
    """``check`` with cross-file problems added (its verdict follows)."""
    if not extra:
        return check
    errors = tuple(p for p in extra if p.severity == "error")
    warnings = tuple(p for p in extra if p.severity == "warning")
    return replace(check, errors=tuple(sorted(check.errors + errors, key=lambda p: p.line)),
                   warnings=tuple(sorted(check.warnings + warnings, key=lambda p: p.line)),
                   num_errors=check.num_errors + len(errors),
                   num_warnings=check.num_warnings + len(warnings))


# ---- text ----------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def verdict_line(check: RunCheck) -> str:
    """``PATH: accepted: 0 errors, 1 warning; run tag 'x', group 'g', 50 topics, 50000
    results``."""
    tag = f"run tag '{check.run_tag}'" if check.run_tag else "no run tag"
    group = f", group '{check.group}'" if check.group else ""
    return (f"{check.path}: {check.verdict}: {_plural(check.num_errors, 'error')}, "
            f"{_plural(check.num_warnings, 'warning')}; {tag}{group}, "
            f"{_plural(check.topics, 'topic')}, {_plural(check.results, 'result')}")


def report_lines(check: RunCheck, max_shown: int) -> Iterable[str]:
    """The problems of one file (at most ``max_shown``: errors first, each kind in file order,
    so warnings never hide the error that rejects a run), the ``... and N more`` line, and
    the verdict line."""
    problems = check.errors + check.warnings
    for problem in problems[:max_shown]:
        yield str(problem)
    hidden = check.num_errors + check.num_warnings - min(len(problems), max_shown)
    if hidden > 0:
        yield f"... and {_plural(hidden, 'more problem')} in {check.path}"
    yield verdict_line(check)
