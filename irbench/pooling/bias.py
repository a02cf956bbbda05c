"""Pool bias by leave-one-out (Zobel, SIGIR 1998; NIST's leave-one-group-out procedure).

For each run (or each group): remove from the qrels the documents that only it (only its group)
contributed to the pool, re-score its runs with the reduced qrels, and compare with their
scores under the full qrels. A large drop means runs like it, had they not been pooled, would be
under-rated by this pool: the pool is not reusable for them. Scores come from
:func:`irbench.evaluate` (trec_eval semantics, any measure; qrels topics missing from a run
score 0, as with ``-c``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import PoolingError
from ..evaluation import evaluate
from ..measures import measure_list, parse_measure
from ..trec import Qrels
from .pool import Pool, judgment_values
from .table import RunTable


@dataclass(frozen=True, eq=False)
class LeaveOneOut:
    """Per run: the unit left out (itself or its group), the judgments removed, and each
    measure's mean under the full and the reduced qrels. ``change`` = reduced - full, (M, R)."""

    by: str
    runs: tuple[str, ...]
    unit: tuple[str, ...]
    measures: tuple[str, ...]
    removed: np.ndarray
    removed_relevant: np.ndarray
    full: np.ndarray
    reduced: np.ndarray

    @property
    def change(self) -> np.ndarray:
        return self.reduced - self.full

    @property
    def relative_change(self) -> np.ndarray:
        return np.where(self.full != 0, self.change / np.where(self.full != 0, self.full, 1), 0.0)

    def summary(self, measure: str, top: int | None = 5) -> dict:
        """Mean and maximum absolute change of ``measure`` and the ``top`` runs most affected
        (every run if None)."""
        m = self.measures.index(str(parse_measure(measure)))
        change = self.change[m]
        return {"measure": self.measures[m], "mean_change": float(change.mean()),
                "max_drop": float(-change.min()) if len(change) else 0.0,
                "mean_relative_change": float(self.relative_change[m].mean()),
                "most_affected": [(r["run"], r["change"], r["relative_change"])
                                  for r in self.rows(measure, top)]}

    def rows(self, measure: str, top: int | None = None) -> list[dict]:
        """One record per run for ``measure``, the most affected first (most negative change;
        ties in run order), the first ``top`` only unless None: run, left_out (the run or its
        group), full, reduced, change, relative_change, removed, removed_relevant."""
        m = self.measures.index(str(parse_measure(measure)))
        order = np.argsort(self.change[m], kind="stable")[:top]
        return [{"run": self.runs[i], "left_out": self.unit[i], "full": float(self.full[m, i]),
                 "reduced": float(self.reduced[m, i]), "change": float(self.change[m, i]),
                 "relative_change": float(self.relative_change[m, i]),
                 "removed": int(self.removed[i]),
                 "removed_relevant": int(self.removed_relevant[i])} for i in order]


@dataclass(frozen=True)
class Coverage:
    """How far a rebuilt pool is the pool that was judged: ``judged`` (topic, document) pairs
    of the qrels (level >= 0), ``covered`` of them in the pool; ``pooled`` documents in the
    pool, ``unjudged`` of them without a judgment. Leave-one-out figures are sound only when
    the pool holds every judgment (``complete``): a judged document the pool lacks is never
    "removed", so the bias is understated."""

    judged: int
    covered: int
    pooled: int
    unjudged: int

    @property
    def complete(self) -> bool:
        return self.covered == self.judged

    @property
    def exact(self) -> bool:
        """The pool holds every judged document and nothing else: it is the judged pool."""
        return self.complete and self.unjudged == 0

    @property
    def fraction(self) -> float:
        return self.covered / self.judged if self.judged else 1.0

    def describe(self) -> str:
        """One sentence, e.g. for a warning."""
        return (f"the rebuilt pool holds {self.covered:,} of the {self.judged:,} judged "
                f"documents ({self.fraction:.1%}); {self.unjudged:,} of its {self.pooled:,} "
                "documents were never judged")


def pool_coverage(pool: Pool, qrels: Qrels) -> Coverage:
    """How much of ``qrels`` the pool ``pool`` holds (see :class:`Coverage`)."""
    judged = qrels.relevance >= 0
    q_topic = np.searchsorted(pool.topics, qrels.query_id)
    q_topic = np.where(pool.topics[np.minimum(q_topic, len(pool.topics) - 1)]
                       == qrels.query_id, q_topic, -1) if len(pool.topics) else \
        np.full(len(qrels), -1)
    marks = Qrels("pool", pool.query_id, pool.doc_id, np.ones(len(pool), dtype=np.int64),
                  np.arange(1, len(pool) + 1))
    in_pool = judgment_values(pool.topics, q_topic, qrels.doc_id, marks) == 1
    p_topic = np.searchsorted(pool.topics, pool.query_id)
    graded = Qrels("judged", qrels.query_id[judged], qrels.doc_id[judged],
                   np.ones(int(judged.sum()), dtype=np.int64), qrels.line[judged])
    has_judgment = judgment_values(pool.topics, p_topic, pool.doc_id, graded) == 1
    return Coverage(int(judged.sum()), int((judged & in_pool & (q_topic >= 0)).sum()),
                    len(pool), int((~has_judgment).sum()))


