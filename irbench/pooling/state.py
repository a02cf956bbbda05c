"""PoolingState: judging as a resumable loop, for assessors or for an oracle.

One engine runs every strategy. Static strategies (depth, budgeted, rrf, rbp, uniform,
stratified) know their judging order in advance; adaptive ones (mtf, mtf-global, mm, mm-ns,
thompson) choose each step's documents, one per topic and all topics at once, from the
judgments recorded so far. Either way:

* :meth:`PoolingState.next_batch` hands out documents to judge (they become *pending*);
* :meth:`PoolingState.record` takes judgments back, checked against the pool first: a docno
  that was not handed out, an unknown topic, a negative or non-integer relevance, or a value
  that contradicts an earlier judgment is a :class:`JudgmentError` listing every problem, and
  then nothing of that batch is recorded (nothing already judged is ever lost);
* :meth:`PoolingState.run_oracle` does both with existing qrels as the assessor (simulation);
* :meth:`PoolingState.to_dict` / :meth:`PoolingState.from_dict` turn the state into plain
  values and numpy arrays (e.g. for the DuckDB store) and back, against the same run table.

Budgets: ``budget`` caps the judgments of each topic (an int, or one per topic), ``total`` caps
all of them. ``mtf-global`` spends ``total`` across topics by priority; other strategies under a
total budget give every topic one document per step (static ones deepen all topics together).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import JudgmentError, PoolingError
from ..ids import id_bytes, id_text
from ..trec import Qrels, display, read_qrels
from .pool import Pool, make_pool
from .strategy import get_strategy, resolve_params
from .table import RunTable, contributing_runs

STATE_VERSION = 1
OPEN, PENDING, JUDGED = 0, 1, 2
_UNLIMITED = np.iinfo(np.int64).max // 4
_WINDOW = 16  # rows looked at per pointer per pass when skipping judged documents


class PoolingState:
    """A pool being judged: see the module docstring.

    table: the campaign's runs (:func:`~irbench.pooling.build_table`).
    strategy: a registered name (:data:`~irbench.pooling.STRATEGIES`); ``params`` are its
        parameters. contributing / per_group: which runs feed the pool
        (:func:`~irbench.pooling.contributing_runs`). budget / total: see the module docstring;
        both >= 1 when given. seed: the seed of every random draw (sampling, tie-breaking,
        Thompson draws). relevance_level: judgments >= this are relevant to adaptive
        strategies.
    """

    def __init__(self, table: RunTable, strategy: str = "depth", *, contributing=None,
                 per_group: int | None = None, budget=None, total: int | None = None,
                 seed: int = 0, relevance_level: int = 1, **params: Any):
        self.table = table
        self.strategy = get_strategy(strategy)
        self.params = resolve_params(self.strategy, params)
        self.contributing = contributing_runs(table, contributing, per_group=per_group)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise PoolingError(f"seed must be an integer >= 0 (got {seed!r})")
        self.seed = int(seed)
        self.relevance_level = int(relevance_level)
        self.budget = _topic_budget(budget, table)
        self.total = None if total is None else _count(total, "total budget")
        self.rng = np.random.default_rng(self.seed)
        T, C = table.num_topics, table.num_candidates
        self.status = np.zeros(C, dtype=np.int8)
        self.relevance = np.zeros(C, dtype=np.int64)
        self.step = np.full(C, -1, dtype=np.int64)
        self.order = np.full(C, -1, dtype=np.int64)
        self.source = np.full(C, -1, dtype=np.int64)
        self.handed = np.zeros(T, dtype=np.int64)
        self.exhausted = np.zeros(T, dtype=bool)
        self.stratum = None
        self.sampling = False
        if self.strategy.adaptive:
            self._init_adaptive()
        else:
            if self.strategy.plan is None:  # register() refuses a strategy with neither
                raise ValueError(f"{self.strategy.name}: a static strategy without a plan")
            plan = self.strategy.plan(table, self.contributing, self.params, self.rng)
            self.pooled = plan.pooled
            self.sampling = plan.sampled is not None
            self.eligible = plan.pooled & (plan.sampled if self.sampling else True)
            self.priority, self.level, self.stratum = plan.priority, plan.level, plan.stratum
            self.depth_cap = plan.depth if plan.depth is not None else self.params.get("max_depth")

    # ---- set-up ------------------------------------------------------------------------

    def _init_adaptive(self) -> None:
        table = self.table
        R, T = table.num_runs, table.num_topics
        if self.strategy.policy is None:  # register() refuses a strategy with neither
            raise ValueError(f"{self.strategy.name}: an adaptive strategy without a policy")
        self.policy = self.strategy.policy(R, T, self.params)
        start, end = table.segments[:-1].copy(), table.segments[1:].copy()
        if self.params.get("max_depth") is not None:
            end = np.minimum(end, start + self.params["max_depth"])
        self.ptr, self.end = start, end
        self.alive = ((end > start).reshape(R, T)) & self.contributing[:, None]
        rows = self.contributing[table.run] & (table.rank <= (end - start)[
            table.run.astype(np.int64) * T + table.topic])
        self.eligible = np.zeros(table.num_candidates, dtype=bool)
        self.eligible[table.cand[rows]] = True
        self.pooled = self.eligible
        self.depth_cap = self.params.get("max_depth")
        tie = self.rng.permutation(R)
        self.tierank = np.empty(R, dtype=np.int64)
        self.tierank[tie] = np.arange(R)

    # ---- properties ----------------------------------------------------------------------

    @property
    def handed_total(self) -> int:
        return int(self.handed.sum())

    @property
    def judged_total(self) -> int:
        return int((self.status == JUDGED).sum())

    @property
    def pending_total(self) -> int:
        return int((self.status == PENDING).sum())

    def _topic_room(self) -> np.ndarray:
        """(T,) documents each topic may still be handed."""
        room = self.budget - self.handed
        room[self.exhausted] = 0
        return np.maximum(room, 0)

    def _total_room(self) -> int:
        return _UNLIMITED if self.total is None else max(self.total - self.handed_total, 0)

    @property
    def done(self) -> bool:
        """True when no document can be handed out any more (budgets spent or pool empty)."""
        if self._total_room() == 0:
            return True
        if self.strategy.adaptive:
            room = self._topic_room() > 0
            return not (room & self.alive.any(axis=0)).any()
        open_ = self.eligible & (self.status == OPEN)
        topics = self.table.cand_topic[open_]
        return not (self._topic_room()[topics] > 0).any()

    @property
    def complete(self) -> bool:
        """True when the pool is judged to the end: nothing more to hand out and every
        document handed out judged (a document handed out and skipped keeps it open)."""
        return self.done and not (self.status == PENDING).any()

    def complete_topics(self) -> np.ndarray:
        """(T,) whether each topic is judged to the end: nothing pending and nothing more to
        hand out for it (its budget spent or its candidates exhausted)."""
        pending = np.bincount(self.table.cand_topic[self.status == PENDING],
                              minlength=self.table.num_topics) > 0
        return ~pending & ~self.open_topics()

    def open_topics(self) -> np.ndarray:
        """(T,) whether each topic can still be handed documents (budget left, candidates
        left)."""
        room = self._topic_room() > 0
        if self.strategy.adaptive:
            more = room & self.alive.any(axis=0)
        else:
            open_ = self.eligible & (self.status == OPEN)
            more = (np.bincount(self.table.cand_topic[open_],
                                minlength=self.table.num_topics) > 0) & room
        if self._total_room() == 0:
            more[:] = False
        return more

    def planned(self) -> np.ndarray:
        """(T,) each topic's share of the pool as far as it can be known now: what it was
        handed, plus what it may still be handed (its budget left, capped by its candidates
        left and the total budget left)."""
        open_ = np.bincount(self.table.cand_topic[self.eligible & (self.status == OPEN)],
                            minlength=self.table.num_topics)
        more = np.minimum(np.minimum(self._topic_room(), open_), self._total_room())
        return self.handed + np.where(self.open_topics(), more, 0)

    def next_topics(self, allowed: np.ndarray) -> np.ndarray:
        """The topics, among ``allowed`` ((T,) bool) that can still be handed documents, to be
        judged next, first first: for a strategy spending one budget across topics (scope
        ``global``), only those at the policy's top priority level; the topics handed the
        fewest documents first, then in the pool's order. Draws nothing from the seed."""
        act = np.flatnonzero(allowed & self.open_topics())
        if len(act) and self.strategy.adaptive and self.strategy.scope == "global" \
                and not self.policy.random:
            live = np.where(self.alive[:, act], self.policy.scores(self.rng)[:, act], -np.inf)
            level = self.policy.priority_level(live.max(axis=0))
            act = act[level == level.max()]
        return act[np.argsort(self.handed[act], kind="stable")]

    # ---- handing out -----------------------------------------------------------------------

    def next_batch(self, n: int | None = None, *, topics: np.ndarray | None = None) -> Batch:
        """Hand out up to ``n`` documents to judge (None: as many as the budgets allow; for
        adaptive strategies that is one step, a document for each topic with room).
        ``topics``, a (T,) bool mask: only those topics are handed documents (the assessment
        desk, judging topic by topic, asks for one topic's)."""
        if n is not None and (isinstance(n, bool) or n < 1):
            raise PoolingError(f"a batch needs n >= 1 documents (got {n!r})")
        allowed = np.ones(self.table.num_topics, dtype=bool) if topics is None else \
            np.asarray(topics, dtype=bool)
        if self.strategy.adaptive:
            limit = self.table.num_topics if n is None else int(n)
            got: list[np.ndarray] = []
            count = 0
            while count < limit:
                cands = self._adaptive_step(limit - count, allowed)
                if len(cands) == 0:
                    break
                got.append(cands)
                count += len(cands)
            cands = np.concatenate(got) if got else np.zeros(0, dtype=np.int64)
        else:
            cands = self._static_batch(_UNLIMITED if n is None else int(n), allowed)
        return self._batch(cands)

    def _hand_out(self, cands: np.ndarray) -> None:
        topic = self.table.cand_topic[cands]
        first = self.handed_total
        self.step[cands] = first + np.arange(len(cands))
        # position within the topic: earlier hand-outs first, then this batch in order
        o = np.argsort(topic, kind="stable")
        starts = np.searchsorted(topic[o], topic[o])
        within = np.arange(len(cands)) - starts
        self.order[cands[o]] = self.handed[topic[o]] + within
        np.add.at(self.handed, topic, 1)
        self.status[cands] = PENDING

    def _static_batch(self, n: int, allowed: np.ndarray | None = None) -> np.ndarray:
        table = self.table
        open_ = self.eligible & (self.status == OPEN)
        if allowed is not None:
            open_ &= allowed[table.cand_topic]
        cands = np.flatnonzero(open_)
        topic = table.cand_topic[cands]
        o = np.lexsort((cands, self.priority[cands], topic))
        cands, topic = cands[o], topic[o]
        starts = np.searchsorted(topic, topic)
        within = np.arange(len(cands)) - starts
        keep = within < self._topic_room()[topic]
        cands = cands[keep]
        pace = np.lexsort((self.priority[cands], table.cand_topic[cands], self.level[cands]))
        cands = cands[pace][: min(n, self._total_room())]
        self._hand_out(cands)
        return cands

    def _adaptive_step(self, limit: int, allowed: np.ndarray | None = None) -> np.ndarray:
        """One judging step: up to one document for each topic with room (all topics at once;
        only the ``allowed`` ones when given)."""
        table = self.table
        T = table.num_topics
        room = self._topic_room() > 0
        if allowed is not None:
            room &= allowed
        act = np.flatnonzero(room & self.alive.any(axis=0))
        limit = min(limit, self._total_room())
        if len(act) == 0 or limit == 0:
            return np.zeros(0, dtype=np.int64)
        scores = self.policy.scores(self.rng)
        if self.strategy.scope == "global":
            live = np.where(self.alive[:, act], scores[:, act], -np.inf)
            level = self.policy.priority_level(live.max(axis=0))
            act = act[level == level.max()]
        if len(act) > limit:  # the topics with the fewest judgments first
            act = act[np.argsort(self.handed[act], kind="stable")[:limit]]
        chosen_c, chosen_r, chosen_t = [], [], []
        while len(act):
            s = np.where(self.alive[:, act], scores[:, act], -np.inf)
            best = s.max(axis=0)
            dead = best == -np.inf
            if dead.any():
                self.exhausted[act[dead]] = True
                act, s, best = act[~dead], s[:, ~dead], best[~dead]
                if len(act) == 0:
                    break
            tie = s == best
            runs = np.argmin(np.where(tie, self.tierank[:, None], len(self.tierank)), axis=0)
            arm = runs.astype(np.int64) * T + act
            pos, found = self._advance(arm)
            self.ptr[arm] = pos
            lost = ~found
            self.alive[runs[lost], act[lost]] = False
            hit = np.flatnonzero(found)
            if len(hit):
                chosen_c.append(table.cand[pos[hit]])
                chosen_r.append(runs[hit])
                chosen_t.append(act[hit])
                self.ptr[arm[hit]] += 1
            act = act[lost]  # topics whose chosen run ran dry choose again
        if not chosen_c:
            return np.zeros(0, dtype=np.int64)
        cands = np.concatenate(chosen_c)
        runs = np.concatenate(chosen_r)
        topics = np.concatenate(chosen_t)
        o = np.argsort(topics, kind="stable")
        cands, runs, topics = cands[o], runs[o], topics[o]
        self.source[cands] = runs
        self.policy.pulled(runs, topics)
        self._hand_out(cands)
        return cands

    def _advance(self, arm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each arm, the row of its next open document (and whether there is one)."""
        cand, status = self.table.cand, self.status
        pos = self.ptr[arm].copy()
        end = self.end[arm]
        found = np.zeros(len(arm), dtype=bool)
        todo = np.arange(len(arm))
        window = np.arange(_WINDOW)
        last = max(len(cand) - 1, 0)
        while len(todo):
            idx = pos[todo, None] + window
            valid = idx < end[todo, None]
            ok = valid & (status[cand[np.minimum(idx, last)]] == OPEN)
            hit = ok.any(axis=1)
            first = ok.argmax(axis=1)
            pos[todo[hit]] += first[hit]
            found[todo[hit]] = True
            more = ~hit & valid[:, -1]
            gone = ~hit & ~valid[:, -1]
            pos[todo[gone]] = end[todo[gone]]
            pos[todo[more]] += _WINDOW
            todo = todo[more]
        return pos, found

    def _batch(self, cands: np.ndarray) -> Batch:
        t = self.table
        return Batch(query_id=t.topics[t.cand_topic[cands]], doc_id=t.docs[t.cand_doc[cands]],
                     topic=t.cand_topic[cands], candidate=cands)

    # ---- recording ---------------------------------------------------------------------------

    def record(self, judgments: Any) -> int:
        """Record judgments (a :class:`Qrels`, ``{query_id: {doc_id: relevance}}`` or
        ``(query_id, doc_id, relevance)`` tuples); returns how many were new.

        Every judgment is checked before any is recorded (see the module docstring). Judging a
        document again with the same value is allowed and changes nothing.
        """
        qrels = judgments if isinstance(judgments, Qrels) else \
            read_qrels(judgments, name="judgments")
        table = self.table
        topic, cand = _looked_up(table, qrels.query_id, qrels.doc_id)
        where = qrels.path or f"<{qrels.name}>"
        problems = []
        status = np.where(cand >= 0, self.status[np.maximum(cand, 0)], OPEN)
        known = np.where(cand >= 0, self.relevance[np.maximum(cand, 0)], 0)
        for i in np.flatnonzero((topic < 0) | (status == OPEN) | (qrels.relevance < 0)
                                | ((status == JUDGED) & (known != qrels.relevance)))[:100]:
            q, d = display(qrels.query_id[i]), display(qrels.doc_id[i])
            head = f"{where}:{int(qrels.line[i])}: "
            if topic[i] < 0:
                problems.append(head + f"topic '{q}' is not in the campaign")
            elif status[i] == OPEN:
                what = "was not handed out for judging yet" if cand[i] >= 0 and \
                    self.eligible[cand[i]] else "is not in the pool"
                problems.append(head + f"docno '{d}' of topic '{q}' {what}")
            elif qrels.relevance[i] < 0:
                problems.append(head + f"relevance {int(qrels.relevance[i])} for docno '{d}' "
                                "is negative (judgments are levels 0, 1, 2 ...)")
            else:
                problems.append(head + f"docno '{d}' of topic '{q}' was already judged "
                                f"{int(known[i])}, not {int(qrels.relevance[i])}")
        if problems:
            bad = int(((topic < 0) | (status == OPEN) | (qrels.relevance < 0)
                       | ((status == JUDGED) & (known != qrels.relevance))).sum())
            raise JudgmentError(problems, bad - len(problems))
        new = status == PENDING
        self._apply(cand[new], qrels.relevance[new])
        return int(new.sum())

    def judge(self, cand: int, relevance: int) -> None:
        """Record the label of one pending candidate (by its index: the assessment desk,
        which finds it by :meth:`candidate`)."""
        if self.status[cand] != PENDING or relevance < 0:
            raise JudgmentError([f"candidate {cand} is not pending, or {relevance} < 0"])
        self._apply(np.array([cand], dtype=np.int64), np.array([relevance], dtype=np.int64))

    def candidate(self, query_id: bytes, doc_id: bytes) -> int:
        """The candidate index of (topic, docno), or -1 if no run of the pool retrieved it."""
        topic = self.table.topic_lookup(np.array([query_id]))
        return int(self.table.lookup(topic, np.array([doc_id]))[0])

    def relabel(self, cand: int, relevance: int) -> None:
        """Give a judged candidate another label (an assessor's undo). The pool keeps the new
        label; what an adaptive strategy already chose from the old one stays chosen."""
        if self.status[cand] != JUDGED or relevance < 0:
            raise JudgmentError([f"candidate {cand} is not judged, or {relevance} < 0"])
        self.relevance[cand] = relevance

    def _apply(self, cands: np.ndarray, relevance: np.ndarray) -> None:
        self.status[cands] = JUDGED
        self.relevance[cands] = relevance
        if self.strategy.adaptive:
            src = self.source[cands]
            mine = src >= 0
            self.policy.update(src[mine], self.table.cand_topic[cands[mine]],
                               relevance[mine] >= self.relevance_level)

    def run_oracle(self, oracle: Oracle) -> PoolingState:
        """Judge until the budgets are spent or the pool is exhausted, asking ``oracle``."""
        if self.strategy.adaptive:
            while True:
                cands = self._adaptive_step(_UNLIMITED)
                if len(cands) == 0:
                    break
                self._apply(cands, oracle.relevance[cands])
        else:
            cands = self._static_batch(_UNLIMITED)
            self._apply(cands, oracle.relevance[cands])
        return self

    # ---- results -----------------------------------------------------------------------------

    def pool(self) -> Pool:
        """The pool so far: every document handed out (and, for sampling strategies, every
        pooled document not sampled)."""
        handed = self.status != OPEN
        pooled = (self.pooled | handed) if self.sampling else handed
        params = {**self.params, "budget": _budget_value(self.budget), "total": self.total,
                  "relevance_level": self.relevance_level,
                  "contributing": [self.table.runs[i] for i in np.flatnonzero(self.contributing)]}
        return make_pool(self.table, strategy=self.strategy.name, params=params, seed=self.seed,
                         adaptive=self.strategy.adaptive, contributing=self.contributing,
                         pooled=pooled, sampled=handed, stratum=self.stratum, order=self.order,
                         step=self.step, source=self.source, depth=self.depth_cap)

    def judgments(self, name: str = "judgments") -> Qrels:
        """The judgments recorded so far, sorted by topic then docno."""
        c = np.flatnonzero(self.status == JUDGED)
        t = self.table
        return Qrels(name=name, query_id=t.topics[t.cand_topic[c]], doc_id=t.docs[t.cand_doc[c]],
                     relevance=self.relevance[c].copy(),
                     line=np.arange(1, len(c) + 1, dtype=np.int64))

    def qrels(self, name: str | None = None) -> Qrels:
        """The campaign qrels so far: judged documents with their value, pooled but unsampled
        documents with -1 (sampling strategies); pending documents are left out."""
        return self.pool().qrels(self.judgments(), name=name)

    def model_targets(self) -> list[tuple[str, str]]:
        """The (topic, document) pairs a model judge can label ahead of the assessors, as the
        store keeps ids (:func:`irbench.ids.id_text`), sorted: the whole planned pool of a
        static strategy; what an adaptive one has handed out so far."""
        wanted = self.eligible if not self.strategy.adaptive else self.status != OPEN
        cands = np.flatnonzero(wanted)
        topics = self.table.topics[self.table.cand_topic[cands]]
        docs = self.table.docs[self.table.cand_doc[cands]]
        return sorted((id_text(q), id_text(d)) for q, d in zip(topics.tolist(), docs.tolist()))

    # ---- persistence -------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """Plain values and copies of the numpy arrays (nothing shared with the live state:
        another thread may write them while judging goes on), enough to resume with
        :meth:`from_dict`."""
        d: dict[str, Any] = {
            "version": STATE_VERSION,
            "strategy": self.strategy.name,
            "params": {k: v for k, v in self.params.items()},
            "seed": self.seed,
            "relevance_level": self.relevance_level,
            "contributing": self.contributing.copy(),
            "budget": self.budget.copy(),
            "total": self.total,
            "table": self.table.fingerprint(),
            "rng": self.rng.bit_generator.state,
            "status": self.status.copy(), "relevance": self.relevance.copy(),
            "step": self.step.copy(), "order": self.order.copy(), "source": self.source.copy(),
            "handed": self.handed.copy(), "exhausted": self.exhausted.copy(),
        }
        if self.strategy.adaptive:
            d["ptr"] = self.ptr.copy()
            d["alive"] = self.alive.copy()
            d["policy"] = {k: v.copy() for k, v in self.policy.arrays.items()}
        return d

    @classmethod
    def from_dict(cls, data: Mapping, table: RunTable) -> PoolingState:
        """Resume a state saved with :meth:`to_dict`, against the same ``table``."""
        if data.get("version") != STATE_VERSION:
            raise PoolingError(f"pooling state version {data.get('version')!r} is not "
                               f"{STATE_VERSION}")
        if dict(data["table"]) != table.fingerprint():
            raise PoolingError("the pooling state was saved against other runs "
                               f"({data['table']}) than this table ({table.fingerprint()})")
        budget = np.asarray(data["budget"])
        state = cls(table, data["strategy"], contributing=np.asarray(data["contributing"], bool),
                    budget=None, total=data["total"], seed=data["seed"],
                    relevance_level=data["relevance_level"], **dict(data["params"]))
        state.budget = budget.astype(np.int64).copy()
        for key in ("status", "relevance", "step", "order", "source", "handed", "exhausted"):
            setattr(state, key, np.asarray(data[key]).astype(getattr(state, key).dtype).copy())
        state.rng.bit_generator.state = data["rng"]
        if state.strategy.adaptive:
            state.ptr = np.asarray(data["ptr"], dtype=np.int64).copy()
            state.alive = np.asarray(data["alive"], dtype=bool).copy()
            for k, v in dict(data["policy"]).items():
                state.policy.arrays[k] = np.asarray(v).copy()
        return state


class Batch:
    """Documents handed out for judging: ``query_id``, ``doc_id`` (bytes), ``topic`` index and
    ``candidate`` (the table's candidate index), in hand-out order."""

    __slots__ = ("query_id", "doc_id", "topic", "candidate")

    def __init__(self, query_id, doc_id, topic, candidate):
        self.query_id, self.doc_id, self.topic, self.candidate = query_id, doc_id, topic, candidate

    def __len__(self) -> int:
        return len(self.candidate)

    def pairs(self) -> list[tuple[str, str]]:
        return [(display(q), display(d)) for q, d in zip(self.query_id, self.doc_id)]


class Oracle:
    """Existing judgments as the assessor: the relevance of every table candidate.

    Documents the qrels do not judge get ``unjudged`` (0, non-relevant, by default; negative
    qrels values count as unjudged too).
    """

    def __init__(self, table: RunTable, qrels: Qrels, unjudged: int = 0):
        self.qrels = qrels
        self.relevance = np.full(table.num_candidates, unjudged, dtype=np.int64)
        topic = table.topic_lookup(qrels.query_id)
        cand = table.lookup(topic, qrels.doc_id)
        ok = (cand >= 0) & (qrels.relevance >= 0)
        self.relevance[cand[ok]] = qrels.relevance[ok]
        self.judged = np.zeros(table.num_candidates, dtype=bool)
        self.judged[cand[ok]] = True


def _topic_budget(budget, table: RunTable) -> np.ndarray:
    T = table.num_topics
    if budget is None:
        return np.full(T, _UNLIMITED, dtype=np.int64)
    if isinstance(budget, Mapping):
        out = np.full(T, _UNLIMITED, dtype=np.int64)
        ids = np.array([str(k).encode() if not isinstance(k, bytes) else k for k in budget],
                       dtype=np.bytes_)
        idx = table.topic_lookup(ids)
        if (idx < 0).any():
            raise PoolingError("budget names topics the runs do not have: "
                               + ", ".join(display(i) for i in ids[idx < 0][:10]))
        out[idx] = [_count(v, "budget") for v in budget.values()]
        return out
    if np.ndim(budget) == 0:
        return np.full(T, _count(budget, "budget"), dtype=np.int64)
    values = np.asarray(budget)
    if values.shape != (T,):
        raise PoolingError(f"a budget per topic needs {T} values, got {values.shape}")
    return np.array([_count(v, "budget") for v in values.tolist()], dtype=np.int64)


def _count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise PoolingError(f"{what} must be a whole number of judgments >= 1 (got {value!r})")
    return int(value)


def _budget_value(budget: np.ndarray):
    if (budget == _UNLIMITED).all():
        return None
    if (budget == budget[0]).all():
        return int(budget[0])
    return [int(b) if b != _UNLIMITED else None for b in budget.tolist()]


def _looked_up(table: RunTable, query_id: np.ndarray, doc_id: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Topic and candidate index of each judgment (-1: not in the pool). An id an assessor
    file holds as ``\\xNN`` text (how pool files and the store write bytes that are not
    UTF-8: :func:`irbench.ids.id_text`) that is not in the pool as written is looked up as the
    bytes it stands for."""
    topic = table.topic_lookup(query_id)
    cand = table.lookup(topic, doc_id)
    escaped = np.flatnonzero((cand < 0) & ((np.char.find(query_id, b"\\x") >= 0)
                                          | (np.char.find(doc_id, b"\\x") >= 0)))
    if len(escaped):  # rare: only ids written with escapes, one by one
        again_topic = table.topic_lookup(_unescaped(query_id[escaped]))
        again = table.lookup(again_topic, _unescaped(doc_id[escaped]))
        found = again >= 0
        topic[escaped[found]], cand[escaped[found]] = again_topic[found], again[found]
    return topic, cand


def _unescaped(ids: np.ndarray) -> np.ndarray:
    """The bytes each id written as :func:`irbench.ids.id_text` stands for."""
    return np.array([id_bytes(x.decode("utf-8", "surrogateescape")) for x in ids.tolist()],
                    dtype=object).astype(bytes)
