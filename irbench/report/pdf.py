"""Pages printed to PDF by headless Chromium (``irbench report --participants-pdf``): one PDF
per run page, as the page prints (A4 landscape, the page's own print style).

Chromium is found as ``$IRBENCH_CHROMIUM``, else ``chromium``, ``chromium-browser``,
``google-chrome`` on the PATH. Each page is printed by its own headless process with an empty
profile, no network beyond the file, a few at a time; a PDF is written under a temporary name
and renamed, so a killed print never leaves half a file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import OutputError

NAMES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 120  # seconds for one page


def chromium() -> str | None:
    """The headless browser to print with, or None."""
    chosen = os.environ.get("IRBENCH_CHROMIUM")
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return next((path for path in map(shutil.which, NAMES) if path), None)


def _print(browser: str, page: Path, pdf: Path) -> str | None:
    """Print ``page`` to ``pdf``; None, or why it failed."""
    with tempfile.TemporaryDirectory(prefix="irbench-chromium-") as profile:
        part = pdf.with_name(f".{pdf.name}.part")
        try:
            proc = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", f"--user-data-dir={profile}",
                 "--no-pdf-header-footer", f"--print-to-pdf={part}", page.as_uri()],
                capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            part.unlink(missing_ok=True)
            return f"{page.name}: Chromium did not finish within {TIMEOUT} s"
        except OSError as exc:
            return f"{page.name}: cannot start {browser} ({exc.strerror})"
        if proc.returncode != 0 or not part.is_file() or part.stat().st_size == 0:
            part.unlink(missing_ok=True)
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1][:300]
            return f"{page.name}: Chromium exited {proc.returncode} ({last})"
        os.replace(part, pdf)
    return None


def print_pages(pages: list[Path], workers: int | None = None, progress=None) -> list[Path]:
    """Print each HTML page to a PDF beside it (``name.pdf``); the PDFs written.
    ``progress(done, total, what)`` hears of each page printed. Raises OutputError naming
    every page that failed, or saying how to get Chromium."""
    browser = chromium()
    if browser is None:
        raise OutputError("--participants-pdf prints with headless Chromium, which is not on "
                          "this machine: install it (Debian: apt-get install chromium) or set "
                          "IRBENCH_CHROMIUM to its path; the HTML run pages were written")
    pdfs = [page.with_suffix(".pdf") for page in pages]
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    problems = []
    with ThreadPoolExecutor(workers) as pool:
        for done, problem in enumerate(pool.map(_print, [browser] * len(pages), pages, pdfs), 1):
            if problem:
                problems.append(problem)
            if progress is not None:
                progress(done, len(pages), pages[done - 1].name)
    if problems:
        raise OutputError("could not print every run page to PDF:\n  " + "\n  ".join(problems))
    return pdfs
