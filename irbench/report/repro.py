"""The report's reproductions section (4b): for each entry of the config's
``reproductions:``, the table of reproducibility measures (what each says and which values
are good) and, for each effectiveness measure's RMSE, the per-topic chart of original -
reproduced scores (RMSE is their root mean square). The numbers are those ``irbench repro
CONFIG --format json`` prints (:func:`irbench.stats.reproduction.config_reproductions`).

Unlike the rest of the report this section reads the systems' run files: KTU and RBO compare
rankings, which the store does not keep. A run file that cannot be read leaves the section
with the reason instead of its tables."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import load_configs
from ..errors import IrbenchError
from ..measures.reproduction import parse_repro_measure
from ..stats.reproduction import config_reproductions
from .fields import documented
from .svg import BarChart, differences

_f = documented


@dataclass(frozen=True, kw_only=True)
class ReproRow:
    """One value of a reproducibility measure."""

    measure: str = _f("the measure's canonical name (RMSE(AP), KTU@1000)")
    run: str = _f("baseline or advanced (that run against its reproduction), or effect (the "
                  "advanced run's improvement over the baseline, original against reproduced)")
    value: str = _f("the value, 4 decimals ('-' when undefined)")
    exact: str = _f("the value as JSON writes it (repr of the float, 'NaN', 'Infinity')")
    level: str = _f("what level it measures (rankings, scores, effect, test)")
    says: str = _f("one line: what the measure says")
    better: str = _f("which values say the reproduction succeeded")


@dataclass(frozen=True, kw_only=True)
class ReproChart:
    """The per-topic chart of one RMSE value."""

    measure: str = _f("the RMSE's name, e.g. RMSE(AP)")
    run: str = _f("baseline or advanced")
    rmse: str = _f("the RMSE, 4 decimals")
    chart: BarChart = _f("original - reproduced per topic (templated SVG bars)")


@dataclass(frozen=True, kw_only=True)
class ReproTable:
    """One reproduction of the config."""

    name: str = _f("the reproduction's name (config text)")
    kind: str = _f("reproduced (same topics) or replicated (other topics)")
    pairs: tuple[tuple[str, str, str], ...] = _f("(baseline or advanced, original system, "
                                                 "reproducing system): system names are "
                                                 "participant text")
    rows: tuple[ReproRow, ...] = _f("every value, in the order computed")
    charts: tuple[ReproChart, ...] = _f("one per RMSE value")


@dataclass(frozen=True, kw_only=True)
class ReproSection:
    """Section 4b."""

    tables: tuple[ReproTable, ...] = _f("one per reproduction on this collection")
    problem: str = _f("why the section could not be computed (a run file missing, ...), "
                      "else ''")


REPRO_TYPES = (ReproRow, ReproChart, ReproTable, ReproSection)


def _number(value: float) -> str:
    return "-" if value != value else f"{value:.4f}"


def _exact(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


def _table(result) -> ReproTable:
    rows, charts = [], []
    for v in result.values:
        family = parse_repro_measure(v.measure).definition
        rows.append(ReproRow(measure=v.measure, run=v.run, value=_number(v.value),
                             exact=_exact(v.value), level=family.level,
                             says=family.description, better=family.better))
        if family.name == "RMSE":
            charts.append(ReproChart(
                measure=v.measure, run=v.run, rmse=_number(v.value),
                chart=differences(f"{result.name}: {v.measure} of the {v.run}: original - "
                                  f"reproduced per topic", "original - reproduced",
                                  list(v.topics), v.per_topic)))
    pairs = [("baseline", *result.baseline)]
    if result.advanced is not None:
        pairs.append(("advanced", *result.advanced))
    return ReproTable(name=result.name, kind=result.kind, pairs=tuple(pairs),
                      rows=tuple(rows), charts=tuple(charts))


def reproduction_section(config) -> ReproSection | None:
    """Section 4b of ``config`` (a collection's view), None without ``reproductions:``."""
    if not config.reproductions:
        return None
    try:
        views = load_configs(config.path, strict=True)
        results = [r for r in config_reproductions(views)
                   if not config.several or r.collection == config.scope]
    except IrbenchError as exc:
        return ReproSection(tables=(), problem=str(exc))
    return ReproSection(tables=tuple(_table(r) for r in results), problem="")
