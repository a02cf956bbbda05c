"""What the report is about, chosen from the config: the focus measure (of the significance
matrix, the per-topic section and the run pages) and the run pages' file names."""

from __future__ import annotations

import re

from .. import judgments

SUPPORT, NUGGETS = "support", "nuggets"  # the measure needs of the answer sets' two kinds


def focus_measure(config) -> str:
    """The measure of the significance matrix, per-topic section and participant pages:
    ``report.measure``, else the first suite's first measure that the first qrels set takes."""
    if config.report.measure is not None:
        return str(config.report.measure)
    suite = next(iter(config.suites.values()))
    return str((config.qrels[0].measures(suite) or suite)[0])


def run_page_names(names) -> dict[str, str]:
    """A safe, unique file name per system name (participant text): letters, digits, '.',
    '_' and '-' kept, anything else '_', never hidden, never 'index'."""
    out, used = {}, {"index.html"}
    for name in names:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:100].lstrip(".") or "run"
        candidate, k = f"{base}.html", 1
        while candidate.lower() in used:
            k += 1
            candidate = f"{base}-{k}.html"
        used.add(candidate.lower())
        out[name] = candidate
    return out


def answer_sets(config) -> list:
    """The config's qrels sets of answer judgments (kinds that score answer runs alone), in
    config order."""
    return [q for q in config.qrels if "run" not in judgments.kind(q.kind).scores]


def serving(config, need: str):
    """The first answer judgment set whose kind computes measures needing ``need``
    (:data:`SUPPORT`, :data:`NUGGETS`), or None."""
    return next((q for q in answer_sets(config) if need in judgments.kind(q.kind).serves),
                None)
