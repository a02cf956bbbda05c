"""Section 6e: how far to trust each judge (``irbench report CONFIG --judge-eval SET``).

Every other label set of the config against the reference set, computed by
:func:`irbench.stats.evaluate_judges` (as ``irbench judge-eval`` prints it): the agreement of
the labels on the keys both judged (Cohen's kappa unweighted and linear, Krippendorff's alpha
ordinal, the confusion matrix), and on every measure both sets score the two leaderboards
(Kendall's tau, tau_AP, Spearman's rho, the top-k overlaps, the largest rank changes, the
significant differences that appear or vanish) with the self-preference check for a judge
whose model is known. Nothing is computed here: the records are printed. With no other set to
compare, the section says why instead of failing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import stats
from ..errors import EvaluationError, NotStoredError
from .fields import documented
from .numbers import num

MOVES_SHOWN, PAIRS_SHOWN = 5, 3

_f = documented


@dataclass(frozen=True, kw_only=True)
class TrustMeasure:
    """One measure's leaderboards under the reference and one judge."""

    measure: str = _f("canonical measure name")
    systems: int = _f("the systems both leaderboards rank")
    topics: int = _f("the topics both sets judged and every system has")
    tau: str = _f("Kendall's tau between the two rankings, printed")
    tau_ap: str = _f("tau_AP of the judge's ranking against the reference's, printed")
    spearman: str = _f("Spearman's rho of the two sets' means, printed")
    top: tuple[str, ...] = _f("per k of its judge's ``top``: systems in both top k, "
                              "printed 'n of k', or '-'")
    moves: str = _f("the largest rank changes, printed 'system reference rank → judge "
                    "rank' (participant text), or 'none'")
    appear: str = _f("significant differences that appear with the judge, printed")
    vanish: str = _f("significant differences that vanish with the judge, printed")
    self_preference: str = _f("the self-preference check on this measure, printed, or '' "
                              "(no system's metadata names the judge's model)")


@dataclass(frozen=True, kw_only=True)
class TrustJudge:
    """One label set (a judge) against the reference."""

    name: str = _f("the label set (config text)")
    kind: str = _f("its judgment kind")
    models: str = _f("the judge's models, printed, or '' when unknown")
    compared: str = _f("what a label is given to, printed: 'pairs' for (topic, document), "
                       "else the keys; '' when the labels were not compared")
    pairs: str = _f("keys both judged, printed, or ''")
    only_reference: str = _f("keys the reference judged alone, printed, or ''")
    only_judge: str = _f("keys this set judged alone, printed, or ''")
    agreed: str = _f("share of keys with the same label, printed, or ''")
    kappa: str = _f("Cohen's kappa (unweighted), printed, or ''")
    kappa_linear: str = _f("Cohen's kappa with linear weights, printed, or ''")
    alpha_ordinal: str = _f("Krippendorff's alpha (ordinal), printed, or ''")
    grades: tuple[str, ...] = _f("the labels that occur, sorted (the confusion matrix's "
                                 "rows and columns)")
    confusion: tuple[tuple[int, ...], ...] = _f("keys per (reference label: row, judge "
                                                "label: column), in ``grades`` order")
    top: tuple[int, ...] = _f("the k of the top-k overlaps (5 and 10, each cut to the "
                              "systems ranked, once each)")
    measures: tuple[TrustMeasure, ...] = _f("one per measure both sets score, suite order")
    notes: tuple[str, ...] = _f("what could not be compared, and why")


@dataclass(frozen=True, kw_only=True)
class JudgeTrustSection:
    """Section 6e: every other label set against a reference set (TREC's AutoJudge way)."""

    reference: str = _f("the reference set (config text)")
    kind: str = _f("its judgment kind")
    models: str = _f("the reference's models when models alone judged it, printed, or ''")
    test: str = _f("the paired test, correction and level of the significant differences, "
                   "printed")
    judges: tuple[TrustJudge, ...] = _f("one per compared set, config order")
    skipped: tuple[str, ...] = _f("the sets not compared, each with why")
    empty: str = _f("why no set is compared, a sentence (no other set of the reference's "
                    "kind family, or a set's file changed since its scores were stored); "
                    "then ``judges`` is empty; else ''")


JUDGE_TYPES = (TrustMeasure, TrustJudge, JudgeTrustSection)


