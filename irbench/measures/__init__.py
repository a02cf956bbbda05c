"""Measure registry, names and columnar kernels. Importing this package registers every family."""

from . import (  # noqa: F401  (registration)
    answered,
    avgjg,
    counts,
    diversity,
    extra,
    gain,
    graded,
    judged,
    precision,
    prefs,
    qmeasure,
    ranking,
    sets,
    textbook,
)
from .base import REGISTRY, Family, Measure, Param, register, summarise
from .names import NICKNAMES, TREC_FAMILIES, measure_list, parse_measure, parse_trec_specs

# What every ad hoc evaluation keeps for the report whatever the suites (the store's
# ``profiles``): judged@10, judged@100, the interpolated 11-point precision-recall curve and
# the run page's summary counts (trec_eval's num_ret, num_rel, num_rel_ret over all topics),
# the share of the retrieved top k that is judged.
JUDGED = ("judged@10", "judged@100")
# the share of the documents retrieved in the top k that is judged (judged@k divides by k)
JUDGED_RETRIEVED = ("judged(retrieved)@10", "judged(retrieved)@100")
CURVE = tuple(f"iprec_at_recall_{r / 10:.2f}" for r in range(11))
COUNTS = ("NumRet", "NumRel", "NumRelRet")
PROFILE = (*JUDGED, *CURVE, *COUNTS, *JUDGED_RETRIEVED)

__all__ = [
    "COUNTS",
    "CURVE",
    "JUDGED",
    "JUDGED_RETRIEVED",
    "PROFILE",
    "REGISTRY",
    "Family",
    "Measure",
    "Param",
    "measure_list",
    "parse_measure",
    "register",
    "summarise",
    "NICKNAMES",
    "TREC_FAMILIES",
    "parse_trec_specs",
]
