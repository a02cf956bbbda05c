"""A campaign's store from a notebook: ``irbench.open_store("configs/demo.yaml")`` gives its
documented views as pandas DataFrames, each read opening the store read-only for that read
only. The one module that joins a config to its store for readers, so the store itself never
knows the config. For a config with ``collections:`` each collection's scores are read from
its part of the store (``collection=NAME``, else every collection, a ``collection`` column
first), and :meth:`StoreFrames.across` compares the systems across the collections."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .across_views import COLUMNS, compare_views, default_measure, records
from .config import Config, load_configs
from .errors import UsageError
from .measures import parse_measure
from .store import Store
from .trec.frames import pandas_module


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
                raise UsageError(f"{self.path}: one collection: no collection= to choose")
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
            raise UsageError(f"no collection '{collection}' (it has "
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
            raise UsageError(f"{self.path}: across() needs the campaign's config (open_store"
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
