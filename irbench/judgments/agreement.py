"""How well two judges agree: on the (topic, document) pairs both judged, Cohen's kappa
(unweighted, linear and quadratic weights over the grades in order), kappa at a binary
relevance level, Krippendorff's alpha (nominal, ordinal, interval; also for many judges with
missing labels), the confusion matrix per grade and agreement per topic.

Kappa is computed as scikit-learn's ``cohen_kappa_score`` defines it (the weights are over
the positions of the grades that occur, sorted), alpha as Krippendorff (2011) does from the
coincidence matrix; tests check both against those packages. Everything works on whole
columns: the pairs are matched by sorting, the per-topic values come from one count array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import EvaluationError
from ..trec import Qrels, display, read_qrels

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True, kw_only=True)
class TopicAgreement:
    """Agreement on one topic's pairs: ``agreed`` is the fraction with the same grade."""

    topic: str
    pairs: int
    agreed: float
    kappa: float


@dataclass(frozen=True, kw_only=True)
class Agreement:
    """Two judges on the pairs both judged (see the module docstring); NaN where a value is
    undefined (kappa when every label is the same grade, alpha without variation)."""

    reference: str
    other: str
    pairs: int                        # (topic, document) pairs both judged
    only_reference: int               # judged by the reference alone
    only_other: int
    grades: tuple[int, ...]           # the grades that occur, sorted
    confusion: np.ndarray             # [reference grade, other grade] -> pairs
    agreed: float                     # fraction of pairs with the same grade
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    relevance_level: int
    kappa_binary: float               # kappa of grade >= relevance_level
    alpha_nominal: float
    alpha_ordinal: float
    alpha_interval: float
    per_topic: tuple[TopicAgreement, ...]


def agreement(reference, other, relevance_level: int = 1) -> Agreement:
    """Agreement of ``other`` with ``reference`` (qrels: paths, in-memory data or
    :class:`~irbench.trec.Qrels`), on the pairs both judged."""
    ref = reference if isinstance(reference, Qrels) else read_qrels(reference)
    oth = other if isinstance(other, Qrels) else read_qrels(other)
    ia, ib = _matched(ref, oth)
    if len(ia) == 0:
        raise EvaluationError(f"{ref.name} and {oth.name} judged no (topic, document) pair "
                              "in common: there is no agreement to measure")
    a, b = ref.relevance[ia], oth.relevance[ib]
    grades, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    ca, cb = codes[:len(a)], codes[len(a):]
    k = len(grades)
    confusion = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k)
    data = np.stack([a, b]).astype(np.float64)
    return Agreement(
        reference=ref.name, other=oth.name, pairs=len(a),
        only_reference=len(ref.relevance) - len(a), only_other=len(oth.relevance) - len(a),
        grades=tuple(int(g) for g in grades), confusion=confusion,
        agreed=float(np.mean(a == b)),
        kappa=kappa_of_confusion(confusion), kappa_linear=kappa_of_confusion(confusion, "linear"),
        kappa_quadratic=kappa_of_confusion(confusion, "quadratic"),
        relevance_level=relevance_level,
        kappa_binary=cohen_kappa(a >= relevance_level, b >= relevance_level),
        alpha_nominal=krippendorff_alpha(data, "nominal"),
        alpha_ordinal=krippendorff_alpha(data, "ordinal"),
        alpha_interval=krippendorff_alpha(data, "interval"),
        per_topic=_per_topic(ref.query_id[ia], ca, cb, k))


