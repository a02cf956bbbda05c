"""Benchmark of the answer measures' kernels (issue 39): 100 runs x 100 topics x 40 sentences,
2 citations each (800,000 judged citations), with support labels, and 20 nuggets a topic.

Times, in one process, best of --reps after a warm-up (wall clock):

1. the kernels (``irbench.measures.answers``): every support measure (precision and recall,
   graded and hard, first and all citations: 8) and every nugget score (A, V, W, strict or
   not: 6) of every run, per topic, from the interface's arrays;
2. the same from the judgment files' records: ``PreparedSupport.labels_for`` (the join by
   topic, run, sentence and reference) and ``PreparedNuggets.columns_for`` for each run, then
   the kernels;
3. the answer-shape counts of every run (sentences, words, citations per sentence, uncited
   share, distinct references);
4. reading the NIST support JSONL and nuggetizer's assignments of the same data (gzip);
5. for comparison, the track scripts' way: a plain Python loop over runs, topics, sentences
   and nuggets computing the same 14 values (nuggetizer's ``calculate_nugget_scores`` style);
6. the pool of cited segments to send to support judging (``irbench pool cited``): each
   sentence's first citation, then every citation, and writing it as NIST's support JSONL
   with the support unset (every unit distinct here: the largest pool this data gives).

Writes bench/results-answers.md.

    python bench/bench_answers.py          # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gzip
import json
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from irbench import judgments
from irbench.answers import read_answers
from irbench.judgments.nuggets import PreparedNuggets, read_assignments
from irbench.judgments.support import PreparedSupport, read_support
from irbench.measures import parse_trec_specs
from irbench.measures.answers import answer_shape, nugget_measures, support_measures
from irbench.measures.compute import compute
from irbench.runner.parallel import evaluate_paths

RUNS, TOPICS, SENTENCES, CITATIONS, NUGGETS = 100, 100, 40, 2, 20
HERE = Path(__file__).parent
WORDS = ["potty", "training", "toddler", "weeks", "months", "signs", "ready", "child"]


def make_campaign(seed: int = 0):
    """Answer runs as the interface's columns, their support labels and nugget assignments."""
    rng = np.random.default_rng(seed)
    topics = np.array([f"2024-{100000 + t}".encode() for t in range(TOPICS)])
    runs = []
    n_sent = TOPICS * SENTENCES
    for r in range(RUNS):
        # a sentence's citations are distinct segments: the c-th from its own range
        cited = rng.integers(0, 2500, n_sent * CITATIONS) + np.tile(
            np.arange(CITATIONS) * 2500, n_sent)
        refs = np.array([f"msmarco_v2.1_doc_{r % 60}_{x}#{x % 7}_{x * 31}" for x in cited],
                        dtype=object)
        texts = [" ".join(rng.choice(WORDS, 12)) for _ in range(n_sent)]
        runs.append(SimpleNamespace(
            run_id=f"run{r:03d}", topics=topics,
            sentence_topic=np.repeat(np.arange(TOPICS), SENTENCES),
            citation_offsets=np.arange(0, n_sent * CITATIONS + 1, CITATIONS),
            citation_ref=refs, sentence_text=texts,
            label=rng.choice(np.array([-1, 0, 1, 2], dtype=np.int8), n_sent * CITATIONS,
                             p=[0.1, 0.3, 0.2, 0.4]),
            vital=rng.random((TOPICS, NUGGETS)) < 0.4,
            score=rng.choice([0.0, 0.5, 1.0], (TOPICS, NUGGETS))))
    return topics, runs


