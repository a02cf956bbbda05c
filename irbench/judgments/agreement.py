"""How well two judges agree: on the keys both judged, Cohen's kappa (unweighted, linear and
quadratic weights over the grades in order), kappa at a binary relevance level, Krippendorff's
alpha (nominal, ordinal, interval; also for many judges with missing labels), the confusion
matrix per grade and agreement per topic.

What a key is depends on the kind of judgments (:meth:`irbench.judgments.JudgmentKind.labels`
gives a kind's :class:`LabelSet`): (topic, document) for qrels of documents; (topic, run,
sentence, reference) for support labels (NIST's citation judgments, -1 "not judged" left out);
(topic, sentence text, reference) for support labels shared across runs (``support_shared``);
(topic, run, nugget position) for nugget assignments, labelled 2 support, 1 partial, 0 not
(two sets whose common keys name different nugget texts are an error: they assigned different
nuggets).

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
from ..trec import Qrels, display, read_qrels, shown
from .nuggets import read_assignments
from .support import read_support

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")
ADHOC_KEYS = ("topic", "document")
SHOWN_CLASHES = 5  # keys named in a message at most


@dataclass(frozen=True, eq=False, kw_only=True)
class LabelSet:
    """One judge's labels, one row per key, each key once.

    ``keys`` names the key's columns (:data:`ADHOC_KEYS`, or ``("topic", "run", "sentence",
    "reference")`` ...); ``columns`` holds them, one array per name, the topic first (bytes);
    a column is bytes, integers or an object array of str. ``label``: int64 grades.
    ``item``: what each key labels, when the key alone does not say (a nugget's text): two
    sets whose common keys label different items are an error. ``line``: each row's line
    in ``path``."""

    name: str
    keys: tuple[str, ...]
    columns: tuple[np.ndarray, ...]
    label: np.ndarray
    item: np.ndarray | None = None
    line: np.ndarray | None = None
    path: str | None = None

    def __len__(self) -> int:
        return len(self.label)

    @property
    def compared(self) -> str:
        """What a key is, for messages: ``pairs`` for (topic, document), else the keys."""
        return "pairs" if self.keys == ADHOC_KEYS else f"({', '.join(self.keys)}) keys"

    def where(self, row: int) -> str:
        """``FILE:LINE`` of a row (the set's name when it has no file)."""
        place = self.path or f"<{self.name}>"
        return f"{place}:{int(self.line[row])}" if self.line is not None else place

    def key_text(self, row: int) -> str:
        """A row's key for a message: ``topic 't1', run 'r1', sentence 0, ...``."""
        parts = []
        for name, column in zip(self.keys, self.columns):
            value = column[row]
            text = shown(value) if isinstance(value, bytes) else (
                shown(str(value).encode("utf-8", "surrogatepass"))
                if isinstance(value, str) else str(value))
            parts.append(f"{name} '{text}'" if isinstance(value, (bytes, str)) else
                         f"{name} {text}")
        return ", ".join(parts)


def qrels_labels(qrels: Qrels) -> LabelSet:
    """Qrels as labels keyed (topic, document)."""
    return LabelSet(name=qrels.name, keys=ADHOC_KEYS, columns=(qrels.query_id, qrels.doc_id),
                    label=np.asarray(qrels.relevance, dtype=np.int64), line=qrels.line,
                    path=qrels.path)


def support_labels(source, name: str | None = None) -> LabelSet:
    """Support labels (NIST's JSONL or the flat TSV) keyed (topic, run, sentence,
    reference); rows labelled -1 (not judged) are left out."""
    labels = read_support(source, name=name)
    keep = np.flatnonzero(labels.label >= 0)
    return LabelSet(name=labels.name, keys=("topic", "run", "sentence", "reference"),
                    columns=(labels.topic_id[keep], labels.run_id[keep],
                             labels.sentence[keep], labels.reference[keep]),
                    label=labels.label[keep].astype(np.int64), line=labels.line[keep],
                    path=labels.path)


def shared_support_labels(source, name: str | None = None) -> LabelSet:
    """Support labels keyed (topic, sentence text, reference), as ``support_shared`` uses
    them: one row per key (two runs' rows of one key with two labels are an error naming
    their lines); rows without a text or labelled -1 are left out."""
    labels = read_support(source, name=name)
    keep = np.flatnonzero((labels.label >= 0) & np.array(
        [t is not None for t in labels.text.tolist()], dtype=bool))
    if len(labels) and not len(keep):
        raise EvaluationError(f"{labels.path or labels.name}: no judged citation with a "
                              "sentence text: support labels shared by text need the texts "
                              "(NIST's JSONL gives them; the flat TSV does not)")
    found = LabelSet(name=labels.name, keys=("topic", "text", "reference"),
                     columns=(labels.topic_id[keep], labels.text[keep],
                              labels.reference[keep]),
                     label=labels.label[keep].astype(np.int64), line=labels.line[keep],
                     path=labels.path)
    return _once_per_key(found)


def nugget_labels(source, name: str | None = None) -> LabelSet:
    """Nugget assignments keyed (topic, run, nugget position), labelled 2 support,
    1 partial_support, 0 not_support; the nugget's text is the item each key labels."""
    found = read_assignments(source, name=name)
    return LabelSet(name=found.name, keys=("topic", "run", "nugget"),
                    columns=(found.topic_id, found.run_id, found.nugget),
                    label=np.rint(found.score * 2).astype(np.int64), item=found.text,
                    line=found.line, path=found.path)


def as_labels(source) -> LabelSet:
    """``source`` as a :class:`LabelSet`: itself, or qrels (a path, in-memory data or a
    :class:`~irbench.trec.Qrels`) keyed (topic, document)."""
    if isinstance(source, LabelSet):
        return source
    return qrels_labels(source if isinstance(source, Qrels) else read_qrels(source))


def _key_records(sets: Sequence[LabelSet]) -> list[np.ndarray]:
    """Each set's keys as one int64 code per row, coded jointly over ``sets`` (equal keys,
    equal codes): each column's values coded, then folded into the key column by column and
    made dense again, so a code stays below the number of rows."""
    names = sets[0].keys
    for s in sets[1:]:
        if s.keys != names:
            raise EvaluationError(
                f"{sets[0].name} is keyed by ({', '.join(names)}) and {s.name} by "
                f"({', '.join(s.keys)}): their labels label different things")
    cuts = np.cumsum([len(s) for s in sets])[:-1]
    key = np.zeros(sum(len(s) for s in sets), dtype=np.int64)
    for i in range(len(names)):
        column = [s.columns[i] for s in sets]
        if any(c.dtype == object for c in column):  # strings, whole: interned, not sorted
            codes_of: dict = {}
            codes = np.fromiter((codes_of.setdefault(v, len(codes_of)) for c in column
                                 for v in c.tolist()), dtype=np.int64, count=len(key))
        else:
            codes = np.unique(np.concatenate(column), return_inverse=True)[1].reshape(-1)
        if len(key):
            folded = key * (int(codes.max()) + 1) + codes  # < rows squared: fits in int64
            key = np.unique(folded, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.split(key, cuts)


def _once_per_key(labels: LabelSet) -> LabelSet:
    """``labels`` with each key once (its first row); a key with two labels is an
    EvaluationError naming both lines."""
    (records,) = _key_records([labels])
    order = np.argsort(records, kind="stable")
    same = records[order][1:] == records[order][:-1]
    clash = np.flatnonzero(same & (labels.label[order][1:] != labels.label[order][:-1]))
    if len(clash):
        raise EvaluationError("\n".join(
            f"{labels.where(order[i + 1])}: {labels.key_text(order[i + 1])} judged "
            f"{int(labels.label[order[i + 1]])} here and {int(labels.label[order[i]])} at "
            f"{labels.where(order[i])}" for i in clash[:SHOWN_CLASHES])
            + (f"\n... and {len(clash) - SHOWN_CLASHES} more" if len(clash) > SHOWN_CLASHES
               else ""))
    keep = np.sort(order[np.concatenate(([True], ~same))])
    return LabelSet(name=labels.name, keys=labels.keys,
                    columns=tuple(c[keep] for c in labels.columns), label=labels.label[keep],
                    item=None if labels.item is None else labels.item[keep],
                    line=None if labels.line is None else labels.line[keep], path=labels.path)


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
    pairs: int                        # keys both judged ((topic, document) pairs for qrels)
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
    keys: tuple[str, ...] = ADHOC_KEYS  # what a key is

    @property
    def compared(self) -> str:
        """What was compared, for messages: ``pairs`` for (topic, document), else the keys."""
        return "pairs" if self.keys == ADHOC_KEYS else f"({', '.join(self.keys)}) keys"


def agreement(reference, other, relevance_level: int = 1) -> Agreement:
    """Agreement of ``other`` with ``reference`` on the keys both judged: two
    :class:`LabelSet` (as a judgment kind's :meth:`~irbench.judgments.JudgmentKind.labels`
    gives them) or two qrels (paths, in-memory data or :class:`~irbench.trec.Qrels`)."""
    ref, oth = as_labels(reference), as_labels(other)
    ka, kb = _key_records([ref, oth])
    _, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    if len(ia) == 0:
        what = "pair" if ref.keys == ADHOC_KEYS else "key"
        raise EvaluationError(f"{ref.name} and {oth.name} judged no ({', '.join(ref.keys)}) "
                              f"{what} in common: there is no agreement to measure")
    _same_items(ref, oth, ia, ib)
    a, b = ref.label[ia], oth.label[ib]
    grades, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    ca, cb = codes[:len(a)], codes[len(a):]
    k = len(grades)
    confusion = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k)
    data = np.stack([a, b]).astype(np.float64)
    return Agreement(
        reference=ref.name, other=oth.name, pairs=len(a),
        only_reference=len(ref) - len(a), only_other=len(oth) - len(a),
        grades=tuple(int(g) for g in grades), confusion=confusion,
        agreed=float(np.mean(a == b)),
        kappa=kappa_of_confusion(confusion), kappa_linear=kappa_of_confusion(confusion, "linear"),
        kappa_quadratic=kappa_of_confusion(confusion, "quadratic"),
        relevance_level=relevance_level,
        kappa_binary=cohen_kappa(a >= relevance_level, b >= relevance_level),
        alpha_nominal=krippendorff_alpha(data, "nominal"),
        alpha_ordinal=krippendorff_alpha(data, "ordinal"),
        alpha_interval=krippendorff_alpha(data, "interval"),
        per_topic=_per_topic(ref.columns[0][ia], ca, cb, k), keys=ref.keys)


def _same_items(a: LabelSet, b: LabelSet, ia: np.ndarray, ib: np.ndarray) -> None:
    """EvaluationError naming the common keys whose items differ (two nugget lists)."""
    if a.item is None or b.item is None:
        return
    differ = np.flatnonzero(a.item[ia] != b.item[ib])
    if len(differ):
        raise EvaluationError("\n".join(
            f"{a.where(ia[i])} and {b.where(ib[i])}: {a.key_text(ia[i])} is not the same "
            f"item in {a.name} and {b.name} (texts differ): their labels cannot be compared"
            for i in differ[:SHOWN_CLASHES])
            + (f"\n... and {len(differ) - SHOWN_CLASHES} more" if len(differ) > SHOWN_CLASHES
               else ""))


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
    """Krippendorff's alpha of several judges' labels (:class:`LabelSet`, or qrels: paths,
    in-memory data or Qrels) over every key at least two of them judged."""
    sets = [as_labels(s) for s in label_sets]
    keys = _key_records(sets)
    units = np.unique(np.concatenate(keys))
    data = np.full((len(sets), len(units)), np.nan)
    for j, (s, key) in enumerate(zip(sets, keys)):  # a loop over judges, not keys
        data[j, np.searchsorted(units, key)] = s.label
    return krippendorff_alpha(data, level)


__all__ = ["ADHOC_KEYS", "Agreement", "LabelSet", "TopicAgreement", "agreement", "alpha_of",
           "as_labels", "cohen_kappa", "kappa_of_confusion", "krippendorff_alpha",
           "nugget_labels", "qrels_labels", "shared_support_labels", "support_labels"]
