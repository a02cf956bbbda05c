"""The nugget assignment screen (``nuggets.html``, ``irbench assess CONFIG --pool NAME
--nuggets JUDGE``): an answer beside its topic's nugget list, one nugget at a time marked in
the list, three keys (2 supported, 1 partly supported, 0 not supported: AutoNuggetizer's
support, partial_support, not_support), skip and undo.

The list is the nugget judge JUDGE's as it stands in the store when the server starts
(:meth:`irbench.store.Store.live_nuggets`: the model's nuggets with every person's edit,
:mod:`.nugget_edit`); the answers are the config's answer runs' (every topic with a list).
A unit is (answer, nugget), keyed :func:`unit_key`: a hash of the topic and run (the page and
its requests never name a run, team or model), the nugget's place in the list and a hash of
its id, so that an answer's nuggets come one after the other, in the list's order (the desk
hands units out by key), and a page open across a restart after an edit cannot label another
nugget than the one it shows. Labels go to ``answer_labels`` (task ``nugget``, the nugget's
id, the run) through the answer desk (:mod:`.answer_desk`); ``irbench qrels --nuggets`` and
the server's ``/qrels`` write them as nuggetizer's assignments.

An edit made while the server runs changes the list on the next start: edit the lists
before assessors assign (a label of a nugget edited since stays in the store with the text
it was made for, and no longer counts)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from ..errors import IrbenchError
from ..escaping import terminal
from ..judges.nugget_made import nuggets_made
from ..judges.nugget_records import assignments_text
from ..judges.nugget_run import answer_texts
from ..judgments import DEFAULT_RULE
from ..report.fields import documented as _f
from ..store import Assessor, Store
from ..store.answer_labels import NUGGET
from ..topics import read_topics
from .answer_desk import KeyOf, answer_app, opened_units, three_key_page, three_keys
from .contexts import AssessorPage, Item
from .desk import Desk, candidate
from .nugget_edit import EDIT_PATH, edit_routes
from .screens import Screen, register
from .serve import DESKS

#: The keys, in the order the page shows them: (label, name).
KEYS = ((2, "supported"), (1, "partly supported"), (0, "not supported"))
TASK = NUGGET


class NuggetDeskError(IrbenchError):
    """A campaign whose nuggets cannot be assigned at the desk (no list, no answers ...)."""


@dataclass(frozen=True, kw_only=True)
class NuggetUnit:
    """One unit: an answer (its topic, run and text; ``answer`` the hash naming it) and one
    nugget of its topic's list (its id, text, importance and place)."""

    query_id: str
    run_id: str
    text: str
    answer: str
    nugget_id: str
    nugget: str
    importance: str
    index: int


@dataclass(frozen=True, kw_only=True)
class NuggetRow:
    """A nugget of the list beside an answer."""

    text: str = _f("the nugget's text")
    importance: str = _f("'vital' or 'okay'")
    label: int | None = _f("the assessor's label of it for this answer (2, 1, 0), or None")


@dataclass(frozen=True, kw_only=True)
class NuggetItem(Item):
    """A unit as the nugget page shows it: ``doc_id`` its key (:func:`unit_key`), ``text``
    the answer (blind: never a run, team or model), ``title`` ''."""

    nuggets: tuple[NuggetRow, ...] = _f("the topic's nugget list, in order, with the "
                                        "assessor's labels for this answer", default=())
    current: int = _f("the place in ``nuggets`` of the nugget to judge", default=0)


def answer_key(query_id: str, run_id: str) -> str:
    """An answer's name on the page: a hash of its topic and run."""
    joined = f"{query_id}\0{run_id}".encode("utf-8", "surrogateescape")
    return "a" + hashlib.sha256(joined).hexdigest()[:20]


def unit_key(answer: str, index: int, nugget_id: str) -> str:
    """A unit's key: the answer's, the nugget's place, a hash of the nugget's id."""
    return f"{answer}-{index:04d}-{hashlib.sha256(nugget_id.encode()).hexdigest()[:8]}"


def nugget_units(config: Any, live: dict[str, list]) -> dict[str, NuggetUnit]:
    """The units of the config's answers and the lists ``live`` ({topic: stored nuggets});
    NuggetDeskError when there is none."""
    units: dict[str, NuggetUnit] = {}
    for a in answer_texts(config):
        if not a.text.strip():
            continue
        key = answer_key(a.qid, a.run_id)
        for i, n in enumerate(live.get(a.qid, ())):
            units[unit_key(key, i, n.nugget_id)] = NuggetUnit(
                query_id=a.qid, run_id=a.run_id, text=a.text, answer=key,
                nugget_id=n.nugget_id, nugget=n.text, importance=n.importance, index=i)
    if not units:
        raise NuggetDeskError(f"{config.path}: no answer of a topic with a nugget list: "
                              "nothing to assign (irbench judge CONFIG --judge NAME --nuggets "
                              "makes the lists)")
    return units


