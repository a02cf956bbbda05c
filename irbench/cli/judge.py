"""``irbench judge`` (a model judge labels pairs), ``irbench judges`` (who judged what, at
what cost) and ``irbench qrels`` (a qrels set from the store's judgments by a rule, or
judgments imported under a judge's name)."""

from __future__ import annotations

import hashlib
import sys

from ..errors import JudgeError, UsageError
from ..escaping import terminal
from ..judgments import DEFAULT_RULE, POOL_RULE, RULES, rules_phrase
from .judge_nuggets import add_judge_nuggets, add_qrels_nuggets, judge_nuggets, nugget_qrels
from .output import add_wait, nonnegative_int, positive_int, progress_bar, text_table, write_text


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "judge", help="label (topic, document) pairs with a model judge",
        description="Label pairs with a model judge of the config's 'judges:' section (an "
        "OpenAI-compatible chat-completions server): the documents of a stored pool, the "
        "holes of a qrels set (documents in the top --depth of any run that the set did not "
        "judge), or a list of pairs. Every answer is kept in the store the moment it arrives: "
        "a rerun, or a run after a kill, pays for no request twice.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--judge", required=True, metavar="NAME", help="a judge of the config")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--pool", metavar="NAME", help="the documents of a pool built with "
                      "'irbench pool build --name NAME', or of a pool being judged ('irbench "
                      "pool start': its planned documents, or those an adaptive strategy has "
                      "handed out), whose assessors then see the labels as suggestions")
    what.add_argument("--holes", metavar="SET", help="the unjudged documents of this qrels "
                      "set in the top --depth of every run")
    what.add_argument("--pairs", metavar="FILE", help="a file of 'topic docno' lines")
    what.add_argument("--units", metavar="FILE", help="with --support: the (topic, sentence, "
                      "segment) units of a support pool file ('irbench pool cited -o "
                      "FILE.jsonl') instead of the config's answer runs")
    p.add_argument("--support", action="store_true",
                   help="a support judge ('task: support'): label whether each cited segment "
                   "supports its answer sentence (full 2, partial 1, none 0), for every "
                   "(topic, sentence, segment) of the config's answer runs or of --units; "
                   "the same unit is asked once however many runs share it")
    add_judge_nuggets(p)
    p.add_argument("--citations", choices=("first", "all"), default="first",
                   help="with --support: each sentence's first citation (the default: what "
                   "the track's support measures read) or all of them")
    p.add_argument("--depth", type=positive_int, default=10,
                   help="with --holes: how deep (default 10)")
    p.add_argument("--max-calls", type=nonnegative_int, default=None, metavar="N",
                   help="make at most N requests in this run (besides the judge's budget)")
    add_wait(p)
    p.set_defaults(handler=cmd_judge)

    p = sub.add_parser("judges", help="every judge in the store: judgments, calls, tokens",
                       description="Every judge whose judgments the store holds (assessors, "
                       "model judges, imported qrels): how many judgments and topics, and for "
                       "model judges the calls (answers asked for and received, every "
                       "sample), the HTTP requests they took (retries included), tokens, "
                       "answers without a grade and the samples asked of each request.")
    p.add_argument("config", help="campaign config (YAML)")
    add_wait(p)
    p.set_defaults(handler=cmd_judges)

    p = sub.add_parser(
        "qrels", help="write a qrels set from the store's judgments, by a rule",
        description="Write the judgments of the chosen judges (default: all) as a qrels "
        f"file, one label per (topic, document) by --rule: {rules_phrase()}. For a pool "
        "being judged (irbench pool start) the pooled documents a sampling strategy did not "
        "sample follow with -1: the file is the one the assessment server's /qrels gives. "
        "With --import FILE --as NAME, record a qrels file's labels as judgments of NAME "
        "instead.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--judge", action="append", default=[], metavar="NAME",
                   help="use this judge's labels (repeat; order matters for --rule first)")
    p.add_argument("--rule", default=None, choices=RULES,
                   help=f"default: {POOL_RULE} with --pool of a pool being judged (irbench "
                   f"pool start), else {DEFAULT_RULE}")
    p.add_argument("--pool", default=None, metavar="NAME", help="only this pool's judgments")
    p.add_argument("-o", "--output", default=None, help="the qrels file (default: stdout)")
    p.add_argument("--import", dest="import_", default=None, metavar="FILE",
                   help="record this qrels file's labels as judgments")
    p.add_argument("--as", dest="as_", default=None, metavar="NAME",
                   help="with --import: the judge's name")
    p.add_argument("--kind", choices=("human", "model"), default="human",
                   help="with --import: who made them (default human)")
    p.add_argument("--support", action="store_true",
                   help="write the store's support labels (irbench judge --support) instead, "
                   "as NIST's support JSONL: a qrels set {path: FILE, kind: support_shared} "
                   "then scores every answer run with them")
    add_qrels_nuggets(p)
    add_wait(p)
    p.set_defaults(handler=cmd_qrels)


