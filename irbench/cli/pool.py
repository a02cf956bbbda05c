"""``irbench pool``: build a judgment pool, replay strategies at reduced budgets, measure pool
bias, from a campaign config (see :mod:`irbench.pooling` for the strategies).

The config's systems are the runs, in priority order: by group, then ``priority`` (1 first),
then the order of the config. ``--pooled NAME`` (repeatable) picks the contributing runs, else
those the config declares ``pooled: true``, else every run; ``--per-group N`` keeps each
group's first N of them, as TREC does. ``build --name P`` records the pool with the runs that
contributed to it.

Judging over days: ``start --name P`` creates a pool being judged (any strategy, adaptive ones
included) in the campaign's store; ``next --name P -o FILE`` hands out the next batch as an
assessor file (``qid 0 docno -1`` lines, or CSV for a ``.csv`` name); ``judge --name P -j FILE``
records the assessors' values, checked against what was handed out (one bad line and nothing of
the file is recorded; nothing recorded before is ever lost); ``status --name P`` tells how far
it is. The state and every judgment are kept in the store.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from ..errors import UsageError
from ..escaping import csv_cell, json_text, terminal
from .output import (
    json_value,
    nonnegative_int,
    plain,
    positive_int,
    progress_bar,
    seconds,
    text_table,
    write_text,
)

# dest -> (flags, add_argument keywords); each subcommand takes some of them
OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "strategy": (("--strategy",), {"default": "depth",
                                   "help": "pooling strategy (default depth)"}),
    "param": (("--param",), {"action": "append", "default": [], "metavar": "KEY=VALUE",
                             "help": "strategy parameter, e.g. k=100 (repeatable)"}),
    "pooled": (("--pooled",), {"action": "append", "default": [], "metavar": "NAME",
                               "help": "a contributing run (repeatable; default: the systems "
                               "the config declares 'pooled: true', else every run)"}),
    "per_group": (("--per-group",), {"type": positive_int, "default": None, "metavar": "N",
                                     "help": "keep each group's first N contributing runs "
                                     "(by priority)"}),
    "budget": (("--budget",), {"type": positive_int, "default": None,
                               "help": "judgments per topic"}),
    "total": (("--total",), {"type": positive_int, "default": None,
                             "help": "judgments over all topics"}),
    "qrels": (("--qrels",), {"default": None, "help": "qrels set used as the oracle / the "
                             "official judgments (default: the config's first)"}),
    "by": (("--by",), {"choices": ("run", "group"), "default": "group",
                       "help": "leave one run or one group out (default group)"}),
    "measure": (("--measure",), {"action": "append", "default": [],
                                 "help": "measure (repeatable; default AP)"}),
    "strategies": (("--strategies",), {"default": None, "help": "comma-separated strategies "
                                       "(default: budgeted, mtf, mtf-global, mm-ns, "
                                       "thompson)"}),
    "seed": (("--seed",), {"type": nonnegative_int, "default": 0,
                           "help": "random seed (default 0, recorded)"}),
    "out": (("-o", "--out"), {"default": None, "help": "build: folder for the assessor files; "
                              "next: the assessor file; cited: the file to send to judging "
                              "(never overwritten)"}),
    "name": (("--name",), {"default": None, "help": "the pool's name in the store"}),
    "batch": (("--batch",), {"type": positive_int, "default": None,
                             "help": "documents to hand out "
                             "(default: as many as the strategy's next step gives)"}),
    "judgments": (("-j", "--judgments"), {"action": "append", "default": [], "metavar": "FILE",
                                          "help": "an assessor file with the values filled "
                                          "in (repeatable)"}),
    "assessor": (("--assessor",), {"default": "assessor", "metavar": "NAME",
                                   "help": "who made these judgments (default 'assessor'; "
                                   "recorded with each)"}),
    "top": (("--top",), {"type": positive_int, "default": None, "metavar": "N",
                         "help": "only the N runs most affected, per measure (default: every "
                         "run)"}),
    "format": (("--format",), {"choices": ("table", "csv", "json"), "default": "table",
                               "help": "table (default), csv or json (one record per measure "
                               "and run)"}),
    "output": (("-o", "--output"), {"default": None, "help": "write to this file"}),
    "citations": (("--citations",), {"choices": ("first", "all"), "default": "first",
                                     "help": "first: each sentence's first citation (what "
                                     "the support measures read; default); all: every "
                                     "citation, or up to --per-sentence"}),
    "per_sentence": (("--per-sentence",), {"type": positive_int, "default": None,
                                           "metavar": "K", "help": "with --citations all: "
                                           "up to K citations of each sentence, in order"}),
    "topics": (("--topics",), {"default": None, "metavar": "FILE",
                               "help": "only the topics of this topic file"}),
    "file_format": (("--format",), {"choices": ("jsonl", "tsv"), "default": None,
                                    "dest": "file_format", "help": "jsonl: NIST's support "
                                    "JSONL, one judgment per unit (default; score it as kind "
                                    "support_shared); tsv: topic run sentence citation "
                                    "reference label, a row per run's citation (default for "
                                    "a .tsv or .txt name)"}),
    "wait": (("--wait",), {"type": seconds, "default": None, "metavar": "SECONDS",
                           "help": "how long to wait for another irbench holding the store "
                           "(default 0)"}),
}
RUNS = ("pooled", "per_group")
SUBCOMMANDS = {  # name -> (help, options)
    "build": ("build a pool and write assessor files (--name: also keep it, with the runs "
              "that contributed, in the store)",
              ("strategy", "param", *RUNS, "budget", "total", "qrels", "seed", "out", "name",
               "wait")),
    "stats": ("statistics of a depth pool against the judgments (sizes, unique documents, "
              "judged@k of every run)", ("param", *RUNS, "qrels")),
    "simulate": ("replay strategies at reduced budgets with the qrels as oracle: relevant "
                 "found and ranking agreement", ("strategies", "param", *RUNS, "measure",
                                                 "qrels", "seed")),
    "bias": ("leave one run or group out of a depth pool and score its runs again (pool "
             "bias; says how much of the qrels the rebuilt pool holds)",
             ("param", *RUNS, "by", "measure", "qrels", "top", "format", "output")),
    "strategies": ("list the pooling strategies and their parameters", ()),
    "start": ("start a pool judged over days, kept in the store",
              ("name", "strategy", "param", *RUNS, "budget", "total", "seed", "wait")),
    "next": ("hand out the next batch of a pool being judged as an assessor file",
             ("name", "out", "batch", "wait")),
    "judge": ("record assessors' judgments (a file with one bad line records nothing)",
              ("name", "judgments", "assessor", "wait")),
    "status": ("how far a pool being judged is", ("name", "wait")),
    "cited": ("pool the cited segments of the answer runs for support judging: one unit per "
              "(topic, sentence text, segment), shared by the runs that wrote it; -o writes "
              "the file to send to judging (support unset)",
              ("citations", "per_sentence", *RUNS, "topics", "out", "file_format")),
}


def add_parsers(sub) -> None:
    p = sub.add_parser("pool", help="build judgment pools, simulate budgets, measure pool bias",
                       description=plain(" ".join(__doc__.split("\n\n")[:2])))
    actions = p.add_subparsers(dest="action", metavar="SUBCOMMAND", required=True,
                               parser_class=type(p))
    for action, (text, uses) in SUBCOMMANDS.items():
        a = actions.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        if action != "strategies":
            a.add_argument("config", help="campaign config (YAML)")
        for dest in uses:
            flags, keywords = OPTIONS[dest]
            a.add_argument(*flags, **keywords)
        a.set_defaults(handler=HANDLERS[action], config=None, **{  # what it does not take
            dest: keywords.get("default") for dest, (_, keywords) in OPTIONS.items()
            if dest not in uses})


def _params(items: list[str]) -> dict:
    params: dict[str, int | float | str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param takes KEY=VALUE, not {item!r}")
        try:
            params[key] = int(value)
        except ValueError:
            try:
                params[key] = float(value)
            except ValueError:
                params[key] = value
    return params


def _contributing(table, args, config):
    """Which runs feed the pool: --pooled, else the systems the config declares
    ``pooled: true`` (when any declares ``pooled``), else every run; then --per-group."""
    from ..pooling import contributing_runs

    runs = table.runs
    unknown = [n for n in args.pooled if n not in runs]
    if unknown:
        import difflib

        close = sorted({c for n in unknown for c in difflib.get_close_matches(n, runs, n=3)})
        raise UsageError(f"--pooled: no system {', '.join(repr(n) for n in unknown)} in the "
                         "config" + (f" (did you mean {', '.join(close)}?)" if close else ""))
    declared = config.pooled_systems()
    chosen = args.pooled or (list(declared) if declared is not None else None)
    mask = contributing_runs(table, chosen, per_group=args.per_group)
    if declared is not None and {r for r, m in zip(runs, mask) if m} != set(declared):
        print("irbench: warning: the pool is built from other runs than the config declares "
              f"'pooled: true' ({len(declared)} declared, {int(mask.sum())} used)",
              file=sys.stderr)
    return mask


def _campaign(args):
    """(config, run table, relevance level) of the subcommand's campaign."""
    from ..config import load_config

    if args.config is None:
        raise UsageError(f"irbench pool {args.action} needs a config")
    config = load_config(args.config, collection=args.collection, strict=False)
    return config, config.run_table(), config.settings.relevance_level


