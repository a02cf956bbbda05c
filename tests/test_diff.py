"""irbench diff (issue 42): tau_AP as diffir computes it, RBO, Jaccard@k, the side-by-side
lists and the command on the bundled demo."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irbench.stats.diffs import (
    diff,
    diff_against,
    diff_all_pairs,
    diff_scores,
    dominance,
    move,
    prepare_rankings,
    snippet_of,
)
from irbench.trec import read_qrels, read_run

REPO = Path(__file__).resolve().parent.parent


def tauap_diffir(x, y):
    """diffir's tau_AP(x, y) written out: positions by y ascending (a stable sort), each
    document's later documents with a smaller x counted, over its place from the top."""
    n = len(x)
    if n == 1:
        return 1.0
    order = sorted(range(n), key=lambda i: y[i])
    total = 0.0
    for p, i in enumerate(order):
        if n - p - 1 > 0:
            total += sum(1 for j in order[p + 1:] if x[j] < x[i]) / (n - p - 1)
    return 1 - 2 * total / (n - 1)


def diffir_mean(a, b):
    """diffir's topic score: scores as ranks, a document absent from a run below all, the
    union sorted by the sum of scores, tau_AP averaged over both directions."""
    ra = {d: -(i + 1) for i, d in enumerate(a)}
    rb = {d: -(i + 1) for i, d in enumerate(b)}
    low = -(max(len(a), len(b)) + 1)
    union = sorted(set(a) | set(b), key=lambda d: ra.get(d, low) + rb.get(d, low), reverse=True)
    x, y = [ra.get(d, low) for d in union], [rb.get(d, low) for d in union]
    return (tauap_diffir(x, y) + tauap_diffir(y, x)) / 2


def rbo_ext(a, b, p):
    """Webber et al.'s extrapolated RBO (eq. 32), straight from the paper."""
    s, l = sorted((a, b), key=len)
    if not s:
        return 0.0
    x = [len(set(s[:d]) & set(l[:d])) for d in range(1, len(l) + 1)]
    ns, nl = len(s), len(l)
    total = sum(x[d - 1] / d * p ** d for d in range(1, nl + 1))
    total += sum(x[ns - 1] * (d - ns) / (ns * d) * p ** d for d in range(ns + 1, nl + 1))
    return (1 - p) / p * total + ((x[nl - 1] - x[ns - 1]) / nl + x[ns - 1] / ns) * p ** nl


def pair(rows_a, rows_b):
    a = read_run(rows_a, name="A")
    b = read_run(rows_b, name="B")
    return prepare_rankings([a, b])


def ranked(topic, docs):
    return [(topic, d, float(len(docs) - i)) for i, d in enumerate(docs)]


def test_identical_rankings_agree_fully():
    s = diff_scores(*pair(ranked("1", ["a", "b", "c"]), ranked("1", ["a", "b", "c"])))
    assert (s.tau_ap[0], s.rbo[0], s.jaccard[0]) == pytest.approx((1.0, 1.0, 1.0))


def test_reversed_three_by_hand():
    # A: a b c; B: c b a. tau_AP(A, B): b under c, x puts b above c: 1/1; a under c and b,
    # both discordant: 2/2 -> 1 - 2 * 2 / 2 = -1; the same the other way
    s = diff_scores(*pair(ranked("1", ["a", "b", "c"]), ranked("1", ["c", "b", "a"])))
    assert s.tau_ap[0] == pytest.approx(-1.0)
    assert s.jaccard[0] == 1.0


def test_disjoint_rankings_by_hand():
    # A: a b c, B: d e f; union of 6: each direction 1 - 2 * 3 / 5 = -0.2
    s = diff_scores(*pair(ranked("1", ["a", "b", "c"]), ranked("1", ["d", "e", "f"])))
    assert s.tau_ap[0] == pytest.approx(-0.2)
    assert (s.rbo[0], s.jaccard[0], s.shared[0]) == (0.0, 0.0, 0)


def test_ties_rank_in_trec_eval_order():
    # equal scores: trec_eval ranks the larger docno first, so A reads b a and B reads a b
    a, b = pair([("1", "a", 1.0), ("1", "b", 1.0)], [("1", "a", 2.0), ("1", "b", 1.0)])
    assert list(a.doc) == [1, 0]  # codes of b, a
    s = diff_scores(a, b)
    assert s.tau_ap[0] == pytest.approx(diffir_mean(["b", "a"], ["a", "b"])) == -1.0


