"""ir_measures names and measure objects, with ir_measures' meanings.

Labs name measures the ir_measures way (``nDCG@10``, ``RR@10``, ``Judged@10``, ``SetP``,
``AP(rel=2)``, ``RBP(p=0.8)``) and pass its measure objects (``ir_measures.nDCG@10``). Each
name ir_measures shares with an irbench family means the same here; :data:`ALIASES` maps the
names irbench spells otherwise, :func:`translate` maps ir_measures' parameters onto irbench's
(``judged_only=True``: the condensed list; ``dcg='exp-log2'``: exponential gain; SetF's
``beta``: trec_eval's set_F takes beta^2), and :data:`OBJECT_DEFAULTS` gives the defaults an
ir_measures object carries where irbench's own default differs. Names are matched exactly,
then regardless of case when that leaves one family (``ndcg@10``, ``p@10``, ``map``).

Where the two disagree on a name, it is said here and by ``irbench measures``:

- ``RBP``: persistence p = 0.8, as in ir_measures (trec_eval's ``rbp`` keeps its 0.9); the
  canonical name always states p. ir_measures' RBP is binary at a relevance level (``rel``,
  which its only provider requires); irbench's RBP weighs graded levels as trec_eval's does, so
  an ir_measures ``RBP(rel=...)`` object is refused rather than given another value.
- ``ERR``: irbench's default grade range is the topic's highest level; ir_measures (gdeval)
  fixes it at 4, so an ir_measures ``ERR`` object means ``ERR(max_grade=4)``.
- ``Accuracy``: irbench's is the textbook (a + d) / N of trec_eval's style; ir_measures' is the
  probability that a relevant document is ranked above a non-relevant one: an ir_measures
  ``Accuracy`` object is refused.
"""

from __future__ import annotations

from typing import Any

from ..errors import MeasureParameterError, UnknownMeasureError
from .base import REGISTRY, SPELLINGS

ALIASES = {  # ir_measures name -> irbench family of the same meaning
    "MAP": "AP", "BPref": "Bpref", "Judged": "judged", "RPrec": "Rprec", "NDCG": "nDCG",
    "Precision": "P", "Recall": "R", "SetP": "set_P", "SetR": "set_recall",
    "SetAP": "set_map", "SetRelP": "set_relative_P", "SetF": "set_F", "StRecall": "S_recall",
    "α_nDCG": "alpha_nDCG",
}
OBJECT_DEFAULTS = {"ERR": {"max_grade": 4}}  # what an ir_measures object means by default
REFUSED = {
    "Accuracy": "ir_measures' Accuracy (the probability that a relevant document is ranked "
                "above a non-relevant one) is not irbench's Accuracy ((a + d) / N)",
}
TRUE = ("true", "True", "1")


def family_name(name: str) -> str | None:
    """The irbench family an ir_measures or irbench name stands for: exactly, then regardless
    of case when that leaves one family; None when none."""
    if name in REGISTRY:
        return name
    for table in (SPELLINGS, ALIASES):
        if name in table:
            return table[name]
    folded = {key: key for key in REGISTRY if key.lower() == name.lower()}
    for table in (SPELLINGS, ALIASES):
        for key in table:
            if key.lower() == name.lower():
                folded[key] = table[key]
    families = set(folded.values())
    return families.pop() if len(families) == 1 else None


def translate(family: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """ir_measures' parameters on ``family`` as irbench's: (family, parameters)."""
    values = dict(values)
    judged_only = values.pop("judged_only", None)
    if judged_only is not None and str(judged_only) in TRUE:
        variants = [p for p in REGISTRY[family].params if p.name == "variant"]
        if not variants or "condensed" not in (variants[0].choices or ()):
            raise MeasureParameterError(f"{family}: judged_only=True (the condensed list) is "
                                        "not available for it")
        values["variant"] = "condensed"
    dcg = values.pop("dcg", None)
    if dcg is not None and str(dcg).strip("'\"") != "log2":
        if str(dcg).strip("'\"") != "exp-log2":
            raise MeasureParameterError(f"{family}: dcg={dcg} (ir_measures takes log2 or "
                                        "exp-log2)")
        values["gain"] = "exp"
    if family == "set_P" and str(values.pop("relative", False)) in TRUE:
        family = "set_relative_P"
    if family == "set_F" and "beta" in values:
        values["values"] = repr(float(values.pop("beta")) ** 2)
    if family == "NumRet" and "rel" in values:  # ir_measures spells NumRelRet NumRet(rel=k)
        family = "NumRelRet"
    if "rel" in values and not any(p.name == "rel" for p in REGISTRY[family].params):
        if str(values["rel"]).strip() not in ("1", "None"):
            raise MeasureParameterError(f"{family} counts level >= 1 as relevant; it takes no "
                                        f"rel={values['rel']}")
        del values["rel"]
    return family, values


def object_text(obj: Any) -> str:
    """An ir_measures measure object as the name parse_measure reads, with ir_measures'
    meaning (see the module docstring)."""
    name = str(obj.NAME)
    params = {k: v for k, v in dict(getattr(obj, "params", {}) or {}).items()
              if v is not None and not _not_provided(v)}
    if name in REFUSED:
        raise UnknownMeasureError(REFUSED[name])
    if name == "RBP" and "rel" in params:
        raise UnknownMeasureError(
            "ir_measures' RBP(rel=...) is binary at a relevance level; irbench's RBP weighs "
            "graded levels as trec_eval's rbp does: give RBP(p=...) as a name for that")
    family = family_name(name)
    if family is None:
        raise UnknownMeasureError(f"irbench does not compute ir_measures' {name}; "
                                  "'irbench measures' lists what it does")
    for key, value in OBJECT_DEFAULTS.get(name, {}).items():
        params.setdefault(key, value)
    cutoff = params.pop("cutoff", None)
    if isinstance(params.get("gains"), dict):
        params["gains"] = ";".join(f"{k}:{v}" for k, v in sorted(params["gains"].items()))
    inner = ",".join(f"{k}={v}" for k, v in params.items())
    return (f"{name}({inner})" if inner else name) + (f"@{cutoff}" if cutoff is not None else "")


def _not_provided(value: Any) -> bool:
    return type(value).__name__ == "object" or repr(value).startswith("<object object")


DIFFERENCES = (
    ("RBP", "p = 0.8, as ir_measures' RBP; trec_eval's rbp (-m rbp) keeps 0.9; stored names "
            "always state p"),
    ("ERR", "grades over the topic's highest level; an ir_measures ERR object means "
            "ERR(max_grade=4), gdeval's"),
    ("Accuracy", "(a + d) / N; ir_measures' Accuracy (a relevant document ranked above a "
                 "non-relevant one) is another measure and its object is refused"),
)


def describe() -> list[str]:
    """What ``irbench measures`` says of ir_measures: its other spellings and the defaults
    or meanings that differ."""
    spellings = ", ".join(f"{name} = {family}" for name, family in sorted(ALIASES.items()))
    return ([f"ir_measures names (and measure objects) are read too: {spellings}; any name "
             "regardless of case when that leaves one measure (ndcg@10, p@10, map);",
             "judged_only=True means the condensed list, dcg='exp-log2' gain=exp, "
             "SetF(beta=b) set_F with b^2. Where irbench and ir_measures differ:"]
            + [f"  {name}: {text}" for name, text in DIFFERENCES])
