"""The answer pages: one page per answer run (``irbench report --participants``), written
beside the run pages in ``systems/answers/``.

Each page shows every topic's answer as the run wrote it, each sentence marked by the
support label of its first citation (full, partial, none, not judged; the measures' rule),
each citation as ``[n]`` (``n``: the cited id's place in the topic's references, else its
order among the topic's other citations) linked to the cited segment's text further down the
page (when the collection declares its documents), and per topic the nuggets the answer covers
and misses, with the run's per-topic scores from the store at each topic's heading.

Unlike the rest of the report these pages read files: the system's answer file, the support
and nugget judgment files, the documents. A file that is missing, unreadable or changed since
``irbench run`` scored it is a note on the page, never a failure. Everything a participant
wrote (and every document's text) is plain text here: control and format characters shown as
``\\xNN`` / ``\\uNNNN`` (:func:`irbench.escaping.terminal`), then escaped by Jinja2. A page is
bounded: at most :data:`SENTENCES_SHOWN` sentences a topic, :data:`TOPICS_SHOWN` topics,
:data:`SEGMENTS_SHOWN` segments with text of at most :data:`SEGMENT_CHARS` characters; what is
left out is counted on the page.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .. import judgments
from ..answers import read_answers
from ..answers.columns import csr_take
from ..answers.scored import topic_index
from ..documents import open_documents
from ..errors import FormatError
from ..escaping import terminal, terminal_text
from ..ids import id_text
from ..measures import parse_measure
from ..trec import Loaded
from .choices import NUGGETS, SUPPORT, answer_sets, run_page_names, serving
from .fields import documented

if TYPE_CHECKING:
    from ..judgments.answered import PreparedNuggetSet, PreparedSupportSet

_f = documented

SENTENCES_SHOWN = 40  # sentences of one topic's answer shown
TOPICS_SHOWN = 500  # topics of one page
SEGMENTS_SHOWN = 1000  # cited segments with their text on one page
SEGMENT_CHARS = 1200  # characters of a segment's text shown
TEXT_CHARS = 2000  # characters of a sentence or nugget shown
NOTE_CHARS = 1500  # characters of a reader's error shown in a note
LABELS = {2: "full", 1: "partial", 0: "none", -1: "not judged"}  # support labels as words
CSS = {"full": "full", "partial": "partial", "none": "none", "not judged": "unjudged",
       "uncited": "uncited", "no labels": "unlabelled"}
ASSIGNED = {1.0: "supported", 0.5: "partly supported"}
ORDER = ("full", "partial", "none", "not judged", "uncited", "no labels")  # labels as listed


@dataclass(frozen=True)
class Citation:
    """One citation of a sentence, shown ``[n]``."""

    number: int = _f("n of [n]: the cited id's place in the topic's references (1 first), "
                     "else after them in the order first cited")
    anchor: str = _f("the id of the cited segment's entry on the page (no '#')")
    reference: str = _f("the cited segment or document id (participant text)")
    label: str = _f("its support label: full, partial, none, not judged, or 'no labels'")


@dataclass(frozen=True, kw_only=True)
class AnswerSentence:
    """One sentence of an answer."""

    text: str = _f("the sentence (participant text, cut to TEXT_CHARS)")
    label: str = _f("the support label of its first citation (full, partial, none, not "
                    "judged), 'uncited', or 'no labels' (no support set knows the run)")
    css: str = _f("the CSS class of that label")
    citations: tuple[Citation, ...] = _f("its citations, in the run's order")


@dataclass(frozen=True)
class NuggetLine:
    """One nugget of a topic."""

    text: str = _f("the nugget's text (cut to TEXT_CHARS)")
    vital: bool = _f("a vital nugget (else okay)")
    assignment: str = _f("'supported' or 'partly supported' for a covered nugget, "
                         "'not supported' for a missed one")


@dataclass(frozen=True)
class TopicScore:
    """One of the run's stored per-topic values, at the topic's heading."""

    qrels: str = _f("the answer judgment set")
    measure: str = _f("canonical measure name")
    value: str = _f("the value, printed (counts whole)")


@dataclass(frozen=True, kw_only=True)
class AnswerTopic:
    """One topic's answer on an answer page."""

    query_id: str = _f("topic id")
    anchor: str = _f("the id of its heading on the page")
    text: str = _f("the topic's text (the campaign's topics), or ''")
    answered: bool = _f("the run answered it (an unanswered topic scores 0)")
    scores: tuple[TopicScore, ...] = _f("the run's per-topic values on the answer sets")
    sentences: tuple[AnswerSentence, ...] = _f("the first SENTENCES_SHOWN sentences")
    more: int = _f("how many sentences are not shown")
    labels: tuple[tuple[str, int], ...] = _f("(label, sentences) over the whole answer")
    covered: tuple[NuggetLine, ...] = _f("the nuggets the answer covers (fully or partly)")
    missed: tuple[NuggetLine, ...] = _f("the nuggets it misses")
    nuggets_note: str = _f("why no nuggets are shown for the topic, or ''")


