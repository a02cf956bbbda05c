"""Pages printed to PDF by headless Chromium (``irbench report --participants-pdf`` and
``--appendix-pdf``): one PDF per run page, as the page prints (A4 landscape, the page's own
print style), and the appendix bound from them (:func:`bind`, pypdf).

Chromium is found as ``$IRBENCH_CHROMIUM``, else ``chromium``, ``chromium-browser``,
``google-chrome`` on the PATH. Each page is printed by its own headless process with an empty
profile, no network beyond the file, a few at a time, each within :data:`TIMEOUT` seconds; a
PDF is written under a temporary name and renamed, so a killed print never leaves half a file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
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


def _print(browser: str, page: Path, pdf: Path, label: str = "") -> str | None:
    """Print ``page`` to ``pdf``; None, or why it failed (named by ``label``, else the page's
    file name). Chromium runs in its own process group, so a timeout ends its helpers too and
    nothing keeps the call waiting past :data:`TIMEOUT`."""
    label = label or page.name
    with tempfile.TemporaryDirectory(prefix="irbench-chromium-") as profile:
        part = pdf.with_name(f".{pdf.name}.part")
        log = Path(profile) / "stderr.txt"
        try:
            with open(log, "w", encoding="utf-8", errors="replace") as err:
                proc = subprocess.Popen(
                    [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-quic", f"--user-data-dir={profile}",
                     "--no-pdf-header-footer", f"--print-to-pdf={part}", page.as_uri()],
                    stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                    start_new_session=True)
        except OSError as exc:
            return f"{label}: cannot start {browser} ({exc.strerror})"
        try:
            returncode = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            _end(proc)
            part.unlink(missing_ok=True)
            return f"{label}: Chromium did not finish within {TIMEOUT} s"
        if returncode != 0 or not part.is_file() or part.stat().st_size == 0:
            part.unlink(missing_ok=True)
            text = log.read_text(encoding="utf-8", errors="replace")[-20000:]
            last = (text.strip().splitlines() or ["no message"])[-1][:300]
            return f"{label}: Chromium exited {returncode} ({last})"
        os.replace(part, pdf)
    return None


def _end(proc: subprocess.Popen) -> None:
    """Kill the process group of a Chromium that has not exited (its own group, from
    ``start_new_session``; the group id is its pid, not yet reaped), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def print_pages(pages: list[Path], workers: int | None = None, progress=None, *,
                into: Path | None = None, labels: list[str] | None = None) -> list[Path]:
    """Print each HTML page to a PDF beside it (``name.pdf``), or into folder ``into``; the
    PDFs written, in order. ``labels`` name the pages in messages (a run's name); ``progress
    (done, total, what)`` hears of each page printed. Raises OutputError naming every page
    that failed, or saying how to get Chromium."""
    browser = chromium()
    if browser is None:
        raise OutputError("printing the run pages to PDF needs headless Chromium, which is not "
                          "on this machine: install it (Debian: apt-get install chromium) or "
                          "set IRBENCH_CHROMIUM to its path; the HTML run pages were written")
    pdfs = [(into / page.name if into else page).with_suffix(".pdf") for page in pages]
    names = labels or [page.name for page in pages]
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    problems = []
    with ThreadPoolExecutor(workers) as pool:
        for done, problem in enumerate(pool.map(_print, [browser] * len(pages), pages, pdfs,
                                                names), 1):
            if problem:
                problems.append(problem)
            if progress is not None:
                progress(done, len(pages), names[done - 1])
    if problems:
        raise OutputError("could not print every run page to PDF:\n  " + "\n  ".join(problems))
    return pdfs


def binder():
    """The pypdf module, or an OutputError saying how to install it."""
    try:
        import pypdf
    except ModuleNotFoundError:
        raise OutputError("the appendix PDF is bound with pypdf: pip install "
                          "'irbench[report]'") from None
    return pypdf


def page_count(pdf: Path) -> int:
    """How many pages a PDF printed here has."""
    return len(binder().PdfReader(str(pdf)).pages)


def bind(parts: list[Path], out: Path, outline: Sequence[tuple[str, int]] = ()) -> int:
    """Write the pages of ``parts``, in order, as one PDF ``out`` (under a temporary name,
    renamed); ``outline``: (title, 0-based page) bookmarks. Returns the number of pages."""
    pypdf = binder()
    writer = pypdf.PdfWriter()
    for part in parts:
        for page in pypdf.PdfReader(str(part)).pages:
            writer.add_page(page)
    for title, at in outline:
        writer.add_outline_item(title=title, page_number=at)
    temporary = out.with_name(f".{out.name}.part")
    try:
        with open(temporary, "wb") as fh:
            writer.write(fh)
        os.replace(temporary, out)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise OutputError(f"{out}: cannot write the appendix PDF ({exc.strerror})") from None
    return len(writer.pages)
