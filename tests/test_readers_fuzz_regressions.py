"""What fuzzing the readers found (issue 15.1, 15.12), and a second fuzzer beside
tests/test_readers_fuzz.py that asserts more of each error: every problem is ``PATH:LINE:
reason`` (or ``PATH: reason`` for the whole file) with LINE inside the file, no message is
megabytes long, and the peak of traced memory (tracemalloc; numpy reports its buffers to it)
stays under ``FIXED_BYTES + PER_INPUT_BYTE x input size`` with a small fixed part, so the
bound bites on the small inputs drawn here. Its inputs add what found the bugs below:
fragments (5,000 digits, ``1_0``, 3,000 nested '[', unclosed tags, gzip) and one long field
followed by thousands of short lines.

Why ``PER_INPUT_BYTE`` is 1,024: ids are numpy byte columns as wide as their longest value,
so one id at the limit (MAX_ID_BYTES, 1,024 bytes) widens every row of its column. With the
shortest lines ("1 0 d 1\\n", 8 bytes) that is 128 bytes of column per byte of input for
each copy of the column held at once; measured peaks on such files are 180 x the input for
runs and qrels, 270 x for preferences and 920 x for diversity qrels (collapsing and keying
the judgments holds about seven copies of the docnos). Ordinary files peak at 8 to 17 x.
Without the id limit the peak grows with the square of the input (one 64 KB docno beside
8,000 short lines: 265 MB for a 90 KB file), which this bound catches.

Deterministic (derandomized, bounded examples); the file takes about ten seconds.
"""

from __future__ import annotations

import gc
import gzip
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from campaigns import make_campaign
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irbench import cli
from irbench.errors import FormatError, IrbenchError
from irbench.judgments import KINDS
from irbench.judgments.diversity import read_intent_weights
from irbench.judgments.known import PreparedKnown
from irbench.ranked import PreparedQrels
from irbench.submissions.ir_metadata import find_ir_metadata, read_ir_metadata
from irbench.topics import read_topics
from irbench.trec import MAX_ID_BYTES, read_qrels, read_run, run_tag

DATA = Path(__file__).parent / "data"
TREC_EVAL = DATA / "trec_eval_test"
FIXED_BYTES = 8 << 20
PER_INPUT_BYTE = 1024
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


def _head(path: Path, lines: int = 30) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:lines])


QRELS = _head(TREC_EVAL / "qrels.test")
TOPIC_FILES = [
    (DATA / "submissions" / "topics.tsv").read_bytes(),
    b"<top>\n<num> Number: 051\n<title> Topic: Airbus subsidies\n<desc> Description:\n"
    b"Document will discuss government assistance to Airbus.\n</top>\n\n<top>\n"
    b"<num> Number: 52\n<title> South African sanctions\n</top>\n",
    b'<topics>\n <topic number="201" type="single">\n  <query>raspberry pi</query>\n'
    b' </topic>\n <topic>\n  <identifier>10.2452/401-AH</identifier>\n'
    b"  <title><![CDATA[euro &amp; pound]]></title>\n </topic>\n</topics>\n",
]
DIVERSITY = b"".join(b"%d %d d%d %d\n" % (1 + i % 3, i % 4, i, i % 3) for i in range(24))


def _kind(name: str):
    kind = KINDS[name]
    return lambda path: kind.prepare(kind.read(path, name=None), None)


def _known(path):
    return PreparedKnown(read_qrels(DATA / "trec_eval_test" / "qrels.test"), read_qrels(path))


# name -> (read and prepare a path, valid files to mutate)
READERS = {
    "run": (read_run, [_head(TREC_EVAL / "results.test"),
                       (DATA / "submissions" / "good-1.txt").read_bytes()]),
    "qrels": (lambda path: PreparedQrels(read_qrels(path)), [QRELS]),
    "topics": (read_topics, TOPIC_FILES),
    "diversity": (_kind("diversity"), [DIVERSITY]),
    "qrels_jg": (_kind("qrels_jg"), [DIVERSITY, QRELS]),
    "prefs": (_kind("prefs"), [_head(TREC_EVAL / "prefs.test")]),
    "qrels_prefs": (_kind("qrels_prefs"), [QRELS]),
    "known": (_known, [QRELS]),
    "intent_weights": (read_intent_weights, [b"1 0 0.5\n1 1 0.25\n2 0 1\n"]),
    "ir_metadata": (read_ir_metadata, [(DATA / "submissions" / "meta-1.txt").read_bytes(),
                                       (DATA / "submissions" / "bad-metadata.txt").read_bytes()]),
}

