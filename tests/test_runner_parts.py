"""One big run file ranked in parts by the workers (:func:`irbench.runner.parallel.
rank_in_parts`): each worker parses and ranks the topics of its byte range and sends back only
each row's topic and level. It must give exactly what reading and ranking the whole file gives
(values, summaries, run name and tag, errors), under every option, and step aside (None) when
a part cannot be ranked alone."""

from __future__ import annotations

import random
import tempfile

import numpy as np
import pytest

import irbench
import irbench.runner.parallel as parallel
import irbench.trec as trec
from irbench import cli
from irbench.errors import FormatError
from irbench.ranked import EvalOptions, PreparedQrels
from irbench.runner.parallel import RunResult, _Shared, evaluate_paths, rank_in_parts

MEASURES = [irbench.parse_measure(m) for m in
            ("AP", "P@10", "nDCG@10", "bpref", "num_ret", "num_rel_ret", "recip_rank",
             "infAP", "gm_map", "Rprec", "success@1")]


def _campaign(tmp_path, seed: int = 3, topics: int = 40, docs: int = 60,
              shuffle: bool = False) -> tuple[str, str]:
    """(qrels, run): topics 1..N in file order (not byte order), tied scores, a topic the
    qrels lack, qrels topics the run lacks, comments, blank lines and a CRLF line."""
    rng = random.Random(seed)
    qrels, lines = [], ["# a comment\n"]
    for t in range(1, topics + 1):
        for d in rng.sample(range(200), 25):
            qrels.append(f"{t} 0 D{d} {rng.choice([0, 0, 1, 2, -1])}\n")
        if t % 9 == 0:
            continue  # judged, not retrieved
        block = [f"{t} Q0 D{d} {r} {rng.choice([1.5, 2.25, 3, 7.125])} tag{seed}\n"
                 for r, d in enumerate(rng.sample(range(200), docs), 1)]
        if t == 5:
            block[3] = block[3].replace("\n", "\r\n")
            block.insert(10, "\n")
        lines += block
    lines += [f"999 Q0 D{d} {d} 1 tag{seed}\n" for d in range(30)]  # not in the qrels
    if shuffle:
        rng.shuffle(lines)
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("".join(qrels))
    r.write_text("".join(lines))
    return str(q), str(r)


@pytest.fixture
def small(monkeypatch):
    """Files of any size are read in parts; pieces of 200 bytes."""
    monkeypatch.setattr(parallel, "_PARALLEL_READ_BYTES", 10)
    monkeypatch.setattr(trec.text, "CHUNK", 200)


def _same(result: RunResult, want: irbench.Evaluation) -> None:
    assert result.error is None, result.error
    got = result.evaluation
    assert (got.run_name, got.runid, got.topics) == (want.run_name, want.runid, want.topics)
    for m in MEASURES:
        assert got[m].tolist() == want[m].tolist(), m
        assert got.summary(m) == want.summary(m), m


@pytest.mark.parametrize("options", [
    EvalOptions(complete=True), EvalOptions(complete=True, max_docs=7),
    EvalOptions(complete=True, judged_only=True), EvalOptions(complete=True, relevance_level=2),
    EvalOptions(complete=True, duplicates="first")], ids=str)
@pytest.mark.parametrize("workers", [2, 3, 7])
@pytest.mark.parametrize("kept", [True, False], ids=["levels sent", "values sent"])
def test_ranked_in_parts_is_the_whole_file_ranked(tmp_path, small, options, workers, kept):
    """Workers send their rows' levels (the ranking is kept: -Z) or their topics' values."""
    qrels, run = _campaign(tmp_path)
    prepared = PreparedQrels(irbench.read_qrels(qrels))
    want = irbench.evaluate(prepared, run, MEASURES, options=options)
    done = rank_in_parts(run, _Shared(prepared, tuple(MEASURES), options, kept), workers)
    assert done is not None  # grouped by topic: ranked in the workers
    _same(done, want)
    for m in MEASURES:
        assert done.evaluation[m].dtype == want[m].dtype
    if not kept:
        assert done.ranked is None
        return
    whole = prepared.rank(irbench.read_run(run), options)
    assert np.array_equal(done.ranked.offsets, whole.offsets)
    assert np.array_equal(done.ranked.level, whole.level)
    assert np.array_equal(done.ranked.missing, whole.missing)


