"""The config's ``report:`` section as a checked :class:`ReportSpec`, built by the config
builder: every problem as ``FILE:LINE: report.OPTION: reason``, like the config's own. They do
not stop the config from loading (``irbench run`` still scores the runs); ``irbench report``
and the report's analyses refuse a config that has them, and ``irbench check`` lists them
with the rest."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from difflib import get_close_matches
from typing import Any

from ..errors import MeasureParameterError, UnknownMeasureError
from ..measures import Measure, parse_measure
from ..system import System

REPORT_OPTIONS = ("leaderboard_suites", "measure", "pool_depth", "pooled_per_group", "rank_by",
                  "reduction_design", "title")
# what report.rank_by may name: the fields of a system but its name, run path and metadata
RANK_FIELDS = tuple(f.name for f in fields(System)
                    if f.name not in ("name", "path", "metadata", "answer_format", "command"))
# the judgment-reduction designs (irbench.analyses.reduction.DESIGNS: a test checks they agree)
REDUCTION_DESIGNS = ("buckley-voorhees", "sampled")


@dataclass(frozen=True, kw_only=True)
class ReportSpec:
    """What the config's ``report:`` asks of the report; an option with a problem is None."""

    title: str | None = None  # the report's heading (default: the campaign's name)
    measure: Measure | None = None  # the focus measure (default: the first suite's first)
    pool_depth: int | None = None  # the pool depth the qrels were built with (pool bias)
    pooled_per_group: int | None = None  # each group's runs that were pooled, by priority
    rank_by: tuple[str, ...] | None = None  # the overview's system fields
    reduction_design: str | None = None  # the judgment-reduction experiment's design
    leaderboard_suites: tuple[str, ...] | None = None  # the suites with a leaderboard (all)
    given: tuple[str, ...] = ()  # the options the config writes (any value)
    problems: tuple[str, ...] = ()  # FILE:LINE: report.OPTION: reason, by line

    def __bool__(self) -> bool:
        return bool(self.given)


Problem = Callable[[tuple, str], None]


def build_report(report: dict, measures: tuple[Measure, ...], problem: Problem,
                 suites: tuple[str, ...] = ()) -> ReportSpec:
    """The checked :class:`ReportSpec` of the ``report:`` mapping (``suites``: the config's
    suite names); ``problem(where, reason)`` is told of each problem (``where`` starts with
    ``"report"``)."""
    def at(*where: Any) -> tuple:
        return ("report",) + where

    for option in report:
        if option not in REPORT_OPTIONS:
            close = get_close_matches(option, REPORT_OPTIONS, n=1)
            problem(at(option), "unknown option" + (f" (did you mean {close[0]}?)" if close else "")
                    + f" (report takes {', '.join(REPORT_OPTIONS)})")
    measure = None
    if report.get("measure") is not None:
        try:
            measure = parse_measure(str(report["measure"]))
        except (UnknownMeasureError, MeasureParameterError) as exc:
            problem(at("measure"), str(exc))
        else:
            if measure not in measures:
                problem(at("measure"), f"{measure} is in no suite")
                measure = None
    design = report.get("reduction_design")
    if design is not None and design not in REDUCTION_DESIGNS:
        problem(at("reduction_design"),
                f"must be one of {', '.join(REDUCTION_DESIGNS)}, not {design!r}")
        design = None
    counts: dict[str, int | None] = {}
    for option in ("pool_depth", "pooled_per_group"):
        value = report.get(option)
        if value is not None and (type(value) is not int or value < 1):
            problem(at(option), f"must be a whole number >= 1, not {value!r}")
            value = None
        counts[option] = value
    title = report.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        problem(at("title"), "must be text, the report's heading (default: the config's name), "
                             f"not {title!r}")
        title = None
    return ReportSpec(title=title, measure=measure, pool_depth=counts["pool_depth"],
                      pooled_per_group=counts["pooled_per_group"],
                      rank_by=_rank_by(report, problem), reduction_design=design,
                      leaderboard_suites=_suites(report, suites, problem),
                      given=tuple(report))


def _rank_by(report: dict, problem: Problem) -> tuple[str, ...] | None:
    """``report.rank_by``: system fields to rank within, in the order given."""
    return _names(report, "rank_by", RANK_FIELDS, problem, what="system field",
                  plural="system fields", listing=f"rank_by takes {', '.join(RANK_FIELDS)}",
                  example="[type] or [type, group]", empty=True)


def _suites(report: dict, suites: tuple[str, ...], problem: Problem) -> tuple[str, ...] | None:
    """``report.leaderboard_suites``: the suites given a leaderboard, in the order given
    (default: every suite, in config order)."""
    return _names(report, "leaderboard_suites", suites, problem, what="suite",
                  plural="suite names", listing=f"the config's suites: {', '.join(suites)}",
                  example=f"[{', '.join(suites[:2]) or 'core'}]", empty=False)


def _names(report: dict, key: str, known: Sequence[str], problem: Problem, *, what: str,
           plural: str, listing: str, example: str, empty: bool) -> tuple[str, ...] | None:
    """``report.KEY``: a list of names of ``known``, each once (None when not given or
    refused: each problem said, an unknown name with the closest known one)."""
    chosen = report.get(key)
    if chosen is None:
        return None
    if not isinstance(chosen, list) or not (chosen or empty):
        problem(("report", key), f"must be a list of {plural}, e.g. {example} (of "
                f"{', '.join(known)}), not {chosen!r}")
        return None
    ok = True
    for i, name in enumerate(chosen):
        if name not in known:
            close = get_close_matches(name, known, n=1) if isinstance(name, str) else []
            problem(("report", key, i), f"unknown {what} {name!r}"
                    + (f" (did you mean {close[0]}?)" if close else "") + f" ({listing})")
            ok = False
        elif name in chosen[:i]:
            problem(("report", key, i), f"{name} given twice")
            ok = False
    return tuple(chosen) if ok else None
