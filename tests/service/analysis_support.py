"""What the analysis service tests share: hands written to ``table.events`` as the table
service would, a quick evaluator (module level, so a worker process can import it), and the
reviews read back."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Sequence

from schemas import analysis as an
from schemas import commands as cmd
from schemas import events as ev
from schemas.table import EventEnvelope, encode
from services.bots import BotView
from services.rules import INDEX
from services.runtime.log import EventLog, Outgoing
from services.runtime.topics import ANALYSIS_DLQ, ANALYSIS_RESULTS, TABLE_EVENTS
from tests.analysis_hands import play_logged_hand
from tests.service.logs import records


def edge_value(
    view: BotView, options: Sequence[cmd.HandCommand]
) -> list[tuple[cmd.HandCommand, float]]:
    """A made-up valuation: a discard costs 0.4 points a step from the nearer end of its suit."""
    out = []
    for c in options:
        value = 0.0
        if isinstance(c, cmd.Discard):
            rank = INDEX[c.tile] % 9
            value = -0.4 * min(rank, 8 - rank)
        out.append((c, value))
    return out


def paced_edge_value(
    seconds: float, view: BotView, options: Sequence[cmd.HandCommand]
) -> list[tuple[cmd.HandCommand, float]]:
    """``edge_value``, taking ``seconds`` a decision (bound with ``functools.partial``, which
    a worker process can unpickle, unlike a closure)."""
    time.sleep(seconds)
    return edge_value(view, options)


slow_edge_value = functools.partial(paced_edge_value, 0.02)
"""20 ms a decision: a review of about a second, long enough to be killed in the middle of."""
glacial_edge_value = functools.partial(paced_edge_value, 1.0)
"""A second a decision: a review of about a minute, which a stopping service must not wait for."""


def hand(n: int, *, computers: list[int] | None = None, table: str | None = None) -> list[ev.Event]:
    """A played hand of deal ``n``: hand ``<table>#1`` (default table ``t<n>``)."""
    table_id = table or f"t{n}"
    seed = n.to_bytes(2, "big") * 16
    return play_logged_hand(
        seed, "normal", table_id=table_id, hand_id=f"{table_id}#1", computer_seats=computers
    )


async def write_hands(log: EventLog, hands: Sequence[list[ev.Event]]) -> None:
    """Append the hands' events to ``table.events``, one hand after another."""
    for events in hands:
        await log.produce(
            [Outgoing(TABLE_EVENTS, e.table_id, encode(EventEnvelope(event=e))) for e in events]
        )


async def reviews(log: EventLog) -> dict[str, an.HandReview]:
    """The newest review of each hand on ``analysis.results``."""
    return {r.key: an.decode_review(r.value) for r in await records(log, ANALYSIS_RESULTS)}


async def appended(log: EventLog, topic: str = ANALYSIS_RESULTS) -> int:
    """How many records were ever appended to ``topic`` (compaction keeps only the newest
    of a key; offsets count them all)."""
    return sum([await log.end_offset(topic, p) for p in range(await log.partition_count(topic))])


async def dead_letters(log: EventLog) -> list[str]:
    from services.runtime.dead_letters import decode_letter

    return [decode_letter(r.value).reason for r in await records(log, ANALYSIS_DLQ)]


def main(argv: list[str]) -> None:
    """``python -m tests.service.analysis_support DIR``: the analysis service on the embedded
    log in DIR, reviewing with ``slow_edge_value`` in a worker process, until killed.
    ``... --kafka HOST:PORT GROUP``: only its reviewer, on Kafka, in consumer group GROUP."""
    import asyncio

    from services.analysis.service import AnalysisService
    from services.runtime.embedded import EmbeddedLog
    from services.runtime.kafka import KafkaLog
    from services.runtime.topics import TOPICS

    async def go() -> None:
        log: EventLog
        if argv[0] == "--kafka":
            log, group, follow = KafkaLog(argv[1]), argv[2], False
        else:
            log, group, follow = EmbeddedLog(argv[0]), "analysis", True
        await log.start()
        await log.create_topics(TOPICS)
        service = AnalysisService(log, group=group, evaluate=slow_edge_value, follow_hands=follow)
        await service.run(asyncio.Event())

    asyncio.run(go())


if __name__ == "__main__":
    main(sys.argv[1:])
