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
DEFAULT_TEST = "randomization"
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0
