"""build_pool: one call from runs to a :class:`Pool`, for every registered strategy."""

from __future__ import annotations

from typing import Any

from ..errors import PoolingError
from ..trec import Qrels
from .pool import Pool
from .state import Oracle, PoolingState
from .strategy import get_strategy
from .table import RunTable


def build_pool(table: RunTable, strategy: str = "depth", *, contributing=None,
               per_group: int | None = None, budget=None, total: int | None = None,
               oracle: Qrels | Oracle | None = None, seed: int = 0, relevance_level: int = 1,
               **params: Any) -> Pool:
    """Pool ``table``'s runs with ``strategy`` (see :func:`describe` for each one's parameters).

    Static strategies need nothing more. Adaptive strategies need judgments as they go: pass
    ``oracle=`` existing qrels to simulate them, or use :class:`PoolingState` to judge
    interactively. See :class:`PoolingState` for the other arguments.
    """
    spec = get_strategy(strategy)
    if spec.adaptive and oracle is None:
        raise PoolingError(f"{strategy} is adaptive: it needs judgments as it goes; pass "
                           "oracle=<qrels> to simulate it, or judge with a PoolingState "
                           "(next_batch / record)")
    state = PoolingState(table, strategy, contributing=contributing, per_group=per_group,
                         budget=budget, total=total, seed=seed,
                         relevance_level=relevance_level, **params)
    if oracle is None:
        state.next_batch()
    else:
        if isinstance(oracle, Qrels):
            oracle = Oracle(table, oracle)
        state.run_oracle(oracle)
    return state.pool()
