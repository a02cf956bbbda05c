"""A desk over units of generated answers (the support screen's (sentence, cited segment)
units, the nugget screen's (answer, nugget) units): what the two share.

A unit is a candidate of a static pool (:func:`units_state`: every unit handed out, topic by
topic, the desk's rules for overlap, skips, undo and tickets), its "docno" a key that names no
run, team or model (a hash). A label is a row of ``answer_labels`` (the screen's task, the
assessor as judge, ``judge_kind`` human, ``pool`` NAME, ``source`` :data:`SOURCE`) committed
by the desk's :class:`~irbench.assess.writer.Writer` before the page moves on; a restarted
server rebuilds the units and replays those rows (:func:`stored_clicks`), so nothing
acknowledged is lost and a page open across the restart saves its next key. The pool's state
itself is never saved: it is rebuilt at each start (:func:`opened_units`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..documents import open_documents
from ..store import AnswerLabel, Click, Judgment, Store
from ..topics import read_topics
from ..trec import Run
from .app import Gate, build_app
from .contexts import AssessorPage, LevelKey, OrganiserView
from .desk import Desk, catch_up
from .failures import MALFORMED, BadRequest
from .organiser import organiser_view
from .roster import Roster
from .screens import Screen, Visit
from .serve import AssessError, page_text
from .writer import Writer

SOURCE = "assess"  # answer_labels.source of a label made at the desk

# (query_id, sentence_text, reference, run_id) of a stored label -> its unit's key, or None
KeyOf = Callable[[str, Any, str, Any], "str | None"]


def three_keys(body: dict, levels: tuple[int, ...]) -> int:
    """A judgment's label on an answer screen: ``body["support"]``, 2, 1 or 0, an integer
    (not a bool)."""
    label = body.get("support")
    if type(label) is not int or label not in (2, 1, 0):
        raise BadRequest(MALFORMED)
    return label


def three_key_page(keys: tuple[tuple[int, str], ...], path: str
                   ) -> Callable[[Visit], AssessorPage]:
    """The page of an answer screen mounted at ``path`` whose keys are ``keys`` ((label,
    name), in the order shown)."""
    def page(visit: Visit) -> AssessorPage:
        return AssessorPage(title=visit.title, nonce=visit.nonce, csrf=visit.csrf,
                            who=visit.who,
                            keys=tuple(LevelKey(level=level, name=name) for level, name in keys),
                            config={"levels": [level for level, _ in keys],
                                    "names": {str(level): name for level, name in keys},
                                    "api": path + "/api/"})
    return page


def units_state(keys: Sequence[tuple[str, str]], seed: int = 0) -> Any:
    """A pooling state whose candidates are the units ``(topic, key)``, every one handed out
    (a static plan: the desk's order within a topic, its rules across topics)."""
    from ..pooling import PoolingState
    from ..pooling.table import build_table

    run = Run(name="units", runid="units",
              query_id=np.array([q.encode("utf-8", "surrogateescape") for q, _ in keys],
                                dtype=np.bytes_),
              doc_id=np.array([k.encode() for _, k in keys], dtype=np.bytes_),
              score=np.arange(len(keys), 0, -1, dtype=np.float64),
              line=np.arange(1, len(keys) + 1, dtype=np.int64))
    state = PoolingState(build_table([("units", "units", run)]), "depth", k=len(keys) + 1,
                         seed=seed)
    state.next_batch()
    return state


def stored_clicks(store: Store, pool: str, task: str, key_of: KeyOf) -> list[Click]:
    """The desk's ``task`` labels of ``pool``'s assessors (in the order recorded) as the
    desk's clicks, keyed by unit (``key_of``); labels of units no longer served (a run
    changed, a nugget edited since) are left out."""
    names = [a.name for a in store.assessors(pool)]
    if not names:
        return []
    columns = store.answer_label_columns(task, names)
    rows = sorted(zip(columns["position"].tolist(), columns["query_id"].tolist(),
                      columns["sentence_text"].tolist(), columns["reference"].tolist(),
                      columns["run_id"].tolist(), columns["label"].tolist(),
                      columns["judge"].tolist(), columns["judge_kind"].tolist()))
    clicks = []
    for _, q, text, ref, run, label, judge, kind in rows:
        key = key_of(q, text, ref, run) if kind == "human" else None
        if key is not None:
            clicks.append(Judgment(query_id=q, doc_id=key, relevance=int(label), judge=judge,
                                   pool=pool))
    return clicks


@contextmanager
def opened_units(config: Any, pool: str, wait: float | None, options: Any, *,
                 units: Mapping[str, Any], task: str, key_of: KeyOf,
                 label_of: Callable[[Any], dict], desk_type: type[Desk],
                 what: str) -> Iterator[tuple[Desk, Store, Any]]:
    """(desk, store, documents) serving ``units`` ({key: unit with a ``query_id``}, in the
    order to hand out) to ``pool``'s people, open for the block. ``label_of(unit)``: the
    :class:`~irbench.store.AnswerLabel` fields naming the unit (query_id, reference,
    sentence_text, run_id); ``what`` the collection's documents are called on the page."""
    if config.documents is None or config.topics is None:
        raise AssessError(f"{config.path}: assessors read the {what}s and the topics: give "
                          "collection.documents and collection.topics")
    topics = read_topics(config.topics)
    with Store(config.store, scope=config.scope, wait=wait) as store, \
            open_documents(config.documents) as docs:
        state = units_state([(u.query_id, key) for key, u in units.items()])
        clicks = stored_clicks(store, pool, task, key_of)
        catch_up(state, clicks, 0)

        def save(click: Click) -> Future:
            return writer.label(AnswerLabel(
                task=task, **label_of(units[click.doc_id]), label=int(click.relevance),
                judge=click.judge, judge_kind="human", pool=pool, source=SOURCE,
                seconds=click.seconds))

        def save_state(state: Any, applied: int) -> Future:
            done: Future = Future()  # rebuilt from the units and the labels at each start
            done.set_result(None)
            return done

        with Writer(store, pool) as writer:
            desk = desk_type(state, save=save, save_state=save_state,
                             document=lambda docno: page_text(docs, docno, what),
                             statement=topics.statement, suggestions={},
                             overlap=options.overlap, seed=state.seed, order=options.order,
                             batch=options.batch, secret=store.csrf_secret(pool))
            desk.units = dict(units)  # type: ignore[attr-defined]
            desk.replay(clicks, store.assessors(pool))
            yield desk, store, docs


def answer_app(config: Any, pool: str, desk: Desk, store: Store, *, port: int, url: str,
               admin: str | None, task: str, screen: Screen, key_of: KeyOf,
               export: Callable[[dict[str, np.ndarray] | None], str], unit: str,
               links: tuple[tuple[str, str], ...] = (),
               routes: Callable[[Gate], Iterable[Any]] | None = None) -> Any:
    """The app serving ``screen`` over an open answer desk (as
    :func:`irbench.assess.serve.assessment_app` serves a pool): the pool's people, the
    organiser's view of the desk's labels (no leaderboard; ``unit`` what is judged, ``links``
    the organiser's other pages), ``/qrels`` what ``export(columns)`` makes of the labels of
    ``task`` by the pool's people (:meth:`Store.answer_label_columns`; None: there are
    none), ``routes(gate)`` more routes (each guarded by the caller)."""
    roster = Roster(store, pool, desk, url or f"http://127.0.0.1:{port}/")
    with desk.lock:
        secret = store.csrf_secret(pool)

    def view() -> OrganiserView:
        with desk.lock:
            clicks, people = stored_clicks(store, pool, task, key_of), store.assessors(pool)
        return organiser_view(desk, clicks, people, leaderboard=False, unit=unit, links=links)

    def labels() -> str:
        with desk.lock:
            names = [a.name for a in store.assessors(pool)]
            columns = store.answer_label_columns(task, names) if names else None
        if columns is None or not len(columns["label"]):
            columns = None
        return export(columns)

    gate = Gate(roster.lookup, port, secret=secret, admin=admin)
    return build_app(desk, gate, title=config.name, levels=(2, 1, 0), preselect=False,
                     organiser_view=view, export=labels, screens=[screen], people=roster,
                     routes=routes(gate) if routes is not None else ())
