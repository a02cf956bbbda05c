"""Graded measures: nDCG, DCG, IDCG, nDCG@k, G, ndcg_rel, Rndcg, RBP and its residual.

Gains follow trec_eval 10.0's ``gain_init.c`` exactly. The gain of level L is L unless a
``L=g`` pair overrides it. The gain table lists the given pairs first, then every level
0..max(level of the topic) not given, and is sorted with glibc's merge sort using a
comparator that truncates the difference of two gains to an int, so gains less than 1 apart
compare equal and keep their listed order. The ideal ranking walks that table from the top,
skipping levels with no judged document, and stops at the first gain <= 0. All this depends on
a topic only through its highest level, so it is worked out once per distinct highest level and
applied to all topics by array operations.
"""

from __future__ import annotations

import numpy as np

from ..arrays import distinct, segment_cumsum
from ..errors import MeasureParameterError
from .base import Family, Param, format_value, register
from .extra import condense
from .graded import DISCOUNT, GAIN, LOG_BASE, dcg_general, ndcg_general
from .precision import safe_div


def parse_pairs(text: str) -> list[tuple[str, float]]:
    pairs = []
    for item in text.split(";") if text else []:
        key, sep, value = item.partition(":")
        if not sep:
            raise MeasureParameterError(f"malformed gain pair {item!r} (expected level:gain)")
        pairs.append((key, float(value)))
    return pairs


def _valid_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit()


def _merge_sort(items: list, key) -> list:
    """glibc msort: top-down merge sort, taking the left item when cmp(left, right) <= 0."""
    if len(items) <= 1:
        return list(items)
    n1 = len(items) // 2
    left, right = _merge_sort(items[:n1], key), _merge_sort(items[n1:], key)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if int(key(left[i]) - key(right[j])) <= 0:  # the C int cast truncates toward zero
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def gain_table(pairs: list[tuple[str, float]], num_levels: int) -> list[tuple[int, float]]:
    """The sorted (level, gain) list trec_eval builds for a topic with levels 0..num_levels-1."""
    table = [(int(k), g) for k, g in pairs if _valid_int(k)]
    given = {lvl for lvl, _ in table}
    table += [(lvl, float(lvl)) for lvl in range(num_levels) if lvl not in given]
    return _merge_sort(table, key=lambda item: item[1])


class GainSetup:
    """Per-topic ideal gain sequences and per-document gains for one gain parameterisation."""

    def __init__(self, r, pairs_text: str):
        pairs = parse_pairs(pairs_text)
        counts = r.level_counts
        width = counts.shape[1]
        nonzero = counts > 0
        # highest judged level + 1 per topic; 0 for a topic with no judged documents
        num_levels = np.where(nonzero.any(axis=1), width - np.argmax(nonzero[:, ::-1], axis=1), 0)
        T = r.num_topics
        lengths = np.zeros(T, dtype=np.int64)
        self.top_gain = np.zeros(T)
        self.stop_gain = np.zeros(T)
        self.gain_min = np.zeros(T)
        self.gain_max = np.zeros(T)
        pieces_gain: list[np.ndarray] = []
        pieces_topic: list[np.ndarray] = []
        level_gain = {int(k): g for k, g in pairs if _valid_int(k)}
        self.doc_gain = self._doc_gains(r.level, level_gain)
        for nl in distinct(num_levels):  # a loop over distinct highest levels, not topics
            topics = np.flatnonzero(num_levels == nl)
            table = gain_table(pairs, int(nl))
            gains = np.array([g for _, g in table])[::-1]
            levels = np.array([lvl for lvl, _ in table], dtype=np.int64)[::-1]
            self.gain_min[topics] = gains.min(initial=np.inf) if len(gains) else 0.0
            self.gain_max[topics] = gains.max(initial=-np.inf) if len(gains) else 0.0
            if len(gains) == 0:
                continue
            self.top_gain[topics] = gains[0]
            valid = (levels >= 0) & (levels < width)
            c = np.zeros((len(topics), len(levels)), dtype=np.int64)
            c[:, valid] = counts[np.ix_(topics, levels[valid])]
            if gains[0] <= 0:
                c[:] = 0
                self.stop_gain[topics] = gains[0]
                continue
            # stop at the first level that has documents and a gain <= 0
            stops = (c > 0) & (gains[None, :] <= 0)
            has_stop = stops.any(axis=1)
            first_stop = np.where(has_stop, np.argmax(stops, axis=1), len(levels))
            self.stop_gain[topics] = np.where(
                has_stop, gains[np.minimum(first_stop, len(levels) - 1)], 0.0
            )
            c[np.arange(len(levels))[None, :] >= first_stop[:, None]] = 0
            lengths[topics] = c.sum(axis=1)
            pieces_gain.append(np.repeat(np.tile(gains, len(topics)), c.ravel()))
            pieces_topic.append(np.repeat(np.repeat(topics, len(levels)), c.ravel()))
        self.ideal_lengths = lengths
        if pieces_gain:
            g = np.concatenate(pieces_gain)
            t = np.concatenate(pieces_topic)
            order = np.argsort(t, kind="stable")
            self.ideal_gain = g[order]
        else:
            self.ideal_gain = np.zeros(0)
        self.ideal_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self.ideal_topic = np.repeat(np.arange(T), lengths)
        self.ideal_pos = np.arange(len(self.ideal_gain)) - self.ideal_offsets[self.ideal_topic] + 1

    @staticmethod
    def _doc_gains(level: np.ndarray, level_gain: dict) -> np.ndarray:
        gains = np.where(level >= 0, level, 0).astype(np.float64)
        for lvl, g in level_gain.items():  # a loop over the given levels
            gains[level == lvl] = g
        return gains