FRAGMENTS = [b"\xff\xfe", b"\xe9", b"\xef\xbb\xbf", b"\x00", b"\r", b"\r\n", b"\t", b"\x0b",
             b" ", b"\n", b"\n\n", b"#", b"-", b"_", b"1_0", b"nan", b"inf", b"1e999", b"-0",
             b"9" * 30, b"9" * 5000, b"<top>", b"</top>", b"<topic>", b"</topic>", b"<num>",
             b"<![CDATA[", b"&#99999999;", b"&amp", b"# ir_metadata.start\n",
             b"# ir_metadata.end\n", b"# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
             b"# a: &a [x]\n# b: *a\n", b"# " + b"[" * 3000 + b"]" * 3000 + b"\n", b"\x1f\x8b"]


@st.composite
def mutated(draw, seeds: list[bytes]) -> bytes:
    """A valid file with a few byte-level edits (or compressed, or cut)."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "insert", "fragment", "delete", "repeat", "cut"]))
        at = draw(st.integers(0, len(data)))
        if op == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "fragment":
            data[at:at] = draw(st.sampled_from(FRAGMENTS))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 40))]
        elif op == "repeat":
            data[at:at] = data[at:at + draw(st.integers(1, 60))] * draw(st.integers(1, 50))
        elif op == "cut":
            del data[at:]
    if draw(st.integers(0, 9)) == 0:  # sometimes gzip it, sometimes cut the gzip short
        packed = gzip.compress(bytes(data))
        return packed[:draw(st.integers(2, len(packed)))]
    return bytes(data)


@st.composite
def long_tokens(draw, seeds: list[bytes]) -> bytes:
    """A valid file with one field replaced by a long token, then many short copies of a
    line (each row of a column is as wide as its longest value)."""
    lines = draw(st.sampled_from(seeds)).split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    fields = lines[i].split(b" ") if lines[i] else [b""]
    j = draw(st.integers(0, len(fields) - 1))
    size = draw(st.sampled_from([MAX_ID_BYTES, MAX_ID_BYTES + 1, 5000, 1 << 16]))
    fields[j] = draw(st.sampled_from([b"x", b"9", b"\xff", b"<", b" ", b"["])) * size
    lines[i] = b" ".join(fields)
    short = min((line for line in lines if line.strip()), key=len, default=b"1 0 d 1")
    copies = draw(st.sampled_from([0, 10, 2000]))
    return b"\n".join(lines) + b"\n" + b"".join(short + b"%d\n" % k for k in range(copies))


def inputs(seeds: list[bytes]):
    return st.one_of(st.binary(max_size=2048), mutated(seeds), long_tokens(seeds))


def read_traced(read, path: Path) -> tuple[IrbenchError | None, int]:
    """(the irbench error ``read(path)`` raised or None, peak traced bytes). Any other
    exception propagates: that is a failure."""
    gc.collect()
    tracemalloc.start()
    try:
        read(path)
        error = None
    except IrbenchError as exc:
        error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return error, peak


def assert_names_lines(error: IrbenchError, path: Path, data: bytes) -> None:
    """Each problem of a FormatError is ``PATH:LINE: reason`` with LINE in the file, or
    ``PATH: reason`` for the file as a whole (e.g. diversity qrels that are ad hoc qrels)."""
    assert str(error).strip()
    if not isinstance(error, FormatError):
        return
    lines = data.count(b"\n") + 1
    for problem in error.problems:
        match = re.match(rf"{re.escape(str(path))}(?::(\d+))?: \S", problem)
        assert match, problem
        if match.group(1) and not data.startswith(b"\x1f\x8b"):  # gzip: lines of contents
            assert 1 <= int(match.group(1)) <= lines, problem
        assert len(problem) < 2000  # long fields are cut in messages


@pytest.fixture(scope="module", autouse=True)
def _imported(tmp_path_factory):
    """Each reader once on a valid file first: lazy imports are not the reader's memory."""
    root = tmp_path_factory.mktemp("warm")
    for name, (read, seeds) in READERS.items():
        (root / name).write_bytes(seeds[0])
        read_traced(read, root / name)