@dataclass(frozen=True, kw_only=True)
class CitedSegment:
    """A cited segment's text, where the page's citations link to."""

    anchor: str = _f("its id on the page (no '#')")
    reference: str = _f("the segment or document id (participant text)")
    title: str = _f("the document's title, or ''")
    text: str = _f("its text (cut to SEGMENT_CHARS), or ''")
    note: str = _f("why there is no text ('' when there is)")
    topics: str = _f("the topics citing it, printed")


@dataclass(frozen=True, kw_only=True)
class AnswerPage:
    """The answer page of one answer run."""

    system: str = _f("system name (participant text)")
    file: str = _f("the page's file name in systems/answers/, made from the name")
    run_page: str = _f("its run page relative to this page, or '' (none written)")
    run_id: str = _f("the run id the answers give (participant text), or ''")
    format: str = _f("the answer format read (rag24, rag25, ...), or ''")
    answer_file: str = _f("the answer file's path")
    support_qrels: str = _f("the support set whose labels mark the sentences, or ''")
    nuggets_qrels: str = _f("the nuggets set whose assignments are shown, or ''")
    notes: tuple[str, ...] = _f("what could not be shown and why (a missing or changed "
                                "file, judgments not read, no documents declared)")
    means: tuple[TopicScore, ...] = _f("the run's means on the answer sets (topic '')")
    labels: tuple[tuple[str, int], ...] = _f("(label, sentences) over every topic shown")
    topics: tuple[AnswerTopic, ...] = _f("the topics, the campaign's order")
    topics_more: int = _f("how many topics are not shown (past TOPICS_SHOWN)")
    segments: tuple[CitedSegment, ...] = _f("every cited segment, first cited first")
    segments_more: int = _f("how many cited segments are not listed (past SEGMENTS_SHOWN)")
    sentences_shown: int = _f("SENTENCES_SHOWN: sentences shown a topic")
    segment_chars: int = _f("SEGMENT_CHARS: characters of a segment shown")


ANSWER_PAGE_TYPES = (Citation, AnswerSentence, NuggetLine, TopicScore, AnswerTopic,
                     CitedSegment, AnswerPage)


def plain(text: str, limit: int = TEXT_CHARS, lines: bool = False) -> str:
    """Participant (or document) text as a page shows it: control and format characters
    visible as escapes (tabs and newlines kept with ``lines``), cut to ``limit`` characters
    with '…'."""
    shown = terminal_text(text) if lines else terminal(text)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


@dataclass(frozen=True)
class Judged:
    """The answer judgment sets read once for every page: the first support set and the
    first nuggets set (prepared), with the notes of what could not be read."""

    support_qrels: str = ""
    nuggets_qrels: str = ""
    support: PreparedSupportSet | None = None
    nuggets: PreparedNuggetSet | None = None
    notes: tuple[str, ...] = ()


def read_judged(config, store) -> Judged:
    """The support and nuggets sets of ``config`` (the first of each), prepared; a set that
    cannot be read, or changed since 'irbench run', is a note."""
    notes: list[str] = []
    support, nuggets = serving(config, SUPPORT), serving(config, NUGGETS)
    return Judged(support_qrels=support.name if support else "",
                  nuggets_qrels=nuggets.name if nuggets else "",
                  support=_prepared(support, store, notes),
                  nuggets=_prepared(nuggets, store, notes), notes=tuple(notes))


def _prepared(spec, store, notes: list[str]):
    """The qrels set ``spec`` prepared by its kind, or None (with a note when it cannot be
    read); a note too when it changed since 'irbench run'."""
    if spec is None:
        return None

    try:
        prepared = judgments.prepare(spec.kind, spec.path, name=spec.name)
    except (FormatError, OSError, ValueError) as exc:
        notes.append(f"qrels set '{spec.name}' ({plain(spec.path)}) cannot be read: "
                     f"{plain(str(exc), NOTE_CHARS)}")
        return None
    stored = store.qrels_hash(spec.name)
    if stored and _sha256(spec.path) not in (stored, ""):
        notes.append(f"qrels set '{spec.name}' ({plain(spec.path)}) changed since 'irbench "
                     "run' scored the runs: the marks show the file as it is now")
    return prepared


