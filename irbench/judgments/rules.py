"""A qrels set from judgments of several judges, by a named rule: one registry.

Each judge's latest label of a (topic, document) is its label; then, per (topic, document),
a :class:`Rule` picks one label from those (:class:`Labels`). The rules registered here:

* ``majority``: the label most judges gave; a tie goes to the lower label (a document is
  not called more relevant than most judges found it);
* ``first``: the label of the first judge in the order given who judged it (a named judge
  first, the others filling in);
* ``human-first``: the majority of the human judges where any judged it, else of the model
  judges (people over models; models fill the holes);
* ``max`` / ``min``: the highest / lowest label any judge gave (lenient / strict).

The next rule is one function beside these (or in a module of its own) plus one
:func:`register` call; ``irbench qrels --rule`` offers :data:`RULES`, the registry's names.
Everything works on whole columns (numpy); the result is sorted by topic, then document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..registry import Registry


@dataclass(frozen=True)
class Labels:
    """The latest label of each judge of each (topic, document) pair, as columns of one row
    per (pair, judge): ``pair`` (index into the ``pairs`` pairs), ``judge`` (index into
    ``judges``, the judges' names sorted), ``label`` (int64) and ``kind`` (``human`` or
    ``model``); ``order``: judge names in order of precedence, as the user gave them."""

    pairs: int
    pair: np.ndarray
    judge: np.ndarray
    judges: np.ndarray
    label: np.ndarray
    kind: np.ndarray
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A way of choosing one label per pair. ``name`` is its one canonical name (``--rule``);
    ``summary`` what ``irbench qrels --help`` says of it in brackets ('' for none);
    ``choose(labels)`` the label of each of the ``labels.pairs`` pairs (int64, pair order)."""

    name: str
    summary: str
    choose: Callable[[Labels], np.ndarray]


REGISTRY: Registry[Rule] = Registry("qrels rule")
RULES = REGISTRY.keys()  # the names, in registration order; always the registry's own


def register(rule: Rule) -> Rule:
    """Add a rule; a second rule of the same name is a bug (ValueError)."""
    return REGISTRY.add(rule)


def rule(name: str) -> Rule:
    """The rule called ``name``; ValueError naming the rules (and the closest) if none."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = REGISTRY.closest(name)
        hint = f"; did you mean {close}?" if close else ""
        raise ValueError(f"no rule {name!r} ({', '.join(RULES)}{hint})") from None


def rules_phrase() -> str:
    """The rules as ``--help`` lists them: 'majority (ties to ...), first (...), ... max or
    min'."""
    parts = [f"{r.name} ({r.summary})" if r.summary else r.name for r in REGISTRY.values()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def combine(columns: dict[str, np.ndarray], rule_name: str, order: Sequence[str] = ()
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query_id, doc_id, relevance) by the rule ``rule_name`` from judgment ``columns``
    (query_id, doc_id, relevance, judge, judge_kind, position: as
    :meth:`Store.judgment_columns` gives them); ``order``: the judges in order of precedence
    (for ``first``)."""
    chosen = rule(rule_name)
    q, d, r, judge, kind = (np.asarray(columns[k]) for k in (
        "query_id", "doc_id", "relevance", "judge", "judge_kind"))
    if not len(q):
        return q, d, r.astype(np.int64)
    pair_keys = np.char.add(np.char.add(q.astype(str), "\t"), d.astype(str))  # ids hold no blanks
    pairs, pair = np.unique(pair_keys, return_inverse=True)
    judges, who = np.unique(judge.astype(str), return_inverse=True)
    latest = _latest(pair, who, np.asarray(columns["position"]))
    value = chosen.choose(Labels(pairs=len(pairs), pair=pair[latest], judge=who[latest],
                                 judges=judges, label=r[latest].astype(np.int64),
                                 kind=kind[latest], order=tuple(order)))
    topic, _, doc = np.char.partition(pairs, "\t").T
    return topic.astype(object), doc.astype(object), value


def _latest(pair: np.ndarray, who: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Rows holding each judge's latest label of each pair."""
    order = np.lexsort((-position, who, pair))
    keep = np.r_[True, (pair[order][1:] != pair[order][:-1]) | (who[order][1:] != who[order][:-1])]
    return np.sort(order[keep])


def _majority(pair: np.ndarray, label: np.ndarray, n: int) -> np.ndarray:
    """Per pair, the most frequent label (ties: the lowest)."""
    labels, code = np.unique(label, return_inverse=True)
    counts = np.zeros((n, len(labels)), dtype=np.int64)
    np.add.at(counts, (pair, code), 1)
    return labels[np.argmax(counts, axis=1)]  # argmax takes the first (lowest) of a tie


# ---- the rules -------------------------------------------------------------------------------


def majority(labels: Labels) -> np.ndarray:
    return _majority(labels.pair, labels.label, labels.pairs)


def first(labels: Labels) -> np.ndarray:
    rank = {name: i for i, name in enumerate(labels.order)}
    precedence = np.array([rank.get(j, len(rank)) for j in labels.judges])[labels.judge]
    pick = np.lexsort((precedence, labels.pair))
    pair, label = labels.pair[pick], labels.label[pick]
    head = np.r_[True, pair[1:] != pair[:-1]]
    value = np.empty(labels.pairs, dtype=np.int64)
    value[pair[head]] = label[head]
    return value


def human_first(labels: Labels) -> np.ndarray:
    human = labels.kind.astype(str) == "human"
    has_human = np.zeros(labels.pairs, dtype=bool)
    has_human[labels.pair[human]] = True
    use = human | ~has_human[labels.pair]
    return _majority(labels.pair[use], labels.label[use], labels.pairs)


def highest(labels: Labels) -> np.ndarray:
    value = np.full(labels.pairs, np.iinfo(np.int64).min)
    np.maximum.at(value, labels.pair, labels.label)
    return value


def lowest(labels: Labels) -> np.ndarray:
    value = np.full(labels.pairs, np.iinfo(np.int64).max)
    np.minimum.at(value, labels.pair, labels.label)
    return value


register(Rule("majority", "ties to the lower label", majority))
register(Rule("first", "the first --judge given that judged it", first))
register(Rule("human-first", "people's majority where any judged it, else the models'",
              human_first))
register(Rule("max", "", highest))
register(Rule("min", "", lowest))
