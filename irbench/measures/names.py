"""Measure names: the parser of canonical names and trec_eval's names, one module.

:func:`parse_measure` turns a canonical name (``nDCG(gain=exp)@10``) or a trec_eval output name
into a :class:`~irbench.measures.base.Measure`; nothing else parses measure names.

trec_eval's names: ``-m`` specifications, nicknames, output names and order.

``parse_trec_specs(["P.5,10", "all_trec"])`` returns ``(label, Measure)`` pairs in trec_eval's
print order (its ``te_trec_measures[]`` table), labels being trec_eval's output names
(``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``, ``rbp_p=0.5``). Parameters are read the
way trec_eval reads them: integer cutoffs with C ``atol`` (``P.2.9`` is ``P_2``), float cutoffs
with ``atof``, pairs as ``name=value``. As in trec_eval, the first ``-m`` that gives a measure
parameters decides them; a bare name or a nickname never resets them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import MeasureParameterError, UnknownMeasureError
from .base import REGISTRY, SPELLINGS, Measure, format_value
from .irmeasures import ALIASES, family_name, object_text, translate
from .prefs import PREFS_MEASURES


@dataclass(frozen=True)
class TrecFamily:
    """A trec_eval measure (or set of measures) and the irbench family computing it."""

    name: str
    family: str
    kind: str = "none"  # none | long_cutoffs | float_cutoffs | float_params | long_param | pairs
    param: str | None = None
    defaults: tuple = ()

    def param_value(self, value: Any) -> dict[str, Any]:
        """``{param: value}``, the keyword of ``Family.make`` for the kinds with a parameter."""
        if self.param is None:  # as **{None: value} would be
            raise TypeError(f"{self.name} takes no parameter")
        return {self.param: value}


_P_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = tuple(round(0.1 * i, 1) for i in range(11))

TREC_FAMILIES: dict[str, TrecFamily] = {
    f.name: f
    for f in (
        TrecFamily("runid", "RunId"),
        TrecFamily("num_q", "NumQ"),
        TrecFamily("num_ret", "NumRet"),
        TrecFamily("num_rel", "NumRel"),
        TrecFamily("num_rel_ret", "NumRelRet"),
        TrecFamily("map", "AP"),
        TrecFamily("gm_map", "GMAP"),
        TrecFamily("Rprec", "Rprec"),
        TrecFamily("bpref", "Bpref"),
        TrecFamily("recip_rank", "RR"),
        TrecFamily("iprec_at_recall", "iprec_at_recall", "float_cutoffs", "recall", _RECALL_POINTS),
        TrecFamily("P", "P", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("relstring", "relstring", "long_param", "n"),
        TrecFamily("recall", "R", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("infAP", "infAP"),
        TrecFamily("gm_bpref", "GMBpref"),
        TrecFamily("Rprec_mult", "Rprec_mult", "float_cutoffs", "mult",
                   tuple(round(0.2 * i, 1) for i in range(1, 11))),
        TrecFamily("utility", "utility", "float_params", "values"),
        TrecFamily("11pt_avg", "11pt_avg", "float_params", "values"),
        TrecFamily("binG", "binG"),
        TrecFamily("G", "G", "pairs"),
        TrecFamily("dcg", "DCG", "pairs"),
        TrecFamily("ideal_dcg", "IDCG", "pairs"),
        TrecFamily("ndcg", "nDCG", "pairs"),
        TrecFamily("ndcg_rel", "ndcg_rel", "pairs"),
        TrecFamily("Rndcg", "Rndcg", "pairs"),
        TrecFamily("ndcg_cut", "nDCG", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("map_cut", "AP", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("relative_P", "relative_P", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("success", "Success", "long_cutoffs", "cutoff", (1, 5, 10)),
        TrecFamily("set_P", "set_P"),
        TrecFamily("set_relative_P", "set_relative_P"),
        TrecFamily("set_recall", "set_recall"),
        TrecFamily("set_map", "set_map"),
        TrecFamily("set_F", "set_F", "float_params", "values"),
        TrecFamily("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
        *(TrecFamily(name, name) for name in PREFS_MEASURES),
        TrecFamily("map_avgjg", "AP_avgjg"),
        TrecFamily("P_avgjg", "P_avgjg", "long_cutoffs", "cutoff", _P_CUTS),
        TrecFamily("Rprec_mult_avgjg", "Rprec_mult_avgjg", "float_cutoffs", "mult",
                   tuple(round(0.2 * i, 1) for i in range(1, 11))),
        TrecFamily("rbp", "RBP", "pairs"),
        TrecFamily("rbp_resid", "rbp_resid", "pairs"),
        TrecFamily("unj", "unj", "long_cutoffs", "cutoff", (5, 10, 20)),
    )
}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
                 "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
                 "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
    "all_prefs": ("runid", "num_q", *PREFS_MEASURES),
    "prefs": ("runid", "num_q", *PREFS_MEASURES[:6]),
    # generated answers (canonical names: irbench.measures.answered)
    "support": tuple(f"support_{what}{params}" for params in (
        "", "(weight=hard)", "(citations=all)", "(weight=hard,citations=all)")
        for what in ("precision", "recall")),
    "nuggets": tuple(f"nugget_score{params}" for params in (
        "", "(strict=true)", "(importance=vital)", "(importance=vital,strict=true)",
        "(importance=weighted)", "(importance=weighted,strict=true)")),
    "answer": ("answer_sentences", "answer_words", "citations_per_sentence", "uncited_share",
               "distinct_references"),
}

_LONG_RE = re.compile(r"\s*([+-]?\d+)")
_FLOAT_RE = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def atol(text: str) -> int:
    """C ``atol``: the integer prefix of ``text``, 0 when there is none."""
    match = _LONG_RE.match(text)
    return int(match.group(1)) if match else 0


def atof(text: str) -> float:
    """C ``atof`` for decimal text: the number prefix of ``text``, 0 when there is none."""
    match = _FLOAT_RE.match(text)
    return float(match.group(1)) if match else 0.0


def _pairs(tf: TrecFamily, raw: str) -> dict:
    values: dict = {}
    gains = []
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        if not sep:
            raise MeasureParameterError(
                f"{tf.name}: malformed pair parameters in '{raw}' (expected name=value, "
                f"e.g. {tf.name}.p=0.8 or {tf.name}.1=0.5,2=3)"
            )
        if key == "p" and tf.family in ("RBP", "rbp_resid"):
            values["p"] = atof(value)
        else:
            gains.append(f"{key}:{format_value(atof(value))}")
    if gains:
        values["gains"] = ";".join(gains)
    return values


def _sorted_unique(tf: TrecFamily, values: list) -> list:
    values = sorted(values)
    if any(v <= 0 for v in values) and tf.kind == "long_cutoffs":
        raise MeasureParameterError(f"{tf.name}: cutoffs must be positive (got {values[0]})")
    if any(a == b for a, b in zip(values, values[1:])):
        raise MeasureParameterError(f"{tf.name}: duplicate cutoffs in {values}")
    return values


def expand(tf: TrecFamily, raw: str | None) -> list[tuple[str, Measure]]:
    """The (output label, measure) pairs one trec_eval measure name produces."""
    family = REGISTRY[tf.family]
    if tf.kind == "none":
        return [(tf.name, family.make())]
    if tf.kind in ("long_cutoffs", "float_cutoffs"):
        items = raw.split(",") if raw else [str(v) for v in tf.defaults]
        if tf.kind == "long_cutoffs":
            cuts = _sorted_unique(tf, [atol(x) for x in items])
            return [(f"{tf.name}_{k}", family.make(**tf.param_value(k))) for k in cuts]
        cuts = _sorted_unique(tf, [atof(x) for x in items])
        return [(f"{tf.name}_{x:3.2f}", family.make(**tf.param_value(x))) for x in cuts]
    label = tf.name if raw is None else f"{tf.name}_{raw}"
    if tf.kind == "float_params":
        if raw is None:
            return [(label, family.make())]
        listed = ",".join(format_value(atof(x)) for x in raw.split(","))
        return [(label, family.make(values=listed))]
    if tf.kind == "long_param":
        return [(label, family.make() if raw is None else family.make(**tf.param_value(atol(raw))))]
    values = {} if raw is None else _pairs(tf, raw)
    if tf.family == "RBP":
        values.setdefault("p", TREC_RBP_P)  # trec_eval's rbp; irbench's RBP is ir_measures'
    return [(label, family.make(**values))]


def parse_trec_specs(specs: list[str]) -> list[tuple[str, Measure]]:
    """Measures for trec_eval ``-m`` arguments (trec_eval names, nicknames or canonical names).

    All unknown names are reported together.
    """
    chosen: dict[str, str | None] = {}
    canonical: list[tuple[str, Measure]] = []
    unknown: list[str] = []
    for spec in specs:
        if spec in NICKNAMES:
            for name in NICKNAMES[spec]:
                if name in TREC_FAMILIES:
                    chosen.setdefault(name, None)
                elif all(m != parse_measure(name) for _, m in canonical):  # canonical
                    canonical.append((str(parse_measure(name)), parse_measure(name)))
            continue
        name, dot, raw = spec.partition(".")
        if name in TREC_FAMILIES:
            if dot and raw and chosen.get(name) is None:
                chosen[name] = raw
            else:
                chosen.setdefault(name, None)
            continue
        try:
            measure = parse_measure(spec)
        except UnknownMeasureError:
            unknown.append(unknown_message(spec))
            continue
        if all(m != measure for _, m in canonical):
            canonical.append((str(measure), measure))
    if unknown:
        raise UnknownMeasureError("\n".join(unknown))
    out: list[tuple[str, Measure]] = []
    for name, tf in TREC_FAMILIES.items():
        if name in chosen:
            out.extend(expand(tf, chosen[name]))
    return out + canonical


def parse_output_name(text: str) -> Measure | None:
    """The measure a trec_eval output name denotes (``P_10``, ``ndcg_cut_5``), or None."""
    for name in sorted(TREC_FAMILIES, key=len, reverse=True):
        tf = TREC_FAMILIES[name]
        if text == name:
            if tf.kind in ("long_cutoffs", "float_cutoffs"):
                return None
            return expand(tf, None)[0][1]
        if text.startswith(name + "_"):
            suffix = text[len(name) + 1 :]
            if tf.kind == "none" or not suffix:
                return None
            try:
                if tf.kind == "long_cutoffs":
                    return REGISTRY[tf.family].make(**tf.param_value(int(suffix)))
                if tf.kind == "float_cutoffs":
                    return REGISTRY[tf.family].make(**tf.param_value(float(suffix)))
            except (ValueError, MeasureParameterError):
                return None
            try:
                return expand(tf, suffix)[0][1]
            except MeasureParameterError:  # ndcg_cutt_10 is a misspelling, not pairs
                return None
    return None


# ---- canonical names ---------------------------------------------------------------------


TREC_RBP_P = 0.9  # trec_eval's default persistence for rbp (m_rbp.c)
_SPELLING_RE = re.compile(r"^[A-Za-z_][\w-]*")
_CANON_RE = re.compile(r"^(?P<name>[A-Za-z_][\w]*)(?:\((?P<params>[^()]*)\))?"
                       r"(?:@(?P<at>[^@()]+))?$")


def parse_measure(text) -> Measure:
    """Parse a canonical measure name (``nDCG(gain=exp)@10``), a trec_eval output name
    (``ndcg_cut_10``, ``iprec_at_recall_0.10``), an ir_measures name (``Judged@10``, ``SetP``,
    ``ndcg@10``) or an ir_measures measure object into a :class:`Measure`; see
    :mod:`irbench.measures.irmeasures` for ir_measures' names and meanings."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        if not hasattr(text, "NAME"):
            raise UnknownMeasureError(f"not a measure name or an ir_measures measure: "
                                      f"{text!r}")
        text = object_text(text)
    text = text.strip().replace("α_", "alpha_", 1)
    head = _SPELLING_RE.match(text)
    if head and head.group(0) in SPELLINGS:
        text = SPELLINGS[head.group(0)] + text[head.end():]
    match = _CANON_RE.match(text)
    exact = match and (match.group("name") in REGISTRY or match.group("name") in ALIASES)
    if match and exact:
        return _make(match)
    measure = parse_output_name(text)
    if measure is not None:
        return measure
    if match and family_name(match.group("name")) is not None:  # ir_measures: any case
        return _make(match)
    raise UnknownMeasureError(unknown_message(text))


