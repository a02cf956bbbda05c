"""The vectorised run reader and ranker against simple reference implementations.

``read_run`` parses regular pieces with numpy (:func:`irbench.trec.columns.run_columns`) and falls back
to the line-by-line parser; ``rank_run`` moves topic blocks, sorts only tied rows and looks docnos
up through hashed keys. Each must give exactly what the straightforward versions give: the
line-by-line parser over the whole file, and a full lexsort with string lookups (the
implementation these replaced, kept here as the reference).
"""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

import irbench
import irbench.arrays as arrays
import irbench.ranked as ranked
import irbench.trec as trec
from irbench.errors import EvaluationError, FormatError
from irbench.ranked import EvalOptions, PreparedQrels, rank_run
from irbench.runner.parallel import evaluate_paths

# --------------------------------------------------------------------------- reading

def _reference_read(data: bytes):
    """The line-by-line parser over the whole file: (qids, docnos, scores, lines, tag)."""
    problems = trec.Problems("x")
    q, d, s, ln, tag = trec.text._parse_run_lines(data, 1, problems)
    assert not problems, problems.shown
    return q, d, s, ln, tag


def _assert_same_run(run: irbench.Run, data: bytes) -> None:
    q, d, s, ln, tag = _reference_read(data)
    assert run.query_id.tolist() == q
    assert run.doc_id.tolist() == d
    assert run.score.dtype == np.float64 and run.line.dtype == np.int64
    assert run.score.tobytes() == np.array(s, dtype=np.float64).tobytes()  # bit for bit, -0.0
    assert run.line.tolist() == ln
    assert run.runid == tag.decode("utf-8", "backslashreplace")


def _lines(rows, sep=" ", end="\n") -> bytes:
    return "".join(sep.join(map(str, r)) + end for r in rows).encode("utf-8")


BASIC = [("q1", "Q0", "d3", 1, "3.0", "t"), ("q1", "Q0", "d2", 2, "2.0", "t"),
         ("q2", "Q0", "d10", 1, "2.5", "t"), ("q2", "Q0", "d9", 2, "0.25", "t2")]

TRICKY = {
    "plain": _lines(BASIC),
    "tabs": _lines(BASIC, sep="\t"),
    "many spaces": _lines(BASIC, sep="   \t "),
    "vt and ff": _lines(BASIC, sep="\x0b\x0c"),
    "crlf": _lines(BASIC, end="\r\n"),
    "no final newline": _lines(BASIC)[:-1],
    "no final newline, trailing blanks": _lines(BASIC)[:-1] + b"  \t",
    "leading and inner blank lines": b"\n\n  \n" + _lines(BASIC[:2]) + b"\n \t\n" + _lines(BASIC[2:]),
    "indented lines": _lines([("",) + r for r in BASIC], sep=" "),
    "comments": b"# head\n" + _lines(BASIC[:2]) + b"   # indented\n\t#x Q0 d 1 1 t\n"
                + _lines(BASIC[2:]),
    "hash in docno": _lines([("q1", "Q0", "d#1", 1, "2", "t"), ("q1", "Q0", "#d2", 2, "1", "t")]),
    "extra fields": _lines([r + ("extra", "more") for r in BASIC]),
    "one line": b"q1 Q0 d1 1 1.5 tag",
    "score formats": _lines([("q1", "Q0", f"d{i}", i, s, "t") for i, s in enumerate(
        ["1e5", "1E-3", ".5", "5.", "-0", "+1", "-2.5e+3", "0.1000000000000000055511151231257827",
         "123456789012345678901234567890", "4.9e-324", "2.2250738585072011e-308", "007"])]),
    "long docnos": _lines([("q1", "Q0", "x" * n + str(n), n, "1.0", "t") for n in
                           (1, 7, 8, 9, 15, 16, 17, 31, 40)]),
    "control byte in token": b"q1 Q0 d\x01x 1 1.0 t\nq1 Q0 d\x1fy 2 0.5 t\n",
    "non-ascii": "q1 Q0 dé 1 1.0 t\nq2 Q0 \xff 1 1.0 t\n".encode("latin-1"),
    "long tag": _lines([("q1", "Q0", "d1", 1, "1.0", "t" * 100)]),
    "short last line": b"q1 Q0 dddddddddddddddddddddddd 1 11111111.0 tag\nq Q0 d 2 1 t",
    "unsorted, ungrouped, ties": _lines([("q2", "Q0", "a", 1, "1", "t"), ("q1", "Q0", "b", 1, "2", "t"),
                                         ("q2", "Q0", "c", 1, "3", "t"), ("q1", "Q0", "d", 1, "2", "t")]),
}


