"""Putting the assessment server together: the campaign's pool, documents and topics, the
store, the desk, the app, and uvicorn serving it until Ctrl-C."""

from __future__ import annotations

import copy
import secrets
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

from starlette.applications import Starlette

from ..documents import open_documents
from ..errors import IrbenchError
from ..escaping import terminal
from ..ids import id_text
from ..judgments import POOL_RULE
from ..judgments import made as made_qrels
from ..pooling import PoolingState, load_state
from ..pooling.persist import encode_state
from ..store import Assessor, Store
from ..topics import read_topics
from .app import Gate, build_app, token_sha256
from .contexts import OrganiserView
from .desk import Desk, catch_up
from .organiser import organiser_view
from .people import check_name, check_topics
from .screens import Screen
from .writer import Writer

PAGE_CHARS = 1_000_000  # of a document's text on the assessor's page (a longer one is cut)


class AssessError(IrbenchError):
    """A campaign that cannot be assessed as asked (no such pool, no documents ...)."""


def add_assessor(config, pool: str, name: str, topics: tuple[str, ...], role: str,
                 wait: float | None) -> str:
    """Add ``name`` (or give them a new token) for ``pool``; returns the token (stored only
    as its sha256). The name and topics are checked first (:mod:`.people`): topics must be
    the pool's; a name of another pool, or of the other role, is refused."""
    check_name(name)
    if topics and role != "assessor":
        raise AssessError("--topics is for assessors: an organiser sees every topic")
    if topics:
        table = config.run_table()  # MissingRunsError naming each missing run file
        check_topics(topics, [id_text(t) for t in table.topics], pool)
    token = secrets.token_urlsafe(24)
    with Store(config.store, wait=wait) as store:
        if store.load_pool(pool) is None:
            raise AssessError(f"no pool '{pool}' in {config.store} (irbench pool start "
                              f"{config.path} --name {pool})")
        other = store.assessor_pool(name)
        if other is not None and other != pool:
            raise AssessError(f"'{name}' assesses pool '{other}' already: choose another "
                              "name for this pool")
        known = next((a for a in store.assessors(pool) if a.name == name), None)
        if known is not None and known.role != role:
            flag = ("without --organiser" if known.role == "organiser" else
                    "with --organiser")
            raise AssessError(f"'{name}' is an {known.role} of pool '{pool}' already: run "
                              f"--add-assessor {name} {flag} for a new link, or choose "
                              f"another name for the {role}")
        store.add_assessor(Assessor(name=name, role=role, topics=topics, pool=pool),
                           token_sha256(token))
    return token


@contextmanager
def opened(config, pool: str, wait: float | None, overlap: float) -> Iterator[tuple]:
    """(desk, store, documents) of ``pool``, open for the block."""
    if config.documents is None or config.topics is None:
        raise AssessError(f"{config.path}: assessors read the documents and the topics: give "
                          "collection.documents and collection.topics")
    table = config.run_table()  # MissingRunsError naming each missing run file
    topics = read_topics(config.topics)
    with Store(config.store, wait=wait) as store, open_documents(config.documents) as docs:
        state = load_state(store, pool, table)
        if state is None:
            raise AssessError(f"no pool '{pool}' in {config.store} (irbench pool start "
                              f"{config.path} --name {pool})")
        clicks = store.clicks(pool)
        catch_up(state, clicks, store.clicks_applied(pool))

        def save_state(state: PoolingState, applied: int) -> Future:
            return writer.state(state.strategy.name, copy.deepcopy(state.to_dict()), applied)

        def document(docno: str) -> tuple[str, str]:
            if docno not in docs:  # docnos as irbench.ids.id_text gives them, in both
                return "", f"(document {docno} is not in the collection)"
            doc = docs.get(docno, PAGE_CHARS)
            cut = "\n\n(cut here: the document is longer)" if len(doc.text) == PAGE_CHARS else ""
            return doc.title, doc.text + cut

        store.save_pool_state(pool, state.strategy.name, *encode_state(state.to_dict()),
                              len(clicks))  # caught up: the next start replays nothing
        with Writer(store, pool) as writer:
            desk = Desk(state, save=writer.click, save_state=save_state, document=document,
                        statement=topics.statement, suggestions=store.model_labels(),
                        overlap=overlap, seed=state.seed)
            desk.replay(clicks)
            yield desk, store, docs


def assessment_app(config, pool: str, desk: Desk, store: Store, *, port: int,
                   levels: tuple[int, ...], preselect: bool,
                   screens: Iterable[Screen] | None = None,
                   names: tuple[str, ...] = ()) -> Starlette:
    """The app serving ``pool`` (:func:`~irbench.assess.app.build_app`) over an open desk and
    store (:func:`opened`): the assessors' tokens as the store holds them now, the
    organiser's view and the qrels export read under the desk's lock."""
    with desk.lock:  # one DuckDB connection: every use under the desk's lock
        known = store.assessor_tokens(pool)  # none can be added while the store is held

    def lookup(sha: str) -> Assessor | None:
        return known.get(sha)

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

    return build_app(desk, Gate(lookup, port), title=config.name, levels=levels,
                     preselect=preselect, organiser_view=view, export=export,
                     screens=screens, names=names)


def serve(config, pool: str, *, host: str, port: int, overlap: float, preselect: bool,
          wait: float | None, url: str, levels: tuple[int, ...],
          names: tuple[str, ...] = ()) -> int:
    import uvicorn  # the assess extra

    with opened(config, pool, wait, overlap) as (desk, store, _):
        app = assessment_app(config, pool, desk, store, port=port, levels=levels,
                             preselect=preselect, names=names)
        with desk.lock:
            people = store.assessors(pool)
        print(f"irbench assess: pool '{terminal(pool)}' at {terminal(url)}", flush=True)
        for a in people:
            topics = ", ".join(a.topics) or "all"
            print(f"  {a.role} {terminal(a.name)}: topics {terminal(topics)} (the link was "
                  "printed when added; --add-assessor NAME gives a new one)", flush=True)
        if not people:
            print("  no assessor yet: irbench assess CONFIG --pool NAME --add-assessor NAME",
                  file=sys.stderr, flush=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False,
                    timeout_graceful_shutdown=5)
        desk.checkpoint()
    return 0
