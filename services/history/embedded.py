"""The hand-history store in SQLite, for embedded mode: ``history.sqlite3`` in the data folder.

The same tables as PostgreSQL (``services.history.migrations``; ``players`` as a JSON list)
and the same exactly-once argument: one ``BEGIN IMMEDIATE`` transaction checks the stored
positions, writes the tables opened and the ended hands' rows, and moves the positions.
Opened, migrated and run off the event loop by ``services.runtime.sqlite`` (WAL,
``synchronous=FULL``, like the embedded log); the gateway reads it from its own connection
without blocking the projection.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from services.history.fold import FACT_COLUMNS, ROW_COLUMNS, HandRow, TableFacts
from services.history.migrations import SQLITE
from services.history.port import Applied, Position, PositionKey, Snapshot, Step, rows_for
from services.runtime.sqlite import Database, SqliteStore, write

FILE = "history.sqlite3"
COLUMNS = ", ".join(f'"{c}"' for c in ROW_COLUMNS)
BOOLS = frozenset({"rated", "public", "flower_pig", "not_ready"})


def _row(values: tuple[Any, ...]) -> HandRow:
    out: dict[str, Any] = dict(zip(ROW_COLUMNS, values, strict=True))
    out["players"] = json.loads(out["players"])
    for c in BOOLS:
        out[c] = bool(out[c])
    return HandRow(**out)


def _values(row: HandRow) -> tuple[Any, ...]:
    return tuple(
        json.dumps(row.players) if c == "players" else getattr(row, c) for c in ROW_COLUMNS
    )


# The hands ``hands`` lists (?1 player, ?2 viewer, ?3 before_ms, ?4 kind or NULL): a private
# table's hands only when the viewer played them too.
_LISTED = (
    "h.player = ?1 AND h.ended_ms < ?3 AND (?4 IS NULL OR h.kind = ?4) "
    "AND (h.public OR ?2 IS NULL OR EXISTS (SELECT 1 FROM hands o "
    "WHERE o.hand_id = h.hand_id AND o.player = ?2))"
)


def _listed(
    player: str, viewer: str | None, before_ms: int | None, kind: str | None
) -> tuple[str, str | None, int, str | None]:
    return (player, viewer, before_ms if before_ms is not None else 2**62, kind)


def _facts(values: tuple[Any, ...]) -> TableFacts:
    table_id, public, quick_play, computers, opened_ms = values
    return TableFacts(table_id, bool(public), bool(quick_play), bool(computers), opened_ms)


class EmbeddedHistoryStore(SqliteStore):
    """``HistoryStore`` on SQLite in ``directory`` (the embedded log's folder)."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(Path(directory) / FILE, SQLITE, what="the history store")

    async def positions(self) -> dict[PositionKey, Position]:
        rows = await self.database.fetchall(
            'SELECT topic, "partition", next_offset, open_from FROM positions'
        )
        return {(t, p): Position(n, o) for t, p, n, o in rows}

    async def apply(self, step: Step) -> Applied | None:
        return await self.database.run(lambda db: _apply(db, step))

    async def hands(
        self,
        player: str,
        viewer: str | None,
        limit: int,
        before_ms: int | None = None,
        kind: str | None = None,
        offset: int = 0,
    ) -> list[HandRow]:
        rows = await self.database.fetchall(
            f"SELECT {COLUMNS} FROM hands h WHERE {_LISTED} "
            "ORDER BY h.ended_ms DESC, h.hand_id DESC LIMIT ?5 OFFSET ?6",
            (*_listed(player, viewer, before_ms, kind), limit, offset),
        )
        return [_row(r) for r in rows]

    async def figure_rows(self, player: str, viewer: str | None) -> list[HandRow]:
        rows = await self.database.fetchall(
            f"SELECT {COLUMNS} FROM hands h WHERE {_LISTED} ORDER BY h.ended_ms, h.hand_id",
            _listed(player, viewer, None, None),
        )
        return [_row(r) for r in rows]

    async def count_hands(
        self, player: str, viewer: str | None, before_ms: int | None = None, kind: str | None = None
    ) -> int:
        found = await self.database.fetchone(
            f"SELECT count(*) FROM hands h WHERE {_LISTED}",
            _listed(player, viewer, before_ms, kind),
        )
        return int(found[0])

    async def hand(self, hand_id: str) -> list[HandRow]:
        rows = await self.database.fetchall(
            f"SELECT {COLUMNS} FROM hands WHERE hand_id = ? ORDER BY seat", (hand_id,)
        )
        return [_row(r) for r in rows]

    async def snapshot(self) -> Snapshot:
        """From a connection of its own: a long read does not hold up the projection."""
        reader = Database(self.path, what="the history store's snapshot connection")
        await reader.open()
        try:
            return await reader.run(_snapshot)
        finally:
            await reader.close()


def _apply(db: sqlite3.Connection, step: Step) -> Applied | None:
    with write(db):
        stored = {
            (t, p): n
            for t, p, n in db.execute('SELECT topic, "partition", next_offset FROM positions')
        }
        if any(stored.get(k, 0) != p.next_offset for k, p in step.start.items()):
            db.execute("ROLLBACK")
            return None
        db.executemany(
            f"INSERT OR IGNORE INTO tables ({', '.join(FACT_COLUMNS)}) VALUES (?, ?, ?, ?, ?)",
            [tuple(getattr(f, c) for c in FACT_COLUMNS) for f in step.facts],
        )
        facts: dict[str, TableFacts] = {}
        for table_id in {h.end.table_id for h in step.ended}:
            found = db.execute(
                f"SELECT {', '.join(FACT_COLUMNS)} FROM tables WHERE table_id = ?",
                (table_id,),
            ).fetchone()
            if found is not None:
                facts[table_id] = _facts(found)
        rows = rows_for(step.ended, facts)
        db.executemany(
            f"INSERT OR IGNORE INTO hands ({COLUMNS}) VALUES ({', '.join('?' * len(ROW_COLUMNS))})",
            [_values(r) for r in rows],
        )
        db.executemany(
            'INSERT INTO positions (topic, "partition", next_offset, open_from) '
            'VALUES (?, ?, ?, ?) ON CONFLICT (topic, "partition") DO UPDATE SET '
            "next_offset = excluded.next_offset, open_from = excluded.open_from",
            [(t, p, pos.next_offset, pos.open_from) for (t, p), pos in step.end.items()],
        )
    return Applied(len(step.ended), len(rows), len(step.facts))


def _snapshot(db: sqlite3.Connection) -> Snapshot:
    db.execute("BEGIN")  # one read transaction: one snapshot of all three tables
    try:
        positions = {
            (t, p): Position(n, o)
            for t, p, n, o in db.execute(
                'SELECT topic, "partition", next_offset, open_from FROM positions'
            )
        }
        facts = [_facts(r) for r in db.execute(f"SELECT {', '.join(FACT_COLUMNS)} FROM tables")]
        rows = [_row(r) for r in db.execute(f"SELECT {COLUMNS} FROM hands")]
    finally:
        db.execute("COMMIT")
    return Snapshot(positions, facts, rows)
