"""``collection.documents``: where document text comes from (for judges and assessors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..documents.spec import FORMATS, IRDS_PREFIX, DocumentsSpec

KEYS = ("path", "format", "id_field", "text_fields")


def build_documents(value: Any, resolve: Callable[[tuple, Any], str | None],
                    problem: Callable[[tuple, str], None]) -> DocumentsSpec | None:
    """A :class:`DocumentsSpec` from the config's value: a file, a list of files, ``irds:ID``,
    or a mapping {path (one or a list), format (auto, trec, jsonl), id_field, text_fields};
    None with the problems reported. Files are resolved as every input file is (inside the
    campaign folder unless written absolute)."""
    where: tuple = ("collection", "documents")
    if isinstance(value, str) and value.startswith(IRDS_PREFIX):
        return DocumentsSpec(irds=value)
    options: dict[str, Any] = {}
    if isinstance(value, dict):
        for key in value:
            if key not in KEYS:
                problem(where + (key,), f"unknown key ({', '.join(KEYS)})")
        fmt = value.get("format", "auto")
        if fmt not in FORMATS:
            problem(where + ("format",), f"one of {', '.join(FORMATS)}")
            return None
        id_field, fields = value.get("id_field"), value.get("text_fields")
        if id_field is not None and not isinstance(id_field, str):
            problem(where + ("id_field",), "the name of a JSON field")
            return None
        if fields is not None and not (isinstance(fields, list) and fields and all(
                isinstance(f, str) for f in fields)):
            problem(where + ("text_fields",), "a list of JSON field names")
            return None
        options = {"format": fmt, "id_field": id_field,
                   "text_fields": tuple(fields) if fields else None}
        if "path" not in value:
            problem(where, "'path' is missing")
            return None
        value, where = value["path"], where + ("path",)
        if isinstance(value, str) and value.startswith(IRDS_PREFIX):
            return DocumentsSpec(irds=value)
    items = value if isinstance(value, list) else [value]
    if not items:
        problem(where, "a file, a list of files or irds:DATASET")
        return None
    if any(isinstance(item, str) and "://" in item for item in items):
        problem(where, "documents are read from local files (copy them here first)")
        return None
    paths = [resolve(where + ((i,) if isinstance(value, list) else ()), item)
             for i, item in enumerate(items)]
    if any(p is None for p in paths):
        return None
    return DocumentsSpec(paths=tuple(p for p in paths if p is not None), **options)
