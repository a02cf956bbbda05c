"""``irbench diff CONFIG A B`` (systems of a campaign) and ``irbench diff QRELS RUN_A RUN_B``
(files): where and how two runs' rankings differ, topic by topic
(:func:`irbench.stats.diffs.diff`), and one topic's two top-k lists side by side."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .output import json_value, positive_int, text_table, write_text

FORMATS = ("table", "json", "html")
CONFIG_SUFFIXES = (".yaml", ".yml")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "diff", help="where two runs differ: topics by tau_AP, RBO, Jaccard or a measure, "
        "and a topic's top-k lists side by side",
        description="Every topic either run ranks, scored by how run B's ranking differs "
        "from run A's: tau_AP averaged in both directions over the union of their "
        "documents (as diffir computes it), rank-biased overlap (extrapolated, persistence "
        "0.9), the Jaccard overlap of the top k and, with --measure, each run's value and "
        "B - A; the most different topics first. With --topic, that topic's two top-k "
        "lists side by side: each document's judgment (or '-': unjudged) and its rank in "
        "the other run; with the collection's documents (collection.documents, or "
        "--documents) its title and a snippet with the query's terms marked *so*. The "
        "first argument is a campaign config (.yaml: A and B are its systems' names) or a "
        "qrels file (A and B are run files).")
    p.add_argument("config", metavar="CONFIG|QRELS",
                   help="campaign config (YAML), or a qrels file")
    p.add_argument("a", metavar="A", help="run A: a system's name, or a run file")
    p.add_argument("b", metavar="B", help="run B: a system's name, or a run file")
    p.add_argument("--qrels", default=None, metavar="SET",
                   help="the config's qrels set (default its first)")
    p.add_argument("--measure", default=None, metavar="M",
                   help="also each run's value of this measure per topic and B - A")
    p.add_argument("--by", choices=("tauap", "rbo", "jaccard", "measure"), default="tauap",
                   help="sort topics by this (default tauap; measure: the largest |B - A|)")
    p.add_argument("--top", type=positive_int, default=10, metavar="N",
                   help="show the N most different topics (default 10)")
    p.add_argument("--topic", default=None, metavar="ID",
                   help="show this topic's two top-k lists side by side")
    p.add_argument("-k", type=positive_int, default=10,
                   help="the top k of Jaccard and of the lists (default 10)")
    p.add_argument("--documents", default=None, metavar="FILE",
                   help="without a config: the documents (TREC SGML or JSONL) for titles "
                   "and snippets")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table, json, or html (a self-contained page: every topic, and the "
                   "lists of the --top most different, or of --topic, side by side)")
    p.add_argument("-o", "--output", default=None, help="write to this file")
    p.set_defaults(handler=cmd_diff)


@dataclass(frozen=True)
class Inputs:
    """What the arguments name: qrels, the two runs, documents and topics (or None)."""

    qrels: Any
    a: Any
    b: Any
    documents: Any = None
    topics: Any = None


def cmd_diff(args) -> int:
    from ..stats.diffs import diff

    inputs = _config_inputs(args) if args.config.endswith(CONFIG_SUFFIXES) else \
        _file_inputs(args)
    if args.by == "measure" and args.measure is None:
        raise UsageError("--by measure needs --measure")
    result = diff(inputs.qrels, inputs.a, inputs.b, measure=args.measure, by=args.by,
                  k=args.k)
    if args.topic is not None and args.topic not in {t.topic for t in result.topics}:
        raise UsageError(f"topic '{args.topic}': neither run ranks a document for it")
    write_text(args.output, FORMATTERS[args.format](result, inputs, args))
    return 0


def _side(result, inputs: Inputs, topic: str | None):
    """The two top-k lists of ``topic`` (None: none), with titles and snippets when the
    documents are given."""
    if topic is None:
        return None
    with _open(inputs.documents) as docs:
        return result.side_by_side(topic, docs, _query(inputs.topics, topic))


def _open(spec):
    from contextlib import nullcontext

    from ..documents import open_documents

    return nullcontext() if spec is None else open_documents(spec)


def _html(result, inputs: Inputs, args) -> str:
    from ..report.diffpages import diff_page, render_page

    listed = [args.topic] if args.topic else [t.topic for t in result.topics[:args.top]]
    topics = _topics(inputs.topics) if inputs.topics else None
    queries = {t: topics.statement(t)["title"] for t in listed
               if topics is not None and t in topics.position}
    with _open(inputs.documents) as docs:
        return render_page(diff_page(result, documents=docs, queries=queries, listed=listed))


def _config_inputs(args) -> Inputs:
    from ..config import load_config

    config = load_config(args.config, collection=args.collection, strict=True)
    systems = {s.name: s for s in config.systems}
    runs = []
    for name in (args.a, args.b):
        if name not in systems:
            raise UsageError(f"no system '{name}' in {args.config} (it has "
                             f"{', '.join(sorted(systems)) or 'none'})")
        runs.append(systems[name].path)
    sets = {q.name: q for q in config.qrels}
    if args.qrels is not None and args.qrels not in sets:
        raise UsageError(f"no qrels set '{args.qrels}' in {args.config} (it has "
                         f"{', '.join(sets) or 'none'})")
    chosen = sets.get(args.qrels) if args.qrels else next(iter(sets.values()), None)
    documents = config.documents
    if args.documents is not None:
        raise UsageError("--documents is for a diff without a config (the config's "
                         "collection.documents is read)")
    from ..trec import read_run

    run_a, run_b = (read_run(path, name=name) for path, name in zip(runs, (args.a, args.b)))
    return Inputs(chosen.read() if chosen else None, run_a, run_b, documents, config.topics)


def _file_inputs(args) -> Inputs:
    from ..documents import DocumentsSpec

    for option, value in (("--collection", args.collection), ("--qrels", args.qrels)):
        if value is not None:
            raise UsageError(f"{option} is for a diff of a config's systems")
    documents = DocumentsSpec(paths=(args.documents,)) if args.documents else None
    return Inputs(args.config, args.a, args.b, documents)


def _query(topics_path, topic: str) -> str:
    if topics_path is None:
        return ""
    topics = _topics(topics_path)
    return topics.statement(topic)["title"] if topic in topics.position else ""


def _topics(path):
    from ..topics import read_topics

    return read_topics(path)


# ---- formats -------------------------------------------------------------------------------


def _topic_json(t) -> dict:
    return {"topic": t.topic, "tau_ap": json_value(t.tau_ap), "rbo": json_value(t.rbo),
            "jaccard": json_value(t.jaccard), "measure_a": json_value(t.measure_a),
            "measure_b": json_value(t.measure_b), "delta": json_value(t.delta),
            "documents_a": t.size_a, "documents_b": t.size_b, "shared": t.shared}


def _entry_json(e, side: str) -> dict:
    from ..stats.diffs import move

    return {"rank": e.rank, "docno": e.docno, "judgment": e.judgment,
            "other_rank": e.other_rank, "move": move(e, side), "title": e.title,
            "snippet": e.snippet, "highlights": [list(s) for s in e.highlights]}


def _json(result, side, top: int) -> str:
    from ..escaping import json_text

    value = {"a": result.a, "b": result.b, "by": result.by, "measure": result.measure,
             "k": result.k, "persistence": result.persistence,
             "topics": [_topic_json(t) for t in result.topics[:top]],
             "side_by_side": None if side is None else {
                 "topic": side.topic, "a": [_entry_json(e, "A") for e in side.a],
                 "b": [_entry_json(e, "B") for e in side.b]}}
    return json_text(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)) + "\n"


def _table(result, side, top: int) -> str:
    m = result.measure
    header = ["topic", "tau_AP", "RBO", f"Jaccard@{result.k}",
              *([f"{m} A", f"{m} B", "B - A"] if m else []), "docs A", "docs B", "shared"]
    rows = [[t.topic, t.tau_ap, t.rbo, t.jaccard,
             *([t.measure_a, t.measure_b, t.delta] if m else []), t.size_a, t.size_b,
             t.shared] for t in result.topics[:top]]
    lines = [f"A: {result.a}", f"B: {result.b}",
             f"{len(result.topics)} topics, the {min(top, len(result.topics))} most "
             f"different by {result.by} (RBO persistence {result.persistence})", "",
             text_table(header, rows)]
    if side is not None:
        lines += ["", *_side_lines(side, result.k)]
    from ..escaping import terminal

    return "\n".join(terminal(line) if i < 2 else line for i, line in enumerate(lines)) + "\n"


def _side_lines(side, k: int) -> list[str]:
    from ..escaping import terminal
    from ..stats.diffs import move

    header = ["rank", "A docno", "judged", "in B", "B docno", "judged", "in A"]
    rows = []
    for i in range(max(len(side.a), len(side.b))):
        ea = side.a[i] if i < len(side.a) else None
        eb = side.b[i] if i < len(side.b) else None
        rows.append([i + 1, *(_cells(ea, "A", move)), *(_cells(eb, "B", move))])
    lines = [f"topic {terminal(side.topic)}: the top {k} of A and B", text_table(header, rows)]
    for label, entries in (("A", side.a), ("B", side.b)):
        for e in entries:
            if e.title or e.snippet:
                lines += [f"{label} {e.rank} {terminal(e.docno)}: {terminal(e.title)}",
                          f"    {terminal(_marked(e.snippet, e.highlights))}"]
    return lines


def _cells(entry, side: str, move) -> list:
    if entry is None:
        return [None, None, None]
    judged = "-" if entry.judgment is None else entry.judgment
    return [entry.docno, judged, move(entry, side)]


def _marked(snippet: str, spans) -> str:
    out, last = [], 0
    for start, end in spans:
        out += [snippet[last:start], "*", snippet[start:end], "*"]
        last = end
    return "".join(out) + snippet[last:]


FORMATTERS = {
    "table": lambda result, inputs, args: _table(result, _side(result, inputs, args.topic),
                                                 args.top),
    "json": lambda result, inputs, args: _json(result, _side(result, inputs, args.topic),
                                               args.top),
    "html": _html,
}
