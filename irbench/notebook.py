"""A campaign's store from a notebook: ``irbench.open_store("configs/demo.yaml")`` gives its
documented views as pandas DataFrames, each read opening the store read-only for that read
only. The one module that joins a config to its store for readers, so the store itself never
knows the config."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .config import Config, load_config
from .store import Store


class StoreFrames:
    """A campaign's stored scores as pandas DataFrames, for notebooks:
    ``irbench.open_store("configs/demo.yaml").per_query()``. Each call opens the store
    read-only for the time of one read (waiting up to ``wait`` seconds, default
    :data:`READER_WAIT`, for a running ``irbench run``), so a notebook never holds the store."""

    def __init__(self, path: str, wait: float | None = None):
        self.path = path
        self.wait = wait

    def per_query(self, qrels: str | None = None, systems: Sequence[str] = (),
                  measures: Sequence[str] = ()):
        """Columns system, qrels, measure, query_id, value: one row per score."""
        with Store(self.path, read_only=True, wait=self.wait) as store:
            return store.frame("per_query", qrels, systems, measures)

    def means(self, qrels: str | None = None, systems: Sequence[str] = (),
              measures: Sequence[str] = ()):
        """Columns system, qrels, measure, value, num_topics: trec_eval's ``all`` values."""
        with Store(self.path, read_only=True, wait=self.wait) as store:
            return store.frame("means", qrels, systems, measures)


def open_store(config, wait: float | None = None) -> StoreFrames:
    """The stored scores of a campaign: ``config`` is a campaign config (its path or a
    :class:`~irbench.config.Config`) or the store's own path."""
    if isinstance(config, Config):
        return StoreFrames(config.store, wait)
    path = os.fspath(config)
    if path.lower().endswith((".yaml", ".yml")):
        return StoreFrames(load_config(path, strict=False).store, wait)
    return StoreFrames(path, wait)
