"""``HistoryService``: the hand-history projection of ``table.events``, exactly once.

It reads every ``table.events`` partition from the positions stored in the history store
(not a consumer group: the store is the sink) and folds the hands (``HandsFold``). A step
reads a batch of each partition, then ``lobby.events`` up to its end (the facts of every
table whose hand it read were written before that hand started), and writes the tables
opened, the rows of the hands that ended and every position in one store transaction
(``HistoryStore.apply``). After a crash or a failed step it reads the stored positions
again and rebuilds the hands still open from each partition's ``open_from``: a step that
did not commit is folded again, one that did is never written twice.

While the database is away (or not there yet at start) the service is not ready and
retries with backoff (1 s doubling to 30 s); it catches up when the database is back.
A stored position beyond the end of its partition (a new broker with an old database)
stops the service with an error: the history would silently miss hands.

``rebuild`` folds the whole log up to the live positions with the same fold and compares
the rows, the tables, the positions and every player's figures (``services.history.figures``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import prometheus_client as prom

from services.history.figures import PlayerFigures, figures
from services.history.fold import HandRow, HandsFold, TableFacts, table_facts
from services.history.store import HistoryStore, Position, PositionKey, Step, rows_for
from services.runtime.backoff import Backoff
from services.runtime.log import EventLog, read_through
from services.runtime.service import Health, Lag, idle, known, pause, run_stored
from services.runtime.topics import LOBBY_EVENTS, TABLE_EVENTS

log = logging.getLogger("mahjong.history")

HANDS = prom.Counter("mahjong_history_hands", "Finished hands written to the hand history")
STEPS = prom.Counter("mahjong_history_steps", "History store transactions committed")
FAILURES = prom.Counter(
    "mahjong_history_failures", "Failed history steps (database or broker away), retried"
)

LOBBY = (LOBBY_EVENTS, 0)
LOBBY_CHUNK = 5000


class PositionAhead(RuntimeError):
    """A stored position lies beyond the end of its partition."""


class HistoryService:
    """The projection (see the module note). It starts and closes its store itself."""

    def __init__(
        self,
        event_log: EventLog,
        store: HistoryStore,
        *,
        max_batch: int = 2000,
        idle_s: float = 0.25,
        retry_s: float = 1.0,
        max_retry_s: float = 30.0,
    ) -> None:
        self.log = event_log
        self.store = store
        self.max_batch = max_batch
        self.idle_s = idle_s
        self.retry_s = retry_s
        self.max_retry_s = max_retry_s
        self.ready = asyncio.Event()
        self.folds: dict[int, HandsFold] = {}
        self.lobby_position = 0
        self.stored: dict[PositionKey, Position] = {}
        self.started = False
        self.hands = 0
        self.steps = 0
        self.failures = 0

    def probe(self) -> Health:
        return Health(
            started=self.ready.is_set(),
            lag=Lag(self.log, TABLE_EVENTS, known(self.positions)),
            counters={"hands": self.hands, "steps": self.steps, "failures": self.failures},
        )

    @property
    def positions(self) -> dict[int, int]:
        """The stored next offset of every ``table.events`` partition (for the lag gauge)."""
        return {
            p: pos.next_offset for (topic, p), pos in self.stored.items() if topic == TABLE_EVENTS
        }

    async def run(self, stop: asyncio.Event) -> None:
        """Project until ``stop`` is set."""

        async def connect() -> None:
            if not self.started:
                await self.store.start()
                self.started = True
            await self.resync()
            if not self.ready.is_set():
                log.info(
                    "history projection ready: positions %s, lobby.events at %d",
                    self.positions,
                    self.lobby_position,
                )

        async def lost(exc: BaseException, delay: float) -> None:
            self.failures += 1
            FAILURES.inc()
            log.warning(
                "history step failed (%s: %s); retrying in %.0f s",
                type(exc).__name__,
                exc,
                delay,
            )
            await self._restart_store()

        async def wait() -> None:
            await self._idle(stop)

        try:
            await run_stored(
                stop,
                self.ready,
                self.step,
                idle=wait,
                connect=connect,
                reconnect_on=(Exception,),
                lost=lost,
                backoff=Backoff(self.retry_s, self.max_retry_s),
                fatal=(PositionAhead,),
            )
        finally:
            self.ready.clear()
            if self.started:
                await self.store.close()
                self.started = False
            log.info("history projection stopped: positions %s", self.positions)

    async def _restart_store(self) -> None:
        """Drop the store's connections: the next attempt opens fresh ones."""
        if self.started:
            self.started = False
            try:
                await self.store.close()
            except Exception as exc:
                log.info("closing the history store: %s", exc)

    async def resync(self) -> None:
        """Read the stored positions and rebuild the hands open at them."""
        stored = await self.store.positions()
        partitions = await self.log.partition_count(TABLE_EVENTS)
        folds = {}
        for p in range(partitions):
            pos = stored.get((TABLE_EVENTS, p), Position(0, 0))
            end = await self.log.end_offset(TABLE_EVENTS, p)
            if pos.next_offset > end:
                log.error(
                    "the stored history position of %s/%d is %d but the partition ends at %d "
                    "(a new broker with an old database?); stopping",
                    TABLE_EVENTS,
                    p,
                    pos.next_offset,
                    end,
                )
                raise PositionAhead(f"{TABLE_EVENTS}/{p}: position {pos.next_offset} > end {end}")
            fold = HandsFold(p, position=pos.open_from)
            async for r in read_through(self.log, TABLE_EVENTS, p, pos.open_from, pos.next_offset):
                fold.fold(r)
            fold.take_ended()  # written before: only the open hands are wanted
            fold.position = pos.next_offset
            folds[p] = fold
            stored.setdefault((TABLE_EVENTS, p), pos)
        lobby = stored.setdefault(LOBBY, Position(0, 0))
        self.folds, self.lobby_position, self.stored = folds, lobby.next_offset, stored

    async def step(self) -> int:
        """Read one batch of every partition and write what it ended; the records read."""
        read = 0
        ended = []
        for p, fold in self.folds.items():
            records = await self.log.read(TABLE_EVENTS, p, fold.position, self.max_batch)
            for r in records:
                fold.fold(r)
            ended += fold.take_ended()
            read += len(records)
        if not read:
            return 0
        facts: list[TableFacts] = []
        position = self.lobby_position
        end = await self.log.end_offset(LOBBY_EVENTS, 0)
        while position < end:
            records = await self.log.read(LOBBY_EVENTS, 0, position, LOBBY_CHUNK)
            if not records:
                break
            for r in records:
                found = table_facts(r)
                if found is not None:
                    facts.append(found)
            position = records[-1].offset + 1
        target = {
            (TABLE_EVENTS, p): Position(f.position, f.open_from) for p, f in self.folds.items()
        }
        target[LOBBY] = Position(position, position)
        applied = await self.store.apply(Step(dict(self.stored), target, ended, facts))
        if applied is None:
            log.warning("the stored history positions moved (another projection?); resyncing")
            await self.resync()
            return read
        self.stored, self.lobby_position = target, position
        self.hands += applied.hands
        self.steps += 1
        HANDS.inc(applied.hands)
        STEPS.inc()
        if applied.hands:
            log.info("history: %d hands written (%d rows)", applied.hands, applied.rows)
        return read

    async def catch_up(self) -> None:
        """Project everything up to the log's current end (tests, tools)."""
        if not self.started:
            await self.store.start()
            self.started = True
        await self.resync()
        while await self.step():
            pass

    async def _idle(self, stop: asyncio.Event) -> None:
        began = time.monotonic()
        await idle(self.log, TABLE_EVENTS, self.idle_s, stop)
        # Kafka's wait_for_change is a short sleep: poll its eight partitions less often.
        left = self.idle_s - (time.monotonic() - began)
        if left > 0 and not stop.is_set() and self.log.__class__.__name__ == "KafkaLog":
            await pause(stop, left)


