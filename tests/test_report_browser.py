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
    assert "<img" not in dom
