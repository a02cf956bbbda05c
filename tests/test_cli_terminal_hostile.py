"""One escaping rule for the terminal (issue 35): a campaign whose system names, group names,
run tags, qrels set names, topic ids and docnos (of runs, qrels, documents and a pairs file),
the judge's model name and a model server's error text all carry terminal escapes (a window
title ``ESC]0;...BEL``, a screen clear ``ESC[2J``, a carriage return, a right-to-left override
and a zero-width space), walked through every ``irbench`` command that prints, each in a
subprocess as a user runs it: no raw control or format character (Unicode Cc, Cf, or a lone
surrogate) reaches stdout or stderr, save the tabs and newlines of the layout.

The commands walked: check, run (twice: the second answers from its stamp), scores, systems,
compare, report (and its table formats), analyse, validate, pool build / stats / simulate /
bias / strategies / start / next / judge / status, judge (a local chat server, and a server
whose errors carry escapes), judges, qrels (write and --import), agreement, compare-qrels,
judge-eval, diff, measures, eval, simulate, assess --add-assessor, and usage errors echoing what was typed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import yaml
from chat_server import ChatServer, rule_by_marker

REPO = Path(__file__).resolve().parent.parent

# no whitespace in it (ids and docnos are whitespace-separated tokens) ...
TOKEN = "\x1b]0;owned\x07\x1b[2J\u202e\u200b"
# ... names in the YAML config may hold a carriage return too
NAME = TOKEN + "\r"
SHOWN = ("\\x1b]0;owned\\x07\\x1b[2J\\u202e\\u200b",  # how irbench shows TOKEN
         "\\u001b]0;owned\\u0007\\u001b[2J\\u202e\\u200b")  # and how JSON writes it
KEY = "sk-hostile-terminal"


def raw_controls(text: str) -> list[str]:
    """The control, format and surrogate characters of ``text`` other than tab and newline."""
    return sorted({f"U+{ord(c):04X}" for c in text if c not in "\n\t"
                   and unicodedata.category(c) in ("Cc", "Cf", "Cs")})


def test_the_check_finds_what_it_must():
    assert raw_controls(f"a{NAME}b\u00ad\udcff") == [
        "U+0007", "U+000D", "U+001B", "U+00AD", "U+200B", "U+202E", "U+DCFF"]
    assert raw_controls(f"{SHOWN[0]}\tx\n") == []


def test_streams_keep_the_layout_and_json_keeps_the_data():
    from irbench.escaping import TerminalStream, json_text, terminal_text

    assert terminal_text(f"a\tb{NAME}\n") == f"a\tb{SHOWN[0]}\\x0d\n"
    assert terminal_text("plain\tcolumns\n") == "plain\tcolumns\n"
    assert terminal_text("caf\u00e9 \x85\udcff\U000e0041") == "caf\u00e9 \\x85\\udcff\\U000e0041"
    written = []

    class Sink:
        def write(self, text):
            written.append(text)

        def isatty(self):
            return True

    stream = TerminalStream(Sink())
    assert stream.write(NAME) == len(NAME) and stream.isatty()
    assert raw_controls("".join(written)) == []
    value = {"name": f"x{NAME}\x85\u00ad\U000e0041\udcff\x7f", "n": 1}
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert raw_controls(text) == [] and json.loads(text) == value  # the same data


# ---- the campaign ------------------------------------------------------------------------


def build_campaign(root: Path, judge_url: str, refusing_url: str) -> Path:
    """configs/c.yaml: 3 topics (one id hostile), 40 documents (every fourth docno hostile)
    in runs/docs.jsonl, two qrels sets (the second's name hostile) and support labels, 4
    systems with hostile names, groups and run tags and an answer system (hostile run id,
    sentences and cited ids), two judges (the stand-in, and one whose server refuses every
    request with a hostile message), and pairs.txt (a hostile docno not in the collection)."""
    rng = np.random.default_rng(35)
    runs = root / "runs"
    runs.mkdir(parents=True)
    topics = ["t01", "t02" + TOKEN, "t03"]
    docs = [f"d{i:03d}" + (TOKEN if i % 4 == 0 else "") for i in range(40)]
    (runs / "topics.tsv").write_text("".join(f"{t}\ttopic about {t}\n" for t in topics))
    for name, judged in (("qrels.txt", 25), ("other.txt", 15)):
        lines = [f"{t} 0 {d} {rng.integers(0, 3)}" for t in topics
                 for d in rng.choice(docs, size=judged, replace=False)]
        (runs / name).write_text("\n".join(lines) + "\n")
    systems = []
    for i in range(4):
        lines = [f"{t} Q0 {d} {r + 1} {30 - r}.5 tag{i}{TOKEN}" for t in topics
                 for r, d in enumerate(rng.permutation(docs)[:30])]
        (runs / f"r{i}.txt").write_text("\n".join(lines) + "\n")
        systems.append({"name": f"sys{i}{NAME}", "run": f"../runs/r{i}.txt",
                        "group": f"grp{i % 2}{NAME}"})
    # an answer system (issue 39): hostile run id, texts and cited segment ids, labelled
    refs = docs[:8]
    sentences = [(f"a sentence{NAME} about", [(0, 2), (4, "PS")]), ("more" + NAME, [(1, 0)])]
    (runs / "answers.jsonl").write_text("".join(json.dumps(
        {"run_id": "ans" + TOKEN, "topic_id": t, "topic": "q" + NAME, "references": refs,
         "answer": [{"text": f"{text} {t}", "citations": [i for i, _ in cited]}
                    for text, cited in sentences]}) + "\n" for t in topics))
    (runs / "support.jsonl").write_text("".join(json.dumps(
        {"topic_id": t, "run_id": "ans" + TOKEN, "sentences": [
            {"text": f"{text} {t}", "citations": [{"reference": refs[i], "support": label}
                                                 for i, label in cited]}
            for text, cited in sentences]}) + "\n" for t in topics))
    systems.append({"name": "ans" + NAME, "answers": "../runs/answers.jsonl",
                    "group": "grp0" + NAME})
    (runs / "docs.jsonl").write_text("".join(
        json.dumps({"id": d, "text": f"the text of {d}"}) + "\n" for d in docs))
    judge = {"api_key_env": "STANDIN_KEY", "retries": 0, "backoff": 0, "concurrency": 2}
    config = {
        "name": "hostile",
        "collection": {"topics": "../runs/topics.tsv",
                       "qrels": {"official": "../runs/qrels.txt",
                                 "other" + NAME: "../runs/other.txt",
                                 "support": {"path": "../runs/support.jsonl",
                                             "kind": "support"}},
                       "documents": "../runs/docs.jsonl"},
        "systems": systems,
        "suites": {"core": ["AP", "nDCG@10", "P@10"],
                   "answers": ["support_precision", "answer_words"]},
        "report": {"pool_depth": 10},
        # issue 42: hostile system names in irbench repro and the report's section 4b
        "reproductions": [{"name": "again", "measures": ["AP", "KTU@10"],
                           "baseline": {"original": systems[0]["name"],
                                        "reproduced": systems[1]["name"]},
                           "advanced": {"original": systems[2]["name"],
                                        "reproduced": systems[3]["name"]}}],
        "judges": {"standin": {"base_url": judge_url, "model": "model" + NAME, **judge},
                   "refused": {"base_url": refusing_url, "model": "refusing", **judge}}}
    (root / "configs").mkdir()
    path = root / "configs" / "c.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))  # escapes as YAML's \e, \r ...
    lab = {"name": "lab", "collections": {  # issue 41: two collections, the same runs
        name: {"topics": "../runs/topics.tsv", "qrels": "../runs/qrels.txt"} for name in "ab"},
        "systems": [dict(s, baseline=i == 0) for i, s in enumerate(systems) if "run" in s],
        "suites": {"core": ["AP", "nDCG@10"]}}
    (root / "configs" / "lab.yaml").write_text(yaml.safe_dump(lab, sort_keys=False))
    (runs / f"assessors{TOKEN}.qrels").write_text((runs / "qrels.txt").read_text())
    (runs / f"model{TOKEN}.qrels").write_text((runs / "other.txt").read_text())
    (root / "pairs.txt").write_text(f"t01 d001\nt02{TOKEN} d004{TOKEN}\nt01 zz{TOKEN}\n")
    return path


class Refusing(BaseHTTPRequestHandler):
    """A chat server that refuses every request with a message full of terminal escapes."""

    def _answer(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(200, {"object": "list", "data": [{"id": "model", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(400, {"error": {"message": f"no such model{NAME} here",
                                     "type": f"invalid{NAME}", "code": None}})

    def log_message(self, format: str, *args) -> None:
        pass


@dataclass
class Campaign:
    root: Path
    config: Path
    env: dict


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    refusing = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=refusing.serve_forever, daemon=True)
    thread.start()
    try:
        with ChatServer(rule_by_marker("1"), api_key=KEY) as server:
            config = build_campaign(root, server.base_url,
                                    f"http://127.0.0.1:{refusing.server_port}/v1")
            env = {**os.environ, "PYTHONPATH": str(REPO), "STANDIN_KEY": KEY,
                   "IRBENCH_CACHE_DIR": str(root / "cache"), "COLUMNS": "100"}
            env.pop("NO_COLOR", None)
            made = Campaign(root, config, env)
            for argv in (("run", "{c}"), ("pool", "build", "{c}", "--param", "k=5", "--name",
                                          "built")):  # their output is checked by the walk
                done = Step(argv).run(made)
                assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
            yield made
    finally:
        refusing.shutdown()
        refusing.server_close()


# ---- the walk ----------------------------------------------------------------------------


@dataclass
class Step:
    """One command: ``{c}`` stands for the config, ``{root}`` for the campaign folder.
    ``ok``: it should succeed (else exit with an error message: a refusal of a hostile value,
    or a rejected run); ``shows``: a hostile name is in what it prints, escaped (so that a
    clean output is not a silent one)."""

    argv: tuple[str, ...]
    ok: bool = True
    shows: bool = True

    def run(self, campaign: Campaign) -> subprocess.CompletedProcess:
        argv = [a.replace("{c}", str(campaign.config)).replace("{root}", str(campaign.root))
                for a in self.argv]
        return subprocess.run([sys.executable, "-m", "irbench", *argv], cwd=campaign.root,
                              env=campaign.env, capture_output=True, timeout=180)

    def check(self, campaign: Campaign) -> None:
        done = self.run(campaign)
        out = done.stdout.decode("utf-8", "surrogateescape")
        err = done.stderr.decode("utf-8", "surrogateescape")
        what = f"irbench {' '.join(self.argv)!r} (exit {done.returncode}):\n{out}\n{err}"
        assert raw_controls(out + err) == [], what
        assert "Traceback" not in err, what
        if self.ok:
            assert done.returncode == 0, what
        else:
            assert done.returncode != 0 and "error" in out + err, what
        if self.shows:  # as irbench shows it on a terminal, or as JSON writes it
            assert any(shown in out + err for shown in SHOWN), what


def fill(name: str, grade: str = "1") -> Callable[[Campaign], None]:
    """A step that fills in the assessor file ``name`` (``qid 0 docno -1`` lines)."""

    def filled(campaign: Campaign) -> None:
        path = campaign.root / name
        path.write_text(path.read_text().replace(" -1\n", f" {grade}\n"))

    return filled


P = "{c}"
LAB = "{root}/configs/lab.yaml"  # two collections (issue 41)
OTHER = "other" + NAME
HOSTILE_DIR = "{root}/sim" + TOKEN
QRELS_A, QRELS_B = f"runs/assessors{TOKEN}.qrels", f"runs/model{TOKEN}.qrels"
WALK: dict[str, list] = {
    "check": [Step(("check", P), shows=False)],
    "run": [Step(("run", P)), Step(("run", P))],  # the second answers from its stamp
    "scores": [Step(("scores", P)), Step(("scores", P, "--per-query")),
               Step(("scores", P, "--format", "csv")), Step(("scores", P, "--format", "json")),
               Step(("scores", P, "--qrels", OTHER)),
               Step(("scores", P, "--system", "nobody" + NAME), ok=False),
               Step(("scores", P, "--qrels", "nothing" + NAME), ok=False)],
    "systems": [Step(("systems", P))],
    "compare": [Step(("compare", P, "--all-pairs")), Step(("compare", P, "--format", "csv")),
                Step(("compare", P, "--format", "json")),
                Step(("compare", P, "--format", "latex"), shows=False),
                Step(("compare", P, "--qrels", OTHER)),
                Step(("compare", P, "--baseline", "nobody" + NAME), ok=False)],
    "report": [Step(("report", P, "--out", "{root}/report"), shows=False),
               Step(("report", P, "--format", "csv")), Step(("report", P, "--format", "json")),
               Step(("report", P, "--format", "markdown")),
               Step(("report", P, "--format", "csv", "--table", "groups")),
               Step(("report", P, "--judge-eval", OTHER, "--out", "{root}/report-judges"),
                    shows=False),
               Step(("report", P, "--judge-eval", "nothing" + NAME, "--out",
                     "{root}/report-none"), ok=False)],
    "analyse": [Step(("analyse", P), shows=False)],
    "validate": [Step(("validate", P), ok=False),  # the run tags are refused: escaped
                 Step(("validate", P, "--format", "json"), ok=False)],
    # a topic id as a file name of the assessor files is refused
    "pool build": [Step(("pool", "build", P, "--param", "k=5", "-o", "{root}/assessor"),
                        ok=False),
                   Step(("pool", "build", P, "--strategy", "mtf", "--budget", "5",
                         "--pooled", "sys0" + NAME))],
    "pool stats": [Step(("pool", "stats", P, "--param", "k=5")),
                   Step(("pool", "stats", P, "--qrels", OTHER))],
    "pool simulate": [Step(("pool", "simulate", P, "--strategies", "depth,mtf"),
                           shows=False)],
    "pool bias": [Step(("pool", "bias", P)), Step(("pool", "bias", P, "--format", "csv")),
                  Step(("pool", "bias", P, "--format", "json")),
                  Step(("pool", "bias", P, "--pooled", "nobody" + NAME), ok=False)],
    "pool strategies": [Step(("pool", "strategies"), shows=False)],
    "pool cited": [Step(("pool", "cited", P, "-o", "{root}/cited.jsonl")),
                   Step(("pool", "cited", P, "--format", "tsv", "-o", "{root}/cited.tsv"))],
    "pool over days": [Step(("pool", "start", P, "--name", "days" + NAME, "--budget", "3")),
                       Step(("pool", "next", P, "--name", "days" + NAME, "-o", "batch.txt")),
                       fill("batch.txt"),
                       Step(("pool", "judge", P, "--name", "days" + NAME, "-j", "batch.txt")),
                       Step(("pool", "status", P, "--name", "days" + NAME)),
                       Step(("pool", "status", P, "--name", "nothing" + NAME), ok=False)],
    "judge": [Step(("judge", P, "--judge", "standin", "--pairs", "pairs.txt")),
              Step(("judge", P, "--judge", "standin", "--pool", "built"), shows=False),
              # every request refused: each failure named with the server's message, exit 1
              Step(("judge", P, "--judge", "refused", "--pairs", "pairs.txt"), ok=False),
              Step(("judge", P, "--judge", "nobody" + NAME, "--pool", "built"), ok=False)],
    "judges": [Step(("judges", P))],
    "qrels": [Step(("qrels", P)), Step(("qrels", P, "-o", "{root}/made" + TOKEN + ".qrels")),
              Step(("qrels", P, "--import", "runs/other.txt", "--as", "people" + NAME)),
              Step(("judges", P))],
    "agreement": [Step(("agreement", QRELS_A, QRELS_B)),
                  Step(("agreement", QRELS_A, QRELS_B, "runs/qrels.txt", "--per-topic")),
                  Step(("agreement", QRELS_A, QRELS_B, "--format", "csv", "--per-topic")),
                  Step(("agreement", QRELS_A, QRELS_B, "--format", "json", "--per-topic")),
                  Step(("agreement", "--kind", "support", "runs/support.jsonl",
                        "runs/support.jsonl", "--per-topic"))],
    "compare-qrels": [Step(("compare-qrels", P)), Step(("compare-qrels", P, "--format", "json")),
                      Step(("compare-qrels", P, "--reference", OTHER)),
                      Step(("compare-qrels", P, "--reference", "nothing" + NAME), ok=False)],
    "judge-eval": [Step(("judge-eval", P)),  # the support set skipped with a note
                   Step(("judge-eval", P, "--reference", OTHER, "--format", "json")),
                   Step(("judge-eval", P, "--format", "csv")),
                   Step(("judge-eval", P, "--reference", "support"), ok=False),  # alone
                   Step(("judge-eval", P, "--reference", "nothing" + NAME), ok=False)],
    "diff": [Step(("diff", P, "sys0" + NAME, "sys1" + NAME, "--measure", "P@5")),
             Step(("diff", P, "sys0" + NAME, "sys1" + NAME, "--topic", "t02" + TOKEN)),
             Step(("diff", P, "sys0" + NAME, "sys1" + NAME, "--topic", "t02" + TOKEN,
                   "--format", "json", "--by", "measure", "--measure", "P@5", "-k", "5",
                   "--top", "2", "--qrels", OTHER)),
             Step(("diff", "runs/qrels.txt", "runs/r0.txt", "runs/r1.txt", "--topic",
                   "t02" + TOKEN, "--documents", "runs/none" + NAME), ok=False),
             Step(("diff", "runs/qrels.txt", "runs/r0.txt", "runs/r1.txt", "-o",
                   "{root}/diff.txt"), shows=False),
             Step(("diff", P, "sys0" + NAME, "nobody" + NAME), ok=False),
             Step(("diff", P, "sys0" + NAME, "sys1" + NAME, "--topic", "none" + NAME),
                  ok=False)],
    "repro": [Step(("repro", P)), Step(("repro", P, "again", "--format", "json")),
              Step(("repro", P, "--format", "csv")),
              Step(("repro", "--qrels", "runs/qrels.txt", "--orig-baseline", "runs/r0.txt",
                    "--repro-baseline", "runs/r1.txt", "--orig-advanced", "runs/r2.txt",
                    "--repro-advanced", "runs/r3.txt", "-m", "P@5", "--depth", "10", "--p",
                    "0.9", "-o", "{root}/repro.txt"), shows=False),
              Step(("repro", "--qrels", "runs/qrels.txt", "--orig-baseline", "runs/r0.txt",
                    "--repro-baseline", "runs/r1.txt", "--replicated", "--qrels-repro",
                    "runs/other.txt", "--format", "csv"), shows=False),
              Step(("repro", P, "nobody" + NAME), ok=False),
              Step(("repro", "--qrels", "runs/qrels.txt", "--orig-baseline",
                    "runs/none" + NAME, "--repro-baseline", "runs/r1.txt"), ok=False),
              Step(("repro", "--qrels", "runs/qrels.txt", "--orig-baseline", "runs/r0.txt",
                    "--repro-baseline", "runs/r1.txt", "-m", "KTU@" + NAME), ok=False)],
    "measures": [Step(("measures",), shows=False), Step(("measures", "--markdown"), shows=False)],
    "eval": [Step(("eval", "-q", "runs/qrels.txt", "runs/r0.txt")),
             Step(("eval", "runs/qrels.txt", "runs/r0.txt", "runs/r1.txt")),
             Step(("eval", "-q", "--format", "json", "runs/qrels.txt", "runs/r0.txt")),
             Step(("eval", "-q", "--format", "tsv", "runs/qrels.txt", "runs/r0.txt")),
             Step(("eval", "runs/qrels.txt", "runs/none" + NAME), ok=False),
             Step(("eval", "-q", "-R", "support", "runs/support.jsonl", "runs/answers.jsonl")),
             Step(("eval", "-q", "-R", "support", "--format", "json", "runs/support.jsonl",
                   "runs/answers.jsonl"))],
    "simulate": [Step(("simulate", HOSTILE_DIR, "--groups", "2", "--topics", "3"))],
    "assess": [Step(("pool", "start", P, "--name", "browser" + NAME)),
               Step(("assess", P, "--pool", "browser" + NAME, "--add-assessor", "ann"),
                    shows=False),
               Step(("assess", P, "--pool", "browser" + NAME, "--add-assessor", "ann" + NAME),
                    ok=False),
               Step(("assess", P, "--pool", "browser" + NAME, "--nuggets", "nj" + NAME),
                    ok=False)],  # no such list: its name echoed
    "across collections": [Step(("run", LAB)), Step(("compare", LAB, "--across")),
                           Step(("compare", LAB, "--across", "--format", "csv")),
                           Step(("report", LAB, "--out", "{root}/across"), shows=False),
                           Step(("report", LAB, "--format", "csv"), ok=False, shows=False)],
    "usage errors": [Step(("compare-qrels", P, "--top", NAME), ok=False),
                     Step(("pool", "bias", P, "--by", NAME), ok=False),
                     Step(("no-such-command" + NAME,), ok=False),
                     Step(("scores", "{root}/none" + NAME + ".yaml"), ok=False)],
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("command", list(WALK))
def test_no_raw_control_character_reaches_the_terminal(campaign, command):
    for step in WALK[command]:
        if isinstance(step, Step):
            step.check(campaign)
        else:
            step(campaign)


def test_the_walk_covers_every_command():
    """A command added to irbench is added to the walk too."""
    from irbench.cli import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    walked = {step.argv[0] for steps in WALK.values() for step in steps
              if isinstance(step, Step)}
    assert commands - walked == set()
    pool = parser._subparsers._group_actions[0].choices["pool"]  # type: ignore[union-attr]
    actions = set(pool._subparsers._group_actions[0].choices)
    assert actions - {step.argv[1] for steps in WALK.values() for step in steps
                      if isinstance(step, Step) and step.argv[0] == "pool"} == set()
