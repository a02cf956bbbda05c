"""One printed page per run and the appendix PDF (issue 38), in a real headless Chromium; the
PDFs read back with poppler-utils (pdfinfo, pdftotext, pdftoppm).

- the demo (25 topics) and a simulated campaign of 50 topics and 41 runs: every run page
  prints on exactly one A4 landscape page; 150 topics: on two at most;
- ``--appendix-pdf FILE``: runs + contents pages, the contents listing every run in rank order
  with the page it is on, each run's page holding its name and its summary counts, which
  equal trec_eval's num_ret, num_rel, num_rel_ret (counted here from the qrels and run files);
- a Chromium that hangs on one page: the report ends within the timeout with a message
  naming that run, and no appendix is written.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from campaigns import copy_demo

from irbench import cli
from irbench.report import pdf

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
POPPLER = all(shutil.which(tool) for tool in ("pdfinfo", "pdftotext", "pdftoppm"))
browser = pytest.mark.skipif(CHROMIUM is None or not POPPLER,
                             reason="needs chromium and poppler-utils (Debian packages)")


def pages_of(path: Path) -> int:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def page_texts(path: Path) -> list[str]:
    """The text of each page (pdftotext separates pages with a form feed)."""
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return out.split("\f")[:pages_of(path)]


def trec_eval_counts(qrels: Path, run: Path, level: int = 1) -> tuple[int, int, int]:
    """num_ret, num_rel, num_rel_ret summed over topics as trec_eval -c computes them, counted
    from the files: documents retrieved on qrels topics; qrels lines with relevance >= level;
    retrieved documents judged relevant."""
    relevant, topics = set(), set()
    for line in qrels.read_text().splitlines():
        if line.strip():
            topic, _, doc, rel = line.split()[:4]
            topics.add(topic)
            if int(rel) >= level:
                relevant.add((topic, doc))
    retrieved = {(f[0], f[2]) for f in map(str.split, run.read_text().splitlines())
                 if f and f[0] in topics}
    return len(retrieved), len(relevant), len(retrieved & relevant)


def printed_counts(text: str) -> tuple[int, int, int]:
    found = re.search(r"retrieved\s+(\d+)\s*·\s*relevant\s+(\d+)\s*·\s*relevant\s+retrieved"
                      r"\s+(\d+)", " ".join(text.split()))
    assert found, text[:600]
    return tuple(int(g) for g in found.groups())


def ranked_runs(report: Path) -> list[str]:
    """The runs in rank order, as systems/index.html lists them."""
    html = (report / "systems" / "index.html").read_text()
    rows = re.findall(r"<tr><td>(\d+)</td><td><a href=\"[^\"]+\">([^<]+)</a>", html)
    return [name for _, name in sorted(rows, key=lambda r: int(r[0]))]


def check_appendix(appendix: Path, report: Path) -> tuple[int, list[str]]:
    """Runs + contents pages, the contents in rank order with the right page numbers, each
    run on its own page; (contents pages, page texts)."""
    runs = ranked_runs(report)
    texts = page_texts(appendix)
    contents = [k for k, t in enumerate(texts) if "appendix, one page per run" in t]
    assert contents == list(range(len(contents))) and contents, "contents first"
    assert len(texts) == len(runs) + len(contents)  # one page per run
    listed = re.findall(r"^\s*(\d+)\s+(\S+)\s+\S+\s+[\d.]+\s+(\d+)\s*$",
                        "\n".join(texts[:len(contents)]), re.M)
    assert [name for _, name, _ in listed] == runs  # every run, in rank order
    assert [int(rank) for rank, _, _ in listed] == list(range(1, len(runs) + 1))
    for k, (_, name, page) in enumerate(listed):
        assert int(page) == len(contents) + k + 1
        assert texts[int(page) - 1].lstrip().startswith(name), (name, page)
    return len(contents), texts


@browser
@pytest.mark.timeout(600)
def test_demo_run_pages_one_page_each_and_the_appendix(tmp_path):
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    out, appendix = tmp_path / "report", tmp_path / "appendix.pdf"
    assert cli.main(["report", str(config), "--out", str(out), "--participants-pdf",
                     "--appendix-pdf", str(appendix)]) == 0
    pdfs = sorted((out / "systems").glob("*.pdf"))
    assert len(pdfs) == 12 and all(pages_of(p) == 1 for p in pdfs)
    contents, texts = check_appendix(appendix, out)
    assert contents == 1
    demo = tmp_path / "runs" / "demo"
    for k, name in enumerate(ranked_runs(out)):
        page = texts[contents + k]
        assert printed_counts(page) == trec_eval_counts(demo / "qrels.txt",
                                                        demo / "runs" / f"{name}.txt"), name
        assert "Recall-precision" in page and "Per topic" in page and "Significance" in page
        assert "topic" in page and "on this run's HTML page" in page  # the table's note
    # one run page as an image, for a person to look at (IRBENCH_SHOTS keeps it)
    shots = Path(os.environ.get("IRBENCH_SHOTS", tmp_path))
    subprocess.run(["pdftoppm", "-r", "80", "-png", "-f", "2", "-l", "2", str(appendix),
                    str(shots / "run-page")], check=True, timeout=120)
    assert list(shots.glob("run-page*.png"))


def simulated(tmp_path: Path, groups: int, runs: int, topics: int) -> Path:
    folder = tmp_path / f"sim{topics}"
    assert cli.main(["simulate", str(folder), "--groups", str(groups), "--runs-per-group",
                     str(runs), "--topics", str(topics), "--pool-depth", "10"]) == 0
    config = folder / "campaign.yaml"
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    return config


@browser
@pytest.mark.timeout(900)
def test_fifty_topics_and_many_runs_one_page_each(tmp_path):
    """41 runs (the significance lists printed as counts) x 50 topics."""
    config = simulated(tmp_path, 41, 1, 50)
    out, appendix = tmp_path / "report", tmp_path / "appendix.pdf"
    assert cli.main(["report", str(config), "--out", str(out), "--appendix-pdf",
                     str(appendix)]) == 0
    contents, texts = check_appendix(appendix, out)
    folder = config.parent
    for k, name in enumerate(ranked_runs(out)):
        page = texts[contents + k]
        assert printed_counts(page) == trec_eval_counts(folder / "qrels.txt",
                                                        folder / "runs" / f"{name}.txt")
        assert "50 topics" in page and "listed on this run's HTML page" in page


@browser
@pytest.mark.timeout(600)
def test_a_hundred_and_fifty_topics_on_two_pages_at_most(tmp_path):
    config = simulated(tmp_path, 3, 2, 150)
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants-pdf"]) == 0
    pdfs = sorted((out / "systems").glob("*.pdf"))
    assert len(pdfs) == 6 and all(1 <= pages_of(p) <= 2 for p in pdfs)
    page = (out / "systems" / pdfs[0].with_suffix(".html").name).read_text()
    assert page.count("<tr><td>") >= 150  # the per-topic table is still on screen


HANGS = """#!/bin/sh
# a stand-in for Chromium: hangs on one run's page, fails on every other
case "$*" in
  *groupB-2*) exec sleep 300 ;;
