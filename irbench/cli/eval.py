"""``irbench eval``: a drop-in for trec_eval."""

from __future__ import annotations

import sys

from .. import judgments
from ..answers import read_answers
from ..errors import DuplicateError, FormatError, UsageError
from ..judgments import is_irds, materialise
from ..measures import parse_trec_specs
from ..ranked import EvalOptions
from ..runner.engine import reuse_freed_memory
from ..runner.parallel import evaluate_paths
from ..trec import read_qrels, read_run, read_zscores
from .output import format_rows, rows, trec_lines, zscore


def add_parsers(sub) -> None:
    _eval_parser(sub)


def _eval_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate runs against qrels, a drop-in for trec_eval",
        description="Evaluate one or more TREC runs against qrels. With one run the output is "
        "trec_eval's, line for line; with several, each line starts with the run's name.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docno rel; with a diversity measure, "
                   "topic subtopic docno rel); .gz is fine; - for stdin; irds:DATASET for an "
                   "ir_datasets dataset's qrels")
    p.add_argument("runs", nargs="+", help="run files (qid Q0 docno rank score tag); with "
                   "-R support or -R nuggets, answer runs (TREC RAG's JSONL)")
    p.add_argument("-q", action="store_true", help="print per-topic values as well as 'all'")
    p.add_argument("-m", action="append", default=[], metavar="MEASURE",
                   help="measure: trec_eval name (P.5,10; ndcg_cut.10; all_trec; official; set) "
                   "or irbench name (nDCG@10, AP, RBP(p=0.8)); repeatable; default official")
    p.add_argument("-c", action="store_true",
                   help="score qrels topics missing from a run (as trec_eval -c)")
    p.add_argument("-l", type=int, default=1, metavar="LEVEL",
                   help="lowest relevance level counted as relevant (default 1)")
    p.add_argument("-M", type=int, default=None, metavar="N",
                   help="evaluate only the top N documents of each topic")
    p.add_argument("-J", action="store_true", help="drop unjudged documents before scoring")
    p.add_argument("-N", type=int, default=0, metavar="N", help="collection size (for utility)")
    p.add_argument("-n", action="store_true", help="print no summary ('all') lines")
    p.add_argument("-Z", metavar="FILE", default=None,
                   help="print z-scores from FILE ('qid measure mean std_dev' lines), as "
                   "trec_eval -Z")
    p.add_argument("--duplicates", choices=("error", "first"), default="error",
                   help="a docno retrieved twice for a topic: error (trec_eval) or keep the first")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes for several or large runs (default: the CPUs)")
    p.add_argument("-R", choices=judgments.eval_formats(), default="qrels",
                   help="judgments format, as trec_eval -R (default qrels): " + "; ".join(
                       f"{k.eval_format}: {k.description}, '{k.lines}' lines, default -m "
                       f"{k.default_measures}" for k in judgments.KINDS.values()))
    p.add_argument("--known", metavar="FILE", default=None,
                   help="qrels of the documents the user already knows (Coverage, Novelty)")
    p.add_argument("--intent-weights", metavar="FILE", default=None,
                   help="'topic subtopic weight' lines for the intent-aware measures "
                   "(default: uniform)")
    p.add_argument("--format", choices=("trec", "tsv", "csv", "json"), default="trec",
                   help="output format (default: trec_eval's text)")
    p.set_defaults(handler=_cmd_eval)


