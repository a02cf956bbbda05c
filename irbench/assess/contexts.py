"""The assessment server's contract: what each page shows and what each JSON call answers, as
documented frozen dataclasses (each field says what it holds, ``metadata["help"]``), the same
way the report's are (:mod:`irbench.report.contract`). A template is rendered from one context
(its fields are the template's names, :data:`PAGES` and each screen's ``page``) under
``StrictUndefined``; a call answers a context as JSON (:func:`dataclasses.asdict`, in field
order). ``tests/test_assess_structure.py`` checks every field documented and every name a
template reads a field of its context (:func:`irbench.report.fields.names_outside`).

Everything from participants and assessors (names, topic text, documents) is plain text here,
escaped by Jinja2 on a page and put there with ``textContent`` by the page's script.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..report.fields import documented

_f = documented


@dataclass(frozen=True, kw_only=True)
class Item:
    """A document to judge as the assessor's page shows it (blind: never the runs, ranks or
    groups that brought it)."""

    query_id: str = _f("the topic's id (irbench.ids.id_text)")
    doc_id: str = _f("the docno (irbench.ids.id_text)")
    topic: dict[str, str] = _f("the topic's statement: query_id, title, description, "
                               "narrative")
    title: str = _f("the document's title, or ''")
    text: str = _f("the document's text (cut at serve.PAGE_CHARS, saying so)")
    suggestion: int | None = _f("a model judge's label of it, or None")
    again: bool = _f("the assessor judged it already (undo): their label is ``previous``")
    previous: int | None = _f("the assessor's label when ``again``, else None")
    skipped: bool = _f("the assessor skipped it before: nothing else of theirs is left",
                       default=False)
    ticket: str = _f("the proof it was handed to this assessor (an HMAC under the pool's "
                     "secret), sent back with the judgment: taken after a restart too",
                     default="")


@dataclass(frozen=True, kw_only=True)
class TopicProgress:
    """One topic's progress."""

    query_id: str = _f("the topic's id")
    judged: int = _f("its documents judged")
    total: int = _f("its share of the pool: documents handed out, judged, or still to be "
                    "handed out within its budget (PoolingState.planned)")


@dataclass(frozen=True, kw_only=True)
class Progress:
    """How far the judging is, over an assessor's topics (or every topic)."""

    judged: int = _f("documents judged")
    total: int = _f("the topics' shares of the pool, summed")
    skipped: int = _f("pending documents skipped (by the assessor; by anyone on the "
                      "organiser's page)")
    topics: tuple[TopicProgress, ...] = _f("per topic with a document handed out, in the "
                                           "pool's topic order")
    done: bool = _f("the pool is complete: every document handed out is judged")
    current: TopicProgress | None = _f("the topic the assessor holds now, or None (the "
                                       "organiser's page; nothing held)", default=None)
    finished: bool = _f("nothing is left for the assessor in any of their topics, now or "
                        "later (on the organiser's page: for anyone)", default=False)


@dataclass(frozen=True, kw_only=True)
class ItemAnswer:
    """What the assessor's calls (next, judge, undo, skip) answer, as JSON."""

    item: Item | None = _f("the document to judge now, or None: nothing (left) to judge")
    progress: Progress = _f("the assessor's progress")


@dataclass(frozen=True, kw_only=True)
class AssessorRow:
    """One assessor on the organiser's page."""

    name: str = _f("the assessor's name (checked by people.check_name)")
    topics: str = _f("their topics, comma-separated, or 'all'")
    judged: int = _f("documents they judged in the browser (a document judged again after "
                     "an undo counts once)")
    holds: str = _f("the topic they hold now, or '-'")
    seconds: str = _f("median seconds per judgment, printed, or '-'")
    kept: str = _f("'K of N': how often they kept a model's suggestion, or '-'")


@dataclass(frozen=True, kw_only=True)
class OrganiserTopic:
    """One topic on the organiser's page."""

    query_id: str = _f("the topic's id")
    judged: int = _f("its documents judged")
    total: int = _f("its share of the pool, as the desk's progress gives it (0: none yet)")
    budget: str = _f("its budget (documents it may be handed), printed, or 'unlimited'")
    held_by: str = _f("the assessors holding it now, comma-separated, or '-'")
    judged_by: str = _f("'name N, ...': documents of it each assessor judged, or '-'")