def support_jsonl(runs) -> bytes:
    lines = []
    for run in runs:
        for t, topic in enumerate(run.topics):
            sentences = []
            for s in range(t * SENTENCES, (t + 1) * SENTENCES):
                lo, hi = run.citation_offsets[s], run.citation_offsets[s + 1]
                sentences.append({"text": run.sentence_text[s], "citations": [
                    {"reference": run.citation_ref[c], "support": int(run.label[c])}
                    for c in range(lo, hi)]})
            lines.append(json.dumps({"topic_id": topic.decode(), "run_id": run.run_id,
                                     "sentences": sentences}))
    return gzip.compress("\n".join(lines).encode(), compresslevel=1)


def assignments_jsonl(runs) -> bytes:
    names = {0.0: "not_support", 0.5: "partial_support", 1.0: "support"}
    lines = [json.dumps({"qid": topic.decode(), "run_id": run.run_id, "nuggets": [
        {"text": f"nugget {n} of {topic.decode()}",
         "importance": "vital" if run.vital[t, n] else "okay",
         "assignment": names[float(run.score[t, n])]} for n in range(NUGGETS)]})
        for run in runs for t, topic in enumerate(run.topics)]
    return gzip.compress("\n".join(lines).encode(), compresslevel=1)


def kernels(runs) -> int:
    offsets = np.arange(0, TOPICS * NUGGETS + 1, NUGGETS)
    n = 0
    for run in runs:
        n += len(support_measures(run.label, run.citation_offsets, run.sentence_topic, TOPICS))
        n += len(nugget_measures(offsets, run.vital.ravel(), run.score.ravel()))
    return n


def joined(runs, support: PreparedSupport, nuggets: PreparedNuggets, topics) -> int:
    n = 0
    for run in runs:
        label = support.labels_for(run)
        n += len(support_measures(label, run.citation_offsets, run.sentence_topic, TOPICS))
        c = nuggets.columns_for(run.run_id, topics)
        n += len(nugget_measures(c.offsets, c.vital, c.score))
    return n


def shapes(runs) -> int:
    for run in runs:
        answer_shape(run.sentence_text, run.citation_offsets, run.citation_ref,
                     run.sentence_topic, TOPICS)
    return len(runs)


def track_loop(runs) -> int:
    """The track scripts' way: Python loops over runs, topics, sentences and nuggets."""
    weights = {"graded": {2: 1.0, 1: 0.5, 0: 0.0}, "hard": {2: 1.0, 1: 0.0, 0: 0.0}}
    out = 0
    for run in runs:
        labels = run.label.tolist()
        offsets = run.citation_offsets.tolist()
        for t in range(TOPICS):
            sentences = [labels[offsets[s]:offsets[s + 1]]
                         for s in range(t * SENTENCES, (t + 1) * SENTENCES)]
            for w in weights.values():
                for first in (True, False):
                    total = judged = counted = 0.0
                    for cites in sentences:
                        marks = cites[:1] if first else cites
                        values = [w[x] for x in marks if x != -1]
                        if cites and not values:
                            continue
                        counted += 1
                        if values:
                            judged += 1
                            total += sum(values) / len(values)
                    out += (total / judged if judged else 0) + (total / counted if counted
                                                                  else 0) > -1
            nuggets = [{"importance": "vital" if v else "okay", "assignment": s}
                       for v, s in zip(run.vital[t].tolist(), run.score[t].tolist())]
            vital = [x for x in nuggets if x["importance"] == "vital"]
            for group, weigh in ((nuggets, None), (vital, None), (nuggets, True)):
                for strict in (False, True):
                    top = bottom = 0.0
                    for x in group:
                        w = (1.0 if x["importance"] == "vital" else 0.5) if weigh else 1.0
                        s = x["assignment"] if not strict or x["assignment"] == 1.0 else 0.0
                        top += w * s
                        bottom += w
                    out += (top / bottom if bottom else 0.0) > -1
    return out