class NuggetDesk(Desk):
    """The desk over (answer, nugget) units (see the module docstring)."""

    units: dict[str, NuggetUnit]
    answers: dict[str, list[str]]  # answer key -> its units' keys, in the list's order

    def _item(self, cand: int, who: Assessor, previous: int | None = None,
              again: bool = False, skipped: bool = False) -> Item:
        query_id, key = self._ids(cand)
        unit = self.units[key]
        rows = []
        for other in self.answers[unit.answer]:
            n = self.units[other]
            label = self.labels.get((who.name, candidate(self.state, query_id, other)))
            rows.append(NuggetRow(text=n.nugget, importance=n.importance, label=label))
        return NuggetItem(query_id=query_id, doc_id=key, topic=self.statement(query_id),
                          title="", text=unit.text, suggestion=None, again=again,
                          previous=previous, skipped=skipped,
                          ticket=self.ticket(who.name, query_id, key),
                          nuggets=tuple(rows), current=unit.index)


def _key_of(units: dict[str, NuggetUnit]) -> KeyOf:
    """A stored nugget label's unit key (labels of nuggets no longer listed: None)."""
    keys = {(u.query_id, u.run_id, u.nugget_id): k for k, u in units.items()}
    return lambda q, text, ref, run: keys.get((q, run, ref))


@contextmanager
def opened_nuggets(config: Any, pool: str, wait: float | None, options: Any
                   ) -> Iterator[tuple]:
    """(desk, store, documents) serving the answers' nugget units of the list
    ``options.nuggets`` to ``pool``'s people, open for the block."""
    judge = options.nuggets
    with Store(config.store, scope=config.scope, wait=wait) as store:
        live = store.live_nuggets(judge)
        lists = store.nugget_judges()
    if not live:
        known = ", ".join(terminal(name) for name in lists) or "none yet"
        raise NuggetDeskError(f"--nuggets {terminal(judge)}: the store has no nugget list of "
                              f"that judge (lists: {known}; irbench judge CONFIG --judge NAME "
                              "--nuggets makes one)")
    units = nugget_units(config, live)
    answers: dict[str, list[str]] = {}
    for key, unit in units.items():
        answers.setdefault(unit.answer, []).append(key)
    with opened_units(config, pool, wait, replace(options, order="docno"), units=units,
                      task=TASK, key_of=_key_of(units), desk_type=NuggetDesk,
                      what="document",
                      label_of=lambda u: {"query_id": u.query_id, "reference": u.nugget_id,
                                          "run_id": u.run_id}) as (desk, store, docs):
        assert isinstance(desk, NuggetDesk)
        desk.answers = answers
        desk.nugget_list = judge  # type: ignore[attr-defined]
        yield desk, store, docs


def nuggets_app(config: Any, pool: str, desk: Desk, store: Store, *, port: int,
                levels: tuple[int, ...], preselect: bool,
                screens: Iterable[Screen] | None = None, names: tuple[str, ...] = (),
                url: str = "", admin: str | None = None) -> Any:
    """The app serving the nugget screen over an open nugget desk
    (:func:`irbench.assess.answer_desk.answer_app`), with the organiser's list editor
    (:mod:`.nugget_edit`); ``/qrels`` the assignments as ``irbench qrels --nuggets`` writes
    them (nuggetizer's JSONL, rule majority)."""
    assert isinstance(desk, NuggetDesk)
    judge = desk.nugget_list  # type: ignore[attr-defined]
    topics = read_topics(config.topics)
    queries = {q: topics.statement(q)["title"] for q in topics.query_id}

    def export(columns: Any) -> str:
        if columns is None:
            return ""
        with desk.lock:
            live = store.live_nuggets(judge)
        made = nuggets_made(live, queries, columns, DEFAULT_RULE)
        return assignments_text(made.assignments)

    return answer_app(config, pool, desk, store, port=port, url=url, admin=admin, task=TASK,
                      screen=NUGGETS, key_of=_key_of(desk.units), unit="nuggets of answers",
                      export=export, links=((EDIT_PATH + "/", "Edit the nugget lists"),),
                      routes=edit_routes(config, desk, store, judge, topics))


NUGGETS_PATH = "/nuggets"
NUGGETS = register(Screen(name="nuggets", template="nuggets.html", page_type=AssessorPage,
                          page=three_key_page(KEYS, NUGGETS_PATH), parse_label=three_keys,
                          path=NUGGETS_PATH,
                          kind="nuggets"))


DESKS["nuggets"] = (opened_nuggets, nuggets_app)  # irbench assess --nuggets JUDGE
