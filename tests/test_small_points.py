"""Issue 38's smaller points: judged@k beside the share of the retrieved documents judged, the
MAP-GMAP scatter's labels, the recall-precision colours, dir(irbench.stats), section numbers
in comments, and which command needs which extra."""

from __future__ import annotations

import os
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