def cmd_strategies(args) -> int:
    from .. import pooling

    print(pooling.describe())
    return 0


def cmd_build(args) -> int:
    from .. import pooling

    config, table, level = _campaign(args)
    strategy = pooling.get_strategy(args.strategy)
    oracle = config.qrels_set(args.qrels).read() if strategy.adaptive else None
    if strategy.adaptive and args.qrels is None:
        print(f"irbench: warning: {args.strategy} judges as it goes; the qrels set "
              f"'{config.qrels_set().name}' answers for the assessors (--qrels)",
              file=sys.stderr)
    contributing = _contributing(table, args, config)
    pool = pooling.build_pool(table, args.strategy, contributing=contributing,
                              budget=args.budget, total=args.total, oracle=oracle,
                              seed=args.seed, relevance_level=level, **_params(args.param))
    stats = pooling.pool_stats(table, pool, relevance_level=level)
    # the files and the store first: a closed stdout (| head) ends the command at a print
    written = pooling.write_assessor_files(pool, args.out) if args.out else None
    if args.name:
        _store_built(config, args.name, pool, args.wait)
    print(f"{args.strategy} pool (seed {args.seed}): {stats.total} documents over "
          f"{len(stats.topics)} topics, {int(stats.to_judge.sum())} to judge")
    for name, contributed, unique in zip(stats.runs, stats.run_contributed, stats.run_unique):
        print(f"  {terminal(name)}\tcontributed {int(contributed)}\tunique {int(unique)}")
    if written is not None:
        print(f"wrote {len(written)} assessor files to {args.out}", file=sys.stderr)
    if args.name:
        print(f"stored the pool as '{args.name}' with its provenance in {config.store}",
              file=sys.stderr)
    return 0


