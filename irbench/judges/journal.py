"""The answers journal: every model answer is appended to ``STORE.answers.jsonl`` the moment
it arrives, then folded into the store in batches. A process killed between two folds loses
no answer it received (an appended line is in the operating system's hands), so a call is
never paid for twice; the next judging run folds the journal first. A line cut short by the
kill (the last line, without its newline) is the one answer that was not received whole: it
is skipped.

The journal never blocks: an answer the store cannot keep as it is (text that is not UTF-8,
an absurd token count, a relevance that is not a whole number) is stored normalised
(:func:`irbench.store.judging.storable_answer`), with a note; if a batch is still refused, it
is written answer by answer, and an answer or a whole line that cannot be stored at all is
appended to ``STORE.answers.quarantine.jsonl`` (one JSON object a line: the reason, the
journal line, the answer or the line's text), named in a message. The journal is emptied only
once every line in it is stored or quarantined: no paid answer is ever discarded.

Each line names the endpoint (the judge's base_url) that gave the answer and the HTTP requests
it took; a line of an earlier irbench without them is folded as its judge's answer (the
base_url the store holds for that judge: the one it was asked at), its requests unknown."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import IO, Any

from ..errors import OutputError, StoreValueError
from ..store import ModelAnswer

FIELDS = tuple(f.name for f in fields(ModelAnswer))
# what a line written by an earlier irbench may lack: an answer without its endpoint is kept as
# its judge's (irbench.store.judging.Judging.save_answers), without its request count as unknown
SINCE_ENDPOINTS = ("endpoint", "requests")
# what a line written before answer tasks lacks: an answer of the relevance task (issue 40)
SINCE_TASKS = ("task", "sentence", "run_id", "position")
SINCE_SAMPLES = ("sample",)  # which of a judge's samples (None: a judge without samples)
OPTIONAL = SINCE_ENDPOINTS + SINCE_TASKS + SINCE_SAMPLES

NOTES_SHOWN = 5  # notes on answers stored normalised shown one by one; the rest counted

Save = Callable[[Sequence[ModelAnswer], str], "Sequence[str] | None"]


def journal_path(store_path: str) -> str:
    return f"{store_path}.answers.jsonl"


def quarantine_path(store_path: str) -> str:
    return f"{store_path}.answers.quarantine.jsonl"


class Journal:
    """Appends answers (with the pool they were asked for) and folds them into the store
    through ``save(answers, pool)`` (which returns what it changed to store them, and raises
    :class:`StoreValueError` for a batch it cannot store). ``notes``: what a command tells
    its user after a fold (answers stored normalised, answers quarantined)."""

    def __init__(self, path: str, save: Save, quarantine: str | None = None):
        self.path, self.save = path, save
        self.quarantine = quarantine or path.removesuffix(".jsonl") + ".quarantine.jsonl"
        self.pending: list[tuple[ModelAnswer, str]] = []
        self.broken: list[dict[str, Any]] = []  # whole lines of the journal not readable
        self.handle: IO[str] | None = None
        self.normalised: list[str] = []
        self.quarantined = 0

    def fold_leftovers(self) -> int:
        """Fold what a killed run left in the journal; returns how many answers."""
        if not os.path.exists(self.path):
            return 0
        with open(self.path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    self.pending.append(_parse(line))
                except (ValueError, TypeError, KeyError, RecursionError) as exc:
                    if not line.endswith(b"\n"):
                        continue  # the last line of a killed write: never received whole
                    self.broken.append({"reason": f"line {number} of {self.path} is not an "
                                        f"answer ({_why(exc)})", "line": number,
                                        "text": line.decode("utf-8", "backslashreplace")})
        found = len(self.pending)
        self.fold()
        return found

    def append(self, answer: ModelAnswer, pool: str) -> None:
        if self.handle is None:
            self.handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
            if _ends_cut(self.path):  # a killed write's half line: never glued to this one
                self.handle.write("\n")
        record = {name: getattr(answer, name) for name in FIELDS}  # asdict copies deeply
        record["pool"] = pool
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        self.pending.append((answer, pool))

    def fold(self) -> None:
        """Save what is pending (one transaction per pool; a batch the store refuses, answer
        by answer), quarantine what cannot be stored, then empty the journal. A store that
        cannot be written at all (a full disk, a lock) raises and leaves the journal whole:
        the next run folds it again (nothing is stored twice)."""
        kept = list(self.broken)
        for pool in sorted({pool for _, pool in self.pending}):
            batch = [a for a, p in self.pending if p == pool]
            try:
                self.normalised += self.save(batch, pool) or ()
            except StoreValueError:  # rolled back: each answer alone, the bad ones kept aside
                for answer in batch:
                    try:
                        self.normalised += self.save([answer], pool) or ()
                    except StoreValueError as exc:
                        kept.append({"reason": str(exc), "pool": pool,
                                     "answer": {n: getattr(answer, n) for n in FIELDS}})
        if kept:
            self._keep_aside(kept)
        self.pending, self.broken = [], []
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        if os.path.exists(self.path):
            os.remove(self.path)

    def _keep_aside(self, entries: list[dict[str, Any]]) -> None:
        """Append ``entries`` to the quarantine file, on disk before the journal goes."""
        try:
            with open(self.quarantine, "a", encoding="utf-8") as fh:
                if _ends_cut(self.quarantine):
                    fh.write("\n")
                for entry in entries:  # ensure_ascii: lone surrogates stay \\ud800 escapes
                    fh.write(json.dumps(entry, default=repr) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise OutputError(f"{self.quarantine}: cannot write the answers the store "
                              f"refused ({exc.strerror}); they stay in {self.path}, with "
                              "every other answer of it: run the command again once this is "
                              "fixed") from None
        self.quarantined += len(entries)

    @property
    def notes(self) -> list[str]:
        """What to tell the user about this run's folds."""
        out = []
        if self.normalised:
            out.append(f"{len(self.normalised)} answers were stored normalised (kept, with "
                       "what the store cannot hold changed):")
            out += [f"  {line}" for line in self.normalised[:NOTES_SHOWN]]
            if len(self.normalised) > NOTES_SHOWN:
                out.append(f"  ... and {len(self.normalised) - NOTES_SHOWN} more")
        if self.quarantined:
            out.append(f"{self.quarantined} answers or journal lines could not be stored: "
                       f"they are kept in {self.quarantine} (one JSON object a line, with "
                       "the reason); nothing was thrown away")
        elif os.path.exists(self.quarantine):
            out.append(f"answers an earlier run could not store are kept in "
                       f"{self.quarantine}")
        return out


def _parse(line: bytes) -> tuple[ModelAnswer, str]:
    data = json.loads(line)
    if not isinstance(data, dict):
        raise TypeError(f"a JSON {type(data).__name__}, not an object")
    pool = data["pool"]
    if not isinstance(pool, str):
        raise TypeError("its pool is not text")
    given: dict[str, Any] = {name: data[name] for name in FIELDS if name not in OPTIONAL}
    given.update((name, data.get(name)) for name in OPTIONAL)
    return ModelAnswer(**given), pool


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _ends_cut(path: str) -> bool:
    """Whether the file at ``path`` ends inside a line (a write killed midway)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:
        return False
