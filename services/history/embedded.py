"""The hand-history store in SQLite, for embedded mode: ``history.sqlite3`` in the data folder.

The same tables as PostgreSQL (``services.history.migrations``; ``players`` as a JSON list)
and the same exactly-once argument: one ``BEGIN IMMEDIATE`` transaction checks the stored
positions, writes the tables opened and the ended hands' rows, and moves the positions.
WAL mode, ``synchronous=FULL``, like the embedded log; the gateway reads it from its own
connection without blocking the projection.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from services.history.fold import FACT_COLUMNS, ROW_COLUMNS, HandRow, TableFacts
from services.history.migrations import SQLITE
from services.history.store import Applied, Position, PositionKey, Snapshot, Step, rows_for

FILE = "history.sqlite3"
COLUMNS = ", ".join(f'"{c}"' for c in ROW_COLUMNS)
BOOLS = frozenset({"rated", "public"})


def _migrate(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
        )
        applied = {v for (v,) in db.execute("SELECT version FROM schema_migrations")}
        for version, name, sql in SQLITE:
            if version in applied:
                continue
            for statement in sql.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name)
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


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


def _facts(values: tuple[Any, ...]) -> TableFacts:
    table_id, public, quick_play, computers, opened_ms = values
    return TableFacts(table_id, bool(public), bool(quick_play), bool(computers), opened_ms)


class EmbeddedHistoryStore:
    """``HistoryStore`` on SQLite in ``directory`` (the embedded log's folder)."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / FILE
        self._db: sqlite3.Connection | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=10000")
        _migrate(db)
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the history store is not started")
        return self._db

    async def positions(self) -> dict[PositionKey, Position]:
        rows = self.db.execute(
            'SELECT topic, "partition", next_offset, open_from FROM positions'
        ).fetchall()
        return {(t, p): Position(n, o) for t, p, n, o in rows}

    async def apply(self, step: Step) -> Applied | None:
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
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
                f"INSERT OR IGNORE INTO hands ({COLUMNS}) "
                f"VALUES ({', '.join('?' * len(ROW_COLUMNS))})",
                [_values(r) for r in rows],
            )
            db.executemany(
                'INSERT INTO positions (topic, "partition", next_offset, open_from) '
                'VALUES (?, ?, ?, ?) ON CONFLICT (topic, "partition") DO UPDATE SET '
                "next_offset = excluded.next_offset, open_from = excluded.open_from",
                [(t, p, pos.next_offset, pos.open_from) for (t, p), pos in step.end.items()],
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return Applied(len(step.ended), len(rows), len(step.facts))

    async def hands(
        self, player: str, viewer: str | None, limit: int, before_ms: int | None = None
    ) -> list[HandRow]:
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM hands h WHERE h.player = ? AND h.ended_ms < ? "
            "AND (h.public OR ? IS NULL OR EXISTS (SELECT 1 FROM hands o "
            "WHERE o.hand_id = h.hand_id AND o.player = ?)) "
            "ORDER BY h.ended_ms DESC, h.hand_id DESC LIMIT ?",
            (player, before_ms if before_ms is not None else 2**62, viewer, viewer, limit),
        ).fetchall()
        return [_row(r) for r in rows]

    async def hand(self, hand_id: str) -> list[HandRow]:
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM hands WHERE hand_id = ? ORDER BY seat", (hand_id,)
        ).fetchall()
        return [_row(r) for r in rows]

    async def snapshot(self) -> Snapshot:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("BEGIN")  # one read transaction: one snapshot of all three tables
            positions = {
                (t, p): Position(n, o)
                for t, p, n, o in db.execute(
                    'SELECT topic, "partition", next_offset, open_from FROM positions'
                )
            }
            facts = [_facts(r) for r in db.execute(f"SELECT {', '.join(FACT_COLUMNS)} FROM tables")]
            rows = [_row(r) for r in db.execute(f"SELECT {COLUMNS} FROM hands")]
            db.execute("COMMIT")
        finally:
            db.close()
        return Snapshot(positions, facts, rows)
