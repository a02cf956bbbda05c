"""The index of a collection of files: built once, kept in the cache folder, and read without
reading the collection again.

An index lives in ``<cache>/documents/<key>/``, where the key is a hash of every file's sha256,
the format options and :data:`INDEX_VERSION`; the same files read the same way find the same
index, wherever they are. It holds:

- ``texts.bin``: every document's docno, title and text (UTF-8) one after the other, in file
  order;
- ``hashes.npy``: the 64-bit hashes of the docnos (:func:`docno_hash`), sorted;
- ``offsets.npy`` and ``lengths.npy``: for each hash, where its document starts in
  ``texts.bin`` and the byte lengths of its docno, title and text;
- ``meta.json``: the files, their sha256, the options and the number of documents.

A lookup hashes the docnos asked, finds them by binary search in the (memory-mapped) hashes and
reads only their records; the docno stored in the record is compared with the one asked, so two
docnos with the same hash are told apart. The index is written to a temporary folder beside its
place, flushed to disk, and renamed into place only once complete
(:func:`irbench.files.replacing_folder`): a build that fails or is interrupted leaves no
index, and the next open builds it again.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections.abc import Sequence

import numpy as np

from ..files import replacing_folder
from ..ids import id_text
from .formats import ParsedDocument, read_documents
from .hashing import FileHash
from .spec import Document, DocumentsSpec, Problems

INDEX_VERSION = 2  # 2: docnos not UTF-8 keyed by irbench.ids.id_text (1: as U+FFFD)
TEXTS = "texts.bin"
META = "meta.json"
HASHES = "hashes.npy"
OFFSETS = "offsets.npy"
LENGTHS = "lengths.npy"
PREFETCH_AT = 32  # lookups asked together from which their records are prefetched
UTF8_MOST = 4  # bytes of a character in UTF-8, at most


def decoded(data: bytes) -> str:
    """Stored UTF-8 as text (a character the reading cut short becomes U+FFFD)."""
    return data.decode("utf-8", "replace")


def docno_hash(docno: bytes) -> int:
    """A docno's 64-bit hash (blake2b), the key it is found by."""
    return int.from_bytes(hashlib.blake2b(docno, digest_size=8).digest(), "little")


def index_key(files: Sequence[FileHash], spec: DocumentsSpec) -> str:
    """The name of the index of ``files`` read as ``spec`` says."""
    described = {"version": INDEX_VERSION, "files": [f.sha256 for f in files],
                 "format": spec.format, "id_field": spec.id_field,
                 "text_fields": list(spec.text_fields) if spec.text_fields is not None else None}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:32]


class Records:
    """The records of an index being built: written to ``texts.bin`` as they come, their
    hashes, places and lengths kept in compact arrays (about 40 bytes a document)."""

    def __init__(self, folder: str):
        self.texts = open(os.path.join(folder, TEXTS), "wb", buffering=1 << 20)
        self.hashes = array("Q")
        self.offsets = array("Q")
        self.lengths = array("I")
        self.files = array("I")
        self.lines = array("Q")
        self.size = 0

    def add(self, doc: ParsedDocument, file_no: int) -> None:
        self.hashes.append(docno_hash(doc.docno))
        self.offsets.append(self.size)
        self.lengths.extend((len(doc.docno), len(doc.title), len(doc.text)))
        self.files.append(file_no)
        self.lines.append(doc.line)
        record = doc.docno + doc.title + doc.text
        self.texts.write(record)
        self.size += len(record)

    def close(self) -> None:
        self.texts.close()


