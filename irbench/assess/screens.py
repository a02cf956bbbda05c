"""Assessment screens: what an assessor judges on, as a registry. A :class:`Screen` names its
template, the dataclass its page is rendered from (its page type, documented in
:mod:`.contexts` or beside the screen) and its label parser; :func:`irbench.assess.app.build_app`
mounts every registered screen behind the shared checks (the token and role, the CSRF token,
the security headers, the bounded JSON body): its page at ``path + "/"`` and its calls
(``next``, ``judge``, ``undo``, ``skip``) at ``path + "/api/..."``, over the desk.

Registered (by the package, ``irbench/assess/__init__.py``): ``relevance``
(:mod:`.relevance`: a topic beside a document, one key per integer level), mounted at the
root; ``support`` (:mod:`.support`: an answer's sentence beside the segment it cites,
served by ``irbench assess --support``). An assessor opening ``/`` gets the first screen
mounted. The next screen is one module defining a :class:`Screen` plus one
:func:`register` call (and its import in the package's ``__init__.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..registry import Registry

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True, kw_only=True)
class Visit:
    """What a screen's page may show besides its own: one request for it."""

    title: str  # the campaign's name
    who: str  # the assessor's name
    nonce: str  # the CSP nonce of the page's script and style
    csrf: str  # the CSRF token its calls send (X-CSRF-Token)
    levels: tuple[int, ...]  # the labels the server was started with (--levels)
    preselect: bool  # a model's label is preselected (--preselect)
    names: tuple[str, ...] = ()  # the levels' names, by level ('' none; --levels 0:not,...)


@dataclass(frozen=True, kw_only=True)
class Screen:
    """An assessment screen. ``page(visit)`` is its page's context, an instance of
    ``page_type`` (a documented frozen dataclass whose fields are the names ``template``
    reads; ``template`` is in ``folder``); ``parse_label(body, levels)`` is the label a
    judgment's JSON body gives, raising :class:`~irbench.assess.failures.BadRequest` for one it
    cannot; ``path``: where it is mounted ('' the root); ``kind``: the desk it needs (a
    server mounts the screens of its kind: :func:`screens_of`)."""

    name: str
    template: str
    page_type: type
    page: Callable[[Visit], Any]
    parse_label: Callable[[dict, tuple[int, ...]], int]
    path: str = ""
    folder: Path = TEMPLATES
    kind: str = "pool"  # what its desk serves: 'pool' (a relevance pool), 'support' (units)


def screens_of(kind: str) -> list[Screen]:
    """The registered screens a server of ``kind`` mounts (``Screen.kind``), in order."""
    return [s for s in SCREENS.values() if s.kind == kind]


SCREENS: Registry[Screen] = Registry("assessment screen")


def register(screen: Screen) -> Screen:
    """Add ``screen``; a second screen of the same name, or at the same path, is a bug
    (ValueError)."""
    if screen.path and (not screen.path.startswith("/") or screen.path.endswith("/")):
        raise ValueError(f"screen {screen.name!r}: a path is '' or '/name', not "
                         f"{screen.path!r}")
    taken = {s.path: s.name for s in SCREENS.values() if s.name != screen.name}
    if screen.path in taken:
        raise ValueError(f"screen {screen.name!r}: path {screen.path!r} is screen "
                         f"{taken[screen.path]!r}'s")
    return SCREENS.add(screen)

