"""The submission checker: is each run file fit to enter a campaign?

``check_run(path, rules, topics) -> RunCheck`` checks one file (format, encoding, content,
file limits, its ir_metadata block); ``check_submissions(paths, rules, topics) -> list[RunCheck]``
adds the checks across files (runs per group, run tags unique). Every check has a name
(:data:`CHECKS`) and a severity (error, warning or off) set in :class:`Rules`, loaded from YAML
with :func:`load_rules`. A run is accepted when it has no errors.

Modules, in the order of the data flow: ``rules`` (what to check), ``lines`` (reading and the
per-line format checks, vectorised), ``content`` (topics, documents per topic, duplicates, rank
order, docnos), ``check`` (one file, then across files), ``problems`` (results and their text).

The package's names are imported when first asked for (PEP 562): ``irbench run`` reads each
run's ir_metadata block (``ir_metadata.py``) and checks its runs only when a config asks for
``validation:`` (6 ms of its start-up otherwise).
"""

from __future__ import annotations

from typing import Any

from ..registry import exported

_EXPORTS = {"DEFAULT_RULES": "check", "check_run": "check", "check_submissions": "check",
            "run_name": "check", "KEEP_PER_CHECK": "problems", "Problem": "problems",
            "RunCheck": "problems", "report_lines": "problems", "verdict_line": "problems",
            "CHECKS": "rules", "SEVERITIES": "rules", "Rules": "rules", "build_rules": "rules",
            "load_rules": "rules", "rules_from_mapping": "rules"}

__all__ = ["CHECKS", "DEFAULT_RULES", "KEEP_PER_CHECK", "Problem", "Rules", "RunCheck",
           "SEVERITIES", "build_rules", "check_run", "check_submissions", "load_rules",
           "report_lines", "rules_from_mapping", "run_name", "verdict_line"]


def __getattr__(name: str) -> Any:
    return exported(__name__, _EXPORTS, name)
