"""A qrels set from judgments of several judges, by a named rule: one registry.

Each judge's latest label of a (topic, document) is its label; then, per (topic, document),
a :class:`Rule` picks one label from those (:class:`Labels`). The rules registered here:

* ``majority``: the label most judges gave; a tie goes to the lower label (a document is
  not called more relevant than most judges found it);
* ``pool``: the pool's label, as the assessment desk keeps it (:mod:`irbench.assess.desk`):
  the first person to label a document (in the order the store recorded the labels: a click
  in the browser, or a file judged in with ``irbench pool judge -j``) gives its label, and
  that person's later labels (an undo, another tab) replace it; a second person's label is
  kept for agreement and never changes it; model judges' labels are suggestions, never the
  pool's (a pair only models labelled is left out). ``irbench qrels --pool`` of a pool being
  judged, and the server's ``/qrels``, use it (:func:`made`);
* ``first``: the label of the first judge in the order given who judged it (a named judge
  first, the others filling in);
* ``human-first``: the majority of the human judges where any judged it, else of the model
  judges (people over models; models fill the holes);
* ``max`` / ``min``: the highest / lowest label any judge gave (lenient / strict).

The next rule is one function beside these (or in a module of its own) plus one
:func:`register` call; ``irbench qrels --rule`` offers :data:`RULES`, the registry's names.
Everything works on whole columns (numpy); the result is sorted by topic, then document.

:func:`made` is the one way a qrels file is written from the store's judgments: ``irbench
qrels`` and the assessment server's ``/qrels`` both call it, so the two give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..ids import id_text
from ..registry import Registry


@dataclass(frozen=True)
class Labels:
    """The latest label of each judge of each (topic, document) pair, as columns of one row
    per (pair, judge): ``pair`` (index into the ``pairs`` pairs), ``judge`` (index into
    ``judges``, the judges' names sorted), ``label`` (int64), ``kind`` (``human`` or
    ``model``) and ``since`` (the position, in the order recorded, of that judge's first
    label of the pair); ``order``: judge names in order of precedence, as the user gave
    them."""

    pairs: int
    pair: np.ndarray
    judge: np.ndarray
    judges: np.ndarray
    label: np.ndarray
    kind: np.ndarray
    since: np.ndarray
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A way of choosing one label per pair. ``name`` is its one canonical name (``--rule``);
    ``summary`` what ``irbench qrels --help`` says of it in brackets ('' for none);
    ``choose(labels)`` the label of each of the ``labels.pairs`` pairs (int64, pair order;
    :data:`LEFT_OUT` for a pair the rule gives no label)."""

    name: str
    summary: str
    choose: Callable[[Labels], np.ndarray]


LEFT_OUT = np.iinfo(np.int64).min  # a rule's value for a pair it gives no label
POOL_RULE = "pool"  # the rule of a pool being judged (irbench qrels --pool, /qrels)
DEFAULT_RULE = "majority"  # the rule of irbench qrels otherwise
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
    (for ``first``). A pair the rule gives no label (:data:`LEFT_OUT`) is left out."""
    chosen = rule(rule_name)
    q, d, r, judge, kind = (np.asarray(columns[k]) for k in (
        "query_id", "doc_id", "relevance", "judge", "judge_kind"))
    if not len(q):
        return q, d, r.astype(np.int64)
    pair_keys = np.char.add(np.char.add(q.astype(str), "\t"), d.astype(str))  # ids hold no blanks
    pairs, pair = np.unique(pair_keys, return_inverse=True)
    judges, who = np.unique(judge.astype(str), return_inverse=True)
    latest, since = _latest(pair, who, np.asarray(columns["position"]))
    value = chosen.choose(Labels(pairs=len(pairs), pair=pair[latest], judge=who[latest],
                                 judges=judges, label=r[latest].astype(np.int64),
                                 kind=kind[latest], since=since, order=tuple(order)))
    topic, _, doc = np.char.partition(pairs, "\t").T
    keep = value != LEFT_OUT
    return topic[keep].astype(object), doc[keep].astype(object), value[keep]


def _latest(pair: np.ndarray, who: np.ndarray, position: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Rows holding each judge's latest label of each pair (in row order), and the position
    of that judge's first label of the pair."""
    order = np.lexsort((position, who, pair))
    p, w = pair[order], who[order]
    start = np.r_[True, (p[1:] != p[:-1]) | (w[1:] != w[:-1])]
    end = np.r_[start[1:], True]
    rows, first = order[end], position[order[start]]
    by_row = np.argsort(rows, kind="stable")
    return rows[by_row], first[by_row]


