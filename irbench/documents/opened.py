"""An open collection (:class:`Documents`) and :func:`open_documents`, which opens the one a
:class:`~irbench.documents.spec.DocumentsSpec` names: its files hashed and indexed
(:mod:`.hashing`, :mod:`.index`), or an ir_datasets docs store (:mod:`.irds`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from types import TracebackType
from typing import cast

from ..cache import cache_folder
from .hashing import FileHash, combined_sha256, hash_files, save_stamps
from .index import Index, open_index
from .irds import IrdsSource
from .spec import IRDS_PREFIX, Document, DocumentError, DocumentsSpec

SHOWN_FILES = 3


class Documents:
    """An open collection: documents by docno (:meth:`get`, :meth:`get_many`), ``docno in
    docs``, ``len(docs)``. ``sha256`` identifies the collection's content (recorded for
    provenance), ``files`` each file with its sha256, ``name`` how messages call it, and
    ``built`` whether opening it built its index."""

    def __init__(self, source: Index | IrdsSource, *, name: str, sha256: str,
                 files: tuple[tuple[str, str], ...], built: bool):
        self.source = source
        self.name = name
        self.sha256 = sha256
        self.files = files
        self.built = built

    def get(self, docno: str, limit: int | None = None) -> Document:
        """The document ``docno``; DocumentError if the collection has none. ``limit``: see
        :meth:`get_many`."""
        return self.get_many([docno], limit)[0]

    def get_many(self, docnos: Iterable[str], limit: int | None = None) -> list[Document]:
        """The documents of ``docnos`` in the order asked, each read once however often it
        is asked; DocumentError naming every docno the collection does not have. With a
        ``limit``, each title and text is cut to that many characters, and of a collection's
        files only what those take is read (a prompt that sends 8,000 characters of a 70 MB
        document reads some 32 KB of it)."""
        asked = list(docnos)
        distinct = list(dict.fromkeys(asked))
        found = dict(zip(distinct, self.source.find(distinct, limit)))
        missing = [docno for docno in distinct if found[docno] is None]
        if missing:
            raise DocumentError([f"docno {docno!r} not in the documents of {self.name}"
                                 for docno in missing])
        return [cast(Document, found[docno]) for docno in asked]

    def missing(self, docnos: Iterable[str]) -> list[str]:
        """Those of ``docnos`` the collection does not have (each once, in the order asked):
        one batched lookup."""
        distinct = list(dict.fromkeys(docnos))
        if isinstance(self.source, Index):
            present = (self.source.locate(distinct) >= 0).tolist() if distinct else []
        else:
            present = [doc is not None for doc in self.source.find(distinct, 1)]
        return [docno for docno, hit in zip(distinct, present) if not hit]

    def __contains__(self, docno: object) -> bool:
        return isinstance(docno, str) and self.source.contains(docno)

    def __len__(self) -> int:
        return len(self.source)

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> Documents:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def open_documents(spec: DocumentsSpec, cache: str | os.PathLike | None = None) -> Documents:
    """The collection ``spec`` names, open for lookups. Files are indexed into ``cache``
    (default: irbench's cache folder) ``/documents`` the first time, or when one changed;
    DocumentError naming every problem of the files (each with FILE:LINE)."""
    folder = os.path.join(os.fspath(cache) if cache is not None else cache_folder(),
                          "documents")
    stamps = os.path.join(folder, "stamps")
    if spec.irds:
        source = IrdsSource(spec.irds_id, stamps)
        return Documents(source, name=f"{IRDS_PREFIX}{spec.irds_id}", sha256=source.sha256,
                         files=tuple((f.path, f.sha256) for f in source.files), built=False)
    paths = [os.path.abspath(path) for path in spec.paths]
    files = checked_hashes(paths, stamps)
    try:
        index, built = open_index(files, spec, folder)
    except OSError as exc:
        raise DocumentError([f"{folder}: cannot write the documents' index there: "
                             f"{exc.strerror or exc}"]) from None
    save_stamps(files, stamps)
    return Documents(index, name=collection_name(paths),
                     sha256=combined_sha256([f.sha256 for f in files]),
                     files=tuple((f.path, f.sha256) for f in files), built=built)


def checked_hashes(paths: list[str], stamps: str) -> list[FileHash]:
    """Each file's sha256; DocumentError naming every file that is missing or unreadable."""
    problems = [f"{path}: file not found" if not os.path.exists(path) else
                f"{path}: not a file" for path in paths if not os.path.isfile(path)]
    if problems:
        raise DocumentError(problems)
    try:
        return hash_files(paths, stamps)
    except OSError as exc:
        raise DocumentError([f"{exc.filename}: cannot be read: {exc.strerror}"]) from None


def collection_name(paths: list[str]) -> str:
    shown = ", ".join(paths[:SHOWN_FILES])
    hidden = len(paths) - SHOWN_FILES
    return shown + (f" and {hidden} more file{'s' if hidden > 1 else ''}" if hidden > 0 else "")
