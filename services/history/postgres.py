"""The hand-history store on PostgreSQL (asyncpg): the distributed mode's sink.

Exactly once: a step is one transaction that takes the store's advisory lock, checks that
the stored positions are still the step's starting ones, writes the tables opened and the
rows of the hands that ended, and moves the positions. A crash before the commit leaves
nothing; after it, the projection resumes from the stored positions. Two projections at
once are safe: the lock serialises them and the loser sees moved positions and writes
nothing.
"""

from __future__ import annotations

from typing import Any

from services.history.fold import FACT_COLUMNS, ROW_COLUMNS, HandRow, TableFacts
from services.history.migrations import POSTGRES
from services.history.port import Applied, Position, PositionKey, Snapshot, Step, rows_for
from services.runtime.postgres import PostgresStore

COLUMNS = ", ".join(f'"{c}"' for c in ROW_COLUMNS)


def _row(r: Any) -> HandRow:
    values: dict[str, Any] = {c: r[c] for c in ROW_COLUMNS}
    values["players"] = list(values["players"])
    return HandRow(**values)


class PostgresHistoryStore(PostgresStore):
    """``HistoryStore`` on PostgreSQL; its tables live in ``schema`` (default ``history``)."""

    def __init__(self, dsn: str, schema: str = "history", pool_size: int = 4) -> None:
        super().__init__(
            dsn,
            schema,
            POSTGRES,
            migration_lock=f"mahjong-history-migrate:{schema}",
            what="the history store",
            pool_size=pool_size,
            longest_schema=41,
            command_timeout=60,
        )
        self.lock = f"mahjong-history:{schema}"

    async def positions(self) -> dict[PositionKey, Position]:
        rows = await self.pool.fetch(
            f'SELECT topic, "partition", next_offset, open_from FROM {self.s}.positions'
        )
        return {(r[0], r[1]): Position(r[2], r[3]) for r in rows}

    async def apply(self, step: Step) -> Applied | None:
        s = self.s
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", self.lock)
            stored = {
                (r[0], r[1]): r[2]
                for r in await conn.fetch(
                    f'SELECT topic, "partition", next_offset FROM {s}.positions'
                )
            }
            if any(stored.get(k, 0) != p.next_offset for k, p in step.start.items()):
                return None
            if step.facts:
                await conn.executemany(
                    f"INSERT INTO {s}.tables ({', '.join(FACT_COLUMNS)}) "
                    "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (table_id) DO NOTHING",
                    [tuple(getattr(f, c) for c in FACT_COLUMNS) for f in step.facts],
                )
            facts: dict[str, TableFacts] = {}
            tables = sorted({h.end.table_id for h in step.ended})
            if tables:
                for r in await conn.fetch(
                    f"SELECT {', '.join(FACT_COLUMNS)} FROM {s}.tables "
                    "WHERE table_id = ANY($1::text[])",
                    tables,
                ):
                    facts[r[0]] = TableFacts(*r)
            rows = rows_for(step.ended, facts)
            if rows:
                await conn.executemany(
                    f"INSERT INTO {s}.hands ({COLUMNS}) VALUES "
                    f"({', '.join(f'${i + 1}' for i in range(len(ROW_COLUMNS)))}) "
                    "ON CONFLICT (hand_id, seat) DO NOTHING",
                    [tuple(getattr(row, c) for c in ROW_COLUMNS) for row in rows],
                )
            await conn.executemany(
                f'INSERT INTO {s}.positions (topic, "partition", next_offset, open_from) '
                'VALUES ($1, $2, $3, $4) ON CONFLICT (topic, "partition") DO UPDATE SET '
                "next_offset = EXCLUDED.next_offset, open_from = EXCLUDED.open_from",
                [(t, p, pos.next_offset, pos.open_from) for (t, p), pos in step.end.items()],
            )
        return Applied(len(step.ended), len(rows), len(step.facts))

    def _listed(self) -> str:
        """The hands ``hands`` lists ($1 player, $2 before_ms, $3 viewer, $4 kind or NULL): a
        private table's hands only when the viewer played them too."""
        return (
            "h.player = $1 AND h.ended_ms < $2 AND ($4::text IS NULL OR h.kind = $4) "
            "AND (h.public OR $3::text IS NULL OR EXISTS (SELECT 1 FROM "
            f"{self.s}.hands o WHERE o.hand_id = h.hand_id AND o.player = $3))"
        )

    async def hands(
        self,
        player: str,
        viewer: str | None,
        limit: int,
        before_ms: int | None = None,
        kind: str | None = None,
        offset: int = 0,
    ) -> list[HandRow]:
        rows = await self.pool.fetch(
            f"SELECT {COLUMNS} FROM {self.s}.hands h WHERE {self._listed()} "
            "ORDER BY h.ended_ms DESC, h.hand_id DESC LIMIT $5 OFFSET $6",
            player,
            before_ms if before_ms is not None else 2**62,
            viewer,
            kind,
            limit,
            offset,
        )
        return [_row(r) for r in rows]

    async def figure_rows(self, player: str, viewer: str | None) -> list[HandRow]:
        rows = await self.pool.fetch(
            f"SELECT {COLUMNS} FROM {self.s}.hands h WHERE {self._listed()} "
            "ORDER BY h.ended_ms, h.hand_id",
            player,
            2**62,
            viewer,
            None,
        )
        return [_row(r) for r in rows]

    async def count_hands(
        self, player: str, viewer: str | None, before_ms: int | None = None, kind: str | None = None
    ) -> int:
        found = await self.pool.fetchval(
            f"SELECT count(*) FROM {self.s}.hands h WHERE {self._listed()}",
            player,
            before_ms if before_ms is not None else 2**62,
            viewer,
            kind,
        )
        return int(found)

    async def hand(self, hand_id: str) -> list[HandRow]:
        rows = await self.pool.fetch(
            f"SELECT {COLUMNS} FROM {self.s}.hands WHERE hand_id = $1 ORDER BY seat", hand_id
        )
        return [_row(r) for r in rows]

    async def snapshot(self) -> Snapshot:
        s = self.s
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            positions = {
                (r[0], r[1]): Position(r[2], r[3])
                for r in await conn.fetch(
                    f'SELECT topic, "partition", next_offset, open_from FROM {s}.positions'
                )
            }
            facts = [
                TableFacts(*r)
                for r in await conn.fetch(f"SELECT {', '.join(FACT_COLUMNS)} FROM {s}.tables")
            ]
            rows = [_row(r) for r in await conn.fetch(f"SELECT {COLUMNS} FROM {s}.hands")]
        return Snapshot(positions, facts, rows)
