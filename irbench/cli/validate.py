"""``irbench validate [CONFIG] [RUN...] [--topics FILE] [--rules RULES.yaml]``.

CONFIG first, as every campaign command takes it (a ``.yaml``/``.yml`` file): its topics (else
its first qrels set's), its systems' groups, its ``validation:`` rules and, without RUN, its
runs. ``--config CONFIG`` is the older, deprecated spelling.

Prints every problem of each run file as ``FILE:LINE: SEVERITY: MESSAGE [CHECK]`` (at most
``max_shown`` per file, then ``... and N more problems in FILE``), then one verdict line per
file. Exit status: 0 when every file is accepted, 1 when any is rejected. Problems with the
command's own inputs (rules, topics, config) are library errors, printed by ``cli.main``.
"""

from __future__ import annotations

import json
import sys

from ..config import load_config
from ..errors import UsageError
from ..submissions import check_submissions, load_rules, report_lines
from ..submissions.rules import CHECKS, Rules
from ..topics import Topics, read_topics


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "validate", help="check submitted run files before they enter a campaign",
        description="Check run files as NIST's submission checkers do: format, encoding, "
        "topics, documents per topic, duplicates, run tags, file limits, ir_metadata. Prints "
        "every problem with FILE:LINE, then a verdict per file; exits 1 if any is rejected.",
        epilog="checks (default severity): " + ", ".join(
            f"{name} ({level})" for name, (level, _) in CHECKS.items()))
    p.add_argument("runs", nargs="*", metavar="[CONFIG] RUN",
                   help="a campaign config (.yaml: its topics, groups, validation rules and, "
                   "without RUN, its runs), then run files (.gz is fine)")
    p.add_argument("--config", default=None, help="deprecated: give CONFIG first instead")
    p.add_argument("--topics", default=None, metavar="FILE",
                   help="topic set (TREC topics or 'qid<TAB>text'); overrides --config's")
    p.add_argument("--rules", default=None, metavar="RULES",
                   help="rules file (YAML): severities and limits; default NIST-like rules")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default text)")
    p.set_defaults(handler=cmd_validate)


CONFIG_SUFFIXES = (".yaml", ".yml")


def cmd_validate(args) -> int:
    runs = list(args.runs)
    config_path = args.config
    if config_path is not None:
        print("irbench: warning: --config is deprecated: give the config first, "
              "'irbench validate CONFIG [RUN...]'", file=sys.stderr)
    elif runs and runs[0].lower().endswith(CONFIG_SUFFIXES):
        config_path = runs.pop(0)
    groups: dict[str, str] = {}
    topics_path = args.topics
    rules = load_rules(args.rules) if args.rules else None
    config = None
    if config_path:
        config = load_config(config_path, strict=False)
        topics_path = topics_path or config.topics
        groups = {s.path: s.group for s in config.systems if s.group}
        if rules is None and config.validation is not None:  # the rules 'irbench run' applies
            rules = config.validation.rules
        if not runs:
            runs = [s.path for s in config.systems]
    rules = rules if rules is not None else Rules()
    if not runs:
        raise UsageError("no run files: give RUN files, or a CONFIG with systems")
    topics = read_topics(topics_path) if topics_path else None
    if topics is None and config is not None and config.qrels:  # the qrels' topics
        topics = _qrels_topics(config.qrels[0])
    print(f"irbench validate: topic set: {topics.path} ({len(topics)} topics)" if topics else
          "irbench validate: no topic set given: topic ids are not checked", file=sys.stderr)
    return _print_checks(args, check_submissions(runs, rules, topics, groups), rules, topics)


def _print_checks(args, checks, rules, topics) -> int:
    """Each run's verdict (--format text or json); 1 if any run is rejected."""
    rejected = sum(not c.accepted for c in checks)
    if args.format == "json":
        json.dump({"accepted": len(checks) - rejected, "rejected": rejected,
                   "topics": topics.path if topics else None, "rules": rules.path,
                   "runs": [c.as_dict() for c in checks]},
                  sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        for check in checks:
            for line in report_lines(check, rules.max_shown):
                print(line)
        if len(checks) > 1:
            print(f"{len(checks)} runs: {len(checks) - rejected} accepted, {rejected} rejected")
    return 1 if rejected else 0


def _qrels_topics(spec) -> Topics:
    """The topics a qrels set judges, in file order, as the topic set of the checks."""
    qrels = spec.read()
    ids = list(dict.fromkeys(q.decode("utf-8", "backslashreplace") for q in qrels.query_id))
    return Topics(tuple(ids), ("",) * len(ids), f"{spec.path} (the topics of qrels set "
                                                 f"'{spec.name}')")
