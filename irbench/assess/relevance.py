"""The relevance screen (``assess.html``): the topic beside the document, one button and key
per integer relevance level (``--levels``), skip and undo; a model's label shown as a
suggestion (kept by Enter with ``--preselect``)."""

from __future__ import annotations

from .contexts import AssessorPage
from .failures import MALFORMED, BadRequest
from .screens import Screen, Visit, register


def integer_level(body: dict, levels: tuple[int, ...]) -> int:
    """``body["relevance"]``: one of ``levels``, an integer (not a bool)."""
    relevance = body.get("relevance")
    if type(relevance) is not int or relevance not in levels:
        raise BadRequest(MALFORMED)
    return relevance


def page(visit: Visit) -> AssessorPage:
    return AssessorPage(title=visit.title, nonce=visit.nonce, csrf=visit.csrf, who=visit.who,
                        levels=visit.levels,
                        config={"levels": list(visit.levels), "preselect": visit.preselect})


RELEVANCE = register(Screen(name="relevance", template="assess.html", page_type=AssessorPage,
                            page=page, parse_label=integer_level))