@pytest.mark.parametrize("name", list(READERS))
def test_reader_errors_name_a_line_within_memory(name, tmp_path):
    read, seeds = READERS[name]
    path = tmp_path / f"input.{name}"

    @SETTINGS
    @given(inputs(seeds))
    def check(data):
        path.write_bytes(data)
        error, peak = read_traced(read, path)
        if error is not None:
            assert_names_lines(error, path, data)
        assert peak <= FIXED_BYTES + PER_INPUT_BYTE * len(data), (peak, len(data))

    check()


def test_valid_seed_files_are_read(tmp_path):
    """The files the fuzzing starts from are valid: mutations are of working inputs."""
    for name, (read, seeds) in READERS.items():
        for k, data in enumerate(seeds):
            if name == "ir_metadata" and k == 1:
                continue  # bad-metadata.txt is the invalid example
            path = tmp_path / f"{name}{k}"
            path.write_bytes(data)
            read(path)


# ---- regressions: each crash or blow-up the fuzzing found ---------------------------------


def _eval(capsys, *args) -> tuple[int, str]:
    code = cli.main(["eval", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.err


def test_a_relevance_of_thousands_of_digits_is_a_line_error(tmp_path, capsys):
    """int() refuses strings over 4,300 digits with a ValueError: it escaped the qrels reader."""
    q = tmp_path / "q.txt"
    q.write_bytes(b"1 0 d1 1\n1 0 d2 " + b"9" * 5000 + b"\n")
    r = tmp_path / "r.txt"
    r.write_bytes(b"1 Q0 d1 1 1.0 r\n")
    code, err = _eval(capsys, q, r)
    assert code == 2 and err == (f"irbench: error: {q}:2: relevance {'9' * 64}... (5,000 bytes) "
                                 "is out of the integer range (-2147483648 to 2147483647)\n")


@pytest.mark.parametrize("kind", ["diversity", "qrels_jg"])
def test_diversity_relevance_must_be_written_as_an_integer(tmp_path, kind):
    """int() reads '1_0' as 10; the qrels reader refuses it, and so do these now."""
    path = tmp_path / "d.txt"
    path.write_bytes(b"1 a d1 1\n1 a d2 1_0\n1 a d3 " + b"7" * 5000 + b"\n")
    with pytest.raises(FormatError) as error:
        KINDS[kind].read(path, name=None)
    assert error.value.problems == [
        f"{path}:2: relevance '1_0' is not an integer",
        f"{path}:3: relevance {'7' * 64}... (5,000 bytes) is out of the integer range "
        "(-2147483648 to 2147483647)"]


@pytest.mark.parametrize("content", [b"1 a b d1 1\n1 a b d2 1_0\n",
                                     b"1 a b d1 1\n# a comment sends it line by line\n"
                                     b"1 a b d2 1_0\n"])
def test_a_rel_level_with_an_underscore_is_refused(tmp_path, content):
    """numpy and float() read '1_0' as 10 (trec_eval's atof as 1): both paths refuse it."""
    path = tmp_path / "p.txt"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=r"p.txt:\d: rel_level '1_0' is not a finite number"):
        KINDS["prefs"].read(path, name=None)


LONG = b"x" * (MAX_ID_BYTES + 1)


@pytest.mark.parametrize("kind,content,line,what", [
    ("diversity", b"1 a d1 1\n1 a " + LONG + b" 1\n", 2, "docno"),
    ("diversity", b"1 " + LONG + b" d1 1\n", 1, "subtopic"),
    ("diversity", LONG + b" a d1 1\n", 1, "topic id"),
    ("qrels_jg", b"1 " + LONG + b" d1 1\n", 1, "jg"),
    ("prefs", b"1 a b d1 1\n1 a b " + LONG + b" 0\n", 2, "docno"),
    ("prefs", b"1 a " + LONG + b" d1 1\n", 1, "judgment subgroup"),
    ("qrels_prefs", b"1 " + LONG + b" d1 1\n", 1, "judgment group"),
    ("qrels_prefs", LONG + b" 0 d1 1\n", 1, "topic id"),
    ("adhoc", b"1 0 d1 1\n# x\n1 0 " + LONG + b" 1\n", 3, "docno"),
])
def test_overlong_ids_in_every_judgment_format_are_line_errors(tmp_path, kind, content, line,
                                                               what):
    path = tmp_path / "j.txt"
    path.write_bytes(content)
    with pytest.raises(FormatError) as error:
        KINDS[kind].read(path, name=None)
    assert error.value.problems == [f"{path}:{line}: {what} of 1,025 bytes: irbench takes "
                                    "topic ids and docnos of at most 1,024 bytes"]


def test_an_overlong_id_in_a_known_file_is_a_line_error(tmp_path, capsys):
    q, r, known = tmp_path / "q.txt", tmp_path / "r.txt", tmp_path / "known.txt"
    q.write_bytes(b"1 0 d1 1\n")
    r.write_bytes(b"1 Q0 d1 1 1.0 r\n")
    known.write_bytes(b"1 0 d1 1\n1 0 " + LONG + b" 1\n")
    code, err = _eval(capsys, "--known", known, "-m", "Coverage", q, r)
    assert code == 2 and err.startswith(f"irbench: error: {known}:2: docno of 1,025 bytes")


@pytest.mark.parametrize("content,line", [
    (b"401\ttopic\n" + LONG + b"\tlong\n", 2),
    (b"<top>\n<num> Number: 1\n</top>\n<top>\n<num> Number: " + LONG + b"\n</top>\n", 4),
    (b'<topics>\n<topic number="' + LONG + b'"><query>q</query></topic>\n</topics>\n', 2),
])
def test_overlong_topic_ids_are_line_errors(tmp_path, content, line):
    path = tmp_path / "topics.txt"
    path.write_bytes(content)
    with pytest.raises(FormatError) as error:
        read_topics(path)
    assert error.value.problems == [f"{path}:{line}: topic id of 1,025 bytes: irbench takes "
                                    "topic ids and docnos of at most 1,024 bytes"]


@pytest.mark.parametrize("kind", ["adhoc", "diversity", "qrels_jg", "prefs", "qrels_prefs"])
@pytest.mark.parametrize("content", [bytes(range(256)) * 4,
                                     bytes(range(1, 256)) * 4,
                                     b"1 0 d1 1\n1 0 \xff\xfe\x80 \xe9\n"])
def test_a_binary_judgment_file_is_a_line_error(tmp_path, kind, content):
    """Binary bytes in any judgment file: a FormatError naming the file and a line."""
    path = tmp_path / "judgments.bin"
    path.write_bytes(content)
    with pytest.raises(FormatError) as error:
        KINDS[kind].prepare(KINDS[kind].read(path, name=None), None)
    assert all(re.match(rf"{re.escape(str(path))}:\d+: ", p) for p in error.value.problems)


def test_deeply_nested_ir_metadata_is_refused_not_a_recursion_error():
    """PyYAML composes nested collections recursively: 3,000 '[' exhausted Python's stack."""
    block = b"# ir_metadata.start\n# " + b"[" * 3000 + b"]" * 3000 + b"\n# ir_metadata.end\n"
    assert find_ir_metadata(block).problems == (
        (2, "ir_metadata is nested more than 32 levels deep"),)
    ok = b"# ir_metadata.start\n# a: " + b"[" * 31 + b"]" * 31 + b"\n# ir_metadata.end\n"
    assert find_ir_metadata(ok).problems == ()


def test_validate_reports_a_nested_metadata_bomb_without_a_traceback(tmp_path):
    run = tmp_path / "r.txt"
    run.write_bytes(b"# ir_metadata.start\n# " + b"{a: " * 5000 + b"}" * 5000
                    + b"\n# ir_metadata.end\n1 Q0 d1 1 1.0 r\n")
    proc = subprocess.run([sys.executable, "-m", "irbench", "validate", str(run)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert f"{run}:2: error: ir_metadata is nested more than 32 levels deep" in proc.stdout


def test_the_metadata_marker_repeated_on_one_line_is_scanned_once():
    """Each occurrence copied its whole line: 100,000 on a 1.9 MB line was quadratic."""
    assert find_ir_metadata(b"x ir_metadata.start" * 100_000) == find_ir_metadata(b"")
    assert find_ir_metadata(b"## ir_metadata.start\n#  a: 1\n\t# ir_metadata.end\n").data == {
        "a": 1}


@pytest.mark.parametrize("content,reason", [
    (b"<top>" * 200_000, "no topics found"),
    (b"<topic>" * 200_000, "no topics found"),
    (b"<topic number='1'><query>" + b"<![CDATA[" * 100_000 + b"</query></topic>", None),
    (b"<topic number='1'><query>" + b"<" * 200_000 + b"</query></topic>", None),
    (b"<topic number='1'>" + b"<query>" * 100_000 + b"</topic>", None),
    (b"<top><num> 1 <title>" + b" " * 200_000 + b"x</top>", None),
    (b"<top><num>" + b" " * 200_000 + b"</top>", "topic without <num>"),
], ids=["top", "topic", "cdata", "lt", "query", "title-blanks", "num-blanks"])
def test_unclosed_topic_tags_are_read_in_linear_time(tmp_path, content, reason):
    """A lazy '<top>(.*?)</top>' scanned to the end of the file once per unclosed tag
    (200,000 tags: hours); the readers now pair tags in one pass."""
    path = tmp_path / "topics.xml"
    path.write_bytes(content)
    if reason:
        with pytest.raises(FormatError, match=reason):
            read_topics(path)
    else:
        assert len(read_topics(path)) == 1


def test_topic_files_still_read_as_before(tmp_path):
    path = tmp_path / "t.xml"
    path.write_bytes(
        b"<topics><topic><num>Number: 7</num><title>a <b>bold</b> title</title></topic>\n"
        b"<topic><qid>8</qid><title></title><description><![CDATA[x < y]]> and &amp; z"
        b"</description></topic><topic id='9'><query>q</query><num>nine</num></topic>"
        b"<topic><NUM>10</num><TITLE>upper</TITLE></topic></topics>")
    topics = read_topics(path)
    assert topics.query_id == ("7", "8", "9", "10")
    assert topics.text == ("a bold title", "x < y and & z", "q", "upper")
    trec = tmp_path / "t.trec"
    trec.write_bytes(b"<top>\n<num> Number: 051 \n<title> Topic:  Airbus  \n\n<desc> D\n</top>"
                     b"<TOP><NUM>Number:52\n<TITLE>\n<DESC> Description: a b c\n</TOP>")
    assert read_topics(trec) == type(topics)(("51", "52"), ("Airbus", "a b c"), str(trec))


def test_a_corrupt_gzip_run_named_by_its_tag_is_no_traceback(tmp_path, capsys):
    """``name_from: tag`` reads the first line of each run; zlib.error escaped it."""
    config = make_campaign(tmp_path, systems=2, topics=2, depth=5, extra_qrels=False)
    runs = tmp_path / "runs"
    packed = gzip.compress((runs / "r00.txt").read_bytes())
    (runs / "r00.txt").unlink()
    (runs / "r00.txt.gz").write_bytes(packed[:12] + b"\xff" * 40)
    assert run_tag(str(runs / "r00.txt.gz")) == ""
    config.write_text(config.read_text().replace(
        "  - glob: ../runs/r*.txt", "  - glob: ../runs/r*.txt*\n    name_from: tag"))
    code = cli.main(["check", str(config)])
    captured = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in captured.out + captured.err


def test_long_fields_are_cut_in_messages(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_bytes(b"1 0 d1 1\n")
    r.write_bytes(b"1 Q0 d1 1 " + b"x" * 100_000 + b" r\n")
    code, err = _eval(capsys, q, r)
    assert code == 2 and err == (f"irbench: error: {r}:1: score '{'x' * 64}... (100,000 bytes)'"
                                 " is not a finite number\n")