@pytest.mark.parametrize("name", list(TRICKY))
@pytest.mark.parametrize("chunk", [None, 7, 64])
def test_read_run_matches_line_by_line(name, chunk, tmp_path, monkeypatch):
    if chunk:
        monkeypatch.setattr(trec.text, "CHUNK", chunk)
    data = TRICKY[name]
    path = tmp_path / "run"
    path.write_bytes(data)
    _assert_same_run(irbench.read_run(str(path)), data)
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(data))
    _assert_same_run(irbench.read_run(str(gz)), data)


def test_regular_pieces_take_the_fast_path():
    data = _lines(BASIC) + b"\n"
    assert trec.columns.run_columns(data, 1) is not None
    for bad in (b"q1 Q0 d1 1 inf t\n", b"q1 Q0 d1 1 1_0 t\n", b"# c\n", b"q1 Q0 d1 1 1\n",
                b"q1 Q0 d1 1 1 t x\n", b"q1 Q0 d1 1 nan t\n", b"q1 Q0 d1 1 0x10 t\n",
                b"q1 Q0 d1 1 1e400 t\n", b"q1 Q0 d1 1 infinity t\n", b"q1 Q0 d1 1 1.5\xa0 t\n"):
        assert trec.columns.run_columns(data + bad, 1) is None, bad


@pytest.mark.parametrize("score", ["inf", "nan", "1_0", "-infinity", "1e400", "0x10", "1,5",
                                   "1.2.3", "e5", "."])
def test_bad_scores_reported_as_before(score, tmp_path):
    good = _lines([("q1", "Q0", f"d{i}", i, f"{100 - i}.5", "t") for i in range(50)])
    path = tmp_path / "run"
    path.write_bytes(good + f"q1 Q0 bad 1 {score} t\n".encode() + good)
    with pytest.raises(FormatError) as info:
        irbench.read_run(str(path))
    assert info.value.problems == [f"{path}:51: score '{score}' is not a finite number"]


def test_nul_byte_in_a_later_piece(tmp_path, monkeypatch):
    monkeypatch.setattr(trec.text, "CHUNK", 32)
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d1 1 x t\n" + _lines(BASIC) * 3 + b"q1 Q0 d\x00 1 1 t\n")
    with pytest.raises(FormatError) as info:
        irbench.read_run(str(path))
    assert info.value.problems == [f"{path}:14: not a text file (NUL byte)"]


def test_random_runs_match_line_by_line(tmp_path, monkeypatch):
    rng = random.Random(7)
    seps = [" ", "  ", "\t", " \t", "\x0b"]
    for case in range(40):
        monkeypatch.setattr(trec.text, "CHUNK", rng.choice([16, 100, 1 << 20]))
        lines = []
        for _ in range(rng.randrange(1, 60)):
            fields = [rng.choice(["q1", "q22", "3", "01"]), "Q0",
                      "d" * rng.randrange(1, 20) + str(rng.randrange(100)),
                      str(rng.randrange(1000)),
                      rng.choice(["1", "-0.5", "2.25", "1e-3", str(rng.random())]),
                      rng.choice(["tag", "t" * 9])]
            line = rng.choice(["", " "]) + rng.choice(seps).join(fields) + rng.choice(["", " "])
            lines.append(line)
            if rng.random() < 0.1:
                lines.append(rng.choice(["", "  ", "# comment", " #c"]))
        data = rng.choice(["\n", "\r\n"]).join(lines) + rng.choice(["", "\n"])
        path = tmp_path / f"run{case}"
        path.write_bytes(data.encode())
        _assert_same_run(irbench.read_run(str(path)), data.encode())


def test_token_words_near_the_end_of_a_piece():
    buf = np.frombuffer(b"abcdefghij k lmnopqrstuvwxyz0123 z", dtype=np.uint8)
    starts, ends, _ = trec.columns.tokens(buf)
    words = trec.token_words(buf, starts, ends)
    assert trec.as_strings(words, ends - starts).tolist() == [
        b"abcdefghij", b"k", b"lmnopqrstuvwxyz0123", b"z"]


