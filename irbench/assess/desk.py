"""The judging desk: a pool being judged (``irbench pool start``) by assessors in the browser,
without HTTP (the web app, :mod:`.app`, calls it).

The pool's state (:class:`~irbench.pooling.PoolingState`) is held in memory behind one lock.
Every click is a row in the store (its judgment, :meth:`Store.save_clicks`), committed before
:meth:`Desk.judge` returns (by the server's :class:`~irbench.assess.writer.Writer`, outside the
lock); the state itself is saved when the strategy hands out documents (with the number of
clicks it has applied), and loading it applies the clicks made since (:func:`catch_up`): a
server killed at any moment loses nothing acknowledged, and a restarted one continues from the
store. A click costs one row in the store, not a copy of the state.

* **Topic by topic**: an assessor keeps a topic until nothing of it is left for them (its
  documents judged, its budget spent, or, for a strategy spending one budget across topics,
  its priority no longer the top), then takes the next topic they may judge: one no other
  assessor holds first (the strategy's choice among them: :meth:`PoolingState.next_topics`),
  then one shared with another assessor. Adaptive strategies (MTF, bandits) hand out
  ``batch`` documents of the assessor's topic at a time, chosen from the judgments made so
  far; static ones hand out their plan at once. An assessor holds one document at a time
  (two tabs show the same one).
* **An order that tells nothing**: within a topic, the pending documents come in a seeded
  shuffle (``order="shuffle"``, by the pool's seed: the same on every restart) or by docno
  (``order="docno"``), never by rank or run; second labels the same way.
* **Rules**: the first label of a document is the pool's; an assessor's later label of the same
  document (undo, another tab) replaces it. A second assessor's label of an overlap document
  (``overlap``: that fraction of documents, drawn by the seed, is judged twice when another
  assessor has the topic) is kept for agreement and never changes the pool's.
* **Skips**: a skipped document goes to the end of the assessor's queue of the topic; when
  only documents the assessor skipped are left pending in the topic, the one skipped longest
  ago comes back (``Item.skipped``). A skip never makes the strategy hand out more: it
  advances only when nothing of the topic is pending, so skipping cannot empty a pool, and
  the pool is complete only once every document handed out is judged
  (:attr:`PoolingState.complete`). Progress counts skips apart.
* **Ids**: topic ids and docnos are shown, stored and exported as :func:`irbench.ids.id_text`
  gives them (an undecodable byte as ``\\xNN``), and looked up by every form that text may
  stand for (:func:`candidate`); what the store keeps is the pool's own id, never the text a
  request sent.
* **Blind**: an :class:`Item` holds the topic's statement and the document, never the runs,
  ranks or groups that brought it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import numpy as np

from ..errors import JudgmentError
from ..ids import id_candidates, id_text
from ..pooling.state import JUDGED, PENDING, PoolingState
from ..store import Assessor, Click
from .contexts import Item, Progress, TopicProgress

OUTSIDE = "\0outside"  # the first judge of a document judged before the browser (a file)


def text(value: bytes) -> str:
    """An id of the pool's table as the desk shows and stores it (:func:`irbench.ids.id_text`)."""
    return id_text(value)


def candidate(state: PoolingState, query_id: str, doc_id: str) -> int:
    """The candidate of (topic, docno) given as text (a page's, the store's), or -1: each
    bytes the text may stand for is tried (:func:`irbench.ids.id_candidates`)."""
    for q in id_candidates(query_id):
        for d in id_candidates(doc_id):
            found = state.candidate(q, d)
            if found >= 0:
                return found
    return -1


def catch_up(state: PoolingState, clicks: Sequence[Click], applied: int) -> None:
    """Apply to a loaded ``state`` the browser clicks made after it was saved (``clicks`` as
    :meth:`Store.clicks` gives them, ``applied`` of them in the state), by the desk's rules:
    a pending document takes its first label; its first assessor's later label replaces it;
    anyone else's is a second label, not the pool's."""
    first: dict[int, str] = {}
    for i, click in enumerate(clicks):
        cand = candidate(state, click.query_id, click.doc_id)
        if cand < 0:
            continue
        if i >= applied:
            if state.status[cand] == PENDING:
                state.judge(cand, int(click.relevance))
            elif first.get(cand) == click.judge and state.status[cand] == JUDGED:
                state.relabel(cand, int(click.relevance))
        first.setdefault(cand, click.judge)