def cited_pools(runs, reps: int) -> list[tuple[str, float]]:
    """Section 6: the pools of cited segments and the file to send to judging."""
    from irbench.pooling import cited_pool, write_cited

    first = cited_pool(runs, "first")
    rows = [(f"pool of cited segments, first citation of each sentence ({first.num_units:,} "
             "units)", best(lambda: cited_pool(runs, "first"), reps)),
            (f"pool of cited segments, every citation ({cited_pool(runs, 'all').num_units:,} "
             "units)", best(lambda: cited_pool(runs, "all"), reps))]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "to_judge.jsonl")
        start = time.perf_counter()
        write_cited(first, str(out), "jsonl")
        rows.append(("writing the first-citation pool as NIST's support JSONL (support null)",
                     time.perf_counter() - start))
    return rows


def best(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--path-only", action="store_true",
                        help="only the real scoring path on files (its section of the results)")
    args = parser.parse_args()
    path_lines = real_path(args.reps)
    if args.path_only:
        print("\n".join(path_lines))
        return
    topics, runs = make_campaign()
    with tempfile.TemporaryDirectory() as tmp:
        support_path = Path(tmp, "support.jsonl.gz")
        support_path.write_bytes(support_jsonl(runs))
        nugget_path = Path(tmp, "assignments.jsonl.gz")
        nugget_path.write_bytes(assignments_jsonl(runs))
        start = time.perf_counter()
        labels = read_support(support_path)
        read_labels = time.perf_counter() - start
        start = time.perf_counter()
        assigned = read_assignments(nugget_path)
        read_nuggets = time.perf_counter() - start
    start = time.perf_counter()
    support, nuggets = PreparedSupport(labels), PreparedNuggets(assigned)
    prepare = time.perf_counter() - start
    assert all((support.labels_for(r) == r.label).all() for r in runs[:3])
    rows = [
        ("kernels: 8 support measures + 6 nugget scores per topic, every run",
         best(lambda: kernels(runs), args.reps)),
        ("the same from the records: join each run's citations and nuggets, then the kernels",
         best(lambda: joined(runs, support, nuggets, topics), args.reps)),
        ("answer-shape counts of every run", best(lambda: shapes(runs), args.reps)),
        (f"reading the NIST support JSONL ({len(labels):,} judged citations, gzip)",
         read_labels),
        (f"reading nuggetizer's assignments ({len(assigned):,} rows, gzip)", read_nuggets),
        ("PreparedSupport + PreparedNuggets (once per campaign)", prepare),
        ("for comparison, the track scripts' loop (plain Python, the same 14 values)",
         best(lambda: track_loop(runs), 1)),
        *cited_pools(runs, args.reps),
    ]
    write(rows, path_lines)


def write(rows, more: tuple[str, ...] | list[str] = ()) -> None:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Answer measures: time", "",
        f"Produced by `python bench/bench_answers.py` on {now}, {os.cpu_count()} cores. "
        f"{RUNS} runs x {TOPICS} topics x {SENTENCES} sentences, {CITATIONS} citations each "
        f"({RUNS * TOPICS * SENTENCES * CITATIONS:,} support labels), {NUGGETS} nuggets a "
        "topic; wall clock, best of the repetitions after a warm-up (the track loop: one "
        "run after a warm-up). Target of issue 39: scoring under 1 s.", "",
        "| what | seconds |", "|---|---:|",
        *(f"| {what} | {seconds:.3f} s |" for what, seconds in rows), "", *more,
    ]
    (HERE / "results-answers.md").write_text("\n".join(lines))
    print("\n".join(lines))


# ---- the real scoring path: files as the tracks write them (issue 39) ----------------------
#
# 100 answer runs written as TREC RAG 2024 JSONL files (one line per topic: 20 references,
# 40 sentences of 8 words, each citing 2 of the references by index), NIST's support JSONL of
# every (topic, run) and nuggetizer's assignments, in a temporary folder; then (a) what
# ``irbench eval -R support`` does (irbench.runner.parallel.evaluate_paths over the kinds
# registry's prepared set), split into reading and scoring, (b) scoring alone, (c) the same for
# nuggets and (d) the track scripts' way (json.loads per line, a Python loop per sentence or
# nugget) in the same process.