# --------------------------------------------------------------------------- ranking

def _reference_rank(run, prepared, options):
    """rank_run as it was: full lexsort, np.unique codes for ties, string binary search."""
    topics = prepared.topics
    pos = np.minimum(np.searchsorted(topics, run.query_id), len(topics) - 1)
    keep = topics[pos] == run.query_id
    topic, doc_id, score, line = pos[keep], run.doc_id[keep], run.score[keep], run.line[keep]
    if options.duplicates == "first" and len(topic):
        o = np.lexsort((line, doc_id, topic))
        same = (topic[o][1:] == topic[o][:-1]) & (doc_id[o][1:] == doc_id[o][:-1])
        mask = np.ones(len(topic), dtype=bool)
        mask[o[1:][same]] = False
        topic, doc_id, score, line = topic[mask], doc_id[mask], score[mask], line[mask]
    missing = np.bincount(topic, minlength=len(topics)) == 0
    if missing.any():
        fake = np.flatnonzero(missing)
        topic = np.concatenate((topic, fake))
        doc_id = np.concatenate((doc_id.astype("S64"), np.full(len(fake), ranked.FAKE_DOCNO)))
        score = np.concatenate((score, np.ones(len(fake))))
    code = np.unique(doc_id, return_inverse=True)[1]
    order = np.lexsort((-code, -score, topic))
    topic, doc_id = topic[order], doc_id[order]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(topic, minlength=len(topics)))))
    if options.max_docs is not None:
        cut = np.arange(len(topic)) - offsets[topic] < options.max_docs
        topic, doc_id = topic[cut], doc_id[cut]
    level = np.full(len(topic), -1, dtype=np.int64)
    for i, (t, d) in enumerate(zip(topic, doc_id)):
        hit = np.flatnonzero((prepared.row_topic == t) & (prepared.doc_id == d))
        if len(hit):
            rel = prepared.relevance[hit[0]]
            level[i] = rel if rel >= 0 else -2
    if options.judged_only:
        topic, level = topic[level >= 0], level[level >= 0]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(topic, minlength=len(topics)))))
    return offsets, level, missing


def _assert_same_ranking(run, prepared, options):
    ranked = rank_run(run, prepared, options)
    offsets, level, missing = _reference_rank(run, prepared, options)
    assert ranked.offsets.tolist() == offsets.tolist()
    assert ranked.level.tolist() == level.tolist()
    assert ranked.missing.tolist() == missing.tolist()


def _random_case(rng: random.Random, topics: int, docs: int, rows: int, grouped: bool):
    doc_names = sorted({rng.choice(["d", "doc-", "FBIS3-", "LA0101", "x" * 12]) + str(i)
                        for i in range(docs)} | {"d9", "d10", "d1", "é", "z"})
    topic_names = [f"{rng.choice(['q', '', '0'])}{i}" for i in range(topics)]
    qrels = {t: {d: rng.choice([-1, 0, 0, 1, 2])
                    for d in rng.sample(doc_names, rng.randrange(1, min(12, len(doc_names))))}
             for t in topic_names if rng.random() < 0.9}
    run_topics = topic_names + ["extra"]
    table = []
    for t in run_topics:
        for d in rng.sample(doc_names, min(len(doc_names), rng.randrange(1, rows))):
            table.append((t, d, rng.choice([1.0, 0.5, 0.25, -0.0, 0.0, 2.0, rng.random()])))
    if grouped:
        rng.shuffle(run_topics)
        by_topic = {t: [r for r in table if r[0] == t] for t in run_topics}
        table = [r for t in run_topics for r in sorted(by_topic[t], key=lambda r: -r[2])]
    else:
        rng.shuffle(table)
    return qrels, table


@pytest.mark.parametrize("grouped", [True, False])
def test_random_rankings_match_reference(grouped):
    rng = random.Random(11 if grouped else 12)
    option_sets = [EvalOptions(complete=True), EvalOptions(complete=True, max_docs=3),
                   EvalOptions(complete=True, judged_only=True),
                   EvalOptions(complete=True, duplicates="first", max_docs=5)]
    for _ in range(25):
        qrels, table = _random_case(rng, rng.randrange(1, 8), rng.randrange(2, 30),
                                    rng.randrange(2, 25), grouped)
        if not qrels:
            continue
        prepared = PreparedQrels(irbench.read_qrels(qrels))
        run = irbench.read_run(table)
        for options in option_sets:
            _assert_same_ranking(run, prepared, options)
        dup = irbench.read_run(table + table[:3])
        _assert_same_ranking(dup, prepared, EvalOptions(complete=True, duplicates="first"))