def _judge_spec(config, name: str):
    if name not in config.judges:
        known = ", ".join(config.judges) or "none: add a 'judges:' section"
        raise UsageError(f"no judge '{name}' in {config.path} (its judges: {known})")
    return config.judges[name]


def _targets(args):
    """The pairs to judge, as the judges package takes them."""
    from ..judges.targets import HoleTargets, PairTargets, PoolTargets

    if args.pairs:
        return PairTargets(args.pairs)
    if args.pool:
        return PoolTargets(args.pool)
    return HoleTargets(args.holes, depth=args.depth)


def _judging(args, config, spec):
    """The judging call of ``args``: support units (``--support``) or (topic, document)
    pairs; a UsageError for targets that do not go together."""
    from ..judges.tasks import NUGGET_TASKS

    if spec.task in NUGGET_TASKS:
        raise UsageError(f"judge '{spec.name}' is a nugget judge: give --nuggets")
    if args.support:
        if args.pool or args.holes or args.pairs:
            raise UsageError("--support judges the answer runs' cited segments (or --units "
                             "FILE): --pool, --holes and --pairs give (topic, document) pairs")
        from ..judges.support_units import FileUnits, RunUnits, judge_support

        source = FileUnits(args.units) if args.units else RunUnits(args.citations)
        return "unit", lambda **kw: judge_support(config, spec, source, **kw)
    if args.units or not (args.pool or args.holes or args.pairs):
        raise UsageError("give --pool NAME, --holes SET or --pairs FILE (or --support, with "
                         "--units FILE or the config's answer runs)")
    from ..judges.run import judge
    from ..judges.support_task import NAME as SUPPORT

    if spec.task == SUPPORT:
        raise UsageError(f"judge '{spec.name}' is a support judge: give --support")

    return "pair", lambda **kw: judge(config, spec, _targets(args), **kw)


def cmd_judge(args) -> int:
    from ..config import load_config
    from ..documents import open_documents
    from ..judges.run import check_judgeable
    from ..store import Store

    config = load_config(args.config, collection=args.collection, strict=False)
    spec = _judge_spec(config, args.judge)
    if args.nuggets:
        return judge_nuggets(args, config, spec)
    what, judging = _judging(args, config, spec)
    collection = check_judgeable(config)
    with Store(config.store, scope=config.scope, wait=args.wait) as store, \
            open_documents(collection) as documents, progress_bar(what) as bar:
        summary = judging(store=store, documents=documents, max_calls=args.max_calls,
                          progress=None if bar is None else
                          lambda done, total: bar(done, total, spec.name))
    _report(spec.name, summary, what)
    _journal_notes(summary.journal_notes)
    if summary.none_succeeded:  # answers the store held are a success; no answer at all not
        raise JudgeError(
            f"judge '{spec.name}': no request succeeded: all {summary.failed} failed after "
            f"their retries ({summary.requests:,} HTTP requests to {spec.base_url}; first: "
            f"{summary.failures[0]}); nothing was stored for them: check the server and run "
            "again")
    return 0