def gains_for(r, pairs_text: str) -> GainSetup:
    return r.cached(("gains", pairs_text), lambda: GainSetup(r, pairs_text))


def _discount(rank: np.ndarray) -> np.ndarray:
    return np.log2(rank + 1.0)


def _rank_discount(r) -> np.ndarray:
    """log2(rank + 1) of every ranked document, computed once per run."""
    return r.cached(("gain", "discount"), lambda: _discount(r.rank))


def dcg_values(r, setup: GainSetup, k=None) -> np.ndarray:
    mask = setup.doc_gain != 0
    if k is not None:
        mask &= r.rank <= k
    return r.per_topic_sum(setup.doc_gain / _rank_discount(r), mask)


def idcg_values(r, setup: GainSetup, k=None) -> np.ndarray:
    weights = setup.ideal_gain / _discount(setup.ideal_pos)
    topic = setup.ideal_topic
    if k is not None:
        keep = setup.ideal_pos <= k
        weights, topic = weights[keep], topic[keep]
    return np.bincount(topic, weights=weights, minlength=r.num_topics)


def _is_trec(m) -> bool:
    return m.get("gain") == "linear" and m.get("discount") == "log2" and m.get("b") == 2


def _ndcg(r, m):
    """nDCG (Järvelin & Kekäläinen 2002) as trec_eval computes it: DCG over the whole ranking
    (gain/log2(rank+1)) over the ideal DCG of all judged documents; with @k both cut at k.

    ``gain=exp``, ``discount=jarvelin,b=B``: see ``graded.ndcg_general``; the gains (trec_eval's
    level:gain table) are transformed, the ideal ranking stays trec_eval's.
    ``nDCG(condensed)``: on the ranking with unjudged documents removed (Sakai 2007).
    """
    if m.get("variant") == "condensed":
        r = condense(r)
    setup = gains_for(r, m.get("gains"))
    k = m.get("cutoff")
    if not _is_trec(m):
        return ndcg_general(r, setup, k, m.get("gain"), m.get("discount"), m.get("b"))
    return safe_div(dcg_values(r, setup, k), idcg_values(r, setup, k))


def _dcg(r, m):
    """DCG = sum of gain/log2(rank+1) (trec_eval dcg); @k, gain=exp, discount=jarvelin as nDCG."""
    setup = gains_for(r, m.get("gains"))
    k = m.get("cutoff")
    if not _is_trec(m) or k is not None:
        return dcg_general(r, setup, k, m.get("gain"), m.get("discount"), m.get("b"))
    return dcg_values(r, setup)


def _idcg(r, m):
    return idcg_values(r, gains_for(r, m.get("gains")))


def _ideal_at_docs(r, setup: GainSetup):
    """Ideal gain at each retrieved rank (0 beyond the ideal's length) and its running DCG."""
    inside = r.rank <= setup.ideal_lengths[r.topic_index]
    idx = np.where(inside, setup.ideal_offsets[r.topic_index] + r.rank - 1, 0)
    g = np.where(inside, setup.ideal_gain[idx] if len(setup.ideal_gain) else 0.0, 0.0)
    return g