def test_a_topic_empty_in_one_run_is_at_the_floor():
    s = diff_scores(*pair(ranked("1", ["a", "b"]) + ranked("2", ["x"]), ranked("1", ["a", "b"])))
    assert s.topics == ("1", "2")
    assert (s.tau_ap[1], s.rbo[1], s.jaccard[1]) == (-1.0, 0.0, 0.0)
    assert (s.size_a[1], s.size_b[1]) == (1, 0)
    assert s.tau_ap[0] == pytest.approx(1.0)


def test_against_a_straightforward_diffir_tau_ap_and_rbo():
    rng = random.Random(7)
    rows_a, rows_b, lists = [], [], {}
    for t in range(60):
        pool = [f"d{i}" for i in range(rng.randint(1, 40))]
        a = rng.sample(pool, rng.randint(1, len(pool)))
        b = rng.sample(pool, rng.randint(1, len(pool)))
        rows_a += ranked(f"t{t:02d}", a)
        rows_b += ranked(f"t{t:02d}", b)
        lists[f"t{t:02d}"] = (a, b)
    s = diff_scores(*pair(rows_a, rows_b), k=5, persistence=0.8)
    for i, topic in enumerate(s.topics):
        a, b = lists[topic]
        assert s.tau_ap[i] == pytest.approx(diffir_mean(a, b), abs=1e-12), topic
        assert s.rbo[i] == pytest.approx(rbo_ext(a, b, 0.8), abs=1e-12), topic
        inter = len(set(a[:5]) & set(b[:5]))
        assert s.jaccard[i] == pytest.approx(inter / len(set(a[:5]) | set(b[:5])))


def test_all_pairs_at_once_equal_each_pair_alone():
    rng = random.Random(11)
    runs = []
    for r in range(5):
        rows = []
        for t in range(6):
            if (r, t) == (2, 3):
                continue  # a topic one run has nothing for
            pool = [f"d{i}" for i in range(30)]
            rows += ranked(f"t{t}", rng.sample(pool, rng.randint(1, 30)))
        runs.append(read_run(rows, name=f"r{r}"))
    rankings = prepare_rankings(runs)
    together = list(diff_all_pairs(rankings, k=3, batch=3))
    alone = [diff_scores(a, b, k=3) for i, a in enumerate(rankings) for b in rankings[i + 1:]]
    assert len(together) == len(alone) == 10
    for x, y in zip(together, alone):
        assert (x.a, x.b, x.topics) == (y.a, y.b, y.topics)
        for column in ("tau_ap", "rbo", "jaccard", "shared", "shared_top"):
            assert np.array_equal(getattr(x, column), getattr(y, column)), column


def test_dominance_counts_elements_before_in_both_orders():
    rng = np.random.default_rng(3)
    sizes = [7, 1, 130, 0, 65]
    group = np.repeat(np.arange(5), sizes)
    first = np.concatenate([np.arange(n) for n in sizes])
    second = np.concatenate([rng.permutation(n) for n in sizes])
    expected = [sum(1 for j in range(len(group)) if group[j] == group[i]
                    and first[j] < first[i] and second[j] < second[i])
                for i in range(len(group))]
    assert dominance(group, first, second).tolist() == expected


