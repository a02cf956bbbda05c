"""Measure registry, names and columnar kernels. Importing this package registers every family."""

from . import (  # noqa: F401  (registration)
    avgjg, counts, diversity, extra, gain, graded, judged, precision, prefs, qmeasure, ranking,
    sets, textbook,
)
from .base import REGISTRY, Family, Measure, Param, register, summarise
from .names import NICKNAMES, TREC_FAMILIES, parse_measure, parse_trec_specs

__all__ = [
    "REGISTRY",
    "Family",
    "Measure",
    "Param",
    "parse_measure",
    "register",
    "summarise",
    "NICKNAMES",
    "TREC_FAMILIES",
    "parse_trec_specs",
]