def build_index(folder: str, files: Sequence[FileHash], spec: DocumentsSpec) -> None:
    """Write the index of ``files`` into ``folder`` (new and empty); DocumentError naming
    every problem of the files, duplicate docnos among them."""
    problems = Problems()
    records = Records(folder)
    try:
        for file_no, found in enumerate(files):
            for doc in read_documents(found.path, spec, problems):
                records.add(doc, file_no)
    finally:
        records.close()
    hashes = np.frombuffer(records.hashes, dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    sorted_hashes = hashes[order]
    if len(hashes):
        report_duplicates(folder, records, order, sorted_hashes, [f.path for f in files],
                          problems)
    problems.check()
    np.save(os.path.join(folder, HASHES), sorted_hashes)
    np.save(os.path.join(folder, OFFSETS), np.frombuffer(records.offsets, np.uint64)[order])
    lengths = np.frombuffer(records.lengths, np.uint32).reshape(-1, 3)
    np.save(os.path.join(folder, LENGTHS), lengths[order])
    meta = {"version": INDEX_VERSION, "documents": len(hashes), "bytes": records.size,
            "files": [{"path": f.path, "sha256": f.sha256, "size": f.size} for f in files],
            "format": spec.format, "id_field": spec.id_field,
            "text_fields": list(spec.text_fields) if spec.text_fields is not None else None}
    with open(os.path.join(folder, META), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
    for name in (TEXTS, HASHES, OFFSETS, LENGTHS, META):  # on disk before the rename
        sync(os.path.join(folder, name))


def sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def report_duplicates(folder: str, records: Records, order: np.ndarray,
                      sorted_hashes: np.ndarray, paths: Sequence[str],
                      problems: Problems) -> None:
    """A problem for each docno given again, naming where it was given first. Only records
    whose hash another record shares are read back."""
    same = np.flatnonzero(sorted_hashes[1:] == sorted_hashes[:-1])
    if not len(same):
        return
    shared = np.unique(np.concatenate([same, same + 1]))
    first: dict[bytes, int] = {}
    with open(os.path.join(folder, TEXTS), "rb") as fh:
        for record in sorted(order[shared].tolist()):  # in file order
            fh.seek(records.offsets[record])
            docno = fh.read(records.lengths[3 * record])
            if docno not in first:
                first[docno] = record
                continue
            was = first[docno]
            problems.add(paths[records.files[record]], records.lines[record],
                         f"docno {docno.decode('utf-8', 'replace')!r} given again (first at "
                         f"{paths[records.files[was]]}:{records.lines[was]})")


def load_array(folder: str, name: str) -> np.ndarray:
    """An index array, memory-mapped; a plain ndarray view of the map (np.memmap's own
    indexing costs microseconds a call, in Python)."""
    return np.load(os.path.join(folder, name), mmap_mode="r").view(np.ndarray)


class Index:
    """An index built by :func:`build_index`, open for lookups: its arrays are
    memory-mapped and its records read where they are (pread), so opening it reads next to
    nothing and memory holds only what is asked for (a memory-mapped ``texts.bin`` would
    count some 64 KiB of the page cache into the process's RSS per record read)."""

    def __init__(self, folder: str):
        self.folder = folder
        with open(os.path.join(folder, META), encoding="utf-8") as fh:
            self.meta = json.load(fh)
        self.hashes = load_array(folder, HASHES)
        self.offsets = load_array(folder, OFFSETS)
        self.lengths = load_array(folder, LENGTHS)
        self.texts = open(os.path.join(folder, TEXTS), "rb", buffering=0)

    def __len__(self) -> int:
        return len(self.hashes)

    def locate(self, docnos: Sequence[str]) -> np.ndarray:
        """The record number of each docno (in the sorted arrays), -1 for one not there."""
        keys = [id_text(docno).encode() for docno in docnos]  # as the readers key them
        if not keys:
            return np.zeros(0, dtype=np.int64)
        wanted = np.fromiter((docno_hash(key) for key in keys), dtype=np.uint64,
                             count=len(keys))
        places = np.minimum(np.searchsorted(self.hashes, wanted), len(self) - 1)
        hit = self.hashes[places] == wanted
        found = np.where(hit, places, -1).astype(np.int64)
        starts = self.offsets[places].tolist()
        sizes = self.lengths[places, 0].tolist()
        if len(keys) >= PREFETCH_AT:
            self.prefetch(starts, self.lengths[places].sum(axis=1).tolist())
        for i in np.flatnonzero(hit).tolist():
            if self.read_at(starts[i], sizes[i]) != keys[i]:
                found[i] = self.scan(keys[i], int(places[i]))
        return found

    def read_at(self, start: int, size: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self.texts.fileno(), size, start)
        self.texts.seek(start)  # Windows
        return self.texts.read(size)

    def prefetch(self, starts: list[int], sizes: list[int]) -> None:
        """Ask the kernel to read these records in, all at once (posix_fadvise WILLNEED),
        before they are read one by one: from disk, 10,000 records come in 4 times faster."""
        if not hasattr(os, "posix_fadvise"):  # Windows, macOS
            return
        fd = self.texts.fileno()
        for start, size in zip(starts, sizes):
            os.posix_fadvise(fd, start, size, os.POSIX_FADV_WILLNEED)

    def scan(self, key: bytes, start: int) -> int:
        """The record of docno ``key`` among those from ``start`` on that share its hash (two
        docnos with one hash), -1 if none."""
        value = self.hashes[start]
        at = start
        while at < len(self) and self.hashes[at] == value:
            offset, size = int(self.offsets[at]), int(self.lengths[at, 0])
            if self.read_at(offset, size) == key:
                return at
            at += 1
        return -1

    def read(self, records: np.ndarray, limit: int | None = None) -> list[Document]:
        """The documents of ``records`` (numbers :meth:`locate` gave), in that order; with a
        ``limit``, their title and text cut to that many characters, of which only the bytes
        they can take are read (:data:`UTF8_MOST` a character)."""
        starts = self.offsets[records].tolist()
        sizes = self.lengths[records].tolist()
        found = []
        for start, (docno, title, text) in zip(starts, sizes):
            if limit is None:
                record = self.read_at(start, docno + title + text)
                found.append(Document(decoded(record[:docno]), decoded(record[docno + title:]),
                                      decoded(record[docno:docno + title])))
                continue
            most = UTF8_MOST * limit
            if title <= most:
                record = self.read_at(start, docno + title + min(text, most))
                head, body = record[:docno + title], record[docno + title:]
            else:
                head = self.read_at(start, docno + most)
                body = self.read_at(start + docno + title, min(text, most))
            found.append(Document(decoded(head[:docno]), decoded(body)[:limit],
                                  decoded(head[docno:])[:limit]))
        return found

    def find(self, docnos: Sequence[str], limit: int | None = None) -> list[Document | None]:
        """The document of each docno, None for one not in the index (``limit``: see
        :meth:`read`)."""
        records = self.locate(docnos)
        present = records >= 0
        documents = iter(self.read(records[present], limit))
        return [next(documents) if hit else None for hit in present.tolist()]

    def contains(self, docno: str) -> bool:
        return bool(self.locate([docno])[0] >= 0)

    def close(self) -> None:
        self.texts.close()


def open_index(files: Sequence[FileHash], spec: DocumentsSpec,
               folder: str) -> tuple[Index, bool]:
    """The index of ``files`` in ``folder`` (``<cache>/documents``), built first if it is not
    there; and whether it was built now."""
    target = os.path.join(folder, index_key(files, spec))
    if os.path.isdir(target):
        try:
            return Index(target), False
        except FileNotFoundError:  # replaced by a concurrent build as we opened it: build
            pass
    os.makedirs(folder, exist_ok=True)
    with replacing_folder(target) as work:
        build_index(work, files, spec)
    return Index(target), True
