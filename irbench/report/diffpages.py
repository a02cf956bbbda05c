"""Diff pages (issue 42): how run B's rankings differ from run A's, as one self-contained HTML
page (``irbench diff ... --format html``), and in the report (``irbench report
--participants``) one page per run against the baseline and against the run ranked just above
it, written beside the run pages and linked from them.

A page holds every topic's tau_AP, RBO, Jaccard@k and the measure's A, B and B - A (sorted as
:class:`irbench.stats.diffs.RunDiff` sorts them), then, for the most different topics, the two
top-k lists side by side: rank, docno, judgment ('unjudged' marked), the move, and with the
collection's documents their title and snippet, the query's terms highlighted. Every name,
docno, title and snippet is participant or collection text: the template prints it escaped
(autoescape) and a highlight is a (text, marked) piece, never markup put into text.

In the report the diffs are computed in batches: the runs needed are read and prepared once
(:func:`~irbench.stats.diffs.prepare_rankings`), each run A against all its runs B in one
:func:`~irbench.stats.diffs.diff_against`; the measure's per-topic values are the store's.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..documents import open_documents
from ..errors import IrbenchError
from ..stats.diffs import RunDiff, TopicDiff, diff_against, move, prepare_rankings, run_diff
from ..system import source_of
from ..topics import read_topics
from ..trec import Loaded, read_run
from .choices import focus_measure
from .fields import documented
from .numbers import num, signed
from .render import environment

_f = documented
SHOWN = 10  # topics whose two top-k lists a page shows, the most different first
BASELINE, ABOVE = "baseline", "above"


@dataclass(frozen=True)
class DiffEntry:
    """One document of a run's top k."""

    rank: int = _f("its rank in this run (1-based)")
    docno: str = _f("document id (participant text)")
    judgment: str = _f("its judgment, printed; 'unjudged'; '-' without qrels")
    unjudged: bool = _f("the qrels have no judgment for it")
    relevant: bool = _f("judged relevant (above 0)")
    move: str = _f("'moved from 3 to 17', 'same rank', 'absent from B' ...")
    title: str = _f("its title (collection text), or ''")
    snippet: tuple[tuple[str, bool], ...] = _f("its snippet as (text, is a query term) pieces "
                                               "(collection text), or ()")


@dataclass(frozen=True)
class DiffLists:
    """One topic's two top-k lists side by side."""

    topic: str = _f("topic id (participant text)")
    anchor: str = _f("the id of its section on the page")
    query: str = _f("the topic's title (its query), or ''")
    a: tuple[DiffEntry, ...] = _f("run A's top k")
    b: tuple[DiffEntry, ...] = _f("run B's top k")


@dataclass(frozen=True)
class DiffRow:
    """One topic of the table, printed."""

    topic: str = _f("topic id (participant text)")
    anchor: str = _f("the id of its lists' section, or '' (not shown)")
    tau_ap: str = _f("tau_AP, both directions averaged")
    rbo: str = _f("rank-biased overlap (extrapolated)")
    jaccard: str = _f("Jaccard overlap of the top k")
    measure_a: str = _f("run A's value of the measure, or '-'")
    measure_b: str = _f("run B's value of the measure, or '-'")
    delta: str = _f("B - A, signed, or '-'")
    better: str = _f("'b' (B higher), 'a' (A higher) or ''")
    size_a: int = _f("documents run A ranks")
    size_b: int = _f("documents run B ranks")
    shared: int = _f("documents both rank")


@dataclass(frozen=True)
class DiffPage:
    """A diff page: run B against run A."""

    a: str = _f("run A's name (participant text)")
    b: str = _f("run B's name (participant text)")
    file: str = _f("the page's file name in the report, or '' (alone)")
    against: tuple[str, ...] = _f("why A: 'baseline', 'above' (ranked just above B), both, or "
                                  "none (alone)")
    measure: str = _f("the measure of the table, or '' (none)")
    by: str = _f("what topics are sorted by: tauap, rbo, jaccard or measure")
    sorted_by: str = _f("what topics are sorted by, in words")
    k: int = _f("the top k of Jaccard and of the lists")
    persistence: str = _f("RBO's persistence, printed")
    rows: tuple[DiffRow, ...] = _f("every topic either run ranks, the most different first")
    lists: tuple[DiffLists, ...] = _f("the most different topics' lists")
    documents: bool = _f("titles and snippets are shown (the documents are declared)")
    page_a: str = _f("run A's run page (report), or ''")
    page_b: str = _f("run B's run page (report), or ''")
    title: str = _f("the report's title, or ''")
    generated_at: str = _f("when the page was made, or ''")


DIFF_TYPES = (DiffEntry, DiffLists, DiffRow, DiffPage)
BY_WORDS = {"tauap": "tau_AP (lowest first)", "rbo": "RBO (lowest first)",
            "jaccard": "Jaccard@k (lowest first)", "measure": "|B - A| of the measure "
            "(largest first)"}


