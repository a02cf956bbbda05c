"""A qrels set from judgments of several judges, by a named rule.

Each judge's latest label of a (topic, document) is its label; then, per (topic, document):

* ``majority``: the label most judges gave; a tie goes to the lower label (a document is
  not called more relevant than most judges found it);
* ``first``: the label of the first judge in the order given who judged it (a named judge
  first, the others filling in);
* ``human-first``: the majority of the human judges where any judged it, else of the model
  judges (people over models; models fill the holes);
* ``max`` / ``min``: the highest / lowest label any judge gave (lenient / strict).

Everything works on whole columns (numpy); the result is sorted by topic, then document.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RULES = ("majority", "first", "human-first", "max", "min")


def combine(columns: dict[str, np.ndarray], rule: str, order: Sequence[str] = ()
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query_id, doc_id, relevance) by ``rule`` from judgment ``columns`` (query_id, doc_id,
    relevance, judge, judge_kind, position: as :meth:`Store.judgment_columns` gives them);
    ``order``: the judges in order of precedence for ``first``."""
    if rule not in RULES:
        raise ValueError(f"no rule {rule!r} ({', '.join(RULES)})")
    q, d, r, judge, kind = (np.asarray(columns[k]) for k in (
        "query_id", "doc_id", "relevance", "judge", "judge_kind"))
    if not len(q):
        return q, d, r.astype(np.int64)
    pair_keys = np.char.add(np.char.add(q.astype(str), "\t"), d.astype(str))  # ids hold no blanks
    pairs, pair = np.unique(pair_keys, return_inverse=True)
    judges, who = np.unique(judge.astype(str), return_inverse=True)
    latest = _latest(pair, who, np.asarray(columns["position"]))
    pair, who, r, kind = pair[latest], who[latest], r[latest].astype(np.int64), kind[latest]
    if rule == "max" or rule == "min":
        value = np.full(len(pairs), np.iinfo(np.int64).min if rule == "max" else
                        np.iinfo(np.int64).max)
        (np.maximum if rule == "max" else np.minimum).at(value, pair, r)
    elif rule == "first":
        rank = {name: i for i, name in enumerate(order)}
        precedence = np.array([rank.get(j, len(rank)) for j in judges])[who]
        pick = np.lexsort((precedence, pair))
        first = np.r_[True, pair[pick][1:] != pair[pick][:-1]]
        value = np.empty(len(pairs), dtype=np.int64)
        value[pair[pick][first]] = r[pick][first]
    elif rule == "human-first":
        human = kind.astype(str) == "human"
        has_human = np.zeros(len(pairs), dtype=bool)
        has_human[pair[human]] = True
        use = human | ~has_human[pair]
        value = _majority(pair[use], r[use], len(pairs))
    else:
        value = _majority(pair, r, len(pairs))
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
