"""Statistics for retrieval experiments, built on scipy.

Paired tests of two systems (:func:`paired_test` and one function per test), all pairs or
against a baseline with a correction (:func:`compare`), the topic-blocked two-way ANOVA and
Tukey HSD (parametric and randomised), pairwise tables and equivalence classes, bootstrap BCa
intervals of means that stay in the values' range (:func:`mean_intervals`), LaTeX tables,
agreement between rankings (Kendall's tau, tau_AP, swaps), how far to trust a judge's labels
against a reference's (:func:`evaluate_judges`), discriminative power, and topic-set
size design. Every function returns one frozen result type; every resampling is seeded (default
seed 0) and recorded in its result.
"""

from typing import Any

from ..registry import exported

# Imported on first use (PEP 562), so that the command line starts without loading scipy.
_EXPORTS = {
    "DiscriminativePower": "agreement",
    "RankAgreement": "agreement",
    "discriminative_power": "agreement",
    "rank_agreement": "agreement",
    "swaps": "agreement",
    "tau_ap": "agreement",
    "LeaderboardComparison": "leaderboards",
    "RankMove": "leaderboards",
    "compare_leaderboards": "leaderboards",
    "JudgeEvaluation": "judge_eval",
    "JudgeTrust": "judge_eval",
    "MeasureTrust": "judge_eval",
    "SelfPreference": "judge_eval",
    "TopOverlap": "judge_eval",
    "evaluate_judges": "judge_eval",
    "judge_models": "judge_eval",
    "kind_family": "judge_eval",
    "names_model": "judge_eval",
    "self_preference": "judge_eval",
    "AnovaResult": "anova",
    "TukeyResult": "anova",
    "anova_two_way": "anova",
    "randomized_tukey_hsd": "anova",
    "tukey_hsd": "anova",
    "escape_latex": "latex",
    "latex_table": "latex",
    "describe": "latex",
    "COMPARE_TESTS": "multiple",
    "CORRECTIONS": "multiple",
    "Comparison": "multiple",
    "PairComparison": "multiple",
    "adjust_p": "multiple",
    "compare": "multiple",
    "CI_METHODS": "paired",
    "DEFAULT_SAMPLES": "paired",
    "DEFAULT_SEED": "paired",
    "DEFAULT_TEST": "paired",
    "TESTS": "paired",
    "TestResult": "paired",
    "bootstrap_test": "paired",
    "hedges_g": "paired",
    "paired_test": "paired",
    "randomization_test": "paired",
    "sign_test": "paired",
    "t_test": "paired",
    "wilcoxon_test": "paired",
    "MeanIntervals": "intervals",
    "mean_intervals": "intervals",
    "TopicSetSize": "planning",
    "estimate_variance": "planning",
    "plan_topics": "planning",
    "power": "planning",
    "topic_set_size": "planning",
    "Scores": "scores",
    "PairwiseMatrix": "tables",
    "beaten": "tables",
    "equivalence_classes": "tables",
    "pairwise_matrix": "tables",
    "ranked_systems": "tables",
}


def __getattr__(name: str) -> Any:
    return exported(__name__, _EXPORTS, name)


# every export, in the order above: what ``from irbench.stats import *`` and dir() give
__all__ = list(_EXPORTS)


def __dir__() -> list[str]:
    """The exports (not yet imported: a tab completion imports nothing) and what is bound."""
    return sorted(set(globals()) | set(_EXPORTS))
