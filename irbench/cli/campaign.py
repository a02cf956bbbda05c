"""Campaign commands: ``irbench run``, ``check``, ``scores``, ``systems``, ``simulate``.

Each handler takes the parsed arguments and returns an exit code; library errors propagate to
``cli.main``, which prints them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config import Config, load_configs
from ..errors import UsageError
from ..escaping import csv_cell, terminal
from ..measures import parse_measure
from ..runner import stamp
from .output import add_wait, json_value, progress_bar, text_table, warn_stale, write_text
from .selection import check_stored

if TYPE_CHECKING:  # the store (and DuckDB) is imported when a command uses it
    from ..store import Store

LEADERBOARD_ROWS = 10
LEADERBOARD_COLUMNS = 6


def add_parsers(sub) -> None:
    p = sub.add_parser("run", help="score every system of a campaign config into its store",
                       description="Score every (system, qrels set, measure, topic) of CONFIG "
                       "into its DuckDB store. Only what the store lacks is computed.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (default: the number of CPUs)")
    p.add_argument("--cluster", default=None, metavar="ADDRESS",
                   help="score the runs on a Dask cluster: a scheduler's address "
                   "(tcp://host:8786), or local / local:N to start a LocalCluster of N worker "
                   "processes for this run (default: the config's execution: section, else "
                   "--workers processes here); needs pip install 'irbench[cluster]'")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failure")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="wait this long for another irbench holding the store (default 0)")
    p.add_argument("--rehash", action="store_true",
                   help="hash every input again, even files whose size and mtime are unchanged")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no leaderboard")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("check", help="check a campaign's config and inputs without scoring",
                       description="Check CONFIG and everything 'irbench run' and 'irbench "
                       "report' would refuse, with the same rules: the config (file, line and "
                       "YAML path), the topics, every qrels set and measure, every run file "
                       "(read, its topics, the submission checks, duplicates) and the report "
                       "options. Every problem at once; nothing is scored or written. Exit 2 "
                       "when the config itself (or a run table) has problems, which are shown "
                       "before its inputs and report options are read; else exit 1 when any "
                       "input or report option would be refused.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes reading the runs (default: one per CPU)")
    p.set_defaults(handler=cmd_check)

    p = sub.add_parser("scores", help="print or export stored scores",
                       description="Print or export the scores stored for CONFIG: means per "
                       "system (trec_eval's 'all' values), or per topic with --per-query.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--system", action="append", default=[], help="only this system (repeatable)")
    p.add_argument("--measure", action="append", default=[], help="only this measure (repeatable)")
    p.add_argument("--qrels", default=None, help="qrels set (default: the first in the config)")
    p.add_argument("--per-query", action="store_true", help="one row per topic")
    p.add_argument("--format", choices=("table", "csv", "json", "parquet"), default="table")
    p.add_argument("-o", "--output", default=None, help="write to this file (parquet needs it)")
    p.add_argument("--partition-by", choices=("system", "qrels"), default=None,
                   help="with --format parquet: write a hive-partitioned dataset into the new "
                   "(or empty) folder -o DIR, one folder per system or qrels set (qrels: every "
                   "set unless --qrels), for DuckDB, pandas, pyarrow or Spark")
    add_wait(p)
    p.set_defaults(handler=cmd_scores)

    p = sub.add_parser("systems", help="list a campaign's systems and their stored status",
                       description="List the systems of CONFIG with what the store holds.")
    p.add_argument("config", help="campaign config (YAML)")
    add_wait(p)
    p.set_defaults(handler=cmd_systems)

    p = sub.add_parser("simulate", help="generate a seeded TREC-style campaign",
                       description="Generate a campaign (topics, runs of several groups, "
                       "graded qrels by depth-k pooling) deterministically from a seed.")
    p.add_argument("out", help="folder to write into")
    for name, default, text in (
        ("groups", 4, "participating groups"), ("runs-per-group", 3, "runs per group"),
        ("topics", 25, "topics"), ("depth", 100, "documents per topic per run"),
        ("pool-depth", 10, "pool depth k"), ("pooled-runs", 1, "runs per group in the pool"),
        ("grades", 3, "relevance grades 0..G-1"), ("collection-size", 50_000, "documents"),
        ("seed", 42, "random seed"),
    ):
        p.add_argument(f"--{name}", type=int, default=default, help=f"{text} (default {default})")
    p.add_argument("--answers", type=int, nargs="?", const=SIMULATED_ANSWERS, metavar="N",
                   help="also N answer systems (default %(const)s) citing the documents, with "
                   "support labels and nuggets that follow their relevance: answers/*.jsonl, "
                   "judgments/*.jsonl, answers.json, and a config of the ranked runs and the "
                   "answer systems")
    p.add_argument("--config", metavar="FILE", help="with --answers: write that config to FILE, "
                   "paths relative to it (default: OUT/campaign.yaml, replacing the ranked one)")
    p.set_defaults(handler=cmd_simulate)


# ---- run / check ---------------------------------------------------------------------------


def cmd_check(args) -> int:
    views = load_configs(args.config, collection=args.collection)
    return 1 if any([_check_one(args, config) for config in views]) else 0


def _check_one(args, config: Config) -> bool:
    """``irbench check`` of one collection; whether it found a problem."""
    from ..runner import check_campaign

    failures, warnings = check_campaign(config, workers=args.workers)
    problems = [str(f) for f in failures] + list(config.report.problems)
    for warning in warnings:
        print(f"irbench: warning: {terminal(warning)}", file=sys.stderr)
    for problem in problems:
        for i, line in enumerate(problem.splitlines()):
            print(f"irbench: error: {'  ' if i else ''}{terminal(line)}", file=sys.stderr)
    where = f"{args.config}" + (f" (collection {config.scope})" if config.several else "")
    if problems:
        print(f"{where}: {len(problems)} problem{'s' if len(problems) > 1 else ''}: "
              "irbench run or irbench report would refuse it", file=sys.stderr)
        return True
    print(f"{where}: ok: {len(config.systems)} systems, {len(config.qrels)} qrels sets, "
          f"{len(config.measures)} measures in {len(config.suites)} suites; "
          f"store {config.store}")
    return False


def _print_run_report(report) -> None:
    """What irbench run tells on stderr: warnings, failures, analyses, its summary line."""
    for warning in report.warnings:
        print(f"irbench: warning: {terminal(warning)}", file=sys.stderr)
    for failure in report.failures:
        for i, line in enumerate(str(failure).splitlines()):
            print(f"irbench: error: {'  ' if i else ''}{terminal(line)}", file=sys.stderr)
    if report.executed:
        print(f"irbench run: {report.executed} command{'s' if report.executed > 1 else ''} "
              "executed (systems given as commands)", file=sys.stderr)
    if report.analysed:
        print(f"irbench run: report analyses computed: {', '.join(report.analysed)}",
              file=sys.stderr)
    print(stamp.summary_line(report.systems, report.qrels, report.measures, report.evaluated,
                             report.reused, len(report.failures), report.seconds, report.store),
          file=sys.stderr)


def cmd_run(args) -> int:
    from ..runner.engine import reuse_freed_memory

    reuse_freed_memory()

    checked = time.time_ns()  # before the config reads anything (run tags, rules files)
    if args.cluster is not None:
        from ..config import cluster_address_problem

        problem = cluster_address_problem(args.cluster)
        if problem:
            raise UsageError(f"--cluster: {problem}")
    views = load_configs(args.config, collection=args.collection, strict=False)
    fresh = not os.path.exists(views[0].store)  # then opened while the first runs are scored
    stamp.forget(args.config)
    failed, stamps = False, []
    for config in views:
        if config.several:
            print(f"irbench run: collection '{terminal(config.scope)}'", file=sys.stderr)
        one_failed, made = _run_one(args, config, checked, fresh)
        failed |= one_failed
        stamps += [made] if made is not None else []
    if views[0].several and args.collection is None and not failed and \
            len(stamps) == len(views):  # every collection's stamp, once all are done
        stamp.write_collections(args.config, stamps)
    return 1 if failed else 0


def _run_one(args, config: Config, checked: int, fresh: bool = False
             ) -> tuple[bool, stamp.Stamp | None]:
    """``irbench run`` on one collection: scores, the stamp (written here for a config with
    one collection, else returned to be written after the last collection), what it tells;
    whether something failed, and the stamp (None: none to write). ``fresh``: there was no
    store when the command began (see irbench.runner.run_campaign)."""
    from ..runner import run_campaign

    before = {os.path.abspath(p): stamp.file_facts(p) for p in config.inputs()}
    globs = {pattern: list(matched) for pattern, matched in config.globs}
    with progress_bar("system", shown=not args.quiet) as bar:
        report = run_campaign(config, workers=args.workers, fail_fast=args.fail_fast,
                              progress=bar, wait=args.wait, rehash=args.rehash,
                              cluster=args.cluster, fresh=fresh)
    leaderboard = None if args.quiet else _leaderboard(config, max(args.wait, READER_WAIT_S))
    made = None  # a command's inputs and environment: only the long way checks them
    if not report.failures and not any(s.command is not None for s in config.systems):
        made = stamp.Stamp(config_sha256=config.sha256, store=os.path.abspath(config.store),
                           inputs=before, globs=globs, systems=report.systems,
                           qrels=report.qrels, measures=report.measures,
                           results=report.evaluated + report.reused, leaderboard=leaderboard,
                           checked_ns=checked, collection=config.scope if config.several
                           else None)
        if not config.several:  # before any output: a closed pipe ends
            made.write(args.config)
    _print_run_report(report)
    if leaderboard:
        print(leaderboard)
    return bool(report.failures), made


READER_WAIT_S = 30.0  # the leaderboard after a run waits out another run that took the store


def _leaderboard(config: Config, wait: float | None = None) -> str:
    """The top of the stored leaderboard on the first qrels set and suite ('' if none)."""
    if not config.qrels or not config.suites or not os.path.exists(config.store):
        return ""
    qrels = config.qrels[0].name
    suite = next(iter(config.suites.values()))
    measures = [str(m) for m in config.qrels[0].measures(suite)][:LEADERBOARD_COLUMNS]
    if not measures:
        return ""
    from ..store import Store

    with Store(config.store, scope=config.scope, read_only=True,
               wait=wait) as store:  # waits out another run
        _, rows = store.means(qrels, measures=measures)
    table = _pivot(rows, measures)
    if not table:
        return ""
    return (f"top {min(LEADERBOARD_ROWS, len(table))} of {len(table)} systems on qrels "
            f"'{qrels}', by {measures[0]}:\n"
            + text_table(["system", *measures], table[:LEADERBOARD_ROWS]))


# ---- scores / systems ----------------------------------------------------------------------


def _store_for(config: Config, wait: float | None) -> Store:
    from ..store import Store

    return Store(config.store, scope=config.scope, read_only=True, wait=wait)


def cmd_scores(args) -> int:
    if args.format == "parquet" and not args.output:
        raise UsageError("--format parquet needs -o FILE")
    if args.partition_by and args.format != "parquet":
        raise UsageError("--partition-by needs --format parquet")
    views = load_configs(args.config, collection=args.collection, strict=False)
    if len(views) > 1 and args.format == "parquet":
        raise UsageError("--format parquet exports one collection: give --collection NAME")
    if len(views) == 1:
        columns, rows, measures = _scores_of(args, views[0])
        if args.format != "parquet":
            write_text(args.output, _scores_text(args, columns, rows, measures) + "\n")
        return 0
    parts = [(config.scope, *_scores_of(args, config)) for config in views]
    if args.format == "table":  # a table per collection, each under its name
        text = "\n\n".join(f"collection {terminal(name)}:\n"
                            + _scores_text(args, columns, rows, measures)
                            for name, columns, rows, measures in parts)
    else:  # one table, the collection first
        columns = ["collection", *parts[0][1]]
        rows = [(name, *row) for name, _, rs, _ in parts for row in rs]
        text = _scores_text(args, columns, rows, parts[0][3])
    write_text(args.output, text + "\n")
    return 0


def _scores_of(args, config: Config) -> tuple[list, list, list[str]]:
    """(columns, rows, measures) of one collection's scores as asked (parquet: written)."""
    spec = config.qrels_set(args.qrels)
    qrels: str | None = spec.name
    asked = [parse_measure(m) for m in args.measure]
    measures = [str(m) for m in asked] or [str(m) for m in spec.measures(config.measures)]
    if args.partition_by == "qrels" and not args.qrels:
        qrels = None  # every set, each in its folder
        measures = [str(m) for m in asked] or [str(m) for m in config.measures]
    with _store_for(config, args.wait) as store:
        check_stored(store, config, qrels, args.system, asked)
        for name in [qrels] if qrels else [q.name for q in config.qrels]:
            warn_stale(store, name)
        if args.per_query:
            columns, rows = store.per_query(qrels, args.system, measures)
        else:
            columns, rows = store.means(qrels, args.system, measures)
        if args.format == "parquet":
            _export_parquet(store, args, qrels, measures)
            print(f"wrote {len(rows)} rows to {args.output}", file=sys.stderr)
    return list(columns), rows, measures


