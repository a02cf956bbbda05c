"""The support screen (``support.html``, ``irbench assess CONFIG --pool NAME --support``): an
answer's sentence highlighted within its answer, the segment it cites beside it, three keys
(2 full support, 1 partial, 0 no support), skip and undo.

The units are the config's answer runs' first citations, one per (topic, sentence text, cited
segment) however many runs wrote it (:func:`irbench.pooling.cited_pool`, as ``irbench judge
--support`` takes them); the answer shown is that of the first run (in the config's priority
order) that wrote the sentence. They are judged on the relevance desk (:class:`SupportDesk`, a
:class:`~irbench.assess.desk.Desk` over the units: topic by topic, overlap, skips, undo,
tickets, the same rules), each unit a candidate whose "docno" is :func:`unit_key` (a hash: the
page and its requests never name a run, team or model). The people are pool NAME's (sign-in,
tokens, roster). Every label is a row of ``answer_labels`` (task ``support``, the assessor as
judge, ``judge_kind`` human, ``pool`` NAME, ``source`` :data:`SOURCE`, no run: it serves every
run that wrote the sentence citing the segment, as ``support_shared`` keys labels) committed by
the desk's :class:`~irbench.assess.writer.Writer` before the page moves on; a restarted server
rebuilds the units and replays those rows, so nothing acknowledged is lost and a page open
across the restart saves its next key."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config.types import priority_order
from ..errors import IrbenchError
from ..ids import id_text
from ..judges.support_made import support_made
from ..judgments import DEFAULT_RULE
from ..report.fields import documented as _f
from ..store import Assessor, Click, Store
from .answer_desk import KeyOf, answer_app, opened_units, three_key_page, three_keys
from .answer_desk import stored_clicks as answer_clicks
from .contexts import AssessorPage, Item
from .desk import Desk
from .screens import Screen, register
from .serve import DESKS

#: The keys, in the order the page shows them: (label, name).
KEYS = ((2, "full support"), (1, "partial support"), (0, "no support"))
TASK = "support"


class SupportError(IrbenchError):
    """A campaign whose support cannot be assessed (no answer runs, no citations ...)."""


@dataclass(frozen=True)
class SupportUnit:
    """One unit: the topic, the sentence, the cited segment's docno, the answer of the first
    run that wrote the sentence and where the sentence starts in it (characters)."""

    query_id: str
    sentence: str
    reference: str
    answer: str
    start: int


@dataclass(frozen=True, kw_only=True)
class SupportItem(Item):
    """A unit as the support page shows it: ``doc_id`` is its key (:func:`unit_key`),
    ``title`` and ``text`` the cited segment's (blind: never a run, team or model)."""

    sentence: str = _f("the answer's sentence to judge", default="")
    answer: str = _f("the answer it is in (the first run's that wrote it), its sentences "
                     "joined by a space", default="")
    start: int = _f("where the sentence starts in ``answer`` (characters)", default=0)
    segment: str = _f("the cited segment's docno (irbench.ids.id_text)", default="")


def unit_key(query_id: str, sentence: str, reference: str) -> str:
    """A unit's id on the page and in its requests: a hash of (topic, sentence, segment)."""
    joined = "\0".join((query_id, sentence, reference)).encode("utf-8", "surrogateescape")
    return "u" + hashlib.sha256(joined).hexdigest()[:24]


def support_units(config: Any) -> list[SupportUnit]:
    """The units of the config's answer runs (first citations), topic by topic; SupportError
    when it has no answer runs or no cited sentence."""
    from ..pooling import answer_systems, cited_pool, read_answer_runs

    answering = [s.name for s in config.systems if s.kind == "answers"]
    if not answering:
        raise SupportError(f"{config.path}: no answer systems to judge (a system with "
                           "'answers: FILE')")
    systems = answer_systems(priority_order(config.systems), answering)
    pool = cited_pool(read_answer_runs(systems, config.missing_runs), "first")
    if not pool.num_units:
        raise SupportError(f"{config.path}: the answer runs cite no segment: nothing to judge")
    topics = [id_text(t) for t in pool.topics.tolist()]
    answers: dict[tuple[int, int], list[str]] = {}
    units = []
    for u in range(pool.num_units):
        a, b = int(pool.unit_offsets[u]), int(pool.unit_offsets[u + 1])
        first = min(range(a, b), key=lambda i: (int(pool.occ_run[i]), int(pool.occ_row[i])))
        run, row = int(pool.occ_run[first]), int(pool.occ_row[first])
        columns = pool.answers[run]
        key = (run, int(columns.sentence_topic[row]))
        if key not in answers:
            rows = np.flatnonzero(np.asarray(columns.sentence_topic) == key[1])
            answers[key] = [str(t) for t in columns.sentence_text[rows].tolist()]
        texts, text = answers[key], str(pool.unit_text[u])
        position = int(pool.occ_sentence[first])
        answer = " ".join(texts)
        start = sum(len(t) + 1 for t in texts[:position])
        if answer[start:start + len(text)] != text:
            start = max(answer.find(text), 0)
        units.append(SupportUnit(topics[int(pool.unit_topic[u])], text,
                                 str(pool.unit_ref[u]), answer, start))
    return units