def measure_list(measures) -> list:
    """``measures`` as a list, refusing a bare string: iterated, ``"AP"`` would be the
    measures ``A`` and ``P``. Every public function taking ``measures`` asks this first."""
    if isinstance(measures, (str, bytes)):
        text = measures.decode() if isinstance(measures, bytes) else measures
        raise UnknownMeasureError(f"measures must be a list of measure names, not the string "
                                  f"{text!r}: write [{text!r}]")
    return list(measures)


def _make(match: re.Match) -> Measure:
    name = family_name(match.group("name"))
    if name is None:  # callers check the name first
        raise UnknownMeasureError(unknown_message(match.string))
    family = REGISTRY[name]
    values: dict[str, Any] = {}
    if match.group("params"):
        for item in match.group("params").split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                key, _, value = item.partition("=")
                values[key.strip()] = value.strip()
            else:
                positional = [p for p in family.params if p.positional]
                if not positional:
                    raise MeasureParameterError(f"{family.name}: unexpected {item!r}")
                values[positional[0].name] = item
    name, values = translate(family.name, values)
    family = REGISTRY[name]
    if match.group("at") is not None:
        if family.cutoff is None:
            raise MeasureParameterError(f"{family.name} takes no @cutoff")
        values[family.cutoff] = match.group("at")
    return family.make(**values)


def unknown_message(text: str) -> str:
    known = sorted(set(REGISTRY) | set(TREC_FAMILIES) | set(NICKNAMES))
    base = text.split("@")[0].split("(")[0].split(".")[0]
    import difflib  # here: only an unknown name needs it (see LAZY_IMPORTS)

    close = difflib.get_close_matches(base, known, n=3, cutoff=0.6)
    rest = text[len(base):] if text.startswith(base) else ""
    hint = f" (did you mean {' or '.join(c + rest for c in close)}?)" if close else ""
    return f"unknown measure '{text}'{hint}; 'irbench measures' lists them all"
