"""The rating store in SQLite, for embedded mode: ``ratings.sqlite3`` in the data folder.

The same tables as PostgreSQL (``services.rating.migrations``) and the same exactly-once
argument: one ``BEGIN IMMEDIATE`` transaction checks the stored position, writes the
ratings, history and applied hands and moves the position. Opened, migrated and run off the
event loop by ``services.runtime.sqlite`` (WAL, ``synchronous=FULL``, like the embedded log);
readers in other processes (``ratings show``) never block it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from services.rating.formula import HAND_COLUMNS, HISTORY_COLUMNS, RATING_COLUMNS, Fold
from services.rating.migrations import SQLITE
from services.rating.port import (
    COMPARED,
    DEFAULT_VARIANT,
    Applied,
    Batch,
    HistoryEntry,
    LogFold,
    Place,
    PlayerRating,
    Position,
    RecomputeReport,
    TableSpec,
    show_value,
)
from services.runtime.sqlite import Database, SqliteStore, migrate, write

FILE = "ratings.sqlite3"
FRESH_FILE = "ratings-recompute.sqlite3"
EXAMPLES = 5
CACHE_KIB = 64 * 1024


def _rating(row: tuple[Any, ...]) -> PlayerRating:
    variant, player, rating, hands, provisional, last_seq = row
    return PlayerRating(variant, player, rating, hands, bool(provisional), last_seq)


class EmbeddedRatingStore(SqliteStore):
    """``RatingStore`` on SQLite in ``directory`` (the embedded log's folder)."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(
            Path(directory) / FILE, SQLITE, what="the rating store", cache_kib=CACHE_KIB
        )
        self.fresh_path = Path(directory) / FRESH_FILE

    # --- the write side ---------------------------------------------------------------------

    async def position(self, topic: str) -> Position:
        def read(db: sqlite3.Connection) -> Position:
            db.execute(
                "INSERT OR IGNORE INTO positions (topic, next_offset) VALUES (?, 0)", (topic,)
            )
            next_offset, applied, ignored = db.execute(
                "SELECT next_offset, applied, ignored FROM positions WHERE topic = ?", (topic,)
            ).fetchone()
            return Position(topic, next_offset, applied, ignored)

        return await self.database.run(read)

    async def apply(self, topic: str, start: int, next_offset: int, batch: Batch) -> Applied | None:
        return await self.database.run(lambda db: self._apply(db, topic, start, next_offset, batch))

    def _apply(
        self, db: sqlite3.Connection, topic: str, start: int, next_offset: int, batch: Batch
    ) -> Applied | None:
        with write(db):
            db.execute(
                "INSERT OR IGNORE INTO positions (topic, next_offset) VALUES (?, 0)", (topic,)
            )
            row = db.execute(
                "SELECT next_offset FROM positions WHERE topic = ?", (topic,)
            ).fetchone()
            if row is None or row[0] != start:
                db.execute("ROLLBACK")
                return None
            fold = Fold()
            for variant, player in batch.players:
                found = db.execute(
                    "SELECT rating, rated_hands, last_seq FROM ratings "
                    "WHERE variant = ? AND player = ?",
                    (variant, player),
                ).fetchone()
                if found is not None:
                    fold.load(variant, player, *found)
            for variant, hand_id in batch.hand_ids:
                if db.execute(
                    "SELECT 1 FROM hands WHERE variant = ? AND hand_id = ?", (variant, hand_id)
                ).fetchone():
                    fold.already_applied(variant, hand_id)
            batch.fold_into(fold)
            self._write(db, "main", fold, fold.rating_rows(fold.touched()), upsert=True)
            db.execute(
                "UPDATE positions SET next_offset = ?, applied = applied + ?, "
                "ignored = ignored + ? WHERE topic = ?",
                (next_offset, fold.applied, len(fold.ignored), topic),
            )
        return Applied(next_offset, fold.applied, fold.ignored)

    @staticmethod
    def _write(
        db: sqlite3.Connection, schema: str, fold: Fold, ratings: list[Any], upsert: bool
    ) -> None:
        verb = "INSERT OR REPLACE" if upsert else "INSERT"
        for table, columns, rows in (
            ("ratings", RATING_COLUMNS, ratings),
            ("history", HISTORY_COLUMNS, fold.history),
            ("hands", HAND_COLUMNS, fold.hands),
        ):
            db.executemany(
                f"{verb} INTO {schema}.{table} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                rows,
            )

    # --- the read side ----------------------------------------------------------------------

    async def rating(self, player: str, variant: str = DEFAULT_VARIANT) -> PlayerRating | None:
        row = await self.database.fetchone(
            f"SELECT {', '.join(RATING_COLUMNS)} FROM ratings WHERE variant = ? AND player = ?",
            (variant, player),
        )
        return None if row is None else _rating(row)

    async def history(
        self, player: str, variant: str = DEFAULT_VARIANT, limit: int = 100
    ) -> list[HistoryEntry]:
        rows = await self.database.fetchall(
            f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history WHERE variant = ? AND player = ? "
            "ORDER BY seq DESC LIMIT ?",
            (variant, player, limit),
        )
        return [HistoryEntry(*r) for r in rows]

    async def leaderboard(
        self,
        variant: str = DEFAULT_VARIANT,
        limit: int = 100,
        offset: int = 0,
        with_provisional: bool = False,
    ) -> list[PlayerRating]:
        rows = await self.database.fetchall(
            f"SELECT {', '.join(RATING_COLUMNS)} FROM ratings "
            "WHERE variant = ? AND (? OR provisional = 0) "
            "ORDER BY provisional, rating DESC, player LIMIT ? OFFSET ?",
            (variant, with_provisional, limit, offset),
        )
        return [_rating(r) for r in rows]

    async def place(
        self, player: str, variant: str = DEFAULT_VARIANT, with_provisional: bool = False
    ) -> Place:
        # One statement, so the rank and the count belong to one snapshot. "Ahead" is the
        # leaderboard's ORDER BY: established (0) first, then higher rating, then player id.
        total, listed, ahead = await self.database.fetchone(
            "SELECT (SELECT count(*) FROM ratings WHERE variant = ?1 AND (?3 OR provisional = 0)),"
            " me.player IS NOT NULL, (SELECT count(*) FROM ratings r WHERE r.variant = ?1"
            " AND (?3 OR r.provisional = 0) AND (r.provisional < me.provisional"
            " OR (r.provisional = me.provisional AND (r.rating > me.rating"
            " OR (r.rating = me.rating AND r.player < me.player)))))"
            " FROM (SELECT 1) LEFT JOIN ratings me ON me.variant = ?1 AND me.player = ?2"
            " AND (?3 OR me.provisional = 0)",
            (variant, player, with_provisional),
        )
        return Place(rank=ahead + 1 if listed else None, of=total)

    # --- recompute --------------------------------------------------------------------------

    async def recompute(self, topic: str, fold_log: LogFold) -> RecomputeReport:
        """The fresh tables go to ``ratings-recompute.sqlite3`` (made anew each time), attached
        to a connection of its own whose read transaction holds one snapshot of the live
        tables while the log is folded."""
        live = Database(self.path, what="the rating store's recompute connection")
        await live.open()
        try:
            row = await live.run(lambda db: self._begin_recompute(db, topic))
            position = row[0] if row else 0
            folded = await fold_log(position)
            report = RecomputeReport(topic, position, folded, where=str(self.fresh_path))
            await live.run(lambda db: self._write_and_compare(db, topic, bool(row), report))
        finally:
            await live.close()
        return report

    def _begin_recompute(self, db: sqlite3.Connection, topic: str) -> Any:
        self.fresh_path.unlink(missing_ok=True)
        fresh = sqlite3.connect(self.fresh_path, isolation_level=None)
        try:
            migrate(fresh, SQLITE)
        finally:
            fresh.close()
        db.execute("ATTACH DATABASE ? AS fresh", (str(self.fresh_path),))
        db.execute("PRAGMA fresh.journal_mode=OFF")
        db.execute("PRAGMA fresh.synchronous=OFF")
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        db.execute(f"PRAGMA fresh.cache_size=-{4 * CACHE_KIB}")
        db.execute("BEGIN")
        # The live snapshot starts here.
        return db.execute(
            "SELECT next_offset, applied, ignored FROM main.positions WHERE topic = ?", (topic,)
        ).fetchone()

    def _write_and_compare(
        self, db: sqlite3.Connection, topic: str, had_position: bool, report: RecomputeReport
    ) -> None:
        began = time.perf_counter()
        folded = report.folded
        fold = folded.fold
        self._write(db, "fresh", fold, fold.rating_rows(), upsert=False)
        if had_position or folded.end:
            db.execute(
                "INSERT INTO fresh.positions VALUES (?, ?, ?, ?)",
                (topic, folded.end, fold.applied, len(fold.ignored)),
            )
        report.write_s = time.perf_counter() - began
        began = time.perf_counter()
        for spec in COMPARED:
            self._compare(db, spec, topic, report)
        report.compare_s = time.perf_counter() - began
        db.execute("COMMIT")

    @staticmethod
    def _compare(
        db: sqlite3.Connection, spec: TableSpec, topic: str, report: RecomputeReport
    ) -> None:
        where = " WHERE topic = ?" if spec.name == "positions" else ""
        args = (topic,) if where else ()
        live_rows = f"(SELECT * FROM main.{spec.name}{where})"
        cols = ", ".join(spec.columns)
        # REALs are IEEE doubles and compare by value: equal exactly when their bits are equal,
        # but for ±0 and NaN, which the formula cannot produce from finite ratings.
        missing_or_changed = (
            f"SELECT {cols} FROM {live_rows} EXCEPT SELECT {cols} FROM fresh.{spec.name}"
        )
        extra = f"SELECT {cols} FROM fresh.{spec.name} EXCEPT SELECT {cols} FROM {live_rows}"
        live_only = db.execute(f"SELECT * FROM ({missing_or_changed})", args).fetchall()
        fresh_only = db.execute(f"SELECT * FROM ({extra})", args).fetchall()
        (live_n,) = db.execute(f"SELECT count(*) FROM {live_rows}", args).fetchone()
        (fresh_n,) = db.execute(f"SELECT count(*) FROM fresh.{spec.name}").fetchone()
        report.rows[spec.name] = (live_n, fresh_n)
        keys = len(spec.key)
        differing = {tuple(r[:keys]) for r in live_only} | {tuple(r[:keys]) for r in fresh_only}
        report.differences[spec.name] = len(differing)
        for side, rows in (("live only", live_only), ("fresh only", fresh_only)):
            for r in rows[:EXAMPLES]:
                shown = ", ".join(
                    f"{c}={show_value(v)}" for c, v in zip(spec.columns, r, strict=True)
                )
                report.examples.append(f"{spec.name} {side}: {{{shown}}}")
