"""Issue 38's smaller points: judged@k beside the share of the retrieved documents judged, the
MAP-GMAP scatter's labels, the recall-precision colours, dir(irbench.stats), section numbers
in comments, and which command needs which extra."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# ---- dir(irbench.stats): every export, still imported lazily ---------------------------------

def test_dir_of_irbench_stats_lists_its_exports_without_importing_them():
    code = ("import sys, irbench.stats as s\n"
            "names = dir(s)\n"
            "print('scipy' in sys.modules, 'irbench.stats.paired' in sys.modules)\n"
            "print(' '.join(names))\n"
            "print(' '.join(s.__all__))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    lazy, names, exported = out.stdout.splitlines()
    assert lazy == "False False"  # dir() imported nothing
    names, exported = names.split(), exported.split()
    assert {"compare", "paired_test", "mean_intervals", "Scores", "describe"} <= set(exported)
    assert set(exported) <= set(names)
    assert "import_module" not in names  # no helper of the package offered as its own
    assert names == sorted(names)


def test_every_name_irbench_stats_lists_resolves():
    import irbench.stats as stats

    for name in stats.__all__:
        assert getattr(stats, name) is not None, name
    assert set(stats.__all__) <= set(dir(stats))


# ---- section numbers named in comments and code are the report's sections -------------------

SECTION_REFERENCE = re.compile(  # 'section 6c', 'sections 6 and 7', '(6b)'; not 'section 8.4'
    r"\bsections? (\d[a-d]?)(?!\.?\d)(?:(?:,| and) (\d[a-d]?)(?!\.?\d))?|\((\d[a-d])\)")


def _report_sections() -> set[str]:
    """The numbers of the report's sections, read from the templates' headings."""
    templates = ROOT / "irbench" / "report" / "templates"
    return {m for page in templates.glob("*.html")
            for m in re.findall(r"<h2[^>]*>(\d[a-d]?)\. ", page.read_text())}


def _references(text: str) -> set[str]:
    return {n for match in SECTION_REFERENCE.findall(text) for n in match if n}


def test_the_reports_sections_are_found():
    assert {"1", "5", "6", "6b", "6c", "6d", "8"} <= _report_sections()


def test_every_section_named_in_configs_code_and_readme_exists():
    """The demo config's comment said (5b) for the reduction experiment, section 6b."""
    sections = _report_sections()
    files = [*(ROOT / "configs").glob("*.yaml"), ROOT / "README.md",
             *(p for p in (ROOT / "irbench").rglob("*") if p.suffix in (".py", ".html"))]
    wrong = {f"{p.relative_to(ROOT)}: {n}" for p in files
             for n in _references(p.read_text()) if n not in sections}
    assert wrong == set()
    assert "(6b)" in (ROOT / "configs" / "demo.yaml").read_text()


def test_the_reference_pattern_finds_what_it_should():
    assert _references("the experiment (5b); sections 6 and 7; section 6c does; a book's "
                       "section 8.4") == {"5b", "6", "7", "6c"}