def test_ties_with_long_shared_prefixes():
    docs = ["FR940104-0-00001", "FR940104-0-00002", "FR940104-0-0001", "FR940104-1-00001",
            "FR940104-0-00001x", "FR94010", "FR940104", "FR9401040", "LA010189-0001"]
    table = [("q1", d, 1.0) for d in docs] + [("q2", d, 0.5) for d in reversed(docs)]
    prepared = PreparedQrels(irbench.read_qrels({"q1": {docs[0]: 1}, "q2": {docs[3]: 2}}))
    _assert_same_ranking(irbench.read_run(table), prepared, EvalOptions())


def test_many_tie_groups_use_two_radix_passes():
    values = np.random.default_rng(3).integers(0, 200_000, 5000)
    got = arrays.stable_int_order(values)
    assert got.tolist() == np.argsort(values, kind="stable").tolist()


@pytest.mark.parametrize("bad_hash", ["constant", "prefix"])
def test_hash_collisions_never_change_results(bad_hash, monkeypatch):
    def constant(doc_id, words=None):
        return np.zeros(len(doc_id), dtype=np.uint64)

    def prefix(doc_id, words=None):  # docnos sharing their first 8 bytes collide
        return arrays.doc_words(doc_id)[:, 0].copy()

    rng = random.Random(5)
    cases = [_random_case(rng, 4, 20, 15, True) for _ in range(6)]
    qrels_extra = {"q1": {"abcdefgh1": 1, "zz": 0}}
    run_extra = [("q1", "abcdefgh2", 3.0), ("q1", "abcdefgh1", 2.0), ("q1", "zz", 2.0)]
    cases.append((qrels_extra, run_extra))
    monkeypatch.setattr(ranked, "doc_hash", constant if bad_hash == "constant" else prefix)
    for qrels, table in cases:
        prepared = PreparedQrels(irbench.read_qrels(qrels))
        run = irbench.read_run(table)
        _assert_same_ranking(run, prepared, EvalOptions(complete=True))
        _assert_same_ranking(run, prepared, EvalOptions(complete=True, duplicates="first"))
    prepared = PreparedQrels(irbench.read_qrels(qrels_extra))
    with pytest.raises(FormatError, match="retrieved twice"):
        rank_run(irbench.read_run(run_extra + run_extra[:1]), prepared)


def test_duplicates_found_in_big_runs_across_slices(monkeypatch):
    monkeypatch.setattr(ranked, "_SLICE", 4)
    table = [(f"q{t}", f"d{i}", float(i % 3)) for t in range(5) for i in range(7)]
    prepared = PreparedQrels(irbench.read_qrels({f"q{t}": {"d1": 1} for t in range(5)}))
    _assert_same_ranking(irbench.read_run(table), prepared, EvalOptions())
    with pytest.raises(FormatError) as info:
        rank_run(irbench.read_run(table + [("q4", "d6", 9.0), ("q2", "d0", 0.0)]), prepared)
    assert info.value.problems[0].startswith("run:36: docno 'd6' retrieved twice for topic 'q4'")
    assert info.value.problems[1].startswith("run:37: docno 'd0' retrieved twice for topic 'q2'")


def test_key_table_finds_every_key():
    rng = np.random.default_rng(1)
    keys = np.concatenate((np.arange(1000, dtype=np.uint64),  # clustered: long probe runs
                           rng.integers(0, 2**63, 3000, dtype=np.uint64)))
    table = arrays.KeyTable(keys)
    probe = np.concatenate((keys, rng.integers(0, 2**63, 3000, dtype=np.uint64),
                            np.arange(1000, 3000, dtype=np.uint64)))
    want = {int(k): i for i, k in enumerate(keys)}
    assert table.find(probe).tolist() == [want.get(int(k), -1) for k in probe]


# --------------------------------------------------------------------------- parallel

