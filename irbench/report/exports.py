"""The leaderboard as CSV, Markdown, JSON or LaTeX (overview-paper style)."""

from __future__ import annotations

import csv
import io
import json

from ..stats import escape_latex
from .context import Leaderboard

EXPORT_FORMATS = ("csv", "markdown", "json", "latex")


def export_leaderboard(board: Leaderboard, fmt: str) -> str:
    """``board`` in ``fmt`` (one of :data:`EXPORT_FORMATS`)."""
    return _EXPORTERS[fmt](board)


def _records(board: Leaderboard) -> list[dict]:
    out = []
    for row in board.rows:
        record = {"rank": row.rank, "system": row.name, "group": row.group, "type": row.type,
                  "official": row.official, "baseline": row.baseline}
        for m, cell in zip(board.measures, row.cells):
            record[m] = cell.value
            record[f"{m} 95% ci"] = cell.ci
            record[f"{m} vs baseline"] = cell.mark
            record[f"{m} p adjusted"] = cell.p_adjusted
        out.append(record)
    return out


def _csv(board: Leaderboard) -> str:
    records = _records(board)
    buf = io.StringIO()
    if records:
        writer = csv.DictWriter(buf, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
    return buf.getvalue()


def _json(board: Leaderboard) -> str:
    return json.dumps({"qrels": board.qrels, "topics": board.topics, "baseline": board.baseline,
                       "significance": board.test, "systems": _records(board)},
                      indent=1, ensure_ascii=False) + "\n"


def _markdown(board: Leaderboard) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    head = ["rank", "system", "group", *board.measures]
    lines = ["| " + " | ".join(cell(h) for h in head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
    for row in board.rows:
        values = [f"**{c.text}**{c.mark}" if c.best else f"{c.text}{c.mark}" for c in row.cells]
        lines.append("| " + " | ".join([str(row.rank), cell(row.name), cell(row.group),
                                         *values]) + " |")
    return "\n".join(lines) + "\n"


def _latex(board: Leaderboard) -> str:
    cols = "rl" + "r" * len(board.measures)
    lines = [r"\begin{tabular}{" + cols + "}", r"\toprule",
             " & ".join(["", "System", *[escape_latex(m) for m in board.measures]]) + r" \\",
             r"\midrule"]
    for row in board.rows:
        cells = []
        for c in row.cells:
            text = rf"\textbf{{{c.text}}}" if c.best else c.text
            if c.mark:
                text += r"\textsuperscript{" + ("+" if c.mark == "▲" else "-") + "}"
            cells.append(text)
        name = escape_latex(row.name) + (r" (baseline)" if row.baseline else "")
        lines.append(" & ".join([str(row.rank), name, *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              "% +/-: significantly above/below the baseline; " + board.test.replace("%", r"\%")]
    return "\n".join(lines) + "\n"


_EXPORTERS = {"csv": _csv, "markdown": _markdown, "json": _json, "latex": _latex}