class SupportDesk(Desk):
    """The desk over support units (see the module docstring): an item is a
    :class:`SupportItem`; ``document(docno)`` gives the cited segment's (title, text)."""

    units: dict[str, SupportUnit]

    def _item(self, cand: int, who: Assessor, previous: int | None = None,
              again: bool = False, skipped: bool = False) -> Item:
        query_id, key = self._ids(cand)
        unit = self.units[key]
        title, text = self.document(unit.reference)
        return SupportItem(query_id=query_id, doc_id=key, topic=self.statement(query_id),
                           title=title, text=text, suggestion=None, again=again,
                           previous=previous, skipped=skipped,
                           ticket=self.ticket(who.name, query_id, key),
                           sentence=unit.sentence, answer=unit.answer, start=unit.start,
                           segment=unit.reference)


def _key_of(units: dict[str, SupportUnit]) -> KeyOf:
    """A stored support label's unit key (a label of a run's own sentence is not the desk's)."""
    keys = {(u.query_id, u.sentence, u.reference): k for k, u in units.items()}
    return lambda q, text, ref, run: keys.get((q, text, ref)) if run is None else None


def stored_clicks(store: Store, pool: str, units: dict[str, SupportUnit]) -> list[Click]:
    """The desk's support labels of ``pool``'s assessors as the desk's clicks, keyed by
    unit (:func:`irbench.assess.answer_desk.stored_clicks`)."""
    return answer_clicks(store, pool, TASK, _key_of(units))


@contextmanager
def opened_support(config: Any, pool: str, wait: float | None, options: Any
                   ) -> Iterator[tuple]:
    """(desk, store, documents) serving the support units to ``pool``'s people, open for the
    block (:func:`irbench.assess.answer_desk.opened_units`)."""
    by_key = {unit_key(u.query_id, u.sentence, u.reference): u for u in support_units(config)}
    with opened_units(config, pool, wait, options, units=by_key, task=TASK,
                      key_of=_key_of(by_key), desk_type=SupportDesk, what="segment",
                      label_of=lambda u: {"query_id": u.query_id, "sentence_text": u.sentence,
                                          "reference": u.reference}) as opened:
        yield opened


def support_app(config: Any, pool: str, desk: Desk, store: Store, *, port: int,
                levels: tuple[int, ...], preselect: bool,
                screens: Iterable[Screen] | None = None, names: tuple[str, ...] = (),
                url: str = "", admin: str | None = None) -> Any:
    """The app serving the support screen over an open support desk
    (:func:`irbench.assess.answer_desk.answer_app`): ``/qrels`` the support labels as
    ``irbench qrels --support`` writes them (NIST's JSONL, rule majority)."""
    assert isinstance(desk, SupportDesk)
    return answer_app(config, pool, desk, store, port=port, url=url, admin=admin, task=TASK,
                      screen=SUPPORT, key_of=_key_of(desk.units), unit="sentences",
                      export=lambda columns: "" if columns is None else
                      support_made(columns, DEFAULT_RULE).text)


SUPPORT_PATH = "/support"
SUPPORT = register(Screen(name="support", template="support.html", page_type=AssessorPage,
                          page=three_key_page(KEYS, SUPPORT_PATH), parse_label=three_keys,
                          path=SUPPORT_PATH,
                          kind="support"))


DESKS["support"] = (opened_support, support_app)  # irbench assess --support