def _sha256(path: str) -> str:
    try:
        return hashlib.sha256(_read(path)).hexdigest()
    except OSError:
        return ""


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def answer_pages(config, store, run_pages: dict[str, str] | None = None
                 ) -> tuple[AnswerPage, ...]:
    """One :class:`AnswerPage` per answer system of the store (config order). ``run_pages``:
    {system: its run page's file in systems/}, to link each page to its run page."""
    systems = [s for s in store.declared_systems() if s.kind == "answers"]
    if not systems:
        return ()
    files = run_page_names([s.name for s in systems])
    judged = read_judged(config, store)
    hashes = store.system_hashes()
    texts = store.topic_texts()
    with _documents(config) as (docs, docs_note):
        return tuple(_page(config, store, s, files[s.name], judged, hashes.get(s.name, ""),
                           texts, docs, docs_note, (run_pages or {}).get(s.name, ""))
                     for s in systems)


class _documents:
    """The collection's documents open for the pages, or (None, why not)."""

    def __init__(self, config):
        self.config, self.docs = config, None

    def __enter__(self):
        spec = self.config.documents
        if spec is None:
            return None, ("the collection declares no documents (collection.documents): "
                          "citations show the cited ids without their text")

        try:
            self.docs = open_documents(spec)
        except (FormatError, OSError) as exc:
            return None, f"the documents cannot be read: {plain(str(exc), NOTE_CHARS)}"
        return self.docs, ""

    def __exit__(self, *exc) -> None:
        if self.docs is not None:
            self.docs.close()


def _page(config, store, system, file: str, judged: Judged, stored_sha: str, texts,
          docs, docs_note: str, run_page: str) -> AnswerPage:
    notes = list(judged.notes)
    answers = None
    path = system.path
    try:
        data = _read(path)
    except OSError as exc:
        notes.append(f"the answer file {plain(path)} cannot be read "
                     f"({exc.strerror or exc}): the answers are not shown, only the scores "
                     "'irbench run' stored")
    else:
        sha = hashlib.sha256(data).hexdigest()
        if stored_sha and sha != stored_sha:
            notes.append(f"the answer file {plain(path)} changed since 'irbench run' scored "
                         "it: the answers shown are the file as it is now, the scores are "
                         "of the file scored")

        try:
            answers = read_answers(Loaded(path, data), format=system.answer_format,
                                   name=system.name)
        except (FormatError, OSError) as exc:
            notes.append(f"the answer file cannot be read: {plain(str(exc), NOTE_CHARS)}")
    if docs_note:
        notes.append(docs_note)
    scores, means = _scores(config, store, system.name)
    labels = _citation_labels(judged, answers, notes)
    nuggets = _nuggets(judged, answers, notes)
    order = _topic_order(texts, scores, answers)
    cited = _Cited()
    topics: list[AnswerTopic] = []
    answered = {a.topic_id: (a, k) for a, k in _with_offsets(answers)}
    for topic in order[:TOPICS_SHOWN]:
        answer, start = answered.get(topic, (None, 0))
        first = (int(answers.columns.citation_offsets[start])
                 if answer is not None and answers is not None else 0)
        topics.append(_topic(topic, len(topics), texts.get(topic, ""), answer, first, labels,
                             nuggets, scores.get(topic, ()), cited))
    segments = _segments(cited, docs)
    total: dict[str, int] = {}
    for t in topics:
        for label, n in t.labels:
            total[label] = total.get(label, 0) + n
    return AnswerPage(
        system=system.name, file=file, run_page=f"../{run_page}" if run_page else "",
        run_id=answers.run_id if answers else "", format=answers.format if answers else "",
        answer_file=path, support_qrels=judged.support_qrels,
        nuggets_qrels=judged.nuggets_qrels, notes=tuple(notes), means=means,
        labels=_ordered(total), topics=tuple(topics),
        topics_more=max(0, len(order) - TOPICS_SHOWN), segments=segments,
        segments_more=max(0, len(cited.place) - SEGMENTS_SHOWN), sentences_shown=SENTENCES_SHOWN,
        segment_chars=SEGMENT_CHARS)


