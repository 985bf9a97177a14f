"""The lobby list as a PostgreSQL projection of ``lobby.events`` (the distributed mode).

``lobby.tables`` holds one row per table that is open or playing (closed ones are deleted),
with its public facts; ``lobby.position`` the next ``lobby.events`` offset to project. A
batch of events and the position move in one database transaction, so a crash re-projects
nothing twice and loses nothing. Invite codes are never written here.

An event that does not decode goes to ``lobby.events.dlq`` with the reason and the position
moves past it; a failed batch is retried with backoff, and ``progress`` reports a position
that stops moving while events wait (``/readyz`` 503, ``mahjong_consumer_stalled_seconds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import asyncpg
import msgspec
from prometheus_client import Counter

from schemas import lobby as lb
from services.matchmaking.lobby import Lobby, Table, apply
from services.runtime import dead_letters
from services.runtime.backoff import Backoff, away_errors
from services.runtime.log import EventLog
from services.runtime.position import PositionBeyondEnd, check_position
from services.runtime.progress import STALL_AFTER_S, Progress
from services.runtime.service import Health, Lag, Stall, known, pause, run_stored
from services.runtime.topics import LOBBY_EVENTS

log = logging.getLogger("mahjong.lobby")

AWAY = away_errors()

PROJECTED = Counter("mahjong_lobby_projected_events", "lobby.events projected into PostgreSQL")

MIGRATIONS = (
    """
    CREATE SCHEMA IF NOT EXISTS lobby;
    CREATE TABLE IF NOT EXISTS lobby.tables (
        table_id   text PRIMARY KEY,
        creator    text NOT NULL,
        public     boolean NOT NULL,
        rated      boolean NOT NULL,
        clock      text,
        computers  text,
        hands      integer NOT NULL,
        quick_play boolean NOT NULL,
        seated     text[] NOT NULL,
        started    boolean NOT NULL,
        players    text[] NOT NULL,
        opened_ms  bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS lobby_tables_listed ON lobby.tables (opened_ms)
        WHERE public AND NOT started;
    CREATE TABLE IF NOT EXISTS lobby.position (
        topic       text PRIMARY KEY,
        next_offset bigint NOT NULL
    );
    """,
)

_COLUMNS = (
    "table_id, creator, public, rated, clock, computers, hands, quick_play, seated, started, "
    "players, opened_ms"
)


class LobbyProjection:
    """Follows ``lobby.events`` into PostgreSQL; ``public_tables`` is the lobby list."""

    def __init__(
        self,
        event_log: EventLog,
        dsn: str,
        *,
        retry_s: float = 1.0,
        stall_after_s: float = STALL_AFTER_S,
    ) -> None:
        self.log = event_log
        self.dsn = dsn
        self.pool: asyncpg.Pool | None = None
        self.lobby = Lobby()
        self.position = 0
        self.projected = 0
        self.dead_letters = 0
        self.retry_s = retry_s
        self.progress = Progress(LOBBY_EVENTS, stall_after_s)
        self.ready = asyncio.Event()

    def probe(self) -> Health:
        return Health(
            started=self.ready.is_set(),
            stall=Stall.of(self.progress),
            lag=Lag(self.log, LOBBY_EVENTS, known({0: self.position})),
            counters={"projected": self.projected, "dead_letters": self.dead_letters},
        )

    async def start(self) -> None:
        self.pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=2)
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('mahjong-lobby'))")
            for sql in MIGRATIONS:
                await conn.execute(sql)
            rows = await conn.fetch(f"SELECT {_COLUMNS} FROM lobby.tables")
            position = await conn.fetchval(
                "SELECT next_offset FROM lobby.position WHERE topic = $1", LOBBY_EVENTS
            )
        for row in rows:
            table = _table_of(row)
            self.lobby.tables[table.table_id] = table
            for player in table.seated:
                self.lobby.at[player] = table.table_id
        self.position = int(position or 0)
        try:
            await check_position(self.log, LOBBY_EVENTS, 0, self.position, "lobby.position")
        except PositionBeyondEnd as exc:
            # Unlike ratings, the lobby list is nothing but a copy of the log's current
            # tables: with another log, the right list is that log's. Project it again.
            log.warning("%s (the lobby list is rebuilt from this log)", exc)
            async with self.pool.acquire() as conn, conn.transaction():
                await conn.execute("DELETE FROM lobby.tables")
                await conn.execute("DELETE FROM lobby.position")
            self.lobby, self.position = Lobby(), 0

    async def close(self) -> None:
        if self.pool is not None:
            with contextlib.suppress(Exception):  # a database that went away: nothing to close
                await asyncio.wait_for(self.pool.close(), 5)
            self.pool = None

    async def run(self, stop: asyncio.Event) -> None:
        """Project until ``stop`` is set. While PostgreSQL or the broker is away the
        projector waits, not ready, and starts again from the stored position; a batch that
        fails for another reason is retried with backoff (unreadable records are set aside
        on ``lobby.events.dlq``), and the stall gauge says so."""
        said = -60.0

        async def connect() -> None:
            await dead_letters.create_topic(self.log, LOBBY_EVENTS)
            await self.start()
            self.progress.advanced(self.position)

        async def lost(exc: BaseException, delay: float) -> None:
            nonlocal said
            self.progress.failed(f"{type(exc).__name__}: {exc}")
            if time.monotonic() - said >= 60.0:
                said = time.monotonic()
                log.warning(
                    "PostgreSQL or the broker is away (%s: %s); retrying",
                    type(exc).__name__,
                    exc,
                )
            await self.close()
            self.pool, self.lobby = None, Lobby()

        async def failed(exc: Exception, backoff: Backoff) -> None:
            self.progress.failed(f"{type(exc).__name__}: {exc}")
            delay = backoff.pause_s()
            log.exception(
                "projecting lobby.events at %d failed; retrying in %.1f s", self.position, delay
            )
            await self._recover(stop, delay)

        try:
            await run_stored(
                stop,
                self.ready,
                self.step,
                idle=lambda: self.log.wait_for_change(LOBBY_EVENTS, 0.2),
                connect=connect,
                step_failed=failed,
                step_backoff=lambda: Backoff(self.retry_s, 30.0),
                reconnect_on=AWAY,
                lost=lost,
            )
        finally:
            self.ready.clear()
            await self.close()

    async def _recover(self, stop: asyncio.Event, delay: float) -> None:
        """After a failed batch: wait, then take the lobby and the position from the
        database again (the batch may have been applied to ``self.lobby`` in memory)."""
        await pause(stop, delay)
        with contextlib.suppress(Exception):
            await self.close()
            self.pool, self.lobby = None, Lobby()
            await self.start()

    async def step(self, limit: int = 1000) -> int:
        """Project the next batch of events; how many there were."""
        assert self.pool is not None
        records = await self.log.read(LOBBY_EVENTS, 0, self.position, limit)
        if not records:
            self.progress.caught_up(self.position)
            return 0
        touched: set[str] = set()
        letters = []
        for record in records:
            try:
                event = lb.decode_lobby_event(record.value)
            except msgspec.DecodeError as exc:
                letters.append(dead_letters.outgoing("lobby-projector", record, str(exc)))
                log.warning("lobby event at %d set aside: %s", record.offset, exc)
                continue
            apply(self.lobby, event)
            table_id = getattr(event, "table_id", None)
            if table_id is not None:
                touched.add(table_id)
        upserts = [_row(self.lobby.tables[t]) for t in touched if t in self.lobby.tables]
        gone = [t for t in touched if t not in self.lobby.tables]
        next_offset = records[-1].offset + 1
        if letters:
            # Before the commit: a crash between the two writes a letter again (same key).
            await self.log.produce(letters)
            self.dead_letters += len(letters)
        async with self.pool.acquire() as conn, conn.transaction():
            stored = await conn.fetchval(
                "SELECT next_offset FROM lobby.position WHERE topic = $1 FOR UPDATE",
                LOBBY_EVENTS,
            )
            if stored is not None and int(stored) != self.position:
                raise RuntimeError(
                    f"another projector moved lobby.position to {stored}; restart to resync"
                )
            await conn.execute("DELETE FROM lobby.tables WHERE table_id = ANY($1)", gone)
            await conn.executemany(
                f"INSERT INTO lobby.tables ({_COLUMNS}) VALUES "
                "($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (table_id) DO UPDATE SET "
                "seated = EXCLUDED.seated, started = EXCLUDED.started, "
                "players = EXCLUDED.players",
                upserts,
            )
            await conn.execute(
                "INSERT INTO lobby.position VALUES ($1, $2) ON CONFLICT (topic) DO UPDATE "
                "SET next_offset = EXCLUDED.next_offset",
                LOBBY_EVENTS,
                next_offset,
            )
        self.position = next_offset
        self.progress.advanced(next_offset)
        self.projected += len(records)
        PROJECTED.inc(len(records))
        return len(records)

    async def public_tables(self) -> list[dict[str, object]]:
        """The lobby list: public tables not yet started, oldest first (the tables in play
        are in the same rows, ``started`` true)."""
        assert self.pool is not None
        rows = await self.pool.fetch(
            f"SELECT {_COLUMNS} FROM lobby.tables WHERE public AND NOT started "
            "ORDER BY opened_ms, table_id"
        )
        return [dict(r) for r in rows]


def _row(t: Table) -> tuple[object, ...]:
    o = t.options
    return (
        t.table_id,
        t.creator,
        o.public,
        o.rated,
        o.clock,
        o.computers,
        1,  # hands: every game is a single hand now; the column stays for older readers
        t.quick_play,
        list(t.seated),
        t.started,
        list(t.players),
        t.opened_ms,
    )


def _table_of(row: asyncpg.Record) -> Table:
    options = lb.TableOptions(
        rated=row["rated"],
        clock=row["clock"],
        public=row["public"],
        computers=row["computers"],
    )
    return Table(
        table_id=row["table_id"],
        creator=row["creator"],
        options=options,
        quick_play=row["quick_play"],
        seated=list(row["seated"]),
        stage="started" if row["started"] else "open",
        players=list(row["players"]),
        opened_ms=row["opened_ms"],
    )