def check_reference(config, reference: str | None) -> None:
    """Refuse an unknown reference set before anything is computed (the config's
    :class:`~irbench.errors.UnknownQrelsSetError`, naming its sets)."""
    if reference is not None:
        config.qrels_set(reference)


def judge_trust(config, store, reference: str, *, labels=None, seed: int = 0
                ) -> JudgeTrustSection:
    """Section 6e of ``config`` against ``reference`` (an unknown name is the config's
    error); ``labels(spec, kind)``: a set's labels (default: its file read by its kind's
    reader; the command line checks the file is the one the scores were computed on)."""
    spec = config.qrels_set(reference)
    try:
        result = stats.evaluate_judges(config, store, reference, labels=labels, seed=seed)
    except (EvaluationError, NotStoredError) as exc:
        why = "No judge to compare" if isinstance(exc, EvaluationError) else "Not computed"
        return JudgeTrustSection(reference=spec.name, kind=spec.kind, models="",
                                 test="", judges=(), skipped=(), empty=f"{why}: {exc}")
    return JudgeTrustSection(
        reference=result.reference, kind=result.kind, models=", ".join(result.models),
        test=f"{_TESTS.get(result.test, result.test)}, "
        f"{_CORRECTIONS.get(result.correction, result.correction)}, alpha {result.alpha:g}",
        judges=tuple(_judge(j) for j in result.judges),
        skipped=tuple(f"{name}: {why}" for name, why in result.skipped), empty="")


_TESTS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
          "randomization": "randomisation test", "bootstrap": "bootstrap test"}
_CORRECTIONS = {"none": "no correction", "bonferroni": "Bonferroni's correction",
                "holm": "Holm's correction", "bh": "Benjamini-Hochberg",
                "by": "Benjamini-Yekutieli"}


def _judge(j) -> TrustJudge:
    r = j.labels
    top = tuple(dict.fromkeys(t.k for m in j.measures for t in m.top))
    counts = (("", "", "", "", "", "", "", "") if r is None else
              (r.compared, f"{r.pairs:,}", f"{r.only_reference:,}", f"{r.only_other:,}",
               num(r.agreed), num(r.kappa), num(r.kappa_linear), num(r.alpha_ordinal)))
    return TrustJudge(
        name=j.judge, kind=j.kind, models=", ".join(j.models), compared=counts[0],
        pairs=counts[1], only_reference=counts[2], only_judge=counts[3], agreed=counts[4],
        kappa=counts[5], kappa_linear=counts[6], alpha_ordinal=counts[7],
        grades=tuple(str(g) for g in r.grades) if r is not None else (),
        confusion=tuple(tuple(int(x) for x in row) for row in r.confusion.tolist())
        if r is not None else (),
        top=top, measures=tuple(_measure(m, top) for m in j.measures), notes=j.notes)


def _measure(m, top: tuple[int, ...]) -> TrustMeasure:
    c = m.leaderboard
    overlap = {t.k: t.overlap for t in m.top}
    return TrustMeasure(
        measure=c.measure, systems=c.systems, topics=c.topics, tau=num(c.tau),
        tau_ap=num(c.tau_ap), spearman=num(c.spearman),
        top=tuple(f"{overlap[k]} of {k}" if k in overlap else "-" for k in top),
        moves=", ".join(f"{x.system} {x.rank_a} → {x.rank_b}" for x in c.moves[:MOVES_SHOWN]
                        if x.rank_a != x.rank_b) or "none",
        appear=_pairs(c.significant_only_b), vanish=_pairs(c.significant_only_a),
        self_preference=_preference(m.self_preference))


def _pairs(pairs) -> str:
    if not pairs:
        return "none"
    shown = ", ".join(f"{a} > {b}" for a, b in pairs[:PAIRS_SHOWN])
    return f"{len(pairs)}: {shown}" + (" ..." if len(pairs) > PAIRS_SHOWN else "")


def _preference(p) -> str:
    if p is None:
        return ""
    named = ", ".join(f"{m.system} {m.rank_a} → {m.rank_b}" for m in p.named)
    how = "exact" if p.exact else f"{p.samples:,} permutations, seed {p.seed}"
    return (f"{named}: mean rank gain {_signed(p.gain_named)} against "
            f"{_signed(p.gain_others)} for the others, one-sided p {num(p.p_value)} ({how})")


def _signed(value: float) -> str:
    return f"{value:+.2f}" if math.isfinite(value) else "-"  # NaN: every system or none named
