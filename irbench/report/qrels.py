"""Section 6d: the leaderboard under each other ad hoc qrels set, who judged each set, and the
warnings an LLM-judged leaderboard needs.

Every other ad hoc set is compared with the first on the focus measure
(:func:`irbench.stats.compare_leaderboards`: Kendall's tau, tau_AP, top-k overlap, rank
changes, significant differences that appear or vanish); the agreement of the sets' labels is
the ``qrels-agreement`` analysis ``irbench run`` stores. Who judged a set: the config's
``model:`` of the set, else the judges ``irbench qrels`` wrote it from (matched by sha256). A set
resting on one model judge alone gets a warning at the top of the page (Clarke and Dietz,
2024: such qrels favour systems built on the same model), and the systems whose metadata names
that model are marked in the leaderboard.
"""

from __future__ import annotations

from .. import analyses, judgments, stats
from ..errors import EvaluationError, NotStoredError
from .choices import focus_measure
from .contract import QrelsComparison, QrelsRow
from .numbers import num

TEST, CORRECTION, TOP_K = "t", "holm", 10  # top k: at most half the systems
MOVES_SHOWN, PAIRS_SHOWN = 3, 3


def judged_by(config, store) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{qrels set: (who judged it, printed; the models if models alone judged it)}."""
    made = store.qrels_judges()
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for q in config.qrels:
        if q.model:
            out[q.name] = (f"the model {q.model}", (q.model,))
        elif q.name in made:
            names, kinds, models = made[q.name]
            alone = tuple(models) if kinds == ["model"] else ()
            what = "models" if kinds == ["model"] else "people" if kinds == ["human"] else \
                "people and models"
            out[q.name] = (f"{what}: {', '.join(names)}"
                           + (f" ({', '.join(models)})" if models else ""), alone)
        else:
            out[q.name] = ("", ())
    return out


def warnings_and_marks(config, store, shown: list[str]) -> tuple[tuple[str, ...],
                                                                 tuple[str, ...]]:
    """(a warning per shown qrels set resting on one model judge alone, the systems whose
    metadata names such a model)."""
    who = judged_by(config, store)
    warnings, models = [], set()
    for name in shown:
        alone = who.get(name, ("", ()))[1]
        if len(alone) == 1:
            models.add(alone[0])
            warnings.append(
                f"the leaderboard on qrels '{name}' rests on one LLM judge alone "
                f"({alone[0]}): LLM judgments agree less with people among the best systems "
                "and favour systems built on the same model (Clarke and Dietz, 2024); "
                "confirm its order with human judgments")
    described = store.system_descriptions()
    keys = {m.lower() for m in models} | {m.lower().rsplit("/", 1)[-1] for m in models}
    marked = tuple(sorted(s for s, text in described.items()
                          if any(k and k in text for k in keys)))
    return tuple(warnings), marked


def qrels_comparison(config, store, seed: int) -> QrelsComparison | None:
    """Section 6d, or None with fewer than two ad hoc sets scored on the focus measure."""
    sets = [q.name for q in config.qrels if q.kind == judgments.DEFAULT_KIND]
    if len(sets) < 2:
        return None
    measure = focus_measure(config)
    try:
        reference = stats.Scores.from_store(store, sets[0], measure)
    except NotStoredError:
        return None
    spec = analyses.qrels_agreement_spec(config, store)
    saved = analyses.load(store, spec) if spec is not None else None
    labels = {entry["name"]: entry for entry in (saved or {}).get("sets", [])}
    who = judged_by(config, store)
    rows = []
    for name in sets[1:]:
        try:
            c = stats.compare_leaderboards(reference, stats.Scores.from_store(
                store, name, measure), qrels_a=sets[0], qrels_b=name,
                top_k=max(1, min(TOP_K, len(reference.systems) // 2)),
                test=TEST, correction=CORRECTION, seed=seed)
        except (NotStoredError, EvaluationError):
            continue
        rows.append(QrelsRow(
            name=name, judged_by=who[name][0], topics=c.topics, tau=num(c.tau),
            tau_ap=num(c.tau_ap), top=f"{c.top_overlap} of {c.top_k}",
            moves=", ".join(f"{m.system} {m.rank_a} → {m.rank_b}" for m in
                            c.moves[:MOVES_SHOWN] if m.rank_a != m.rank_b) or "none",
            appear=_pairs(c.significant_only_b), vanish=_pairs(c.significant_only_a),
            labels=_labels(labels.get(name))))
    if not rows:
        return None
    return QrelsComparison(measure=measure, reference=sets[0],
                           reference_judged_by=who[sets[0]][0],
                           test="paired t-test, Holm's correction, alpha 0.05", rows=tuple(rows))


def _pairs(pairs: tuple[tuple[str, str], ...]) -> str:
    if not pairs:
        return "none"
    shown = ", ".join(f"{a} > {b}" for a, b in pairs[:PAIRS_SHOWN])
    return f"{len(pairs)}: {shown}" + (" ..." if len(pairs) > PAIRS_SHOWN else "")


def _labels(entry: dict | None) -> str:
    if entry is None:
        return ""
    if not entry.get("pairs"):
        return "no (topic, document) pair judged by both"
    return (f"{entry['pairs']:,} pairs both judged: {num(_float(entry['agreed']))} the same "
            f"grade, Cohen's kappa {num(_float(entry['kappa']))} (binary "
            f"{num(_float(entry['kappa_binary']))}), Krippendorff's alpha (ordinal) "
            f"{num(_float(entry['alpha_ordinal']))}")


def _float(value) -> float | None:
    return None if value is None else float(value)