def _journal_notes(notes: list[str]) -> None:
    """Answers the journal stored normalised, or kept aside in its quarantine file."""
    for line in notes:
        print(f"irbench: note: {terminal(line)}", file=sys.stderr)


def _report(name: str, s, what: str = "pair") -> None:
    if s.leftovers:
        print(f"irbench: {s.leftovers} answers left by an interrupted run were kept first",
              file=sys.stderr)
    if s.missing:
        print(f"irbench: warning: {len(s.missing)} documents are not in the collection and "
              f"were not judged: {', '.join(terminal(m) for m in s.missing[:5])}"
              + (" ..." if len(s.missing) > 5 else ""), file=sys.stderr)
    print(f"judge '{name}': {s.asked} {what}s: {s.cached} answered before (no call), "
          f"{s.answered} new answers ({s.prompt_tokens + s.completion_tokens:,} tokens), "
          f"{s.unparsed} without a grade, {s.failed} failed; {s.requests:,} HTTP requests "
          "(retries included)")
    if s.unvoted:
        print(f"irbench: {s.unvoted} {what}s got no label: none of their samples' answers "
              "had a grade", file=sys.stderr)
    if s.reused:
        print(f"irbench: {s.reused} of the answers held before came from another endpoint "
              "(reuse_answers_from)", file=sys.stderr)
    for reason in s.failures:
        print(f"  failed: {terminal(reason)}", file=sys.stderr)
    for note in s.notes:
        print(f"  note: {terminal(note)}", file=sys.stderr)
    if s.budget_left:
        print(f"irbench: the budget is spent: {s.budget_left} {what}s were not asked (raise "
              "max_calls / max_total_tokens, or --max-calls, and run again)", file=sys.stderr)


def cmd_judges(args) -> int:
    from ..config import load_config
    from ..store import Store

    config = load_config(args.config, collection=args.collection, strict=False, systems=False)
    with Store(config.store, scope=config.scope, read_only=True, wait=args.wait) as store:
        rows = store.judge_counts()
    shown = [(*row[:6], _requests(*row[5:8]), *row[8:]) for row in rows]
    print(text_table(("judge", "kind", "model", "judgments", "topics", "calls",
                      "HTTP requests", "prompt tokens", "completion tokens", "no grade",
                      "samples"),
                     [tuple("" if v is None else v for v in row) for row in shown]))
    if any(row[7] for row in rows):
        print("irbench: note: HTTP requests include retries; 'unknown' counts calls stored "
              "before irbench kept their requests", file=sys.stderr)
    return 0


def _requests(calls: int, known: int, unknown: int) -> int | str:
    """The HTTP requests of a judge's calls: their number, 'unknown', or the known part and
    how many calls are not counted."""
    if not unknown:
        return known
    if unknown == calls:
        return "unknown"
    return f"{known:,} + unknown ({unknown:,} calls)"


def cmd_qrels(args) -> int:
    from ..config import load_config
    from ..store import Store

    config = load_config(args.config, collection=args.collection, strict=False, systems=False)
    if args.import_:
        return _import(args, config)
    if args.support or args.nuggets:
        return (nugget_qrels if args.nuggets else _support_qrels)(args, config)
    from ..judgments import made

    with Store(config.store, scope=config.scope, read_only=not args.output,
               wait=args.wait) as store:
        columns = store.judgment_columns(args.pool, args.judge)
        known = set(columns["judge"].tolist())
        missing = [j for j in args.judge if j not in known]
        if missing:
            raise UsageError(f"no judgments by {', '.join(missing)} in {config.store}"
                             + (f" (pool '{args.pool}')" if args.pool else ""))
        judged_pool = args.pool is not None and store.load_pool(args.pool) is not None
        rule = args.rule or (POOL_RULE if judged_pool else DEFAULT_RULE)
        result = made(columns, rule, args.judge,
                      _pool_qrels(args, store) if judged_pool else None)
        text = result.text
        write_text(args.output, text)
        if args.output:  # the set then knows its judges when a config names it
            store.record_qrels_made(hashlib.sha256(text.encode("utf-8")).hexdigest(),
                                    args.output, rule, sorted(known))
    pairs = len(set(zip(columns["query_id"].tolist(), columns["doc_id"].tolist())))
    if rule == POOL_RULE and pairs > result.judged:
        print(f"irbench: note: {pairs - result.judged:,} documents only model judges labelled "
              f"are left out (the {POOL_RULE} rule takes people's labels; --rule "
              f"{DEFAULT_RULE} or human-first takes the models')", file=sys.stderr)
    if args.output:
        unsampled = len(result.query_id) - result.judged
        print(f"{result.judged:,} judgments of {result.topics:,} topics ({rule} of "
              f"{len(known)} judges) written to {terminal(args.output)}"
              + (f", with {unsampled:,} pooled documents not sampled (-1)" if unsampled else ""))
    return 0


