"""Measures of judgment coverage: trec_eval's ``unj_k`` and ``relstring``."""

from __future__ import annotations

import numpy as np

from ..ranked import NOT_IN_QRELS, UNJUDGED
from .base import Family, Param, register
from .precision import CUTOFF, check_cutoff


def _unj(r, m):
    """Fraction of the top k without a judgment (-1 or -2); ranks beyond N count as judged."""
    k = check_cutoff(m)
    return r.per_topic_count((r.level < 0) & (r.rank <= k)) / k


_CODES = np.frombuffer(b"0123456789", dtype=np.uint8)


def _relstring(r, m):
    """The first n relevance values of the ranking: digit = level, '>' above 9,
    '-' not in the qrels, '.' a negative judgment (trec_eval ``relstring``)."""
    n = m.get("n")
    keep = r.rank <= n
    level = r.level[keep]
    chars = np.where(level > 9, ord(">"), _CODES[np.clip(level, 0, 9)])
    chars = np.where(level == NOT_IN_QRELS, ord("-"), chars)
    chars = np.where(level == UNJUDGED, ord("."), chars).astype(np.uint8)
    text = chars.tobytes().decode("ascii")
    counts = np.minimum(r.num_ret, n)
    ends = np.cumsum(counts)
    starts = ends - counts
    # one string per topic: a loop over topics only to cut the output text
    return np.array([text[s:e] for s, e in zip(starts.tolist(), ends.tolist())], dtype=object)


def _missing_relstring(m):
    return "" if m.get("n") == 10 else None


register(Family("unj", "fraction of the top k that is unjudged (trec_eval unj_k)", _unj,
                (CUTOFF,), cutoff="cutoff", missing=lambda m: 0.0,
                canonical_fn=lambda m: f"unj_{m.get('cutoff')}", lower_is_better=True))
register(Family("relstring", "the relevance values of the top n documents, as text", _relstring,
                (Param("n", int, 10, "number of ranks shown"),), aggregate="none", kind="str",
                canonical_fn=lambda m: ("relstring" if m.get("n") == 10
                                        else f"relstring_{m.get('n')}"),
                missing=_missing_relstring))
