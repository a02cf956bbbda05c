"""Preference judgments: trec_eval's ``-R prefs`` and ``-R qrels_prefs`` and its 14 ``prefs_*``
measures (``form_prefs_counts.c`` and ``m_prefs_*.c`` of trec_eval 10.0).

A prefs file has ``qid jg jsg docno rel_level`` lines: within a judgment sub-group (JSG) every
document is preferred to those with a lower ``rel_level``; a judgment group (JG, one user's
information need) joins its JSGs, transitively; ``rel_level`` 0 means non-relevant. A
``qrels_prefs`` file is a qrels file read that way: the ``iter`` column is the JG and every line
is in JSG ``0``.

For one run and topic, the judged documents are numbered: those the run retrieves (after
``-M``, ranked by score with ties broken by docno ascending, as trec_eval's preference code
does) 0.. in rank order, the others after them in docno order. Each JG's preferences A > B are
then counted as fulfilled or not, both retrieved (``_ret``), one retrieved (``_imp``), or
neither retrieved (counted possible, never fulfilled). A JG with one JSG is a list of
equivalence classes by ``rel_level``; a JG with several JSGs is a preference matrix closed
under transitivity. The measures combine the counts per topic:

- ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``: counts;
- ``prefs_simp`` (all fulfilled / all possible), ``_ret``, ``_imp``;
- ``prefs_pair``: the mean over document pairs of the share of preferences (over JGs) the pair
  fulfils, ``_ret``, ``_imp``;
- ``prefs_avgjg``: fulfilled / possible per JG, averaged over JGs, ``_ret``, ``_imp``;
- ``prefs_avgjg_Rnonrel`` and ``_ret``: as ``prefs_avgjg`` with the number of non-relevant
  documents of a JG taken as its number of relevant ones (trec_eval's recalculation kept as
  it is, including its counting of the kept non-relevant documents against themselves).

The per-topic work is ragged (each topic has its own JGs, equivalence classes and matrices), so
topics are taken one at a time with numpy inside; preference campaigns are small.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..errors import EvaluationError, FormatError
from ..measures.prefs import PREFS_KEY, PREFS_MEASURES
from ..ranked import EvalOptions, PreparedQrels, Ranked, rank_run
from ..trec import (
    FLOAT_RE,
    MAX_ID_BYTES,
    Run,
    display,
    longest_token,
    read_source,
    regular_lines,
    shown,
    too_long,
)
from .diversity import DiversityQrels, collapse

_MAX_PROBLEMS = 20


@dataclass(frozen=True, eq=False, kw_only=True)
class Prefs:
    """Preference lines as columns in file order (``rel_level`` float64)."""

    name: str
    query_id: np.ndarray
    jg: np.ndarray
    jsg: np.ndarray
    doc_id: np.ndarray
    rel_level: np.ndarray
    line: np.ndarray
    path: str | None = None

    def __len__(self) -> int:
        return len(self.rel_level)


def read_prefs(source, name: str | None = None) -> Prefs:
    """Read ``qid jg jsg docno rel_level`` lines (``#`` comments and blank lines skipped)."""
    return _read(source, name, qrels_form=False)


def read_qrels_prefs(source, name: str | None = None) -> Prefs:
    """Read a qrels file (``qid jg docno rel``) as preferences: one JSG ``0`` per JG."""
    return _read(source, name, qrels_form=True)


def _read(source, name: str | None, qrels_form: bool) -> Prefs:
    path, data = read_source(source)
    width = 4 if qrels_form else 5
    label = name or os.path.basename(path)
    columns = _regular_columns(data, width) if longest_token(data) <= MAX_ID_BYTES else None
    if columns is not None:
        if qrels_form:
            columns = columns[:2] + [np.full(len(columns[0]), b"0")] + columns[2:]
        query_id, jg, jsg, doc_id, rel_level, line = columns
        return Prefs(name=label, query_id=query_id, jg=jg, jsg=jsg, doc_id=doc_id,
                     rel_level=rel_level, line=line, path=path)
    shape = "qid jg docno rel_level" if qrels_form else "qid jg jsg docno rel_level"
    rows: list[list] = []
    lines: list[int] = []
    problems: list[str] = []
    more = 0
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        reason = None
        names = ("topic id", "judgment group", "docno") if qrels_form else \
            ("topic id", "judgment group", "judgment subgroup", "docno")
        if len(fields) != width:
            reason = f"expected {width} columns ({shape}), got {len(fields)}"
        elif too_long(zip(names, fields)) is not None:
            reason = too_long(zip(names, fields))
        else:
            level = float(fields[-1]) if FLOAT_RE.match(fields[-1]) else math.nan
            if not math.isfinite(level):  # float() would take '1_0' and ' inf'
                reason = f"rel_level '{shown(fields[-1])}' is not a finite number"
        if reason is not None:
            if len(problems) < _MAX_PROBLEMS:
                problems.append(f"{path}:{line_no}: {reason}")
            else:
                more += 1
            continue
        if qrels_form:
            fields = [fields[0], fields[1], b"0", fields[2], fields[3]]
        rows.append(fields[:4] + [level])
        lines.append(line_no)
    if problems or more:
        raise FormatError(problems, more)
    if not rows:
        raise FormatError([f"{path}:1: no preference lines"])
    columns = list(zip(*rows))
    query_id, jg, jsg, doc_id = (np.array(c) for c in columns[:4])
    return Prefs(name=label, query_id=query_id, jg=jg, jsg=jsg, doc_id=doc_id,
                 rel_level=np.array(columns[4], dtype=np.float64),
                 line=np.array(lines, dtype=np.int64), path=path)


def _regular_columns(data: bytes, width: int) -> list | None:
    """The columns (strings..., rel_level, line) when every non-blank line has ``width``
    fields, none is a comment and every rel_level is a finite number; None otherwise (the
    line-by-line path then says what is wrong)."""
    if b"_" in data:  # numpy reads '1_0' as 10 (trec_eval's atof as 1): line by line
        return None
    lines = regular_lines(data, width, hash_anywhere=True)
    if lines is None or len(lines) == 0:
        return None
    tokens = data.split()
    try:
        level = np.array(tokens[width - 1::width]).astype(np.float64)
    except ValueError:
        return None
    if not np.isfinite(level).all():
        return None
    return ([np.array(tokens[i::width]) for i in range(width - 1)]
            + [level, lines.astype(np.int64) + 1])


class PreparedPrefs:
    """Preferences prepared for many runs: the judged documents per topic (for the topics,
    ``num_q``, ``runid`` and a campaign's counts) and the preference lines grouped by topic."""

    def __init__(self, prefs: Prefs):
        self.prefs = prefs
        # each judged document once, 1 when some judgment gives it a level > 0, else 0
        self.judged = PreparedQrels(collapse(DiversityQrels(
            name=prefs.name, query_id=prefs.query_id, subtopic=prefs.jg, doc_id=prefs.doc_id,
            relevance=(prefs.rel_level > 0).astype(np.int64), line=prefs.line,
            path=prefs.path)))
        topic_order = np.argsort(prefs.query_id, kind="stable")
        qids = prefs.query_id[topic_order]
        starts = np.flatnonzero(np.concatenate(([True], qids[1:] != qids[:-1])))
        self.lines = {qids[s]: topic_order[s:e]
                      for s, e in zip(starts, np.append(starts[1:], len(qids)))}

    @property
    def topics(self) -> np.ndarray:
        return self.judged.topics

    @property
    def adhoc(self) -> PreparedQrels:
        """Each judged document once, relevant (1) when some judgment gives it a level > 0."""
        return self.judged

    @property
    def qrels(self) -> Prefs:
        return self.prefs

    def rank(self, run: Run, options: EvalOptions = EvalOptions()) -> Ranked:
        ranked = rank_run(run, self.judged, options)  # topics, -c, duplicates as everywhere
        retrieved = _retrieved(run, ranked.topics, options.max_docs)
        values = np.zeros((len(PREFS_MEASURES), ranked.num_topics))
        for t, topic in enumerate(ranked.topics):  # ragged per-topic structure, see above
            values[:, t] = _topic_values(self.prefs, self.lines[topic], retrieved[t])
        table = dict(zip(PREFS_MEASURES, values))
        ranked.cached(PREFS_KEY, lambda: table)
        return ranked


def _retrieved(run: Run, topics: np.ndarray, max_docs: int | None) -> list[np.ndarray]:
    """Each topic's retrieved docnos by score descending, ties by docno ascending (trec_eval's
    order for preferences), at most ``max_docs``."""
    order = np.lexsort((run.doc_id, -run.score, run.query_id))
    q, d = run.query_id[order], run.doc_id[order]
    lo = np.searchsorted(q, topics, side="left")
    hi = np.searchsorted(q, topics, side="right")
    if max_docs is not None:
        hi = np.minimum(hi, lo + max_docs)
    return [d[a:b] for a, b in zip(lo, hi)]


def _topic_values(prefs: Prefs, rows: np.ndarray, retrieved: np.ndarray) -> list[float]:
    """The 14 measures (PREFS_MEASURES order) of one topic."""
    docs = prefs.doc_id[rows]
    judged = np.unique(docs)
    in_judged = np.isin(retrieved, judged)
    ret = retrieved[in_judged]  # judged and retrieved, in rank order
    njr = len(ret)
    unret = np.setdiff1d(judged, ret)  # docno order
    numbered = np.concatenate((ret, unret))
    nj = len(numbered)
    by_docno = np.argsort(numbered)
    rank = by_docno[np.searchsorted(numbered[by_docno], docs)].astype(np.int64)
    counts = np.zeros((nj, nj), dtype=np.int32)  # preferences per ordered pair, over JGs
    groups = []
    jg = prefs.jg[rows]
    for label in np.unique(jg):  # a topic's judgment groups: a few users
        mine = np.flatnonzero(jg == label)
        jsg, level, r = prefs.jsg[rows][mine], prefs.rel_level[rows][mine], rank[mine]
        if len(np.unique(jsg)) > 1:
            groups.append(_matrix_group(jsg, level, r, nj, njr, counts, prefs, rows[mine]))
        else:
            groups.append(_class_group(level, r, njr, counts, prefs, rows[mine]))
    return _measures(groups, counts, njr, nj)


@dataclass
class _Group:
    """Counts of one JG; ``poss_*`` include the fulfilled ones, as trec_eval's do."""

    ful_ret: int
    poss_ret: int
    ful_imp: int
    poss_imp: int
    notoccur: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    rnonrel: tuple[int, int]  # (fulfilled, possible) recalculated with R non-relevant docs
    rnonrel_ret: tuple[int, int]


def _areas(a: np.ndarray, njr: int, keep: np.ndarray | None = None) -> tuple[int, ...]:
    """Preferences of matrix ``a`` (a[i, j]: doc i preferred to doc j) by area: (fulfilled
    both retrieved, not fulfilled both retrieved, fulfilled implied, not fulfilled implied,
    neither retrieved). ``keep`` masks rows and columns out."""
    if keep is not None:
        a = a & keep[:, None] & keep[None, :]
    top, bottom = a[:njr], a[njr:]
    both = top[:, :njr]
    upper = np.triu(both, 1).sum()
    lower = np.tril(both, -1).sum()
    return (int(upper), int(lower), int(top[:, njr:].sum()), int(bottom[:, :njr].sum()),
            int(bottom[:, njr:].sum()))


def _matrix_group(jsg, level, r, nj, njr, counts, prefs, lines) -> _Group:
    """A JG with several JSGs: the preference matrix, closed under transitivity."""
    zero = np.bincount(r, weights=level == 0, minlength=nj) > 0
    positive = np.bincount(r, weights=level > 0, minlength=nj) > 0
    if (zero & positive).any():  # a document both non-relevant and relevant in one JG
        i = int(np.flatnonzero(zero[r] & positive[r])[0])
        raise FormatError([f"{prefs.path}:{int(prefs.line[lines[i]])}: docno "
                           f"'{display(prefs.doc_id[lines[i]])}' has both 0 and non-0 "
                           "rel_level in one judgment group"])
    rel = np.full(nj, -1.0)
    rel[r] = level  # only 0 against > 0 matters below, and that agrees for every line
    a = np.zeros((nj, nj), dtype=bool)
    pairs = np.argwhere((jsg[:, None] == jsg[None, :]) & (level[:, None] > level[None, :]))
    a[r[pairs[:, 0]], r[pairs[:, 1]]] = True
    closure = a | np.eye(nj, dtype=bool)
    while True:  # repeated squaring: log(longest chain) steps
        wide = closure.astype(np.float32)
        wider = (wide @ wide) > 0
        if (wider == closure).all():
            break
        closure = wider
    np.fill_diagonal(closure, False)
    if (closure & closure.T).any():
        i, j = np.argwhere(closure & closure.T)[0]
        raise EvaluationError(f"{prefs.path}: inconsistent preferences within one judgment "
                              f"group (documents {i} and {j} preferred to each other)")
    counts += closure
    ful_ret, not_ret, ful_imp, not_imp, notoccur = _areas(closure, njr)
    relevant, nonrel = rel > 0, rel == 0
    num_rel, num_nonrel = int(relevant.sum()), int(nonrel.sum())
    # Rnonrel: non-relevant documents after the (num_rel)-th in document number order drop out
    seen = np.cumsum(nonrel)
    beyond = np.flatnonzero(nonrel & (seen == num_rel + 1))
    first = beyond[0] if len(beyond) else nj
    keep = ~(nonrel & (np.arange(nj) >= first))
    a1, a2, a3, a4, a5 = _areas(closure, njr, keep)
    rnonrel = (a1 + a3, a1 + a2 + a3 + a4 + a5)
    ret_nonrel = nonrel[:njr]
    beyond = np.flatnonzero(ret_nonrel & (np.cumsum(ret_nonrel) == num_rel + 1))
    first = beyond[0] if len(beyond) else njr
    keep = ~(nonrel & (np.arange(nj) >= first))
    b1, b2, _, _, _ = _areas(closure, njr, keep)
    return _Group(ful_ret, ful_ret + not_ret, ful_imp, ful_imp + not_imp, notoccur, num_rel,
                  int(relevant[:njr].sum()), num_nonrel, int(ret_nonrel.sum()), rnonrel,
                  (b1, b1 + b2))


def _lower_pairs(level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (a, b) of every pair with level[a] > level[b], for ``level`` sorted descending:
    each document against the suffix after its class."""
    n = len(level)
    first_lower = np.searchsorted(-level, -level, side="right")
    per = n - first_lower
    a = np.repeat(np.arange(n), per)
    start = np.repeat(np.cumsum(per) - per, per)
    b = np.arange(len(a)) - start + np.repeat(first_lower, per)
    return a, b


def _class_group(level, r, njr, counts, prefs, lines) -> _Group:
    """A JG with one JSG: equivalence classes by rel_level, highest first, ranks ascending.
    Every preference is a pair (a, b) of a higher class and a lower one: counted on the pairs,
    never on a documents x documents matrix."""
    order = np.lexsort((r, -level))
    level, r = level[order], r[order]
    a, b = _lower_pairs(level)
    ra, rb = r[a], r[b]
    clash = np.flatnonzero(ra == rb)
    if len(clash):
        line = lines[order][a[clash[0]]]
        raise FormatError([f"{prefs.path}:{int(prefs.line[line])}: docno "
                           f"'{display(prefs.doc_id[line])}' has two rel_levels in one "
                           "judgment sub-group"])
    np.add.at(counts, (ra, rb), 1)
    ful = ra < rb
    a_ret, b_ret = ra < njr, rb < njr
    ful_ret = int((ful & b_ret).sum())
    ful_imp = int((ful & ~b_ret & a_ret).sum())
    not_ret = int((~ful & a_ret).sum())
    not_imp = int((~ful & ~a_ret & b_ret).sum())
    notoccur = int((ful & ~a_ret).sum() + (~ful & ~b_ret).sum())
    relevant = level > 0
    retrieved = r < njr
    num_rel, num_nonrel = int(relevant.sum()), int((~relevant).sum())
    num_rel_ret = int((relevant & retrieved).sum())
    num_nonrel_ret = int((~relevant & retrieved).sum())
    # Rnonrel recalculation: the last class's first R documents stand for the non-relevant
    last = level == level[-1]
    pairs = (ra, rb, ~last[b])
    return _Group(ful_ret, ful_ret + not_ret, ful_imp, ful_imp + not_imp, notoccur, num_rel,
                  num_rel_ret, num_nonrel, num_nonrel_ret,
                  _class_rnonrel(r, last, pairs, num_rel, njr, retrieved_only=False),
                  _class_rnonrel(r, last, pairs, num_rel_ret, njr, retrieved_only=True))


def _class_rnonrel(r, last, pairs, size, njr, retrieved_only) -> tuple[int, int]:
    """trec_eval's recalculation for equivalence classes: pairs between classes other than the
    last, and every document against the first ``size`` of the last class (itself included).
    A pair is fulfilled when the preferred document is retrieved and ranked first;
    ``retrieved_only`` counts only pairs of retrieved documents."""
    ra, rb, b_not_last = pairs
    stand_in = np.sort(r[np.flatnonzero(last)[:size]])
    docs = r
    if retrieved_only:
        stand_in = stand_in[stand_in < njr]
        docs = r[r < njr]
        kept = b_not_last & (ra < njr) & (rb < njr)
    else:
        kept = b_not_last
    ful = int((kept & (ra < rb) & (ra < njr)).sum())
    # every document against the stand-ins: fulfilled when it is retrieved and ranked above
    above = len(stand_in) - np.searchsorted(stand_in, docs, side="right")
    ful += int(above[docs < njr].sum())
    return ful, int(kept.sum()) + len(docs) * len(stand_in)


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def _measures(groups: list[_Group], counts: np.ndarray, njr: int, nj: int) -> list[float]:
    ful_ret = sum(g.ful_ret for g in groups)
    ful_imp = sum(g.ful_imp for g in groups)
    poss_ret = sum(g.poss_ret for g in groups)
    poss_imp = sum(g.poss_imp for g in groups)
    notoccur = sum(g.notoccur for g in groups)
    ful, poss = ful_ret + ful_imp, poss_ret + poss_imp + notoccur

    def avgjg(part) -> float:
        total = sum(part(g) for g in groups)  # NaN (0/0) poisons the sum, as in C
        return total / len(groups) if total > 0 else 0.0

    def rnonrel(g: _Group) -> float:
        if g.num_rel >= g.num_nonrel:
            extra = g.num_rel - g.num_nonrel
            return _ratio(g.ful_ret + g.ful_imp + g.num_rel_ret * extra,
                          g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * extra)
        return _ratio(*g.rnonrel)

    def rnonrel_ret(g: _Group) -> float:
        if g.num_rel_ret >= g.num_nonrel_ret:
            extra = g.num_rel_ret - g.num_nonrel_ret
            return _ratio(g.ful_ret + g.num_rel_ret * extra, g.poss_ret + g.num_rel * extra)
        return _ratio(*g.rnonrel_ret)

    def part_or_zero(num: int, den: int) -> float:
        return num / den if den else 0.0

    top, back = counts[:njr], counts[:, :njr].T  # rows of the retrieved documents
    either = (top > 0) | (back > 0)
    share = np.divide(top, top + back, out=np.zeros(top.shape), where=either)
    ret_pairs = np.triu(either[:, :njr], 1)
    imp_pairs = either[:, njr:]
    rest = counts[njr:, njr:]
    none_pairs = np.triu((rest > 0) | (rest.T > 0), 1)
    ret_sum = share[:, :njr][ret_pairs].sum()
    imp_sum = share[:, njr:][imp_pairs].sum()
    n_ret, n_imp, n_none = int(ret_pairs.sum()), int(imp_pairs.sum()), int(none_pairs.sum())
    return [
        poss, ful, ful_ret,
        part_or_zero(ful, poss),
        part_or_zero(ret_sum + imp_sum, n_ret + n_imp + n_none),
        avgjg(lambda g: _ratio(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp + g.notoccur)
              if g.poss_ret + g.poss_imp + g.notoccur else 0.0),
        avgjg(rnonrel),
        part_or_zero(ful_ret, poss_ret),
        part_or_zero(ret_sum, n_ret),
        avgjg(lambda g: _ratio(g.ful_ret, g.poss_ret) if g.poss_ret else 0.0),
        avgjg(rnonrel_ret),
        part_or_zero(ful, poss_ret + poss_imp),
        part_or_zero(ret_sum + imp_sum, n_ret + n_imp),
        avgjg(lambda g: _ratio(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp)
              if g.poss_ret + g.poss_imp else 0.0),
    ]
