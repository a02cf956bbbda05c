"""Formatting evaluations: trec_eval's exact text layout, and TSV/CSV/JSON rows."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable

from .evaluate import Evaluation
from .measures import Measure


def trec_value(kind: str, value: Any) -> str:
    """A value as trec_eval prints it: ``%ld`` counts, ``%6.4f`` floats, -nan for NaN."""
    if kind == "int":
        return str(int(value))
    if kind == "str":
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "  -nan"
    return f"{value:6.4f}"


def _label_line(label: str, topic: str, text: str) -> str:
    return f"{label:<22s}\t{topic}\t{text}\n"


def trec_lines(
    evaluation: Evaluation,
    labelled: list[tuple[str, Measure]],
    per_topic: bool,
    summary: bool = True,
    prefix: str = "",
) -> Iterable[str]:
    """Yield trec_eval's output lines for ``evaluation`` (``-q`` when ``per_topic``)."""
    if per_topic:
        for i, topic in enumerate(evaluation.topics):
            for label, measure in labelled:
                family = measure.definition
                if family.aggregate in ("summary", "gmean"):
                    continue
                value = evaluation.values[measure][i]
                text = f"'{value}'" if family.name == "relstring" else trec_value(family.kind, value)
                yield prefix + _label_line(label, topic, text)
    if summary:
        for label, measure in labelled:
            family = measure.definition
            if family.aggregate == "none":
                continue
            text = trec_value(family.kind, evaluation.summaries[measure])
            yield prefix + _label_line(label, "all", text)


def rows(
    evaluations: list[Evaluation], labelled: list[tuple[str, Measure]], per_topic: bool
) -> Iterable[dict]:
    """Flat records ``{run, topic, measure, value}`` for machine-readable output."""
    for ev in evaluations:
        for label, measure in labelled:
            family = measure.definition
            if per_topic and family.aggregate not in ("summary", "gmean"):
                for topic, value in zip(ev.topics, ev.values[measure]):
                    yield {"run": ev.run_name, "topic": topic, "measure": label,
                           "value": _plain(family.kind, value)}
            if family.aggregate != "none":
                yield {"run": ev.run_name, "topic": "all", "measure": label,
                       "value": _plain(family.kind, ev.summaries[measure])}


def _plain(kind: str, value: Any) -> Any:
    if kind == "int":
        return int(value)
    if kind == "str":
        return str(value)
    value = float(value)
    return None if math.isnan(value) else value


def format_rows(records: Iterable[dict], fmt: str) -> str:
    records = list(records)
    if fmt == "json":
        return json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(["run", "topic", "measure", "value"])
    for rec in records:
        value = rec["value"]
        writer.writerow([rec["run"], rec["topic"], rec["measure"],
                         "" if value is None else repr(value) if isinstance(value, float) else value])
    return buf.getvalue()
