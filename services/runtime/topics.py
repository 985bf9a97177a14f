"""The topics of the platform, their partitions and retention."""

from __future__ import annotations

from services.runtime.log import TopicSpec

TABLE_PARTITIONS = 8

TABLE_COMMANDS = "table.commands"
TABLE_EVENTS = "table.events"
TABLE_HEADS = "table.heads"
TABLE_REPLIES = "table.replies"
TABLE_DLQ = "table.commands.dlq"
RATING_RESULTS = "rating.results"
MATCH_REQUESTS = "match.requests"
LOBBY_EVENTS = "lobby.events"
MATCH_REPLIES = "match.replies"
LOBBY_SNAPSHOTS = "lobby.snapshots"
RATING_DLQ = "rating.results.dlq"
LOBBY_DLQ = "lobby.events.dlq"
ANALYSIS_REQUESTS = "analysis.requests"
ANALYSIS_RESULTS = "analysis.results"
ANALYSIS_DLQ = "analysis.requests.dlq"

ANALYSIS_PARTITIONS = 1
"""Requests and results share this count: a hand's request and its review are in the
partition of the same number, so the member that holds a request partition finds every
review already written for its hands in the results partition of that number. One for now:
the gateway reads partition 0 of both (services/gateway/reviews.py), and one reviewer keeps
up with a few hundred hands an hour; more reviewers need more partitions, read by the
gateway too."""

WEEK_MS = 7 * 24 * 3600 * 1000

TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec(
        MATCH_REQUESTS,
        1,  # one partition: one matchmaker sees every seat and queue entry, in one order
        retention_ms=WEEK_MS,
        description="requests to matchmaking (create, join, leave, play again, quick play, "
        "arrive at table), and player_won / table_finished from the table service",
    ),
    TopicSpec(
        LOBBY_EVENTS,
        1,
        retention_ms=-1,
        description="the lobby's log: tables opened, seats taken and left, tables found, "
        "dealt, between hands and closed, the Quick Play queue",
    ),
    TopicSpec(
        LOBBY_SNAPSHOTS,
        1,
        compacted=True,
        description="the whole lobby now and then, with the lobby.events offset it covers "
        "(compacted: recovery reads the newest and the events after it)",
    ),
    TopicSpec(
        MATCH_REPLIES,
        1,
        retention_ms=WEEK_MS,
        description="refused matchmaking requests, with code, params and reason",
    ),
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
    TopicSpec(
        RATING_RESULTS,
        1,  # one partition: one fixed order in which ratings are applied (RULES.md §9)
        retention_ms=-1,
        description="results of rated hands, in the order ratings apply them; never deleted",
    ),
    TopicSpec(
        RATING_DLQ,
        1,
        retention_ms=-1,  # recompute ignores the offsets the store refused: keep them
        description="records of rating.results the rating service could not apply, with "
        "the reason (out of bounds, or refused by the store); their offsets are skipped",
    ),
    TopicSpec(
        LOBBY_DLQ,
        1,
        retention_ms=4 * WEEK_MS,
        description="records of lobby.events the lobby projector could not read, with the reason",
    ),
    TopicSpec(
        ANALYSIS_REQUESTS,
        ANALYSIS_PARTITIONS,
        retention_ms=WEEK_MS,
        description="requests for a computer review of a finished hand, keyed by hand id: "
        "from the analysis service for every hand with a human that was not practice, and "
        "from the gateway for any hand a player asks about",
    ),
    TopicSpec(
        ANALYSIS_RESULTS,
        ANALYSIS_PARTITIONS,
        compacted=True,
        description="computer reviews of hands (HandReview), keyed by hand id (compacted: "
        "a later review of a hand, covering more seats, replaces the earlier one)",
    ),
    TopicSpec(
        ANALYSIS_DLQ,
        1,
        retention_ms=4 * WEEK_MS,
        description="analysis requests that could not be reviewed (unreadable, no such hand, "
        "or a hand that has not ended), with the reason",
    ),
)