def test_side_by_side_rows_on_a_small_case(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 2\n1 0 c 0\n")
    result = diff(str(qrels), ranked("1", ["a", "b", "c"]), ranked("1", ["c", "a", "d"]), k=3,
                  measure="P@3", by="measure")
    side = result.side_by_side("1")
    assert [(e.docno, e.judgment, e.other_rank, move(e, "A")) for e in side.a] == [
        ("a", 2, 2, "moved from 1 to 2"), ("b", None, None, "absent from B"),
        ("c", 0, 1, "moved from 3 to 1")]
    assert [move(e, "B") for e in side.b] == ["moved from 3 to 1", "moved from 1 to 2",
                                              "absent from A"]
    t = result.topics[0]
    assert (t.measure_a, t.measure_b, t.delta) == pytest.approx((1 / 3, 1 / 3, 0.0))


def test_snippet_marks_the_query_terms():
    text, spans = snippet_of("Nothing here.  Port reform in ports; PORT again", "port reform")
    assert [text[s:e] for s, e in spans] == ["Port", "reform", "PORT"]


def cli(*argv):
    return subprocess.run([sys.executable, "-m", "irbench", "diff", *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(120)
def test_cli_on_the_demo_table_and_json():
    done = cli("configs/demo.yaml", "groupA-1", "groupB-1", "--measure", "AP", "--topic", "414",
               "-k", "5")
    assert done.returncode == 0, done.stderr
    assert "moved from 1 to 3" in done.stdout and "*port*" in done.stdout
    first = cli("configs/demo.yaml", "groupA-1", "groupB-1", "--format", "json", "--top", "30")
    second = cli("configs/demo.yaml", "groupA-1", "groupB-1", "--format", "json", "--top", "30")
    assert first.stdout == second.stdout  # stable
    value = json.loads(first.stdout)
    taus = [t["tau_ap"] for t in value["topics"]]
    assert len(taus) == 25 and taus == sorted(taus)
    qrels = read_qrels(REPO / "runs/demo/qrels.txt")
    library = diff(qrels, REPO / "runs/demo/runs/groupA-1.txt",
                   REPO / "runs/demo/runs/groupB-1.txt")
    assert [t.topic for t in library.topics] == [t["topic"] for t in value["topics"]]


@pytest.mark.timeout(120)
def test_cli_without_a_config_and_its_errors():
    done = cli("runs/demo/qrels.txt", "runs/demo/runs/groupA-1.txt",
               "runs/demo/runs/groupB-1.txt", "--by", "rbo", "--top", "2")
    assert done.returncode == 0 and "2 most different by rbo" in done.stdout
    bad = cli("configs/demo.yaml", "groupA-1", "groupB-1", "--by", "measure")
    assert bad.returncode != 0 and "--by measure needs --measure" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.timeout(120)
def test_hostile_names_are_escaped(tmp_path):
    token = "\x1b]0;owned\x07\u202e"
    (tmp_path / "q").write_text(f"t{token} 0 d{token} 1\n")
    (tmp_path / "a").write_text(f"t{token} Q0 d{token} 1 2.0 x\nt{token} Q0 e 2 1.0 x\n")
    (tmp_path / "b").write_text(f"t{token} Q0 e 1 2.0 y\n")
    done = subprocess.run([sys.executable, "-m", "irbench", "diff", "q", "a", "b", "--topic",
                           f"t{token}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert "\\x1b]0;owned\\x07\\u202e" in done.stdout


# ---- the prepared codes and the fast paths (issue 42: all pairs of 129 runs in < 10 s) ------

def _random_runs(seed, runs=4, topics=5, pool=60, widths=("d{}", "doc-{:08d}")):
    rng = random.Random(seed)
    out = []
    for r in range(runs):
        rows = []
        for t in range(topics):
            if rng.random() < 0.15:
                continue  # a topic this run has nothing for
            docs = rng.sample(range(pool), rng.randint(1, pool))
            form = widths[r % len(widths)]
            rows += [(f"q{t}", form.format(d), float(rng.randint(0, 8))) for d in docs]
        out.append(read_run(rows or [("q0", "d0", 1.0)], name=f"r{r}"))
    return out


def _columns(rankings):
    return [(r.name, r.offsets.tolist(), r.vocabulary.docs[r.doc].tolist()) for r in rankings]


@pytest.mark.timeout(60)
def test_hashed_codes_equal_sorted_codes_and_a_shared_key_falls_back(monkeypatch):
    # ties (scores 0..8), docnos of several widths across runs, topics missing from some runs
    import irbench.stats.diffcodes as codes
    runs = _random_runs(5)
    fast = prepare_rankings(runs)
    assert list(fast[0].vocabulary.docs) == sorted(fast[0].vocabulary.docs)
    monkeypatch.setattr(codes, "_doc_keys", lambda d: np.zeros(len(d), np.uint64))
    slow = prepare_rankings(runs)  # every docno one key: the bytes are sorted instead
    assert _columns(fast) == _columns(slow)
    assert list(fast[0].vocabulary.docs) == list(slow[0].vocabulary.docs)
    for x, y in zip(diff_all_pairs(fast), diff_all_pairs(slow)):
        assert x.topics == y.topics and np.array_equal(x.tau_ap, y.tau_ap)
        assert np.array_equal(x.rbo, y.rbo) and np.array_equal(x.jaccard, y.jaccard)


def test_a_docno_listed_twice_keeps_its_better_rank():
    a, b = pair([("1", "x", 1.0), ("1", "y", 2.0), ("1", "x", 3.0)], ranked("1", ["x", "y"]))
    assert a.vocabulary.docs[a.doc].tolist() == [b"x", b"y"]
    assert diff_scores(a, b).tau_ap[0] == pytest.approx(1.0)


def test_no_runs_and_empty_topics():
    assert prepare_rankings([]) == [] and list(diff_all_pairs([])) == []
    a, b = pair(ranked("1", ["a"]), ranked("2", ["b"]))
    s = diff_scores(a, b)
    assert s.topics == ("1", "2") and s.tau_ap.tolist() == [-1.0, -1.0]


@pytest.mark.timeout(120)
def test_topics_longer_than_a_thousand_documents_against_diffir():
    rng = random.Random(3)
    pool = [f"d{i}" for i in range(1500)]
    a, b = rng.sample(pool, 1300), rng.sample(pool, 1100)
    b[:400] = a[:400]  # a long shared head: > 6 bitset words of shared documents
    b = list(dict.fromkeys(b))
    s = diff_scores(*pair(ranked("t", a), ranked("t", b)), persistence=0.95)
    assert s.shared[0] > 700
    assert s.tau_ap[0] == pytest.approx(diffir_mean(a, b), abs=1e-12)
    assert s.rbo[0] == pytest.approx(rbo_ext(a, b, 0.95), abs=1e-12)


def test_dominance_on_groups_of_many_words():
    rng = np.random.default_rng(8)
    sizes = [1100, 0, 3, 700, 64, 65]
    group = np.repeat(np.arange(len(sizes)), sizes)
    first = np.concatenate([rng.permutation(n) for n in sizes])
    second = np.concatenate([rng.permutation(n) for n in sizes])
    expected = np.zeros(len(group), np.int64)
    at = 0
    for n in sizes:  # numpy by group: an element's count of those below it in both orders
        f, s = first[at:at + n], second[at:at + n]
        expected[at:at + n] = ((f[None, :] < f[:, None]) & (s[None, :] < s[:, None])).sum(1)
        at += n
    assert dominance(group, first, second).tolist() == expected.tolist()


def test_runs_in_any_order_and_shares_give_the_same_pairs():
    rankings = prepare_rankings(_random_runs(9, runs=6))
    a, rest = rankings[0], rankings[1:]
    scattered = diff_against(a, rest[::-1])  # not prepared next to each other: copied rows
    alone = [diff_scores(a, b) for b in rest[::-1]]
    for x, y in zip(scattered, alone):
        assert x.b == y.b and np.array_equal(x.tau_ap, y.tau_ap)
        assert np.array_equal(x.rbo, y.rbo) and np.array_equal(x.shared, y.shared)
    every = [(s.a, s.b, s.tau_ap.tolist()) for s in diff_all_pairs(rankings, batch=2)]
    shared_out = [(s.a, s.b, s.tau_ap.tolist()) for w in range(3)
                  for s in diff_all_pairs(rankings, batch=4, share=(w, 3))]
    assert sorted(shared_out) == sorted(every) and len(every) == 15


def test_rankings_deeper_than_an_int16():
    n = 40_000  # counts past 32,767: the running popcounts must not wrap
    group = np.zeros(n, np.int64)
    assert dominance(group, np.arange(n), np.arange(n)).tolist() == list(range(n))
    assert not dominance(group, np.arange(n), np.arange(n)[::-1].copy()).any()
    run = ranked("t", [f"d{i}" for i in range(n)])
    s = diff_scores(*pair(run, run))
    assert (s.tau_ap[0], s.rbo[0], s.jaccard[0]) == pytest.approx((1.0, 1.0, 1.0))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_every_pair_in_range_and_equal_to_diffir_on_tied_random_runs(seed):
    """All pairs of runs with tied scores, topics one run lacks and docnos of two widths:
    every score within its range, and tau_AP and RBO equal the straightforward versions on
    the rankings in trec_eval's order (score, then docno, descending)."""
    runs = _random_runs(seed, runs=5, topics=6, pool=40)
    lists = {}
    for run in runs:
        by_topic: dict[str, list] = {}
        for q, d, s in zip(run.query_id, run.doc_id, run.score):
            by_topic.setdefault(q.decode(), []).append((float(s), d.decode()))
        lists[run.name] = {q: [d for _, d in sorted(rows, key=lambda r: (r[0], r[1]),
                                                      reverse=True)]
                           for q, rows in by_topic.items()}
    for s in diff_all_pairs(prepare_rankings(runs), batch=3):
        assert np.all((-1 <= s.tau_ap) & (s.tau_ap <= 1))
        assert np.all((0 <= s.rbo) & (s.rbo <= 1 + 1e-12))
        assert np.all((0 <= s.jaccard) & (s.jaccard <= 1))
        for i, topic in enumerate(s.topics):
            a, b = lists[s.a].get(topic, []), lists[s.b].get(topic, [])
            if a and b:
                assert s.tau_ap[i] == pytest.approx(diffir_mean(a, b), abs=1e-12), topic
                assert s.rbo[i] == pytest.approx(rbo_ext(a, b, 0.9), abs=1e-12), topic
            else:
                assert s.tau_ap[i] == -1 and s.rbo[i] == 0
