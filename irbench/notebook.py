"""A campaign's store from a notebook: ``irbench.open_store("configs/demo.yaml")`` gives its
documented views as pandas DataFrames, each read opening the store read-only for that read
only. The one module that joins a config to its store for readers, so the store itself never
knows the config. For a config with ``collections:`` each collection's scores are read from
its part of the store (``collection=NAME``, else every collection, a ``collection`` column
first), and :meth:`StoreFrames.across` compares the systems across the collections.

Across collections from a config's views (one per collection, :func:`irbench.config.
load_configs`): each collection's stored per-topic scores of one measure
(:func:`collection_scores`, read through :meth:`irbench.store.Store.score_matrix`), the
comparison :func:`irbench.stats.across.across` of them (:func:`compare_views`) and its records
(:func:`records`, columns :data:`COLUMNS`) are what ``irbench compare --across`` (table, CSV,
JSON, LaTeX), :meth:`StoreFrames.across` and the report's page over the collections read, so
they show the same numbers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .config import Config, load_configs
from .errors import OptionError, StatisticsError
from .measures import parse_measure
from .stats.across import Across, CollectionScores, across
from .stats.choices import DEFAULT_CORRECTION, DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST
from .store import Store
from .trec.frames import pandas_module

COLUMNS = ("system", "collection", "mean", "mean_rank", "collections", "mean_diff",
           "p_value", "p_adjusted", "outcome", "wins", "ties", "losses", "effect",
           "ci_low", "ci_high", "effect_p", "tau2", "i2", "q", "seconds_per_topic",
           "peak_rss_bytes")


def collection_scores(views: Sequence, qrels: str | None, measure: str,
                      wait: float | None = None) -> tuple[list[CollectionScores], list[str]]:
    """Each collection's stored values of ``measure`` on qrels set ``qrels`` (None: each
    view's first set), and a note for each collection with none (left out)."""
    scores, notes = [], []
    for config in views:
        name = config.qrels_set(qrels).name
        with Store(config.store, scope=config.scope, read_only=True, wait=wait) as store:
            systems, topics, values = store.score_matrix(name, measure)
            costs = {s: (run.wall_seconds or 0.0, run.peak_rss_bytes or 0)
                     for s, run in store.command_costs().items()}
        if not systems:
            notes.append(f"collection '{config.scope}': no stored {measure} scores on qrels "
                         f"'{name}' (irbench run CONFIG)")
            continue
        scores.append(CollectionScores(config.scope, tuple(systems), tuple(topics), values,
                                       costs=costs))
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
                    "seconds_per_topic": s.seconds_per_topic, "peak_rss_bytes": s.peak_rss_bytes,
                    **({"effect": m.effect, "ci_low": m.ci_low, "ci_high": m.ci_high,
                        "effect_p": m.p_value, "tau2": m.tau2, "i2": m.i2, "q": m.q}
                       if m else {})})
    return out


class StoreFrames:
    """A campaign's stored scores as pandas DataFrames, for notebooks:
    ``irbench.open_store("configs/demo.yaml").per_query()``. Each call opens the store
    read-only for the time of one read (waiting up to ``wait`` seconds, default
    :data:`READER_WAIT`, for a running ``irbench run``), so a notebook never holds the store.
    ``views``: the config's collections (:func:`irbench.config.load_configs`), when known."""

    def __init__(self, path: str, wait: float | None = None, views: Sequence[Config] = ()):
        self.path = path
        self.wait = wait
        self.views = tuple(views)

    @property
    def several(self) -> bool:
        """Whether the config has several collections (``collections:``)."""
        return any(v.several for v in self.views)

    def per_query(self, qrels: str | None = None, systems: Sequence[str] = (),
                  measures: Sequence[str] = (), collection: str | None = None):
        """Columns system, qrels, measure, query_id, value: one row per score (for a config
        with collections: those of ``collection``, else of every collection with a
        ``collection`` column first)."""
        return self._frame("per_query", qrels, systems, measures, collection)

    def means(self, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = (), collection: str | None = None):
        """Columns system, qrels, measure, value, num_topics: trec_eval's ``all`` values (for
        a config with collections as :meth:`per_query`)."""
        return self._frame("means", qrels, systems, measures, collection)

    def _frame(self, view: str, qrels, systems, measures, collection):
        if not self.several:
            if collection is not None:
                raise OptionError(f"{self.path}: one collection: no collection= to choose")
            with Store(self.path, read_only=True, wait=self.wait) as store:
                return store.frame(view, qrels, systems, measures)
        frames = []
        for config in self._chosen(collection):
            with Store(self.path, scope=config.scope, read_only=True,
                       wait=self.wait) as store:
                frame = store.frame(view, qrels, systems, measures)
            if collection is not None:
                return frame
            frame.insert(0, "collection", config.scope)
            frames.append(frame)
        return pandas_module("a store's frame").concat(frames, ignore_index=True)

    def _chosen(self, collection: str | None) -> tuple[Config, ...]:
        if collection is None:
            return self.views
        chosen = tuple(v for v in self.views if v.scope == collection)
        if not chosen:
            raise OptionError(f"no collection '{collection}' (it has "
                             f"{', '.join(v.scope for v in self.views)})")
        return chosen

    def across(self, measure: str | None = None, qrels: str | None = None,
               baseline: str | None = None, effect: str = "raw", test: str | None = None,
               correction: str | None = None, alpha: float = 0.05):
        """The systems compared across the collections, as ``irbench compare CONFIG --across
        --format csv`` writes it: one row per system and collection (its mean, its paired test
        against the baseline, p adjusted over every collection), then a row per system with
        collection ``all`` (mean, mean rank, W/T/L, the random-effects meta-analysis), systems
        best first. ``measure``: default the first the first collection's qrels set takes;
        ``baseline``: default the system the config marks; ``effect``: raw or smd."""
        if not self.views:
            raise OptionError(f"{self.path}: across() needs the campaign's config (open_store"
                             "(CONFIG)), not its store alone")
        measure = str(parse_measure(measure)) if measure else \
            default_measure(self.views, qrels)
        result = compare_views(self.views, measure, qrels=qrels, baseline=baseline,
                               test=test, correction=correction, alpha=alpha, effect=effect,
                               wait=self.wait)
        pandas = pandas_module("across()")
        frame = pandas.DataFrame.from_records(records(result), columns=list(COLUMNS))
        frame.attrs["notes"] = list(result.notes)
        return frame.fillna(value=float("nan"))


def open_store(config, wait: float | None = None) -> StoreFrames:
    """The stored scores of a campaign: ``config`` is a campaign config (its path or a
    :class:`~irbench.config.Config`) or the store's own path."""
    if isinstance(config, Config):
        return StoreFrames(config.store, wait, (config,))
    path = os.fspath(config)
    if path.lower().endswith((".yaml", ".yml")):
        views = load_configs(path, strict=False)
        return StoreFrames(views[0].store, wait, views)
    return StoreFrames(path, wait)
