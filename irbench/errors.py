"""Named exceptions. The library raises these; only the CLI turns them into messages."""

from __future__ import annotations


class IrbenchError(Exception):
    """Base class of every error caused by the user's input or request."""


class FormatError(IrbenchError):
    """One or more problems in an input file, each with its path and line."""

    MAX_SHOWN = 20

    def __init__(self, problems: list[str], more: int = 0):
        self.problems = list(problems)
        self.more = more
        text = "\n".join(self.problems[: self.MAX_SHOWN])
        hidden = more + max(0, len(self.problems) - self.MAX_SHOWN)
        if hidden:
            text += f"\n... and {hidden} more problem{'s' if hidden != 1 else ''}"
        super().__init__(text)


class DuplicateError(FormatError):
    """A docno retrieved twice for a topic, or judged twice: readable input that trec_eval
    refuses to evaluate (its exit status 4, which the command line keeps)."""


class UnknownMeasureError(IrbenchError):
    """A measure name that is not in the registry."""


class MeasureParameterError(IrbenchError):
    """A known measure with parameters it cannot take."""


class EvaluationError(IrbenchError):
    """The inputs are readable but cannot be evaluated together (e.g. a missing topic)."""


class UsageError(IrbenchError):
    """A command-line request that cannot be carried out."""


class ConfigError(FormatError):
    """One or more problems in a campaign config, each with its file, line and YAML path."""


class StoreError(IrbenchError):
    """The score store cannot be used (locked by another process, newer schema, unreadable)."""


class PoolingError(IrbenchError):
    """A pooling request that cannot be carried out (bad parameters, budget, state)."""


class UnknownStrategyError(PoolingError):
    """A pooling strategy name that is not in the registry."""


class JudgmentError(FormatError):
    """Judgments that cannot be recorded: malformed, not in the pool, or conflicting."""
