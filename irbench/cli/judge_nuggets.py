"""``irbench judge CONFIG --judge NAME --nuggets`` and ``irbench qrels CONFIG --nuggets -o
DIR``: the nugget judge from the command line (:mod:`irbench.judges.nugget_run`,
:mod:`irbench.judges.nugget_made`)."""

from __future__ import annotations

import os
import sys

from ..errors import JudgeError, UsageError
from ..escaping import terminal
from .output import progress_bar

NUGGETS_FILE, ASSIGNMENTS_FILE = "nuggets.jsonl", "assignments.jsonl"


def add_judge_nuggets(p) -> None:
    """``irbench judge --nuggets``."""
    p.add_argument("--nuggets", action="store_true",
                   help="a nugget judge ('task: nugget_create'): AutoNuggetizer's steps, each "
                   "topic's nuggets made from its relevant segments in the config's first "
                   "qrels set of documents, their importance labelled, the list stored, then "
                   "assigned in every answer of the config's answer runs (window, batch and "
                   "max_nuggets: the judge's config keys)")


def add_qrels_nuggets(p) -> None:
    """``irbench qrels --nuggets``."""
    p.add_argument("--nuggets", action="store_true",
                   help="write a nugget judge's list as the store holds it and the nugget "
                   "assignments of every answer run, as nuggetizer's nuggets.jsonl and "
                   "assignments.jsonl in the folder -o DIR (the list: --judge NAME's, or the "
                   "store's one list; the labels: --judge's, by --rule): a qrels set {path: "
                   "DIR/assignments.jsonl, kind: nuggets} then scores every answer run")


def judge_nuggets(args, config, spec) -> int:
    from ..documents import open_documents
    from ..judges.nugget_run import judge_nuggets as run
    from ..judges.run import check_judgeable
    from ..store import Store

    if args.support or args.pool or args.holes or args.pairs or args.units:
        raise UsageError("--nuggets judges the config's answer runs with nuggets made from "
                         "its qrels: not with --support, --pool, --holes, --pairs or --units")
    collection = check_judgeable(config)
    with Store(config.store, scope=config.scope, wait=args.wait) as store, \
            open_documents(collection) as documents, progress_bar("request") as bar:
        done = run(config, spec, store=store, documents=documents, max_calls=args.max_calls,
                   progress=None if bar is None else lambda n, total, task: bar(
                       n, total, f"{spec.name} {task.removeprefix('nugget_')}"))
    s = done.summary
    if s.leftovers:
        print(f"irbench: {s.leftovers} answers left by an interrupted run were kept first",
              file=sys.stderr)
    if done.missing:
        print(f"irbench: warning: {len(done.missing)} relevant segments of qrels set "
              f"'{terminal(done.qrels)}' are not in the collection and were left out: "
              + ", ".join(terminal(m) for m in done.missing[:5])
              + (" ..." if len(done.missing) > 5 else ""), file=sys.stderr)
    print(f"judge '{spec.name}': {done.lists} topics' nugget lists ({done.added} nuggets new "
          f"in the store), {done.assigned} answers assigned ({done.labels} labels new); "
          f"{s.asked} requests: {s.cached} answered before (no call), {s.answered} new "
          f"answers ({s.prompt_tokens + s.completion_tokens:,} tokens), {s.unparsed} not "
          f"read, {s.failed} failed; {s.requests:,} HTTP requests (retries included)")
    if s.no_segments:
        print(f"irbench: note: {len(s.no_segments)} topics have no relevant segment in qrels "
              f"set '{terminal(done.qrels)}' and no nuggets: "
              + ", ".join(terminal(q) for q in s.no_segments[:10]), file=sys.stderr)
    if s.no_nuggets:
        print(f"irbench: note: {s.no_nuggets} answers are to topics without nuggets",
              file=sys.stderr)
    for reason in s.failures:
        print(f"  failed: {terminal(reason)}", file=sys.stderr)
    for line in done.journal_notes:
        print(f"irbench: note: {terminal(line)}", file=sys.stderr)
    if s.unfinished:
        print(f"irbench: {len(s.unfinished)} topics or answers are unfinished"
              + (f" (the budget is spent: {s.budget_left} requests were not asked; raise "
                 "max_calls / max_total_tokens, or --max-calls" if s.budget_left else
                 " (requests failed") + "): run again to finish them", file=sys.stderr)
    if s.failed and not s.answered and not s.cached:
        raise JudgeError(
            f"judge '{spec.name}': no request succeeded: all {s.failed} failed after their "
            f"retries ({s.requests:,} HTTP requests to {spec.base_url}; first: "
            f"{s.failures[0] if s.failures else 'no reason given'}): check the server and "
            "run again")
    return 0


def nugget_qrels(args, config) -> int:
    """``irbench qrels --nuggets -o DIR``: a nugget judge's list and the assignments."""
    import hashlib

    from ..judges.nugget_made import nuggets_made
    from ..judges.nugget_records import write_assignments, write_nugget_lists
    from ..judgments import DEFAULT_RULE
    from ..store import Store
    from ..store.answer_labels import NUGGET
    from ..topics import read_topics

    if args.support or args.pool is not None or args.import_:
        raise UsageError("--nuggets writes a nugget judge's list and its assignments: not "
                         "with --support, --pool or --import")
    if not args.output:
        raise UsageError("--nuggets writes two files (nuggets.jsonl, assignments.jsonl): give "
                         "their folder with -o DIR")
    queries = {}
    if config.topics is not None:
        topics = read_topics(config.topics)
        queries = {q: topics.statement(q)["title"] for q in topics.query_id}
    with Store(config.store, scope=config.scope, wait=args.wait) as store:
        lists = store.nugget_judges()
        named = [j for j in args.judge if j in lists]
        if not lists:
            raise UsageError(f"no nugget lists in {config.store} (irbench judge CONFIG "
                             "--judge NAME --nuggets makes them)")
        if not named and (args.judge or len(lists) > 1):
            raise UsageError(f"no nugget list by {', '.join(args.judge)} in {config.store} "
                             f"(its lists: {', '.join(lists)})" if args.judge else
                             f"{config.store} holds the lists of {', '.join(lists)}: name "
                             "one with --judge NAME")
        judge = (named or lists)[0]
        live = store.live_nuggets(judge)
        columns = store.answer_label_columns(NUGGET, args.judge)
        rule = args.rule or DEFAULT_RULE
        made = nuggets_made(live, queries, columns, rule, args.judge)
        try:
            os.makedirs(args.output, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{args.output}: cannot make the folder ({exc.strerror})") from None
        nuggets_path = os.path.join(args.output, NUGGETS_FILE)
        assignments_path = os.path.join(args.output, ASSIGNMENTS_FILE)
        write_nugget_lists(nuggets_path, made.lists)
        write_assignments(assignments_path, made.assignments)
        with open(assignments_path, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        judges = sorted(set(columns["judge"].tolist()))
        store.record_qrels_made(sha, assignments_path, rule, judges)
    print(f"{len(made.lists):,} nugget lists of judge '{terminal(judge)}' and "
          f"{len(made.assignments):,} answers' assignments ({rule} of {len(judges)} judges) "
          f"written to {terminal(nuggets_path)} and {terminal(assignments_path)} (a qrels "
          "set of kind nuggets)")
    if made.unlabelled:
        print(f"irbench: note: {made.unlabelled:,} assignments without a label written as "
              "not_support (run irbench judge --nuggets again to label them)", file=sys.stderr)
    return 0