class Desk:
    """See the module docstring. ``save(click)`` and ``save_state(state, clicks applied)``
    queue a write (done when committed; in the order queued); ``document(docno)`` gives
    (title, text); ``statement(query_id)`` the topic's fields; ``suggestions`` the model
    labels."""

    def __init__(self, state: PoolingState, *, save: Callable[[Click], Future],
                 save_state: Callable[[PoolingState, int], Future],
                 document: Callable[[str], tuple[str, str]],
                 statement: Callable[[str], dict[str, str]],
                 suggestions: dict[tuple[str, str], int],
                 overlap: float = 0.0, seed: int = 0, order: str = "shuffle",
                 batch: int = 10, secret: bytes | None = None):
        self.state, self.save, self.save_state = state, save, save_state
        self.document, self.statement, self.suggestions = document, statement, suggestions
        self.clicks = 0  # clicks recorded in the store for this pool
        self.overlap, self.seed, self.batch = overlap, seed, batch
        # the tickets' key: from the pool's secret (the same after a restart), else this run's
        self._tickets = hmac.new(secret or secrets.token_bytes(32), b"irbench tickets",
                                 hashlib.sha256).digest()
        self.key = order_key(state, order, seed)  # per candidate: its place in the order
        self.topic_of: dict[str, int] = {}  # assessor -> the topic they hold (its index)
        self._shared: tuple[np.ndarray, np.ndarray] | None = None  # see _shares
        self.people: dict[str, Assessor] = {}  # assessor -> as last seen (their topics)
        self.lock = threading.Lock()
        self.held: dict[str, int] = {}          # assessor -> candidate on their page
        self.last: dict[str, list[int]] = {}    # assessor -> candidates judged, in order
        self.judges: dict[int, list[str]] = {}  # candidate -> assessors who judged it
        # assessor -> candidates put aside (this run), the one skipped longest ago first
        self.skipped: dict[str, dict[int, None]] = {}
        self.redo: dict[str, int] = {}          # assessor -> candidate taken back by undo
        self.labels: dict[tuple[str, int], int] = {}  # (assessor, candidate) -> their label
        C = len(state.status)
        self.second = np.zeros(C, dtype=bool)  # overlap documents waiting for a second label
        self.first = np.full(C, -1, dtype=np.int64)  # per document: its first judge's code
        self.codes: dict[str, int] = {}  # judge -> code (their index, in order seen)
        self.board: tuple | None = None  # the organiser's leaderboard, with what it rests on
        self.topics = [text(t) for t in state.table.topics]
        self._wanted: dict[tuple[str, ...], np.ndarray] = {}  # topics -> mask per candidate
        topic = state.table.cand_topic
        by = np.argsort(topic, kind="stable")
        cuts = np.searchsorted(topic[by], np.arange(len(self.topics) + 1))
        self._in: list[np.ndarray] = [by[a:b] for a, b in zip(cuts[:-1], cuts[1:])]

    # -- restoring from the store

    def replay(self, clicks: Sequence[Click], people: Sequence[Assessor] = ()) -> None:
        """Who judged what, from the store's clicks (after a restart), and who holds which
        topic (the one of their last click), among ``people`` (the pool's assessors). A
        document judged before any click (``irbench pool judge -j FILE``) keeps that label as
        the pool's."""
        self.people.update((a.name, a) for a in people
                           if a.role == "assessor" and not a.revoked)
        for cand in np.flatnonzero(self.state.status == JUDGED).tolist():
            self.judges[cand] = [OUTSIDE]
        firsts = {(c.query_id, c.doc_id) for c in clicks}
        for q, d in firsts:  # ... unless the browser judged it first
            cand = candidate(self.state, q, d)
            if cand >= 0 and self.judges.get(cand) == [OUTSIDE]:
                del self.judges[cand]
        self.clicks = len(clicks)
        for click in clicks:
            judge, relevance = click.judge, click.relevance
            cand = candidate(self.state, click.query_id, click.doc_id)
            if cand < 0:
                continue
            self.labels[(judge, cand)] = int(relevance)
            self.last.setdefault(judge, []).append(cand)
            if judge not in self.judges.setdefault(cand, []):
                self.judges[cand].append(judge)
            if judge in self.people and self.judges[cand][0] == judge:
                self._claim(judge, int(self.state.table.cand_topic[cand]))
        for c, names in self.judges.items():
            self.first[c] = self._code(names[0])
            self.second[c] = len(names) == 1 and names[0] != OUTSIDE and self._overlap(c)

    # -- what an assessor sees

    def next_for(self, who: Assessor) -> Item | None:
        with self.lock:
            self.people[who.name] = who
            if who.name in self.redo:  # undone: judged again before anything else
                back = self.redo[who.name]
                return self._item(back, who, previous=self.labels.get((who.name, back)),
                                  again=True)
            cand = self.held.get(who.name)
            if cand is None or self._judged_by(cand, who.name):
                cand = self._choose(who)
            if cand is None:
                self.held.pop(who.name, None)
                return None
            self.held[who.name] = cand
            return self._item(cand, who, skipped=cand in self.skipped.get(who.name, {}))

    def _mine(self, who: Assessor) -> np.ndarray:
        """Per candidate: whether its topic is the assessor's."""
        found = self._wanted.get(who.topics)
        if found is None:
            found = self._wanted[who.topics] = self._my_topics(who)[self.state.table.cand_topic]
        return found

    def _my_topics(self, who: Assessor) -> np.ndarray:
        """Per topic: whether it is the assessor's."""
        chosen = set(who.topics)
        return np.array([not chosen or t in chosen for t in self.topics], dtype=bool)

    def _choose(self, who: Assessor) -> int | None:
        """What the assessor judges next: in the topic they hold (:meth:`_in_topic`), else in
        the next topic they may take: one nobody else holds first, the strategy's choice among
        them (:meth:`PoolingState.next_topics`), which becomes theirs; else, for second labels
        only, one another assessor holds (theirs stays theirs)."""
        taken = np.zeros(len(self.state.status), dtype=bool)
        taken[[c for a, c in self.held.items() if a != who.name]] = True
        held = self.topic_of.get(who.name)
        mine = self._my_topics(who)
        if held is not None and mine[held]:
            found = self._in_topic(who, held, taken)
            if found is not None:
                return found
        others = self._held_topics(who)
        status, topic = self.state.status, self.state.table.cand_topic
        waiting = np.zeros(len(self.topics), dtype=bool)  # something handed out, for them
        waiting[topic[(status == PENDING) & ~taken]] = True
        waiting[topic[self._second_for(who)]] = True
        free = mine & ~others
        order = [*np.flatnonzero(free & waiting).tolist(),
                 *self.state.next_topics(free & ~waiting).tolist(),
                 *np.flatnonzero(mine & others & waiting).tolist()]  # second labels only
        self.topic_of.pop(who.name, None)  # theirs is done
        for t in order:
            if t != held:
                found = self._in_topic(who, t, taken, shared=bool(others[t]))
                if found is not None:
                    if not others[t]:
                        self.topic_of[who.name] = t
                    return found
        return None

    def _code(self, name: str) -> int:
        return self.codes.setdefault(name, len(self.codes))

    def _second_for(self, who: Assessor | None) -> np.ndarray:
        """Per document: a second label is wanted from ``who`` (from anyone with None)."""
        if who is None:
            return self.second
        return self.second & (self.first != self.codes.get(who.name, -2))

    def _claim(self, name: str, t: int) -> None:
        """``name`` holds topic ``t`` (their last first label was of it), nobody else."""
        for other in [a for a, held in self.topic_of.items() if held == t and a != name]:
            del self.topic_of[other]
        self.topic_of[name] = t

    def let_go(self, name: str, keep: Callable[[str], bool]) -> None:
        """What ``name`` holds (the document on their page, one taken back by an undo, their
        topic) of a topic ``keep`` refuses goes back to the others: ``name`` was revoked, or
        given other topics. The caller holds :attr:`lock`."""
        topic_of = self.state.table.cand_topic
        for held in (self.held, self.redo):
            cand = held.get(name)
            if cand is not None and not keep(self.topics[topic_of[cand]]):
                del held[name]
        topic = self.topic_of.get(name)
        if topic is not None and not keep(self.topics[topic]):
            del self.topic_of[name]

    def _held_topics(self, who: Assessor) -> np.ndarray:
        """Per topic: whether another assessor holds it (and may still judge it)."""
        held = np.zeros(len(self.topics), dtype=bool)
        for name, t in self.topic_of.items():
            other = self.people.get(name)
            if name != who.name and other is not None and self._my_topics(other)[t]:
                held[t] = True
        return held

    def _in_topic(self, who: Assessor, t: int, taken: np.ndarray, shared: bool = False
                  ) -> int | None:
        """The assessor's next document of topic ``t``: a second label wanted, else a pending
        document nobody holds (in the desk's order), else one they skipped (the one skipped
        longest ago); only when none of these is left, the strategy hands out more (if the
        topic may still have some: :meth:`_more`) and the search starts again. In a topic
        another assessor holds (``shared``), second labels only."""
        cands = self._in[t]
        skipped = self.skipped.get(who.name, {})
        aside = np.fromiter(skipped, dtype=np.int64, count=len(skipped))
        me = self.codes.get(who.name, -2)
        for _ in range(2):
            second = cands[self.second[cands] & (self.first[cands] != me) & ~taken[cands]]
            pending = cands[(self.state.status[cands] == PENDING) & ~taken[cands]]
            if shared:
                pending = pending[:0]
            for left in (second, pending):
                fresh = left[~np.isin(left, aside)]
                if len(fresh):
                    return int(fresh[np.argmin(self.key[fresh])])
            if len(second) or len(pending):  # only what they skipped is left
                left = set(second.tolist()) | set(pending.tolist())
                return next(c for c in skipped if c in left)
            if shared or not self._more(who, t):
                return None
        return None

    def _more(self, who: Assessor, t: int) -> bool:
        """Hand out more documents of topic ``t`` if the strategy has some for it now (the
        state is saved then); whether it did."""
        state = self.state
        if not self._shares()[0][t]:
            return False
        if state.strategy.adaptive:
            allowed = np.zeros(len(self.topics), dtype=bool)
            allowed[t] = True
            if state.strategy.scope == "global":  # while its priority is the top one
                if t not in state.next_topics(self._my_topics(who)).tolist():
                    return False
            handed = state.next_batch(self.batch, topics=allowed)
        else:  # a plan: handed out at once (the order within a topic is the desk's)
            handed = state.next_batch()
        self._shared = None  # what a topic may still be handed has changed
        if len(handed) == 0:
            return False
        self.save_state(state, self.clicks)  # hand-outs: the state is saved
        return True

    def _shares(self) -> tuple[np.ndarray, np.ndarray]:
        """Per topic: whether it can still be handed documents, and its share of the pool
        (:meth:`PoolingState.open_topics`, :meth:`PoolingState.planned`), kept until the
        strategy hands out again (only hand-outs change them; a judgment does not)."""
        if self._shared is None:
            self._shared = (self.state.open_topics(), self.state.planned())
        return self._shared

    def _overlap(self, cand: int) -> bool:
        """Whether this document is one of the ``overlap`` fraction judged twice (a hash of
        the seed and the document: the same on every restart)."""
        if self.overlap <= 0:
            return False
        digest = hashlib.sha256(f"{self.seed}:{cand}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.overlap

    def _judged_by(self, cand: int, name: str) -> bool:
        return name in self.judges.get(cand, [])

    def _ids(self, cand: int) -> tuple[str, str]:
        """(topic id, docno) of a candidate as the desk shows and stores them."""
        table = self.state.table
        return self.topics[table.cand_topic[cand]], text(table.docs[table.cand_doc[cand]])

    def _item(self, cand: int, who: Assessor, previous: int | None = None,
              again: bool = False, skipped: bool = False) -> Item:
        query_id, doc_id = self._ids(cand)
        title, body = self.document(doc_id)
        suggestion = self.suggestions.get((query_id, doc_id))
        return Item(query_id=query_id, doc_id=doc_id, topic=self.statement(query_id),
                    title=title, text=body, suggestion=suggestion, again=again,
                    previous=previous, skipped=skipped,
                    ticket=self.ticket(who.name, query_id, doc_id))

    def ticket(self, name: str, query_id: str, doc_id: str) -> str:
        """The proof that (topic, docno) was handed to ``name``: an HMAC under the pool's
        secret, sent back with the judgment, so that a page open across a restart (which
        forgets who held what) is still taken."""
        message = "\0".join((name, query_id, doc_id)).encode("utf-8", "surrogateescape")
        return hmac.new(self._tickets, message, hashlib.sha256).hexdigest()

    # -- what an assessor does

    def judge(self, who: Assessor, query_id: str, doc_id: str, relevance: int,
              seconds: float, ticket: str = "") -> None:
        """Record a label (see the rules in the module docstring); returns once it is
        committed to the store."""
        self.record(who, query_id, doc_id, relevance, seconds, ticket).result()

    def record(self, who: Assessor, query_id: str, doc_id: str, relevance: int,
               seconds: float, ticket: str = "") -> Future:
        """:meth:`judge`, returning at once: the future is done when the label is committed
        (the server answers then). The document must be the one the assessor holds (or took
        back by undo, or judged before); or, with its ``ticket`` (:meth:`ticket`), one handed
        to them that is still to judge and nobody else holds (a page open across a
        restart)."""
        with self.lock:
            cand = candidate(self.state, query_id, doc_id)
            if cand < 0 or not self._mine(who)[cand]:
                raise JudgmentError([f"{id_text(query_id)} {id_text(doc_id)}: not a document "
                                     f"of this pool for {who.name}"])
            query_id, doc_id = self._ids(cand)  # the pool's own ids, whatever was sent
            status = self.state.status[cand]
            names = self.judges.setdefault(cand, [OUTSIDE] if status == JUDGED else [])
            given = cand in (self.held.get(who.name), self.redo.get(who.name)) or \
                self._ticketed(who, cand, query_id, doc_id, ticket)
            if not given and who.name not in names:
                raise JudgmentError([f"{query_id} {doc_id}: not handed to {who.name}"])
            if status == PENDING:
                self.state.judge(cand, relevance)
            elif status == JUDGED and names and names[0] == who.name:
                self.state.relabel(cand, relevance)  # the same assessor again: the latest
            elif status != JUDGED:
                raise JudgmentError([f"{query_id} {doc_id}: not handed out yet"])
            saved = self.save(Click(query_id=query_id, doc_id=doc_id, relevance=relevance,
                                    judge=who.name, seconds=seconds,
                                    suggested=self.suggestions.get((query_id, doc_id))))
            self.clicks += 1
            if who.name not in names:
                names.append(who.name)
            self.first[cand] = self._code(names[0])
            self.second[cand] = len(names) == 1 and names[0] != OUTSIDE and self._overlap(cand)
            self.labels[(who.name, cand)] = relevance
            self.last.setdefault(who.name, []).append(cand)
            if self.held.get(who.name) == cand:
                del self.held[who.name]
            if self.redo.get(who.name) == cand:
                del self.redo[who.name]
            self.skipped.get(who.name, {}).pop(cand, None)
        return saved

    def _ticketed(self, who: Assessor, cand: int, query_id: str, doc_id: str,
                  ticket: str) -> bool:
        """Whether ``ticket`` shows ``cand`` was handed to ``who`` and they may still judge
        it: pending, or a second label wanted from them, and held by nobody else."""
        if not ticket or not hmac.compare_digest(
                ticket.encode("utf-8", "replace"),
                self.ticket(who.name, query_id, doc_id).encode()):
            return False
        if any(c == cand for a, c in self.held.items() if a != who.name):
            return False
        if self.state.status[cand] == PENDING:
            return True
        return bool(self._second_for(who)[cand])

    def skip(self, who: Assessor, query_id: str, doc_id: str) -> Item | None:
        """Put the document aside (it comes back when nothing else of the assessor's is
        pending; see the module docstring); the next one."""
        with self.lock:
            cand = candidate(self.state, query_id, doc_id)
            if cand >= 0 and self._mine(who)[cand]:
                skipped = self.skipped.setdefault(who.name, {})
                skipped.pop(cand, None)
                skipped[cand] = None  # skipped again: the last of them
                if self.redo.get(who.name) == cand:  # skipping a re-judging keeps the label
                    del self.redo[who.name]
                if self.held.get(who.name) == cand:
                    del self.held[who.name]
        return self.next_for(who)

    def undo(self, who: Assessor) -> Item | None:
        """The assessor's last judged document, to judge again (None: nothing judged)."""
        with self.lock:
            done = self.last.get(who.name)
            if not done:
                return None
            cand = done.pop()
            self.redo[who.name] = cand
            return self._item(cand, who, previous=self.labels.get((who.name, cand)),
                              again=True)

    def checkpoint(self) -> None:
        """Save the state now (at a clean stop: the next start replays nothing)."""
        with self.lock:
            saved = self.save_state(self.state, self.clicks)
        saved.result()

    def progress(self, who: Assessor | None = None) -> Progress:
        """How far the judging is over the assessor's topics (all with None): per topic, its
        documents judged of its share of the pool (:meth:`PoolingState.planned`: what it was
        handed and may still be handed); skips counted of pending documents skipped by the
        assessor (by anyone with None)."""
        with self.lock:
            state = self.state
            mine = self._mine(who) if who else np.ones(len(state.status), dtype=bool)
            mine_t = self._my_topics(who) if who else np.ones(len(self.topics), dtype=bool)
            status, topic = state.status, state.table.cand_topic
            judged = np.bincount(topic[mine & (status == JUDGED)], minlength=len(self.topics))
            open_, planned = self._shares()
            total = np.where(mine_t, np.maximum(planned, judged), 0)
            rows = tuple(TopicProgress(query_id=q, judged=int(j), total=int(t))
                         for q, j, t in zip(self.topics, judged, total) if t)
            aside = {c for name, cands in self.skipped.items()
                     if who is None or name == who.name for c in cands}
            skipped = sum(1 for c in aside if mine[c] and status[c] == PENDING)
            held = self.topic_of.get(who.name) if who else None
            current = None if held is None else TopicProgress(
                query_id=self.topics[held], judged=int(judged[held]), total=int(total[held]))
            left = (status == PENDING) & mine
            second = bool((self._second_for(who) & mine).any())
            finished = not (left.any() or second or (open_ & mine_t).any())
            return Progress(judged=int(judged.sum()), total=int(total.sum()), skipped=skipped,
                            topics=rows, done=bool(state.complete), current=current,
                            finished=finished)


def order_key(state: PoolingState, order: str, seed: int) -> np.ndarray:
    """Per candidate, its place in the order documents of a topic are judged in: a shuffle
    drawn from ``seed`` (the pool's, recorded with it) or the docno's place; never a rank."""
    table = state.table
    if order == "shuffle":
        return np.random.default_rng([seed, 37]).permutation(table.num_candidates)
    if order == "docno":
        place = np.empty(len(table.docs), dtype=np.int64)
        place[np.argsort(table.docs, kind="stable")] = np.arange(len(table.docs))
        return place[table.cand_doc]
    raise ValueError(f"order is 'shuffle' or 'docno', not {order!r}")
