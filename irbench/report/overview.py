"""The overview tables a TREC overview paper prints beside the leaderboard: the runs ranked
within each run type (automatic / manual, or any field ``report.rank_by`` names) and the best
run of each group. Computed from the leaderboard (the store's means), ranked by its first
measure; ties keep the leaderboard's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import documented

DEFAULT_RANK_BY = ("type",)


_f = documented


@dataclass(frozen=True)
class RankedRun:
    """One run in an overview table."""

    rank: int = _f("its rank within the table")
    overall: int = _f("its rank on the whole leaderboard")
    name: str = _f("system name (participant text)")
    group: str = _f("its group (participant text)")
    value: str = _f("its mean on the ranking measure, printed")


@dataclass(frozen=True)
class Ranking:
    """The runs sharing one value of one field (e.g. type = manual), best first."""

    field: str = _f("the field (type, group, official, pooled, ...: report.rank_by)")
    value: str = _f("its value shared by the runs (participant text)")
    rows: tuple[RankedRun, ...] = _f("the runs, best first")


@dataclass(frozen=True)
class Overview:
    """Section 2: rankings per run type (or other fields) and the best run per group."""

    measure: str = _f("the ranking measure (the leaderboard's first)")
    description: str = _f("what the tables hold, in a sentence (computed)")
    rankings: tuple[Ranking, ...] = _f("one per (field, value), fields in report.rank_by "
                                       "order; a field with fewer than two values is left out")
    best_per_group: tuple[RankedRun, ...] = _f("each group's best run, best group first "
                                               "(empty with fewer than two groups)")


OVERVIEW_TYPES = (RankedRun, Ranking, Overview)


def campaign_overview(config, store, board) -> Overview | None:
    """Section 2 of a campaign: :func:`overview` of ``board`` by the config's
    ``report.rank_by`` (default: type), the store's systems lending their declared fields."""
    return overview(board, config.report.rank_by or DEFAULT_RANK_BY,
                    {s.name: s for s in store.declared_systems()})


def _value(row, system, name: str) -> str:
    """The row's value of field ``name`` as printed: the leaderboard row's when it has the
    field (pooled as the report decided it), else the declared system's; '' when unset."""
    value = getattr(row, name) if hasattr(row, name) else getattr(system, name, None)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def overview(board, rank_by=DEFAULT_RANK_BY, systems=None) -> Overview | None:
    """The overview tables of ``board`` (a Leaderboard); ``systems`` ({name: System}) lends
    the fields a leaderboard row does not show (description, priority). None when there is
    nothing to split (no field with two values, fewer than two groups)."""
    systems = systems or {}
    if not board.rows or not board.measures:
        return None
    measure = board.measures[0]

    def ranked(rows) -> tuple[RankedRun, ...]:
        return tuple(RankedRun(k, r.rank, r.name, r.group, r.cells[0].text)
                     for k, r in enumerate(rows, 1))

    rankings = []
    for name in rank_by:
        values = list(dict.fromkeys(_value(r, systems.get(r.name), name)
                                    for r in board.rows))
        values = [v for v in values if v]
        if len(values) < 2:
            continue
        for v in sorted(values):
            rankings.append(Ranking(name, v, ranked(
                r for r in board.rows if _value(r, systems.get(r.name), name) == v)))
    best, seen = [], set()
    for r in board.rows:  # best first: a group's first row is its best run
        if r.group and r.group not in seen:
            seen.add(r.group)
            best.append(r)
    groups = ranked(best) if len(seen) >= 2 else ()
    if not rankings and not groups:
        return None
    fields = list(dict.fromkeys(r.field for r in rankings))
    parts = ([f"the runs ranked by {measure} within each value of {' and of '.join(fields)}"]
             if fields else [])
    if groups:
        parts.append(f"the best run by {measure} of each of the {len(groups)} groups")
    unsplit = [f for f in rank_by if f not in fields]
    sentence = " and ".join(parts)
    description = (sentence[:1].upper() + sentence[1:] + " (as overview papers print them); "
                   "'overall' is the run's rank on the whole leaderboard."
                   + (f" No ranking by {' or '.join(unsplit)}: the runs do not have two "
                      "values of it." if unsplit else ""))
    return Overview(measure, description, tuple(rankings), groups)
