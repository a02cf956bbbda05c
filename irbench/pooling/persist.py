"""A :class:`~irbench.pooling.PoolingState` as JSON plus an ``.npz`` of its arrays, for the
store (no pickle: a store may come from someone else)."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np


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
