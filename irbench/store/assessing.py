"""Assessors in the browser (``irbench assess``), mixed into Store: their tokens (stored as
sha256 only; a revoked assessor keeps their row, without a token), the pool's CSRF secret, the
clicks and the pool's state."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .records import ASSESSED, JUDGMENT_FIELDS, Judgment

Click = Judgment  # a judgment made in the browser: the desk gives its query_id, doc_id,
                  # relevance, judge, suggested and seconds; save_clicks the rest


@dataclass(frozen=True, kw_only=True)
class Assessor:
    """Who may open the assessment pages: ``role`` ``assessor`` (judges ``topics`` of
    ``pool``; all its topics when empty) or ``organiser`` (sees progress, judges nothing).
    ``revoked``: their link no longer works (:meth:`Assessing.revoke_assessor`)."""

    name: str
    role: str
    topics: tuple[str, ...]
    pool: str
    revoked: bool = False


class Assessing:
    """Tokens and clicks (mixed into Store)."""

    con: Any

    def transaction(self) -> Any: ...  # the Store's

    def record_judgments(self, rows: Sequence[Judgment], *,
                         once_per: Sequence[str] = ()) -> int:  # Judging's (before Assessing)
        raise NotImplementedError

    def add_assessor(self, assessor: Assessor, token_sha256: str) -> None:
        """Add (or give a new token to, revoked or not) an assessor."""
        self.con.execute(
            "INSERT INTO assessors (name, token_sha256, role, topics, pool, created_at, "
            "revoked_at) VALUES (?, ?, ?, ?, ?, now(), NULL) ON CONFLICT (name) DO UPDATE "
            "SET token_sha256 = excluded.token_sha256, role = excluded.role, "
            "topics = excluded.topics, pool = excluded.pool, revoked_at = NULL",
            [assessor.name, token_sha256, assessor.role, list(assessor.topics), assessor.pool])

    def revoke_assessor(self, pool: str, name: str) -> bool:
        """Take ``name``'s token away (their link stops working; their row and judgments
        stay); False when ``pool`` has no such assessor with a working link."""
        found = self.con.execute(
            "SELECT count(*) FROM assessors WHERE pool = ? AND name = ? AND revoked_at IS NULL",
            [pool, name]).fetchone()
        if not found or not found[0]:
            return False
        self.con.execute("UPDATE assessors SET token_sha256 = NULL, revoked_at = now() "
                         "WHERE pool = ? AND name = ?", [pool, name])
        return True

    def set_assessor_topics(self, pool: str, name: str, topics: Sequence[str]) -> bool:
        """``name``'s topics (all of the pool's when empty); False when ``pool`` has no such
        assessor."""
        found = self.con.execute("SELECT count(*) FROM assessors WHERE pool = ? AND name = ?",
                                 [pool, name]).fetchone()
        if not found or not found[0]:
            return False
        self.con.execute("UPDATE assessors SET topics = ? WHERE pool = ? AND name = ?",
                         [list(topics), pool, name])
        return True

    def csrf_secret(self, pool: str) -> bytes:
        """The secret the assessment server's CSRF tokens of ``pool`` are made with: made at
        the first call, the same on every later start (an open page keeps working after a
        restart). Never printed."""
        self.con.execute("INSERT INTO assess_secrets VALUES (?, ?, now()) "
                         "ON CONFLICT (pool) DO NOTHING", [pool, secrets.token_bytes(32)])
        row = self.con.execute("SELECT csrf_secret FROM assess_secrets WHERE pool = ?",
                               [pool]).fetchone()
        return bytes(row[0])

    def assessor_pool(self, name: str) -> str | None:
        """The pool ``name`` assesses, or None."""
        row = self.con.execute("SELECT pool FROM assessors WHERE name = ?", [name]).fetchone()
        return None if row is None else row[0]

    def assessor_tokens(self, pool: str) -> dict[str, Assessor]:
        """{token sha256: assessor} of ``pool`` (revoked ones have none)."""
        rows = self.con.execute("SELECT token_sha256, name, role, topics, pool FROM assessors "
                                "WHERE pool = ? AND token_sha256 IS NOT NULL AND "
                                "revoked_at IS NULL", [pool]).fetchall()
        return {r[0]: Assessor(name=r[1], role=r[2], topics=tuple(r[3] or ()), pool=r[4])
                for r in rows}

    def assessors(self, pool: str) -> list[Assessor]:
        """Everyone of ``pool`` (revoked ones too: their judgments name them), by name."""
        rows = self.con.execute("SELECT name, role, topics, pool, revoked_at IS NOT NULL "
                                "FROM assessors WHERE pool = ? ORDER BY name",
                                [pool]).fetchall()
        return [Assessor(name=r[0], role=r[1], topics=tuple(r[2] or ()), pool=r[3],
                         revoked=bool(r[4])) for r in rows]

    def save_clicks(self, pool: str, clicks: Sequence[Judgment]) -> None:
        """Judgments made in the browser, in the order given, as judgments of ``pool`` by
        humans from source ``assess`` (one statement, :meth:`Store.record_judgments`; the
        caller's transaction makes a group of them one commit). The pool's state is saved at
        hand-outs (:meth:`save_pool_state`); the clicks made since are applied again when it
        is loaded (:func:`irbench.assess.desk.catch_up`)."""
        self.record_judgments([Judgment(
            pool=pool, query_id=c.query_id, doc_id=c.doc_id, relevance=c.relevance,
            judge=c.judge, judge_kind="human", source=ASSESSED, suggested=c.suggested,
            seconds=c.seconds) for c in clicks])

    def save_pool_state(self, pool: str, strategy: str, state: str, arrays: bytes,
                        clicks_applied: int) -> None:
        """The pool's state with the number of browser clicks it has applied."""
        self.con.execute("UPDATE pools SET strategy = ?, state = ?, arrays = ?, "
                         "clicks_applied = ?, updated_at = now() WHERE name = ?",
                         [strategy, state, arrays, clicks_applied, pool])

    def clicks_applied(self, pool: str) -> int:
        row = self.con.execute("SELECT coalesce(clicks_applied, 0) FROM pools WHERE name = ?",
                               [pool]).fetchone()
        return 0 if row is None else int(row[0])

    def clicks(self, pool: str) -> list[Judgment]:
        """Every judgment made in the browser for ``pool``, in the order made."""
        rows = self.con.execute(
            f"SELECT {', '.join(JUDGMENT_FIELDS)} FROM judgments WHERE pool = ? AND "
            "source = ? ORDER BY judged_at, rowid", [pool, ASSESSED]).fetchall()
        return [Judgment(**dict(zip(JUDGMENT_FIELDS, row))) for row in rows]

    def model_labels(self, judge: str) -> dict[tuple[str, str], int]:
        """{(topic, doc): the label the model judge ``judge`` gave it (the latest, whichever
        pool asked)}: the suggestions ``irbench assess --suggest JUDGE`` shows on a pool's
        documents."""
        rows = self.con.execute(
            "SELECT query_id, doc_id, arg_max(relevance, judged_at) FROM judgments "
            "WHERE judge_kind = 'model' AND relevance IS NOT NULL AND judge = ? "
            "GROUP BY query_id, doc_id", [judge]).fetchall()
        return {(r[0], r[1]): int(r[2]) for r in rows}