def diff_page(result: RunDiff, *, documents=None, queries: Mapping[str, str] | None = None,
              listed: Sequence[str] | None = None, file: str = "",
              against: tuple[str, ...] = (),
              pages: tuple[str, str] = ("", ""), title: str = "",
              generated_at: str = "") -> DiffPage:
    """The page of ``result``: the lists of the topics ``listed`` (default the first
    :data:`SHOWN`), with ``documents`` (open) their titles and snippets around the terms of
    ``queries`` ({topic: query}); ``pages``: run A's and B's run pages to link."""
    listed = [t.topic for t in result.topics[:SHOWN]] if listed is None else list(listed)
    anchors = {t: f"topic-{i + 1}" for i, t in enumerate(listed)}
    queries = queries or {}
    lists = []
    for topic in listed:
        side = result.side_by_side(topic, documents, queries.get(topic, ""))
        judged = result.qrels is not None
        lists.append(DiffLists(topic=topic, anchor=anchors[topic], query=queries.get(topic, ""),
                               a=tuple(_entry(e, "A", judged) for e in side.a),
                               b=tuple(_entry(e, "B", judged) for e in side.b)))
    return DiffPage(
        a=result.a, b=result.b, file=file, against=against, measure=result.measure or "",
        by=result.by, sorted_by=BY_WORDS[result.by], k=result.k,
        persistence=f"{result.persistence:g}",
        rows=tuple(_row(t, anchors.get(t.topic, "")) for t in result.topics),
        lists=tuple(lists), documents=documents is not None, page_a=pages[0],
        page_b=pages[1], title=title, generated_at=generated_at)


def _row(t: TopicDiff, anchor: str) -> DiffRow:
    finite = math.isfinite(t.delta)
    return DiffRow(topic=t.topic, anchor=anchor, tau_ap=num(t.tau_ap), rbo=num(t.rbo),
                   jaccard=num(t.jaccard), measure_a=num(t.measure_a),
                   measure_b=num(t.measure_b), delta=signed(t.delta) if finite else "-",
                   better=("b" if t.delta > 0 else "a" if t.delta < 0 else "") if finite
                   else "", size_a=t.size_a, size_b=t.size_b, shared=t.shared)


def _entry(e, side: str, judged: bool) -> DiffEntry:
    """``judged``: there are qrels (without, every judgment is '-')."""
    unjudged = e.judgment is None
    return DiffEntry(rank=e.rank, docno=e.docno,
                     judgment=str(e.judgment) if not unjudged else
                     "unjudged" if judged else "-",
                     unjudged=unjudged and judged, relevant=not unjudged and e.judgment > 0,
                     move=move(e, side), title=e.title,
                     snippet=pieces(e.snippet, e.highlights))


def pieces(text: str, spans) -> tuple[tuple[str, bool], ...]:
    """``text`` cut at the ``spans`` (start, end): (piece, is a span) in order."""
    out, last = [], 0
    for start, end in spans:
        if start > last:
            out.append((text[last:start], False))
        out.append((text[start:end], True))
        last = end
    if last < len(text):
        out.append((text[last:], False))
    return tuple(out)


def render_page(page: DiffPage) -> str:
    """The self-contained HTML of ``page``."""
    return environment().get_template("diff.html").render(p=page)


# ---- the report's diff pages -------------------------------------------------------------


@dataclass(frozen=True)
class DiffPages:
    """The report's diff pages, each run's links to them ({system: ((label, file), ...)}),
    and notes (a run file that cannot be read: its pages are left out)."""

    pages: tuple[DiffPage, ...]
    links: dict[str, tuple[tuple[str, str], ...]]
    notes: tuple[str, ...]


def report_diffs(config, store, participants, *, title: str = "",
                 generated_at: str = "") -> DiffPages:
    """The diff pages of the run pages ``participants`` (:mod:`.runpages`): each run against
    every baseline (the config's ``baseline: true`` systems; not itself) and against the run
    ranked just above it on the focus measure; pairs by run A in one batch each."""
    declared = {s.name: s for s in store.declared_systems()}
    files = {p.system: p.file for p in participants}
    baselines = [p.system for p in participants
                 if declared.get(p.system) is not None and declared[p.system].baseline]
    pairs: dict[tuple[str, str], tuple[str, ...]] = {}
    for p in sorted(participants, key=lambda p: p.rank):
        for a in baselines:
            if a != p.system:
                pairs[(a, p.system)] = (BASELINE,)
        if p.previous:
            pairs[(p.previous, p.system)] = (*pairs.get((p.previous, p.system), ()), ABOVE)
    runs, notes = _read_runs(sorted({n for pair in pairs for n in pair}), declared,
                             store.system_hashes())
    pairs = {pair: why for pair, why in pairs.items() if pair[0] in runs and pair[1] in runs}
    if not pairs:
        return DiffPages((), {}, tuple(notes))
    names = list(runs)
    rankings = dict(zip(names, prepare_rankings([runs[n] for n in names])))
    qrels = config.qrels[0]
    measure = focus_measure(config)
    values = _store_values(store, qrels.name, measure)
    judged = qrels.read()
    page_files = diff_file_names(list(pairs), set(files.values()))
    queries = _queries(config.topics)
    out = []
    with _documents(config.documents, notes) as documents:
        for a in dict.fromkeys(a for a, _ in pairs):
            bs = [b for x, b in pairs if x == a]
            for b, scores in zip(bs, diff_against(rankings[a], [rankings[b] for b in bs])):
                result = run_diff(scores, (rankings[a], rankings[b]),
                                  *(_aligned(values.get(r, {}), scores.topics) for r in (a, b)),
                                  measure=measure, qrels=judged)
                out.append(diff_page(result, documents=documents, queries=queries,
                                     file=page_files[(a, b)], against=pairs[(a, b)],
                                     pages=(files[a], files[b]), title=title,
                                     generated_at=generated_at))
    return DiffPages(tuple(out), _links(out), tuple(notes))


