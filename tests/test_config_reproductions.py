"""A config's reproductions: (issue 42): read into typed records, its problems placed
FILE:LINE, and irbench repro CONFIG over them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from repro_runs import make_runs

from irbench.config import load_config
from irbench.errors import ConfigError

HEAD = """collection:
  qrels: {official: qrels.txt, other: qrels.txt}
systems:
  - {name: base, run: baseline.run}
  - {name: adv, run: advanced.run}
  - {name: base-rep, run: reproduced_baseline.run}
  - {name: adv-rep, run: reproduced_advanced.run}
suites: {main: [AP, P@10]}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("conf")
    make_runs(root)
    return root


def _write(folder, name, text):
    path = folder / name
    path.write_text(HEAD + text)
    return path


@pytest.mark.timeout(60)
def test_reproductions_are_typed_records(folder):
    path = _write(folder, "good.yaml", """reproductions:
  - name: again
    baseline: {original: base, reproduced: base-rep}
    advanced: {original: adv, reproduced: adv-rep}
  - name: elsewhere
    kind: replicated
    qrels: {reproduced: other}
    baseline: {original: base, reproduced: base-rep}
    measures: [P@10]
""")
    config = load_config(path)
    again, elsewhere = config.reproductions
    assert (again.name, again.kind, again.baseline.original, again.advanced.reproduced) == (
        "again", "reproduced", "base", "adv-rep")
    assert again.measures == ("AP",)  # the first suite's first measure
    assert elsewhere.qrels == (None, "other") and elsewhere.advanced is None
    assert again.line == 10


@pytest.mark.timeout(60)
def test_problems_are_placed(folder):
    path = _write(folder, "bad.yaml", """reproductions:
  - name: a
    baseline: {original: base, reproduced: nobody}
    advanced: {original: base, reproduced: adv-rep}
    measures: [AP, XX@10]
  - name: b
    kind: replicated
    baseline: {original: base, reproduced: base-rep}
  - name: c
    baseline: {original: base, reproduced: base}
    measures: [ER(AP)]
  - name: d
    kind: sometimes
    baseline: {original: base, reproduced: base-rep}
    collections: {original: x, reproduced: y}
""")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = "\n".join(caught.value.problems)
    for line, what in ((11, "no system 'nobody'"), (12, "the same system 'base' as the "
                       "baseline's"), (13, "unknown measure 'XX@10'"),
                       (15, "a replicated reproduction is on other topics"),
                       (18, "the same system 'base' twice"),
                       (19, "compares the advanced run's improvement"),
                       (21, "must be reproduced or replicated"),
                       (23, "only a config with collections:")):
        assert f"{path}:{line}: " in text and what in text, (line, what, text)


@pytest.mark.timeout(300)
def test_repro_config_equals_repro_files(folder):
    path = _write(folder, "run.yaml", """reproductions:
  - name: again
    baseline: {original: base, reproduced: base-rep}
    advanced: {original: adv, reproduced: adv-rep}
    measures: [AP, KTU@10]
""")
    def run(*argv):
        done = subprocess.run([sys.executable, "-m", "irbench", "repro", *map(str, argv)],
                              capture_output=True, text=True, timeout=180, cwd=folder)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["reproductions"][0]["values"]
    from_config = run(path, "again", "--format", "json")
    from_files = run("--qrels", "qrels.txt", "--orig-baseline", "baseline.run",
                     "--repro-baseline", "reproduced_baseline.run", "--orig-advanced",
                     "advanced.run", "--repro-advanced", "reproduced_advanced.run", "-m", "AP",
                     "-m", "KTU@10", "--format", "json")
    assert [(v["measure"], v["run"], v["value"]) for v in from_config] == [
        (v["measure"], v["run"], v["value"]) for v in from_files]
    done = subprocess.run([sys.executable, "-m", "irbench", "repro", str(path), "nothing"],
                          capture_output=True, text=True, timeout=180, cwd=folder)
    assert done.returncode != 0 and "no reproduction 'nothing'" in done.stderr
