"""``ClockService``: follow ``table.events``, keep every running decision's deadline, and send
the seat's ``Timeout`` to ``table.commands`` when it passes.

The service holds no state of its own: on taking over a partition it rebuilds the running
clocks from the log (the tail of the active hands, located through ``table.heads``) and fires
at once whatever passed while nobody watched. Timeouts it already sent that the table service
has not read yet are found on ``table.commands`` past the table service's position, so a
restart does not send them again. The table service judges every timeout against its own
state (decision, deadline), and a timeout's command id names its decision, so even a timeout
sent twice is applied once.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

import msgspec
from prometheus_client import Counter, Histogram

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import CommandEnvelope, decode_command, decode_event, encode
from services.runtime.log import EventLog, Outgoing, Processor, Record, read_through
from services.runtime.topics import TABLE_COMMANDS
from services.table.tail import HandFollower

log = logging.getLogger("mahjong.clock")

TIMEOUTS = Counter(
    "mahjong_clock_timeouts_fired",
    "Timeouts sent to table.commands (first: at the deadline; retry: sent again)",
    ["attempt"],
)
FIRING_DELAY = Histogram(
    "mahjong_clock_firing_delay_seconds",
    "How long after it was due (deadline plus grace) a timeout was first sent",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)

LATE_S = 1.0
"""A timeout first sent more than this after it was due fired late: a player waited for it."""

LATE_TIMEOUTS = Counter(
    "mahjong_clock_late_timeouts",
    f"Timeouts first sent more than {LATE_S:g} s after they were due (each logged with its "
    "table and hand: late_timeout)",
)

RETRY_MS = 2_000
"""A timeout that has not taken effect after this long is sent again (same command id)."""


def timeout_id(hand_id: str, decision_seq: int, seat: int) -> str:
    """The command id of a decision's timeout: one per decision and seat, ever."""
    return f"timeout:{hand_id}:{decision_seq}:{seat}"


@dataclass(slots=True)
class Deadline:
    """A seat's running decision and when its timeout is (next) due."""

    table_id: str
    partition: int
    hand_id: str
    seat: int
    decision_seq: int
    due_ms: int  # the deadline plus the lag allowance
    fire_at_ms: int  # due_ms, or a retry after a send


@dataclass(slots=True)
class TableClocks:
    """One table's current hand and its seats' running decisions."""

    hand_id: str
    partition: int
    seats: dict[int, Deadline] = field(default_factory=dict)


