"""The measures page (docs/measures.md), generated from the registry: ``irbench measures
--markdown``. A test fails when the page in the repository is stale."""

from __future__ import annotations

from .. import judgments
from ..stats.repro import KTU_VARIANTS, RBO_VARIANTS
from .base import REGISTRY, Family
from .irmeasures import ALIASES, DIFFERENCES
from .names import NICKNAMES, TREC_FAMILIES
from .reproduction import LEVELS, REPRO

AGGREGATES = {"mean": "mean over topics", "sum": "sum over topics",
              "gmean": "geometric mean (values floored at 1e-5)",
              "none": "per topic only", "summary": "one value for the run"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _trec_names(family: Family) -> str:
    names = sorted(name for name, tf in TREC_FAMILIES.items() if tf.family == family.name)
    return ", ".join(f"`{n}`" for n in names)


def _params(family) -> str:
    out = []
    for p in family.params:
        default = "none" if p.default is None else repr(p.default)
        choices = f"; one of {', '.join(map(repr, p.choices))}" if p.choices else ""
        at = " (written @k)" if p.name == family.cutoff else ""
        out.append(f"`{p.name}`{at}: {p.type.__name__}, default {default}{choices}: {p.desc}")
    return "<br>".join(out)


def _kinds(family: Family) -> str:
    return ", ".join(k.name for k in judgments.KINDS.values() if family.needs in k.serves)


def _reproducibility() -> list[str]:
    """The reproducibility measures (irbench.measures.reproduction): of two runs, not one."""
    lines = ["", "## Reproducibility measures (`irbench repro`)", "",
             "They compare an original run with its reproduction (or an original (baseline, "
             "advanced) pair with the reproduced pair), as repro_eval 0.5.0 computes them: "
             "`irbench repro` and a config's `reproductions:` take them, `irbench eval` does "
             "not. A family of per-topic scores takes an effectiveness measure's name in "
             "parentheses: `RMSE(AP)`, `ER(nDCG@10)`; a bare effectiveness measure stands for "
             "every such family of the reproduction's kind.", "",
             "| family | what | good when | level | parameters | kinds |",
             "|---|---|---|---|---|---|"]
    for f in REPRO.values():
        params = _params(f) if f.params else ("an effectiveness measure, e.g. "
                                              f"`{f.name}(AP)`" if f.of_measure else "-")
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{f.name}`", f.description, f.better, f"{f.level}: {LEVELS[f.level]}", params,
            ", ".join(f.kinds))) + " |")
    lines += ["", "| variant | how |", "|---|---|"]
    for family, variants in (("KTU", KTU_VARIANTS), ("RBO", RBO_VARIANTS)):
        lines += [f"| `{family}(variant={v.name})` | {_cell(v.description)} |"
                  for v in variants.values()]
    return lines


def markdown() -> str:
    """The measures page: every family with its parameters, aggregation, the judgments it
    needs, its trec_eval names and citation; then trec_eval's nicknames."""
    lines = [
        "# Measures",
        "",
        "Generated from the measure registry by `irbench measures --markdown > "
        "docs/measures.md`; do not edit by hand. A measure's canonical name (the key in the "
        "store and the report) is its family name with the parameters that differ from "
        "their defaults, e.g. `nDCG(gain=exp)@10`, `P(rel=2)@5`, `RR@10`.",
        "",
        "| family | what | parameters | over topics | judgments (kinds) | trec_eval | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in sorted(REGISTRY, key=str.lower):
        f = REGISTRY[name]
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{f.name}`", f.description, _params(f) or "-", AGGREGATES[f.aggregate],
            f"{f.needs} ({_kinds(f)})", _trec_names(f) or "-", f.citation or "-")) + " |")
    lines += _reproducibility()
    lines += ["", "## trec_eval's nicknames (`-m NAME`)", "",
              "| nickname | measures |", "|---|---|"]
    for nick in sorted(NICKNAMES):
        lines.append(f"| `{nick}` | {_cell(', '.join(NICKNAMES[nick]))} |")
    lines += ["", "## ir_measures names and objects", "",
              "ir_measures' spellings and measure objects mean what they mean in ir_measures "
              "(`irbench/measures/irmeasures.py`); "
              "tests/test_measures_ir_measures_parity.py checks the values against ir_measures.",
              "", "| ir_measures | irbench |", "|---|---|"]
    for name, family in sorted(ALIASES.items()):
        lines.append(f"| `{name}` | `{family}` |")
    lines += ["", "| where they differ | |", "|---|---|"]
    for name, text in DIFFERENCES:
        lines.append(f"| `{name}` | {_cell(text)} |")
    return "\n".join(lines) + "\n"