REFERENCES = 20  # rag24's limit


def _segment(run: int, topic: int, k: int) -> str:
    x = (run * 7919 + topic * 104729 + k * 15485863) % 99_999_989
    return f"msmarco_v2.1_doc_{x % 60}_{x}#{k}_{x * 31 % 10_000_000}"


def write_track_files(folder: Path, seed: int = 1) -> tuple[list[Path], Path, Path]:
    """The answer files (one per run), the support JSONL and the assignments (plain JSONL,
    as the tracks publish them)."""
    rng = np.random.default_rng(seed)
    names = {0: "not_support", 1: "partial_support", 2: "support"}
    paths = []
    with open(folder / "support.jsonl", "w") as support, \
            open(folder / "assignments.jsonl", "w") as assigned:
        for r in range(RUNS):
            run_id = f"team{r % 25}-run{r:03d}"
            path = folder / f"{run_id}.jsonl"
            labels = rng.choice(np.array([-1, 0, 1, 2]), (TOPICS, SENTENCES, CITATIONS),
                                p=[0.1, 0.3, 0.2, 0.4]).tolist()
            cites = np.argsort(rng.random((TOPICS, SENTENCES, REFERENCES)), axis=2)[
                :, :, :CITATIONS].tolist()
            words = rng.choice(WORDS, (TOPICS, SENTENCES, 8)).tolist()
            vital = (rng.random((TOPICS, NUGGETS)) < 0.4).tolist()
            grade = rng.integers(0, 3, (TOPICS, NUGGETS)).tolist()
            with open(path, "w") as out:
                for t in range(TOPICS):
                    topic = f"2024-{100000 + t}"
                    refs = [_segment(r, t, k) for k in range(REFERENCES)]
                    texts = [" ".join(w) + "." for w in words[t]]
                    out.write(json.dumps({
                        "run_id": run_id, "topic_id": topic, "topic": "how to potty train",
                        "references": refs, "response_length": SENTENCES * 8,
                        "answer": [{"text": text, "citations": c}
                                   for text, c in zip(texts, cites[t])]}) + "\n")
                    support.write(json.dumps({"topic_id": topic, "run_id": run_id, "sentences": [
                        {"text": text, "citations": [
                            {"reference": refs[k], "support": lab} for k, lab in zip(c, la)]}
                        for text, c, la in zip(texts, cites[t], labels[t])]}) + "\n")
                    assigned.write(json.dumps({"qid": topic, "run_id": run_id, "nuggets": [
                        {"text": f"nugget {n} of {topic}",
                         "importance": "vital" if vital[t][n] else "okay",
                         "assignment": names[grade[t][n]]} for n in range(NUGGETS)]}) + "\n")
            paths.append(path)
    return paths, folder / "support.jsonl", folder / "assignments.jsonl"


