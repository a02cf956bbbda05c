"""The bundled lab campaign (configs/lab.yaml over runs/lab/, issue 41): three simulated
collections are what the irbench simulate commands in the config's first lines write, byte for
byte; their documents carry the topics' words; and the campaign goes through check, run (the
bm25 system, a command using bm25s, executed once on each collection), compare --across and a
rerun that executes nothing."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irbench import cli
from irbench.config import load_configs
from irbench.store import Store

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "configs" / "lab.yaml"
LAB = REPO / "runs" / "lab"
COLLECTIONS = ["sim-a", "sim-b", "sim-c"]
SCRIPT = "bm25_run.py"


def _commands() -> list[list[str]]:
    return [line.split("irbench ", 1)[1].split() for line in CONFIG.read_text().splitlines()
            if line.startswith("#") and "(in this folder) irbench simulate" in line]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.timeout(180)
def test_the_bundled_lab_is_what_the_simulate_commands_write(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path / "configs")
    commands = _commands()
    assert [args[:2] for args in commands] == \
        [["simulate", f"../runs/lab/{name}"] for name in COLLECTIONS]
    assert len({args[args.index("--seed") + 1] for args in commands}) == 3  # a seed each
    for args in commands:
        assert cli.main(args) == 0
    bundled = _files(LAB)
    regenerated = _files(tmp_path / "runs" / "lab")
    assert set(bundled) - set(regenerated) == {SCRIPT}
    assert set(regenerated) - set(bundled) == {f"{name}/campaign.yaml" for name in COLLECTIONS}
    assert [name for name in bundled if name != SCRIPT and bundled[name] != regenerated[name]] \
        == []
    for name in COLLECTIONS:
        assert {f"{name}/{f}" for f in ("topics.txt", "qrels.txt", "documents.sgml.gz")} \
            <= set(bundled)
    assert sum(map(len, bundled.values())) < 1_500_000  # small
    assert len(bundled[SCRIPT].decode().splitlines()) < 80


def _titles(path: Path) -> dict[str, str]:
    return dict(re.findall(r"<num> Number: (\S+)\n<title> (.+)\n", path.read_text()))


def _texts(path: Path) -> dict[str, str]:
    return {docno: text.lower() for docno, text in re.findall(
        r"<DOCNO> (\S+) </DOCNO>(.*?)</DOC>", gzip.decompress(path.read_bytes()).decode(), re.S)}


def test_the_relevant_documents_carry_their_topic_s_title_words():
    for name in COLLECTIONS:
        titles = _titles(LAB / name / "topics.txt")
        texts = _texts(LAB / name / "documents.sgml.gz")
        assert len(titles) >= 15
        relevant: dict[str, list[str]] = {}
        for line in (LAB / name / "qrels.txt").read_text().splitlines():
            qid, _, docno, grade = line.split()
            if int(grade) > 0:
                relevant.setdefault(qid, []).append(docno)
        assert set(relevant) == set(titles), name
        for qid, docnos in relevant.items():
            for docno in docnos:  # every judged relevant document says its topic's title words
                assert all(w in texts[docno] for w in titles[qid].split()), (name, qid, docno)


def _copy_lab(folder: Path) -> Path:
    (folder / "configs").mkdir()
    shutil.copy(CONFIG, folder / "configs")
    shutil.copytree(LAB, folder / "runs" / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    return folder / "configs" / "lab.yaml"


def _executions(path: Path) -> dict[tuple[str, str], list[str]]:
    """{(collection, system): [status of each execution, in order]}."""
    out: dict[tuple[str, str], list[str]] = {}
    for view in load_configs(path, strict=False):
        with Store(view.store, read_only=True, scope=view.scope) as store:
            _, rows = store.query("SELECT system, status FROM commands ORDER BY rowid")
        for system, status in rows:
            out.setdefault((view.scope, system), []).append(status)
    return out


@pytest.mark.timeout(300)
def test_the_bundled_lab_checks_runs_compares_across_and_reruns_nothing(tmp_path, capsys,
                                                                        monkeypatch):
    config = str(_copy_lab(tmp_path))
    assert cli.main(["check", config]) == 0
    out = capsys.readouterr()
    assert out.out.count("ok: 7 systems, 1 qrels sets") == 3
    assert out.err.count("system 'bm25': given as a command") == 3
    pytest.importorskip("bm25s")
    pytest.importorskip("statsmodels")
    # the command's "python" is the interpreter running these tests (the one with bm25s)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep
                       + os.environ.get("PATH", ""))
    assert cli.main(["run", "--workers", "1", config]) == 0
    err = capsys.readouterr().err
    assert err.count("0 failed") == 3 and err.count("1 command executed") == 3
    assert _executions(Path(config)) == {(name, "bm25"): ["ok"] for name in COLLECTIONS}
    made = tmp_path / "runs" / "lab.commands"
    for name in COLLECTIONS:
        lines = (made / name / "bm25.run").read_text().splitlines()
        topics = {line.split()[0] for line in lines}
        assert topics == set(_titles(tmp_path / "runs" / "lab" / name / "topics.txt"))
        assert {line.split()[5] for line in lines} == {"bm25"}
        assert len(lines) <= 100 * len(topics)
    assert cli.main(["compare", config, "--across", "--format", "json"]) == 0
    across = json.loads(capsys.readouterr().out)
    assert across["collections"] == COLLECTIONS
    systems = {s["name"]: s for s in across["systems"]}
    assert set(systems) == {"bm25", "groupA-1", "groupA-2", "groupB-1", "groupB-2", "groupC-1",
                            "groupC-2"}
    bm25 = systems["bm25"]
    assert bm25["collections"] == 3 and len(bm25["means"]) == 3
    assert all(mean > 0.5 for mean in bm25["means"])  # BM25 finds the topics' documents
    assert cli.main(["compare", config, "--across"]) == 0
    assert "groupA-1" in capsys.readouterr().out
    # a rerun executes no command and scores nothing again
    assert cli.main(["run", "--workers", "1", config]) == 0
    err = capsys.readouterr().err
    assert "command executed" not in err and err.count("0 evaluated, 7 reused, 0 failed") == 3
    assert _executions(Path(config)) == {(name, "bm25"): ["ok"] for name in COLLECTIONS}


@pytest.mark.timeout(60)
def test_the_bm25_script_without_bm25s_says_how_to_install_it(tmp_path):
    done = subprocess.run([sys.executable, "-S", "-I", str(LAB / SCRIPT), "--topics", "t",
                           "--documents", "d", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=50)  # -S: no site-packages
    assert done.returncode == 1 and not (tmp_path / "run").exists()
    assert done.stderr.strip() == "bm25_run.py needs bm25s: pip install 'irbench[lab]'"
