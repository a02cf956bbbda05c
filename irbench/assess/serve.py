"""Putting the assessment server together: the campaign's pool, documents and topics, the
store, the desk, the app, and uvicorn serving it until Ctrl-C."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from starlette.applications import Starlette

from ..documents import open_documents
from ..errors import IrbenchError
from ..escaping import terminal
from ..ids import id_bytes
from ..judgments import POOL_RULE
from ..judgments import made as made_qrels
from ..pooling import PoolingState, load_state
from ..pooling.persist import encode_state
from ..store import Store
from ..topics import read_topics
from .app import Gate, build_app
from .contexts import OrganiserView
from .desk import Desk, catch_up
from .organiser import organiser_view
from .roster import (
    Change,
    Roster,
    Runtime,
    in_store,
    local_url,
    publish,
    runtime_path,
    withdraw,
)
from .screens import Screen, screens_of
from .writer import Writer

PAGE_CHARS = 1_000_000  # of a document's text on the assessor's page (a longer one is cut)


class AssessError(IrbenchError):
    """A campaign that cannot be assessed as asked (no such pool, no documents ...)."""


def add_assessor(config, pool: str, name: str, topics: tuple[str, ...], role: str,
                 wait: float | None) -> str:
    """Add ``name`` (or give them a new token) for ``pool`` in the store (no server holding
    it); returns the token (stored only as its sha256). Checked by
    :func:`~irbench.assess.roster.enrol`: topics must be the pool's; a name of another pool,
    or of the other role, is refused."""
    made = in_store(config, pool, Change("add", name, topics, role), wait=wait, url="")
    return made.link.rsplit("token=", 1)[1]


@dataclass(frozen=True)
class DeskOptions:
    """How the desk hands out a pool (``irbench assess`` options): ``overlap`` the fraction
    judged twice; ``order`` of the documents within a topic (``shuffle`` by the pool's seed,
    or ``docno``); ``batch`` documents of a topic an adaptive strategy hands out at a time;
    ``suggest`` the model judge whose labels of this pool are shown as suggestions (None:
    none); ``nuggets`` the nugget list assessors assign (``--nuggets JUDGE``)."""

    overlap: float = 0.1
    order: str = "shuffle"
    batch: int = 10
    suggest: str | None = None
    nuggets: str | None = None


@contextmanager
def opened(config, pool: str, wait: float | None, options: DeskOptions) -> Iterator[tuple]:
    """(desk, store, documents) of ``pool``, open for the block."""
    if config.documents is None or config.topics is None:
        raise AssessError(f"{config.path}: assessors read the documents and the topics: give "
                          "collection.documents and collection.topics")
    table = config.run_table()  # MissingRunsError naming each missing run file
    topics = read_topics(config.topics)
    with Store(config.store, scope=config.scope, wait=wait) as store, \
            open_documents(config.documents) as docs:
        state = load_state(store, pool, table)
        if state is None:
            raise AssessError(f"no pool '{pool}' in {config.store} (irbench pool start "
                              f"{config.path} --name {pool})")
        suggestions = suggested(store, state, pool, options.suggest)
        clicks = store.clicks(pool)
        catch_up(state, clicks, store.clicks_applied(pool))

        def save_state(state: PoolingState, applied: int) -> Future:
            return writer.state(state.strategy.name, state.to_dict(), applied)  # copies

        store.save_pool_state(pool, state.strategy.name, *encode_state(state.to_dict()),
                              len(clicks))  # caught up: the next start replays nothing
        with Writer(store, pool) as writer:
            desk = Desk(state, save=writer.click, save_state=save_state,
                        document=lambda docno: page_text(docs, docno, "document"),
                        statement=topics.statement, suggestions=suggestions,
                        overlap=options.overlap, seed=state.seed, order=options.order,
                        batch=options.batch, secret=store.csrf_secret(pool))
            desk.replay(clicks, store.assessors(pool))
            yield desk, store, docs


def page_text(docs: Any, docno: str, what: str) -> tuple[str, str]:
    """(title, text) of a document of the collection (``docno`` as irbench.ids.id_text gives
    it) as a page shows it: cut at :data:`PAGE_CHARS`, saying so; a missing one says so
    (``what``: what the page calls it, document or segment)."""
    if docno not in docs:
        return "", f"({what} {docno} is not in the collection)"
    doc = docs.get(docno, PAGE_CHARS)
    cut = f"\n\n(cut here: the {what} is longer)" if len(doc.text) == PAGE_CHARS else ""
    return doc.title, doc.text + cut


def suggested(store: Store, state: PoolingState, pool: str, judge: str | None
              ) -> dict[tuple[str, str], int]:
    """The model judge ``judge``'s labels of the documents of ``pool`` (none without a judge;
    a label of the same topic and document asked for another pool is the same label);
    AssessError when it has labelled none of them."""
    if judge is None:
        return {}
    found = store.model_labels(judge)
    pairs = list(found)
    table = state.table
    topic = table.topic_lookup(np.array([id_bytes(q) for q, _ in pairs], dtype=object
                                        ).astype(bytes))
    cand = table.lookup(topic, np.array([id_bytes(d) for _, d in pairs], dtype=object
                                        ).astype(bytes))
    labels = {pair: found[pair] for pair, c in zip(pairs, cand.tolist()) if c >= 0}
    if not labels:
        raise AssessError(f"--suggest {terminal(judge)}: that judge has no labels for the "
                          f"documents of pool '{terminal(pool)}' (irbench judge CONFIG --judge "
                          f"{terminal(judge)} --pool {terminal(pool)} first)")
    return labels


def assessment_app(config, pool: str, desk: Desk, store: Store, *, port: int,
                   levels: tuple[int, ...], preselect: bool,
                   screens: Iterable[Screen] | None = None,
                   names: tuple[str, ...] = (), url: str = "",
                   admin: str | None = None) -> Starlette:
    """The app serving ``pool`` (:func:`~irbench.assess.app.build_app`) over an open desk and
    store (:func:`opened`): the people as the store holds them, changed while it runs
    (:class:`~irbench.assess.roster.Roster`; ``url`` in the links it makes, ``admin`` the
    runtime file's secret), the pool's CSRF secret, the organiser's view and the qrels export
    read under the desk's lock."""
    roster = Roster(store, pool, desk, url or f"http://127.0.0.1:{port}/")
    with desk.lock:  # one DuckDB connection: every use under the desk's lock
        secret = store.csrf_secret(pool)  # the same on every start: open pages keep working

    def view() -> OrganiserView:
        with desk.lock:
            clicks, people = store.clicks(pool), store.assessors(pool)
        return organiser_view(desk, clicks, people)

    def export() -> str:
        """The pool's qrels as ``irbench qrels --pool`` writes them, byte for byte (one
        function, :func:`irbench.judgments.rules.made`): the store's judgments of the pool
        by the pool's rule (the desk's), then the -1 lines of a sampling strategy."""
        with desk.lock:
            columns, qrels = store.judgment_columns(pool), desk.state.qrels()
        return made_qrels(columns, POOL_RULE, (), qrels).text

    return build_app(desk, Gate(roster.lookup, port, secret=secret, admin=admin),
                     title=config.name, levels=levels, preselect=preselect,
                     organiser_view=view, export=export,
                     screens=screens_of("pool") if screens is None else screens, names=names,
                     people=roster)


# What a server serves: a pool of documents (this module), the support units of answer runs, or
# their (answer, nugget) units (irbench.assess.support and .nuggets register their desks here
# when imported, as irbench.assess does)
DESKS: dict[str, tuple[Any, Any]] = {"pool": (opened, assessment_app)}


def serve(config, pool: str, *, host: str, port: int, options: DeskOptions, preselect: bool,
          wait: float | None, url: str, levels: tuple[int, ...],
          names: tuple[str, ...] = (), desk_kind: str = "pool") -> int:
    """Serve ``pool`` (``desk_kind`` 'support': the answer runs' support units to the pool's
    people, :mod:`.support`; 'nuggets': their (answer, nugget) units, :mod:`.nuggets`) until
    Ctrl-C."""
    import uvicorn  # the assess extra

    opener, make_app = DESKS[desk_kind]
    with opener(config, pool, wait, options) as (desk, store, _):
        try:  # the command line changes people through the server while it runs
            runtime: Runtime | None = publish(config.store, local_url(host, port), pool)
        except OSError as exc:
            runtime = None
            print(f"irbench: warning: {terminal(runtime_path(config.store))}: cannot be "
                  f"written ({terminal(exc.strerror or str(exc))}): people can be changed "
                  "on the organiser's page only while the server runs", file=sys.stderr)
        app = make_app(config, pool, desk, store, port=port, levels=levels,
                       preselect=preselect, names=names, url=url,
                       admin=runtime.secret if runtime else None)
        with desk.lock:
            people = store.assessors(pool)
        print(f"irbench assess: pool '{terminal(pool)}' at {terminal(url)}", flush=True)
        for a in people:
            topics = ", ".join(a.topics) or "all"
            link = ("revoked" if a.revoked else "the link was printed when added; "
                    "--add-assessor NAME gives a new one")
            print(f"  {a.role} {terminal(a.name)}: topics {terminal(topics)} ({link})",
                  flush=True)
        if not people:
            print("  no assessor yet: irbench assess CONFIG --pool NAME --add-assessor NAME",
                  file=sys.stderr, flush=True)
        try:
            uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False,
                        timeout_graceful_shutdown=5)
        finally:
            if runtime is not None:
                withdraw(config.store, runtime)
        desk.checkpoint()
    return 0
