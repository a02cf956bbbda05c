"""The relevance screen (``assess.html``): the topic beside the document, one button and key
per integer relevance level (``--levels``, each with its name), skip and undo; a model's label
shown as a suggestion (kept by Enter with ``--preselect``)."""

from __future__ import annotations

from ..errors import OptionError
from .contexts import AssessorPage, LevelKey
from .failures import MALFORMED, BadRequest
from .screens import Screen, Visit, register

#: The names of the levels 0, 1, 2 when ``--levels`` names none (TREC's graded scale).
DEFAULT_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant"}
MAX_NAME = 40  # characters of a level's name (a button's label)
USAGE = ("--levels is a list of levels from 0 to 9 (one key each), each with an optional "
         "name: 0,1,2 or 0:not relevant,1:relevant,2:highly relevant")


def parse_levels(text: str) -> dict[int, str]:
    """``--levels``: ``"0,1,2"`` or ``"0:not,1:related,2:highly"`` as {level: name}, by
    level ('' for a level given without a name). :class:`OptionError` for a level outside
    0-9 (a key each), one given twice, or a name longer than :data:`MAX_NAME` characters or
    holding a control character."""
    levels: dict[int, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        level, _, name = part.partition(":")
        level, name = level.strip(), " ".join(name.split())
        if not (level.isascii() and level.isdigit() and len(level) == 1):
            raise OptionError(f"{USAGE}; not {part.strip()!r}")
        if int(level) in levels:
            raise OptionError(f"--levels gives level {level} twice")
        if len(name) > MAX_NAME or not name.isprintable():
            raise OptionError(f"--levels: the name of level {level} is {MAX_NAME} printable "
                              "characters at most")
        levels[int(level)] = name
    if not levels:
        raise OptionError(USAGE)
    return dict(sorted(levels.items()))


def chosen_levels(given: str | None, grades: tuple[tuple[int, str], ...]) -> dict[int, str]:
    """The keys of the page: ``--levels`` when given (:func:`parse_levels`), else the
    collection's grading scheme (``collection.grades``), else 0, 1, 2."""
    if given is not None:
        return parse_levels(given)
    return dict(grades) or parse_levels("0,1,2")


def level_names(levels: tuple[int, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    """A name per level: ``names`` (as :func:`parse_levels` gave them, by level) when one is
    given, else :data:`DEFAULT_NAMES` when the levels are 0, 1, 2, else none ('')."""
    if any(names):
        return tuple(names) + ("",) * (len(levels) - len(names))
    if set(levels) == set(DEFAULT_NAMES):
        return tuple(DEFAULT_NAMES[level] for level in levels)
    return ("",) * len(levels)


def integer_level(body: dict, levels: tuple[int, ...]) -> int:
    """``body["relevance"]``: one of ``levels``, an integer (not a bool)."""
    relevance = body.get("relevance")
    if type(relevance) is not int or relevance not in levels:
        raise BadRequest(MALFORMED)
    return relevance


def page(visit: Visit) -> AssessorPage:
    names = level_names(visit.levels, visit.names)
    keys = tuple(LevelKey(level=level, name=name) for level, name in zip(visit.levels, names))
    return AssessorPage(title=visit.title, nonce=visit.nonce, csrf=visit.csrf, who=visit.who,
                        keys=keys,
                        config={"levels": list(visit.levels),
                                "names": {str(k.level): k.name for k in keys},
                                "preselect": visit.preselect})


RELEVANCE = register(Screen(name="relevance", template="assess.html", page_type=AssessorPage,
                            page=page, parse_label=integer_level))
