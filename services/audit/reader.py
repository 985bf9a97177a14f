"""Reading every hand's log records from ``table.events``, grouped by hand, for the auditor."""

from __future__ import annotations

import msgspec

from services.runtime.log import EventLog
from services.runtime.topics import TABLE_EVENTS


class _Ids(msgspec.Struct):
    table_id: str
    hand_id: str


class _Head(msgspec.Struct):
    event: _Ids


_IDS = msgspec.json.Decoder(_Head)


async def hand_records(
    event_log: EventLog, chunk: int = 10_000
) -> dict[tuple[str, str], list[bytes]]:
    """Every hand's raw records in log order, keyed by (table id, hand id)."""
    hands: dict[tuple[str, str], list[bytes]] = {}
    for p in range(await event_log.partition_count(TABLE_EVENTS)):
        end = await event_log.end_offset(TABLE_EVENTS, p)
        position = 0
        while position < end:
            records = await event_log.read(TABLE_EVENTS, p, position, chunk)
            if not records:
                break
            for r in records:
                ids = _IDS.decode(r.value).event
                hands.setdefault((ids.table_id, ids.hand_id), []).append(r.value)
            position = records[-1].offset + 1
    return hands
