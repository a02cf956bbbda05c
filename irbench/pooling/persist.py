"""A :class:`~irbench.pooling.PoolingState` as JSON plus an ``.npz`` of its arrays, for the
store (no pickle: a store may come from someone else): :func:`load_state` and
:func:`save_state`, the one way the command line, the judges and the assessment desk read and
write a pool being judged."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..trec import Qrels
from .state import PoolingState
from .table import RunTable


class PoolReader(Protocol):
    """What :func:`load_state` needs of a store (the :class:`irbench.store.Store` has it)."""

    def load_pool(self, name: str) -> tuple[str, bytes] | None: ...


class PoolWriter(Protocol):
    """What :func:`save_state` needs of a store (the :class:`irbench.store.Store` has it)."""

    def save_pool(self, name: str, strategy: str, state: str, arrays: bytes,
                  judgments: Sequence[tuple[str, str, int]] | Qrels = (), source: str = "",
                  judge: str = "assessor") -> None: ...


def load_state(store: PoolReader, name: str, table: RunTable) -> PoolingState | None:
    """The state of the pool ``name`` being judged, as last saved in ``store``, against
    ``table`` (the campaign's runs: :meth:`irbench.config.Config.run_table`); None if the store
    has no such pool. A state saved against other runs is a :class:`PoolingError`. The
    judgments made in the browser since are the desk's to apply
    (:func:`irbench.assess.desk.catch_up`)."""
    saved = store.load_pool(name)
    if saved is None:
        return None
    return PoolingState.from_dict(decode_state(*saved), table)


def save_state(store: PoolWriter, name: str, state: PoolingState,
               judgments: Sequence[tuple[str, str, int]] | Qrels = (), source: str = "",
               judge: str = "assessor") -> None:
    """Save ``state`` as the pool ``name``, with the judgments just recorded in it (by
    ``judge``, from the file ``source``) in the same transaction."""
    store.save_pool(name, state.strategy.name, *encode_state(state.to_dict()),
                    judgments=judgments, source=source, judge=judge)


def encode_state(data: dict) -> tuple[str, bytes]:
    """(JSON of the plain values, npz bytes of the arrays) of ``PoolingState.to_dict()``."""
    arrays: dict[str, np.ndarray] = {}

    def plain(value: Any, path: str) -> Any:
        if isinstance(value, np.ndarray):
            arrays[path] = value
            return {"__array__": path}
        if isinstance(value, dict):
            return {str(k): plain(v, f"{path}.{k}") for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v, f"{path}.{i}") for i, v in enumerate(value)]
        if isinstance(value, np.generic):
            return value.item()
        return value

    text = json.dumps(plain(data, "state"), sort_keys=True)
    buf = io.BytesIO()
    # numpy's stub types **kwds as its own keyword allow_pickle: bool; these are arrays by name
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return text, buf.getvalue()


def decode_state(text: str, blob: bytes) -> dict:
    """The dict :func:`encode_state` was given (arrays read without pickle)."""
    arrays = np.load(io.BytesIO(blob), allow_pickle=False)

    def restore(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"__array__"}:
                return arrays[value["__array__"]]
            return {k: restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [restore(v) for v in value]
        return value

    return restore(json.loads(text))