def _ordered(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((label, counts[label]) for label in ORDER if label in counts)


def _with_offsets(answers):
    """(topic answer, index of its first sentence in the run's columns), topics sorted."""
    if answers is None:
        return
    start = 0
    for answer in answers.answers():
        yield answer, start
        start += len(answer.sentences)


def _scores(config, store, name: str
            ) -> tuple[dict[str, tuple[TopicScore, ...]], tuple[TopicScore, ...]]:
    """({topic: the run's values on the answer sets}, its means there), measures in suite
    order then the rest."""
    sets = [q.name for q in answer_sets(config)]
    suite = [str(m) for measures in config.suites.values() for m in measures]

    def printed(measure: str, value) -> str:
        whole = parse_measure(measure).definition.kind == "int"
        if value is None or not math.isfinite(value):
            return "-"
        return str(int(round(value))) if whole else f"{value:.4f}"

    def key(item: TopicScore):
        at = suite.index(item.measure) if item.measure in suite else len(suite)
        return sets.index(item.qrels), at, item.measure

    per: dict[str, list[TopicScore]] = {}
    for qrels in sets:
        for _, _, measure, topic, value in store.per_query(qrels, systems=[name])[1]:
            per.setdefault(topic, []).append(TopicScore(qrels, measure, printed(measure,
                                                                                value)))
    means = [TopicScore(qrels, measure, printed(measure, value)) for qrels in sets
             for _, _, measure, value, _ in store.means(qrels, systems=[name])[1]]
    return ({t: _once(sorted(v, key=key)) for t, v in per.items()},
            _once(sorted(means, key=key)))


def _once(scores: list[TopicScore]) -> tuple[TopicScore, ...]:
    """``scores`` with a measure that two sets give the same value (an answer-shape count:
    answer_words on the support and the nuggets set) kept once, at its first set."""
    seen: set[tuple[str, str]] = set()
    out = []
    for s in scores:
        if (s.measure, s.value) not in seen:
            seen.add((s.measure, s.value))
            out.append(s)
    return tuple(out)


def _topic_order(texts: dict[str, str], scores: dict, answers) -> list[str]:
    """The campaign's topics with a score or an answer, in the campaign's order, then any
    other answered topic (sorted)."""
    answered = answers.topic_ids if answers is not None else []
    wanted = set(scores) | set(answered)
    order = [t for t in texts if t in wanted]
    return order + sorted(wanted - set(order))


def _citation_labels(judged: Judged, answers, notes: list[str]) -> np.ndarray | None:
    """Per citation of the run's columns, its support label (-1 not judged, also for a topic
    the support set does not hold); None without support labels of the run."""
    support = judged.support
    if answers is None or support is None:
        return None
    if not support.has_run(answers):
        notes.append(f"qrels set '{judged.support_qrels}' holds no support labels of run "
                     f"'{plain(answers.run_id)}': the sentences are not marked")
        return None

    c = answers.columns
    scored = support.rank(answers)
    kept = np.flatnonzero(topic_index(c.topics, scored.topics)[c.sentence_topic] >= 0)
    _, items = csr_take(c.citation_offsets, kept)  # as over_topics takes them
    out = np.full(c.num_citations, -1, dtype=np.int64)
    out[items] = scored.label
    return out


@dataclass(frozen=True)
class _TopicNuggets:
    vital: np.ndarray
    score: np.ndarray
    text: list[str]


def _nuggets(judged: Judged, answers, notes: list[str]) -> dict[str, _TopicNuggets] | None:
    """{topic: its nuggets with the run's assignments}; None without the run's."""
    prepared = judged.nuggets
    if answers is None or prepared is None:
        return None
    key = prepared.run_key(answers)
    if key is None:
        notes.append(f"qrels set '{judged.nuggets_qrels}' holds no nugget assignments of run "
                     f"'{plain(answers.run_id)}': no nuggets are shown")
        return None

    found = prepared.rank(answers).nuggets
    a = prepared.assignments
    mine = np.flatnonzero(a.run_id == key)
    where = topic_index(a.topic_id[mine], prepared.topics)
    mine, where = mine[where >= 0], where[where >= 0]
    rows = mine[np.argsort(where, kind="stable")]  # the order rank() gives the nuggets
    if found is None or len(rows) != len(found.score):
        notes.append(f"qrels set '{judged.nuggets_qrels}': the nuggets of run "
                     f"'{plain(answers.run_id)}' do not line up with their texts: none shown")
        return None
    out = {}
    for t, topic in enumerate(prepared.topics.tolist()):
        lo, hi = int(found.offsets[t]), int(found.offsets[t + 1])
        if hi > lo:
            out[id_text(topic)] = _TopicNuggets(found.vital[lo:hi], found.score[lo:hi],
                                                a.text[rows[lo:hi]].tolist())
    return out


def _topic(topic: str, index: int, text: str, answer, first: int, labels, nuggets,
           scores: tuple[TopicScore, ...], cited: _Cited) -> AnswerTopic:
    """One topic of a page; ``first``: the index of its first citation in the run's columns
    (``labels``, per citation, or None); ``cited`` gathers the segments it cites."""
    sentences: list[AnswerSentence] = []
    counts: dict[str, int] = {}
    numbers: dict[str, int] = {}
    at = first
    for ref in answer.references if answer is not None else ():
        numbers.setdefault(ref, len(numbers) + 1)
    for k, sentence in enumerate(answer.sentences if answer is not None else ()):
        words = [LABELS.get(int(labels[at + i]), "not judged") if labels is not None else
                 "no labels" for i in range(len(sentence.citations))]
        at += len(sentence.citations)
        label = "uncited" if not words else words[0]
        counts[label] = counts.get(label, 0) + 1
        for ref in sentence.citations:
            numbers.setdefault(ref, len(numbers) + 1)
            cited.add(ref, topic)
        if k < SENTENCES_SHOWN:
            sentences.append(AnswerSentence(
                text=plain(sentence.text), label=label, css=CSS[label],
                citations=tuple(Citation(number=numbers[ref], anchor=cited.anchor(ref),
                                         reference=plain(ref, 200), label=word)
                                for ref, word in zip(sentence.citations, words))))
    covered, missed, note = _topic_nuggets(topic, nuggets)
    total = len(answer.sentences) if answer is not None else 0
    return AnswerTopic(query_id=plain(topic, 200), anchor=f"topic-{index + 1}",
                       text=plain(text), answered=answer is not None, scores=scores,
                       sentences=tuple(sentences), more=max(0, total - SENTENCES_SHOWN),
                       labels=_ordered(counts), covered=covered, missed=missed,
                       nuggets_note=note)


class _Cited:
    """The segments a page cites, first cited first: each one's place and the topics citing
    it (the first 11 kept: the page names 10)."""

    def __init__(self) -> None:
        self.place: dict[str, int] = {}
        self.topics: dict[str, list[str]] = {}

    def add(self, ref: str, topic: str) -> None:
        citing = self.topics.setdefault(ref, [])
        self.place.setdefault(ref, len(self.place))
        if topic not in citing and len(citing) < 11:
            citing.append(topic)

    def anchor(self, ref: str) -> str:
        """The page id of ``ref``'s segment entry ('' past SEGMENTS_SHOWN: not listed)."""
        k = self.place[ref]
        return f"seg-{k + 1}" if k < SEGMENTS_SHOWN else ""


def _topic_nuggets(topic: str, nuggets) -> tuple[tuple[NuggetLine, ...],
                                                 tuple[NuggetLine, ...], str]:
    if nuggets is None:
        return (), (), ""
    found = nuggets.get(topic)
    if found is None:
        return (), (), "no nuggets of this topic for this run"
    lines = [NuggetLine(plain(text), bool(vital), ASSIGNED.get(float(score), "not supported"))
             for text, vital, score in zip(found.text, found.vital.tolist(),
                                           found.score.tolist())]
    return (tuple(n for n, s in zip(lines, found.score.tolist()) if s > 0),
            tuple(n for n, s in zip(lines, found.score.tolist()) if s <= 0), "")


def _segments(cited: _Cited, docs) -> tuple[CitedSegment, ...]:
    """Each cited id with its text (the first SEGMENTS_SHOWN, first cited first)."""
    ids = list(cited.place)[:SEGMENTS_SHOWN]
    found: dict[str, object] = {}
    missing: set[str] = set()
    if docs is not None and ids:
        missing = set(docs.missing(ids))
        present = [i for i in ids if i not in missing]
        found = dict(zip(present, docs.get_many(present, limit=SEGMENT_CHARS)))
    out = []
    for k, ref in enumerate(ids):
        doc = found.get(ref)
        note = ("" if doc is not None else
                "not in the collection's documents" if ref in missing else
                "no documents declared")
        where = cited.topics[ref]
        title = getattr(doc, "title", "") or ""
        text = getattr(doc, "text", "") or ""
        if title and text.startswith(title):  # JSONL text fields start with the title
            text = text[len(title):].lstrip()
        out.append(CitedSegment(
            anchor=f"seg-{k + 1}", reference=plain(ref, 200), title=plain(title, 300),
            text=plain(text, SEGMENT_CHARS + 1, lines=True), note=note,
            topics=", ".join(plain(t, 100) for t in where[:10])
            + (" and more" if len(where) > 10 else "")))
    return tuple(out)


def page_links(pages) -> dict[str, str]:
    """{system: its answer page relative to systems/ (a run page's folder)}."""
    return {p.system: f"answers/{p.file}" for p in pages}


