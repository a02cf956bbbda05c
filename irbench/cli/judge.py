"""``irbench judge`` (a model judge labels pairs), ``irbench judges`` (who judged what, at
what cost) and ``irbench qrels`` (a qrels set from the store's judgments by a rule, or
judgments imported under a judge's name)."""

from __future__ import annotations

import sys

from ..errors import UsageError
from ..escaping import terminal
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
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--pool", metavar="NAME", help="the documents of a pool built with "
                      "'irbench pool build --name NAME', or of a pool being judged ('irbench "
                      "pool start': its planned documents, or those an adaptive strategy has "
                      "handed out), whose assessors then see the labels as suggestions")
    what.add_argument("--holes", metavar="SET", help="the unjudged documents of this qrels "
                      "set in the top --depth of every run")
    what.add_argument("--pairs", metavar="FILE", help="a file of 'topic docno' lines")
    p.add_argument("--depth", type=positive_int, default=10,
                   help="with --holes: how deep (default 10)")
    p.add_argument("--max-calls", type=nonnegative_int, default=None, metavar="N",
                   help="make at most N requests in this run (besides the judge's budget)")
    add_wait(p)
    p.set_defaults(handler=cmd_judge)

    p = sub.add_parser("judges", help="every judge in the store: judgments, calls, tokens",
                       description="Every judge whose judgments the store holds (assessors, "
                       "model judges, imported qrels): how many judgments and topics, and for "
                       "model judges the calls, tokens and answers without a grade.")
    p.add_argument("config", help="campaign config (YAML)")
    add_wait(p)
    p.set_defaults(handler=cmd_judges)

    p = sub.add_parser(
        "qrels", help="write a qrels set from the store's judgments, by a rule",
        description="Write the judgments of the chosen judges (default: all) as a qrels "
        "file, one label per (topic, document) by --rule: majority (ties to the lower "
        "label), first (the first --judge given that judged it), human-first (people's "
        "majority where any judged it, else the models'), max or min. With --import FILE "
        "--as NAME, record a qrels file's labels as judgments of NAME instead.")
    p.add_argument("config", help="campaign config (YAML)")
    p.add_argument("--judge", action="append", default=[], metavar="NAME",
                   help="use this judge's labels (repeat; order matters for --rule first)")
    p.add_argument("--rule", default="majority",
                   choices=("majority", "first", "human-first", "max", "min"))
    p.add_argument("--pool", default=None, metavar="NAME", help="only this pool's judgments")
    p.add_argument("-o", "--output", default=None, help="the qrels file (default: stdout)")
    p.add_argument("--import", dest="import_", default=None, metavar="FILE",
                   help="record this qrels file's labels as judgments")
    p.add_argument("--as", dest="as_", default=None, metavar="NAME",
                   help="with --import: the judge's name")
    p.add_argument("--kind", choices=("human", "model"), default="human",
                   help="with --import: who made them (default human)")
    add_wait(p)
    p.set_defaults(handler=cmd_qrels)


def _judge_spec(config, name: str):
    if name not in config.judges:
        known = ", ".join(config.judges) or "none: add a 'judges:' section"
        raise UsageError(f"no judge '{name}' in {config.path} (its judges: {known})")
    return config.judges[name]


def _pairs(args, config, store):
    from ..judges.targets import holes, read_pairs

    if args.pairs:
        return read_pairs(args.pairs), ""
    from ..config import priority_order
    from ..pooling import build_table

    runs = [s for s in priority_order(config.systems) if s.name not in config.missing_runs]
    if args.pool:
        found = store.pool_documents(args.pool)
        if found is not None:
            return list(zip(*found)), args.pool
        saved = store.load_pool(args.pool)
        if saved is None:
            raise UsageError(f"no pool '{args.pool}' in {config.store} (irbench pool build "
                             f"--name, or irbench pool start)")
        return _being_judged(saved, build_table(runs)), args.pool

    sets = {q.name: q for q in config.qrels}
    if args.holes not in sets:
        raise UsageError(f"no qrels set '{args.holes}' (the config has {', '.join(sets)})")
    qrels = sets[args.holes].read()
    table = build_table(runs, topics=sorted(set(qrels.query_id.tolist())), depth=args.depth)
    return holes(table, qrels), ""


def _being_judged(saved, table) -> list[tuple[str, str]]:
    """The documents of a pool being judged that a model can label ahead of the assessors:
    the whole planned pool of a static strategy; what an adaptive one handed out so far."""
    import numpy as np

    from ..pooling import PoolingState
    from ..pooling.persist import decode_state
    from ..pooling.state import OPEN

    state = PoolingState.from_dict(decode_state(*saved), table)
    wanted = state.eligible if not state.strategy.adaptive else state.status != OPEN
    cands = np.flatnonzero(wanted)
    topics = table.topics[table.cand_topic[cands]]
    docs = table.docs[table.cand_doc[cands]]
    from ..ids import id_text

    return sorted((id_text(q), id_text(d)) for q, d in zip(topics.tolist(), docs.tolist()))