# --- rebuild ------------------------------------------------------------------------------


@dataclass(slots=True)
class RebuildReport:
    """The log folded again up to the live positions, compared with the live rows."""

    live_rows: int = 0
    fresh_rows: int = 0
    live_tables: int = 0
    fresh_tables: int = 0
    differences: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(self.differences.values())

    def summary(self) -> str:
        lines = [
            f"hand history: live {self.live_rows:,} rows, rebuilt from the log "
            f"{self.fresh_rows:,}; tables live {self.live_tables:,}, rebuilt "
            f"{self.fresh_tables:,} ({self.seconds:.2f} s)",
            "positions: " + ", ".join(f"{k} {v:,}" for k, v in sorted(self.positions.items())),
        ]
        for name, n in self.differences.items():
            lines.append(f"  {name:<10} {'identical' if n == 0 else f'{n:,} DIFFER'}")
        lines += [f"  {e}" for e in self.examples[:10]]
        lines.append("IDENTICAL: the live history equals the log" if self.ok else "DIFFERENT")
        return "\n".join(lines)


@dataclass(slots=True)
class Rebuilt:
    """The history folded from the log alone up to given positions."""

    positions: dict[PositionKey, Position]
    facts: list[TableFacts]
    rows: list[HandRow]


async def fold_log(event_log: EventLog, upto: dict[PositionKey, Position]) -> Rebuilt:
    """Every row the projection writes for the log up to ``upto`` (offset 0 where absent),
    in memory, with the same fold."""
    facts: dict[str, TableFacts] = {}
    lobby_end = upto.get(LOBBY, Position(0, 0)).next_offset
    async for r in read_through(event_log, LOBBY_EVENTS, 0, 0, lobby_end):
        found = table_facts(r)
        if found is not None:
            facts.setdefault(found.table_id, found)
    positions: dict[PositionKey, Position] = {LOBBY: Position(lobby_end, lobby_end)}
    ended = []
    for p in range(await event_log.partition_count(TABLE_EVENTS)):
        end = upto.get((TABLE_EVENTS, p), Position(0, 0)).next_offset
        fold = HandsFold(p)
        async for r in read_through(event_log, TABLE_EVENTS, p, 0, end):
            fold.fold(r)
        fold.position = end
        ended += fold.take_ended()
        positions[(TABLE_EVENTS, p)] = Position(end, fold.open_from)
    return Rebuilt(positions, list(facts.values()), rows_for(ended, facts))