def test_evaluate_paths_matches_evaluate(tmp_path):
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1, "d4": 1}}
    runs = []
    for i in range(5):
        rows = [(q, f"d{d}", float((d * (i + 3)) % 4)) for q in ("q1", "q2") for d in range(1, 6)]
        path = tmp_path / f"run{i}"
        path.write_text("".join(f"{q} Q0 {d} 0 {s} tag{i}\n" for q, d, s in rows))
        runs.append(str(path))
    bad = tmp_path / "bad"
    bad.write_text("q1 Q0 d1 1 x t\n" * 25)
    partial = tmp_path / "partial"
    partial.write_text("q1 Q0 d1 1 1 t\n")
    prepared = PreparedQrels(irbench.read_qrels(qrels))
    measures = [irbench.parse_measure(m) for m in ("AP", "nDCG@10", "P@2")]
    paths = runs[:2] + [str(bad), str(partial)] + runs[2:]
    for workers in (1, 2):
        results = evaluate_paths(prepared, paths, measures, workers=workers)
        assert [r.path for r in results] == paths
        for r in results:
            if r.path in runs:
                want = irbench.evaluate(prepared, r.path, measures)
                assert r.error is None and r.stage == ""
                assert r.evaluation.run_name == want.run_name and r.evaluation.runid == want.runid
                for m in measures:
                    assert r.evaluation[m].tolist() == want[m].tolist()
                    assert r.evaluation.summary(m) == want.summary(m)
        read_error = results[2]
        assert read_error.stage == "read" and isinstance(read_error.error, FormatError)
        assert len(read_error.error.problems) == 20 and read_error.error.more == 5
        assert read_error.error.problems[0] == f"{bad}:1: score 'x' is not a finite number"
        assert results[3].stage == "evaluate"
        assert isinstance(results[3].error, EvaluationError)
        assert "'q2'" in str(results[3].error)
    kept = evaluate_paths(prepared, runs[:2], measures, workers=2, keep_ranked=True)
    assert all(r.ranked is not None for r in kept)


def _read_both(path, monkeypatch, workers=3):
    """(parallel read_run's outcome, read_run's outcome): a Run or the FormatError's text."""
    import irbench.runner.parallel as parallel

    monkeypatch.setattr(parallel, "_PARALLEL_READ_BYTES", 10)
    monkeypatch.setattr(trec.text, "CHUNK", 50)

    def outcome(read):
        try:
            run = read()
        except FormatError as exc:
            return str(exc)
        return (run.query_id.tolist(), run.doc_id.tolist(), run.score.tolist(),
                run.line.tolist(), run.runid, run.name, run.path)

    return (outcome(lambda: parallel.read_run(path, workers=workers)),
            outcome(lambda: irbench.read_run(path)))


@pytest.mark.parametrize("name", ["plain", "comments", "crlf", "no final newline",
                                  "leading and inner blank lines", "unsorted, ungrouped, ties"])
def test_parallel_read_run_matches_read_run(name, tmp_path, monkeypatch):
    path = tmp_path / "run"
    path.write_bytes(TRICKY[name] * 7)
    parallel_run, run = _read_both(str(path), monkeypatch)
    assert not isinstance(run, str) and parallel_run == run


@pytest.mark.parametrize("bad", [[3], [3, 40], list(range(2, 60, 2)), "nul", "empty"])
def test_parallel_read_run_reports_problems_as_read_run(bad, tmp_path, monkeypatch):
    lines = [f"q1 Q0 d{i} {i} {100 - i} t\n" for i in range(1, 61)]
    if bad == "nul":
        lines[10] = "q1 Q0 d 1 x t\n"
        lines[45] = "q1 Q0 d\x00 1 1 t\n"
    elif bad == "empty":
        lines = ["# nothing\n"] * 60
    else:
        for n in bad:
            lines[n - 1] = f"q1 Q0 bad{n} 1 x{n} t\n"
    path = tmp_path / "run"
    path.write_text("".join(lines))
    parallel_run, run = _read_both(str(path), monkeypatch)
    assert isinstance(run, str) and parallel_run == run


