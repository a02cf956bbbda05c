"""Across collections from a config's views (one per collection, :func:`irbench.config.
load_configs`): each collection's stored per-topic scores of one measure
(:func:`collection_scores`, read through :meth:`irbench.store.Store.score_matrix`), the
comparison :func:`irbench.stats.across.across` of them (:func:`compare_views`), and its records
(:func:`records`, columns :data:`COLUMNS`): what ``irbench compare --across`` (table, CSV,
JSON, LaTeX), the notebook's ``across()`` frame and the report's page over the collections all
read, so they show the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .errors import StatisticsError
from .stats.across import Across, CollectionScores, across
from .stats.choices import DEFAULT_CORRECTION, DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST
from .store import Store

COLUMNS = ("system", "collection", "mean", "mean_rank", "collections", "mean_diff",
           "p_value", "p_adjusted", "outcome", "wins", "ties", "losses", "effect",
           "ci_low", "ci_high", "effect_p", "tau2", "i2", "q")


def collection_scores(views: Sequence, qrels: str | None, measure: str,
                      wait: float | None = None) -> tuple[list[CollectionScores], list[str]]:
    """Each collection's stored values of ``measure`` on qrels set ``qrels`` (None: each
    view's first set), and a note for each collection with none (left out)."""
    scores, notes = [], []
    for config in views:
        name = config.qrels_set(qrels).name
        with Store(config.store, scope=config.scope, read_only=True, wait=wait) as store:
            systems, topics, values = store.score_matrix(name, measure)
        if not systems:
            notes.append(f"collection '{config.scope}': no stored {measure} scores on qrels "
                         f"'{name}' (irbench run CONFIG)")
            continue
        scores.append(CollectionScores(config.scope, tuple(systems), tuple(topics), values))
    return scores, notes


def default_measure(views: Sequence, qrels: str | None = None) -> str:
    """The first measure of the first collection's measures that its qrels set takes."""
    first = views[0]
    return str(first.qrels_set(qrels).measures(first.measures)[0])


def marked_baseline(views: Sequence) -> str | None:
    """The one system the config marks ``baseline: true`` (None: none or several)."""
    marked = {s.name for config in views for s in config.systems if s.baseline}
    return marked.pop() if len(marked) == 1 else None


def compare_views(views: Sequence, measure: str, *, qrels: str | None = None,
                  baseline: str | None = None, test: str | None = None,
                  correction: str | None = None, alpha: float = 0.05, effect: str = "raw",
                  samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                  wait: float | None = None) -> Across:
    """:func:`~irbench.stats.across.across` of the collections' stored scores of ``measure``
    (baseline None: the config's marked one), the collections left out noted first;
    StatisticsError when no collection has them."""
    scores, notes = collection_scores(views, qrels, measure, wait)
    if not scores:
        raise StatisticsError("no collection to compare across: " + "; ".join(notes))
    result = across(scores, measure, baseline=baseline or marked_baseline(views),
                    test=test or DEFAULT_TEST, correction=correction or DEFAULT_CORRECTION,
                    alpha=alpha, effect=effect, samples=samples, seed=seed)
    return replace(result, notes=(*notes, *result.notes)) if notes else result


def records(result: Across) -> list[dict[str, Any]]:
    """One record per system and collection (its mean and its test against the baseline),
    then one per system over every collection (``collection`` 'all': mean, mean rank, W/T/L
    and the meta-analysis), systems best first; the keys are of :data:`COLUMNS`."""
    out = []
    for s in result.systems:
        for j, c in enumerate(result.collections):
            cell = next((t for t in s.tests if t.collection == c), None)
            out.append({"system": s.name, "collection": c, "mean": s.means[j],
                        "mean_diff": cell.mean_diff if cell else None,
                        "p_value": cell.p_value if cell else None,
                        "p_adjusted": cell.p_adjusted if cell else None,
                        "outcome": cell.outcome if cell else None})
        m = s.meta
        out.append({"system": s.name, "collection": "all", "mean": s.mean,
                    "mean_rank": s.mean_rank, "collections": s.collections, "wins": s.wins,
                    "ties": s.ties, "losses": s.losses,
                    **({"effect": m.effect, "ci_low": m.ci_low, "ci_high": m.ci_high,
                        "effect_p": m.p_value, "tau2": m.tau2, "i2": m.i2, "q": m.q}
                       if m else {})})
    return out
