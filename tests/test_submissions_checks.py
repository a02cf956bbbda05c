"""The submission checker: a corpus of broken runs with their exact messages, rules files,
checks across files, ir_metadata, the output cap, and the ``validate`` command."""

from __future__ import annotations

import argparse
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

from irbench.cli import validate as validate_cli
from irbench.errors import ConfigError, FormatError, UsageError
from irbench.submissions import (
    CHECKS,
    KEEP_PER_CHECK,
    Rules,
    check_run,
    check_submissions,
    ir_metadata,
    load_rules,
    rules_from_mapping,
)
from irbench.submissions import lines as lines_module
from irbench.topics import read_topics

HERE = Path(__file__).parent
CORPUS = HERE / "data" / "submissions"
DEMO = HERE.parent / "runs" / "demo"
TOPICS = read_topics(CORPUS / "topics.tsv")


def shown(check) -> list[str]:
    """The problems of a check as printed, with paths relative to the corpus."""
    return [str(p).replace(str(CORPUS) + os.sep, "") for p in check.problems]


def validate(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    validate_cli.add_parsers(sub)
    args = parser.parse_args(["validate", *argv])
    return args.handler(args)


def write_run(path: Path, lines: list[str], data: bytes | None = None) -> str:
    path.write_bytes(data if data is not None else ("\n".join(lines) + "\n").encode())
    return str(path)


def rows(tag: str = "t-1", topics=("401", "402", "403", "404", "405"), depth: int = 3):
    return [f"{q} Q0 DOC-{q}-{r:02d} {r} {10 - r}.5 {tag}" for q in topics
            for r in range(1, depth + 1)]


# ---- the corpus: one defect each, and several at once --------------------------------------

CORPUS_CASES = [
    ("good-1.txt", []),
    ("good-gz.txt.gz", []),
    ("meta-1.txt", []),
    ("bad-columns.txt",
     ["bad-columns.txt:5: error: expected 6 columns (qid Q0 docno rank score tag), got 5 "
      "[columns]"]),
    ("bad-q0.txt",
     ["bad-q0.txt:4: error: column 2 is 'q0', not 'Q0' (also on 2 more lines) [q0]"]),
    ("bad-rank.txt",
     ["bad-rank.txt:2: error: rank '2.0' is not an integer [rank]",
      "bad-rank.txt:8: error: rank 'second' is not an integer [rank]"]),
    ("bad-score.txt",
     ["bad-score.txt:1: error: score 'abc' is not a finite number [score]",
      "bad-score.txt:6: error: score 'nan' is not a finite number [score]",
      "bad-score.txt:10: error: score '1e999' is not a finite number [score]"]),
    ("bad-tag.txt",
     ["bad-tag.txt:7: error: run tag 'other-tag' differs from 'bad-tag' (line 1) [tag]"]),
    ("bad@tag.txt",
     ["bad@tag.txt:1: error: run tag 'bad@tag' is malformed (it must match "
      "[A-Za-z0-9_-]{1,25}) [tag_pattern]"]),
    ("missing-topic.txt",
     ["missing-topic.txt: error: no documents retrieved for topic '405' [missing_topic]"]),
    ("unknown-topic.txt",
     ["unknown-topic.txt:16: error: unknown topic '999' (2 lines; not in topics.tsv) "
      "[unknown_topic]"]),
    ("duplicate-doc.txt",
     ["duplicate-doc.txt:3: error: document 'DOC-401-01' retrieved more than once for topic "
      "'401' (first at line 1) [duplicate_doc]"]),
    ("rank-order.txt",
     ["rank-order.txt:5: warning: rank 2 has a higher score than rank 1 (line 4) in topic "
      "'402'; trec_eval orders by score, not rank [rank_order]"]),
    ("bad-metadata.txt",
     ["bad-metadata.txt:4: error: ir_metadata is not valid YAML: expected ',' or ']', but got "
      "'<stream end>' [metadata]"]),
    ("unclosed-metadata.txt",
     ["unclosed-metadata.txt:1: error: ir_metadata.start without a matching ir_metadata.end "
      "[metadata]"]),
    ("empty.txt",
     ["empty.txt: error: no result lines (qid Q0 docno rank score tag) [file]"]),
    ("latin1.txt",
     ["latin1.txt:4: error: not UTF-8 (byte 0xe9 at column 16) [encoding]"]),
    ("nul.txt",
     ["nul.txt:6: error: NUL byte: not a text file (a binary or compressed file?) [binary]"]),
    ("truncated.txt.gz",
     ["truncated.txt.gz: error: not a valid gzip file (Compressed file ended before the "
      "end-of-stream marker was reached) [file]"]),
    ("many-defects.txt",
     ["many-defects.txt: error: no documents retrieved for topic '405' [missing_topic]",
      "many-defects.txt:1: error: score 'high' is not a finite number [score]",
      "many-defects.txt:3: error: expected 6 columns (qid Q0 docno rank score tag), got 4 "
      "[columns]",
      "many-defects.txt:5: error: document 'DOC-402-01' retrieved more than once for topic "
      "'402' (first at line 4) [duplicate_doc]",
      "many-defects.txt:8: error: run tag 'other' differs from 'many-defects' (line 1) [tag]",
      "many-defects.txt:13: error: unknown topic '999' (1 line; not in topics.tsv) "
      "[unknown_topic]"]),
]


@pytest.mark.parametrize("name, expected", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_messages(name, expected):
    check = check_run(CORPUS / name, topics=TOPICS)
    assert shown(check) == expected
    errors = sum(": error: " in line for line in expected)
    assert check.num_errors == errors
    assert check.num_warnings == len(expected) - errors
    assert check.verdict == ("rejected" if errors else "accepted")


def test_corpus_is_covered():
    files = {p.name for p in CORPUS.iterdir()} - {"topics.tsv", "README.md", "rules.yaml",
                                                  "docnos.txt"}
    assert files == {name for name, _ in CORPUS_CASES} | {"too-many-docs.txt"}


def test_demo_runs_are_all_accepted():
    topics = read_topics(DEMO / "topics.txt")
    checks = check_submissions(sorted((DEMO / "runs").glob("*.txt")), topics=topics)
    assert len(checks) == 12
    for check in checks:
        assert check.accepted, shown(check)
        assert (check.num_errors, check.num_warnings) == (0, 0)
        assert check.topics == 25 and check.results == 2500
        assert check.group == check.run_tag.split("-")[0] and check.group_source == "tag"


def test_counts_and_fields_of_a_valid_run():
    check = check_run(CORPUS / "meta-1.txt", topics=TOPICS)
    assert (check.run_tag, check.lines, check.results, check.topics) == ("meta-1", 26, 15, 5)
    assert check.metadata["actor"] == {"team": "teamX", "name": "A. Tester"}
    assert check.fields == {"group": "teamX", "type": "manual", "tag": "meta-1",
                            "official": True, "priority": 2}
    assert (check.group, check.group_source) == ("teamX", "ir_metadata")


def test_without_a_topic_set_topics_are_not_checked():
    assert check_run(CORPUS / "missing-topic.txt").accepted
    assert check_run(CORPUS / "unknown-topic.txt").accepted
    assert not check_run(CORPUS / "missing-topic.txt", Rules(min_topics=5)).accepted


# ---- rules ---------------------------------------------------------------------------------


def test_max_docs_names_the_first_line_too_many():
    check = check_run(CORPUS / "too-many-docs.txt", Rules(max_docs=4), TOPICS)
    assert shown(check)[:2] == [
        "too-many-docs.txt:5: error: 5 documents retrieved for topic '401', at most 4 allowed "
        "(this is document 5) [max_docs]",
        "too-many-docs.txt:10: error: 5 documents retrieved for topic '402', at most 4 allowed "
        "(this is document 5) [max_docs]"]
    assert check.num_errors == 5
    assert check_run(CORPUS / "too-many-docs.txt", Rules(), TOPICS).accepted


def test_min_docs_and_min_topics():
    check = check_run(CORPUS / "good-1.txt", Rules(min_docs=4, min_topics=5), TOPICS)
    assert shown(check)[0] == ("good-1.txt:1: error: 3 documents retrieved for topic '401', "
                               "at least 4 required [min_docs]")
    assert check.num_errors == 5
    check = check_run(CORPUS / "missing-topic.txt", Rules(min_topics=4), TOPICS)
    assert check.accepted
    check = check_run(CORPUS / "many-defects.txt", Rules(min_topics=5), TOPICS)
    assert ("many-defects.txt: error: documents retrieved for 4 of 5 topics; at least 5 "
            "required (missing: 405) [missing_topic]") in shown(check)


def test_severities_change_the_verdict():
    assert not check_run(CORPUS / "rank-order.txt", Rules(severity={"rank_order": "error"}),
                         TOPICS).accepted
    check = check_run(CORPUS / "bad-q0.txt", Rules(severity={"q0": "off"}), TOPICS)
    assert check.accepted and check.problems == ()
    check = check_run(CORPUS / "bad-q0.txt", Rules(severity={"q0": "warning"}), TOPICS)
    assert check.accepted and check.num_warnings == 1
    check = check_run(CORPUS / "bad-q0.txt", Rules(q0="q0"), TOPICS)
    assert shown(check) == ["bad-q0.txt:1: error: column 2 is 'Q0', not 'q0' (also on 11 more "
                            "lines) [q0]"]


def test_docno_pattern_and_list(tmp_path):
    rules = Rules(docno_pattern=r"DOC-\d+-0[12]")
    check = check_run(CORPUS / "good-1.txt", rules, TOPICS)
    assert check.num_errors == 5
    assert shown(check)[0] == ("good-1.txt:3: error: unknown document id 'DOC-401-03' (not "
                               r"matching 'DOC-\d+-0[12]') [docno]")
    ids = tmp_path / "docnos.txt"
    ids.write_text("".join(f"DOC-{q}-{r:02d}\n" for q in range(401, 406) for r in (1, 2, 3)
                           if (q, r) != (403, 2)))
    check = check_run(CORPUS / "good-1.txt", Rules(docnos=str(ids)), TOPICS)
    assert shown(check) == [f"good-1.txt:8: error: unknown document id 'DOC-403-02' (not in "
                            f"{ids}) [docno]"]


def test_tag_equal_to_file_name():
    rules = Rules(severity={"tag_filename": "error"})
    assert check_run(CORPUS / "good-1.txt", rules).accepted
    assert check_run(CORPUS / "good-gz.txt.gz", rules).accepted
    check = check_run(CORPUS / "latin1.txt", Rules(severity={"tag_filename": "error",
                                                             "encoding": "off"}))
    assert check.accepted
    check = check_run(CORPUS / "bad-tag.txt", Rules(severity={"tag_filename": "error",
                                                              "tag": "off"}))
    assert check.accepted


def test_file_size_limit():
    size = os.path.getsize(CORPUS / "good-1.txt")
    check = check_run(CORPUS / "good-1.txt", Rules(max_file_size=size - 1))
    assert shown(check) == [f"good-1.txt: error: the file is {size:,} bytes, at most "
                            f"{size - 1:,} allowed [file_size]"]


def test_load_rules_reads_every_option(tmp_path):
    (tmp_path / "ids.txt").write_text("a\n")
    path = tmp_path / "rules.yaml"
    path.write_text("checks:\n  rank_order: error\n  q0: 'off'\nmax_docs: 100\nmin_topics: 45\n"
                    "docno_pattern: 'd\\d+'\ndocnos: ids.txt\nmax_file_size: 50 MB\n"
                    "max_runs_per_group: 3\ngroups:\n  g1: [a-1, a-2]\n  g2: b\nmax_shown: 5\n")
    rules = load_rules(path)
    assert rules.level("rank_order") == "error" and rules.level("q0") == "off"
    assert rules.level("score") == "error" and rules.level("line_endings") == "warning"
    assert (rules.max_docs, rules.min_topics, rules.max_file_size, rules.max_shown) == \
        (100, 45, 50_000_000, 5)
    assert rules.docnos == str(tmp_path / "ids.txt") and rules.docno_pattern == r"d\d+"
    assert rules.groups == {"g1": ("a-1", "a-2"), "g2": ("b",)}
    assert rules.group_of_tag("a-2") == "g1" and rules.group_of_tag("c") is None
    assert rules.path == str(path)


def test_load_rules_reports_every_problem_with_its_line(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("checks:\n  rank_order: fatal\n  spelling: error\nmax_docs: -1\n"
                    "maxdocs: 10\ntag_pattern: '[a-'\ndocnos: nowhere.txt\n"
                    "max_file_size: lots\ngroups:\n  g1: [a]\n  g2: [a]\n")
    with pytest.raises(ConfigError) as info:
        load_rules(path)
    assert info.value.problems == [
        f"{path}:2: checks.rank_order: must be error, warning or off",
        f"{path}:3: checks.spelling: unknown check (checks are {', '.join(CHECKS)})",
        f"{path}:4: max_docs: must be a whole number >= 1",
        f"{path}:5: maxdocs: unknown key (rules have checks, docno_pattern, docnos, "
        "group_pattern, groups, max_docs, max_file_size, max_runs_per_group, max_shown, "
        "min_docs, min_topics, q0, tag_pattern)",
        f"{path}:6: tag_pattern: not a regular expression: unterminated character set at "
        "position 0",
        f"{path}:7: docnos: no such file 'nowhere.txt'",
        f"{path}:8: max_file_size: a size in bytes, e.g. 50000000 or '50 MB' (or null)",
        f"{path}:11: groups.g2: run tag 'a' is also in group 'g1'",
    ]


def test_load_rules_bad_yaml_and_empty_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("checks: [\n")
    with pytest.raises(ConfigError, match=r"rules.yaml:2: not valid YAML"):
        load_rules(path)
    path.write_text("")
    assert load_rules(path) == Rules(path=str(path))


def test_rules_from_mapping():
    assert rules_from_mapping({"max_docs": 10}).max_docs == 10
    with pytest.raises(ConfigError, match="max_docs: must be a whole number >= 1"):
        rules_from_mapping({"max_docs": "ten"})


# ---- across files --------------------------------------------------------------------------


def test_run_tags_must_be_unique_across_files(tmp_path):
    a = write_run(tmp_path / "a.txt", rows("same-1"))
    b = write_run(tmp_path / "b.txt", rows("same-1"))
    first, second = check_submissions([a, b])
    assert first.accepted
    assert [str(p) for p in second.problems] == [
        f"{b}: error: run tag 'same-1' is also used by {a} [duplicate_tag]"]
    assert second.verdict == "rejected" and second.num_errors == 1


def test_runs_per_group_from_tag_rules_metadata_and_config(tmp_path):
    paths = [write_run(tmp_path / f"g-{i}.txt", rows(f"grp-{i}")) for i in range(1, 4)]
    checks = check_submissions(paths, Rules(max_runs_per_group=2))
    assert [c.accepted for c in checks] == [True, True, False]
    assert [str(p) for p in checks[2].problems] == [
        f"{paths[2]}: error: group 'grp' (tag) submitted 3 runs, at most 2 allowed (kept: "
        f"{paths[0]}, {paths[1]}) [runs_per_group]"]
    # the rules' mapping comes first; then the config; then ir_metadata; then the tag
    rules = Rules(max_runs_per_group=1, groups={"one": ("grp-1",), "two": ("grp-2",)})
    checks = check_submissions(paths, rules, groups={paths[2]: "three"})
    assert [(c.group, c.group_source) for c in checks] == [
        ("one", "rules"), ("two", "rules"), ("three", "config")]
    assert all(c.accepted for c in checks)
    meta = write_run(tmp_path / "m.txt", [], ("# ir_metadata.start\n# actor:\n#   team: one\n"
                                              "# ir_metadata.end\n" + "\n".join(rows("m-1"))
                                              + "\n").encode())
    checks = check_submissions([meta, paths[0]], Rules(max_runs_per_group=1))
    assert [(c.group, c.group_source) for c in checks] == [("one", "ir_metadata"),
                                                           ("grp", "tag")]


# ---- line ends, encodings, gzip ------------------------------------------------------------


def test_crlf_is_a_warning_and_lone_cr_too(tmp_path):
    data = ("\r\n".join(rows()) + "\r\n").encode()
    check = check_run(write_run(tmp_path / "t-1.txt", [], data), topics=TOPICS)
    assert check.accepted
    assert [str(p).split(": ", 1)[1] for p in check.problems] == [
        "warning: Windows line ends (CRLF) on 15 lines, the first here; use LF [line_endings]"]
    assert check.problems[0].line == 1
    data = ("\n".join(rows()) + "\n").encode().replace(b"\n402", b"\r402", 1)
    check = check_run(write_run(tmp_path / "t-1.txt", [], data), topics=TOPICS)
    assert [(p.line, p.severity, p.message) for p in check.problems] == [
        (3, "error", "expected 6 columns (qid Q0 docno rank score tag), got 12"),
        (3, "warning", "carriage return (CR) without LF on 1 line, the first here")]


def test_byte_order_mark_is_an_error_but_the_topic_still_reads(tmp_path):
    data = b"\xef\xbb\xbf" + ("\n".join(rows()) + "\n").encode()
    check = check_run(write_run(tmp_path / "t-1.txt", [], data), topics=TOPICS)
    assert [p.message for p in check.problems] == [
        "UTF-8 byte order mark at the start of the file"]


def test_gzip_is_read_by_its_magic_bytes(tmp_path):
    path = write_run(tmp_path / "t-1.run", [], gzip.compress(("\n".join(rows()) + "\n")
                                                            .encode()))
    assert check_run(path, topics=TOPICS).results == 15


def test_missing_file_and_directory(tmp_path):
    assert shown(check_run(tmp_path / "nope.txt")) == [f"{tmp_path / 'nope.txt'}: error: no "
                                                       "such file [file]"]
    assert check_run(tmp_path).problems[0].message == "is a directory, not a file"


def test_comments_blank_lines_and_utf8_ids(tmp_path):
    data = ("# header\n\n   \n" + "\n".join(rows()) + "\n  # indented comment\n"
            "405 Q0 DOC-é 4 1.0 t-1").encode()
    check = check_run(write_run(tmp_path / "t-1.txt", [], data), topics=TOPICS)
    assert check.accepted and check.results == 16 and check.lines == 20


def test_long_fields_are_reported_not_stored(tmp_path):
    rows_ = rows()
    rows_[3] = f"402 Q0 {'x' * 300} 1 9.5 t-1"
    check = check_run(write_run(tmp_path / "t-1.txt", rows_))
    assert [p.message for p in check.problems] == [
        "column 3 (docno) is 300 bytes long (at most 256)"]


# ---- pieces, caps, speed-critical paths ----------------------------------------------------


def test_line_numbers_survive_small_pieces(monkeypatch):
    expected = shown(check_run(CORPUS / "many-defects.txt", topics=TOPICS))
    monkeypatch.setattr(lines_module, "PIECE", 50)
    assert shown(check_run(CORPUS / "many-defects.txt", topics=TOPICS)) == expected
    assert shown(check_run(CORPUS / "bad-q0.txt", topics=TOPICS)) == [
        "bad-q0.txt:4: error: column 2 is 'q0', not 'Q0' (also on 2 more lines) [q0]"]


def test_a_flood_is_capped_and_counted(tmp_path, capsys):
    good = [f"{q} Q0 D{q}-{r} {r} {2000 - r} flood-1" for q in (401, 402) for r in range(1, 1001)]
    bad = [line.rsplit(" ", 2)[0] + " x flood-1" if i % 2 else line for i, line in
           enumerate(good)]
    path = write_run(tmp_path / "flood-1.txt", bad)
    check = check_run(path)
    assert check.num_errors == 1000 and len(check.errors) == 1000
    assert validate([path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 27
    assert out[0] == f"{path}:2: error: score 'x' is not a finite number [score]"
    assert out[25] == f"... and 975 more problems in {path}"
    assert out[26] == (f"{path}: rejected: 1000 errors, 0 warnings; run tag 'flood-1', group "
                       "'flood', 2 topics, 2000 results")


def test_problems_kept_are_capped_per_check_but_counts_are_exact(tmp_path):
    n = KEEP_PER_CHECK + 500
    path = write_run(tmp_path / "t-1.txt", [f"1 Q0 D{i} 1 NaN t-1" for i in range(n)])
    check = check_run(path, Rules(max_docs=n))
    assert check.num_errors == n and len(check.errors) == KEEP_PER_CHECK
    assert check.omitted == 500
    assert check.errors[-1].line == KEEP_PER_CHECK


def test_duplicates_on_a_large_shuffled_run(tmp_path):
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in rng.permutation(20_000)]
    topic = rng.integers(1, 50, 20_000)
    docs[123] = docs[7]
    topic[123] = topic[7]
    path = write_run(tmp_path / "t-1.txt", [f"{q} Q0 {d} 1 1.0 t-1" for q, d in
                                            zip(topic.tolist(), docs)])
    check = check_run(path, Rules(max_docs=10_000))
    assert [p.check for p in check.problems] == ["duplicate_doc"]
    assert check.problems[0].line == 124
    assert check.problems[0].message.endswith("(first at line 8)")


# ---- ir_metadata ---------------------------------------------------------------------------


def test_read_ir_metadata():
    assert ir_metadata.read_ir_metadata(CORPUS / "meta-1.txt")["method"] == {"automatic": False}
    assert ir_metadata.read_ir_metadata(CORPUS / "good-1.txt") == {}
    with pytest.raises(FormatError) as info:
        ir_metadata.read_ir_metadata(CORPUS / "bad-metadata.txt")
    assert info.value.problems == [
        f"{CORPUS / 'bad-metadata.txt'}:4: ir_metadata is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'"]


@pytest.mark.parametrize("block, problem", [
    (b"# tag: [1, 2]\n", "ir_metadata tag must be text"),
    (b"# method:\n#   automatic: maybe\n", "ir_metadata method.automatic must be true or false"),
    (b"# priority: 0\n", "ir_metadata priority must be a whole number >= 1"),
    (b"# official: yes please\n", "ir_metadata official must be true or false"),
    (b"# type: semi\n", "ir_metadata type must be automatic or manual"),
    (b"# - a list\n", "ir_metadata must be a YAML mapping (key: value lines)"),
    (b"# x: !!python/object:os.system {}\n", "ir_metadata is not valid YAML: could not "
                                             "determine a constructor for the tag "
                                             "'tag:yaml.org,2002:python/object:os.system'"),
    (b"tag: t-1\n", "line inside the ir_metadata block is not a '#' comment"),
])
def test_ir_metadata_problems(tmp_path, block, problem):
    data = b"# ir_metadata.start\n" + block + b"# ir_metadata.end\n" + \
        ("\n".join(rows()) + "\n").encode()
    check = check_run(write_run(tmp_path / "t-1.txt", [], data))
    assert [(p.check, p.message) for p in check.problems if p.check != "columns"] == [
        ("metadata", problem)]


def test_ir_metadata_tag_differs_is_a_warning(tmp_path):
    data = b"#ir_metadata.start\n# tag: other\n#ir_metadata.end\n" + \
        ("\n".join(rows()) + "\n").encode()
    check = check_run(write_run(tmp_path / "t-1.txt", [], data))
    assert check.accepted
    assert [p.message for p in check.warnings] == [
        "ir_metadata tag 'other' differs from the run tag 't-1'"]


def test_find_ir_metadata_needs_a_comment_marker():
    assert ir_metadata.find_ir_metadata(b"1 Q0 ir_metadata.start 1 1 t\n").line == 0
    block = ir_metadata.find_ir_metadata(b"# ir_metadata.start\n# ir_metadata.end\n")
    assert (block.data, block.line, block.problems) == ({}, 1, ())


# ---- the command ---------------------------------------------------------------------------


def test_validate_prints_problems_and_verdicts(capsys):
    code = validate([str(CORPUS / "good-1.txt"), str(CORPUS / "rank-order.txt"),
                     str(CORPUS / "bad-score.txt"), "--topics", str(CORPUS / "topics.tsv")])
    assert code == 1
    out = capsys.readouterr().out.replace(str(CORPUS) + os.sep, "").splitlines()
    assert out == [
        "good-1.txt: accepted: 0 errors, 0 warnings; run tag 'good-1', group 'good', 5 topics, "
        "15 results",
        "rank-order.txt:5: warning: rank 2 has a higher score than rank 1 (line 4) in topic "
        "'402'; trec_eval orders by score, not rank [rank_order]",
        "rank-order.txt: accepted: 0 errors, 1 warning; run tag 'rank-order', group 'rank', "
        "5 topics, 15 results",
        "bad-score.txt:1: error: score 'abc' is not a finite number [score]",
        "bad-score.txt:6: error: score 'nan' is not a finite number [score]",
        "bad-score.txt:10: error: score '1e999' is not a finite number [score]",
        "bad-score.txt: rejected: 3 errors, 0 warnings; run tag 'bad-score', group 'bad', "
        "5 topics, 15 results",
        "3 runs: 2 accepted, 1 rejected",
    ]
    assert validate([str(CORPUS / "good-1.txt")]) == 0


def test_validate_json(capsys):
    assert validate([str(CORPUS / "bad-q0.txt"), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["accepted"], report["rejected"]) == (0, 1)
    run = report["runs"][0]
    assert (run["verdict"], run["errors"], run["warnings"], run["run_tag"]) == \
        ("rejected", 1, 0, "bad-q0")
    assert run["problems"] == [{"path": str(CORPUS / "bad-q0.txt"), "line": 4, "check": "q0",
                                "severity": "error", "message": "column 2 is 'q0', not 'Q0' "
                                "(also on 2 more lines)"}]


def test_validate_with_rules_file(tmp_path, capsys):
    rules = tmp_path / "rules.yaml"
    rules.write_text("max_docs: 4\nmax_shown: 1\n")
    assert validate([str(CORPUS / "too-many-docs.txt"), "--rules", str(rules)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"... and 4 more problems in {CORPUS / 'too-many-docs.txt'}"
    rules.write_text("max_docs: many\n")
    with pytest.raises(ConfigError):
        validate([str(CORPUS / "good-1.txt"), "--rules", str(rules)])


def test_validate_config_with_systems(tmp_path, capsys):
    (tmp_path / "a-1.txt").write_text("\n".join(rows("a-1")) + "\n")
    (tmp_path / "b-1.txt").write_text("\n".join(rows("b-1", depth=2)[:-1]) + "\n")
    (tmp_path / "qrels.txt").write_text("401 0 DOC-401-01 1\n")
    (tmp_path / "topics.tsv").write_text((CORPUS / "topics.tsv").read_text())
    config = tmp_path / "c.yaml"
    config.write_text("collection: {topics: topics.tsv, qrels: qrels.txt}\n"
                      "systems:\n  - {name: a, run: a-1.txt, group: teamA}\n"
                      "  - {name: b, run: b-1.txt, group: teamA}\nsuites: {main: [AP]}\n")
    rules = tmp_path / "rules.yaml"
    rules.write_text("max_runs_per_group: 1\n")
    assert validate([str(config), "--rules", str(rules)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{tmp_path / 'a-1.txt'}: accepted: 0 errors, 0 warnings; run tag 'a-1', group 'teamA',"
        " 5 topics, 15 results",
        f"{tmp_path / 'b-1.txt'}: error: group 'teamA' (config) submitted 2 runs, at most 1 "
        f"allowed (kept: {tmp_path / 'a-1.txt'}) [runs_per_group]",
        f"{tmp_path / 'b-1.txt'}: rejected: 1 error, 0 warnings; run tag 'b-1', group 'teamA', "
        "5 topics, 9 results",
        "2 runs: 1 accepted, 1 rejected",
    ]


def test_validate_needs_runs():
    with pytest.raises(UsageError):
        validate([])


def test_the_example_rules_file_is_the_defaults():
    rules = load_rules(CORPUS / "rules.yaml")
    assert rules == Rules(severity={name: level for name, (level, _) in CHECKS.items()},
                          path=str(CORPUS / "rules.yaml"))
    assert all(rules.level(name) == Rules().level(name) for name in CHECKS)


def test_runs_per_group_keeps_the_best_priority(tmp_path):
    def run(name, priority):
        header = f"# ir_metadata.start\n# priority: {priority}\n# ir_metadata.end\n"
        return write_run(tmp_path / f"{name}.txt", [],
                         (header + "\n".join(rows(name)) + "\n").encode())

    paths = [run("g-1", 3), run("g-2", 1), run("g-3", 2)]
    checks = check_submissions(paths, Rules(max_runs_per_group=2))
    assert [c.accepted for c in checks] == [False, True, True]
    assert checks[0].errors[0].message.endswith(f"(kept: {paths[1]}, {paths[2]})")


def test_errors_come_before_warnings_within_the_cap(tmp_path):
    from irbench.submissions import Problem, RunCheck, report_lines

    warnings = tuple(Problem("r.txt", line, "rank-order", "warning", "ranks out of order")
                     for line in range(1, 31))
    error = Problem("r.txt", 40, "unknown-topic", "error", "topic 999 is not a topic")
    check = RunCheck(path="r.txt", errors=(error,), warnings=warnings, num_errors=1,
                     num_warnings=30, run_tag="t", group="g", topics=1, results=40)
    lines = list(report_lines(check, 25))
    assert lines[0] == str(error)
    assert lines[1:25] == [str(w) for w in warnings[:24]]
    assert lines[25] == "... and 6 more problems in r.txt"
    assert lines[26].startswith("r.txt: rejected: 1 error, 30 warnings")


def test_validate_with_a_config_without_topics_checks_against_the_qrels_topics(tmp_path, capsys):
    """A config with qrels but no topics file once accepted a run missing a topic and holding
    an unknown one (exit 0); the qrels' topics are the topic set then, and stderr says so."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n2 0 d2 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 d1 1 1.0 r\n99 Q0 d2 1 1.0 r\n")
    config = tmp_path / "c.yaml"
    config.write_text("collection: {qrels: q.txt}\nsystems: {r: run.txt}\nsuites: {s: [AP]}\n")
    from irbench import cli

    assert cli.main(["validate", str(config)]) == 1
    out, err = capsys.readouterr()
    assert f"irbench validate: topic set: {tmp_path / 'q.txt'} (the topics of qrels set " \
           "'official') (2 topics)" in err
    assert "no documents retrieved for topic '2'" in out and "unknown topic '99'" in out


def test_validate_takes_the_config_first_and_its_validation_rules(tmp_path, capsys):
    """'irbench validate CONFIG [RUN...]' as every campaign command; the config's own
    validation rules apply (those 'irbench run' applies); '--config' still works, with a
    deprecation warning."""
    from irbench import cli

    (tmp_path / "q.txt").write_text("1 0 d1 1\n2 0 d2 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 d1 1 1.0 r\n2 Q0 d2 1 1.0 r\n")
    (tmp_path / "rules.yaml").write_text("min_docs: 2\n")
    config = tmp_path / "c.yaml"
    config.write_text("collection: {qrels: q.txt}\nsystems: {r: run.txt}\nsuites: {s: [AP]}\n"
                      "validation: {rules: rules.yaml}\n")
    assert cli.main(["validate", str(config)]) == 1  # the config's rule: 2 documents a topic
    first = capsys.readouterr()
    assert "rejected" in first.out
    assert cli.main(["validate", str(config), str(tmp_path / "run.txt")]) == 1
    assert capsys.readouterr().out == first.out
    assert cli.main(["validate", "--config", str(config)]) == 1
    old = capsys.readouterr()
    assert old.out == first.out
    assert "--config is deprecated" in old.err
    (tmp_path / "rules.yaml").write_text("min_docs: 1\n")
    assert cli.main(["validate", str(config)]) == 0