def cmd_judge(args) -> int:
    from ..config import load_config
    from ..documents import open_documents
    from ..judges.journal import Journal, journal_path
    from ..judges.judging import Budget, JudgingSummary, build_requests, judge_pairs
    from ..store import Store
    from ..topics import read_topics

    config = load_config(args.config, strict=False)
    spec = _judge_spec(config, args.judge)
    if config.documents is None:
        raise UsageError(f"{config.path}: a judge reads documents: give collection.documents")
    if config.topics is None:
        raise UsageError(f"{config.path}: a judge reads the topics: give collection.topics")
    topics = read_topics(config.topics)
    with Store(config.store, wait=args.wait) as store, \
            open_documents(config.documents) as documents:
        journal = Journal(journal_path(config.store), store.save_answers)
        leftovers = journal.fold_leftovers()
        pairs, pool = _pairs(args, config, store)
        unknown = sorted({q for q, _ in pairs} - set(topics.query_id))
        if unknown:
            raise UsageError(f"{len(unknown)} topics are not in {config.topics}: "
                             + ", ".join(unknown[:10]))
        summary = JudgingSummary(leftovers=leftovers)
        rendering = spec.prompt.compile()
        requests = build_requests(rendering, spec, pairs, topics.statement, documents, summary)
        store.remember_judge(spec.name, "model", spec.model, spec.base_url, spec.settings())
        budget = Budget(spec, *store.judge_usage(spec.name), args.max_calls)
        with progress_bar("pair") as bar:
            done = [0]

            def progress(n: int) -> None:
                done[0] += n
                if bar is not None:
                    bar(done[0], len(requests), spec.name)

            judge_pairs(spec, requests, store, journal, pool=pool, budget=budget,
                        summary=summary, progress=progress, rendering=rendering)
    _report(spec.name, summary)
    _journal_notes(journal)
    return 0


def _journal_notes(journal) -> None:
    """Answers the journal stored normalised, or kept aside in its quarantine file."""
    from ..escaping import terminal

    for line in journal.notes:
        print(f"irbench: note: {terminal(line)}", file=sys.stderr)


def _report(name: str, s) -> None:
    if s.leftovers:
        print(f"irbench: {s.leftovers} answers left by an interrupted run were kept first",
              file=sys.stderr)
    if s.missing:
        print(f"irbench: warning: {len(s.missing)} documents are not in the collection and "
              f"were not judged: {', '.join(s.missing[:5])}"
              + (" ..." if len(s.missing) > 5 else ""), file=sys.stderr)
    print(f"judge '{name}': {s.asked} pairs: {s.cached} answered before (no call), "
          f"{s.answered} new answers ({s.prompt_tokens + s.completion_tokens:,} tokens), "
          f"{s.unparsed} without a grade, {s.failed} failed")
    for reason in s.failures:
        print(f"  failed: {terminal(reason)}", file=sys.stderr)
    for note in s.notes:
        print(f"  note: {terminal(note)}", file=sys.stderr)
    if s.budget_left:
        print(f"irbench: the budget is spent: {s.budget_left} pairs were not asked (raise "
              "max_calls / max_total_tokens, or --max-calls, and run again)", file=sys.stderr)


def cmd_judges(args) -> int:
    from ..config import load_config
    from ..store import Store

    config = load_config(args.config, strict=False, systems=False)
    with Store(config.store, read_only=True, wait=args.wait) as store:
        rows = store.judge_counts()
    print(text_table(("judge", "kind", "model", "judgments", "topics", "calls",
                      "prompt tokens", "completion tokens", "no grade"),
                     [tuple("" if v is None else v for v in row) for row in rows]))
    return 0


def cmd_qrels(args) -> int:
    from ..config import load_config
    from ..store import Store

    config = load_config(args.config, strict=False, systems=False)
    if args.import_:
        return _import(args, config)
    import hashlib

    from ..judgments.rules import combine

    with Store(config.store, read_only=args.output is None, wait=args.wait) as store:
        columns = store.judgment_columns(args.pool, args.judge)
        known = set(columns["judge"].tolist())
        missing = [j for j in args.judge if j not in known]
        if missing:
            raise UsageError(f"no judgments by {', '.join(missing)} in {config.store}"
                             + (f" (pool '{args.pool}')" if args.pool else ""))
        q, d, r = combine(columns, args.rule, args.judge)
        text = "".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(q, d, r.tolist()))
        write_text(args.output, text)
        if args.output:  # the set then knows its judges when a config names it
            store.record_qrels_made(hashlib.sha256(text.encode("utf-8")).hexdigest(),
                                    args.output, args.rule, sorted(known))
    if args.output:
        print(f"{len(q):,} judgments of {len(set(q.tolist())):,} topics ({args.rule} of "
              f"{len(known)} judges) written to {args.output}")
    return 0


def _import(args, config) -> int:
    """Record a qrels file's labels as judgments of ``--as``; the same file (path) imported
    again, changed, replaces that judge's labels from it."""
    from ..escaping import terminal
    from ..ids import ids_text
    from ..store import Judged, Store
    from ..trec import read_qrels

    if not args.as_:
        raise UsageError("irbench qrels --import FILE needs --as NAME (the judge's name)")
    qrels = read_qrels(args.import_)
    with Store(config.store, wait=args.wait) as store:
        new, replaced, same, removed = store.replace_judged(Judged(
            query_id=ids_text(qrels.query_id).tolist(), doc_id=ids_text(qrels.doc_id).tolist(),
            relevance=qrels.relevance.tolist(), judge=args.as_, judge_kind=args.kind,
            source=str(args.import_)))
    what = f"judgments by '{terminal(args.as_)}' from {terminal(str(args.import_))}"
    if not (same or replaced or removed):
        print(f"{new:,} {what} recorded")
    elif not (new or replaced or removed):
        print(f"{what}: nothing changed ({same:,} labels there already, the same)")
    else:
        print(f"{what}: replaced {replaced:,} labels, {same:,} unchanged, {new:,} new, "
              f"{removed:,} removed (no longer in the file)")
    return 0
