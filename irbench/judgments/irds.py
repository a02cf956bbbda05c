"""Topics and judgments from ir_datasets: ``irds:<dataset-id>`` where a config names a topics
or qrels file (and as ``irbench eval``'s qrels).

The dataset's queries and qrels are written once as plain files (``query_id<TAB>text`` topics,
TREC qrels) in irbench's cache folder (``$IRBENCH_CACHE_DIR/irds/<dataset-id>/``, see
:func:`irbench.cache.cache_folder`), written whole then renamed into place, so everything
downstream (the sha256 of every input in the store, the readers, the runner's caching, the
checks) treats them as the files they are. ir_datasets is an optional extra (``pip install
'irbench[irds]'``), imported only here; irbench never lets it download: when the files
ir_datasets would read are not on disk (it keeps them under ``$IR_DATASETS_HOME``), the
message names them and their source instead.
"""

from __future__ import annotations

import os
import re

from ..cache import cache_folder
from ..errors import FormatError

PREFIX = "irds:"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-/]*")


def is_irds(value) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def materialise(ref: str, what: str) -> str:
    """The path of a plain file holding the ``what`` (``topics`` or ``qrels``) of the
    ir_datasets dataset ``ref`` (``irds:<id>``); FormatError saying what is wrong."""
    dataset_id = ref[len(PREFIX):]
    if not _ID.fullmatch(dataset_id) or ".." in dataset_id.split("/"):
        raise FormatError([f"'{ref}': not an ir_datasets id (e.g. irds:antique/test)"])
    folder = os.path.join(cache_folder(), "irds", *dataset_id.split("/"))
    path = os.path.join(folder, "topics.tsv" if what == "topics" else "qrels.txt")
    if os.path.isfile(path):
        return path
    dataset = _load(ref, dataset_id)
    has, handler, rows = (("has_queries", "queries_handler", _topic_lines) if what == "topics"
                          else ("has_qrels", "qrels_handler", _qrels_lines))
    if not getattr(dataset, has)():
        kind = "queries" if what == "topics" else what
        raise FormatError([f"'{ref}': the dataset has no {kind}"])
    missing = _missing_files(getattr(dataset, handler)())
    if missing:
        raise FormatError([f"'{ref}': ir_datasets has not downloaded {', '.join(missing)}; "
                           "irbench does not download: fetch the files with ir_datasets "
                           f"(ir_datasets.load('{dataset_id}')) or place them there"])
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(rows(ref, dataset))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _load(ref: str, dataset_id: str):
    try:
        import ir_datasets
    except ImportError:
        raise FormatError([f"'{ref}': reading ir_datasets needs the irds extra: pip install "
                           "'irbench[irds]'"]) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise FormatError([f"'{ref}': ir_datasets knows no dataset '{dataset_id}'"]) from None


def _missing_files(handler, depth: int = 4) -> list[str]:
    """The files ``handler`` would have ir_datasets download: each Download or Cache object
    reachable from it whose path is not on disk (path(force=False) never downloads)."""
    missing, seen, todo = [], set(), [(handler, 0)]
    while todo:
        obj, level = todo.pop()
        if id(obj) in seen or level > depth:
            continue
        seen.add(id(obj))
        if type(obj).__name__ in ("Download", "Cache") and hasattr(obj, "path"):
            try:
                where = str(obj.path(force=False))
            except TypeError:
                where = None
            if where and not os.path.exists(where):
                missing.append(where)
                continue
        children = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
        for child in children:
            for item in (child if isinstance(child, (list, tuple)) else [child]):
                if hasattr(item, "__dict__") and not isinstance(item, type):
                    todo.append((item, level + 1))
    return sorted(set(missing))


def _clean(value, ref: str, what: str) -> str:
    text = str(value)
    if not text or any(c.isspace() for c in text):
        raise FormatError([f"'{ref}': a {what} with whitespace ({text!r}) cannot go in a TREC "
                           "file"])
    return text


def _topic_lines(ref: str, dataset):
    for query in dataset.queries_iter():
        fields = query._fields
        text_field = "text" if "text" in fields else "title" if "title" in fields else (
            fields[1] if len(fields) > 1 else None)
        text = " ".join(str(getattr(query, text_field, "")).split()) if text_field else ""
        yield f"{_clean(query.query_id, ref, 'query id')}\t{text}\n"


def _qrels_lines(ref: str, dataset):
    for q in dataset.qrels_iter():
        yield (f"{_clean(q.query_id, ref, 'query id')} {getattr(q, 'iteration', '0') or '0'} "
               f"{_clean(q.doc_id, ref, 'doc id')} {int(q.relevance)}\n")