def test_key_table_spreads_keys_that_share_their_low_bits():
    """One docno in 10,000 topics: the topic sits in the keys' high bits, so their low bits
    agree. Slots from the low bits alone queued them (quadratic: 15 s for 10,000 topics x 20
    shared docnos); mixed slots take a few placement rounds and find every key."""
    topics, docs = 10_000, 20
    topic = np.repeat(np.arange(topics), docs)
    doc_id = np.tile(np.array([f"doc{d}".encode() for d in range(docs)]), topics)
    keys = arrays.topic_keys(topic, arrays.doc_hash(doc_id), topics)
    table = arrays.KeyTable(keys)
    assert table.rounds <= 20  # low bits alone: 10,000 rounds
    assert np.array_equal(table.find(keys), np.arange(len(keys)))
    other = np.tile(np.array([f"other{d}".encode() for d in range(docs)]), topics)
    assert np.all(table.find(arrays.topic_keys(topic, arrays.doc_hash(other), topics)) == -1)


def test_one_long_docno_costs_the_reader_one_wide_column_not_three(tmp_path):
    """A docno at the 1,024-byte limit widens the docno column to 1,024 bytes a row (issue
    26: ids as codes will remove that); reading it holds that column about once, not as
    words, masks and bytes at the same time (allocations counted by tracemalloc)."""
    import tracemalloc

    from irbench.trec import read_run

    rows = [f"1 Q0 D{i} {i + 1} {30_000 - i} run\n" for i in range(20_000)]
    rows[10_000] = f"1 Q0 {'d' * 1024} 10001 1 run\n"
    path = tmp_path / "wide.txt"
    path.write_text("".join(rows))
    column = 20_000 * 1024
    tracemalloc.start()
    try:
        run = read_run(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.doc_id.dtype.itemsize == 1024 and run.doc_id[10_000] == b"d" * 1024
    assert peak < 1.5 * column, peak / column


def test_ranking_reads_a_wide_docno_column_without_copying_it(tmp_path):
    """Ranking follows rows through indices: the docno column made wide by one long docno is
    read where needed (ties, judged rows), not copied in ranked order (tracemalloc)."""
    import tracemalloc

    import irbench
    from irbench.trec import read_qrels, read_run

    rows = [f"1 Q0 D{i} {i + 1} {30_000 - i} run\n" for i in range(20_000)]
    rows[10_000] = f"1 Q0 {'d' * 1024} 10001 1 run\n"  # out of order: the run is re-sorted
    rows[20] = "1 Q0 D19 21 29981 run\n".replace("D19", "D19x")  # a tie with D19's score
    path = tmp_path / "wide.txt"
    path.write_text("".join(rows))
    run = read_run(str(path))
    prepared = irbench.PreparedQrels(read_qrels([("1", "D1", 1), ("1", "d" * 1024, 2)]))
    column = run.doc_id.nbytes
    tracemalloc.start()
    try:
        ev = irbench.evaluate(prepared, run, ["AP", "P@10"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * column, peak / column
    # D1 at rank 2, the long docno last of 20,000 (score 1): AP = (1/2 + 2/20000) / 2
    assert ev.summary("AP") == pytest.approx((1 / 2 + 2 / 20_000) / 2, abs=1e-15)
    assert ev.summary("P@10") == pytest.approx(0.1)


@pytest.mark.parametrize("seed", range(6))
def test_pair_order_is_lexsort(seed):
    """Topic blocks with docnos in order take the fast path; split topics, docnos out of
    order and repeated pairs fall back: always exactly np.lexsort's (stable) permutation."""
    rng = random.Random(seed)
    rows = []
    for t in rng.sample(range(1, 40), 12):  # numeric topic order: not byte order
        docs = sorted(f"D{rng.randrange(60)}" for _ in range(rng.randrange(1, 9)))
        rows += [(str(t), d) for d in docs]  # repeats included, in order
    variants = [rows]
    if seed % 2:
        shuffled = rows[:]
        rng.shuffle(shuffled)
        variants.append(shuffled)
    variants.append(rows + rows[:3])  # a topic split in two blocks
    swapped = rows[:]
    for i in range(1, len(swapped)):
        if swapped[i][0] == swapped[i - 1][0] and swapped[i][1] != swapped[i - 1][1]:
            swapped[i - 1], swapped[i] = swapped[i], swapped[i - 1]
            break
    variants.append(swapped)
    for variant in variants:
        q = np.array([r[0].encode() for r in variant])
        d = np.array([r[1].encode() for r in variant])
        assert arrays.pair_order(q, d).tolist() == np.lexsort((d, q)).tolist()


def _decimal_tokens(rng: random.Random, n: int) -> list[bytes]:
    """Score-like tokens of every shape: plain decimals short and long, signs, leading and
    trailing zeros, no digit before or after the point, exponents, 16+ digits, junk."""
    out = []
    for _ in range(n):
        kind = rng.randrange(9)
        whole = str(rng.randrange(10 ** rng.randrange(0, 10))) if rng.random() < 0.9 else ""
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 12)))
        sign = rng.choice(["", "", "-", "+"])
        if kind < 5:
            token = f"{sign}{whole}.{frac}" if rng.random() < 0.8 else f"{sign}{whole}"
        elif kind == 5:
            token = f"{sign}{whole}.{frac}e{rng.randrange(-30, 30)}"
        elif kind == 6:
            token = f"{sign}{rng.randrange(10 ** 14, 10 ** 18)}"  # around 2**53
        elif kind == 7:
            token = f"{sign}0.{'0' * rng.randrange(0, 6)}{rng.randrange(1, 10 ** 9)}"
        else:
            token = rng.choice([".", "-", "+", "-.", "1.2.3", "1-2", "..5", "+-1", "5."])
        out.append(token.encode())
    return out


