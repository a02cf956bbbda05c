"""What the runner writes: systems' outcomes in batched transactions (:class:`Writes`), their
provenance and checks, and the checks made once every system is scored."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from .. import __version__
from ..config import Config
from ..store import FileFacts, Store, SystemRecord
from ..submissions.ir_metadata import run_fields
from .engine import release_freed_memory
from .inputs import listed
from .results import Findings
from .score import Outcome

# write the store at least this often: every 5 s, or once the pending records hold 1,000,000
# per-topic values (a flush costs ~40-60 ms whatever its size below that, and converts them all;
# while it runs, a worker that finishes waits for its next run, so every 2 s gave a campaign
# scored in 2-3 s a second flush half the time). A kill loses at most the last 5 s of scoring.
FLUSH_SECONDS, FLUSH_VALUES, FLUSH_SYSTEMS = 5.0, 1_000_000, 1024


class Writes:
    """Systems' outcomes written a few at a time: each flush is one transaction holding whole
    systems, so a kill loses at most the systems since the last flush (scored again next time)
    and never half a system. ``store``: the store, asked for at the first write (a new one
    is opened while the first systems are scored)."""

    def __init__(self, store: Callable[[], Store]):
        self.store = store
        self.pending: list[SystemRecord] = []
        self.values = 0  # per-topic values (and topic names) in ``pending``
        self.written = 0  # per-topic values written so far
        self.since = time.monotonic()

    def add(self, record: SystemRecord) -> None:
        self.pending.append(record)
        self.values += len(record.answered or ()) + sum(
            len(r.topics) * (len(r.values) + 1) for r in record.results)
        if (self.values >= FLUSH_VALUES or len(self.pending) >= FLUSH_SYSTEMS
                or time.monotonic() - self.since > FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if self.pending:
            # freed heap handed back first: the writes convert big columns (a 1,000,000-topic
            # run's peak fell from 895 to 787 MiB), and a flush is at most every 5 s
            release_freed_memory()
            store = self.store()
            with store.transaction():
                for record in self.pending:
                    store.record_system(record)
            self.pending.clear()
        self.written += self.values
        self.values, self.since = 0, time.monotonic()


def outcome_record(outcome: Outcome, options: str, runner_id: int, shas: dict[str, str],
                   cache: dict[str, FileFacts]) -> SystemRecord:
    """The store's record of one system's outcome. A failed system keeps showing its stored
    results when its file could not be read at all or is the very file they came from."""
    extra = _provenance(outcome)
    if outcome.error is not None:
        cached = cache.get(outcome.path)
        unchanged = not outcome.sha256 or (cached is not None
                                           and cached.sha256 == outcome.sha256)
        return SystemRecord(name=outcome.system, status="failed", error=outcome.error,
                            sha256=outcome.sha256, run_tag=outcome.run_tag, options=options,
                            version=__version__, runner_id=runner_id, keep_current=unchanged,
                            **extra)
    computed = bool(outcome.results) or not outcome.reused
    return SystemRecord(
        name=outcome.system, status="ok", results=outcome.results, sha256=outcome.sha256,
        run_tag=outcome.run_tag, options=options, version=__version__, runner_id=runner_id,
        num_topics=len(outcome.topics) if computed else None,
        num_docs=outcome.num_docs if computed else None,
        answered=outcome.topics if computed else None,
        reuse=[(q, outcome.sha256, shas[q]) for q in outcome.reused], **extra)


def _provenance(outcome: Outcome) -> dict:
    """What a run says about itself (ir_metadata) and what the checks said of it, for the store."""
    extra: dict = {}
    if outcome.metadata is not None:
        extra["ir_metadata"] = json.dumps(outcome.metadata, sort_keys=True, default=str)
        fields, _ = run_fields(outcome.metadata)
        extra["fields"] = {k: v for k, v in fields.items() if k in ("group", "type")}
    if outcome.checked is not None:
        extra["validation"], extra["problems"] = outcome.checked.verdict, outcome.checked.problems
    return extra


def validation_warnings(outcome: Outcome) -> list[str]:
    """The submission checks' problems of a run that was not rejected for them (a rejected
    run's failure already lists them), as warnings: the same for ``run`` and ``check``."""
    rejected = (outcome.error or "").startswith("rejected by the submission checks")
    if outcome.checked is None or rejected:
        return list(outcome.warnings)
    return [f"system '{outcome.system}': {line}" for line in outcome.checked.lines
            if ": warning: " in line or ": error: " in line] + list(outcome.warnings)


def system_row(system, position: int) -> dict:
    """A system as the store declares it."""
    return {"name": system.name, "path": system.path, "group": system.group,
            "type": system.type, "description": system.description,
            "baseline": system.baseline, "official": system.official,
            "priority": system.priority, "pooled": system.pooled,
            "metadata": json.dumps(system.metadata, sort_keys=True, default=str),
            "position": position, "kind": system.kind, "answer_format": system.answer_format}


def check_unanswered(findings: Findings, config: Config, store: Store, qrels: list[str],
                     shas: dict[str, str]) -> None:
    """A topic of the qrels sets ``qrels`` that no system answers (as the store has it once
    every system is recorded) is a failure of its set (usually topic ids that do not match);
    its scores are stored all the same."""
    usable = [name for name in qrels if name in shas]
    lonely_topics = store.unanswered_topics(usable)
    for name in usable:
        lonely = lonely_topics.get(name)
        if lonely:
            findings.fail(f"qrels '{name}'", f"{config.qrels_path(name)}: no system answers "
                          f"topic{'s' if len(lonely) > 1 else ''} {listed(lonely)}")