def unit_names_of(table: RunTable, by: str) -> tuple[str, ...]:
    """The names of the units left out: runs, or groups."""
    return table.runs if by == "run" else table.groups


def unique_documents(pool: Pool, by: str = "run") -> np.ndarray:
    """Per pooled document: the run (``by="run"``) or group index that alone contributed it,
    or -1 (contributed by several, or by none)."""
    if by not in ("run", "group"):
        raise PoolingError(f"leave-one-out is by 'run' or 'group', not {by!r}")
    p = pool.provenance
    unit = p.run if by == "run" else p.group
    n = len(pool)
    width = np.int64(max(len(pool.runs), len(pool.groups)))
    pairs = np.unique(p.doc.astype(np.int64) * width + unit)
    doc, who = np.divmod(pairs, width)
    count = np.bincount(doc, minlength=n)
    out = np.full(n, -1, dtype=np.int64)
    single = count[doc] == 1
    out[doc[single]] = who[single]
    return out


def leave_one_out(table: RunTable, qrels: Qrels, pool: Pool, *, by: str = "run",
                  measures=("AP",), relevance_level: int = 1, progress=None) -> LeaveOneOut:
    """Leave each run (``by="run"``) or group (``by="group"``) out of ``pool`` in turn;
    ``progress(done, total, what)`` hears of each unit left out.

    ``pool`` is the pool the qrels were judged from (e.g. ``build_pool(table, "depth", k=100,
    contributing=pooled_runs)``): its provenance says who contributed what. Every run of the
    table is re-scored when its unit is left out; runs that contributed nothing alone keep
    their scores (a change of 0).
    """
    names = [str(parse_measure(m)) for m in measure_list(measures)]
    alone = unique_documents(pool, by)
    # each qrels row's pooled document (its unit) -> which rows a unit's removal drops
    q_topic = np.searchsorted(pool.topics, qrels.query_id)
    q_topic = np.where(pool.topics[np.minimum(q_topic, len(pool.topics) - 1)] == qrels.query_id,
                       q_topic, -1)
    unit_pool = Qrels("units", pool.query_id, pool.doc_id, alone, np.arange(1, len(pool) + 1))
    q_unit = judgment_values(pool.topics, q_topic, qrels.doc_id, unit_pool)
    R, M = table.num_runs, len(names)
    full = np.zeros((M, R))
    reduced = np.zeros((M, R))
    removed = np.zeros(R, dtype=np.int64)
    removed_rel = np.zeros(R, dtype=np.int64)
    unit_of_run = np.arange(R) if by == "run" else table.run_group
    for r, run in enumerate(table.sources):
        ev = evaluate(qrels, run, names, complete=True, relevance_level=relevance_level)
        full[:, r] = [ev.summary(m) for m in names]
    units = np.unique(unit_of_run[pool.contributing])
    for k, u in enumerate(units):
        if progress is not None:
            progress(k + 1, len(units), f"leaving out {unit_names_of(table, by)[int(u)]}")
        drop = q_unit == u
        members = np.flatnonzero(unit_of_run == u)
        reduced[:, members] = full[:, members]
        if not drop.any():
            continue
        removed[members] = int(drop.sum())
        removed_rel[members] = int((qrels.relevance[drop] >= relevance_level).sum())
        keep = ~drop
        sub = Qrels(name=f"{qrels.name}-without-{u}", query_id=qrels.query_id[keep],
                    doc_id=qrels.doc_id[keep], relevance=qrels.relevance[keep],
                    line=qrels.line[keep], path=qrels.path)
        for member in members:
            ev = evaluate(sub, table.sources[member], names, complete=True,
                          relevance_level=relevance_level)
            reduced[:, member] = [ev.summary(m) for m in names]
    untouched = ~np.isin(unit_of_run, unit_of_run[pool.contributing])
    reduced[:, untouched] = full[:, untouched]
    unit_names = table.runs if by == "run" else tuple(table.groups[g] for g in table.run_group)
    return LeaveOneOut(by=by, runs=table.runs, unit=tuple(unit_names), measures=tuple(names),
                       removed=removed, removed_relevant=removed_rel, full=full,
                       reduced=reduced)
