"""Pooling: which documents to judge, simulated budgets, pool statistics and pool bias.

Data flow::

    build_table(runs) -> RunTable                      (all runs as one ranked column table)
    build_pool(table, "depth", k=100) -> Pool          (static strategies)
    PoolingState(table, "mtf", budget=100)             (adaptive: next_batch / record, or
        .run_oracle(Oracle(table, qrels)) -> .pool()    an oracle for simulation)
    pool_stats(table, pool, judgments) -> PoolStats
    simulate_budgets(table, qrels, ...) -> BudgetSimulation
    leave_one_out(table, qrels, pool, ...) -> LeaveOneOut
    write_assessor_files(pool, folder) / read_assessor_file(path, pool)
    cited_pool(answer_runs, "first") -> CitedPool       (cited segments for support judging)
    load_state(store, name, table) / save_state(store, name, state)   (a pool being judged)

Strategies are looked up in :data:`STRATEGIES` (``describe()`` prints them with references).
"""

from ..errors import JudgmentError, PoolingError, UnknownStrategyError
from . import adaptive, depth, fusion, sampling  # noqa: F401  (register the strategies)
from .assessor import read_assessor_file, write_assessor_files
from .bias import Coverage, LeaveOneOut, leave_one_out, pool_coverage, unique_documents
from .build import build_pool
from .cited import (
    CitedPool,
    answer_systems,
    cited_format,
    cited_pool,
    cited_summary,
    read_answer_runs,
    write_cited,
)
from .persist import load_state, save_state
from .pool import Pool, Provenance
from .simulation import (
    DEFAULT_STRATEGIES,
    BudgetSimulation,
    format_simulation,
    simulate_budgets,
    split_params,
)
from .state import Batch, Oracle, PoolingState
from .stats import PoolStats, pool_stats
from .strategy import STRATEGIES, Param, Strategy, describe, get_strategy, register
from .table import RunTable, build_table, contributing_runs

__all__ = [
    "build_table", "RunTable", "contributing_runs", "build_pool", "Pool", "Provenance",
    "PoolingState", "Batch", "Oracle", "STRATEGIES", "Strategy", "Param", "register",
    "get_strategy", "describe", "PoolingError", "UnknownStrategyError", "JudgmentError",
    "write_assessor_files", "read_assessor_file", "leave_one_out", "LeaveOneOut",
    "unique_documents", "simulate_budgets", "BudgetSimulation", "format_simulation",
    "pool_stats", "PoolStats", "pool_coverage", "Coverage", "load_state", "save_state",
    "DEFAULT_STRATEGIES", "split_params", "CitedPool", "cited_pool", "answer_systems",
    "read_answer_runs", "write_cited", "cited_format", "cited_summary",
]
