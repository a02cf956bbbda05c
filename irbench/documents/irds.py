"""Documents of an ir_datasets dataset (``irds:<dataset-id>``), looked up in ir_datasets' own
docs store (``dataset.docs_store()``), which keeps its index beside the downloaded files.

ir_datasets is an optional extra (``pip install 'irbench[irds]'``), imported only when such a
collection is opened. irbench never lets it download: when a file ir_datasets would download
for the documents is not on disk (under ``$IR_DATASETS_HOME``), opening fails with a message
naming it. The collection's sha256 is taken over those files (see
:func:`~.hashing.combined_sha256`); a dataset whose documents come from no file irbench can
find gets the sha256 of its name.

A document's text is ir_datasets' ``default_text()`` (for most datasets, the title and the
body), else its string fields other than the id joined by a blank line; its title is its
``title`` field, if it has one.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from typing import Any

from .hashing import FileHash, combined_sha256, hash_files, save_stamps
from .spec import IRDS_PREFIX, Document, DocumentError

DATASET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-/]*")
DOWNLOADS = ("Download", "Cache")  # ir_datasets' classes of files it fetches or makes
SEARCH_DEPTH = 4


def load_dataset(dataset_id: str) -> Any:
    """ir_datasets' dataset ``dataset_id``; DocumentError if the extra is not installed, the
    id unknown or its dataset without documents."""
    ref = f"{IRDS_PREFIX}{dataset_id}"
    if not DATASET_ID.fullmatch(dataset_id) or ".." in dataset_id.split("/"):
        raise DocumentError([f"'{ref}': not an ir_datasets id (e.g. irds:msmarco-passage)"])
    try:
        import ir_datasets
    except ImportError:
        raise DocumentError([f"'{ref}': reading ir_datasets needs the irds extra: pip "
                             "install 'irbench[irds]'"]) from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise DocumentError([f"'{ref}': ir_datasets knows no dataset '{dataset_id}'"]) from None
    if not dataset.has_docs():
        raise DocumentError([f"'{ref}': the dataset has no documents"])
    return dataset


def download_paths(handler: Any) -> list[str]:
    """The files ir_datasets reads for ``handler``: each Download object reachable from it,
    and each Cache (a file it makes from others) already made (``path(force=False)`` never
    downloads)."""
    paths, seen, todo = set(), set(), [(handler, 0)]
    while todo:
        obj, level = todo.pop()
        if id(obj) in seen or level > SEARCH_DEPTH:
            continue
        seen.add(id(obj))
        if type(obj).__name__ in DOWNLOADS and hasattr(obj, "path"):
            try:
                where = obj.path(force=False)
            except TypeError:
                where = None
            # a Cache not made yet is made from what it holds (descend); a Download is fetched
            if where and (os.path.exists(where) or type(obj).__name__ == "Download"):
                paths.add(str(where))
                continue
        for child in (vars(obj).values() if hasattr(obj, "__dict__") else ()):
            for item in (child if isinstance(child, (list, tuple)) else [child]):
                if hasattr(item, "__dict__") and not isinstance(item, type):
                    todo.append((item, level + 1))
    return sorted(paths)


def as_document(doc: Any) -> Document:
    """An ir_datasets document (a named tuple) as a Document."""
    if hasattr(doc, "default_text"):
        text = str(doc.default_text())
    else:
        text = "\n\n".join(value for name, value in zip(doc._fields, doc)
                           if name != "doc_id" and isinstance(value, str) and value)
    title = getattr(doc, "title", "")
    return Document(str(doc.doc_id), text, title if isinstance(title, str) else "")


class IrdsSource:
    """The documents of an ir_datasets dataset, looked up in its docs store."""

    def __init__(self, dataset_id: str, stamps: str):
        self.ref = f"{IRDS_PREFIX}{dataset_id}"
        handler = load_dataset(dataset_id).docs_handler()
        paths = download_paths(handler)
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            raise DocumentError([f"'{self.ref}': the dataset's documents are not downloaded "
                                 f"({', '.join(missing)} absent); irbench does not download: "
                                 f"fetch them with ir_datasets (ir_datasets.load("
                                 f"'{dataset_id}').docs_store()) or place them there"])
        files = hash_files([p for p in paths if os.path.isfile(p)], stamps)
        self.sha256 = (combined_sha256([f.sha256 for f in files]) if files else
                       hashlib.sha256(self.ref.encode()).hexdigest())
        self.files: list[FileHash] = files
        try:
            self.store = handler.docs_store()
            self.count = self.count_documents(handler)
        except OSError as exc:
            raise DocumentError([f"'{self.ref}': ir_datasets cannot read the documents: "
                                 f"{exc}"]) from None
        save_stamps(files, stamps)

    def count_documents(self, handler: Any) -> int:
        count = getattr(self.store, "count", None)
        if callable(count):
            return int(count())
        return int(handler.docs_count() or 0)

    def find(self, docnos: Sequence[str], limit: int | None = None) -> list[Document | None]:
        """The document of each docno, None for one not in the dataset; with a ``limit``,
        its title and text cut to that many characters."""
        got = self.store.get_many(list(dict.fromkeys(docnos)))
        found = [as_document(got[d]) if d in got else None for d in docnos]
        if limit is None:
            return found
        return [Document(doc.docno, doc.text[:limit], doc.title[:limit]) if doc else None
                for doc in found]

    def contains(self, docno: str) -> bool:
        return self.find([docno])[0] is not None

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        clear = getattr(self.store, "clear_cache", None)
        if callable(clear):
            clear()
