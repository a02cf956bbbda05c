"""Adaptive pooling: choose the next document to judge from the judgments made so far.

The runs are the arms. For every topic at once, a policy scores each live arm (a contributing
run with unjudged documents left); the best arm's next unjudged document is judged next, and its
judgment updates that arm. Documents already judged (through another run) are skipped and cost
nothing. Ties between arms are broken by a random permutation of the runs drawn from the
state's seed (and, for move-to-front, in favour of the run judged last).

mtf (local move-to-front; Cormack, Palmer & Clarke, SIGIR 1998): every run starts with the same
    priority; judging continues down the current run while it yields relevant documents; a
    non-relevant document lowers that run's priority by one and judging moves to the run of
    highest priority. Budget per topic.
mtf-global (global move-to-front, same paper): the same per-topic queues, but the next judgment
    goes to the topic whose best run has the highest priority, so topics rich in relevant
    documents get more of one total budget. Topics tied at the top priority are served
    round-robin (one document each per step).
mm / mm-ns (MaxMean, stationary / non-stationary; Losada, Parapar & Barreiro, SIGIR 2016 and
    IP&M 2017): pull the arm with the highest posterior mean of relevance, (1 + rel) / (2 + n)
    under a Beta(1, 1) prior. The non-stationary variant discounts an arm's earlier evidence by
    ``gamma`` at each of its pulls (relevant documents thin out down a ranking), so an arm that
    was good at the top must keep earning its place. gamma = 1 is MM.
thompson (Bayesian bandit / Thompson sampling, the BLA of Losada et al.): draw each arm's
    relevance rate from Beta(1 + rel, 1 + nonrel) and pull the arm with the highest draw; with
    ``gamma`` < 1 the counts are discounted as in mm-ns.

``gamma`` for mm-ns is our choice (0.9 by default): Losada et al. describe the non-stationary
variants as weighting recent judgments of an arm more; tune it with :func:`simulate_budgets`.
"""

from __future__ import annotations

import numpy as np

from .strategy import Param, Strategy, register


class Policy:
    """Per-(run, topic) arrays and the three things a policy does: score, note a pull, learn."""

    #: True: the policy wants random draws at every step (for :meth:`scores`).
    random = False

    def __init__(self, num_runs: int, num_topics: int, params: dict):
        self.params = params
        self.arrays: dict[str, np.ndarray] = self.initial(num_runs, num_topics)

    def initial(self, num_runs: int, num_topics: int) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def scores(self, rng: np.random.Generator) -> np.ndarray:
        """(R, T) float: higher is pulled first (dead arms are masked by the caller)."""
        raise NotImplementedError

    def pulled(self, runs: np.ndarray, topics: np.ndarray) -> None:
        """Arms ``(runs[i], topics[i])`` were just pulled (a document handed out)."""

    def update(self, runs: np.ndarray, topics: np.ndarray, relevant: np.ndarray) -> None:
        """Judgments came back for documents pulled from these arms."""
        raise NotImplementedError

    def priority_level(self, best: np.ndarray) -> np.ndarray:
        """For global strategies: topics whose best arm has the top level are served next."""
        return best


class MoveToFront(Policy):
    def initial(self, num_runs, num_topics):
        return {"priority": np.zeros((num_runs, num_topics)),
                "current": np.full(num_topics, -1, dtype=np.int64)}

    def scores(self, rng):
        s = self.arrays["priority"].copy()
        current = self.arrays["current"]
        has = np.flatnonzero(current >= 0)
        s[current[has], has] += 0.5  # stay with the current run while it is tied at the top
        return s

    def pulled(self, runs, topics):
        self.arrays["current"][topics] = runs

    def update(self, runs, topics, relevant):
        bad = ~relevant
        np.subtract.at(self.arrays["priority"], (runs[bad], topics[bad]), 1.0)

    def priority_level(self, best):
        return np.floor(best)


class MaxMean(Policy):
    def initial(self, num_runs, num_topics):
        return {"rel": np.zeros((num_runs, num_topics)), "n": np.zeros((num_runs, num_topics))}

    def scores(self, rng):
        return (1.0 + self.arrays["rel"]) / (2.0 + self.arrays["n"])

    def update(self, runs, topics, relevant):
        gamma = self.params["gamma"]
        rel, n = self.arrays["rel"], self.arrays["n"]
        arm = runs.astype(np.int64) * rel.shape[1] + topics
        if len(np.unique(arm)) == len(arm):  # the oracle loop: one judgment per arm
            rel[runs, topics] = gamma * rel[runs, topics] + relevant
            n[runs, topics] = gamma * n[runs, topics] + 1.0
            return
        for r, t, hit in zip(runs.tolist(), topics.tolist(), relevant.tolist()):
            # an assessor's batch may judge several documents of one arm: apply them in order
            rel[r, t] = gamma * rel[r, t] + hit
            n[r, t] = gamma * n[r, t] + 1.0


class Thompson(MaxMean):
    random = True

    def scores(self, rng):
        rel, n = self.arrays["rel"], self.arrays["n"]
        return rng.beta(1.0 + rel, 1.0 + np.maximum(n - rel, 0.0))


_GAMMA = "discount of an arm's earlier judgments at each of its pulls (1: stationary)"

register(Strategy(
    name="mtf", summary="local move-to-front: judge down a run while it yields relevant "
    "documents; a non-relevant one lowers its priority",
    reference="Cormack, Palmer & Clarke, SIGIR 1998", params={}, adaptive=True, scope="topic",
    policy=MoveToFront))
register(Strategy(
    name="mtf-global", summary="global move-to-front: one total budget goes to the topics "
    "whose runs keep yielding relevant documents",
    reference="Cormack, Palmer & Clarke, SIGIR 1998", params={}, adaptive=True, scope="global",
    policy=MoveToFront))
register(Strategy(
    name="mm", summary="MaxMean bandit: pull the run with the highest posterior mean relevance",
    reference="Losada, Parapar & Barreiro, SIGIR 2016; IP&M 53(5) 2017",
    params={"gamma": Param(float, 1.0, _GAMMA, minimum=0.0, maximum=1.0)},
    adaptive=True, scope="topic", policy=MaxMean))
register(Strategy(
    name="mm-ns", summary="MaxMean non-stationary: MaxMean with earlier evidence discounted",
    reference="Losada, Parapar & Barreiro, SIGIR 2016; IP&M 53(5) 2017",
    params={"gamma": Param(float, 0.9, _GAMMA, minimum=0.0, maximum=1.0)},
    adaptive=True, scope="topic", policy=MaxMean))
register(Strategy(
    name="thompson", summary="Bayesian bandit (Thompson sampling from Beta posteriors)",
    reference="Losada, Parapar & Barreiro, IP&M 53(5) 2017 (BLA); Thompson 1933",
    params={"gamma": Param(float, 1.0, _GAMMA, minimum=0.0, maximum=1.0)},
    adaptive=True, scope="topic", policy=Thompson))
