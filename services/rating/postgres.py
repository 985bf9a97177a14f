"""The rating store on PostgreSQL (asyncpg): the distributed mode's sink.

Exactly once: a batch of ``rating.results`` records is applied in one transaction that
first locks the topic's row in ``positions`` and checks it still holds the batch's first
offset, then writes the ratings, history and applied hands, and moves the position past the
batch. A crash before the commit leaves nothing; after it, the service resumes from the
stored position, so no result is read twice. Two service instances are safe: the row lock
serialises them and the loser of a race sees a moved position and applies nothing.
"""

from __future__ import annotations

import time
from typing import Any

import asyncpg

from services.rating.formula import HAND_COLUMNS, HISTORY_COLUMNS, RATING_COLUMNS, Fold
from services.rating.migrations import POSTGRES
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
from services.runtime.postgres import PostgresStore, quote

SCHEMA_LONGEST = 41
"""With ``_recompute`` added, the fresh schema's name still fits PostgreSQL's 63."""
EXAMPLES = 5
COMPARE_WORK_MEM = "512MB"


def _quote(schema: str) -> str:
    return quote(schema, SCHEMA_LONGEST)


class PostgresRatingStore(PostgresStore):
    """``RatingStore`` on PostgreSQL; its tables live in ``schema`` (default ``rating``)."""

    def __init__(self, dsn: str, schema: str = "rating", pool_size: int = 4) -> None:
        super().__init__(
            dsn,
            schema,
            POSTGRES,
            migration_lock=f"mahjong-rating:{schema}",
            what="the rating store",
            pool_size=pool_size,
            longest_schema=SCHEMA_LONGEST,
        )
        self.fresh_schema = f"{schema}_recompute"

    # --- the write side ---------------------------------------------------------------------

    async def position(self, topic: str) -> Position:
        async with self.pool.acquire() as conn:
            await conn.execute(
                f"INSERT INTO {self.s}.positions (topic, next_offset) VALUES ($1, 0) "
                "ON CONFLICT (topic) DO NOTHING",
                topic,
            )
            row = await conn.fetchrow(
                f"SELECT next_offset, applied, ignored FROM {self.s}.positions WHERE topic = $1",
                topic,
            )
        assert row is not None
        return Position(topic, row["next_offset"], row["applied"], row["ignored"])

    async def apply(self, topic: str, start: int, next_offset: int, batch: Batch) -> Applied | None:
        s = self.s
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                f"INSERT INTO {s}.positions (topic, next_offset) VALUES ($1, 0) "
                "ON CONFLICT (topic) DO NOTHING",
                topic,
            )
            stored = await conn.fetchval(
                f"SELECT next_offset FROM {s}.positions WHERE topic = $1 FOR UPDATE", topic
            )
            if stored != start:
                return None
            fold = Fold()
            if batch.players:
                variants, players = zip(*sorted(batch.players), strict=True)
                for r in await conn.fetch(
                    f"SELECT r.variant, r.player, r.rating, r.rated_hands, r.last_seq "
                    f"FROM {s}.ratings r JOIN unnest($1::text[], $2::text[]) AS k(v, p) "
                    "ON r.variant = k.v AND r.player = k.p",
                    list(variants),
                    list(players),
                ):
                    fold.load(r[0], r[1], r[2], r[3], r[4])
            if batch.hand_ids:
                variants, hand_ids = zip(*sorted(batch.hand_ids), strict=True)
                for r in await conn.fetch(
                    f"SELECT h.variant, h.hand_id FROM {s}.hands h "
                    "JOIN unnest($1::text[], $2::text[]) AS k(v, h) "
                    "ON h.variant = k.v AND h.hand_id = k.h",
                    list(variants),
                    list(hand_ids),
                ):
                    fold.already_applied(r[0], r[1])
            batch.fold_into(fold)
            rows = fold.rating_rows(fold.touched())
            if rows:
                await conn.execute(
                    f"INSERT INTO {s}.ratings ({', '.join(RATING_COLUMNS)}) "
                    "SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::int[], "
                    "$5::bool[], $6::bigint[]) "
                    "ON CONFLICT (variant, player) DO UPDATE SET rating = EXCLUDED.rating, "
                    "rated_hands = EXCLUDED.rated_hands, provisional = EXCLUDED.provisional, "
                    "last_seq = EXCLUDED.last_seq",
                    *(list(column) for column in zip(*rows, strict=True)),
                )
                await conn.copy_records_to_table(
                    "history",
                    schema_name=self.schema,
                    records=fold.history,
                    columns=HISTORY_COLUMNS,
                )
                await conn.copy_records_to_table(
                    "hands", schema_name=self.schema, records=fold.hands, columns=HAND_COLUMNS
                )
            await conn.execute(
                f"UPDATE {s}.positions SET next_offset = $2, applied = applied + $3, "
                "ignored = ignored + $4 WHERE topic = $1",
                topic,
                next_offset,
                fold.applied,
                len(fold.ignored),
            )
        return Applied(next_offset, fold.applied, fold.ignored)

    # --- the read side ----------------------------------------------------------------------

    async def rating(self, player: str, variant: str = DEFAULT_VARIANT) -> PlayerRating | None:
        row = await self.pool.fetchrow(
            f"SELECT {', '.join(RATING_COLUMNS)} FROM {self.s}.ratings "
            "WHERE variant = $1 AND player = $2",
            variant,
            player,
        )
        return None if row is None else PlayerRating(*row)

    async def history(
        self, player: str, variant: str = DEFAULT_VARIANT, limit: int = 100
    ) -> list[HistoryEntry]:
        rows = await self.pool.fetch(
            f"SELECT {', '.join(HISTORY_COLUMNS)} FROM {self.s}.history "
            "WHERE variant = $1 AND player = $2 ORDER BY seq DESC LIMIT $3",
            variant,
            player,
            limit,
        )
        return [HistoryEntry(*r) for r in rows]

    async def leaderboard(
        self,
        variant: str = DEFAULT_VARIANT,
        limit: int = 100,
        offset: int = 0,
        with_provisional: bool = False,
    ) -> list[PlayerRating]:
        rows = await self.pool.fetch(
            f"SELECT {', '.join(RATING_COLUMNS)} FROM {self.s}.ratings "
            "WHERE variant = $1 AND ($4 OR NOT provisional) "
            "ORDER BY provisional, rating DESC, player LIMIT $2 OFFSET $3",
            variant,
            limit,
            offset,
            with_provisional,
        )
        return [PlayerRating(*r) for r in rows]

    async def place(
        self, player: str, variant: str = DEFAULT_VARIANT, with_provisional: bool = False
    ) -> Place:
        # One statement, so the rank and the count belong to one snapshot. "Ahead" is the
        # leaderboard's ORDER BY: established (false) first, then higher rating, then player
        # id (in the same collation as that ORDER BY).
        s = self.s
        row = await self.pool.fetchrow(
            f"SELECT (SELECT count(*) FROM {s}.ratings WHERE variant = $1 "
            "AND ($3 OR NOT provisional)), me.player IS NOT NULL, "
            f"(SELECT count(*) FROM {s}.ratings r WHERE r.variant = $1 "
            "AND ($3 OR NOT r.provisional) AND (r.provisional < me.provisional "
            "OR (r.provisional = me.provisional AND (r.rating > me.rating "
            "OR (r.rating = me.rating AND r.player < me.player))))) "
            f"FROM (SELECT 1) one LEFT JOIN {s}.ratings me ON me.variant = $1 "
            "AND me.player = $2 AND ($3 OR NOT me.provisional)",
            variant,
            player,
            with_provisional,
        )
        total, listed, ahead = row
        return Place(rank=ahead + 1 if listed else None, of=total)

    # --- recompute --------------------------------------------------------------------------

    async def recompute(self, topic: str, fold_log: LogFold) -> RecomputeReport:
        """One REPEATABLE READ transaction: its first read fixes the live snapshot (the live
        position and every live row compared belong to it, however far the service moves
        meanwhile); the fresh tables are written and compared inside it, then kept, in
        schema ``<schema>_recompute``, for inspection."""
        live, fresh = self.s, _quote(self.fresh_schema)
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            row = await conn.fetchrow(
                f"SELECT next_offset, applied, ignored FROM {live}.positions WHERE topic = $1",
                topic,
            )
            position = row["next_offset"] if row else 0
            # Hash joins of millions of rows in memory, not in batches spilled to disk.
            await conn.execute(f"SET LOCAL work_mem = '{COMPARE_WORK_MEM}'")
            folded = await fold_log(position)
            report = RecomputeReport(topic, position, folded, where=f"schema {fresh}")
            began = time.perf_counter()
            await conn.execute(f"DROP SCHEMA IF EXISTS {fresh} CASCADE")
            await conn.execute(f"CREATE SCHEMA {fresh}")
            for spec in COMPARED:
                await conn.execute(
                    f"CREATE UNLOGGED TABLE {fresh}.{spec.name} "
                    f"(LIKE {live}.{spec.name} INCLUDING DEFAULTS)"
                )
            fold = folded.fold
            await self._copy(conn, "ratings", RATING_COLUMNS, fold.rating_rows())
            await self._copy(conn, "history", HISTORY_COLUMNS, fold.history)
            await self._copy(conn, "hands", HAND_COLUMNS, fold.hands)
            await self._copy(
                conn,
                "positions",
                COMPARED[3].columns,
                [(topic, folded.end, fold.applied, len(fold.ignored))] if row or folded.end else [],
            )
            report.write_s = time.perf_counter() - began
            began = time.perf_counter()
            for spec in COMPARED:
                await self._compare(conn, spec, topic, report)
            report.compare_s = time.perf_counter() - began
        return report

    async def _copy(
        self,
        conn: asyncpg.Connection,
        table: str,
        columns: tuple[str, ...],
        records: list[Any],
    ) -> None:
        if records:
            await conn.copy_records_to_table(
                table, schema_name=self.fresh_schema, records=records, columns=columns
            )
        await conn.execute(f"ANALYZE {_quote(self.fresh_schema)}.{table}")

    async def _compare(
        self, conn: asyncpg.Connection, spec: TableSpec, topic: str, report: RecomputeReport
    ) -> None:
        live, fresh = self.s, _quote(self.fresh_schema)
        # Only this topic's position: the live table may track other inputs too.
        where = " WHERE topic = $1" if spec.name == "positions" else ""
        args = [topic] if where else []
        live_rows = f"(SELECT * FROM {live}.{spec.name}{where})"
        on = " AND ".join(f"l.{k} = f.{k}" for k in spec.key)
        # float8send: the IEEE bytes, so "equal" is bit for bit (not -0.0 = 0.0).
        sides = [
            (f"float8send(l.{c})", f"float8send(f.{c})")
            if c in spec.floats
            else (f"l.{c}", f"f.{c}")
            for c in spec.columns
        ]
        left, right = ", ".join(a for a, _ in sides), ", ".join(b for _, b in sides)
        differs = (
            f"l.{spec.key[0]} IS NULL OR f.{spec.key[0]} IS NULL OR "
            f"({left}) IS DISTINCT FROM ({right})"
        )
        joined = f"FROM {live_rows} l FULL JOIN {fresh}.{spec.name} f ON {on} WHERE {differs}"
        count = await conn.fetchval(f"SELECT count(*) {joined}", *args)
        live_n = await conn.fetchval(f"SELECT count(*) FROM {live_rows} x", *args)
        fresh_n = await conn.fetchval(f"SELECT count(*) FROM {fresh}.{spec.name}")
        report.rows[spec.name] = (live_n, fresh_n)
        report.differences[spec.name] = count
        if count:
            cols = ", ".join(f"l.{c}" for c in spec.columns)
            fcols = ", ".join(f"f.{c}" for c in spec.columns)
            n = len(spec.columns)
            for r in await conn.fetch(f"SELECT {cols}, {fcols} {joined} LIMIT {EXAMPLES}", *args):
                values = list(r.values())
                report.examples.append(
                    f"{spec.name}: live {_show(spec.columns, values[:n])} "
                    f"!= fresh {_show(spec.columns, values[n:])}"
                )


def _show(columns: tuple[str, ...], values: list[Any]) -> str:
    if all(v is None for v in values):
        return "(missing)"
    return (
        "{" + ", ".join(f"{c}={show_value(v)}" for c, v in zip(columns, values, strict=True)) + "}"
    )