def cmd_simulate(args) -> int:
    from .. import pooling

    config, table, level = _campaign(args)
    qrels = config.qrels_set(args.qrels).read()
    strategies = (tuple(s.strip() for s in args.strategies.split(",") if s)
                  if args.strategies else pooling.DEFAULT_STRATEGIES)
    with progress_bar("strategy") as bar:
        sim = pooling.simulate_budgets(table, qrels, measures=tuple(args.measure or ["AP"]),
                                       contributing=_contributing(table, args, config),
                                       per_group=None, seed=args.seed,
                                       relevance_level=level, strategies=strategies,
                                       params=pooling.split_params(
                                           strategies, _params(args.param)),
                                       progress=bar)
    print(pooling.format_simulation(sim))
    return 0


def _judged_pool(args):
    """(config, run table, qrels, the depth pool as judged, relevance level): the depth and
    the runs per group of the config's report: section unless given here, so that stats and
    bias rebuild the pool the report's section 6c does."""
    from .. import pooling

    config, table, level = _campaign(args)
    qrels = config.qrels_set(args.qrels).read()
    params = _params(args.param)
    if "k" not in params and config.report.pool_depth:
        params["k"] = config.report.pool_depth
    if args.per_group is None and not args.pooled and config.report.pooled_per_group \
            and config.pooled_systems() is None:
        args.per_group = config.report.pooled_per_group
    pool = pooling.build_pool(table, "depth", contributing=_contributing(table, args, config),
                              relevance_level=level, **params)
    return config, table, qrels, pool, level