class ClockService(HandFollower[TableClocks]):
    """Sends the timeouts of every table whose ``table.events`` partition it is assigned."""

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = "clock-service",
        table_group: str = "table-service",
        now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        retry_ms: int = RETRY_MS,
        max_wait_s: float = 1.0,
    ) -> None:
        super().__init__(event_log, group)
        self.table_group = table_group
        self.now_ms = now_ms
        self.retry_ms = retry_ms
        self.max_wait_s = max_wait_s  # how long the timer sleeps at most (tests speed time up)
        self._heap: list[tuple[int, int, Deadline]] = []
        self._counter = 0
        self._wake = asyncio.Event()
        self.fired = 0
        # Send time past the due time, per timeout sent: the latest ones only, so a
        # long-running service does not grow it forever (the histogram keeps the rest).
        self.delays_ms: deque[int] = deque(maxlen=100_000)

    def counters(self) -> Mapping[str, int]:
        return {"fired": self.fired, "running": self.running()}

    # --- the loops ---------------------------------------------------------------------------

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        """Follow the log: the clocks started and stopped."""
        for partition, records in batch.items():
            self._follow(partition, records)

    @contextlib.asynccontextmanager
    async def beside(self, stop: asyncio.Event) -> AsyncIterator[None]:
        """The timer that fires the timeouts, while the log is followed."""
        timer = asyncio.create_task(self._fire_loop(stop))
        try:
            yield
        finally:
            # Let the timer finish a send in flight (it sees ``stop`` when it wakes), then end it.
            self._wake.set()
            await asyncio.wait({timer}, timeout=5)
            timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)

    async def _fire_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            now = self.now_ms()
            due = self._due(now)
            if due:
                await self._send(due, now)
                continue
            wait_s = self.max_wait_s
            if self._heap:
                wait_s = min(wait_s, max(0.0, (self._heap[0][0] - now) / 1000))
            self._wake.clear()
            waiter = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({waiter}, timeout=wait_s)
            finally:
                waiter.cancel()

    def _due(self, now: int) -> list[Deadline]:
        due = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            fire_at, _, d = heapq.heappop(heap)
            if self._current(d) and d.fire_at_ms == fire_at:
                due.append(d)
        return due

    async def _send(self, due: list[Deadline], now: int) -> None:
        records = []
        first = 0
        for d in due:
            timeout = cmd.Timeout(
                seat=d.seat,
                table_id=d.table_id,
                command_id=timeout_id(d.hand_id, d.decision_seq, d.seat),
                hand_id=d.hand_id,
                decision_seq=d.decision_seq,
            )
            records.append(
                Outgoing(TABLE_COMMANDS, d.table_id, encode(CommandEnvelope(command=timeout)), None)
            )
            if d.fire_at_ms == d.due_ms:
                self.delays_ms.append(now - d.due_ms)
                FIRING_DELAY.observe(max(0, now - d.due_ms) / 1000)
                first += 1
                if now - d.due_ms > LATE_S * 1000:
                    LATE_TIMEOUTS.inc()
                    log.warning(
                        "late_timeout: sent %d ms after it was due",
                        now - d.due_ms,
                        extra={"table_id": d.table_id, "hand_id": d.hand_id, "seat": d.seat},
                    )
            self._arm(d, now + self.retry_ms)
        try:
            await self.log.produce(records)
        except Exception:
            log.exception("could not send %d timeouts; retrying", len(records))
            return
        self.fired += len(records)
        TIMEOUTS.labels("first").inc(first)
        TIMEOUTS.labels("retry").inc(len(records) - first)

    # --- the running clocks ------------------------------------------------------------------

    def _fold(self, partition: int, record: Record) -> bool:
        value = record.value
        if b'"type":"clock_' not in value and b'"type":"hand_' not in value:
            return False  # cheap: most events do not move a clock
        try:
            event = decode_event(value)
        except msgspec.DecodeError:
            return False  # the table service wrote it; nothing here can repair it
        table = self.tables.get(event.table_id)
        if isinstance(event, ev.HandStarted):
            self.tables[event.table_id] = TableClocks(event.hand_id, partition)
        elif table is None or table.hand_id != event.hand_id:
            return False
        elif isinstance(event, ev.ClockStarted):
            for s in event.seats:
                due = s.deadline_ms + event.grace_ms
                d = Deadline(
                    event.table_id, partition, event.hand_id, s.seat, event.decision_seq, due, 0
                )
                table.seats[s.seat] = d
                self._arm(d, due)
        elif isinstance(event, ev.ClockStopped):
            running = table.seats.get(event.seat)
            if running is not None and running.decision_seq == event.decision_seq:
                del table.seats[event.seat]
        elif isinstance(event, ev.HandEnded):
            del self.tables[event.table_id]
        return True

    def _arm(self, d: Deadline, fire_at: int) -> None:
        d.fire_at_ms = fire_at
        self._counter += 1
        heapq.heappush(self._heap, (fire_at, self._counter, d))
        self._wake.set()

    def _current(self, d: Deadline) -> bool:
        table = self.tables.get(d.table_id)
        return table is not None and table.seats.get(d.seat) is d

    def running(self) -> int:
        """How many seats' decisions are being timed."""
        return sum(len(t.seats) for t in self.tables.values())

    # --- assignment --------------------------------------------------------------------------

    async def _assigned(self, partitions: set[int]) -> None:
        assert self.processor is not None
        read_by_tables = await self.log.group_positions(self.table_group, TABLE_COMMANDS)
        for p in sorted(partitions):
            self.processor.seek(p, await self._rebuild(p, read_by_tables.get(p, 0)))

    async def _rebuild(self, partition: int, read_by_tables: int) -> int:
        """Fold the tail of the partition's active hands; the offset to follow from."""
        end = await self._fold_tail(partition)
        await self._skip_in_flight(partition, read_by_tables)
        log.info(
            "clock partition %d: %d seats timed, following from offset %d",
            partition,
            sum(len(t.seats) for t in self.tables.values()),
            end,
        )
        return end

    async def _skip_in_flight(self, partition: int, position: int) -> None:
        """Timeouts sent before a restart that the table service has not read yet (past its
        ``position``) are not sent again at once, only retried if they still have not taken
        effect."""
        now = self.now_ms()
        async for record in read_through(self.log, TABLE_COMMANDS, partition, position):
            try:
                command = decode_command(record.value)
            except msgspec.DecodeError:
                continue
            if not isinstance(command, cmd.Timeout) or command.decision_seq is None:
                continue
            table = self.tables.get(command.table_id)
            d = None if table is None else table.seats.get(command.seat)
            if d is not None and command.command_id == timeout_id(
                d.hand_id, d.decision_seq, d.seat
            ):
                self._arm(d, now + self.retry_ms)