def _aligned(values: Mapping[str, float], topics: Sequence[str]) -> np.ndarray:
    """A run's stored per-topic values ({topic: value}) in the order of ``topics`` (NaN:
    none stored)."""
    return np.array([values.get(t, math.nan) for t in topics], dtype=np.float64)


def diff_file_names(pairs: Sequence[tuple[str, str]], taken: set[str]) -> dict:
    """A safe file name per (A, B) pair, unique and none of ``taken`` (the run pages'):
    letters, digits, '.', '_' and '-' kept, anything else '_' (as run pages are named)."""
    used = {n.lower() for n in taken} | {"index.html"}
    out = {}
    for a, b in pairs:
        base = "diff-" + "-vs-".join(re.sub(r"[^A-Za-z0-9._-]", "_", n)[:60] for n in (b, a))
        candidate, k = f"{base}.html", 1
        while candidate.lower() in used:
            k += 1
            candidate = f"{base}-{k}.html"
        used.add(candidate.lower())
        out[(a, b)] = candidate
    return out


def _links(pages: Sequence[DiffPage]) -> dict[str, tuple[tuple[str, str], ...]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for p in pages:
        label = (f"Diff against {p.a} (ranked just above)" if BASELINE not in p.against else
                 f"Diff against the baseline {p.a}" + (" (also ranked just above)"
                                                       if ABOVE in p.against else ""))
        out.setdefault(p.b, []).append((label, p.file))
    return {name: tuple(links) for name, links in out.items()}


def _read_runs(names, declared, scored: Mapping[str, str]) -> tuple[dict, list[str]]:
    """The runs ``names`` whose files are still those ``irbench run`` scored (``scored``:
    their sha256); a note for each other (its pages would not match the report's numbers)."""
    runs, notes = {}, []
    for name in names:
        try:
            path = declared[name].path
            data = source_of(path).read(path)  # once: hashed, then read (a file or a URL)
            if hashlib.sha256(data).hexdigest() != scored.get(name):
                notes.append(f"run '{name}': no diff pages (its run file changed since "
                             "'irbench run' scored it: run it again)")
                continue
            runs[name] = read_run(Loaded(path, data), name=name)
        except (OSError, IrbenchError, KeyError) as exc:
            notes.append(f"run '{name}': no diff pages (its run file cannot be read: "
                         f"{getattr(exc, 'strerror', None) or exc})")
    return runs, notes


def _store_values(store, qrels: str, measure: str) -> dict[str, dict[str, float]]:
    names, topics, values = store.score_matrix(qrels, measure)
    return {n: {t: float(v) for t, v in zip(topics, row) if np.isfinite(v)}
            for n, row in zip(names, values)}


def _queries(topics_path) -> dict[str, str]:
    if topics_path is None:
        return {}
    try:
        topics = read_topics(topics_path)
    except (OSError, IrbenchError):
        return {}
    return {t: topics.statement(t)["title"] for t in topics.position}


@contextlib.contextmanager
def _documents(spec, notes: list[str]):
    if spec is None:
        yield None
        return
    try:
        documents = open_documents(spec)
    except (OSError, IrbenchError) as exc:
        notes.append(f"diff pages without titles and snippets: {exc}")
        yield None
        return
    with documents:
        yield _Read(documents)


class _Read:
    """Documents looked up once across the report's pages (a run's top k is on several):
    :meth:`get_many` and ``in`` as :class:`irbench.documents.Documents` has them, the last
    :data:`KEPT` documents kept."""

    def __init__(self, documents):
        self.documents, self.kept, self.present = documents, {}, {}

    def __contains__(self, docno) -> bool:
        if docno not in self.present:
            self.present[docno] = docno in self.documents
        return self.present[docno]

    def get_many(self, docnos, limit=None) -> list:
        docnos = list(docnos)
        missing = [d for d in dict.fromkeys(docnos) if (d, limit) not in self.kept]
        if len(self.kept) + len(missing) > KEPT:
            self.kept.clear()
            missing = list(dict.fromkeys(docnos))
        for doc in self.documents.get_many(missing, limit=limit) if missing else ():
            self.kept[(doc.docno, limit)] = doc
        return [self.kept[(d, limit)] for d in docnos]


KEPT = 4096  # documents (each cut to the snippet's text limit) kept across diff pages