def _ndcg_rel(r, m):
    """trec_eval's experimental ndcg_rel: nDCG averaged over the relevant documents."""
    setup = gains_for(r, m.get("gains"))
    gain = setup.doc_gain
    disc = _rank_discount(r)
    dcg_run = segment_cumsum(np.where(gain != 0, gain / disc, 0.0), r.offsets)
    ideal_g = _ideal_at_docs(r, setup)
    idcg_run = segment_cumsum(np.where(ideal_g > 0, ideal_g / disc, 0.0), r.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dcg_run / idcg_run
    positive = gain > 0
    total = r.per_topic_sum(ratio, positive)
    num_rel_ret = r.per_topic_count(positive)
    num_rel = setup.ideal_lengths
    dcg_final = dcg_values(r, setup)
    idcg_final = idcg_values(r, setup)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + (num_rel - num_rel_ret) * dcg_final / idcg_final
        value = np.where(total > 0, total / num_rel, 0.0)
    return value


def _rndcg(r, m):
    """trec_eval's experimental Rndcg: nDCG averaged over the ranks where the ideal gain
    changes (and the end of the ranking). 0 when the topic has no relevant document."""
    setup = gains_for(r, m.get("gains"))
    T = r.num_topics
    L = setup.ideal_lengths
    N = r.num_ret
    # ideal gain g_i at steps i = 0..L (g_L is the stopping gain), previous gain g_{i-1}
    steps_topic = np.repeat(np.arange(T), L + 1)
    starts = np.concatenate(([0], np.cumsum(L + 1)))[:-1]
    step = np.arange(len(steps_topic)) - np.repeat(starts, L + 1)
    in_ideal = step < L[steps_topic]
    gi = np.where(in_ideal, 0.0, setup.stop_gain[steps_topic])
    if len(setup.ideal_gain):
        gi[in_ideal] = setup.ideal_gain
    prev = np.empty_like(gi)
    prev[:] = np.nan
    first_step = step == 0
    prev[first_step] = setup.top_gain[steps_topic[first_step]]
    prev[~first_step] = gi[np.flatnonzero(~first_step) - 1]
    # ideal DCG before step i, run DCG over ranks < min(i, N)
    ideal_disc = np.where(in_ideal, gi / np.log2(step + 2.0), 0.0)
    idcg_before = segment_cumsum(ideal_disc, np.concatenate(([0], np.cumsum(L + 1)))) - ideal_disc
    doc_dcg = np.where(setup.doc_gain != 0, setup.doc_gain / _rank_discount(r), 0.0)
    dcg_cum = segment_cumsum(doc_dcg, r.offsets)
    upto = np.minimum(step, N[steps_topic])  # number of run documents before the step
    idx = r.offsets[steps_topic] + upto - 1
    dcg_before = np.where(upto > 0, dcg_cum[np.maximum(idx, 0)] if len(dcg_cum) else 0.0, 0.0)
    event = (gi != prev) & (idcg_before > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(event, dcg_before / np.where(idcg_before > 0, idcg_before, 1.0), 0.0)
    total = np.bincount(steps_topic, weights=ratio, minlength=T)
    count = np.bincount(steps_topic, weights=event, minlength=T)
    # the end of a ranking that goes past the ideal's last step
    idcg_final = idcg_values(r, setup)
    extra = (N > L + 1) & (idcg_final > 0)
    dcg_final = dcg_values(r, setup)
    total = total + np.where(extra, dcg_final / np.where(idcg_final > 0, idcg_final, 1.0), 0.0)
    count = count + extra
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total / count
    return np.where(r.num_rel == 0, 0.0, value)


def _g(r, m):
    """trec_eval's experimental G: gain discounted by the cost so far against the ideal."""
    setup = gains_for(r, m.get("gains"))
    gain = setup.doc_gain
    ideal_g = _ideal_at_docs(r, setup)
    cost = np.maximum(ideal_g, 1.0)
    sum_cost = segment_cumsum(cost, r.offsets)
    sum_results = segment_cumsum(gain, r.offsets)
    contrib = gain / np.log2(2.0 + sum_cost - sum_results)
    results_g = r.per_topic_sum(contrib, gain != 0)
    sum_ideal = np.bincount(setup.ideal_topic, weights=setup.ideal_gain, minlength=r.num_topics)
    return safe_div(results_g, sum_ideal)


def _rbp_gains(r, m) -> np.ndarray:
    setup = gains_for(r, m.get("gains"))
    gain = setup.doc_gain
    lo = np.minimum(setup.gain_min, 0.0)[r.topic_index]
    hi = np.maximum(setup.gain_max, 0.0)[r.topic_index]
    outside = (setup.gain_min < 0) | (setup.gain_max > 1)
    scale = outside[r.topic_index]
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = (gain - lo) / (hi - lo)
    return np.where(scale, normed, gain)


def _rbp(r, m):
    """Rank-biased precision (Moffat & Zobel 2008): (1-p) * sum gain_i p^(i-1)."""
    p = m.get("p")
    gain = _rbp_gains(r, m)
    weight = np.power(p, r.rank - 1.0)
    return (1 - p) * r.per_topic_sum(gain * weight)


def _rbp_resid(r, m):
    """RBP residual: p^N + (1-p) * sum over unjudged retrieved of p^(i-1); 0 if none."""
    p = m.get("p")
    unjudged = r.level < 0
    weight = np.power(p, r.rank - 1.0)
    has = r.per_topic_count(unjudged) > 0
    value = np.power(p, r.num_ret.astype(np.float64)) + (1 - p) * r.per_topic_sum(weight, unjudged)
    return np.where(has, value, 0.0)


_GAINS = Param("gains", str, "", "level:gain pairs separated by ';' (trec_eval's L=g,...)")


def _gain_label(name):
    def canonical(m):
        parts = []
        if m.get("gains"):
            parts.append(f"gains={m.get('gains')}")
        if "cutoff" in dict(m.params) and m.get("cutoff") is not None:
            cutoff = m.get("cutoff")
            return f"{name}({','.join(parts)})@{cutoff}" if parts else f"{name}@{cutoff}"
        return f"{name}({','.join(parts)})" if parts else name

    return canonical


def _rbp_canonical(m):
    """RBP(p=...) always: the bare name once meant trec_eval's p = 0.9 and now means
    ir_measures' 0.8, so a stored result's name never leaves p to a default."""
    parts = [f"p={format_value(m.get('p'))}"]
    if m.get("gains"):
        parts.append(f"gains={m.get('gains')}")
    return f"RBP({','.join(parts)})"


def _rbp_resid_canonical(m):
    parts = [] if m.get("p") == 0.9 else [f"p={format_value(m.get('p'))}"]
    if m.get("gains"):
        parts.append(f"gains={m.get('gains')}")
    return f"rbp_resid({','.join(parts)})" if parts else "rbp_resid"


def _missing_rbp_resid(m):
    return 0.0 if m.get("p") == 0.9 and not m.get("gains") else None


register(Family("nDCG", "normalised DCG, linear gains, log2(rank+1) discount (ndcg, ndcg_cut_k)",
                _ndcg, (Param("variant", str, "", "condensed: unjudged documents removed first",
                              choices=("", "condensed"), positional=True),
                        _GAINS, GAIN, DISCOUNT, LOG_BASE,
                        Param("cutoff", int, None, "rank cutoff k")),
                cutoff="cutoff",
                citation="Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR "
                         "techniques, TOIS 2002"))
register(Family("DCG", "discounted cumulated gain (trec_eval dcg)", _dcg,
                (_GAINS, GAIN, DISCOUNT, LOG_BASE, Param("cutoff", int, None, "rank cutoff k")),
                cutoff="cutoff"))
register(Family("IDCG", "ideal DCG of all judged documents (trec_eval ideal_dcg)", _idcg,
                (_GAINS,), canonical_fn=_gain_label("IDCG")))
register(Family("ndcg_rel", "trec_eval's ndcg_rel: nDCG averaged over relevant documents",
                _ndcg_rel, (_GAINS,), canonical_fn=_gain_label("ndcg_rel")))
register(Family("Rndcg", "trec_eval's Rndcg: nDCG averaged where the ideal gain changes",
                _rndcg, (_GAINS,), canonical_fn=_gain_label("Rndcg")))
register(Family("G", "trec_eval's G measure", _g, (_GAINS,), canonical_fn=_gain_label("G")))
register(Family("RBP", "rank-biased precision, persistence p (default 0.8 as ir_measures'; "
                "trec_eval's rbp: 0.9)", _rbp,
                (Param("p", float, 0.8, "persistence"), _GAINS), canonical_fn=_rbp_canonical,
                citation="Moffat & Zobel, Rank-biased precision for measurement of retrieval "
                         "effectiveness, TOIS 2008"))
register(Family("rbp_resid", "RBP residual from unjudged documents", _rbp_resid,
                (Param("p", float, 0.9, "persistence"), _GAINS), canonical_fn=_rbp_resid_canonical,
                missing=_missing_rbp_resid, lower_is_better=True))
