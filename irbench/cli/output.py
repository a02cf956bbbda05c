"""Formatting evaluations: trec_eval's exact text layout, and TSV/CSV/JSON rows."""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import re
import sys
from collections.abc import Iterable
from typing import Any

from ..errors import UsageError
from ..escaping import csv_cell, json_text, terminal
from ..measures import Measure, summarise
from ..measures.base import sequential_sum
from ..measures.compute import Evaluation


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
    zscored: bool = False,
) -> Iterable[str]:
    """Yield trec_eval's output lines for ``evaluation`` (``-q`` when ``per_topic``).

    ``zscored``: the values are z-scores (see :func:`zscore`), printed as trec_eval -Z does,
    as floats under the name ``Z<name>``; runid and relstring stay as they are.
    """
    def head(label: str, measure: Measure) -> tuple[str, str]:
        family = measure.definition
        if zscored and family.kind != "str":
            return "Z" + f"{label:<22s}", "float"
        return label, family.kind

    if per_topic:
        for i, topic in enumerate(evaluation.topics):
            for label, measure in labelled:
                family = measure.definition
                if family.aggregate in ("summary", "gmean"):
                    continue
                name, kind = head(label, measure)
                value = evaluation.values[measure][i]
                text = f"'{value}'" if family.name == "relstring" else trec_value(kind, value)
                yield prefix + _label_line(name, topic, text)
    if summary:
        for label, measure in labelled:
            family = measure.definition
            if family.aggregate == "none":
                continue
            name, kind = head(label, measure)
            yield prefix + _label_line(name, "all", trec_value(kind, evaluation.summaries[measure]))


def zscore(
    evaluation: Evaluation,
    labelled: list[tuple[str, Measure]],
    table: dict[tuple[str, str], tuple[float, float]],
    ranked,
) -> Evaluation:
    """Per-topic values standardised as trec_eval -Z does: (value - mean)/sd from ``table``
    keyed by (topic, trec_eval name); 0 when sd is 0 or the pair is not in the table.
    Summaries are recomputed from the z-scores with each measure's own aggregation."""
    from dataclasses import replace

    import numpy as np


    values, summaries = dict(evaluation.values), dict(evaluation.summaries)
    for label, measure in labelled:
        family = measure.definition
        if family.kind == "str":
            continue
        stats = np.array([table.get((t, label), (0.0, 0.0)) for t in evaluation.topics])
        mean, sd = stats[:, 0], stats[:, 1]
        raw = np.asarray(evaluation.values[measure], dtype=np.float64)
        z = np.zeros(len(raw))
        np.divide(raw - mean, sd, out=z, where=sd != 0)
        values[measure] = z
        if family.aggregate == "sum":  # trec_eval adds the z-scores as doubles
            summaries[measure] = sequential_sum(z)
        else:
            summaries[measure] = float(summarise(measure, z, ranked))
    return replace(evaluation, values=values, summaries=summaries)


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
    import csv  # here, as json: irbench eval's trec_eval format needs neither (2 ms)
    import json

    records = list(records)
    if fmt == "json":
        return json_text(json.dumps(records, ensure_ascii=False, indent=1)) + "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(["run", "topic", "measure", "value"])
    for rec in records:
        value = rec["value"]
        writer.writerow([csv_cell(rec["run"]), csv_cell(rec["topic"]), rec["measure"],
                         "" if value is None else repr(value) if isinstance(value, float) else
                         csv_cell(value)])
    return buf.getvalue()


def write_text(path: str | None, text: str) -> None:
    """``text`` to the file ``path``, or to stdout when ``path`` is None."""
    if path is None:
        sys.stdout.write(text)
        return
    from ..files import write_file  # here: tempfile is not irbench eval's to import

    try:
        write_file(path, text)  # a failure leaves the previous file as it was
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror}); nothing was "
                         "changed there") from None


# ---- text tables and JSON values shared by the commands ------------------------------------


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")


def plain(text: str) -> str:
    """Docstring text as ``--help`` shows it: Sphinx roles (:func:`x`, :class:`~a.B`) and
    inline literals written plainly."""
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2),
                     text)
    return text.replace("``", "")


def cell(value: Any) -> str:
    """A table cell: '-' for nothing, 4 decimals for floats, 'nan' for NaN; control and
    format characters of participants' text shown as ``\\xNN`` and ``\\uNNNN`` (tabs and
    newlines too, so that the columns line up; see irbench.escaping)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return terminal(str(value))


def text_table(header, rows, left: int = 1, numbers_only: bool = True) -> str:
    """Columns padded to their widest cell under a dashed rule: the first ``left`` columns
    flush left, the others flush right (with ``numbers_only``, only cells that read as
    numbers; the rest flush left)."""
    cells = [[terminal(h) for h in header]] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for i, row in enumerate(cells):
        lines.append("  ".join(
            c.ljust(w) if j < left or (numbers_only and not _numeric(c)) else c.rjust(w)
            for j, (c, w) in enumerate(zip(row, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1 (a count, a depth, a top k)."""
    return _whole(text, 1, "a positive integer")


def nonnegative_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 0 (a seed, a limit that may be 0)."""
    return _whole(text, 0, "a whole number >= 0")


def seconds(text: str) -> float:
    """An argparse ``type``: a time in seconds, 0 or more (``inf``: no limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, not {text}")
    return value


def _whole(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {what}, not {value}")
    return value


def json_value(value: Any) -> Any:
    """``value`` as JSON can hold it: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def warn_stale(store, qrels: str) -> None:
    """Say on stderr when qrels set ``qrels`` failed at the last ``irbench run``: what the
    store shows for it are its last good results, kept until the set reads again."""
    record = store.qrels_records().get(qrels)
    if record is not None and record.get("status") == "failed":
        reason = (record.get("error") or "").splitlines()
        print(f"irbench: warning: qrels '{qrels}' failed at the last 'irbench run'"
              f"{': ' + reason[0] if reason else ''}; these are its last good results",
              file=sys.stderr)


def add_wait(parser) -> None:
    """``--wait SECONDS`` for a command that opens the store (default: 30 s when it only
    reads, 0 when it writes; see irbench.store.READER_WAIT)."""
    parser.add_argument("--wait", type=seconds, default=None, metavar="SECONDS",
                        help="how long to wait for another irbench holding the store "
                        "(default: 30 s to read it, 0 to write it)")


@contextlib.contextmanager
def progress_bar(unit: str, shown: bool = True):
    """A :class:`ProgressBar` for the ``with`` block when stderr is a terminal (and ``shown``),
    else None; closed however the block ends."""
    bar = ProgressBar(unit) if shown and sys.stderr.isatty() else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


class ProgressBar:
    """A tqdm bar on stderr for long work (``irbench run``, ``irbench report``), created on
    the first report (when the total is known); a new total starts a new bar."""

    def __init__(self, unit: str = "step"):
        self.bar: Any = None  # a tqdm bar (tqdm has no type stubs)
        self.unit = unit
        self.total: int | None = None

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.bar is None or total != self.total:
            from tqdm import tqdm

            self.close()
            # the bar's own carriage returns go to the terminal as they are; its text is
            # escaped here (a system's name)
            self.bar, self.total = tqdm(total=total, unit=self.unit, leave=False,
                                        file=getattr(sys.stderr, "unescaped", sys.stderr)
                                        ), total
        self.bar.set_postfix_str(terminal(what[:40]), refresh=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