def cmd_stats(args) -> int:
    from .. import pooling

    _, table, qrels, pool, level = _judged_pool(args)
    return _print_stats(pooling.pool_stats(table, pool, qrels, relevance_level=level))


def cmd_bias(args) -> int:
    from .. import pooling

    _, table, qrels, pool, level = _judged_pool(args)
    coverage = pooling.pool_coverage(pool, qrels)
    if not coverage.exact:
        print(f"irbench: warning: {coverage.describe()}: not the pool that was judged, so the "
              "bias figures are unreliable (declare 'pooled: true|false' per system, or give "
              "--pooled / --per-group and k as judged)", file=sys.stderr)
    with progress_bar(args.by) as bar:
        result = pooling.leave_one_out(table, qrels, pool, by=args.by,
                                       measures=tuple(args.measure or ["AP"]),
                                       relevance_level=level, progress=bar)
    write_text(args.output, BIAS_FORMATS[args.format](result, coverage, pool.params, args.top))
    return 0


def cmd_cited(args) -> int:
    from .. import pooling
    from ..config import load_config
    from ..config.types import priority_order

    if args.per_sentence is not None and args.citations != "all":
        raise UsageError("--per-sentence K goes with --citations all")
    config = load_config(args.config, collection=args.collection, strict=False)
    systems = pooling.answer_systems(priority_order(config.systems), args.pooled, args.per_group)
    topics = _topic_ids(args.topics)
    runs = pooling.read_answer_runs(systems, config.missing_runs)
    pool = pooling.cited_pool(runs, args.citations, args.per_sentence, topics)
    written = None
    if args.out:
        fmt = pooling.cited_format(args.out, args.file_format)
        written = (fmt, pooling.write_cited(pool, args.out, fmt))
    print("\n".join(pooling.cited_summary(pool)))
    print("run\tcitations\tunits first written\tunits of its own")
    for name, occurrences, owned, alone in zip(pool.runs, *pool.per_run()):
        print(f"{terminal(name)}\t{int(occurrences)}\t{int(owned)}\t{int(alone)}")
    if written is not None:
        print(f"wrote {written[1]} citations to judge to {terminal(args.out)} ({written[0]}; "
              + ("score it as kind support_shared)" if written[0] == "jsonl" else
                 "a row per run's citation: give a unit's rows one label)"), file=sys.stderr)
    return 0


def _topic_ids(path: str | None) -> list[str] | None:
    """The topic ids of ``--topics FILE``, or None."""
    if path is None:
        return None
    from ..topics import read_topics

    return list(read_topics(path).query_id)


# ---- pool bias formats ---------------------------------------------------------------------

BIAS_COLUMNS = ("run", "left_out", "full", "reduced", "change", "relative_change", "removed",
                "removed_relevant")


def _bias_table(result, coverage, params: dict, top: int | None) -> str:
    out = []
    for measure in result.measures:
        s = result.summary(measure, top=None)
        rows = result.rows(measure, top)
        shown = (f" (the {len(rows)} runs most affected of {len(result.runs)})"
                 if len(rows) < len(result.runs) else "")
        out.append(f"{measure}, leaving one {result.by} out of the depth-{params.get('k', '')} "
                   f"pool: mean change {s['mean_change']:+.4f}, largest drop "
                   f"{s['max_drop']:.4f}{shown}")
        out.append(text_table(
            ["run", f"{result.by} left out", "full", "reduced", "change", "relative",
             "removed", "removed relevant"],
            [(r["run"], r["left_out"], r["full"], r["reduced"], f"{r['change']:+.4f}",
              f"{r['relative_change']:+.1%}", r["removed"], r["removed_relevant"])
             for r in rows], left=2, numbers_only=False))
        out.append("")
    return "\n".join(out)


