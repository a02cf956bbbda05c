"""The config's ``report:`` options, checked: every problem as ``FILE:LINE: report.OPTION:
reason`` (``irbench report``, ``irbench run`` before its analyses, and ``irbench check`` ask
the same)."""

from __future__ import annotations

from dataclasses import fields
from difflib import get_close_matches

from ..config import System
from ..errors import MeasureParameterError, UnknownMeasureError
from ..measures import parse_measure

REPORT_OPTIONS = ("measure", "pool_depth", "pooled_per_group", "rank_by", "reduction_design",
                  "title")
# what report.rank_by may name: the fields of a system but its name, run path and metadata
# (one value per system, or a mapping)
RANK_FIELDS = tuple(f.name for f in fields(System) if f.name not in ("name", "path", "metadata"))


def report_problems(config) -> list[str]:
    """Why the config's ``report:`` section cannot be used (``irbench report``, ``irbench
    run`` before its analyses, and ``irbench check`` ask the same): every problem, each as
    ``FILE:LINE: report.OPTION: reason`` like the config's own."""
    from ..analyses.reduction import DESIGNS  # imports scipy: only when options are checked

    report = config.report
    problems: list[tuple[int, str]] = []

    def problem(where: tuple, reason: str) -> None:
        where = ("report",) + where
        problems.append((config.line(*where), f"{config.at(*where)}: {reason}"))

    for option in report:
        if option not in REPORT_OPTIONS:
            close = get_close_matches(option, REPORT_OPTIONS, n=1)
            problem((option,), "unknown option" + (f" (did you mean {close[0]}?)" if close else "")
                    + f" (report takes {', '.join(REPORT_OPTIONS)})")
    if report.get("measure") is not None:
        try:
            chosen = str(parse_measure(str(report["measure"])))
        except (UnknownMeasureError, MeasureParameterError) as exc:
            problem(("measure",), str(exc))
        else:
            if chosen not in [str(m) for m in config.measures]:
                problem(("measure",), f"{chosen} is in no suite")
    design = report.get("reduction_design")
    if design is not None and design not in DESIGNS:
        problem(("reduction_design",), f"must be one of {', '.join(DESIGNS)}, not {design!r}")
    for option in ("pool_depth", "pooled_per_group"):
        value = report.get(option)
        if value is not None and (type(value) is not int or value < 1):
            problem((option,), f"must be a whole number >= 1, not {value!r}")
    title = report.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        problem(("title",), "must be text, the report's heading (default: the config's name), "
                            f"not {title!r}")
    rank_by = report.get("rank_by")
    if rank_by is not None and not isinstance(rank_by, list):
        problem(("rank_by",), "must be a list of system fields, e.g. [type] or [type, group] "
                              f"(of {', '.join(RANK_FIELDS)}), not {rank_by!r}")
    for i, name in enumerate(rank_by if isinstance(rank_by, list) else []):
        if name not in RANK_FIELDS:
            close = get_close_matches(name, RANK_FIELDS, n=1) if isinstance(name, str) else []
            problem(("rank_by", i), f"unknown system field {name!r}"
                    + (f" (did you mean {close[0]}?)" if close else "")
                    + f" (rank_by takes {', '.join(RANK_FIELDS)})")
        elif name in rank_by[:i]:
            problem(("rank_by", i), f"{name} given twice")
    return [text for _, text in sorted(problems, key=lambda p: p[0])]
