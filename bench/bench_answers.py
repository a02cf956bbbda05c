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
   and nuggets computing the same 14 values (nuggetizer's ``calculate_nugget_scores`` style).

Writes bench/results-answers.md.

    python bench/bench_answers.py          # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from irbench.judgments.nuggets import PreparedNuggets, read_assignments
from irbench.judgments.support import PreparedSupport, read_support
from irbench.measures.answers import answer_shape, nugget_measures, support_measures

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
    args = parser.parse_args()
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
    ]
    write(rows)


def write(rows) -> None:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Answer measures: time", "",
        f"Produced by `python bench/bench_answers.py` on {now}, {os.cpu_count()} cores. "
        f"{RUNS} runs x {TOPICS} topics x {SENTENCES} sentences, {CITATIONS} citations each "
        f"({RUNS * TOPICS * SENTENCES * CITATIONS:,} support labels), {NUGGETS} nuggets a "
        "topic; wall clock, best of the repetitions after a warm-up (the track loop: one "
        "run after a warm-up). Target of issue 39: scoring under 1 s.", "",
        "| what | seconds |", "|---|---:|",
        *(f"| {what} | {seconds:.3f} s |" for what, seconds in rows), "",
    ]
    (HERE / "results-answers.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
