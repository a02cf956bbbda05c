"""Statistics for retrieval experiments, built on scipy.

Paired tests of two systems (:func:`paired_test` and one function per test), all pairs or
against a baseline with a correction (:func:`compare`), the topic-blocked two-way ANOVA and
Tukey HSD (parametric and randomised), pairwise tables and equivalence classes, LaTeX tables,
agreement between rankings (Kendall's tau, tau_AP, swaps), discriminative power, and topic-set
size design. Every function returns one frozen result type; every resampling is seeded (default
seed 0) and recorded in its result.
"""

from .agreement import (DiscriminativePower, RankAgreement, discriminative_power,
                        rank_agreement, swaps, tau_ap)
from .anova import AnovaResult, TukeyResult, anova_two_way, randomized_tukey_hsd, tukey_hsd
from .latex import escape_latex, latex_table
from .multiple import (COMPARE_TESTS, CORRECTIONS, Comparison, PairComparison, adjust_p,
                       compare)
from .paired import (CI_METHODS, DEFAULT_SAMPLES, DEFAULT_SEED, DEFAULT_TEST, TESTS, TestResult,
                     bootstrap_test, hedges_g, paired_test, randomization_test, sign_test,
                     t_test, wilcoxon_test)
from .planning import TopicSetSize, estimate_variance, plan_topics, power, topic_set_size
from .scores import Scores
from .tables import (PairwiseMatrix, beaten, equivalence_classes, pairwise_matrix,
                     ranked_systems)

__all__ = [
    "Scores", "TestResult", "paired_test", "t_test", "wilcoxon_test", "sign_test",
    "randomization_test", "bootstrap_test", "hedges_g", "TESTS", "CI_METHODS", "DEFAULT_TEST",
    "DEFAULT_SAMPLES", "DEFAULT_SEED", "Comparison", "PairComparison", "compare", "adjust_p",
    "COMPARE_TESTS", "CORRECTIONS", "AnovaResult", "TukeyResult", "anova_two_way", "tukey_hsd",
    "randomized_tukey_hsd", "PairwiseMatrix", "pairwise_matrix", "beaten",
    "equivalence_classes", "ranked_systems", "latex_table", "escape_latex", "RankAgreement",
    "rank_agreement", "tau_ap", "swaps", "DiscriminativePower", "discriminative_power",
    "TopicSetSize", "topic_set_size", "power", "estimate_variance", "plan_topics",
]
