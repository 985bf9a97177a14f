"""Where the active hands of a ``table.events`` partition start, for services that follow
the hand logs (clock, computer players, gateway) and rebuild their state after a restart."""

from __future__ import annotations

import msgspec

from schemas.table import TableHead
from services.runtime.log import EventLog, read_through
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