def _bias_csv(result, coverage, params: dict, top: int | None) -> str:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("measure", "by") + BIAS_COLUMNS)
    for measure in result.measures:
        for r in result.rows(measure, top):
            writer.writerow([measure, result.by] + [csv_cell(r[c]) for c in BIAS_COLUMNS])
    return buf.getvalue()


def _bias_json(result, coverage, params: dict, top: int | None) -> str:
    import json

    measures = []
    for measure in result.measures:
        s = result.summary(measure, top=None)
        measures.append({
            "measure": measure, "mean_change": json_value(s["mean_change"]),
            "max_drop": json_value(s["max_drop"]),
            "mean_relative_change": json_value(s["mean_relative_change"]),
            "runs": [{c: json_value(v) for c, v in r.items()}
                     for r in result.rows(measure, top)]})
    doc = {"by": result.by, "pool": {"strategy": "depth", **params},
           "coverage": {"judged": coverage.judged, "covered": coverage.covered,
                        "pooled": coverage.pooled, "unjudged": coverage.unjudged,
                        "exact": coverage.exact},
           "measures": measures}
    return json_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str)) + "\n"


BIAS_FORMATS = {"table": _bias_table, "csv": _bias_csv, "json": _bias_json}


# ---- judging over days ---------------------------------------------------------------------


@contextlib.contextmanager
def _pool_being_judged(args, create: bool = False):
    """(config, run table, level, store, the pool's state or None) of the pool ``--name`` in
    the campaign's store, open for the block."""
    from ..store import Store

    if not args.name:
        raise UsageError(f"irbench pool {args.action} needs --name POOL")
    config, table, level = _campaign(args)
    with Store(config.store, scope=config.scope, wait=args.wait) as store:
        state = _state(store, args.name, table)
        if state is None and not create:
            raise UsageError(f"no pool '{args.name}' in {config.store} (irbench pool start)")
        yield config, table, level, store, state


def _state(store, name: str, table):
    """The pool's state, with the judgments made in the browser since it was saved; None if
    there is no such pool."""
    from ..assess.desk import catch_up
    from ..pooling import load_state

    state = load_state(store, name, table)
    if state is not None:
        catch_up(state, store.clicks(name), store.clicks_applied(name))
    return state


def cmd_start(args) -> int:
    from ..pooling import PoolingState, save_state

    with _pool_being_judged(args, create=True) as (config, table, level, store, existing):
        if existing is not None:
            raise UsageError(f"a pool '{args.name}' exists already in {config.store}")
        state = PoolingState(table, args.strategy,
                             contributing=_contributing(table, args, config),
                             budget=args.budget, total=args.total, seed=args.seed,
                             relevance_level=level, **_params(args.param))
        save_state(store, args.name, state)
    print(f"pool '{args.name}': {args.strategy} (seed {args.seed}) over "
          f"{len(table.runs)} runs; 'irbench pool next' hands out the first batch")
    return 0


def cmd_next(args) -> int:
    from ..pooling import save_state

    if not args.out:
        raise UsageError("irbench pool next needs -o FILE (the assessor file)")
    with _pool_being_judged(args) as (_, _, _, store, state):
        batch = state.next_batch(args.batch)
        _write_batch(args.out, batch.pairs())
        save_state(store, args.name, state)
    print(f"pool '{args.name}': {len(batch)} documents to judge in {args.out}"
          + (" (the pool is complete)" if len(batch) == 0 else ""))
    return 0