esac
echo "stand-in browser: refused" >&2
exit 3
"""


@pytest.mark.timeout(120)
def test_a_hanging_print_is_bounded_and_names_the_run(tmp_path, monkeypatch, capsys):
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    fake = tmp_path / "fake-chromium"
    fake.write_text(HANGS)
    fake.chmod(0o755)
    monkeypatch.setenv("IRBENCH_CHROMIUM", str(fake))
    monkeypatch.setattr(pdf, "TIMEOUT", 3)
    appendix = tmp_path / "appendix.pdf"
    assert cli.main(["report", str(config), "--out", str(tmp_path / "report"),
                     "--appendix-pdf", str(appendix)]) == 1
    err = capsys.readouterr().err
    assert "groupB-2: Chromium did not finish within 3 s" in err
    assert "groupA-1: Chromium exited 3 (stand-in browser: refused)" in err
    assert "Traceback" not in err and not appendix.exists()
    assert not list(tmp_path.glob("**/.*.part"))


@pytest.mark.timeout(120)
def test_appendix_into_a_missing_folder_is_said_before_printing(tmp_path, monkeypatch,
                                                                capsys):
    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    monkeypatch.setenv("IRBENCH_CHROMIUM", str(tmp_path / "never-started"))
    target = tmp_path / "no-such-folder" / "appendix.pdf"
    assert cli.main(["report", str(config), "--out", str(tmp_path / "report"),
                     "--appendix-pdf", str(target)]) == 1
    err = capsys.readouterr().err
    assert "no folder" in err and str(target.parent) in err and "Chromium" not in err


@pytest.mark.timeout(120)
def test_a_store_without_the_counts_says_so_and_run_adds_them(tmp_path):
    """A store scored before the profile kept NumRet/NumRel/NumRelRet: the run page says
    how to get them; 'irbench run' adds them (only they were missing)."""
    from irbench.measures import COUNTS
    from irbench.store import Store

    config = copy_demo(tmp_path)
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    store_path = tmp_path / "runs" / "demo.duckdb"
    with Store(str(store_path)) as store:
        store.con.execute("DELETE FROM profiles WHERE measure IN (?, ?, ?)", list(COUNTS))
    out = tmp_path / "report"
    assert cli.main(["report", str(config), "--out", str(out), "--participants"]) == 0
    page = (out / "systems" / "groupA-1.html").read_text()
    assert "No summary counts" in page and "irbench run" in page
    assert cli.main(["run", "--quiet", "--workers", "1", str(config)]) == 0
    assert cli.main(["report", str(config), "--out", str(out), "--participants"]) == 0
    page = (out / "systems" / "groupA-1.html").read_text()
    demo = tmp_path / "runs" / "demo"
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert printed_counts(text) == trec_eval_counts(demo / "qrels.txt",
                                                    demo / "runs" / "groupA-1.txt")
