"""Executions of systems given as commands (mixed into Store): the table ``commands``
(migration 22), one row per execution, written by :meth:`Commands.record_command` (the only
writer), read by :meth:`Commands.last_command`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any


@dataclass(frozen=True, kw_only=True)
class CommandRun:
    """One execution of a system's command in this store's collection (see the migration's
    comment in :mod:`irbench.store.schema`)."""

    system: str
    key: str
    status: str
    exit_code: int | None = None
    run_path: str | None = None
    run_sha256: str | None = None
    wall_seconds: float | None = None
    cpu_seconds: float | None = None
    peak_rss_bytes: int | None = None
    stderr_tail: str | None = None
    argv: str | None = None  # JSON
    environment: str | None = None  # JSON (ir_metadata fields)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    runner_id: int | None = None


COLUMNS = tuple(f.name for f in fields(CommandRun))


class Commands:
    """The writer and reader of ``commands`` (mixed into Store)."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def record_command(self, row: CommandRun) -> None:
        """Record one execution (one statement)."""
        self.con.execute(f"INSERT INTO commands ({', '.join(COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(COLUMNS))})",
                         [getattr(row, name) for name in COLUMNS])

    def last_command(self, system: str, status: str | None = None) -> CommandRun | None:
        """The system's latest execution (of ``status`` when given), or None."""
        where, params = "system = ?", [system]
        if status is not None:
            where, params = where + " AND status = ?", params + [status]
        row = self.con.execute(f"SELECT {', '.join(COLUMNS)} FROM commands WHERE {where} "
                               "ORDER BY finished_at DESC, rowid DESC LIMIT 1",
                               params).fetchone()
        return None if row is None else CommandRun(**dict(zip(COLUMNS, row)))

    def command_costs(self) -> dict[str, CommandRun]:
        """Each system's latest ok execution (what its run cost), by system."""
        rows = self.con.execute(
            f"SELECT {', '.join(COLUMNS)} FROM commands WHERE status = 'ok' "
            "QUALIFY row_number() OVER (PARTITION BY system ORDER BY finished_at DESC, "
            "rowid DESC) = 1 ORDER BY system").fetchall()
        return {r[0]: CommandRun(**dict(zip(COLUMNS, r))) for r in rows}
