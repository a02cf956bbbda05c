"""Section 8: what the numbers come from (config, options, version, seed, every input's
sha256)."""

from __future__ import annotations

import json

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
    if config.topics:
        inputs.insert(0, Input("topics", "topics", config.topics,
                               store.file_hash(config.topics)))
    pretty = json.dumps(json.loads(options), indent=1, sort_keys=True) if options else ""
    return Provenance(config=config.path, config_sha256=config.sha256, config_text=text,
                      options=pretty, version=__version__, last_run=last_run, seed=seed,
                      inputs=tuple(inputs))