def test_a_run_not_grouped_by_topic_or_with_a_repeated_docno_is_read_whole(tmp_path, small):
    """Topics across the cuts, or a duplicate docno (whose message names its lines in the
    whole file): the parts step aside and the whole-file path answers, as before."""
    qrels, run = _campaign(tmp_path, shuffle=True)
    prepared = PreparedQrels(irbench.read_qrels(qrels))
    shared = _Shared(prepared, tuple(MEASURES), EvalOptions(complete=True), False)
    assert rank_in_parts(run, shared, 3) is None
    [result] = evaluate_paths(prepared, [run], MEASURES, EvalOptions(complete=True), workers=3)
    _same(result, irbench.evaluate(prepared, run, MEASURES, options=EvalOptions(complete=True)))
    lines = open(run).read().splitlines(keepends=True)
    lines.sort(key=lambda line: line.split()[0] if line.split() else "")
    at = max(i for i, line in enumerate(lines) if line.startswith("8 "))
    lines.insert(at + 1, lines[at])  # a docno twice in topic 8
    with open(run, "w") as fh:
        fh.writelines(lines)
    assert rank_in_parts(run, shared, 3) is None
    [result] = evaluate_paths(prepared, [run], MEASURES, EvalOptions(complete=True), workers=3)
    with pytest.raises(irbench.IrbenchError) as whole:
        irbench.evaluate(prepared, run, MEASURES, options=EvalOptions(complete=True))
    assert result.stage == "evaluate" and str(result.error) == str(whole.value)
    assert f":{at + 2}" in str(result.error)  # the file's own line number


def test_problems_and_missing_topics_read_as_the_whole_file(tmp_path, small):
    qrels, run = _campaign(tmp_path)
    prepared = PreparedQrels(irbench.read_qrels(qrels))
    shared = _Shared(prepared, tuple(MEASURES), EvalOptions(), False)
    done = rank_in_parts(run, shared, 3)  # without -c: the topics judged but not retrieved
    with pytest.raises(irbench.IrbenchError) as whole:
        irbench.evaluate(prepared, run, MEASURES)
    assert done.stage == "evaluate" and str(done.error) == str(whole.value)
    lines = open(run).read().splitlines(keepends=True)
    for at in (40, 900, len(lines) - 5):
        fields = lines[at].split()
        lines[at] = f"{fields[0]} Q0 {fields[2]} 1 x {fields[5]}\n"  # not a score
    with open(run, "w") as fh:
        fh.writelines(lines)
    done = rank_in_parts(run, shared, 3)
    with pytest.raises(FormatError) as whole:
        irbench.read_run(run)
    assert done.stage == "read" and str(done.error) == str(whole.value)
    assert f"{run}:{len(lines) - 4}:" in str(done.error)


@pytest.mark.parametrize("measures", [["all_trec"], ["map", "gm_map", "P.10", "ndcg_cut.10",
                                                    "bpref", "recip_rank", "num_rel_ret"]],
                         ids=["all_trec (levels sent: num_q, runid)", "core (values sent)"])
def test_irbench_eval_prints_the_same_bytes(tmp_path, small, capsys, measures):
    qrels, run = _campaign(tmp_path, topics=60)
    flags = [x for m in measures for x in ("-m", m)]
    outputs = []
    for workers in ("1", "2", "3"):
        assert cli.main(["eval", "-q", "-c", *flags, "--workers", workers, qrels, run]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2] and "\tall\t" in outputs[0]


def test_without_room_for_spill_files_the_parts_come_through_the_pipes(tmp_path, small,
                                                                       monkeypatch):
    """A temporary folder without room (np.save fails in the workers): the columns and the
    rankings come back through the pipes, with the same results, and no file is left."""
    qrels, run = _campaign(tmp_path)
    prepared = PreparedQrels(irbench.read_qrels(qrels))
    options = EvalOptions(complete=True)
    want = irbench.evaluate(prepared, run, MEASURES, options=options)
    whole = irbench.read_run(run)
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))

    def full(name, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "save", full)  # the workers are forked: theirs too
    done = rank_in_parts(run, _Shared(prepared, tuple(MEASURES), options, True), 3)
    _same(done, want)
    parts = parallel.read_run(run, workers=3)
    assert parts.doc_id.tolist() == whole.doc_id.tolist()
    assert parts.line.tolist() == whole.line.tolist()
    assert list(spill.rglob("*")) == []  # the spill folders were made here, and removed