def _scores_text(args, columns, rows, measures) -> str:
    """The scores as --format table, csv or json."""
    if args.format == "table":
        if args.per_query:
            return text_table(columns, rows)
        return text_table(["system", *measures], _pivot(rows, measures))
    if args.format == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([csv_cell(v) for v in row] for row in rows)
        return buf.getvalue().rstrip("\n")
    return json.dumps([dict(zip(columns, map(json_value, r))) for r in rows], indent=1)


def _export_parquet(store: Store, args, qrels: str | None, measures: Sequence[str]) -> None:
    if args.partition_by:
        if os.path.isdir(args.output) and os.listdir(args.output):
            raise UsageError(f"{args.output}: not empty: a partitioned export goes into a new "
                             "or empty folder")
        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise UsageError(f"{args.output}: not a folder")
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    store.export_parquet(args.output, qrels, measures, args.system or (), args.per_query,
                         args.partition_by)


def cmd_systems(args) -> int:
    views = load_configs(args.config, collection=args.collection, strict=False)
    for i, config in enumerate(views):
        if config.several:
            print(("\n" if i else "") + f"collection {terminal(config.scope)}:")
        print(_systems_table(config, args.wait))
    return 0


def _systems_table(config: Config, wait: float | None) -> str:
    """The systems of one collection and what the store holds of each."""
    with _store_for(config, wait) as store:
        rows = store.systems_overview()
    declared = {s.name for s in config.systems}
    table = []
    for name, group, kind, baseline, status, qsets, results, topics, error in rows:
        if name not in declared:
            continue
        table.append((name, group or "", kind or "", "yes" if baseline else "",
                      status or "not run", qsets, results, topics if topics is not None else "",
                      (error or "").splitlines()[0][:80] if error else ""))
    stored = {r[0] for r in table}
    table += [(s.name, s.group, s.type, "yes" if s.baseline else "", "not run", 0, 0, "", "")
              for s in config.systems if s.name not in stored]
    return text_table(["system", "group", "type", "baseline", "status", "qrels sets",
                       "results", "topics", "error"], sorted(table))


