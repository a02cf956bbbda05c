"""The kinds of judgments irbench evaluates, each read and prepared one way, for ``irbench
eval -R`` and a config's ``kind:`` alike.

``adhoc`` (``qid iter docno rel``), ``diversity`` (``topic subtopic docno rel``, with optional
intent weights), ``qrels_jg`` (judgment groups), ``prefs`` and ``qrels_prefs`` (preferences).
:func:`prepare` returns what ranks runs (``rank(run, options)``); :func:`adhoc` the ad hoc
judgments inside it (topics and level counts). Readers are imported on first use.
"""

from __future__ import annotations

from typing import Callable

from ..ranked import PreparedQrels
from ..trec import read_qrels


def _adhoc(source, name, weights):
    return PreparedQrels(read_qrels(source, name=name))


def _diversity(source, name, weights):
    from .diversity import PreparedDiversity, read_diversity_qrels

    return PreparedDiversity(read_diversity_qrels(source, name=name), weights)


def _judgment_groups(source, name, weights):
    from .groups import PreparedJudgmentGroups, read_qrels_jg

    return PreparedJudgmentGroups(read_qrels_jg(source, name=name))


def _preferences(reader: str) -> Callable:
    def prepare(source, name, weights):
        from . import preferences

        return preferences.PreparedPrefs(getattr(preferences, reader)(source, name=name))

    return prepare


PREPARERS: dict[str, Callable] = {
    "adhoc": _adhoc, "diversity": _diversity, "qrels_jg": _judgment_groups,
    "prefs": _preferences("read_prefs"), "qrels_prefs": _preferences("read_qrels_prefs")}


def prepare(kind: str, source, name: str | None = None, intent_weights=None):
    """Judgments of ``kind`` from ``source`` (a path, ``-`` or a file object), prepared for
    ranking runs. Raises FormatError naming the file and line of every problem."""
    return PREPARERS[kind](source, name, intent_weights)


def adhoc(prepared) -> PreparedQrels:
    """The ad hoc judgments of any prepared kind (a diversity set's collapsed judgments, the
    union of judgment groups, the documents of preferences)."""
    return prepared if isinstance(prepared, PreparedQrels) else prepared.adhoc
