"""The answers journal: every model answer is appended to ``STORE.answers.jsonl`` the moment
it arrives, then folded into the store in batches. A process killed between two folds loses
no answer it received (an appended line is in the operating system's hands), so a call is
never paid for twice; the next judging run folds the journal first. A line cut short by the
kill is the one answer that was not received whole: it is skipped."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import IO

from ..store import ModelAnswer

FIELDS = tuple(f.name for f in fields(ModelAnswer))


def journal_path(store_path: str) -> str:
    return f"{store_path}.answers.jsonl"


class Journal:
    """Appends answers (with the pool they were asked for) and folds them into the store
    through ``save(answers, pool)``."""

    def __init__(self, path: str, save: Callable[[Sequence[ModelAnswer], str], None]):
        self.path, self.save = path, save
        self.pending: list[tuple[ModelAnswer, str]] = []
        self.handle: IO[str] | None = None

    def fold_leftovers(self) -> int:
        """Fold what a killed run left in the journal; returns how many answers."""
        if not os.path.exists(self.path):
            return 0
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    data = json.loads(line)
                    pool = data.pop("pool")
                    self.pending.append((ModelAnswer(**data), pool))
                except (ValueError, TypeError, KeyError):
                    continue  # the last line of a killed write
        found = len(self.pending)
        self.fold()
        return found

    def append(self, answer: ModelAnswer, pool: str) -> None:
        if self.handle is None:
            self.handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        record = {name: getattr(answer, name) for name in FIELDS}  # asdict copies deeply
        record["pool"] = pool
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        self.pending.append((answer, pool))

    def fold(self) -> None:
        """Save what is pending (one transaction per pool), then empty the journal."""
        pools = sorted({pool for _, pool in self.pending})
        for pool in pools:
            self.save([a for a, p in self.pending if p == pool], pool)
        self.pending = []
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        if os.path.exists(self.path):
            os.remove(self.path)
