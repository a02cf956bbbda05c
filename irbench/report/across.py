"""The report's page over the collections of a config with ``collections:``
(``reports/<name>/index.html``, beside each collection's own report in
``reports/<name>/<collection>/``): for the focus measure (and, with
``report.leaderboard_suites``, every measure of those suites) the systems x collections table
with significant wins and losses marked, mean, mean rank, W/T/L and the random-effects
meta-analysis against the baseline (:func:`irbench.notebook.compare_views`, the numbers of
``irbench compare --across``), a forest plot per system, and a link to each collection's
report. Computed from the store alone; every name is participant text, escaped by Jinja2."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote

from ..errors import OutputError
from ..files import replacing
from ..notebook import compare_views
from ..stats.across import Across, SystemAcross
from ..store import Store
from . import figures
from .choices import focus_measure
from .fields import documented
from .figures import Figure
from .leaderboard import shown_suites
from .render import OWNER, claim, environment

_f = documented


@dataclass(frozen=True, kw_only=True)
class AcrossCell:
    """One system's mean on one collection."""

    text: str = _f("the mean over the collection's topics, 4 decimals, or '-' (not "
                   "evaluated on it)")
    mark: str = _f("'▲' / '▼' significantly better / worse than the baseline on this "
                   "collection (adjusted p <= alpha), else ''")
    title: str = _f("tooltip: the mean difference to the baseline and the adjusted p-value, "
                    "printed, or ''")


@dataclass(frozen=True, kw_only=True)
class AcrossRow:
    """One system over the collections."""

    name: str = _f("system name (participant text)")
    baseline: bool = _f("the baseline the others are compared with")
    cells: tuple[AcrossCell, ...] = _f("one per collection, in the table's collection order")
    mean: str = _f("the mean over the collections it was evaluated on, 4 decimals")
    mean_rank: str = _f("its mean rank over those collections (1 the best), 2 decimals")
    wtl: str = _f("'wins/ties/losses' against the baseline over the collections, '' for the "
                  "baseline or without one")
    effect: str = _f("the combined random-effects effect against the baseline, '+0.0000', "
                     "or '-'")
    ci: str = _f("its 95% confidence interval '[+low, +high]', or '-'")
    p: str = _f("the combined effect's two-sided p-value, 4 decimals, or '-'")
    tau2: str = _f("tau^2, the between-collection variance (DerSimonian-Laird), 6 decimals, "
                   "or '-'")
    i2: str = _f("I^2, the share of the effects' spread beyond chance, as a percentage with "
                 "1 decimal, or '-'")
    q: str = _f("Cochran's Q, 3 decimals, or '-'")
    forest: str = _f("the id of its forest plot on the page, or '' (none)")
    cost: str = _f("what making its run cost, a system given as a command: 'S s/topic, M MiB' "
                   "(wall seconds per topic averaged over the collections, the largest peak "
                   "memory), else ''", default="")


@dataclass(frozen=True)
class Forest:
    """One system's forest plot."""

    system: str = _f("system name (participant text)")
    anchor: str = _f("the plot's id on the page (safe text)")
    figure: Figure = _f("the per-collection effects with their 95% intervals and the "
                        "combined random-effects diamond, drawn by matplotlib (.svg inline)")


@dataclass(frozen=True, kw_only=True)
class AcrossTable:
    """The comparison across the collections on one measure."""

    measure: str = _f("canonical measure name")
    anchor: str = _f("the table's id on the page (safe text)")
    collections: tuple[str, ...] = _f("the collections with scores, config order (config "
                                      "text)")
    rows: tuple[AcrossRow, ...] = _f("systems by mean over the collections, best first")
    baseline: str = _f("the baseline system (marked baseline: true), or '' (no tests, no "
                       "meta-analysis)")
    how: str = _f("how the systems were compared, in words")
    notes: tuple[str, ...] = _f("collections left out and meta-analyses not made, and why")
    forests: tuple[Forest, ...] = _f("a forest plot per system against the baseline, best "
                                     "first")
    costs: bool = _f("some system was given as a command: the table shows what its run "
                     "cost", default=False)


@dataclass(frozen=True, kw_only=True)
class CollectionLink:
    """One collection's own report."""

    name: str = _f("the collection's name (config text)")
    href: str = _f("its report's index.html, relative to this page")


@dataclass(frozen=True, kw_only=True)
class AcrossPage:
    """Everything ``across.html`` shows."""

    title: str = _f("the campaign's title: report.title, else its name (config text)")
    generated_at: str = _f("when the page was made (UTC)")
    qrels: str = _f("the qrels set compared on (each collection's first)")
    collections: tuple[CollectionLink, ...] = _f("every collection, config order")
    tables: tuple[AcrossTable, ...] = _f("the focus measure's first, then the leaderboard "
                                         "suites' other measures")
    figures: tuple[Figure, ...] = _f("every forest plot of the page, for --figures")


ACROSS_TYPES = (AcrossCell, AcrossRow, Forest, AcrossTable, CollectionLink, AcrossPage)


def shown_measures(config) -> list[str]:
    """The focus measure, then (only with ``report.leaderboard_suites``) the other measures
    of those suites that the first qrels set takes, each once."""
    out = [focus_measure(config)]
    if config.report.leaderboard_suites:
        spec = config.qrels[0]
        for suite in shown_suites(config):
            out += [str(m) for m in spec.measures(config.suites[suite]) if str(m) not in out]
    return out


