"""What scoring a campaign found: :class:`Failure` entries and warnings collected as it goes
(:class:`Findings`), and the :class:`RunReport` that ``irbench run`` prints."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import IrbenchError


@dataclass(frozen=True)
class Failure:
    """What could not be scored, and why (the message names the file and line)."""

    subject: str  # "system 'x'", "qrels 'official'", "qrels 'official', measure ERR@20"
    message: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


class Findings:
    """Failures and warnings of one campaign run, in the order found; with ``fail_fast`` the
    first failure is raised (an :class:`IrbenchError`)."""

    def __init__(self, fail_fast: bool = False):
        self.fail_fast = fail_fast
        self.failures: list[Failure] = []
        self.warnings: list[str] = []

    def fail(self, subject: str, message: str) -> None:
        self.failures.append(Failure(subject, message))
        if self.fail_fast:
            raise IrbenchError(f"{subject}: {message}")

    def failure_of(self, subject: str) -> str | None:
        """The message of the first failure of ``subject``, or None."""
        return next((f.message for f in self.failures if f.subject == subject), None)


@dataclass
class RunReport:
    """The outcome of :func:`irbench.runner.run_campaign`."""

    store: str
    runner_id: int
    systems: int
    qrels: int
    measures: int
    evaluated: int = 0   # (system, qrels set) pairs computed now
    reused: int = 0      # pairs already in the store
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    analysed: list[str] = field(default_factory=list)  # the report analyses computed now
    executed: int = 0    # commands executed now (systems given as commands)
    seconds: float = 0.0