# ---- simulate ------------------------------------------------------------------------------


def cmd_simulate(args) -> int:
    from ..answers.simulated import AnswerSpec
    from ..simulate import CampaignSpec, simulate

    spec = CampaignSpec(groups=args.groups, runs_per_group=args.runs_per_group,
                        topics=args.topics, depth=args.depth, pool_depth=args.pool_depth,
                        pooled_runs=args.pooled_runs, grades=args.grades,
                        collection_size=args.collection_size, seed=args.seed)
    if args.config is not None and args.answers is None:
        raise UsageError("--config goes with --answers")
    answer_spec = None if args.answers is None else AnswerSpec(systems=args.answers)
    result = simulate(spec, args.out)
    config, answers = str(result.config_path), ""
    if answer_spec is not None:
        config = _simulate_answers(args, result, answer_spec)
        answers = f" and {args.answers} answer systems"
    print(f"wrote a campaign of {args.groups * args.runs_per_group} runs{answers} x {args.topics} "
          f"topics (seed {args.seed}) to {args.out}; score it with: irbench run {config}",
          file=sys.stderr)
    return 0


SIMULATED_ANSWERS = 6
_SIMULATE_OPTIONS = ("groups", "runs_per_group", "topics", "depth", "pool_depth", "pooled_runs",
                     "grades", "collection_size", "seed")


