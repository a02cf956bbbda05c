"""Hostile collection files (issue 35): the readers are linear on any input, a document's size
and a JSON line's nesting are bounded with a FILE:LINE problem, a gzip bomb is read in bounded
memory, and a lookup reads only what a prompt sends."""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from irbench.documents import DocumentError, DocumentsSpec, formats, index, open_documents
from irbench.documents.markup import MARKUP, TITLE_NAMES, Markup, first_element
from irbench.documents.spec import Problems

DOC = b"<DOC>\n<DOCNO>d1</DOCNO>\n"
FOUR_MB = 4_000_000


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(folder))
    return folder


def opened(*paths: str):
    return open_documents(DocumentsSpec(paths=paths))


# ---- linear time ----------------------------------------------------------------------------

# before: 400 KB of unclosed <script> took 119 s, 50 KB of <title> 2.5 s and of "<DOC " 3.6 s,
# growing with the square of the size
@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit, text", [
    (b"<script>x", "x x x"), (b"<STYLE>x", "x x x"), (b"<title>x", "x x x"),
    (b"<head>x", "x x x"), (b"<!--x", "<!--x<!--x"), (b"<ax", "<ax<ax"), (b"<b x", "<b x<b x"),
    (b"<headline x", "<headline x<headline x"),
])
def test_four_megabytes_of_an_unclosed_tag_are_read_in_linear_time(tmp_path, cache, unit,
                                                                   text):
    path = tmp_path / "hostile.sgml"
    path.write_bytes(DOC + unit * (FOUR_MB // len(unit)) + b"\n</DOC>\n")
    with opened(str(path)) as docs:
        doc = docs.get("d1")
    assert doc.text.startswith(text) and doc.title == ""


@pytest.mark.timeout(60)
def test_four_megabytes_of_unclosed_doc_tags(tmp_path, cache):
    path = tmp_path / "docs.sgml"
    path.write_bytes(b"<DOC " * (FOUR_MB // 5))
    with pytest.raises(DocumentError) as info:
        opened(str(path))
    assert info.value.problems == [f"{path}: no documents found (read as TREC)"]
    path.write_bytes(b"<DOC " * (FOUR_MB // 5) + b"<DOC>\n<DOCNO>z</DOCNO>zed</DOC>\n")
    with opened(str(path)) as docs:  # one opening tag, up to the first '>'
        assert docs.get("z").text == "zed"


@pytest.mark.timeout(60)
def test_an_unclosed_script_among_closed_ones(tmp_path, cache):
    """Closed elements are removed whole, unclosed ones are tags: as the expression does."""
    body = (b"<script>gone</script>kept " * 50_000 + b"<script>" * 200_000 + b"end"
            + b"<title>t</title>")
    path = tmp_path / "mixed.sgml"
    path.write_bytes(DOC + body + b"\n</DOC>\n")
    with opened(str(path)) as docs:
        doc = docs.get("d1")
    assert doc.title == "t"
    assert doc.text.split() == ["kept"] * 50_000 + ["end", "t"]


FRAGMENTS = [b"<", b">", b"/", b"<script", b"</script>", b"<style>", b"</STYLE >", b"</style",
             b"<!--", b"-->", b"<title>", b"</title>", b"<head>", b"</head>", b"<headline>",
             b"</HEADLINE>", b"<b>", b"</b>", b"<abbr x>", b"<a", b" ", b"\t", b"\n", b"x",
             b"<p>", b"</p>", b"<?x", b"<!x", b"<TITLE ", b"<head ", b"<headx>", b"2",
             b"<scripts>", b"<script-x>", b"</", b"\xff", b"<Script"]
TITLE_ELEMENT = re.compile(rb"<(headline|title|head)(?:\s[^>]*)?>(.*?)</\1\s*>",
                           re.IGNORECASE | re.DOTALL)


def test_the_linear_scan_gives_what_the_expressions_give():
    """The scan (used where many openings are unclosed) and the expressions (used elsewhere,
    and before issue 35 everywhere) agree on random markup."""
    rng = random.Random(35)
    for _ in range(20_000):
        content = b"".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 40)))
        assert Markup(content).replaced() == MARKUP.sub(b" ", content), content
        found = TITLE_ELEMENT.search(content)
        expected = (found.group(1).lower(), found.group(2)) if found else None
        assert first_element(content, TITLE_NAMES) == expected, content


# ---- bounded size and depth -----------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_deeply_nested_json_line_is_a_problem_with_its_line(tmp_path, cache):
    path = tmp_path / "docs.jsonl"
    deep = "[" * 200_000 + "]" * 200_000
    path.write_text(json.dumps({"id": "ok", "text": "fine"}) + "\n"
                    + '{"id": "deep", "text": ' + deep + "}\n"
                    + '{"id": "deeper", "text": "x", "extra": ' + "{\"a\": " * 50_000 + "1"
                    + "}" * 50_000 + "}\n")
    with pytest.raises(DocumentError) as info:
        opened(str(path))
    assert [p.split(": ", 1)[0] for p in info.value.problems] == [f"{path}:2", f"{path}:3"]
    assert all("nested too deeply" in p for p in info.value.problems)


def nested(depth: int) -> str:
    return f'{{"id": "d{depth}", "text": {"[" * depth}"deep"{"]" * depth}}}\n'


@pytest.mark.timeout(60)
def test_a_nested_text_list_is_read_or_a_problem(tmp_path, cache):
    """A text field's lists are read item by item, one call deeper per level: a shallow one is
    read, one deeper than Python goes is a problem (not a RecursionError)."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(nested(depth) for depth in (20, 5000)))
    with pytest.raises(DocumentError) as info:
        opened(str(path))
    assert info.value.problems == [f"{path}:2: JSON arrays or objects nested too deeply (more "
                                   f"than some {sys.getrecursionlimit():,} levels)"]
    path.write_text(nested(20))
    with opened(str(path)) as docs:
        assert docs.get("d20").text == "deep"


def read_all(path: Path) -> tuple[list[formats.ParsedDocument], list[str]]:
    problems = Problems()
    docs = list(formats.read_documents(str(path), DocumentsSpec(paths=(str(path),)), problems))
    return docs, problems.found


@pytest.mark.timeout(60)
def test_a_document_over_the_cap_is_a_problem_and_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "MAX_DOCUMENT_BYTES", 100_000)
    monkeypatch.setattr(formats, "CHUNK", 16_384)
    path = tmp_path / "docs.sgml"
    path.write_bytes(b"<DOC>\n<DOCNO>a</DOCNO>\nA\n</DOC>\n"
                     b"<DOC>\n<DOCNO>big</DOCNO>\n" + b"words and <DOCNO>x</DOCNO> lines\n" * 20_000
                     + b"</DOC>\n<DOC>\n<DOCNO>b</DOCNO>\nB\n</DOC>\n"
                     b"<DOC>\n<DOCNO>open</DOCNO>\n" + b"never closed\n" * 20_000)
    docs, problems = read_all(path)
    assert [(d.docno, d.text, d.line) for d in docs] == [(b"a", b"A", 1), (b"b", b"B", 20_008)]
    assert problems == [f"{path}:{line}: a document longer than 100,000 bytes (its </DOC> "
                        "missing?): not read" for line in (5, 20_012)]


@pytest.mark.timeout(60)
def test_a_json_line_over_the_cap_is_a_problem_and_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "MAX_DOCUMENT_BYTES", 100_000)
    monkeypatch.setattr(formats, "CHUNK", 16_384)
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join([json.dumps({"id": "a", "text": "A"}),
                               json.dumps({"id": "big", "text": "x" * 500_000}),
                               json.dumps({"id": "b", "text": "B"}),
                               json.dumps({"id": "small", "text": "y" * 50_000}),
                               json.dumps({"id": "last", "text": "z" * 200_000})]))
    docs, problems = read_all(path)
    assert [(d.docno, d.line) for d in docs] == [(b"a", 1), (b"b", 3), (b"small", 4)]
    assert problems == [f"{path}:{line}: a line longer than 100,000 bytes: not read"
                        for line in (2, 5)]


BOMB = """
import gzip, resource, sys
from irbench.documents import DocumentError, DocumentsSpec, open_documents
try:
    open_documents(DocumentsSpec(paths=(sys.argv[1],)), cache=sys.argv[2])
    print("opened")
except DocumentError as exc:
    print(*exc.problems, sep="\\n")
print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


@pytest.mark.timeout(240)
def test_a_gzip_bomb_of_one_unclosed_doc_is_read_in_bounded_memory(tmp_path):
    """2 GiB of one unclosed <DOC> in some 5 MB of gzip: before, MemoryError after 214 s (3.8
    GB when bounded to 4 GB); now the problem named at its line, in a few seconds, reading no
    more than the cap and a chunk at once."""
    path = tmp_path / "bomb.sgml.gz"
    block = 16 << 20
    member = gzip.compress(b"lorem ipsum dolor sit amet\n" * (block // 27))  # 16 MiB in ~40 KB
    with open(path, "wb") as out:  # gzip members one after the other: one stream to a reader
        out.write(gzip.compress(b"<DOC>\n<DOCNO>ok</DOCNO>\nfine\n</DOC>\n<DOC>\n"
                                b"<DOCNO>bomb</DOCNO>\n"))
        for _ in range((2 << 30) // block):
            out.write(member)
    assert path.stat().st_size < 10 << 20
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(BOMB), str(path),
                           str(tmp_path / "cache")], capture_output=True, text=True, timeout=230)
    assert done.returncode == 0, done.stderr
    *problems, peak = done.stdout.splitlines()
    assert problems == [f"{path}:5: a document longer than {formats.MAX_DOCUMENT_BYTES:,} bytes "
                        "(its </DOC> missing?): not read"]
    # the open document is held at most twice (what was carried, and it with the next chunk):
    # 360 MiB here, alone or beside busy processes; 612 MiB once and 864 MiB once in full CI
    # runs (not reproduced: huge pages and the allocator count in the RSS). The bound is half
    # the file's 2 GiB: bounded by the cap, not by the file (3.8 GB before)
    assert int(peak.split()[1]) < 8 * formats.MAX_DOCUMENT_BYTES


# ---- reading only what a prompt sends -------------------------------------------------------

def test_a_limit_cuts_title_and_text_to_characters_exactly(tmp_path, cache):
    text = "".join(random.Random(1).choice(["a", "é", "€", "😀", "\n"]) for _ in range(5000))
    title = "T€😀" * 700
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "d", "title": title, "text": text}) + "\n"
                    + json.dumps({"id": "e", "text": "short"}) + "\n", encoding="utf-8")
    with opened(str(path)) as docs:
        whole = docs.get("d")
        for limit in (0, 1, 2, 3, 999, 2100, 2101, 5000, 7000, 7102, 7103, 10_000):
            cut = docs.get("d", limit=limit)
            assert (cut.docno, cut.title, cut.text) == ("d", whole.title[:limit],
                                                        whole.text[:limit]), limit
        assert docs.get_many(["e", "d", "e"], limit=3) == [
            docs.get("e", limit=3), docs.get("d", limit=3), docs.get("e", limit=3)]


def test_a_limit_reads_only_what_it_can_take_and_each_document_once(tmp_path, cache,
                                                                     monkeypatch):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "big", "text": "word " * 2_000_000}) + "\n"
                    + json.dumps({"id": "small", "text": "tiny"}) + "\n")
    reads: list[int] = []
    real = index.Index.read_at

    def counted(self, start: int, size: int) -> bytes:
        reads.append(size)
        return real(self, start, size)

    with opened(str(path)) as docs:
        monkeypatch.setattr(index.Index, "read_at", counted)
        tracemalloc.start()
        got = docs.get_many(["big"] * 25 + ["small"], limit=8000)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert [len(d.text) for d in got] == [8000] * 25 + [4]
    assert got[0].text == "word " * 1600 and got[-1].text == "tiny"
    records = [size for size in reads if size > 8]  # the docnos read to check a lookup are small
    assert sorted(records) == [len("small") + 4, len("big") + 4 * 8000]
    assert peak < 1 << 20  # before: the whole 10 MB text, 25 times


