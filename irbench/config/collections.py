"""Several collections in one config (``collections:``): each collection's view of the config.

A lab's config may name several collections instead of one::

    collections:
      dl19: {topics: topics/dl19.tsv, qrels: qrels/dl19.txt}
      dl20: {topics: topics/dl20.tsv, qrels: qrels/dl20.txt}
    systems:
      - {name: bm25, run: "runs/{collection}/bm25.txt"}
      - {name: dense, runs: {dl19: runs/dense-19.txt, dl20: runs/dense-20.txt}}

Each collection takes what ``collection:`` takes. A system gives its run per collection:
``{collection}`` in ``run``, ``glob``, ``answers``, a run table's file or its ``run``
template stands for the collection's name; ``runs: {NAME: FILE}`` names a file per collection
(a system whose ``runs`` has no entry for a collection is not evaluated on it).

The rest of irbench sees one collection at a time: :func:`view_data` is the config's data as a
one-collection config of collection NAME (``collection:`` that collection's section, each
system's run for it), built by the one builder, its problems placed back where the user wrote
them (:func:`placed`); the view's :attr:`~irbench.config.types.Config.scope` names its part of
the store (a schema of the one store file: every score keyed by collection)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .types import NAME_RE

PLACEHOLDER = "{collection}"
# a system's fields that may hold {collection} (paths and run templates)
PATH_FIELDS = ("run", "glob", "answers", "table")
RESERVED = ("main", "temp", "information_schema", "pg_catalog")  # the store's own schemas

Where = tuple
Rename = Callable[[Where], Where]


def collection_names(data: dict, problem: Callable[[Where, str], None]) -> list[str] | None:
    """The names ``collections:`` gives, in order (None: the config has ``collection:``, one
    collection); problems reported (a name that is no name, a reserved one, both sections,
    none given)."""
    if "collections" not in data:
        return None
    if "collection" in data:
        problem(("collection",), "give 'collection' (one) or 'collections' (several), not both")
    value = data["collections"]
    if not isinstance(value, dict) or not value:
        problem(("collections",), "a mapping of collection name: {topics, qrels, ...}")
        return []
    names = []
    for name in value:
        if not (isinstance(name, str) and NAME_RE.fullmatch(name)):
            problem(("collections", name), "a collection name is letters, digits, '.', '_' "
                                           "and '-', not starting with '.'")
        elif name.lower() in RESERVED:
            problem(("collections", name), f"'{name}' is a name the store keeps for itself "
                                           f"({', '.join(RESERVED)}): choose another")
        else:
            names.append(name)
    return names


def view_data(data: dict, name: str) -> tuple[dict, Rename]:
    """The config's ``data`` as a one-collection config of collection ``name``, and the
    function that places a problem of it where the user wrote it."""
    view = {k: v for k, v in data.items() if k != "collections"}
    view["collection"] = data["collections"][name]
    moved: dict[Where, Where] = {}  # a system's runs.NAME, written as its run in the view
    systems = data.get("systems")
    if isinstance(systems, list):
        view["systems"] = [_entry(entry, name, ("systems", i), moved)
                           for i, entry in enumerate(systems)]
        view["systems"] = [e for e in view["systems"] if e is not None]
    elif isinstance(systems, dict) and "table" not in systems:
        view["systems"] = {k: (v.replace(PLACEHOLDER, name) if isinstance(v, str) else
                               _entry(v, name, ("systems", k), moved))
                           for k, v in systems.items()}
        view["systems"] = {k: v for k, v in view["systems"].items() if v is not None}
    elif isinstance(systems, dict):
        view["systems"] = _entry(systems, name, ("systems",), moved)

    def rename(where: Where) -> Where:
        if where[:1] == ("collection",):
            return ("collections", name) + where[1:]
        for at, to in moved.items():
            if where[:len(at)] == at:
                return to + where[len(at):]
        return where
    return view, rename


def _entry(entry: Any, name: str, where: Where, moved: dict[Where, Where]) -> Any:
    """A system entry as collection ``name`` sees it (None: not evaluated on it)."""
    if not isinstance(entry, dict):
        return entry
    out = {k: (v.replace(PLACEHOLDER, name) if k in PATH_FIELDS and isinstance(v, str) else v)
           for k, v in entry.items() if k != "runs"}
    if "runs" in entry:
        runs = entry["runs"]
        if not isinstance(runs, dict) or name not in runs:
            return None if isinstance(runs, dict) else {**out, "runs": runs}
        out["run"] = runs[name]
        moved[where + ("run",)] = where + ("runs", name)
    return out
