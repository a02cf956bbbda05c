"""The appendix as one PDF (``irbench report --appendix-pdf FILE``): a contents page (run,
group, rank, page) and then every run page in rank order on the report's focus measure.

Each run page is printed by :func:`.pdf.print_pages` (the printing ``--participants-pdf``
does: headless Chromium, a timeout per page, a failure named by its run), the contents page
the same way once the run pages' lengths are known, and the PDFs bound with pypdf, a bookmark
per run. Nothing is written at FILE unless every page printed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutputError
from . import pdf
from .fields import documented
from .render import environment

_f = documented


@dataclass(frozen=True)
class ContentsEntry:
    """One run in the appendix's contents."""

    rank: int = _f("its rank on the report's focus measure")
    system: str = _f("the run's name (participant text)")
    group: str = _f("its group (participant text), or ''")
    mean: str = _f("its mean on the focus measure, printed")
    page: int = _f("the appendix page its run page starts on")


APPENDIX_TYPES = (ContentsEntry,)


def write_appendix(pages, folder: Path, out: Path, *, title: str, generated_at: str,
                   printed: dict[str, Path] | None = None, progress=None) -> tuple[int, int]:
    """Print the run pages ``pages`` (:class:`.runpages.Participant`, their HTML in
    ``folder``) and bind them, in rank order after a contents page, into ``out``; ``printed``:
    {file: PDF} of pages already printed (``--participants-pdf``). Returns (pages in the PDF,
    contents pages)."""
    if not out.parent.is_dir():  # said before minutes of printing, not after
        raise OutputError(f"{out}: no folder {out.parent} to write the appendix PDF into")
    pdf.binder()  # pypdf, or how to install it
    ranked = sorted(pages, key=lambda p: (p.rank, p.system))
    with tempfile.TemporaryDirectory(prefix="irbench-appendix-") as work:
        temporary = Path(work)
        known = printed or {}
        todo = [p for p in ranked if p.file not in known]
        fresh = pdf.print_pages([folder / p.file for p in todo], progress=progress,
                                into=temporary, labels=[p.system for p in todo])
        parts = {**known, **{p.file: path for p, path in zip(todo, fresh)}}
        runs = [parts[p.file] for p in ranked]
        lengths = [pdf.page_count(path) for path in runs]
        contents, first = _contents(ranked, lengths, temporary, title, generated_at)
        outline = [("Contents", 0)] + [(p.system, at - 1) for p, at in zip(ranked, first)]
        total = pdf.bind([contents, *runs], out, outline)
        return total, pdf.page_count(contents)


def _contents(ranked, lengths: list[int], work: Path, title: str, generated_at: str
              ) -> tuple[Path, list[int]]:
    """The contents page printed (its PDF) and the first page of each run; printed again
    when the page numbers assumed for its own length were wrong (once is enough: its length
    depends on the number of rows only)."""
    template = environment().get_template("appendix.html")
    html = work / "contents.html"
    assumed = 1
    for _ in range(3):
        first, at = [], assumed + 1
        for length in lengths:
            first.append(at)
            at += length
        entries = [ContentsEntry(rank=p.rank, system=p.system, group=p.group, mean=p.mean,
                                 page=page) for p, page in zip(ranked, first)]
        html.write_text(template.render(entries=entries, title=title, generated_at=generated_at,
                                        measure=ranked[0].measure if ranked else "",
                                        pages=at - 1), encoding="utf-8")
        (printed,) = pdf.print_pages([html], workers=1, labels=["the contents page"])
        length = pdf.page_count(printed)
        if length == assumed:
            break
        assumed = length
    return printed, first
