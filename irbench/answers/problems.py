"""Collected problems (or warnings) of one answer file: ``FILE:LINE: reason`` for a line's,
``FILE: reason`` for the file's as a whole (a topic with no answer), the first
:data:`~irbench.errors.FormatError.MAX_SHOWN` kept and the rest counted."""

from __future__ import annotations

from ..errors import AnswerFormatError, FormatError
from ..trec import Problems as LineProblems

WHOLE_FILE = 0  # the line of a problem of the whole file


class Problems(LineProblems):
    """:class:`irbench.trec.Problems` with problems of the whole file too."""

    def add_file(self, reason: str) -> None:
        self.add(WHOLE_FILE, reason)

    @property
    def shown(self) -> list[str]:
        return [f"{self.path}: {reason}" if line == WHOLE_FILE else
                f"{self.path}:{line}: {reason}" for line, reason in self.items]

    def raise_if_any(self, error: type[FormatError] = AnswerFormatError) -> None:
        if self.items:
            raise error(self.shown, self.more)
