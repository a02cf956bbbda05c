"""Document text by docno, for LLM judges and assessors: a campaign's ``collection.documents``
names where it comes from (a :class:`DocumentsSpec`), :func:`open_documents` opens it, and
:class:`Documents` answers lookups.

```python
spec = DocumentsSpec(paths=("/data/ft.sgml.gz", "/data/extra.jsonl"))
with open_documents(spec) as docs:
    docs.get("FT911-3").text
    docs.get_many(["FT911-3", "FT911-5"])      # in the order asked
    docs.get_many(["FT911-3"], limit=8000)     # title and text cut to 8,000 characters
```

Files (TREC SGML or JSONL, plain or gzip; :mod:`.formats`) are indexed once into irbench's
cache folder (``<cache>/documents``, :func:`irbench.cache.cache_folder`), then looked up
without reading the collection (:mod:`.index`); an ir_datasets dataset is looked up in its own
docs store (:mod:`.irds`). Bad input, and docnos not in the collection, raise
:class:`DocumentError` (a :class:`~irbench.errors.FormatError`) naming every problem.

The package's names are imported when first asked for (PEP 562): a config names its
documents with :class:`DocumentsSpec` alone (``spec.py``), and opening them (``opened.py``:
the index, the formats, the files) is imported only by what opens them (15 ms of ``irbench
run``'s start-up otherwise).
"""

from __future__ import annotations

from typing import Any

from ..registry import exported

_EXPORTS = {"Documents": "opened", "open_documents": "opened", "checked_hashes": "opened",
            "collection_name": "opened", "Document": "spec", "DocumentError": "spec",
            "DocumentsSpec": "spec", "IRDS_PREFIX": "spec"}

__all__ = ["Document", "DocumentError", "Documents", "DocumentsSpec", "open_documents"]


def __getattr__(name: str) -> Any:
    return exported(__name__, _EXPORTS, name)