def test_a_pair_list_on_one_large_document_takes_little_memory(tmp_path):
    """25 pairs on one large document as judging asks for them (a limit of 8,000
    characters): the peak RSS of the lookup in its own process hardly moves (before: 1.8 GB
    for a 71 MB document)."""
    path = tmp_path / "docs.jsonl"
    with open(path, "w") as out:
        out.write(json.dumps({"id": "big", "text": "word " * 6_000_000}) + "\n")
    script = textwrap.dedent("""
        import resource, sys
        from irbench.documents import DocumentsSpec, open_documents
        with open_documents(DocumentsSpec(paths=(sys.argv[1],)), cache=sys.argv[2]) as docs:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            docs.get_many(["big"] * 25, limit=8000)
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """)
    cache = str(tmp_path / "cache")
    subprocess.run([sys.executable, "-c", script, str(path), cache], check=True,
                   capture_output=True)  # builds the index
    done = subprocess.run([sys.executable, "-c", script, str(path), cache], check=True,
                          capture_output=True, text=True)
    assert int(done.stdout) < 8 << 10  # KiB: 30 MB text, not read


# ---- docnos that are not UTF-8 ----------------------------------------------------------------


@pytest.mark.timeout(60)
def test_docnos_not_utf8_are_keyed_as_every_other_path_names_them(tmp_path, cache):
    """irbench.ids.id_text is the one rule: a docno b'a\\xff' is 'a\\\\xff' in the index as in
    the runs, pools and store; two docnos that differ only in such bytes stay two documents
    (as U+FFFD they were one, 'given again'); the SGML and the JSONL readers agree."""
    sgml = tmp_path / "docs.sgml"
    sgml.write_bytes(b"<DOC><DOCNO>a\xff</DOCNO><TEXT>first</TEXT></DOC>\n"
                     b"<DOC><DOCNO>a\xfe</DOCNO><TEXT>second</TEXT></DOC>\n")
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"id": "b\udcff", "contents": "third"}) + "\n")
    with opened(str(sgml)) as docs:
        assert "a\\xff" in docs and "a\\xfe" in docs and "a\ufffd" not in docs
        assert "a\udcff" in docs  # the same id, decoded with surrogateescape
        assert [d.text for d in docs.get_many(["a\\xfe", "a\\xff"])] == ["second", "first"]
    with opened(str(jsonl)) as docs:
        assert docs.get("b\\xff").text == "third"
