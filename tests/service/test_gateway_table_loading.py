"""The gateway loads a table without holding up the others, and misses nothing meanwhile.

``TableWatcher`` reads a newly watched table's log while its follower goes on folding the
watched ones; records the follower passes during that read are folded before the table
joins. A log whose reads of ``table.events`` can be held (the embedded log, gated) makes the
load slow on purpose.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from schemas import events as ev
from schemas.table import EventEnvelope, TableHead, encode
from services.gateway.tables import TableWatcher
from services.rules.hand import handle, legal_actions, replay, start_hand
from services.rules.selfplay import random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing, Record, partition_for
from services.runtime.topics import TABLE_EVENTS, TABLE_HEADS, TOPICS


class GatedLog(EmbeddedLog):
    """The embedded log, whose reads of ``table.events`` wait while ``open`` is clear."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.open = asyncio.Event()
        self.open.set()
        self.waiting = asyncio.Event()

    async def read(self, topic: str, partition: int, start: int, limit: int) -> list[Record]:
        if topic == TABLE_EVENTS and not self.open.is_set():
            self.waiting.set()
            await self.open.wait()
        return await super().read(topic, partition, start, limit)


class Counter:
    def __init__(self) -> None:
        self.changes = 0

    def table_changed(self) -> None:
        self.changes += 1

    def command_rejected(self, rejection: object) -> None:
        pass


def a_hand(table_id: str, rng: random.Random) -> tuple[HandState, list[ev.Event]]:
    seed = random_seed(rng)
    return start_hand(table_id, f"{table_id}#1", shuffle(seed), seed=seed)


def steps(state: HandState, n: int) -> list[ev.Event]:
    out: list[ev.Event] = []
    for _ in range(n):
        seat = pending_seats(state)[0]
        result = handle(state, legal_actions(state, seat)[0])
        assert isinstance(result, list)
        out += result
    return out


async def append(log: EmbeddedLog, events: list[ev.Event]) -> list[Record]:
    """Append the events to ``table.events`` and return them as the follower reads them."""
    table_id = events[0].table_id
    p = partition_for(table_id, await log.partition_count(TABLE_EVENTS))
    start = await log.end_offset(TABLE_EVENTS, p)
    await log.produce(
        [Outgoing(TABLE_EVENTS, table_id, encode(EventEnvelope(event=e))) for e in events]
    )
    if isinstance(events[0], ev.HandStarted):
        head = TableHead(
            table_id=table_id,
            hand_id=events[0].hand_id,
            hands_started=1,
            events_partition=p,
            start_offset=start,
        )
        await log.produce([Outgoing(TABLE_HEADS, table_id, encode(head))])
    return await EmbeddedLog.read(log, TABLE_EVENTS, p, start, len(events) + 10)  # not gated


def test_loading_a_table_does_not_hold_up_the_others_and_misses_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        log = GatedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        watcher = TableWatcher(log)
        await watcher.start()
        rng = random.Random(3)
        a, a_events = a_hand("table-a", rng)
        b, b_events = a_hand("table-b", rng)
        await append(log, a_events)
        await append(log, b_events)  # before the gateway's follower began: from table.heads
        watching_a = Counter()
        await watcher.watch("table-a", watching_a)

        log.open.clear()  # table-b's load now stops at its first read of table.events
        loading = asyncio.create_task(watcher.watch("table-b", Counter()))
        await asyncio.wait_for(log.waiting.wait(), 10)
        more_a, more_b = steps(a, 4), steps(b, 4)
        # Neither waits for table-b's load (a lock held over it would stall both).
        await asyncio.wait_for(watcher.on_records(await append(log, more_a)), 5)
        await asyncio.wait_for(watcher.on_records(await append(log, more_b)), 5)
        assert watching_a.changes == 1  # table-a's watchers heard at once
        assert not loading.done()

        log.open.set()
        loaded = await asyncio.wait_for(loading, 10)
        assert loaded.events == b_events + more_b
        assert loaded.state == replay(b_events + more_b)
        assert watcher.tables["table-a"].events == a_events + more_a
        await log.close()

    asyncio.run(go())
