"""Reading whole hand logs back from an event log, for assertions."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import TypeVar

import msgspec

from schemas import events as ev
from schemas.table import DeadLetter, ReplyEnvelope, decode_event
from services.runtime.log import EventLog, Record
from services.runtime.topics import TABLE_DLQ, TABLE_EVENTS, TABLE_REPLIES, TOPICS

LogT = TypeVar("LogT", bound=EventLog)


@contextlib.asynccontextmanager
async def started(log: LogT) -> AsyncIterator[LogT]:
    """``log`` started with every topic created, closed afterwards."""
    await log.start()
    await log.create_topics(TOPICS)
    try:
        yield log
    finally:
        await log.close()


async def records(log: EventLog, topic: str) -> list[Record]:
    out: list[Record] = []
    for p in range(await log.partition_count(topic)):
        position = 0
        while True:
            chunk = await log.read(topic, p, position, 5000)
            if not chunk:
                break
            out.extend(chunk)
            position = chunk[-1].offset + 1
    return out


async def hand_logs(log: EventLog) -> dict[tuple[str, str], list[ev.Event]]:
    hands: dict[tuple[str, str], list[ev.Event]] = defaultdict(list)
    for r in await records(log, TABLE_EVENTS):
        e = decode_event(r.value)
        assert r.key == e.table_id
        hands[(e.table_id, e.hand_id)].append(e)
    return dict(hands)


async def replies(log: EventLog) -> list[ReplyEnvelope]:
    return [
        msgspec.json.decode(r.value, type=ReplyEnvelope) for r in await records(log, TABLE_REPLIES)
    ]


async def dead_letters(log: EventLog) -> list[DeadLetter]:
    return [msgspec.json.decode(r.value, type=DeadLetter) for r in await records(log, TABLE_DLQ)]


def assert_exactly_once(hands: dict[tuple[str, str], list[ev.Event]]) -> None:
    """Every hand's events are 1..n in order, none missing, none twice."""
    for key, events in hands.items():
        seqs = [e.seq for e in events]
        assert seqs == list(range(1, len(seqs) + 1)), f"{key}: sequence {seqs[:20]}..."
