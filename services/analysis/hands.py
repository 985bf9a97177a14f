"""Finding a finished hand in ``table.events``: its whole log, and who played it.

A hand id is ``<table_id>#<n>`` and a table's events are in the partition of its id
(``partition_for``). The log of a hand runs from its ``hand_started`` to its ``hand_ended``,
interleaved with other tables' events of the same partition.
"""

from __future__ import annotations

from schemas import events as ev
from schemas.table import decode_event
from services.rules import is_computer
from services.runtime.log import EventLog, partition_for, read_through
from services.runtime.topics import TABLE_EVENTS

LOOK_BACK = 2_000_000
"""How far before a ``hand_ended`` its ``hand_started`` is looked for (as the history
projection gives up a hand open that long)."""

BACK_CHUNK = 2000


def table_of(hand_id: str) -> str:
    """The table of a hand id (``table_id#n``); "" when it is not one."""
    table_id, sep, _ = hand_id.rpartition("#")
    return table_id if sep else ""


async def partition_of(log: EventLog, table_id: str) -> int:
    """The ``table.events`` partition of a table."""
    return partition_for(table_id, await log.partition_count(TABLE_EVENTS))


async def hand_log(log: EventLog, hand_id: str, start_offset: int = -1) -> list[ev.Event]:
    """The hand's events from its ``hand_started`` on, up to its ``hand_ended`` if it has
    ended (empty: no such hand). ``start_offset``: where its log starts, if known (else the
    partition is read from its start)."""
    table_id = table_of(hand_id)
    if not table_id:
        return []
    partition = await partition_of(log, table_id)
    events: list[ev.Event] = []
    async for r in read_through(log, TABLE_EVENTS, partition, max(0, start_offset)):
        if r.key != table_id:
            continue
        e = decode_event(r.value)
        if e.hand_id != hand_id:
            if events:
                break  # the table's next hand: this one is complete
            continue
        events.append(e)
        if isinstance(e, ev.HandEnded):
            break
    return events


async def find_start(
    log: EventLog, partition: int, table_id: str, hand_id: str, before: int
) -> tuple[int, ev.HandStarted] | None:
    """The ``hand_started`` of a hand and its offset, looking back from ``before`` (its
    ``hand_ended``'s offset) at most ``LOOK_BACK`` records."""
    end = before
    while end > 0 and before - end < LOOK_BACK:
        begin = max(0, end - BACK_CHUNK)
        records = await log.read(TABLE_EVENTS, partition, begin, end - begin)
        for r in reversed(records):
            if r.offset >= end or r.key != table_id or b'"hand_started"' not in r.value:
                continue
            e = decode_event(r.value)
            if isinstance(e, ev.HandStarted) and e.hand_id == hand_id:
                return r.offset, e
        end = begin
    return None


def human_seats(start: ev.HandStarted) -> list[int]:
    """The seats a person played."""
    return [
        s
        for s, player in enumerate(start.seats)
        if s not in start.computer_seats and not is_computer(player)
    ]


def is_practice(start: ev.HandStarted) -> bool:
    """A practice hand: untimed, unrated, one person against three computers (RULES.md §9;
    what the practice button deals, and the hands its player may pause)."""
    return (
        start.clock is None
        and not start.rated
        and len(human_seats(start)) == 1
        and len(start.computer_seats) == 3
    )
