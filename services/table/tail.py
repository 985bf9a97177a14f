"""Where the active hands of a ``table.events`` partition start, for services that follow
the hand logs (clock, computer players, gateway) and rebuild their state after a restart;
``HandFollower``, the consumer-group member that the clock and the computer players are."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar

import msgspec

from schemas.table import TableHead
from services.runtime.log import EventLog, Record, read_through
from services.runtime.service import GroupMember, Health, known
from services.runtime.topics import TABLE_EVENTS, TABLE_HEADS


async def active_tail(log: EventLog, partition: int) -> tuple[int, int]:
    """``(start, end)``: folding ``table.events`` from ``start`` to ``end`` sees every hand
    still being played from its ``hand_started`` on; follow the partition from ``end``.

    The table service writes a hand's head in the transaction that starts it, so a hand
    missing from the heads read here started after ``end_before``: its ``hand_started`` is
    in the range too. Nothing before the oldest active hand is read.
    """
    end_before = await log.end_offset(TABLE_EVENTS, partition)
    start = end_before
    async for record in read_through(log, TABLE_HEADS, partition, 0):
        head = msgspec.json.decode(record.value, type=TableHead)
        if not head.ended:
            start = min(start, head.start_offset)
    return start, await log.end_offset(TABLE_EVENTS, partition)


class OnPartition(Protocol):
    """What a follower holds for one table: at least the partition it came from."""

    partition: int


T = TypeVar("T", bound=OnPartition)


class HandFollower(GroupMember, Generic[T]):
    """A member of a group on ``table.events`` that folds the hands of its partitions into
    ``tables`` and follows them from ``positions`` (clock, computer players). On assignment
    it folds the tail of the active hands (``_fold_tail``) and reads on from its end."""

    def __init__(self, event_log: EventLog, group: str) -> None:
        super().__init__(event_log, group, TABLE_EVENTS)
        self.tables: dict[str, T] = {}
        self.positions: dict[int, int] = {}

    @abstractmethod
    def _fold(self, partition: int, record: Record) -> bool:
        """Fold one event; whether it touched a table this member follows."""

    @abstractmethod
    def counters(self) -> Mapping[str, int]: ...

    def probe(self) -> Health:
        return self.health(
            active=len(self.tables), positions=known(self.positions), counters=self.counters()
        )

    def _follow(self, partition: int, records: list[Record]) -> set[str]:
        """Fold a polled batch (what the tail already held is skipped); the tables touched."""
        start = self.positions.get(partition)
        if start is None:
            return set()  # not ours (any more)
        touched = set()
        for record in records:
            if record.offset >= start and self._fold(partition, record):
                touched.add(record.key)
        self.positions[partition] = max(start, records[-1].offset + 1)
        return touched

    async def _fold_tail(self, partition: int) -> int:
        """Fold the tail of the partition's active hands; the offset to follow from."""
        await self._revoked({partition})
        start, end = await active_tail(self.log, partition)
        self.positions[partition] = start
        async for record in read_through(self.log, TABLE_EVENTS, partition, start, end):
            self._fold(partition, record)
        self.positions[partition] = end
        return end

    async def _revoked(self, partitions: set[int]) -> None:
        for p in partitions:
            self.positions.pop(p, None)
        for table_id in [t for t, x in self.tables.items() if x.partition in partitions]:
            del self.tables[table_id]