@pytest.mark.parametrize("seed", range(4))
def test_plain_decimals_are_numpys_correctly_rounded_values(seed):
    """Every token the whole-array reader takes is bit for bit what numpy's cast (correctly
    rounded, as strtod) gives; the others are left to that cast."""
    rng = random.Random(seed)
    tokens = _decimal_tokens(rng, 20_000)
    data = b" ".join(tokens) + b" "
    starts = np.cumsum([0] + [len(t) + 1 for t in tokens[:-1]])
    ends = starts + np.array([len(t) for t in tokens])
    words = trec.ids.token_words(np.frombuffer(data, dtype=np.uint8), starts, ends)
    values, done = trec.ids.plain_decimals(words, ends - starts)
    assert done.mean() > 0.5
    for token, value, ok in zip(tokens, values.tolist(), done.tolist()):
        if not ok:
            continue
        assert len(token) <= 16 and b"e" not in token
        want = np.array([token]).astype(np.float64)[0]
        assert np.float64(value).tobytes() == want.tobytes(), token
    taken = {t for t, ok in zip(tokens, done.tolist()) if ok}
    for junk in (b".", b"-", b"+", b"-.", b"1.2.3", b"1-2", b"..5", b"+-1"):
        assert junk not in taken


def test_plain_decimals_edges():
    tokens = [b"-0.0", b"5.", b"+.5", b"9007199254740992", b"9007199254740993", b"0.1",
              b"123456789012345", b"1234567890123456", b"-1.5e3"]
    data = b" ".join(tokens)
    starts = np.cumsum([0] + [len(t) + 1 for t in tokens[:-1]])
    ends = starts + np.array([len(t) for t in tokens])
    words = trec.ids.token_words(np.frombuffer(data, dtype=np.uint8), starts, ends)
    values, done = trec.ids.plain_decimals(words, ends - starts)
    assert done.tolist() == [True, True, True, True, False, True, True, True, False]
    assert np.signbit(values[0]) and values[0] == 0.0
    assert values[[1, 2, 3, 5, 6, 7]].tolist() == [5.0, 0.5, 2.0 ** 53, 0.1, 123456789012345.0,
                                                  1234567890123456.0]


@pytest.mark.parametrize("lengths", [[1000] * 50, [1000] * 49 + [3], [5, 0, 7, 1, 7],
                                     [1] * 300 + [5000], [0, 0, 4]])
