"""The leaderboard as CSV, Markdown, JSON or LaTeX (overview-paper style)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from ..escaping import csv_cell, markdown_cell
from ..stats import escape_latex
from .contract import Leaderboard, Significance

EXPORT_FORMATS = ("csv", "markdown", "json", "latex")


def export_significance(sig: Significance, fmt: str) -> str:
    """The all-pairs table of ``sig``: one row per ordered pair (row system vs column system)
    with the adjusted p-value, mean difference and effect size, as ``fmt``; LaTeX and
    Markdown give the matrix of adjusted p-values."""
    pairs = []
    for i, a in enumerate(sig.systems):
        for j, b in enumerate(sig.systems):
            cell = sig.matrix[i][j]
            if i != j and cell.text:
                pairs.append({"measure": sig.measure, "system_a": a, "system_b": b,
                              "p_adjusted": cell.p, "mean_diff": cell.diff,
                              "effect_size": cell.effect})
    if fmt == "json":
        return json.dumps({"measure": sig.measure, "test": sig.test, "groups": list(sig.groups),
                           "pairs": pairs}, indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=["measure", "system_a", "system_b",
                                                 "p_adjusted", "mean_diff", "effect_size"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_cell(v) for k, v in pair.items()} for pair in pairs)
        return buf.getvalue()
    n = len(sig.systems)
    if fmt == "markdown":
        lines = ["| | " + " | ".join(str(k) for k in range(1, n + 1)) + " |",
                 "|" + "---|" * (n + 1)]
        for i, a in enumerate(sig.systems):
            lines.append(f"| {i + 1}. {markdown_cell(a)} | "
                         + " | ".join(c.text for c in sig.matrix[i]) + " |")
        return "\n".join(lines) + "\n"
    lines = [r"\begin{tabular}{l" + "r" * n + "}", r"\toprule",
             " & ".join([""] + [str(k) for k in range(1, n + 1)]) + r" \\", r"\midrule"]
    for i, a in enumerate(sig.systems):
        cells = [rf"\textbf{{{c.text}}}" if c.text and c.p <= 0.05 else c.text
                 for c in sig.matrix[i]]
        lines.append(" & ".join([f"{i + 1}. {escape_latex(a)}", *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              f"% adjusted p-values, {escape_latex(sig.measure)}; bold: <= 0.05; "
              + escape_latex(sig.test)]
    return "\n".join(lines) + "\n"


def export_leaderboard(boards: Leaderboard | Sequence[Leaderboard], fmt: str) -> str:
    """``boards`` (one leaderboard per suite, or one) in ``fmt`` (one of
    :data:`EXPORT_FORMATS`): CSV and JSON one record per suite and system with a ``suite``
    column, Markdown and LaTeX one table per suite."""
    if isinstance(boards, Leaderboard):
        boards = (boards,)
    return _EXPORTERS[fmt](tuple(boards))


def _records(board: Leaderboard) -> list[dict]:
    out = []
    for row in board.rows:
        record = {"suite": board.suite, "rank": row.rank, "system": row.name,
                  "group": row.group, "type": row.type, "official": row.official,
                  "pooled": row.pooled, "baseline": row.baseline}
        for m, cell in zip(board.measures, row.cells):
            record[m] = cell.value
            record[f"{m} ci low"] = cell.low  # the page's interval, unrounded
            record[f"{m} ci high"] = cell.high
            record[f"{m} ci method"] = cell.interval
            record[f"{m} vs baseline"] = cell.mark
            record[f"{m} p adjusted"] = cell.p_adjusted
        out.append(record)
    return out


def _csv(boards: tuple[Leaderboard, ...]) -> str:
    """One row per suite and system; the columns of every suite's measures (empty in the
    rows of a suite without that measure)."""
    records = [r for board in boards for r in _records(board)]
    buf = io.StringIO()
    if records:
        head = list(dict.fromkeys(k for r in records for k in r))
        writer = csv.DictWriter(buf, fieldnames=head, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_cell(v) for k, v in record.items()} for record in records)
    return buf.getvalue()


def _json(boards: tuple[Leaderboard, ...]) -> str:
    first = boards[0]
    return json.dumps({"qrels": first.qrels, "topics": first.topics,
                       "baseline": first.baseline, "significance": first.test,
                       "interval": first.interval,
                       "suites": [{"suite": b.suite, "measures": list(b.measures),
                                   "ranked_by": b.measures[0] if b.measures else None,
                                   "lower_is_better": list(b.lower_better),
                                   "interval": b.interval} for b in boards],
                       "systems": [r for b in boards for r in _records(b)]},
                      indent=1, ensure_ascii=False) + "\n"


def _title(board: Leaderboard) -> str:
    return (f"Suite '{board.suite}' on qrels '{board.qrels}' ({board.topics} topics), ranked "
            f"by {board.measures[0] if board.measures else '-'}")


def _markdown(boards: tuple[Leaderboard, ...]) -> str:
    lines: list[str] = []
    for board in boards:
        if len(boards) > 1 or board.suite:
            lines += [f"**{markdown_cell(_title(board))}**", ""]
        head = ["rank", "system", "group", *board.measures]
        lines += ["| " + " | ".join(markdown_cell(h) for h in head) + " |",
                  "|" + "|".join("---" for _ in head) + "|"]
        for row in board.rows:
            values = [(f"**{c.text}**{c.mark}" if c.best else f"{c.text}{c.mark}")
                      + (" " + markdown_cell(c.ci).replace("*", "\\*") if c.ci else "")
                      for c in row.cells]
            lines.append("| " + " | ".join([str(row.rank), markdown_cell(row.name),
                                             markdown_cell(row.group),
                                             *values]) + " |")
        lines += ["", "Beside each mean: " + markdown_cell(board.interval).replace("*", "\\*")
                  + ".", ""]
    return "\n".join(lines[:-1]) + "\n"


def _latex(boards: tuple[Leaderboard, ...]) -> str:
    return "\n".join(_latex_one(board, len(boards) > 1 or bool(board.suite)) for board in boards)


def _latex_one(board: Leaderboard, titled: bool) -> str:
    cols = "rll" + "r" * len(board.measures)
    lines = ([f"% {escape_latex(_title(board))}"] if titled else []) + [
        r"\begin{tabular}{" + cols + "}", r"\toprule",
        " & ".join(["", "System", "Group", *[escape_latex(m) for m in board.measures]])
        + r" \\",
        r"\midrule"]
    for row in board.rows:
        cells = []
        for c in row.cells:
            text = rf"\textbf{{{c.text}}}" if c.best else c.text
            if c.mark:
                text += r"\textsuperscript{" + ("+" if c.mark == "▲" else "-") + "}"
            cells.append(text)
        name = escape_latex(row.name) + (r" (baseline)" if row.baseline else "")
        lines.append(" & ".join([str(row.rank), name, escape_latex(row.group), *cells]) + r" \\")
        if any(c.ci for c in row.cells):  # the intervals below the means, as on the page
            lines.append(" & ".join(["", "", "", *(r"{\footnotesize " + escape_latex(c.ci) + "}"
                                                   if c.ci else "" for c in row.cells)])
                         + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              "% +/-: significantly above/below the baseline; " + escape_latex(board.test),
              "% below each mean: " + escape_latex(board.interval)]
    return "\n".join(lines) + "\n"


_EXPORTERS = {"csv": _csv, "markdown": _markdown, "json": _json, "latex": _latex}


def export_overview(tables, which: str, fmt: str) -> str:
    """An overview table (``which``: 'rankings', the runs ranked within each run type or other
    report.rank_by field; 'groups', the best run of each group) as ``fmt``."""
    measure = tables.measure
    if which == "groups":
        head = ["rank", "group", "system", measure, "overall"]
        records = [[r.rank, r.group, r.name, r.value, r.overall] for r in tables.best_per_group]
    else:
        head = ["field", "value", "rank", "system", "group", measure, "overall"]
        records = [[t.field, t.value, r.rank, r.name, r.group, r.value, r.overall]
                   for t in tables.rankings for r in t.rows]
    if fmt == "json":  # values as numbers, as the leaderboard's JSON has them
        column = head.index(measure)
        rows = [dict(zip(head, r[:column] + [_number(r[column])] + r[column + 1:]))
                for r in records]
        return json.dumps({"measure": measure, "table": which, "rows": rows},
                          indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([csv_cell(h) for h in head])
        writer.writerows([csv_cell(v) for v in r] for r in records)
        return buf.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(markdown_cell(h) for h in head) + " |",
                 "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(markdown_cell(str(v)) for v in r) + " |" for r in records]
        return "\n".join(lines) + "\n"
    lines = [r"\begin{tabular}{" + "".join("r" if h in ("rank", "overall", measure) else "l"
                                           for h in head) + "}", r"\toprule",
             " & ".join(escape_latex(h) for h in head) + r" \\", r"\midrule"]
    previous = None
    for r in records:
        if which == "rankings" and previous is not None and r[:2] != previous:
            lines.append(r"\midrule")
        previous = r[:2]
        lines.append(" & ".join(escape_latex(str(v)) for v in r) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              f"% ranked by {escape_latex(measure)}; overall: the rank on the whole leaderboard"]
    return "\n".join(lines) + "\n"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