def _simulate_answers(args, result, spec) -> str:
    """Answers on top of the simulated campaign, and the config of both; the config's path.
    The config says the command that wrote it, run from the config's folder."""
    from ..answers.simulated import simulate_answers, write_answers_config
    from ..simulate import CampaignSpec

    answers = simulate_answers(result, spec)
    path = args.config if args.config is not None else result.config_path
    folder = os.path.dirname(os.path.abspath(path))
    defaults = CampaignSpec()
    options = [f"--{name.replace('_', '-')} {getattr(args, name)}" for name in _SIMULATE_OPTIONS
               if getattr(args, name) != getattr(defaults, name)]
    command = " ".join([
        "(in this folder) irbench simulate",
        os.path.relpath(os.path.abspath(args.out), folder).replace(os.sep, "/"), *options,
        f"--answers {args.answers}",
        *([f"--config {os.path.basename(path)}"] if args.config is not None else [])])
    return str(write_answers_config(answers, path, command))


# ---- formatting ----------------------------------------------------------------------------


def _pivot(rows: Sequence[tuple], measures: Sequence[str]) -> list[tuple]:
    """(system, qrels, measure, value, n) rows -> one row per system, sorted by the first
    measure descending, then by name; counts (NumRet, prefs_num_prefs_poss ...) as ints."""
    counts = {m for m in measures if parse_measure(m).definition.kind == "int"}
    by_system: dict[str, dict[str, float]] = {}
    for system, _, measure, value, _ in rows:
        if measure in counts and value is not None and math.isfinite(value):
            value = int(round(value))  # counts print as whole numbers
        by_system.setdefault(system, {})[measure] = value
    table: list[tuple[Any, ...]] = [(s, *[v.get(m) for m in measures])
                                    for s, v in by_system.items()]
    table.sort(key=lambda r: (-(r[1] if r[1] is not None and not math.isnan(r[1]) else -math.inf),
                              r[0]))
    return table