def test_segment_cumsum_sums_each_segment_on_its_own(lengths):
    """Equal segments (a matrix), uneven (zeros after the shorter), very uneven (one matrix
    per length): bit for bit each segment's own left-to-right sum, and exact for integers."""
    rng = np.random.default_rng(len(lengths))
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = rng.random(int(offsets[-1])) * 10.0 ** rng.integers(-8, 8, int(offsets[-1]))
    want = np.concatenate([np.cumsum(values[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    got = arrays.segment_cumsum(values, offsets)
    assert got.dtype == np.float64 and got.tobytes() == want.tobytes()
    ints = rng.integers(0, 3, int(offsets[-1]))
    assert arrays.segment_cumsum(ints, offsets).tolist() == np.concatenate(
        [np.cumsum(ints[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]).tolist()


QRELS_PIECES = {
    "plain": b"401 0 FBIS3-1 1\n401 0 FT93-2 0\n402 0 LA01-3 2\n",
    "underscores in ids": b"q_1 0 msmarco_doc_00_12 1\nq_1 0 msmarco_doc_00_13 0\n",
    "crlf and tabs": b"1\t0\td1\t1\r\n1 0 d2 0\r\n",
    "no final newline": b"1 0 d1 1\n1 0 d2 3",
    "signs and zeros": b"1 0 d1 +1\n1 0 d2 -1\n1 0 d3 007\n1 0 d4 -0\n",
    "wide range": b"1 0 d1 2147483647\n1 0 d2 -2147483648\n",
}
QRELS_STRICT = {  # pieces only the line-by-line path reads: the same values, or its errors
    "comment": b"# judged by\n1 0 d1 1\n",
    "indented hash is data": b" #1 0 d1 1\n",
    "blank line": b"1 0 d1 1\n\n1 0 d2 0\n",
    "underscore in a level": b"1 0 d1 1_0\n",
    "decimal level": b"1 0 d1 1.0\n",
    "out of range": b"1 0 d1 2147483648\n",
    "many digits": b"1 0 d1 00000000001\n",
    "five fields": b"1 0 d1 1 x\n",
}


@pytest.mark.parametrize("name", sorted(QRELS_PIECES) + sorted(QRELS_STRICT))
def test_read_qrels_matches_line_by_line(name, tmp_path):
    """Regular qrels pieces (ids with underscores too, as MS MARCO's) are read in whole-array
    steps; anything else line by line: the same columns, or the same problems."""
    data = {**QRELS_PIECES, **QRELS_STRICT}[name]
    fast = trec.columns.qrels_columns(data, 1)
    assert (fast is not None) == (name in QRELS_PIECES)
    problems = trec.Problems("q")
    q, d, r, ln = trec.text._parse_qrels_lines(data, 1, problems)
    path = tmp_path / "q"
    path.write_bytes(data)
    if problems:
        with pytest.raises(FormatError) as error:
            irbench.read_qrels(str(path))
        assert [p.split(":", 1)[1] for p in error.value.problems] == [
            p.split(":", 1)[1] for p in problems.shown]
        return
    qrels = irbench.read_qrels(str(path))
    assert (qrels.query_id.tolist(), qrels.doc_id.tolist(), qrels.relevance.tolist(),
            qrels.line.tolist()) == (q, d, r, ln)
    if fast is not None:
        assert [c.tolist() for c in fast] == [q, d, r, ln]


@pytest.mark.parametrize("depth", [1, 7, 40])
def test_per_topic_sum_is_bincounts_bits(depth):
    """Per-topic sums of integers and booleans (int64 running sums) give a weighted
    bincount's bits, as floats (zero signs, inf and NaN) do."""
    rng = np.random.default_rng(depth)
    for trial in range(60):
        topics = int(rng.integers(1, 6))
        n = topics * depth
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)
        pick = rng.random(n)
        values[pick < 0.1], values[(pick >= 0.1) & (pick < 0.15)] = -0.0, 0.0
        if trial % 7 == 0:
            values[rng.integers(0, n)] = np.inf
        if trial % 11 == 0:
            values[rng.integers(0, n)] = np.nan
        if trial % 5 == 0:
            values[:] = -0.0
        r = ranked.Ranked(topics=np.array([b"t%d" % i for i in range(topics)]),
                          offsets=np.arange(0, n + 1, depth), level=np.zeros(n, np.int64),
                          missing=np.zeros(topics, bool),
                          level_counts=np.zeros((topics, 2), np.int64), options=EvalOptions(),
                          runid="", name="")
        for mask in (None, rng.random(n) < 0.5):
            for v in (values, values > 0, rng.integers(-3, 4, n)):
                t, w = (r.topic_index, v) if mask is None else (r.topic_index[mask], v[mask])
                want = np.bincount(t, weights=w.astype(np.float64), minlength=topics)
                assert r.per_topic_sum(v, mask).tobytes() == want.astype(np.float64).tobytes()
