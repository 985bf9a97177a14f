"""The Service interface, and the loops the services share.

Every service (table, clock, bots, matchmaking, rating, history, the lobby projector and the
gateway) is a ``Service``: ``run(stop)`` until ``stop`` is set, a ``ready`` event, and
``probe()``, a typed snapshot of how it looks from outside. ``/readyz``, ``/metrics`` and
the periodic sampler (``services.runtime.ops``) read ``probe()`` only.

Two loops do the reading:

- ``GroupMember.run``, for the consumer-group members (table, clock, bots, matchmaking):
  join the group, mark ready, then poll a batch and hand it to the service's ``handle``
  until stopped; ``transact`` is the one way their batches are written with the group's
  position in one log transaction (table, matchmaking; docs/exactly-once.md).
- ``run_stored``, for the consumers whose position lives in their store (rating, history,
  the lobby projector): connect, mark ready, step batch after batch, and back off
  (``services.runtime.backoff``) and reconnect or retry when a step fails, as the service
  says.

The members that follow ``table.events`` (clock, computer players) share more:
``services.table.tail.HandFollower``. docs/architecture.md ("Services and topics") has the
table of which service reads and writes which topic.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from services.runtime.backoff import Backoff
from services.runtime.log import EventLog, Processor, Record, Transaction
from services.runtime.progress import Progress

Positions = Callable[[], Awaitable[Mapping[int, int]]]
"""Where a service stands on each input partition: the next offset it will read."""


@dataclass(frozen=True, slots=True)
class Lag:
    """How far a service is behind its input: the log, the topic and its positions on it
    (a function: the table service asks the group's committed positions of the log)."""

    log: EventLog
    topic: str
    positions: Positions

    async def measure(self) -> dict[int, int]:
        """Records between each position and the end of its partition."""
        out = {}
        for partition, position in (await self.positions()).items():
            end = await self.log.end_offset(self.topic, partition)
            out[partition] = max(0, end - position)
        return out


def known(positions: Mapping[int, int]) -> Positions:
    """Positions a service holds in memory."""
    copy = dict(positions)

    async def get() -> Mapping[int, int]:
        return copy

    return get


@dataclass(frozen=True, slots=True)
class Stall:
    """A consumer that stores its own position: how long it has not moved (``Progress``)."""

    topic: str
    seconds: float
    stalled: bool
    reason: str

    @classmethod
    def of(cls, progress: Progress) -> Stall:
        stalled = progress.stalled
        return cls(progress.topic, progress.stalled_s(), stalled, progress.reason())


@dataclass(frozen=True, slots=True)
class Health:
    """A service seen from outside at one moment."""

    started: bool
    """Its ``ready`` event: started, connected, rebuilt."""
    partitions: frozenset[int] | None = None
    """The input partitions it holds (None: a service that holds none, it reads them all)."""
    active: int | None = None
    """Tables with a hand in progress that it holds (``mahjong_active_tables``)."""
    stall: Stall | None = None
    lag: Lag | None = None
    counters: Mapping[str, int] = field(default_factory=dict)
    """What it has done since it started, by name (for tests and tools)."""

    @property
    def stalled(self) -> bool:
        return self.stall is not None and self.stall.stalled

    @property
    def ready(self) -> bool:
        """Started, not stalled, and holding its assignment if it has one."""
        if not self.started or self.stalled:
            return False
        return self.partitions is None or bool(self.partitions)

    @property
    def reason(self) -> str:
        """Why it is not ready ("" when it is)."""
        if self.ready:
            return ""
        if self.stall is not None and self.stall.stalled:
            return self.stall.reason
        if not self.started:
            return "starting"
        return "holds no partition"


class Service(Protocol):
    """What every service is to the process that runs it."""

    ready: asyncio.Event

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set, then leave cleanly."""
        ...

    def probe(self) -> Health:
        """How it looks now (cheap, no I/O: ``/readyz`` answers from it)."""
        ...


# --- consumer-group members ----------------------------------------------------------------


class GroupMember(ABC):
    """A consumer-group member's loop: join, mark ready, poll and ``handle`` until stopped.

    A subclass says what it reads (``group``, ``topic``, ``max_records``, ``poll_s``), how
    it takes partitions over and gives them back (``_assigned``, ``_revoked``), what it does
    with a batch (``handle``) and, if something runs beside the loop, ``beside`` (the
    clock's timer, the bots' paced commands; it ends before the member leaves the group)."""

    max_records = 1000
    poll_s = 0.05

    def __init__(self, event_log: EventLog, group: str, topic: str) -> None:
        self.log = event_log
        self.group = group
        self.topic = topic
        self.processor: Processor | None = None
        self.ready = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        """Handle batches until ``stop`` is set, then leave the group cleanly."""
        processor = self.log.processor(self.group, self.topic, self._assigned, self._revoked)
        self.processor = processor
        await processor.start()
        self.ready.set()
        try:
            async with self.beside(stop):
                while not stop.is_set():
                    batch = await processor.poll(self.max_records, self.poll_s)
                    await self.handle(processor, batch)
        finally:
            await processor.stop()
            self.ready.clear()

    @abstractmethod
    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        """Decide one poll's records (and produce what they make)."""

    @contextlib.asynccontextmanager
    async def beside(self, stop: asyncio.Event) -> AsyncIterator[None]:
        yield

    @abstractmethod
    async def _assigned(self, partitions: set[int]) -> None:
        """Take ``partitions`` over: rebuild their state from the log."""

    @abstractmethod
    async def _revoked(self, partitions: set[int]) -> None:
        """Give ``partitions`` back: drop their state."""

    def held(self) -> frozenset[int]:
        """The partitions it holds now (none before it joined)."""
        return frozenset() if self.processor is None else frozenset(self.processor.assignment())

    def health(
        self,
        *,
        partitions: frozenset[int] | None = None,
        active: int | None = None,
        positions: Positions,
        counters: Mapping[str, int],
    ) -> Health:
        return Health(
            started=self.ready.is_set(),
            partitions=self.held() if partitions is None else partitions,
            active=active,
            lag=Lag(self.log, self.topic, positions),
            counters=counters,
        )


async def transact(
    processor: Processor,
    partition: int,
    next_offset: int,
    write: Callable[[Transaction], Awaitable[None]],
    *,
    holds: Callable[[], bool],
    log: logging.Logger,
    failed: Callable[[], None],
    giving_back: str,
    lost: Callable[[], None] = lambda: None,
) -> bool:
    """``write`` one batch's records in one transaction with the group's position
    ``next_offset`` on ``partition``; whether it committed.

    A failed transaction may or may not have committed, so memory may be ahead of the log:
    ``failed`` undoes what the service counts on (or counts the failure), and unless the
    partition was taken away meanwhile (``holds``; then ``lost``), it is given back
    (``rewind``, logged as ``giving_back`` on the service's ``log``) to be rebuilt from
    the settled log once it is this member's again (docs/exactly-once.md)."""
    try:
        async with processor.transaction(partition, next_offset) as txn:
            await write(txn)
    except Exception:
        failed()
        if not holds():
            lost()
            return False
        log.exception(giving_back)
        await processor.rewind(partition)
        return False
    return True


# --- consumers that store their own position -----------------------------------------------

Step = Callable[[], Awaitable[int]]
"""Read one batch from the stored position, fold it and write it with the position in one
store transaction; how many records it read (0: nothing waits)."""


async def run_stored(
    stop: asyncio.Event,
    ready: asyncio.Event,
    step: Step,
    *,
    idle: Callable[[], Awaitable[None]],
    connect: Callable[[], Awaitable[None]] | None = None,
    step_failed: Callable[[Exception, Backoff], Awaitable[None]] | None = None,
    step_backoff: Callable[[], Backoff] = Backoff,
    reconnect_on: tuple[type[BaseException], ...] = (),
    lost: Callable[[BaseException, float], Awaitable[None]] | None = None,
    backoff: Backoff | None = None,
    fatal: tuple[type[BaseException], ...] = (),
) -> None:
    """The loop of a consumer whose input position lives in its store (rating, history,
    the lobby projector), until ``stop`` is set: ``connect`` (open the store, read the
    stored positions), mark ready, then ``step`` until stopped, waiting in ``idle`` when
    nothing waits.

    - A step that fails with anything but ``reconnect_on`` goes to ``step_failed`` (with a
      backoff that the next good step resets); without one, it ends the loop.
    - ``reconnect_on`` (the store or the log away) makes the consumer not ready: ``lost``
      (close, say so), a pause from ``backoff``, and ``connect`` again. ``fatal`` ends the
      loop whatever ``reconnect_on`` says (a stored position beyond the log's end).

    Whether a failed step committed is for the store to say: every path back reads the
    stored position again (docs/exactly-once.md, "Projections into a database")."""
    backoff = backoff or Backoff()
    while not stop.is_set():
        try:
            if connect is not None:
                await connect()
            ready.set()
            backoff.reset()
            retry = step_backoff()
            while not stop.is_set():
                try:
                    handled = await step()
                except reconnect_on:
                    raise
                except Exception as exc:
                    if step_failed is None:
                        raise
                    await step_failed(exc, retry)
                    continue
                retry.reset()
                if not handled:
                    await idle()
        except fatal:
            raise
        except reconnect_on as exc:
            ready.clear()
            delay = backoff.pause_s()
            if lost is not None:
                await lost(exc, delay)
            await pause(stop, delay)


async def pause(stop: asyncio.Event, seconds: float) -> None:
    """Wait ``seconds``, or less when ``stop`` is set meanwhile."""
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({stopper}, timeout=seconds)
    finally:
        stopper.cancel()


async def idle(event_log: EventLog, topic: str, seconds: float, stop: asyncio.Event) -> None:
    """Wait until ``topic`` may have new records, ``seconds`` pass or ``stop`` is set."""
    waiter = asyncio.ensure_future(event_log.wait_for_change(topic, seconds))
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        stopper.cancel()
