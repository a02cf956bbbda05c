"""irbench.documents: document text by docno from TREC SGML and JSONL files (plain or gzip) and
from ir_datasets, through an index built once in the cache folder."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest

from irbench.documents import (
    Document,
    DocumentError,
    Documents,
    DocumentsSpec,
    formats,
    hashing,
    index,
    open_documents,
)
from irbench.errors import FormatError

REPO = Path(__file__).resolve().parent.parent

FT = b"""<DOC>
<DOCNO> FT911-3 </DOCNO>
<PROFILE>_AN-BEOA7AAIFT</PROFILE>
<HEADLINE>
FT  11 MAY 91 / Bonds &amp; <b>gilts</b>
</HEADLINE>
<TEXT>
Prices rose <i>sharply</i>.



Second paragraph.
</TEXT>
</DOC>
<DOC>
<DOCNO>FT911-5</DOCNO>
<TEXT>Plain text.</TEXT>
</DOC>
"""
HTML = (b'<doc id="web-1">\r\n<docno>\tWEB-1\t</docno>\r\n<html><head><title>A page</title>'
        b'<style>p {color: red}</style><script>var x = "<p>";</script></head>\r\n'
        b'<body><p>One</p><p>Two &eacute;t\xc3\xa9</p><!-- gone --></body></html>\r\n</doc>\r\n'
        b'<DOC>\n<DOCNO>LAT-1</DOCNO>\n<TEXT>caf\xe9 au lait</TEXT>\n</DOC>\n')


def write(path: Path, data: bytes, gz: bool = False) -> str:
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def jsonl(*objects) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRBENCH_CACHE_DIR", str(folder))
    return folder


def opened(*paths: str, **options) -> Documents:
    return open_documents(DocumentsSpec(paths=paths, **options))


def index_folders(cache: Path) -> list[str]:
    folder = cache / "documents"
    return sorted(p.name for p in folder.iterdir() if p.name != "stamps") if folder.exists() \
        else []


# ---- formats --------------------------------------------------------------------------------

def test_trec_sgml_plain_and_gzip(tmp_path, cache):
    plain = write(tmp_path / "ft.sgml", FT)
    packed = write(tmp_path / "web.gz.data", HTML, gz=True)  # gzip told by its bytes
    with opened(plain, packed) as docs:
        assert len(docs) == 4 and docs.built
        assert docs.get("FT911-3") == Document(
            "FT911-3", "_AN-BEOA7AAIFT \n\nFT  11 MAY 91 / Bonds & gilts\n\n"
            "Prices rose sharply.\n\nSecond paragraph.", "FT 11 MAY 91 / Bonds & gilts")
        assert docs.get("FT911-5") == Document("FT911-5", "Plain text.", "")
        web = docs.get("WEB-1")
        assert web.title == "A page"
        assert web.text == "A page \n One Two été"  # script, style, comments gone
        assert docs.get("LAT-1").text == "caf\ufffd au lait"  # latin-1 byte: U+FFFD


def test_jsonl_with_custom_fields(tmp_path, cache):
    path = write(tmp_path / "c.jsonl", jsonl(
        {"pid": "p1", "heading": "Head", "body": "Body one", "title": "T1"},
        {"pid": 2, "heading": ["a", "b"], "body": "Body two"}), gz=True)
    with opened(path, id_field="pid", text_fields=("heading", "body")) as docs:
        assert docs.get_many(["p1", "2"]) == [Document("p1", "Head\n\nBody one", "T1"),
                                            Document("2", "a\nb\n\nBody two", "")]


def test_jsonl_default_fields(tmp_path, cache):
    path = write(tmp_path / "c.jsonl", jsonl(
        {"_id": "x", "docid": " D1 ", "title": "Title", "text": "Text é"},
        {"id": "D2", "contents": "Only contents"},
        {"doc_id": "D3", "title": "", "segment": "seg", "url": "http://u"}))
    with opened(path) as docs:
        assert docs.get("D1") == Document("D1", "Title\n\nText é", "Title")
        assert docs.get("D2") == Document("D2", "Only contents", "")
        assert docs.get("D3") == Document("D3", "seg", "")
        assert "x" not in docs


def test_format_forced_and_told(tmp_path, cache):
    path = write(tmp_path / "odd.txt", b"\xef\xbb\xbf  \n" + jsonl({"id": "a", "text": "t"}))
    assert opened(path).get("a").text == "t"
    with pytest.raises(DocumentError) as error:
        opened(path, format="trec")
    assert f"{path}: no documents found (read as TREC)" in str(error.value)
    other = write(tmp_path / "csv.txt", b"id,text\n1,x\n")
    empty = write(tmp_path / "empty.txt", b"")
    with pytest.raises(DocumentError) as error:
        opened(other, empty)
    assert str(error.value) == (f"{other}: cannot tell the format from the first bytes "
                                "(neither '<' of TREC SGML nor '{' of JSONL); give the format\n"
                                f"{empty}: an empty file")


def test_documents_cut_by_chunk_ends_read_whole(tmp_path, cache, monkeypatch):
    data = FT + HTML + FT.replace(b"FT911", b"FT912")
    lines = jsonl(*({"id": f"j{i}", "text": f"text {i}"} for i in range(20)))
    expected = {}
    with opened(write(tmp_path / "a.sgml", data), write(tmp_path / "b.jsonl", lines)) as docs:
        for docno in ["FT911-3", "FT911-5", "WEB-1", "LAT-1", "FT912-3", "j0", "j19"]:
            expected[docno] = docs.get(docno)
    for size in (1, 7, 64):
        monkeypatch.setattr(formats, "CHUNK", size)
        spec = DocumentsSpec(paths=(write(tmp_path / "a.sgml", data),
                                    write(tmp_path / "b.jsonl", lines)))
        with open_documents(spec, cache=tmp_path / f"cache{size}") as docs:
            assert docs.built and len(docs) == 26
            assert docs.get_many(list(expected)) == list(expected.values())


# ---- lookups --------------------------------------------------------------------------------

def test_lookups_hit_miss_order_and_membership(tmp_path, cache):
    with opened(write(tmp_path / "ft.sgml", FT), write(tmp_path / "h.sgml", HTML)) as docs:
        got = docs.get_many(["LAT-1", "FT911-5", "LAT-1", "FT911-3"])
        assert [d.docno for d in got] == ["LAT-1", "FT911-5", "LAT-1", "FT911-3"]
        assert docs.get_many([]) == []
        assert "FT911-3" in docs and "FT911-4" not in docs and 3 not in docs
        assert " FT911-3" not in docs  # asked docnos are taken as they are
        with pytest.raises(DocumentError) as error:
            docs.get("FT911-4")
        assert str(error.value) == (f"docno 'FT911-4' not in the documents of "
                                    f"{tmp_path / 'ft.sgml'}, {tmp_path / 'h.sgml'}")


def test_every_missing_docno_named_in_one_error(tmp_path, cache):
    path = write(tmp_path / "ft.sgml", FT)
    asked = ["FT911-3"] + [f"X{i}" for i in range(25)] + ["X0"]
    with opened(path) as docs, pytest.raises(DocumentError) as error:
        docs.get_many(asked)
    lines = str(error.value).split("\n")
    assert lines[:2] == [f"docno 'X0' not in the documents of {path}",
                         f"docno 'X1' not in the documents of {path}"]
    assert len(lines) == 21 and lines[-1] == "... and 5 more problems"
    assert len(error.value.problems) == 25


def test_many_documents_random_lookups(tmp_path, cache):
    rng = random.Random(7)
    texts = {f"D{i}": " ".join(rng.choice(["alpha", "beta", "gamma", "é"]) for _ in range(9))
             for i in range(3000)}
    data = b"".join(f"<DOC><DOCNO>{k}</DOCNO><TEXT>{v}</TEXT></DOC>\n".encode()
                    for k, v in texts.items())
    with opened(write(tmp_path / "many.sgml", data, gz=True)) as docs:
        asked = rng.sample(sorted(texts), 500)
        assert [d.text for d in docs.get_many(asked)] == [texts[k] for k in asked]


def test_error_is_a_format_error_that_pickles():
    error = DocumentError(["a:1: bad"], 3)
    assert isinstance(error, FormatError) and error.exit_code == 2
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is DocumentError and str(again) == str(error)


def test_spec_checked():
    with pytest.raises(DocumentError) as error:
        DocumentsSpec(paths=("a",), irds="x", format="xml")
    assert str(error.value) == ("documents: give either paths or irds, not both or neither\n"
                                "documents: format 'xml' is not one of auto, trec, jsonl")
    with pytest.raises(DocumentError):
        DocumentsSpec(paths="a.sgml")  # type: ignore[arg-type]
    assert DocumentsSpec(irds="irds:msmarco-passage").irds_id == "msmarco-passage"
    assert DocumentsSpec(paths=["a"]).paths == ("a",)  # type: ignore[arg-type]


# ---- bad input ------------------------------------------------------------------------------

BAD_TREC = b"""<DOC>
<TEXT>no docno</TEXT>
</DOC>
<DOC>
<DOCNO>OK-1</DOCNO>
</DOC>
<DOC>
<DOCNO>unclosed
</DOC>
</DOC>
<DOC>
<DOCNO> </DOCNO>
</DOC>
<DOC>
<DOCNO>A-1</DOCNO>
<DOC>
<DOCNO>A-2</DOCNO>
</DOC>
<DOC>
<DOCNO>TAIL</DOCNO>
"""
BAD_JSONL = (b'{"id": "j1", "text": "fine"}\n'
             b'{"id": "j2", "text": \n'
             b'\n'
             b'{"docno": "j3", "text": "x"}\n'
             b'["a list"]\n'
             b'{"id": "j4", "other": "x"}\n'
             b'{"id": true, "text": "x"}\n')


def test_every_problem_of_every_file_in_one_error(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(formats, "CHUNK", 16)  # line numbers hold across chunk ends
    sgml = write(tmp_path / "bad.sgml", BAD_TREC, gz=True)
    lines = write(tmp_path / "bad.jsonl", BAD_JSONL)
    with pytest.raises(DocumentError) as error:
        opened(sgml, lines)
    assert error.value.problems == [
        f"{sgml}:1: <DOC> without <DOCNO>",
        f"{sgml}:7: <DOCNO> not closed",
        f"{sgml}:10: </DOC> without a <DOC> before it",
        f"{sgml}:11: empty <DOCNO>",
        f"{sgml}:14: <DOC> not closed before the next <DOC> (line 16)",
        f"{sgml}:19: <DOC> not closed at the end of the file",
        f"{lines}:2: not JSON: Expecting value",
        f"{lines}:4: no id field ('docid' or 'doc_id' or 'id' or '_id')",
        f"{lines}:5: not a JSON object but list",
        f"{lines}:6: none of the text fields ('title', 'headings', 'text', 'contents', "
        "'body', 'segment') in the object",
        f"{lines}:7: the id field 'id' is true, not a docno",
    ]
    assert index_folders(cache) == []


def test_missing_files_named_together(tmp_path, cache):
    good = write(tmp_path / "ft.sgml", FT)
    with pytest.raises(DocumentError) as error:
        opened(str(tmp_path / "nope.sgml"), good, str(tmp_path))
    assert error.value.problems == [f"{tmp_path / 'nope.sgml'}: file not found",
                                    f"{tmp_path}: not a file"]


def test_a_damaged_gzip_file(tmp_path, cache):
    path = write(tmp_path / "cut.gz", gzip.compress(FT * 50)[:200])
    with pytest.raises(DocumentError) as error:
        opened(path)
    assert str(error.value).startswith(f"{path}: cannot be read: ")


def test_duplicate_docnos_name_both_places(tmp_path, cache):
    first = write(tmp_path / "a.sgml", FT)
    second = write(tmp_path / "b.jsonl", jsonl({"id": "x", "text": "1"},
                                               {"id": "FT911-5", "text": "2"},
                                               {"id": "x", "text": "3"}))
    with pytest.raises(DocumentError) as error:
        opened(first, second)
    assert error.value.problems == [
        f"{second}:2: docno 'FT911-5' given again (first at {first}:15)",
        f"{second}:3: docno 'x' given again (first at {second}:1)"]


# ---- the index ------------------------------------------------------------------------------

def test_the_index_is_reused(tmp_path, cache):
    path = write(tmp_path / "ft.sgml", FT)
    with opened(path) as docs:
        assert docs.built
    folders = index_folders(cache)
    meta = cache / "documents" / folders[0] / index.META
    stamp = meta.stat().st_mtime_ns
    with opened(path) as again, opened(path) as third:
        assert not again.built and not third.built
        assert again.get("FT911-5") == third.get("FT911-5")
    assert index_folders(cache) == folders and meta.stat().st_mtime_ns == stamp
    copy = write(tmp_path / "copy.sgml", FT)  # the same content elsewhere: the same index
    with opened(copy) as docs:
        assert not docs.built and docs.sha256 == again.sha256


def test_the_cache_argument_and_the_sha256(tmp_path):
    path = write(tmp_path / "ft.sgml", FT)
    other = write(tmp_path / "h.sgml", HTML)
    with open_documents(DocumentsSpec(paths=(path, other)), cache=tmp_path / "c") as docs:
        assert docs.built and (tmp_path / "c" / "documents").is_dir()
        digests = [hashing.sha256_file(path), hashing.sha256_file(other)]
        assert docs.files == ((path, digests[0]), (other, digests[1]))
        assert docs.sha256 == hashing.combined_sha256(digests)


def test_rebuilt_after_a_file_changes(tmp_path, cache):
    path = write(tmp_path / "ft.sgml", FT)
    with opened(path) as docs:
        before = docs.sha256
    write(tmp_path / "ft.sgml", FT.replace(b"Plain text.", b"Changed text."))
    with opened(path) as docs:
        assert docs.built and docs.sha256 != before
        assert docs.get("FT911-5").text == "Changed text."
    os.utime(path, ns=(0, 10**18))  # touched, same content: hashed again, index reused
    with opened(path) as docs:
        assert not docs.built


def test_an_old_unchanged_file_is_not_read_again(tmp_path, cache, monkeypatch):
    path = write(tmp_path / "ft.sgml", FT)
    os.utime(path, ns=(10**18, 10**18 - hashing.RACY_NS * 5))  # modified long ago
    with opened(path):
        pass
    with monkeypatch.context() as patched:
        patched.setattr(hashing, "sha256_file", lambda path: pytest.fail("read again"))
        with opened(path) as docs:
            assert not docs.built
    with open(path, "ab") as fh:  # same mtime, another size: read again, rebuilt
        fh.write(b"<DOC><DOCNO>NEW</DOCNO>new</DOC>\n")
    os.utime(path, ns=(10**18, 10**18 - hashing.RACY_NS * 5))
    with opened(path) as docs:
        assert docs.built and docs.get("NEW").text == "new"


def test_a_stamp_written_just_after_a_change_is_not_trusted(tmp_path, cache, monkeypatch):
    path = write(tmp_path / "ft.sgml", FT)
    with opened(path):
        pass
    read = []
    monkeypatch.setattr(hashing, "sha256_file", lambda p: read.append(p) or "0" * 64)
    with opened(path):  # mtime within RACY_NS of the stamp: hashed again
        pass
    assert read == [path]


def test_a_failed_build_leaves_no_index(tmp_path, cache, monkeypatch):
    path = write(tmp_path / "ft.sgml", FT)
    added = []

    def failing(self, doc, file_no):
        added.append(doc.docno)
        if len(added) == 2:
            raise KeyboardInterrupt
        self.texts.write(doc.text)

    with monkeypatch.context() as patched:
        patched.setattr(index.Records, "add", failing)
        with pytest.raises(KeyboardInterrupt):
            opened(path)
    assert added == [b"FT911-3", b"FT911-5"]
    leftovers = list((cache / "documents").iterdir())
    assert [p.name for p in leftovers] == []  # no index, no temporary folder, no stamp
    with opened(path) as docs:
        assert docs.built and docs.get("FT911-5").text == "Plain text."


def test_docnos_sharing_a_hash_are_told_apart(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(index, "docno_hash", lambda docno: 42)
    path = write(tmp_path / "ft.sgml", FT + HTML)
    with opened(path) as docs:
        assert len(docs) == 4
        assert [d.docno for d in docs.get_many(["LAT-1", "FT911-3", "WEB-1", "FT911-5"])] == \
            ["LAT-1", "FT911-3", "WEB-1", "FT911-5"]
        assert "FT911-4" not in docs
    with pytest.raises(DocumentError) as error:
        opened(write(tmp_path / "dup.sgml", FT + FT.replace(b"FT911-3", b"FT911-9")))
    assert error.value.problems == [
        f"{tmp_path / 'dup.sgml'}:33: docno 'FT911-5' given again (first at "
        f"{tmp_path / 'dup.sgml'}:15)"]


def test_an_index_folder_replaced_by_another_build(tmp_path, cache):
    path = write(tmp_path / "ft.sgml", FT)
    with opened(path) as docs:
        folder = docs.source.folder
        with index.replacing_folder(folder) as work:  # a concurrent build of the same index
            index.build_index(work, hashing.hash_files([path], str(cache / "s")),
                              DocumentsSpec(paths=(path,)))
        assert docs.get("FT911-3").docno == "FT911-3"  # the open one reads its own mapping
    with opened(path) as docs:
        assert not docs.built and len(docs) == 2


# ---- ir_datasets ----------------------------------------------------------------------------

IRDS_SCRIPT = """
import sys
from irbench.documents import DocumentsSpec, DocumentError, open_documents
try:
    with open_documents(DocumentsSpec(irds=sys.argv[1])) as docs:
        print(len(docs), "d1" in docs, "zz" in docs)
        for doc in docs.get_many(["d2", "d1"]):
            print(repr(doc))
        print(docs.sha256)
        docs.get_many(["zz"])
