"""Save a 1280px-wide screenshot of a report for review (needs Debian's chromium).

    python bench/screenshot_report.py reports/demo/index.html report.png
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no chromium: apt-get install chromium", file=sys.stderr)
        return 1
    page, png = Path(args[0]).resolve(), Path(args[1]).resolve()
    return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1280,4200",
                           f"--screenshot={png}", page.as_uri()]).returncode


if __name__ == "__main__":
    sys.exit(main())