def _compare(
    name: str,
    live: dict[object, object],
    fresh: dict[object, object],
    report: RebuildReport,
) -> None:
    differing = [k for k in live.keys() | fresh.keys() if live.get(k) != fresh.get(k)]
    report.differences[name] = len(differing)
    for k in sorted(differing, key=repr)[:5]:
        report.examples.append(f"{name} {k}: live {live.get(k)!r} != log {fresh.get(k)!r}")


def _figures(rows: list[HandRow]) -> dict[object, object]:
    """Every player's figures over all their rows."""
    by_player: dict[str, list[HandRow]] = {}
    for r in rows:
        by_player.setdefault(r.player, []).append(r)
    out: dict[object, PlayerFigures] = {p: figures(rs) for p, rs in by_player.items()}
    return dict(out)


async def rebuild(
    event_log: EventLog,
    store: HistoryStore,
    fold: Callable[[EventLog, dict[PositionKey, Position]], Awaitable[Rebuilt]] = fold_log,
) -> RebuildReport:
    """Fold the log up to the live positions and compare every row with the live store."""
    began = time.perf_counter()
    snapshot = await store.snapshot()
    fresh = await fold(event_log, snapshot.positions)
    report = RebuildReport(
        live_rows=len(snapshot.rows),
        fresh_rows=len(fresh.rows),
        live_tables=len(snapshot.facts),
        fresh_tables=len(fresh.facts),
        positions={f"{t}/{p}": pos.next_offset for (t, p), pos in snapshot.positions.items()},
    )
    _compare(
        "hands",
        {(r.hand_id, r.seat): r for r in snapshot.rows},
        {(r.hand_id, r.seat): r for r in fresh.rows},
        report,
    )
    _compare("figures", _figures(snapshot.rows), _figures(fresh.rows), report)
    _compare(
        "tables",
        {f.table_id: f for f in snapshot.facts},
        {f.table_id: f for f in fresh.facts},
        report,
    )
    live_positions = {k: v for k, v in snapshot.positions.items()}
    fresh_positions = {k: v for k, v in fresh.positions.items() if k in live_positions}
    _compare("positions", dict(live_positions), dict(fresh_positions), report)
    report.seconds = time.perf_counter() - began
    return report
