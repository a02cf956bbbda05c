"""Section 8: what the numbers come from (config, options, version, seed, every input's
sha256: the topics, the run tables, the qrels sets and the runs)."""

from __future__ import annotations

import hashlib
import json
import os

from .. import __version__
from .contract import Input, Provenance


def provenance(config, store, seed: int) -> Provenance:
    with open(config.path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    last = store.last_runner()
    options, last_run = ("", "never") if last is None else (
        last[0], f"{last[1]:%Y-%m-%d %H:%M:%S} to {last[2]:%H:%M:%S} ({last[3]})" if last[2]
        else f"{last[1]:%Y-%m-%d %H:%M:%S} ({last[3]})")
    inputs = [Input(*row) for row in store.inputs()]
    inputs[:0] = [Input("run table", os.path.basename(path), path, table_hash(store, path))
                  for path in config.tables]
    if config.topics:
        inputs.insert(0, Input("topics", "topics", config.topics,
                               store.file_hash(config.topics)))
    pretty = json.dumps(json.loads(options), indent=1, sort_keys=True) if options else ""
    return Provenance(config=config.path, config_sha256=config.sha256, config_text=text,
                      options=pretty, version=__version__, last_run=last_run, seed=seed,
                      inputs=tuple(inputs))


def table_hash(store, path: str) -> str:
    """The sha256 of a run table as ``irbench run`` last read it (the systems' groups, types
    and pooled flags in the store come from it); of the file as it is now for a store that
    did not record it; '' when neither can be had."""
    recorded = store.file_hash(path)
    if recorded:
        return recorded
    if not os.path.isfile(path):  # gone, or a pipe that would never end
        return ""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(2**20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()
