"""The topics of the platform, their partitions and retention."""

from __future__ import annotations

from services.runtime.log import TopicSpec

TABLE_PARTITIONS = 8

TABLE_COMMANDS = "table.commands"
TABLE_EVENTS = "table.events"
TABLE_HEADS = "table.heads"
TABLE_REPLIES = "table.replies"
TABLE_DLQ = "table.commands.dlq"

WEEK_MS = 7 * 24 * 3600 * 1000

TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec(
        TABLE_COMMANDS,
        TABLE_PARTITIONS,
        retention_ms=WEEK_MS,
        description="commands to tables (hand commands, start_hand), keyed by table id",
    ),
    TopicSpec(
        TABLE_EVENTS,
        TABLE_PARTITIONS,
        retention_ms=-1,
        description="the append-only hand logs, keyed by table id; never deleted",
    ),
    TopicSpec(
        TABLE_HEADS,
        TABLE_PARTITIONS,
        compacted=True,
        description="per table, where its current hand starts in table.events (compacted)",
    ),
    TopicSpec(
        TABLE_REPLIES,
        TABLE_PARTITIONS,
        retention_ms=WEEK_MS,
        description="rejections of commands, with code and reason, keyed by table id",
    ),
    TopicSpec(
        TABLE_DLQ,
        1,
        retention_ms=4 * WEEK_MS,
        description="messages on table.commands that could not be read, with the reason",
    ),
)
