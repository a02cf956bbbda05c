"""A small answer campaign for the desk's answer screens (tests/test_assess_support.py,
tests/test_assess_nuggets.py): answers_compare cut to two topics and two answer runs, renamed
so that a page showing a run's name is caught, and the command line run as an organiser runs
it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from desk_server import ROOT

DATA = ROOT / "tests" / "data" / "answers_compare"
RUNS = {"a1": "zephyr_team_run", "a3": "quokka_model_run"}  # names no page may show
TOPICS = ("t1", "t2")


def cli_out(*args: str, env: dict) -> str:
    done = subprocess.run([sys.executable, "-m", "irbench", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def link_on(out: str, port: int) -> str:
    return out.strip().rsplit(" ", 1)[1].replace(":8765/", f":{port}/")


def answer_campaign(tmp_path: Path, monkeypatch) -> Path:
    """answers_compare cut to two topics and two answer runs (renamed), with the cited
    segments as a JSONL documents file."""
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "camp"
    shutil.copytree(DATA, folder)
    segments: dict[str, None] = {}
    for old, new in RUNS.items():
        lines = []
        for line in (DATA / "answers" / f"{old}.jsonl").read_text().splitlines():
            answer = json.loads(line)
            if answer["topic_id"] in TOPICS:
                answer["run_id"] = new
                segments.update(dict.fromkeys(answer["references"]))
                lines.append(json.dumps(answer))
        (folder / "answers" / f"{new}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "segments.jsonl").write_text("".join(
        json.dumps({"docid": d, "title": f"Segment {d.rsplit('_', 1)[1]}",
                    "text": f"This segment, {d}, states a fact about its topic."}) + "\n"
        for d in segments))
    config = yaml.safe_load((DATA / "config.yaml").read_text())
    config["collection"]["documents"] = "segments.jsonl"
    config["systems"] = [{"name": "bm25", "run": "runs/bm25.txt"},
                         *({"name": new, "answers": f"answers/{new}.jsonl"}
                           for new in RUNS.values())]
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path




def shoot(page, folder: Path, name: str, width: int | None = None,
          height: int = 1080) -> Path:
    """A full-page screenshot of ``page`` (at ``width`` x ``height`` when given, then back
    to its size), printed as ``screenshot: PATH`` and copied to ``$IRBENCH_SHOTS`` when set."""
    import os

    size = page.viewport_size
    if width is not None:
        page.set_viewport_size({"width": width, "height": height})
    shot = folder / name
    page.screenshot(path=str(shot), full_page=True)
    if width is not None and size is not None:
        page.set_viewport_size(size)
    if os.environ.get("IRBENCH_SHOTS"):
        Path(os.environ["IRBENCH_SHOTS"]).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(os.environ["IRBENCH_SHOTS"]) / shot.name)
    print(f"screenshot: {shot}")
    return shot
