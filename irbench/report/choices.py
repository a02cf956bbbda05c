"""What the report is about, chosen from the config: the focus measure (of the significance
matrix, the per-topic section and the run pages) and the run pages' file names."""

from __future__ import annotations

import re


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
