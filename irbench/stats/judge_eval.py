"""How far to trust a judge: every other label set of a campaign against a reference set,
as TREC's AutoJudge track scores judges (:func:`evaluate_judges`).

For each other set whose kind can be compared with the reference's (one family: judgments
of documents, whatever their kind, keyed (topic, document); support labels, per run or
shared by sentence text; nugget assignments), and on the keys both judged:

- label agreement, :func:`irbench.judgments.agreement.agreement` (Cohen's kappa unweighted
  and linear, Krippendorff's alpha ordinal, the confusion matrix ...); support labels of a
  ``support_shared`` set are read as the reference's kind keys them, so that labels per run
  and labels shared by text can be compared;
- on every measure of the config's suites that both sets score, the two leaderboards the
  store holds (:func:`irbench.stats.compare_leaderboards`: Kendall's tau, tau_AP,
  Spearman's rho, swaps, the largest rank changes, significant differences that appear or
  vanish) and the overlap of their top k for each k asked (5 and 10 by default; k is cut to
  the number of systems); measures that read no label (``num_ret``, ``answer_words`` ...)
  are left out: their leaderboards are the same under every set;
- the self-preference check, for a judge whose model is known (the set's ``model:`` in the
  config, else the models alone that judged a set ``irbench qrels`` wrote, by its sha256):
  the systems whose metadata names that model (:func:`names_model`), their rank under the
  reference and under the judge, the mean rank gain (reference rank minus judge rank: above 0,
  the judge ranks them better) of those systems and of the others, and a one-sided
  permutation p-value: the share of ways to pick as many systems as were named whose gain
  sum reaches the named systems' (every way when there are at most ``samples`` of them;
  else ``samples`` random ways drawn with ``seed``, p = (1 + reaching) / (1 + samples)).

Nothing here reads a file itself: the labels come through ``labels(spec, kind)`` (the command
line's checks the file is the one the stored scores were computed on); scores come from the
store.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .. import judgments
from ..errors import EvaluationError, NotStoredError
from ..judgments.agreement import Agreement, agreement
from .choices import DEFAULT_SEED
from .leaderboards import LeaderboardComparison, RankMove, compare_leaderboards
from .scores import Scores

DEFAULT_TOP = (5, 10)
DEFAULT_PERMUTATIONS = 10_000
DOCUMENTS = "documents"  # the family of every kind whose labels are (topic, document) grades
CHUNK = 1_000  # random permutations drawn at once
# the measure needs (irbench.measures.base.NEEDS) that read no label: num_ret, answer_words
# ... give the same leaderboard under every set and say nothing of a judge
LABEL_FREE = ("none", "answer")


@dataclass(frozen=True, kw_only=True)
class TopOverlap:
    """How many systems are in the top ``k`` of both leaderboards."""

    k: int
    overlap: int


@dataclass(frozen=True, kw_only=True)
class SelfPreference:
    """Do the systems built on the judge's model fare better under the judge? ``named``:
    those whose metadata names one of ``models``, with their rank by the reference (rank_a)
    and by the judge (rank_b); gains are reference rank minus judge rank (above 0: the judge
    ranks them better); ``p_value`` one-sided (the judge favours the named systems), exact
    over every choice of as many systems when ``exact``, else from ``samples`` random choices
    drawn with ``seed``; NaN when every system or none is named."""

    measure: str
    models: tuple[str, ...]
    named: tuple[RankMove, ...]
    gain_named: float
    gain_others: float
    difference: float
    p_value: float
    exact: bool
    samples: int
    seed: int


@dataclass(frozen=True, kw_only=True)
class MeasureTrust:
    """One measure's leaderboards under the reference and the judge."""

    leaderboard: LeaderboardComparison
    top: tuple[TopOverlap, ...]
    self_preference: SelfPreference | None

    @property
    def measure(self) -> str:
        return self.leaderboard.measure


