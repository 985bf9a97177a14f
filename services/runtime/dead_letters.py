"""Records a consumer cannot apply, set aside on a dead-letter topic with the reason.

A record that is well formed JSON but cannot be applied (a field beyond its bounds, or a
value the store refuses) would otherwise fail every transaction that holds it, and every
record after it would wait. It goes to ``<topic>.dlq`` as a ``DeadLetter`` and the consumer's
position moves past it. Only a *poison* record is set aside: a failure of the store itself
(the database away, a connection lost, a serialisation conflict) is retried with backoff,
since the same record will apply once the database is back. An error of an unknown kind is
retried too: a bug must stall a consumer (and raise the stall alert), not empty its input
into the dead-letter topic.
"""

from __future__ import annotations

import sqlite3

import msgspec
from prometheus_client import Counter

from schemas.table import DeadLetter, encode
from services.runtime.log import EventLog, Outgoing, Record, TopicSpec

DEAD_LETTERS = Counter(
    "mahjong_dead_letters",
    "Records set aside on a dead-letter topic, by the service and its input topic",
    ["service", "topic"],
)

RAW_LIMIT = 10_000
"""Characters of the raw record kept in the letter."""


def dead_letter_topic(topic: str) -> str:
    """Where records of ``topic`` that cannot be applied go."""
    return f"{topic}.dlq"


async def create_topic(event_log: EventLog, topic: str) -> None:
    """Create ``topic``'s dead-letter topic if it is missing (a test or ``--topic`` input
    that ``services.runtime.topics`` does not list); kept for ever, like its letters'
    offsets, which recompute reads."""
    await event_log.create_topics(
        [
            TopicSpec(
                dead_letter_topic(topic),
                1,
                description=f"records of {topic} that could not be applied, with the reason",
            )
        ]
    )


def letter(record: Record, reason: str) -> DeadLetter:
    """The dead letter of ``record``."""
    return DeadLetter(
        source_topic=record.topic,
        source_partition=record.partition,
        source_offset=record.offset,
        reason=reason,
        raw=record.value.decode("utf-8", "replace")[:RAW_LIMIT],
    )


def outgoing(service: str, record: Record, reason: str) -> Outgoing:
    """The record to append to the dead-letter topic (keyed by the source offset, so a
    letter written twice, after a crash between it and the commit, is recognisable)."""
    DEAD_LETTERS.labels(service, record.topic).inc()
    return Outgoing(
        dead_letter_topic(record.topic),
        f"{record.topic}/{record.partition}@{record.offset}",
        encode(letter(record, reason)),
        0,
    )


def decode_letter(raw: bytes) -> DeadLetter:
    """A letter from a dead-letter topic."""
    return msgspec.json.decode(raw, type=DeadLetter)


def _poison_types() -> tuple[type[BaseException], ...]:
    kinds: list[type[BaseException]] = [
        msgspec.DecodeError,
        OverflowError,
        UnicodeError,
        sqlite3.DataError,
        sqlite3.IntegrityError,
    ]
    try:
        import asyncpg
        from asyncpg.exceptions import _base

        kinds += [
            _base.DataError,  # the client could not encode an argument (beyond int32, ...)
            asyncpg.DataError,  # class 22: out of range, bad characters (NUL), bad input
            asyncpg.IntegrityConstraintViolationError,  # class 23
            asyncpg.ProgramLimitExceededError,  # class 54: a value too large for a row
        ]
    except ImportError:  # pragma: no cover - asyncpg is a dependency
        pass
    return tuple(kinds)


POISON = _poison_types()


def is_poison(exc: BaseException) -> bool:
    """Whether ``exc`` says the data itself cannot be applied (set the record aside), not
    that the store is unavailable or something unknown went wrong (retry)."""
    return isinstance(exc, POISON)
