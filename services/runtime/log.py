"""The event-log port: topics of partitioned, offset-addressed records, as Kafka has them.

Services are written against these types only; ``services.runtime.embedded`` and
``services.runtime.kafka`` adapt them to SQLite and to Apache Kafka.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic: its partition count and how long records live (-1: forever)."""

    name: str
    partitions: int
    retention_ms: int = -1
    compacted: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
class Record:
    """A committed record read from the log."""

    topic: str
    partition: int
    offset: int
    key: str
    value: bytes
    timestamp_ms: int = 0
    """When the log appended it (Kafka's record timestamp; 0: not known, an old record)."""


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A record to append. ``partition`` None means the key's partition (``partition_for``)."""

    topic: str
    key: str
    value: bytes
    partition: int | None = None


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash (the Java client's default partitioner), as a signed 32-bit int."""
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    i = 0
    while length - i >= 4:
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
        i += 4
    left = length - i
    if left >= 3:
        h ^= data[i + 2] << 16
    if left >= 2:
        h ^= data[i + 1] << 8
    if left >= 1:
        h ^= data[i]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: str, partitions: int) -> int:
    """The partition of a key, exactly as Kafka's default partitioner picks it."""
    return (murmur2(key.encode()) & 0x7FFFFFFF) % partitions


class Transaction(Protocol):
    """Records appended together with the input offset they consume: all or nothing."""

    async def send(self, record: Outgoing) -> int:
        """Append a record and return its offset (waits for the log to assign one)."""
        ...

    def send_soon(self, record: Outgoing) -> None:
        """Append a record without waiting for its offset."""
        ...


Assignment = Callable[[set[int]], Awaitable[None]]


class Processor(Protocol):
    """A consumer-group member that reads one topic and writes exactly once.

    ``transaction(partition, next_offset)`` commits its records together with the group's
    position ``next_offset`` on that input partition; after a crash, processing resumes
    from the last committed position and nothing committed is lost or repeated.
    """

    concurrent_partitions: bool
    """Whether transactions of different partitions may run at the same time."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def assignment(self) -> set[int]: ...

    async def poll(self, max_records: int, timeout_s: float) -> dict[int, list[Record]]: ...

    def transaction(
        self, partition: int, next_offset: int
    ) -> AbstractAsyncContextManager[Transaction]: ...

    async def rewind(self, partition: int) -> None:
        """Go back to the last committed position (after a failed transaction)."""
        ...

    def seek(self, partition: int, offset: int) -> None:
        """Read the partition from ``offset`` on (a member that rebuilt its state itself)."""
        ...


class Follower(Protocol):
    """Reads the records appended to some topics after it started (read-committed)."""

    async def start(self) -> None: ...

    async def poll(self, timeout_s: float) -> list[Record]: ...

    async def stop(self) -> None: ...


class EventLog(Protocol):
    """A log of topics. One instance per process; cheap to share between services."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None: ...

    async def partition_count(self, topic: str) -> int: ...

    async def produce(self, records: Sequence[Outgoing]) -> None:
        """Append records outside any transaction (clients sending commands)."""
        ...

    async def read(self, topic: str, partition: int, start: int, limit: int) -> list[Record]:
        """Committed records from ``start`` on (at most ``limit``); empty at the end."""
        ...

    async def end_offset(self, topic: str, partition: int) -> int:
        """One past the last committed offset."""
        ...

    async def wait_for_change(self, topic: str, timeout_s: float) -> None:
        """Return when ``topic`` may have new records, or after ``timeout_s``."""
        ...

    async def group_positions(self, group: str, topic: str) -> dict[int, int]:
        """Where ``group`` resumes reading each partition: its committed positions (absent:
        none)."""
        ...

    def processor(
        self, group: str, topic: str, on_assign: Assignment, on_revoke: Assignment
    ) -> Processor: ...

    def follower(self, topics: Sequence[str]) -> Follower: ...


READ_CHUNK = 5000


async def read_through(
    log: EventLog, topic: str, partition: int, start: int, end: int | None = None
) -> AsyncIterator[Record]:
    """The committed records of a partition from ``start`` up to ``end`` (default: the end
    offset when called)."""
    if end is None:
        end = await log.end_offset(topic, partition)
    position = start
    while position < end:
        records = await log.read(topic, partition, position, READ_CHUNK)
        if not records:
            break
        for r in records:
            if r.offset < end:
                yield r
        position = records[-1].offset + 1
