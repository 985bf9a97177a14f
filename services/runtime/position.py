"""Stored input positions checked against the log they point into.

A consumer that keeps its position next to its output (the rating store, the lobby list,
the hand history in PostgreSQL) resumes from that position. When the position lies beyond
the end of its topic, the log is not the one the position was taken from: a new broker
with an old database, or a database restored from another cluster. Reading on would fold
records of one history onto state built from another, so the consumer stops and says so.
"""

from __future__ import annotations

import logging

from services.runtime.log import EventLog

log = logging.getLogger("mahjong.position")


class PositionBeyondEnd(RuntimeError):
    """A stored position lies past the end of its topic: log and store do not belong together."""

    def __init__(self, what: str, topic: str, partition: int, position: int, end: int) -> None:
        super().__init__(
            f"{what} says {topic}[{partition}] was read up to offset {position}, but the log "
            f"ends at {end}: this is not the log the store was built from (a new broker with "
            "an old database?)"
        )
        self.what, self.topic, self.partition = what, topic, partition
        self.position, self.end = position, end


async def check_position(
    event_log: EventLog, topic: str, partition: int, position: int, what: str
) -> None:
    """Raise ``PositionBeyondEnd`` when ``position`` (stored by ``what``, e.g. "the rating
    store") is beyond the end of ``topic``'s ``partition``; call it before reading on."""
    end = await event_log.end_offset(topic, partition)
    if position > end:
        raise PositionBeyondEnd(what, topic, partition, position, end)


def refuse_to_mix(service: str, exc: PositionBeyondEnd) -> None:
    """Say why ``service`` stops (its command then exits 1, and a supervisor's restarts
    keep saying it until an operator acts)."""
    log.critical(
        "%s stops: %s. Reading on would mix two histories: point it at the log its store "
        "was built from, or empty the store to rebuild it from this log.",
        service,
        exc,
        extra={"topic": exc.topic, "partition": exc.partition, "offset": exc.position},
    )
