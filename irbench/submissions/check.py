"""Checking run files: :func:`check_run` for one file, :func:`check_submissions` for a batch.

A run's group comes from, in order: the rules' ``groups`` mapping (by run tag), the
campaign config's ``group`` of the system (``groups`` argument, by path), the run's
ir_metadata (``group`` or ``actor.team``), and last the run tag through
``rules.group_pattern`` (``groupA-1`` -> ``groupA``; a tag that does not match is its own
group).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..topics import Topics
from ..trec import run_name
from .answers import check_answers, is_answer_file
from .content import check_content
from .ir_metadata import find_ir_metadata, run_fields
from .lines import Unreadable, read_file, scan
from .problems import Collector, Problem, RunCheck, with_problems
from .rules import Rules

DEFAULT_RULES = Rules()


def check_run(path: str | os.PathLike, rules: Rules = DEFAULT_RULES,
              topics: Topics | None = None) -> RunCheck:
    """Check one run file against ``rules`` (and the topic set, when given).

    Never raises for problems in the file: they are the result. An answer run (JSON lines)
    is checked by the answer reader's rules (:mod:`.answers`). The cross-file checks
    (``runs_per_group``, ``duplicate_tag``) need :func:`check_submissions`.
    """
    path = os.fspath(path)
    out = Collector(path, rules)
    try:
        data = read_file(path)
        size = os.stat(path).st_size
    except Unreadable as exc:
        out.add("file", 0, str(exc))
        return out.result(run_tag="")
    if rules.max_file_size is not None and size > rules.max_file_size:
        out.add("file_size", 0, f"the file is {size:,} bytes, at most "
                f"{rules.max_file_size:,} allowed")
    nul = data.find(b"\x00")
    if nul >= 0:
        out.add("binary", data.count(b"\n", 0, nul) + 1,
                "NUL byte: not a text file (a binary or compressed file?)")
        return out.result(run_tag="", lines=data.count(b"\n"))
    if is_answer_file(data):  # generated answers (JSON lines), checked by their reader
        return check_answers(path, data, out, topics)
    block = find_ir_metadata(data)
    for line, message in block.problems:
        out.add("metadata", line, message)
    fields, problems = run_fields(block.data)
    for message in problems:
        out.add("metadata", block.line, message)
    cols = scan(data, out)
    del data
    tag = cols.run_tag.decode("utf-8", "backslashreplace")
    first = int(cols.line[0]) if len(cols) else 0
    if not len(cols):
        out.add("file", 0, "no result lines (qid Q0 docno rank score tag)")
    else:
        _check_tag(out, tag, first, path, fields)
    topic_count = check_content(cols, out, topics) if len(cols) else 0
    group, source = _group(tag, fields, rules, None)
    return out.result(run_tag=tag, lines=cols.lines, results=len(cols), topics=topic_count,
                      group=group, group_source=source, metadata=block.data, fields=fields)


def _check_tag(out: Collector, tag: str, line: int, path: str, fields: dict) -> None:
    rules = out.rules
    if not re.fullmatch(rules.tag_pattern, tag):
        out.add("tag_pattern", line, f"run tag '{tag}' is malformed (it must match "
                f"{rules.tag_pattern})")
    stem = run_name(path)
    if stem != tag:
        out.add("tag_filename", line, f"run tag '{tag}' differs from the file name '{stem}'")
    if "tag" in fields and fields["tag"] != tag:
        out.add("metadata_tag", line, f"ir_metadata tag '{fields['tag']}' differs from the "
                f"run tag '{tag}'")


def _group(tag: str, fields: dict, rules: Rules, configured: str | None) -> tuple[str, str]:
    """(group, where it came from); see the module docstring."""
    if not tag and not fields:
        return "", ""
    by_rules = rules.group_of_tag(tag)
    if by_rules is not None:
        return by_rules, "rules"
    if configured:
        return configured, "config"
    if "group" in fields:
        return fields["group"], "ir_metadata"
    match = re.fullmatch(rules.group_pattern, tag)
    return (match.group(1) if match else tag), "tag"


def check_submissions(paths: Sequence[str | os.PathLike], rules: Rules = DEFAULT_RULES,
                      topics: Topics | None = None,
                      groups: Mapping[str, str] | None = None) -> list[RunCheck]:
    """Check each file, then across files: a group's number of runs and unique run tags.

    ``groups`` maps a path to the group a campaign config gives it. Runs beyond
    ``max_runs_per_group`` (in the order given) and every run reusing an earlier file's run tag
    get an error.
    """
    groups = groups or {}
    checks = []
    for path in paths:
        check = check_run(path, rules, topics)
        configured = groups.get(os.fspath(path))
        if configured and check.group_source in ("ir_metadata", "tag"):
            check = replace(check, group=configured, group_source="config")
        checks.append(check)
    extra: list[list[Problem]] = [[] for _ in checks]
    if rules.on("duplicate_tag"):
        first: dict[str, int] = {}
        for i, check in enumerate(checks):
            if not check.run_tag:
                continue
            if check.run_tag in first:
                extra[i].append(Problem(check.path, 0, "duplicate_tag",
                                        rules.level("duplicate_tag"),
                                        f"run tag '{check.run_tag}' is also used by "
                                        f"{checks[first[check.run_tag]].path}"))
            else:
                first[check.run_tag] = i
    if rules.on("runs_per_group") and rules.max_runs_per_group is not None:
        members: dict[str, list[int]] = {}
        for i, check in enumerate(checks):
            if check.group:
                members.setdefault(check.group, []).append(i)
        for group, index in members.items():
            # the best ir_metadata priority (1 first) is kept, then the order given
            index.sort(key=lambda i: (checks[i].fields.get("priority", float("inf")), i))
            allowed = rules.max_runs_per_group
            for i in index[allowed:]:
                earlier = ", ".join(checks[j].path for j in index[:allowed])
                extra[i].append(Problem(checks[i].path, 0, "runs_per_group",
                                        rules.level("runs_per_group"),
                                        f"group '{group}' ({checks[i].group_source}) submitted "
                                        f"{len(index)} runs, at most {allowed} allowed (kept: "
                                        f"{earlier})"))
    return [with_problems(check, more) for check, more in zip(checks, extra)]