@dataclass(frozen=True, kw_only=True)
class OrganiserView:
    """What the organiser sees (the page, and ``/api/progress`` as JSON): the pool's progress
    first, then the assessors, agreement and the provisional leaderboard."""

    judged: int = _f("documents judged")
    total: int = _f("the topics' shares of the pool, summed")
    skipped: int = _f("pending documents someone skipped")
    topics: tuple[OrganiserTopic, ...] = _f("every topic of the pool, in the pool's order")
    done: bool = _f("the pool is complete")
    strategy: str = _f("the pool's strategy")
    total_budget: str = _f("the pool's budget over all topics, printed, or 'unlimited'")
    judgments: int = _f("judgments made in the browser: documents judged, per assessor (a "
                        "document judged again after an undo counts once)")
    clicks: int = _f("labels given in the browser (a judgment changed after an undo counts "
                     "each time)")
    assessors: tuple[AssessorRow, ...] = _f("the assessors (not the organisers), by name")
    agreement: str = _f("agreement on the documents judged twice, in a sentence")
    measure: str = _f("the leaderboard's measure ('': no leaderboard, the units are not a pool "
                      "of documents)")
    leaderboard: tuple[tuple[str, str], ...] = _f("(system, its value printed), best first, "
                                                  "on the topics judged to the end")
    leaderboard_note: str = _f("what the leaderboard rests on (or why it is empty)")
    unit: str = _f("what is judged, plural: 'documents', 'sentences' (support), 'nuggets of "
                   "answers'", default="documents")
    links: tuple[tuple[str, str], ...] = _f("(address, text) of the server's other pages for "
                                            "the organiser (the nugget lists' editor)",
                                            default=())


@dataclass(frozen=True, kw_only=True)
class SignInPage:
    """``signin.html``: a personal link opened."""

    title: str = _f("the campaign's name")
    nonce: str = _f("the CSP nonce of the page's style")
    refresh: bool = _f("signed in: the page refreshes to /")
    name: str = _f("whose link it is")
    current: str = _f("who this browser is signed in as, when asking before switching, "
                      "else ''")
    token: str = _f("the link's token, for the link signing in with one click ('' when "
                    "signed in already)")


@dataclass(frozen=True, kw_only=True)
class LevelKey:
    """A relevance level's button on the assessor's page."""

    level: int = _f("the level, and the key that gives it")
    name: str = _f("its name ('not relevant', from --levels or the defaults), or ''")


@dataclass(frozen=True, kw_only=True)
class AssessorPage:
    """``assess.html``: the relevance screen (the document and topic arrive by the calls)."""

    title: str = _f("the campaign's name")
    nonce: str = _f("the CSP nonce of the page's script and style")
    csrf: str = _f("the CSRF token the page's calls send")
    who: str = _f("the assessor's name")
    keys: tuple[LevelKey, ...] = _f("the relevance levels, one button and key each")
    config: dict[str, Any] = _f("the page script's settings as JSON: levels, names (level "
                                "-> its name, '' none), preselect (a model's label kept by "
                                "Enter)")


@dataclass(frozen=True, kw_only=True)
class OrganiserPage:
    """``organiser.html``: progress, assessors, agreement, the provisional leaderboard."""

    title: str = _f("the campaign's name")
    nonce: str = _f("the CSP nonce of the page's style")
    view: OrganiserView = _f("what the page shows")


@dataclass(frozen=True, kw_only=True)
class Person:
    """Someone of the pool on the organiser's people section."""

    name: str = _f("their name (checked by people.check_name)")
    role: str = _f("'assessor' or 'organiser'")
    topics: str = _f("their topics, comma-separated, or 'all'")
    revoked: bool = _f("their link was revoked (their judgments stay)")


@dataclass(frozen=True, kw_only=True)
class PeopleView:
    """The organiser's people section (``people.html`` fills it from ``GET /api/people``) and
    what each change (``POST /api/people/add``, ``revoke``, ``topics``) answers, as JSON."""

    csrf: str = _f("the CSRF token of the organiser's calls ('' for the command line)")
    people: tuple[Person, ...] = _f("everyone of the pool, revoked ones too, by name")
    topics: tuple[str, ...] = _f("the pool's topic ids, in its order")
    link: str = _f("the personal link this call made (add), shown once; '' otherwise")
    done: str = _f("what this call did, in a sentence ('' for GET)")


#: The server's own pages' templates and their contexts (the screens' are in the registry; a
#: desk's own page adds itself: nugget_edit.html).
PAGES: dict[str, type] = {"signin.html": SignInPage, "organiser.html": OrganiserPage}

#: Every context type (the contract test checks each field is documented).
CONTEXT_TYPES = (Item, TopicProgress, Progress, ItemAnswer, AssessorRow, OrganiserTopic,
                 OrganiserView, SignInPage, LevelKey, AssessorPage, OrganiserPage,
                 Person, PeopleView)
