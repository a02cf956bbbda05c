"""What the assessment server refuses, as named exceptions. The app registers one handler per
class (:func:`irbench.assess.app.build_app`): a :class:`BadRequest` is answered with its
``status`` and ``{"error": message}``; :class:`~irbench.assess.writer.WriteFailed` (the store
cannot be written) with 503; a judgment the pool refuses
(:class:`~irbench.errors.JudgmentError`, any :class:`~irbench.errors.IrbenchError`) with 400
and its message. Any other exception is a bug: a 500, and a line in the server's log."""

from __future__ import annotations

from typing import ClassVar

from ..errors import IrbenchError

#: What a call missing a field, or with one of the wrong type, is told.
MALFORMED = "malformed request (query_id, doc_id, relevance)"


class BadRequest(IrbenchError):
    """A call the server refuses as it was sent (its body, its CSRF token)."""

    status: ClassVar[int] = 400


class CsrfFailed(BadRequest):
    """A call without the page's CSRF token, or from another origin."""

    status = 403


class TooLarge(BadRequest):
    """A body over :data:`irbench.assess.calls.MAX_BODY` bytes (read no further)."""

    status = 413