@dataclass(frozen=True, kw_only=True)
class JudgeTrust:
    """One judge (a label set) against the reference: ``labels`` None when they could not be
    compared (the reason in ``notes``)."""

    judge: str
    kind: str
    models: tuple[str, ...]
    labels: Agreement | None
    measures: tuple[MeasureTrust, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class JudgeEvaluation:
    """Every judge against ``reference``; ``skipped``: (set, why) of the sets not compared
    (another kind family, no measure both score)."""

    reference: str
    kind: str
    models: tuple[str, ...]
    judges: tuple[JudgeTrust, ...]
    skipped: tuple[tuple[str, str], ...]
    top: tuple[int, ...]
    test: str
    correction: str
    alpha: float
    samples: int
    seed: int

    @property
    def notes(self) -> tuple[str, ...]:
        """Every skip and judge's note, for messages."""
        return (tuple(f"{name}: {why}" for name, why in self.skipped)
                + tuple(f"{j.judge}: {n}" for j in self.judges for n in j.notes))


def kind_family(kind: str) -> str:
    """What a kind's labels can be compared with: kinds labelling documents (read as
    (topic, document) grades) are one family; a kind with labels of its own shares a family
    with the kinds reading the same files (its ``irbench eval -R`` format: ``support`` and
    ``support_shared``)."""
    k = judgments.kind(kind)
    return DOCUMENTS if k.read_labels is None else k.eval_format


def judge_models(spec, made: dict) -> tuple[str, ...]:
    """The models whose labels a qrels set holds alone: its ``model:``, else the models of
    the judges ``irbench qrels`` wrote it from when only models judged it (``made``:
    :meth:`Store.qrels_judges`); () when unknown or when people judged too."""
    if spec.model:
        return (spec.model,)
    if spec.name in made:
        _, kinds, models = made[spec.name]
        if kinds and all(k == "model" for k in kinds):
            return tuple(dict.fromkeys(m for m in models if m))
    return ()


def names_model(description: str, models: Sequence[str]) -> bool:
    """Whether a system's metadata (its config ``metadata:``, the run's ir_metadata and its
    description, as :meth:`Store.system_descriptions` joins them) names one of ``models``:
    a case-insensitive substring match of the model's name, or of its last part after a
    ``/`` (``openai/gpt-4o`` is named by ``gpt-4o``)."""
    text = description.lower()
    keys = {m.lower() for m in models} | {m.lower().rsplit("/", 1)[-1] for m in models}
    return any(k and k in text for k in keys)


def self_preference(moves: Sequence[RankMove], named: set[str], *, measure: str,
                    models: Sequence[str], samples: int = DEFAULT_PERMUTATIONS,
                    seed: int = DEFAULT_SEED) -> SelfPreference:
    """The self-preference check on one measure's ranks (``moves``: every system's rank by
    the reference and the judge) for the systems in ``named`` (see :class:`SelfPreference`)."""
    gain = np.array([m.rank_a - m.rank_b for m in moves], dtype=np.int64)
    mask = np.array([m.system in named for m in moves], dtype=bool)
    n, k = len(gain), int(mask.sum())
    nan = float("nan")
    means = (float(gain[mask].mean()) if k else nan,
             float(gain[~mask].mean()) if k < n else nan)
    p, exact = nan, True
    if 0 < k < n:
        p, exact = _permutation_p(gain, int(gain[mask].sum()), k, samples, seed)
    return SelfPreference(measure=measure, models=tuple(models),
                          named=tuple(m for m in moves if m.system in named),
                          gain_named=means[0], gain_others=means[1],
                          difference=means[0] - means[1], p_value=p, exact=exact,
                          samples=samples, seed=seed)


def _permutation_p(gain: np.ndarray, observed: int, k: int, samples: int,
                   seed: int) -> tuple[float, bool]:
    """(p, exact): the share of k-subsets of the systems whose gain sum is at least
    ``observed`` (the difference of the means grows with the named systems' sum, since all
    gains add up to 0)."""
    n = len(gain)
    if math.comb(n, k) <= samples:
        sums = np.fromiter((gain[list(c)].sum() for c in combinations(range(n), k)),
                           dtype=np.int64)
        return float(np.mean(sums >= observed)), True
    rng = np.random.default_rng(seed)
    reaching, left = 0, samples
    while left:
        draws = min(CHUNK, left)
        picks = np.argsort(rng.random((draws, n)), axis=1)[:, :k]
        reaching += int((gain[picks].sum(axis=1) >= observed).sum())
        left -= draws
    return (1 + reaching) / (1 + samples), False


def evaluate_judges(config, store, reference: str | None = None, *,
                    judges: Sequence[str] = (), measures: Sequence[str] = (),
                    labels: Callable[[Any, str], Any] | None = None,
                    top: Sequence[int] = DEFAULT_TOP, test: str = "t",
                    correction: str = "holm", alpha: float = 0.05,
                    samples: int = DEFAULT_PERMUTATIONS,
                    seed: int = DEFAULT_SEED) -> JudgeEvaluation:
    """Every label set of ``config`` (``judges``: only these) against ``reference`` (default:
    the config's first set), on the store's scores (see the module docstring). ``top``: the
    k of the top-k overlaps (empty: :data:`DEFAULT_TOP`). ``measures``:
    only these (canonical names; default every measure of the suites both sets score).
    ``labels(spec, kind)`` gives a set's labels read as ``kind`` keys them (default: its
    file read by the kind's reader). An unknown set is the config's error; no set to compare
    is an EvaluationError."""
    ref = config.qrels_set(reference)
    wanted = [config.qrels_set(n) for n in judges] or [q for q in config.qrels]
    others = [q for q in wanted if q.name != ref.name]
    read = labels or (lambda spec, kind: judgments.kind(kind).labels(spec.path,
                                                                   name=spec.name))
    made = store.qrels_judges()
    described = store.system_descriptions()
    skipped: list[tuple[str, str]] = []
    compared = []
    for other in others:
        chosen = _measures(config, ref, other, measures)
        if kind_family(other.kind) != kind_family(ref.kind):
            skipped.append((other.name, f"not compared: its {other.kind} labels are of "
                            f"another family than the {ref.kind} labels of {ref.name}"))
        elif not chosen:
            skipped.append((other.name, f"no measure scored on both it and {ref.name}"))
        else:
            compared.append((other, chosen))
    if not compared:
        raise EvaluationError(f"no label set of {config.path} to compare with '{ref.name}' "
                              f"({ref.kind}): " + ("; ".join(f"{n}: {w}" for n, w in skipped)
                                                   or "it is the only set"))
    ks = tuple(sorted(set(top))) or DEFAULT_TOP
    reference_labels = read(ref, ref.kind)
    trusted = tuple(_judge(store, ref, other, chosen, reference_labels, read,
                           level=config.settings.relevance_level,
                           models=judge_models(other, made), described=described, top=ks,
                           test=test, correction=correction, alpha=alpha, samples=samples,
                           seed=seed)
                    for other, chosen in compared)
    return JudgeEvaluation(reference=ref.name, kind=ref.kind, models=judge_models(ref, made),
                           judges=trusted, skipped=tuple(skipped), top=ks, test=test,
                           correction=correction, alpha=alpha, samples=samples, seed=seed)


def _measures(config, ref, other, asked: Sequence[str]) -> list[str]:
    """The measures of the config's suites (or ``asked``) both sets score and that read the
    labels, once each."""
    both = [str(m) for m in config.measures if ref.takes(m) and other.takes(m)
            and m.definition.needs not in LABEL_FREE]
    return [m for m in both if m in set(asked)] if asked else both


def _judge(store, ref, other, measures: list[str], reference_labels, read, *, level: int,
           models: tuple[str, ...], described: dict[str, str], top: tuple[int, ...],
           test: str, correction: str, alpha: float, samples: int, seed: int) -> JudgeTrust:
    notes: list[str] = []
    as_kind = other.kind if kind_family(other.kind) == DOCUMENTS else ref.kind
    found = None
    try:
        found = agreement(reference_labels, read(other, as_kind), level)
    except EvaluationError as exc:  # no key in common, different nugget lists ...
        notes.append(f"labels not compared with {ref.name}'s: {str(exc).splitlines()[0]}")
    named = {s for s, text in described.items() if models and names_model(text, models)}
    if models and not named:
        notes.append(f"no system's metadata names its model ({', '.join(models)}): no "
                     "self-preference check")
    rows = []
    for measure in measures:
        try:
            with warnings.catch_warnings():  # scipy on equal scores: the values say it
                warnings.simplefilter("ignore", RuntimeWarning)
                c = compare_leaderboards(
                    Scores.from_store(store, ref.name, measure),
                    Scores.from_store(store, other.name, measure), qrels_a=ref.name,
                    qrels_b=other.name, top_k=max(top), test=test, correction=correction,
                    alpha=alpha, samples=samples, seed=seed)
        except (NotStoredError, EvaluationError) as exc:
            notes.append(f"{measure}: leaderboards not compared: {str(exc).splitlines()[0]}")
            continue
        overlap = tuple(TopOverlap(k=k, overlap=sum(
            1 for m in c.moves if m.rank_a <= k and m.rank_b <= k))
            for k in dict.fromkeys(min(k, c.systems) for k in top))
        preference = (self_preference(c.moves, named, measure=measure, models=models,
                                      samples=samples, seed=seed)
                      if named & {m.system for m in c.moves} else None)
        rows.append(MeasureTrust(leaderboard=c, top=overlap, self_preference=preference))
    return JudgeTrust(judge=other.name, kind=other.kind, models=models, labels=found,
                      measures=tuple(rows), notes=tuple(notes))


__all__ = ["DEFAULT_TOP", "JudgeEvaluation", "JudgeTrust", "MeasureTrust", "SelfPreference",
           "TopOverlap", "evaluate_judges", "judge_models", "kind_family", "names_model",
           "self_preference"]