def machine() -> str:
    """CPU model, cores, memory, Python and numpy versions."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2 ** 30:.0f} GiB"
    except (OSError, ValueError):
        memory = "unknown memory"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{model}, {os.cpu_count()} cores, {memory}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, Linux {platform.release()}; load average at the end "
            f"{load} (a shared machine: other work running slows every row alike)")


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def score_all(prepared, answer_runs, measures) -> dict:
    """Each run joined with the prepared judgments and scored (irbench.measures.compute):
    {run id: {measure: mean}}."""
    out = {}
    for answers in answer_runs:
        values, summaries = compute(prepared.rank(answers), measures)
        out[answers.run_id] = summaries
    return out


def track_support(lines: list[dict]) -> dict:
    """The TREC RAG support evaluation's way, on NIST's JSON objects: per (run, topic) a loop
    over the sentences, each weighed by its first citation's label (-1 left out of the
    denominators), graded and hard precision and recall; per run the mean over topics."""
    weights = {"graded": {2: 1.0, 1: 0.5, 0: 0.0}, "hard": {2: 1.0, 1: 0.0, 0: 0.0}}
    per_run: dict[str, list] = {}
    for obj in lines:
        scores = []
        for w in weights.values():
            total = judged = counted = 0.0
            for sentence in obj["sentences"]:
                citations = sentence["citations"]
                if not citations:
                    counted += 1
                    continue
                label = int(citations[0]["support"])
                if label == -1:
                    continue
                judged += 1
                counted += 1
                total += w[label]
            scores += [total / judged if judged else 0.0, total / counted if counted else 0.0]
        per_run.setdefault(obj["run_id"], []).append(scores)
    return {run: [sum(col) / len(col) for col in zip(*rows)] for run, rows in per_run.items()}


def track_nuggets(records: list[dict]) -> dict:
    """nuggetizer's way: per record (topic, run) the four scores of its
    ``calculate_nugget_scores`` (list comprehensions over the nuggets), per run their mean."""
    per_run: dict[str, list] = {}
    for record in records:
        nuggets = record["nuggets"]
        vital = [n for n in nuggets if n["importance"] == "vital"]
        strict_vital = sum(1 for n in vital if n["assignment"] == "support")
        strict_all = sum(1 for n in nuggets if n["assignment"] == "support")
        vital_score = strict_vital + sum(0.5 for n in vital
                                         if n["assignment"] == "partial_support")
        all_score = strict_all + sum(0.5 for n in nuggets
                                     if n["assignment"] == "partial_support")
        per_run.setdefault(record["run_id"], []).append((
            strict_vital / len(vital) if vital else 0.0,
            strict_all / len(nuggets) if nuggets else 0.0,
            vital_score / len(vital) if vital else 0.0,
            all_score / len(nuggets) if nuggets else 0.0))
    return {run: [sum(col) / len(col) for col in zip(*rows)] for run, rows in per_run.items()}


def parse_lines(path: Path) -> list[dict]:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def profile_top(fn, limit: int = 8) -> list[str]:
    """The ``limit`` functions where ``fn`` spends most of its own time (cProfile)."""
    profiler = cProfile.Profile()
    profiler.runcall(fn)
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:limit]  # type: ignore
    return [f"| `{Path(file).name}:{line} {name}` | {calls:,} | {own:.2f} s | "
            f"{100 * own / total:.0f}% |"
            for (file, line, name), (_, calls, own, _, _) in rows]


def real_path(reps: int) -> list[str]:
    """Time the real scoring path on files; the report's lines."""
    support_measures_ = [m for _, m in parse_trec_specs(["support"])]
    nugget_measures_ = [m for _, m in parse_trec_specs(["nuggets"])]
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        (paths, support_path, nugget_path), made = timed(
            lambda: write_track_files(Path(tmp)))
        sizes = (sum(p.stat().st_size for p in paths), support_path.stat().st_size,
                 nugget_path.stat().st_size)
        # (a) irbench eval -R support: the registry's kind, evaluate_paths on every file
        prepared, read_s = timed(lambda: judgments.prepare("support", str(support_path)))
        labels = prepared.labels
        _, prepare_s = timed(lambda: type(prepared)(labels))
        answer_runs, read_a = timed(lambda: [read_answers(str(p)) for p in paths])
        scored, score_s = timed(lambda: score_all(prepared, answer_runs, support_measures_))
        results, eval_1 = timed(lambda: evaluate_paths(
            prepared, [str(p) for p in paths], support_measures_, workers=1, answers=True))
        assert all(r.error is None for r in results)
        _, eval_n = timed(lambda: evaluate_paths(
            prepared, [str(p) for p in paths], support_measures_, answers=True))
        cli = [sys.executable, "-m", "irbench", "eval", "-R", "support", "-m", "support",
               str(support_path), *map(str, paths)]
        _, cli_s = timed(lambda: subprocess.run(cli, check=True, stdout=subprocess.DEVNULL))
        # (b) scoring alone, best of reps
        score_best = best(lambda: score_all(prepared, answer_runs, support_measures_), reps)
        four = support_measures_[:4]  # graded and hard, first citation: the track loop's four
        score_four = best(lambda: score_all(prepared, answer_runs, four), reps)
        # (c) nuggets
        nugget_set, read_n = timed(lambda: judgments.prepare("nuggets", str(nugget_path)))
        nuggets_best = best(lambda: score_all(nugget_set, answer_runs, nugget_measures_), reps)
        # (d) the track scripts' way, reading included
        support_objs, parse_s = timed(lambda: parse_lines(support_path))
        track_s, loop_s = timed(lambda: track_support(support_objs))
        nugget_objs, parse_n = timed(lambda: parse_lines(nugget_path))
        track_n, loop_n = timed(lambda: track_nuggets(nugget_objs))
        # the same means both ways (graded first-citation precision and recall; V strict)
        first = answer_runs[0].run_id
        graded = scored[first]
        assert abs(graded[support_measures_[0]] - track_s[first][0]) < 1e-9
        assert abs(graded[support_measures_[1]] - track_s[first][1]) < 1e-9
        vital_strict = score_all(nugget_set, answer_runs[:1], nugget_measures_)[first][
            nugget_measures_[3]]
        assert abs(vital_strict - track_n[first][0]) < 1e-9
        profile_support = profile_top(lambda: read_support(str(support_path)))
        profile_prepare = profile_top(lambda: type(prepared)(labels))
        profile_score = profile_top(
            lambda: score_all(prepared, answer_runs, support_measures_))
        profile_answers = profile_top(lambda: [read_answers(str(p)) for p in paths[:10]])
    n_labels = len(labels)
    rows = [
        ("(a) `irbench eval -R support` as a subprocess (start, read, score, print)", cli_s),
        (f"(a) evaluate_paths on the {RUNS} files, 1 process (reading and scoring the answers)",
         eval_1),
        (f"(a) evaluate_paths on the {RUNS} files, {os.cpu_count()} worker processes", eval_n),
        (f"(a) reading: read_support of NIST's JSONL ({n_labels:,} judged citations) and "
         "PreparedSupportSet", read_s),
        ("(a) of which PreparedSupportSet alone (the join's keys, the ad hoc view)", prepare_s),
        (f"(a) reading: read_answers of the {RUNS} answer files ({sizes[0] / 1e6:.0f} MB)",
         read_a),
        ("(a) scoring: rank + compute of the 8 support measures, every run (first time)",
         score_s),
        ("(b) **scoring alone**: PreparedSupportSet.rank + compute, 8 support measures, 100 "
         "runs (best)", score_best),
        ("(b) the same, the 4 measures the track loop computes (graded and hard, first "
         "citation)", score_four),
        ("(c) reading nuggetizer's assignments + PreparedNuggetSet "
         f"({RUNS * TOPICS * NUGGETS:,} rows)", read_n),
        ("(c) scoring alone: PreparedNuggetSet.rank + compute, 6 nugget scores, 100 runs "
         "(best)", nuggets_best),
        ("(d) track way, support: json.loads of every line of NIST's JSONL", parse_s),
        ("(d) track way, support: the per-sentence loop (4 values per run and topic)", loop_s),
        ("(d) track way, nuggets: json.loads of every line of the assignments", parse_n),
        ("(d) track way, nuggets: calculate_nugget_scores' loops (4 values)", loop_n),
    ]
    ratio = [
        ("support, scoring: track loop / irbench (b)", loop_s / score_best),
        ("support, scoring the same 4 values: track loop / irbench", loop_s / score_four),
        ("support, from the files: track (json.loads + loop) / irbench (read_support + "
         "scoring)", (parse_s + loop_s) / (read_s + score_best)),
        ("support, everything irbench reads (support file and 100 answer files) / track",
         (read_s + read_a + score_best) / (parse_s + loop_s)),
        ("nuggets, scoring: track loop / irbench (c)", loop_n / nuggets_best),
        ("nuggets, from the files: track / irbench (read + scoring)",
         (parse_n + loop_n) / (read_n + nuggets_best)),
    ]
    return [
        "## The real scoring path: files as the tracks write them", "",
        f"{RUNS} answer runs written as TREC RAG 2024 JSONL files ({TOPICS} topics each, "
        f"{REFERENCES} references, {SENTENCES} sentences of 8 words citing {CITATIONS} of the "
        f"references by index; {sizes[0] / 1e6:.0f} MB), NIST's support JSONL of every "
        f"(topic, run) ({n_labels:,} judged citations, {sizes[1] / 1e6:.0f} MB, labels -1/0/1/2 "
        f"drawn 0.1/0.3/0.2/0.4) and nuggetizer's assignments ({NUGGETS} nuggets a topic, "
        f"{sizes[2] / 1e6:.0f} MB), plain JSONL in a temporary folder (written in {made:.0f} s). "
        "Single timings are one run (each step's first); (b) and (c) are the best of "
        f"{reps} after a warm-up. The track way's means equal irbench's (checked: graded "
        "first-citation precision and recall, strict vital nugget score).", "",
        f"Machine: {machine()}.", "",
        f"**Findings.** Scoring alone (b) takes {score_best:.2f} s for {RUNS} runs: "
        f"{'under' if score_best < 1 else 'over'} the 1 s target. It is not faster than the track's plain loop over parsed JSON "
        f"({loop_s:.2f} s): with 2 citations a sentence the loop is short, and most of (b) is "
        "the join of each citation's segment id to the labels' interned ids (a dict look-up "
        "per citation in PreparedSupport.labels_for, see its profile below). From the files, "
        f"reading dominates: read_support takes {read_s - prepare_s:.1f} s and "
        f"PreparedSupportSet {prepare_s:.1f} s, against {parse_s:.1f} s for json.loads of the "
        "same lines; nearly half of read_support is id_value's whitespace check (a Python "
        "generator over every character of every id: `any(c.isspace() for c in text)`), and "
        "most of PreparedSupportSet is _best_per_pair's lexsort over byte-string docnos (the "
        "ad hoc view of the labels). The track scripts do not read the answer files (NIST's "
        "file repeats the sentences); irbench reads and checks them too "
        f"({read_a:.1f} s). cProfile's own times below are inflated by the profiler; the "
        "shares are what matters.", "",
        "Commands: `python bench/bench_answers.py` (this section: "
        "`python bench/bench_answers.py --path-only`); the subprocess row runs `python -m "
        "irbench eval -R support -m support support.jsonl RUN1.jsonl ... RUN100.jsonl`.", "",
        "| what | seconds |", "|---|---:|",
        *(f"| {what} | {seconds:.3f} s |" for what, seconds in rows), "",
        "| ratio | x |", "|---|---:|",
        *(f"| {what} | {x:.1f} |" for what, x in ratio), "",
        "Where reading NIST's support JSONL spends its time (cProfile, own time):", "",
        "| function | calls | own time | share |", "|---|---:|---:|---:|", *profile_support, "",
        "Where PreparedSupportSet spends its time (cProfile, own time):", "",
        "| function | calls | own time | share |", "|---|---:|---:|---:|", *profile_prepare, "",
        "Where scoring (b) spends its time (cProfile, own time):", "",
        "| function | calls | own time | share |", "|---|---:|---:|---:|", *profile_score, "",
        "Where reading 10 of the answer files spends its time (cProfile, own time):", "",
        "| function | calls | own time | share |", "|---|---:|---:|---:|", *profile_answers, "",
    ]


if __name__ == "__main__":
    main()
