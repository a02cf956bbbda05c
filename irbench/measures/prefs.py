"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``): families that read the
per-topic values :class:`irbench.judgments.preferences.PreparedPrefs` attaches to a ranked run under
:data:`PREFS_KEY` (definitions in :mod:`irbench.judgments.preferences`). On ordinary qrels they are
an :class:`EvaluationError`."""

from __future__ import annotations

import numpy as np

from ..errors import EvaluationError
from .base import Family, register

PREFS_KEY = "preferences"
PREFS_COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
PREFS_MEASURES = PREFS_COUNTS + (
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
_DESCRIPTIONS = {
    "prefs_num_prefs_poss": "preferences possible (all judgment groups)",
    "prefs_num_prefs_ful": "preferences fulfilled, including implied ones",
    "prefs_num_prefs_ful_ret": "preferences fulfilled with both documents retrieved",
    "prefs_simp": "preferences fulfilled / possible",
    "prefs_pair": "mean over document pairs of the share of preferences fulfilled",
    "prefs_avgjg": "fulfilled / possible per judgment group, averaged over groups",
    "prefs_avgjg_Rnonrel": "prefs_avgjg with as many non-relevant documents as relevant ones",
}


def _reader(name: str):
    def compute(ranked, measure) -> np.ndarray:
        def refuse():
            raise EvaluationError(f"{name} needs preference judgments: irbench eval -R prefs "
                                  "(qid jg jsg docno rel_level) or -R qrels_prefs")

        return ranked.cached(PREFS_KEY, refuse)[name]

    return compute


def _description(name: str) -> str:
    base = name.removesuffix("_ret").removesuffix("_imp")
    text = _DESCRIPTIONS.get(name) or _DESCRIPTIONS[base]
    if name.endswith("_ret") and name not in _DESCRIPTIONS:
        text += ", both documents retrieved"
    elif name.endswith("_imp"):
        text += ", at least one document retrieved"
    return f"{text} (trec_eval {name})"


for _name in PREFS_MEASURES:
    register(Family(_name, _description(_name), _reader(_name),
                    aggregate="sum" if _name in PREFS_COUNTS else "mean",
                    kind="int" if _name in PREFS_COUNTS else "float",
                    canonical_fn=lambda m: m.family, needs="preferences"))
