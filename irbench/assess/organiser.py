"""What the organiser's page shows: progress per topic (its budget, who holds it, who judged
how many of its documents) and per assessor (documents judged, not clicks: an undo and a new
label count once), judging speed, how often a model's suggestion was kept, agreement on the
documents judged twice, and a provisional leaderboard on the topics judged to the end."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..errors import EvaluationError
from ..evaluation import evaluate
from ..judgments.agreement import agreement
from ..pooling.state import JUDGED
from ..store import Click
from ..trec import Qrels, read_qrels
from .contexts import AssessorRow, OrganiserTopic, OrganiserView
from .desk import Desk

MEASURE = "AP"


def organiser_view(desk: Desk, clicks: Sequence[Click], assessors: list, *,
                   leaderboard: bool = True, unit: str = "documents",
                   links: tuple[tuple[str, str], ...] = ()) -> OrganiserView:
    """The organiser page's values (see the module docstring); ``clicks`` as
    :meth:`Store.clicks` gives them. A judgment is a document an assessor judged, however
    often (an undo and a new label is one judgment, two clicks). Without ``leaderboard`` (a
    desk whose units are not a pool of documents: support, nuggets) no leaderboard; ``unit``
    what is judged, ``links`` (href, text) of the server's other organiser pages."""
    progress = desk.progress()
    latest = {(c.judge, c.query_id, c.doc_id): c for c in clicks}  # each one's last label
    with desk.lock:
        holds = {name: desk.topics[t] for name, t in desk.topic_of.items()}
        budget, total_budget = desk.state.budget.tolist(), desk.state.total
        candidates = len(desk.state.status)
    rows = []
    for a in assessors:
        if a.role != "assessor":
            continue
        mine = [c for c in clicks if c.judge == a.name]
        judged = [c for (judge, _, _), c in latest.items() if judge == a.name]
        suggested = [c for c in judged if c.suggested is not None]
        rows.append(AssessorRow(
            name=a.name, topics=", ".join(a.topics) or "all", judged=len(judged),
            holds=holds.get(a.name, "-"),
            seconds=(f"{statistics.median(c.seconds or 0.0 for c in mine):.1f}" if mine
                     else "-"),
            kept=(f"{sum(c.relevance == c.suggested for c in suggested)} of {len(suggested)}"
                  if suggested else "-")))
    board, note = _leaderboard(desk) if leaderboard else ([], "")
    shares = {t.query_id: t for t in progress.topics}
    per_topic: dict[str, Counter] = {}
    for judge, query_id, _ in latest:
        per_topic.setdefault(query_id, Counter())[judge] += 1
    topics = []
    for query_id, cap in zip(desk.topics, budget):
        by, share = per_topic.get(query_id, Counter()), shares.get(query_id)
        topics.append(OrganiserTopic(
            query_id=query_id, judged=share.judged if share else 0,
            total=share.total if share else 0, budget=_budget(cap, candidates),
            held_by=", ".join(sorted(n for n, t in holds.items() if t == query_id)) or "-",
            judged_by=", ".join(f"{n} {k}" for n, k in sorted(by.items())) or "-"))
    return OrganiserView(
        judged=progress.judged, total=progress.total, skipped=progress.skipped,
        topics=tuple(topics), done=progress.done, strategy=desk.state.strategy.name,
        total_budget=_budget(total_budget, candidates), judgments=len(latest),
        clicks=len(clicks), assessors=tuple(rows), agreement=_agreement(clicks),
        measure=MEASURE if leaderboard else "", leaderboard=tuple(board),
        leaderboard_note=note, unit=unit, links=links)


def _budget(cap: int | None, candidates: int) -> str:
    """A budget as the page prints it: 'unlimited' for none, or one above every candidate of
    the pool (it caps nothing; the pool's state keeps "none" as such a number)."""
    return "unlimited" if cap is None or cap > candidates else str(cap)


def _agreement(clicks: Sequence[Click]) -> str:
    """Agreement of the first two assessors of each document judged by two (each one's latest
    label): the measures of ``irbench agreement``."""
    labels: dict[tuple[str, str], dict[str, int]] = {}
    for c in clicks:
        labels.setdefault((c.query_id, c.doc_id), {})[c.judge] = c.relevance
    twice = [(pair, list(by.values())[:2]) for pair, by in labels.items() if len(by) >= 2]
    if not twice:
        return "no document has been judged by two assessors yet"
    first = read_qrels([(q, d, v[0]) for (q, d), v in twice], name="first")
    second = read_qrels([(q, d, v[1]) for (q, d), v in twice], name="second")
    try:
        a = agreement(first, second)
    except EvaluationError as exc:
        return str(exc)
    def shown(value: float) -> str:
        return "undefined (one grade only)" if np.isnan(value) else f"{value:.3f}"

    return (f"{a.pairs} documents judged twice: the same grade for {a.agreed:.0%}; "
            f"Cohen's kappa {shown(a.kappa)} (linear weights {shown(a.kappa_linear)}, "
            f"relevant or not {shown(a.kappa_binary)}); Krippendorff's alpha (ordinal) "
            f"{shown(a.alpha_ordinal)}")


def _leaderboard(desk: Desk) -> tuple[list[tuple[str, str]], str]:
    """(system, mean AP) on the topics judged to the end, best first, and what it rests on;
    computed again only when what it rests on changed (a topic was judged to the end, or a
    label of one relabelled), not at every judgment: the page reloads itself."""
    with desk.lock:
        state = desk.state
        complete = state.complete_topics()
        rests = complete[state.table.cand_topic] & (state.status == JUDGED)
        key = hashlib.sha256(b"".join((complete.tobytes(), np.flatnonzero(rests).tobytes(),
                                       state.relevance[rests].tobytes()))).digest()
        if desk.board is not None and desk.board[0] == key:
            return desk.board[1]
        qrels = state.qrels()
        runs = list(zip(state.table.runs, state.table.sources))
    board = _compute(desk, complete, qrels, runs)
    desk.board = (key, board)
    return board


def _compute(desk: Desk, complete: np.ndarray, qrels: Qrels,
             runs: list) -> tuple[list[tuple[str, str]], str]:
    topics = {t for t, done in zip(desk.topics, complete) if done}
    if not topics:
        return [], "no topic is judged to the end yet"
    keep = np.isin(qrels.query_id, desk.state.table.topics[complete])  # the pool's own ids
    done = Qrels(name="provisional", query_id=qrels.query_id[keep], doc_id=qrels.doc_id[keep],
                 relevance=qrels.relevance[keep], line=qrels.line[keep])
    scores = []
    for name, run in runs:
        try:
            ev = evaluate(done, run, [MEASURE], complete=True)
        except EvaluationError:
            continue
        scores.append((name, ev.summary(MEASURE)))
    scores.sort(key=lambda x: -x[1])
    return ([(n, f"{v:.4f}") for n, v in scores],
            f"{len(topics)} of {len(desk.topics)} topics judged to the end; these values "
            "will change")
