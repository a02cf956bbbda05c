"""The submission checker: is each run file fit to enter a campaign?

``check_run(path, rules, topics) -> RunCheck`` checks one file (format, encoding, content,
file limits, its ir_metadata block); ``check_submissions(paths, rules, topics) -> list[RunCheck]``
adds the checks across files (runs per group, run tags unique). Every check has a name
(:data:`CHECKS`) and a severity (error, warning or off) set in :class:`Rules`, loaded from YAML
with :func:`load_rules`. A run is accepted when it has no errors.

Modules, in the order of the data flow: ``rules`` (what to check), ``lines`` (reading and the
per-line format checks, vectorised), ``content`` (topics, documents per topic, duplicates, rank
order, docnos), ``check`` (one file, then across files), ``problems`` (results and their text).
"""

from .check import DEFAULT_RULES, check_run, check_submissions, run_name
from .problems import KEEP_PER_CHECK, Problem, RunCheck, report_lines, verdict_line
from .rules import CHECKS, SEVERITIES, Rules, build_rules, load_rules, rules_from_mapping

__all__ = ["CHECKS", "DEFAULT_RULES", "KEEP_PER_CHECK", "Problem", "Rules", "RunCheck",
           "SEVERITIES", "build_rules", "check_run", "check_submissions", "load_rules",
           "report_lines", "rules_from_mapping", "run_name", "verdict_line"]
