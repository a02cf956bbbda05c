"""The choices and defaults of the statistics API, importable without scipy (the CLI builds its
options from them at start-up)."""

TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
TUKEY_TESTS = ("tukey-hsd", "randomized-tukey-hsd")
COMPARE_TESTS = TESTS + TUKEY_TESTS
CI_METHODS = ("t", "percentile", "bca")
CORRECTIONS = ("none", "bonferroni", "holm", "bh", "by")
DEFAULT_CORRECTION = "holm"
ALTERNATIVES = ("two-sided", "greater", "less")
FAMILIES = ("all", "measure")
DEFAULT_FAMILY = "measure"
DEFAULT_TEST = "randomization"  # against a baseline, or two systems
ALL_PAIRS_TEST = "randomized-tukey-hsd"  # all pairs of three or more systems
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0


def default_test(baseline: str | None, systems: int) -> str:
    """The test :func:`irbench.stats.compare` and ``irbench compare`` use when none is given:
    :data:`DEFAULT_TEST` against a baseline or for two systems, :data:`ALL_PAIRS_TEST` (which
    controls the family-wise error over all pairs itself) for all pairs of three or more."""
    return DEFAULT_TEST if baseline is not None or systems <= 2 else ALL_PAIRS_TEST