def cmd_judge(args) -> int:
    from ..pooling import read_assessor_file, save_state

    if not args.judgments:
        raise UsageError("irbench pool judge needs -j FILE (assessor files)")
    with _pool_being_judged(args) as (_, _, _, store, state):
        recorded = 0
        for path in args.judgments:  # each file is recorded whole, or not at all
            judged = read_assessor_file(path)
            recorded += state.record(judged)
            save_state(store, args.name, state, judgments=judged, source=str(path),
                       judge=args.assessor)
    print(f"pool '{args.name}': {recorded} new judgments recorded")
    return 0


def cmd_status(args) -> int:
    with _pool_being_judged(args) as (_, _, _, _, state):
        line = (f"pool '{args.name}': {state.strategy.name}, {state.judged_total} judged, "
                f"{state.pending_total} handed out and waiting, "
                f"{'complete' if state.complete else 'more to judge'}")
    print(line)
    return 0


def _write_batch(path: str, pairs) -> None:
    lines = (["query_id,doc_id,relevance\n"] + [f"{q},{d},\n" for q, d in pairs]
             if path.endswith(".csv") else [f"{q} 0 {d} -1\n" for q, d in pairs])
    try:
        with open(path, "x", encoding="utf-8") as fh:  # never over an assessor's file
            fh.writelines(lines)
    except FileExistsError:
        raise UsageError(f"{path}: exists already (it may hold an assessor's judgments); "
                         "remove it or give another -o") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror})") from None


def _store_built(config, name: str, pool, wait: float | None) -> None:
    """The pool's documents and provenance (run, group, rank of every contribution)."""
    import json

    import numpy as np

    from ..ids import ids_text as text  # undecodable bytes as \xNN, as the assessor files
    from ..store import Store

    p = pool.provenance
    docs = {"query_id": text(pool.query_id), "doc_id": text(pool.doc_id),
            "sampled": pool.sampled.astype(bool), "inclusion": pool.inclusion.astype(float),
            "stratum": pool.stratum.astype(np.int64), "position": pool.order.astype(np.int64)}
    provenance = {"query_id": text(pool.topics[pool.topic[p.doc]]),
                  "doc_id": text(pool.doc_id[p.doc]),
                  "run": np.array(pool.runs, dtype=object)[p.run],
                  "group": np.array(pool.groups, dtype=object)[p.group],
                  "rank": p.rank.astype(np.int64)}
    params = {**pool.params, "contributing": [r for r, c in zip(pool.runs, pool.contributing)
                                              if c]}  # which runs were pooled, recorded
    with Store(config.store, scope=config.scope, wait=wait) as store:
        store.save_built_pool(name, pool.strategy, json.dumps(params, sort_keys=True,
                                                              default=str),
                              pool.seed, docs, provenance)


def _print_stats(stats) -> int:
    """Pool statistics of the depth pool against the judgments."""
    from ..ids import id_text

    print(f"pool: {stats.total} documents over {len(stats.topics)} topics, "
          f"{int(stats.judged.sum())} judged, {int(stats.relevant.sum())} relevant")
    flagged = [id_text(t) for t, f in zip(stats.topics, stats.flagged) if f]
    if flagged:
        print(f"topics with more than {stats.threshold:.0%} of the pool relevant (the pool may "
              f"have missed relevant documents): {', '.join(flagged)}")
    ks = sorted(stats.judged_at)
    print("run\tcontributed\tunique\tunique relevant\t"
          + "\t".join(f"judged@{k}" for k in ks))
    for run, contributed, unique, unique_rel, *judged in zip(
            stats.runs, stats.run_contributed, stats.run_unique, stats.run_unique_relevant,
            *[stats.judged_at[k] for k in ks]):
        print(f"{terminal(run)}\t{int(contributed)}\t{int(unique)}\t{int(unique_rel)}\t"
              + "\t".join(f"{v:.3f}" for v in judged))
    return 0


# each subcommand's parser dispatches to its handler (add_parsers sets it)
HANDLERS = {"build": cmd_build, "stats": cmd_stats, "simulate": cmd_simulate, "bias": cmd_bias,
            "strategies": cmd_strategies, "start": cmd_start, "next": cmd_next,
            "judge": cmd_judge, "status": cmd_status, "cited": cmd_cited}