def _matched(a: Qrels, b: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``a`` and of ``b`` with the same (topic, document), in key order."""
    ka, kb = _keys(a, b), _keys(b, a)
    _, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return ia, ib


def _keys(q: Qrels, other: Qrels) -> np.ndarray:
    """(topic, document) of every row as one sortable record, as wide as both qrels' ids."""
    tw = max(q.query_id.dtype.itemsize, other.query_id.dtype.itemsize)
    dw = max(q.doc_id.dtype.itemsize, other.doc_id.dtype.itemsize)
    return _records(q, tw, dw)


def _records(q: Qrels, tw: int, dw: int) -> np.ndarray:
    keys = np.empty(len(q.query_id), dtype=[("q", f"S{tw}"), ("d", f"S{dw}")])
    keys["q"], keys["d"] = q.query_id, q.doc_id
    return keys


def cohen_kappa(a: Sequence | np.ndarray, b: Sequence | np.ndarray,
                weights: str | None = None) -> float:
    """Cohen's kappa of two label columns (``weights``: None, ``linear`` or ``quadratic``,
    over the positions of the sorted labels that occur)."""
    a, b = np.asarray(a), np.asarray(b)
    labels, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = len(labels)
    confusion = np.bincount(codes[:len(a)] * k + codes[len(a):], minlength=k * k)
    return kappa_of_confusion(confusion.reshape(k, k), weights)


def kappa_of_confusion(confusion: np.ndarray, weights: str | None = None) -> float:
    """Kappa of a confusion matrix (rows: the first judge's labels, in order)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")
    confusion = np.asarray(confusion, dtype=np.float64)
    k = confusion.shape[0]
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    i, j = np.indices((k, k))
    w = ((i != j).astype(np.float64) if weights is None else
         np.abs(i - j).astype(np.float64) if weights == "linear" else
         ((i - j) ** 2).astype(np.float64))
    disagreement = float(np.sum(w * expected))
    if disagreement == 0:
        return float("nan")  # every label the same grade: chance agreement is certain
    return 1.0 - float(np.sum(w * confusion)) / disagreement


def krippendorff_alpha(data: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha of ``data``: judges x units, a label or NaN (missing); units with
    fewer than two labels are left out. ``level``: nominal, ordinal or interval."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    data = np.asarray(data, dtype=np.float64)
    present = ~np.isnan(data)
    values = np.unique(data[present])
    v = len(values)
    judged = np.where(present, np.searchsorted(values, np.where(present, data, values[0])), -1)
    units = np.broadcast_to(np.arange(data.shape[1]), data.shape)[present]
    counts = np.bincount(units * v + judged[present], minlength=data.shape[1] * v)
    counts = counts.reshape(data.shape[1], v).astype(np.float64)  # units x values
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    if len(m) == 0 or v < 2:
        return float("nan")
    # coincidences: sum over units of (n_uc n_uk - [c == k] n_uc) / (m_u - 1)
    coincidence = np.einsum("uc,uk->ck", counts / (m - 1)[:, None], counts)
    coincidence -= np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = _distance(level, values, n_c)
    expected = float(np.sum(np.outer(n_c, n_c) * delta))
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * float(np.sum(coincidence * delta)) / expected)


def _distance(level: str, values: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    """Squared differences between values (the metric of the level of measurement)."""
    c, k = np.indices((len(values), len(values)))
    if level == "nominal":
        return (c != k).astype(np.float64)
    if level == "interval":
        return (values[c] - values[k]) ** 2
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])  # ordinal: the marginals between
    low, high = np.minimum(c, k), np.maximum(c, k)
    between = cumulative[high + 1] - cumulative[low]
    return (between - (n_c[c] + n_c[k]) / 2) ** 2


def _per_topic(topics: np.ndarray, ca: np.ndarray, cb: np.ndarray,
               k: int) -> tuple[TopicAgreement, ...]:
    """Agreement and kappa per topic, from one count array (topics x grades x grades)."""
    names, t = np.unique(topics, return_inverse=True)
    counts = np.bincount((t * k + ca) * k + cb, minlength=len(names) * k * k)
    counts = counts.reshape(len(names), k, k).astype(np.float64)
    pairs = counts.sum(axis=(1, 2))
    observed = np.trace(counts, axis1=1, axis2=2) / pairs
    chance = np.einsum("ti,ti->t", counts.sum(axis=2), counts.sum(axis=1)) / pairs ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)
    return tuple(TopicAgreement(topic=display(q), pairs=int(p), agreed=float(o), kappa=float(x))
                 for q, p, o, x in zip(names, pairs, observed, kappa))


def alpha_of(label_sets: Sequence, level: str = "interval") -> float:
    """Krippendorff's alpha of several judges' qrels (paths, in-memory data or Qrels) over
    every (topic, document) pair at least two of them judged."""
    sets = [q if isinstance(q, Qrels) else read_qrels(q) for q in label_sets]
    tw = max(q.query_id.dtype.itemsize for q in sets)
    dw = max(q.doc_id.dtype.itemsize for q in sets)
    keys = [_records(q, tw, dw) for q in sets]
    units = np.unique(np.concatenate(keys))
    data = np.full((len(sets), len(units)), np.nan)
    for j, (q, key) in enumerate(zip(sets, keys)):  # a loop over judges, not pairs
        data[j, np.searchsorted(units, key)] = q.relevance
    return krippendorff_alpha(data, level)


__all__ = ["Agreement", "TopicAgreement", "agreement", "alpha_of", "cohen_kappa",
           "kappa_of_confusion", "krippendorff_alpha"]
