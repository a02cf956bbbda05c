"""Named exceptions. The library raises these; only the command line (:mod:`irbench.cli`)
turns them into ``irbench: error: ...`` messages and exits with each class's ``exit_code``.

Exit statuses follow trec_eval where it has one: 1 for a request that cannot be carried out,
2 for input files with problems, 3 for a store that cannot be used, 4 for inputs that cannot
be evaluated together (trec_eval's status for a duplicate docno).

Every error pickles and unpickles to an equal error (worker processes send them back whole).
"""

from __future__ import annotations

from typing import ClassVar


class IrbenchError(Exception):
    """Base class of every error caused by the user's input or request."""

    exit_code: ClassVar[int] = 1


class FormatError(IrbenchError):
    """One or more problems in an input file, each with its path and line."""

    exit_code = 2
    MAX_SHOWN = 20

    def __init__(self, problems: list[str], more: int = 0):
        self.problems = list(problems)
        self.more = more
        text = "\n".join(self.problems[: self.MAX_SHOWN])
        hidden = more + max(0, len(self.problems) - self.MAX_SHOWN)
        if hidden:
            text += f"\n... and {hidden} more problem{'s' if hidden != 1 else ''}"
        super().__init__(text)

    def __reduce__(self):
        return (type(self), (self.problems, self.more))


class DuplicateError(FormatError):
    """A docno retrieved twice for a topic, or judged twice: readable input that trec_eval
    refuses to evaluate (its exit status 4, which the command line keeps)."""

    exit_code = 4


class ConfigError(FormatError):
    """One or more problems in a campaign config, each with its file, line and YAML path."""


class UnknownQrelsSetError(ConfigError):
    """A qrels set the config does not declare (the message names a close match). Exit
    status 1, as the commands gave for it before :meth:`Config.qrels_set` looked it up."""

    exit_code = 1


class MissingRunsError(ConfigError):
    """Runs asked for whose run files are missing (each problem at its config line). Exit
    status 1, as the commands gave for it before :meth:`Config.run_table` checked it."""

    exit_code = 1


class JudgmentError(FormatError):
    """Judgments that cannot be recorded: malformed, not in the pool, or conflicting."""


class AnswerFormatError(FormatError):
    """An answer run (generated answers with citations) that breaks its format or the track's
    rules: each problem at its file and line."""


class UnknownMeasureError(IrbenchError):
    """A measure name that is not in the registry."""


class MeasureParameterError(IrbenchError):
    """A known measure with parameters it cannot take."""

    exit_code = 2


class EvaluationError(IrbenchError):
    """The inputs are readable but cannot be evaluated together (e.g. a missing topic)."""

    exit_code = 4


class OptionError(IrbenchError):
    """An evaluation option out of its range (a negative relevance level or depth, an unknown
    duplicates policy)."""


class StoreError(IrbenchError):
    """The score store cannot be used (locked by another process, newer schema, unreadable).
    ``damaged``: the path of a store whose file is damaged (its judgments are worth saving
    before anyone moves it away), else None."""

    exit_code = 3

    def __init__(self, message: str, damaged: str | None = None):
        super().__init__(message)
        self.damaged = damaged


class StoreValueError(StoreError):
    """A write the store refused for one of the values it was given (a conversion, encoding,
    range or constraint error): the transaction is rolled back, the store is fine."""


class NotStoredError(IrbenchError):
    """The store holds nothing for what was asked (a measure, system or qrels set)."""


class PoolingError(IrbenchError):
    """A pooling request that cannot be carried out (bad parameters, budget, state)."""


class UnknownStrategyError(PoolingError):
    """A pooling strategy name that is not in the registry."""


class StatisticsError(IrbenchError):
    """A statistical test or design asked with values it cannot take (alpha outside (0, 1),
    an unknown test or correction, too few topics)."""


class StatisticsExtraError(StatisticsError):
    """A statistic that needs the stats extra (statsmodels), not installed."""


class SimulationError(IrbenchError):
    """A simulated campaign asked with values it cannot take."""


class OutputError(IrbenchError):
    """An output file or folder that cannot be written."""


class CommandError(IrbenchError):
    """A system given as a command that cannot be run as written: an unknown placeholder or a
    stray brace in its command, an input that is missing or too big to hash."""


class ClusterError(IrbenchError):
    """A Dask cluster that cannot be used: unreachable, or the cluster extra not installed."""


class JudgeError(IrbenchError):
    """A model judge that cannot be used: its server refuses the key or the model, cannot
    be reached at all, or keeps failing; nothing already answered is lost."""


class AnalysisError(IrbenchError):
    """A report analysis that cannot be computed from what the store and the files hold now
    (a run file changed or went away since it was scored)."""


class UsageError(IrbenchError):
    """A command-line request that cannot be carried out. Raised by :mod:`irbench.cli` only;
    the library raises the named errors above."""


# -- the optional extras and how to install one, for the messages of the commands that need
# them: one wording everywhere, naming both ways irbench is installed (a package from an
# index, or a checkout in editable mode)
# extra -> the commands or inputs that need it (README.md's 'Extras' line says the same)
NEEDED_BY = {
    "report": "irbench report (matplotlib: the charts; pypdf: --appendix-pdf)",
    "judge": "irbench judge with model judges (httpx)",
    "assess": "irbench assess (Starlette, uvicorn)",
    "cluster": "irbench run --cluster (Dask distributed)",
    "cloud": "s3://, gs://, https:// inputs (fsspec, s3fs)",
    "pandas": "data frames in and out",
    "irds": "irds: topics and qrels (ir_datasets)",
    "stats": "the meta-analysis across collections (statsmodels)",
    "lab": "the bundled lab demo's BM25 system, configs/lab.yaml (bm25s)",
}


def install(extra: str) -> str:
    """How to install ``extra``: ``pip install 'irbench[report]' (in a checkout: pip install
    -e '.[report]')``."""
    return f"pip install 'irbench[{extra}]' (in a checkout: pip install -e '.[{extra}]')"
