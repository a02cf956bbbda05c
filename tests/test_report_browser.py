"""The report in a real browser: headless Chromium renders it with no console message."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from campaigns import make_campaign

from irbench import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian package "
                    "'chromium'; .ci/run installs it where it can)")
def test_report_renders_without_console_errors(tmp_path):
    path = make_campaign(tmp_path, systems=4, extra_qrels=False)
    text = path.read_text().replace("  - glob: ../runs/r*.txt",
                                    "  - glob: ../runs/r0[0-2].txt\n"
                                    "  - {name: '<img src=x onerror=alert(1)>', "
                                    "run: ../runs/r03.txt, baseline: true}")
    path.write_text(text)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--dump-dom", (out / "index.html").as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == []
    dom = proc.stdout
    assert 'id="leaderboard"' in dom and "&lt;img src=x onerror=alert(1)&gt;" in dom
    # a run name is isolated for bidi: an override in it cannot reorder the text after it
    assert "<bdi>&lt;img src=x onerror=alert(1)&gt;</bdi>" in dom
    assert "<img" not in dom


WIDE = ("core: [AP, nDCG@10, P@10, GMAP, Bpref, RR, Rprec, R@100, infAP, judged@10, "
        "AP(condensed), nDCG(condensed)@10, Bpref(ten), P@5, P@20, nDCG@20]")

MEASURE_WIDTHS = """
<script>
// Each table's scrolling box must fit the page; the result goes into the DOM for the test.
window.addEventListener("load", function () {
  var page = document.documentElement.clientWidth, wide = [];
  document.querySelectorAll("table").forEach(function (t, i) {
    var box = t.closest(".scroll") || t;  // a table outside a scrolling box must fit itself
    if (box.offsetParent !== null && box.getBoundingClientRect().right > page + 1)
      wide.push(i + ":" + Math.round(box.getBoundingClientRect().right));
  });
  document.body.setAttribute("data-wide", wide.join(",") || "none");
});
</script>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_no_table_is_wider_than_the_screen_and_print_keeps_every_measure(tmp_path):
    """On a 1366 px screen every table scrolls inside its own box; printed (A4 landscape),
    the leaderboard's measures are split over several tables, so every one of 16 measure
    names is in the PDF's text."""
    pypdf = pytest.importorskip("pypdf")
    path = make_campaign(tmp_path, systems=6, suites=WIDE, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    page = out / "index.html"
    probe = out / "probe.html"
    probe.write_text(page.read_text().replace("</body>", MEASURE_WIDTHS + "</body>"))
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--window-size=1366,900", "--virtual-time-budget=5000",
                           "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'data-wide="none"' in proc.stdout
    pdf = tmp_path / "report.pdf"
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert pdf.exists(), proc.stderr[-2000:]
    reader = pypdf.PdfReader(str(pdf))
    text = "\n".join(p.extract_text() for p in reader.pages)
    measures = [m.strip() for m in WIDE.split("[")[1].rstrip("]").split(",")]
    missing = [m for m in measures if m not in text]
    assert missing == []
    width, height = (float(v) for v in reader.pages[0].mediabox[2:])
    assert width > height  # A4 landscape


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_a_screenshot_shows_the_charts(tmp_path):
    """Chromium's screenshot of the page holds the charts' first two series colours (blue
    and vermillion, figures.PALETTE): the inline SVG figures render."""
    image = pytest.importorskip("PIL.Image")  # matplotlib's own dependency
    path = make_campaign(tmp_path, systems=5, extra_qrels=False)
    assert cli.main(["run", "--workers", "1", "--quiet", str(path)]) == 0
    out = tmp_path / "rep"
    assert cli.main(["report", str(path), "--out", str(out)]) == 0
    png = tmp_path / "page.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1366,9000", f"--screenshot={png}",
                    (out / "index.html").as_uri()], capture_output=True, timeout=120)
    import numpy as np

    pixels = np.asarray(image.open(png).convert("RGB")).reshape(-1, 3).astype(int)
    from irbench.report.figures import PALETTE

    for colour in (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in PALETTE[:2]):
        near = np.abs(pixels - np.array(colour)).sum(axis=1) < 30
        assert near.sum() > 200, colour