except DocumentError as error:
    print("ERROR", error)
    sys.exit(2)
"""


def irds_run(tmp_path: Path, dataset: str, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), IR_DATASETS_HOME=str(home),
               IRBENCH_CACHE_DIR=str(tmp_path / "cache"), HTTP_PROXY="http://127.0.0.1:9",
               HTTPS_PROXY="http://127.0.0.1:9", IR_DATASETS_DL_TRIES="1")
    return subprocess.run([sys.executable, "-c", IRDS_SCRIPT, dataset], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_an_ir_datasets_collection_offline(tmp_path):
    pytest.importorskip("ir_datasets")
    home = tmp_path / "irds"
    (home / "antique").mkdir(parents=True)
    collection = home / "antique" / "collection.tsv"
    collection.write_text("d1\tfirst answer\nd2\tsecond answer é\n")
    done = irds_run(tmp_path, "irds:antique", home)
    assert done.returncode == 2, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == ["2 True False", "Document(docno='d2', text='second answer é', title='')",
                         "Document(docno='d1', text='first answer', title='')",
                         hashing.combined_sha256([hashing.sha256_file(str(collection))])]
    assert lines[4] == "ERROR docno 'zz' not in the documents of irds:antique"


def test_ir_datasets_documents_not_downloaded(tmp_path):
    pytest.importorskip("ir_datasets")
    done = irds_run(tmp_path, "antique", tmp_path / "empty")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stdout.startswith("ERROR 'irds:antique': the dataset's documents are not "
                                  f"downloaded ({tmp_path / 'empty' / 'antique' / 'collection.tsv'}"
                                  " absent); irbench does not download")
    unknown = irds_run(tmp_path, "no/such/set", tmp_path / "empty")
    assert unknown.stdout == "ERROR 'irds:no/such/set': ir_datasets knows no dataset " \
                             "'no/such/set'\n"