def _cmd_eval(args) -> int:
    reuse_freed_memory()
    options = EvalOptions(
        relevance_level=args.l,
        max_docs=args.M,
        judged_only=args.J,
        complete=args.c,
        collection_size=args.N,
        duplicates=args.duplicates,
    )
    kinds = judgments.format_kinds(args.R)
    labelled = parse_trec_specs(args.m or [kinds[0].default_measures])
    measures = [m for _, m in labelled]
    kind = _judgment_kind(kinds, measures, args)
    problems: list[str] = []
    more = 0
    errors: set[type] = set()  # all DuplicateError: trec_eval's exit status 4, else 2

    def collect(read, source):
        nonlocal more
        try:
            return read(source)
        except FormatError as exc:  # report every file's problems in one go
            problems.extend(exc.problems)
            more += exc.more
            errors.add(type(exc))
            return None

    if is_irds(args.qrels):  # an ir_datasets dataset's qrels, written once as a file
        args.qrels = materialise(args.qrels, "qrels")
    prepared = collect(lambda source: judgments.prepare(
        kind.name, source, intent_weights=args.intent_weights), args.qrels)
    if prepared is None and kind.hint is not None and args.qrels != "-":
        hint = kind.hint(args.qrels)
        if hint:
            problems.append(hint)
    known = collect(read_qrels, args.known) if args.known else None
    results = []
    answers = "run" not in kind.scores  # support labels, nugget assignments: answer runs
    if prepared is None or (args.known and known is None):  # still report the runs' problems
        for path in args.runs:
            collect(read_answers if answers else read_run, path)
    else:  # runs read and scored by worker processes, results in input order
        if known is not None:
            prepared = judgments.with_known(prepared, known)
        _check_levels(prepared, measures, args.qrels)
        results = evaluate_paths(prepared, args.runs, measures, options,
                                 workers=args.workers, keep_ranked=args.Z is not None,
                                 answers=answers)
        for result in results:
            if result.stage == "read" and isinstance(result.error, FormatError):
                problems.extend(result.error.problems)
                more += result.error.more
                errors.add(type(result.error))
    table = collect(read_zscores, args.Z) if args.Z else None
    if problems or more:
        raise (DuplicateError if errors == {DuplicateError} else FormatError)(problems, more)
    out = sys.stdout
    evaluations = []
    for result in results:
        if result.error is not None:
            raise result.error
        ev = result.evaluation
        if ev is None:  # no error: RunResult has the evaluation
            raise RuntimeError(f"{result.path}: neither evaluated nor failed")
        if table is not None:
            ev = zscore(ev, labelled, table, result.ranked)
        if args.format == "trec":
            prefix = f"{ev.run_name}\t" if len(results) > 1 else ""
            out.write("".join(
                trec_lines(ev, labelled, args.q, not args.n, prefix, zscored=table is not None)
            ))
        else:
            evaluations.append(ev)
    if args.format != "trec":
        out.write(format_rows(rows(evaluations, labelled, args.q), args.format))
    return 0


def _check_levels(prepared, measures: list, path: str) -> None:
    """The measures' needs against the judgments' highest level, as ``irbench run`` checks
    them: a refusal is a usage error, a mismatch a warning."""
    counts = prepared.adhoc.level_counts.sum(axis=0).tolist()
    max_level = max((level for level, n in enumerate(counts) if n), default=0)
    for m in measures:
        problem = m.definition.level_problem(m, max_level)
        if problem is not None and problem.fatal:
            raise UsageError(f"{path}: {problem.text}")
        if problem is not None:
            print(f"irbench: warning: {path}: {problem.text}", file=sys.stderr)


def _judgment_kind(kinds: list, measures: list, args) -> judgments.JudgmentKind:
    """The kind of judgments ``-R`` reads for ``measures``: the first of ``kinds`` (those
    ``-R`` reads, e.g. ad hoc then diversity qrels) that computes them all. Measures of another
    kind name the ``-R`` value they need."""
    for kind in kinds:
        if all(kind.takes(m) for m in measures):
            if args.known and "known" not in kind.serves:
                if kind is kinds[0]:
                    raise UsageError(f"--known does not apply to -R {args.R}")
                raise UsageError(f"--known and {kind.measures_name} measures need two "
                                 "evaluations: run them apart")
            return kind
    wrong = [m for m in measures if not any(k.takes(m) for k in kinds)]
    if wrong and kinds[0].own_measures:
        raise UsageError(f"-R {args.R} takes only the {kinds[0].measures_name} measures "
                         f"({kinds[0].own_measures}, runid, num_q), not "
                         f"{', '.join(map(str, wrong))}")
    for m in wrong:
        serving = judgments.serving(m)
        options = " or ".join(f"-R {k.eval_format}" for k in serving)
        raise UsageError(f"{m}: {serving[0].measures_name} measures need {options}")
    raise UsageError("these measures need two evaluations: "  # e.g. diversity and Coverage
                     + ", ".join(map(str, measures)))