def _support_qrels(args, config) -> int:
    """``irbench qrels --support``: the store's support labels as NIST's support JSONL."""
    import hashlib

    from ..judges.support_made import support_made
    from ..store import Store

    if args.pool is not None or args.import_:
        raise UsageError("--support writes every support label of the store: not with --pool "
                         "or --import")
    with Store(config.store, scope=config.scope, read_only=args.output is None,
               wait=args.wait) as store:
        columns = store.answer_label_columns("support", args.judge)
        known = sorted(set(columns["judge"].tolist()))
        missing = [j for j in args.judge if j not in known]
        if missing or not known:
            raise UsageError(f"no support labels by {', '.join(missing)} in {config.store}"
                             if missing else f"no support labels in {config.store} (irbench "
                             "judge CONFIG --judge NAME --support makes them)")
        rule = args.rule or DEFAULT_RULE
        result = support_made(columns, rule, args.judge)
        write_text(args.output, result.text)
        if args.output:  # the set then knows its judges when a config names it
            store.record_qrels_made(hashlib.sha256(result.text.encode("utf-8")).hexdigest(),
                                    args.output, rule, known)
    if args.output:
        print(f"{result.labels:,} support labels of {result.topics:,} topics ({rule} of "
              f"{len(known)} judges) written to {terminal(args.output)} (a qrels set of kind "
              "support_shared)")
    return 0


def _pool_qrels(args, store):
    """The qrels so far of the pool being judged ``--pool`` (its -1 lines: pooled documents
    a sampling strategy did not sample), read against the campaign's runs."""
    from ..config import load_config
    from ..pooling import load_state

    table = load_config(args.config, collection=args.collection, strict=False).run_table()
    state = load_state(store, args.pool, table)
    return None if state is None else state.qrels()


def _import(args, config) -> int:
    """Record a qrels file's labels as judgments of ``--as``; the same file (path) imported
    again, changed, replaces that judge's labels from it."""
    from ..escaping import terminal
    from ..ids import ids_text
    from ..store import JudgmentColumns, Store
    from ..trec import read_qrels

    if not args.as_:
        raise UsageError("irbench qrels --import FILE needs --as NAME (the judge's name)")
    qrels = read_qrels(args.import_)
    with Store(config.store, scope=config.scope, wait=args.wait) as store:
        new, replaced, same, removed = store.replace_judged(JudgmentColumns(
            length=len(qrels), query_id=ids_text(qrels.query_id),
            doc_id=ids_text(qrels.doc_id), relevance=qrels.relevance, judge=args.as_,
            judge_kind=args.kind, source=str(args.import_)))
    what = f"judgments by '{terminal(args.as_)}' from {terminal(str(args.import_))}"
    if not (same or replaced or removed):
        print(f"{new:,} {what} recorded")
    elif not (new or replaced or removed):
        print(f"{what}: nothing changed ({same:,} labels there already, the same)")
    else:
        print(f"{what}: replaced {replaced:,} labels, {same:,} unchanged, {new:,} new, "
              f"{removed:,} removed (no longer in the file)")
    return 0