@dataclass(frozen=True)
class Made:
    """A qrels set made from the store's judgments (:func:`made`): its lines' columns
    (sorted by topic, then document, as text) and ``judged``, how many carry a label (the
    others: pooled documents not sampled, -1)."""

    query_id: np.ndarray
    doc_id: np.ndarray
    relevance: np.ndarray
    judged: int

    @property
    def text(self) -> str:
        """The qrels file: ``topic 0 docno relevance`` lines."""
        return "".join(f"{q} 0 {d} {r}\n" for q, d, r in zip(
            self.query_id.tolist(), self.doc_id.tolist(), self.relevance.tolist()))

    @property
    def topics(self) -> int:
        return len(set(self.query_id.tolist()))


def made(columns: dict[str, np.ndarray], rule_name: str = POOL_RULE, order: Sequence[str] = (),
         unsampled=None) -> Made:
    """The qrels set ``irbench qrels`` writes and the assessment server's ``/qrels`` gives:
    the pairs of ``columns`` (:meth:`Store.judgment_columns`) labelled by ``rule_name``
    (:func:`combine`), and, for a pool of a sampling strategy, its pooled documents not
    judged with -1 (trec_eval's infAP reads them so): ``unsampled`` is the pool's qrels so far
    (:meth:`irbench.pooling.PoolingState.qrels`; its -1 lines are taken, ids written by
    :func:`irbench.ids.id_text` as the store keeps them), None for none. One line per pair."""
    q, d, r = combine(columns, rule_name, order)
    judged = len(q)
    if unsampled is not None:
        rows = np.flatnonzero(np.asarray(unsampled.relevance) == -1)
        if len(rows):
            uq = np.array([id_text(x) for x in unsampled.query_id[rows].tolist()], dtype=object)
            ud = np.array([id_text(x) for x in unsampled.doc_id[rows].tolist()], dtype=object)
            fresh = ~np.isin(_keys(uq, ud), _keys(q, d))
            q = np.concatenate([q, uq[fresh]]).astype(object)
            d = np.concatenate([d, ud[fresh]]).astype(object)
            r = np.concatenate([r, np.full(int(fresh.sum()), -1, dtype=np.int64)])
            by = np.argsort(_keys(q, d), kind="stable")
            q, d, r = q[by], d[by], r[by]
    return Made(query_id=q, doc_id=d, relevance=r.astype(np.int64), judged=judged)


def _keys(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """'topic<TAB>docno' of each pair: sorted as :func:`combine` sorts pairs."""
    if not len(q):
        return np.array([], dtype=str)
    return np.char.add(np.char.add(q.astype(str), "\t"), d.astype(str))


def _majority(pair: np.ndarray, label: np.ndarray, n: int) -> np.ndarray:
    """Per pair, the most frequent label (ties: the lowest)."""
    labels, code = np.unique(label, return_inverse=True)
    counts = np.zeros((n, len(labels)), dtype=np.int64)
    np.add.at(counts, (pair, code), 1)
    return labels[np.argmax(counts, axis=1)]  # argmax takes the first (lowest) of a tie


# ---- the rules -------------------------------------------------------------------------------


def pool_label(labels: Labels) -> np.ndarray:
    """The desk's rule (see the module docstring): of the people who labelled a pair, the
    one whose first label came first; that person's latest label."""
    human = np.flatnonzero(labels.kind.astype(str) == "human")
    pick = human[np.lexsort((labels.since[human], labels.pair[human]))]
    pair = labels.pair[pick]
    head = np.r_[True, pair[1:] != pair[:-1]] if len(pick) else np.zeros(0, dtype=bool)
    value = np.full(labels.pairs, LEFT_OUT, dtype=np.int64)
    value[pair[head]] = labels.label[pick][head]
    return value


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
register(Rule(POOL_RULE, "the first person's latest label, as irbench assess keeps it; the "
              "default with --pool of a pool being judged", pool_label))
register(Rule("first", "the first --judge given that judged it", first))
register(Rule("human-first", "people's majority where any judged it, else the models'",
              human_first))
register(Rule("max", "", highest))
register(Rule("min", "", lowest))