def stored_baseline(views, wait: float | None) -> str | None:
    """The one system marked ``baseline: true`` at the last ``irbench run`` of the
    collections (None: none or several), read from the store as every report section does."""
    marked = set()
    for view in views:
        with Store(view.store, scope=view.scope, read_only=True, wait=wait) as store:
            marked |= {s.name for s in store.declared_systems() if s.baseline}
    return marked.pop() if len(marked) == 1 else None


def across_page(views, seed: int = 0, wait: float | None = None) -> AcrossPage:
    """The page over the collections of ``views`` (:func:`irbench.config.load_configs`)."""
    first = views[0]
    baseline = stored_baseline(views, wait)
    tables = []
    for k, measure in enumerate(shown_measures(first)):
        result = compare_views(views, measure, baseline=baseline, seed=seed, wait=wait)
        tables.append(_table(result, k))
    return AcrossPage(
        title=first.report.title or first.name,
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        qrels=first.qrels[0].name,
        collections=tuple(CollectionLink(name=v.scope, href=f"{quote(v.scope)}/index.html")
                          for v in views),
        tables=tuple(tables),
        figures=tuple(f.figure for t in tables for f in t.forests))


def _num(value: float | None, digits: int = 4, sign: bool = False) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _table(result: Across, k: int) -> AcrossTable:
    rows, forests = [], []
    for i, s in enumerate(result.systems):
        forest = _forest(result, s, f"forest-{k + 1}-{i + 1}")
        if forest is not None:
            forests.append(forest)
        rows.append(_row(result, s, forest.anchor if forest else ""))
    how = (f"against {result.baseline}: a {result.test} test per collection, "
           f"{result.correction} over every system and collection, alpha {result.alpha:g}; "
           f"a random-effects meta-analysis of the {result.effect} mean difference per "
           "collection (DerSimonian-Laird)" if result.baseline else
           "no baseline marked in the config (baseline: true): means and ranks only")
    return AcrossTable(measure=result.measure, anchor=f"measure-{k + 1}",
                       collections=result.collections, rows=tuple(rows),
                       baseline=result.baseline or "", how=how, notes=result.notes,
                       forests=tuple(forests),
                       costs=any(s.seconds_per_topic is not None for s in result.systems))


def _row(result: Across, s: SystemAcross, forest: str) -> AcrossRow:
    cells = []
    for j, c in enumerate(result.collections):
        test = next((t for t in s.tests if t.collection == c), None)
        cells.append(AcrossCell(
            text=_num(s.means[j]),
            mark={"win": "▲", "loss": "▼"}.get(test.outcome, "") if test else "",
            title=(f"{_num(test.mean_diff, sign=True)} against {result.baseline}, adjusted "
                   f"p {_num(test.p_adjusted)}" if test else "")))
    m = s.meta
    return AcrossRow(
        name=s.name, baseline=s.name == result.baseline, cells=tuple(cells),
        mean=_num(s.mean), mean_rank=_num(s.mean_rank, 2),
        wtl=f"{s.wins}/{s.ties}/{s.losses}" if result.baseline and s.name != result.baseline
        else "",
        effect=_num(m.effect, sign=True) if m else "-",
        ci=f"[{_num(m.ci_low, sign=True)}, {_num(m.ci_high, sign=True)}]" if m else "-",
        p=_num(m.p_value) if m else "-", tau2=_num(m.tau2, 6) if m else "-",
        i2=f"{m.i2 * 100:.1f}%" if m and not math.isnan(m.i2) else "-",
        q=_num(m.q, 3) if m else "-", forest=forest,
        cost=f"{s.seconds_per_topic:.3f} s/topic, {(s.peak_rss_bytes or 0) / 2**20:.0f} MiB"
        if s.seconds_per_topic is not None else "")


def _forest(result: Across, s: SystemAcross, anchor: str) -> Forest | None:
    m = s.meta
    if m is None or not m.collections:
        return None
    kind = "standardised mean difference" if m.kind == "smd" else "mean difference"
    figure = figures.forest(
        anchor, [(c.name, c.effect, c.ci_low, c.ci_high, c.weight) for c in m.collections],
        (m.effect, m.ci_low, m.ci_high), f"{result.measure}: {kind} against the baseline",
        f"{s.name} against {result.baseline}")
    return Forest(s.name, anchor, figure)


def write_across(page: AcrossPage, folder: str, *, campaign: str, config_path: str,
                 force: bool = False) -> str:
    """Write ``folder/index.html`` (replaced whole, never half-written), the folder claimed
    for the campaign (:func:`irbench.report.render.claim`); its path."""
    claim(folder, campaign, config_path, force)
    text = environment().get_template("across.html").render(p=page)
    path = os.path.join(folder, "index.html")
    try:
        os.makedirs(folder, exist_ok=True)
        with replacing(os.path.join(folder, OWNER)) as fh:
            json.dump({"campaign": campaign, "config": os.path.abspath(config_path)}, fh)
        with replacing(path) as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot write the report ({exc.strerror})") from None
    return path
