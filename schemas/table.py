"""Table-level commands and replies, and the envelopes that carry everything on the log.

Payloads on every topic are JSON: an envelope with the schema version and one typed body.
JSON because every log line is then readable with stock Kafka tools and checkable against
the published JSON Schema; msgspec encodes and decodes it at a few microseconds a message,
far below the broker round trip, so msgpack's smaller size buys nothing we need.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from schemas import SCHEMA_VERSION, decode_current, decode_with
from schemas.codes import TableCode
from schemas.commands import Command
from schemas.events import Event
from schemas.types import Name, PlayerId, Ref, Seat


class StartHand(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="start_hand"):
    """Deal a new hand at a table (the table service draws the seed)."""

    table_id: Ref
    players: Annotated[list[PlayerId], Meta(max_length=4)]
    command_id: Ref = ""
    preset: Name = "Planet-Blood-Battle-v1"
    clock: Name | None = None  # bullet, blitz, standard or relaxed; null: untimed
    rated: bool = False  # needs a clock and four humans (RULES.md §9)
    computer_seats: Annotated[list[Seat], Meta(max_length=4)] = []
    pace: Name = "normal"  # the computer seats' pace: instant, fast, normal or slow
    lobby: bool = False  # tell matchmaking (match.requests) of winners and the hand's end


TableCommand = Command | StartHand


class CommandRejected(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to a command that changed nothing: a stable code, params and a reason."""

    table_id: str
    command_id: str
    seat: int | None
    code: TableCode
    reason: str
    params: dict[str, str | int] = {}


class CommandEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A record on ``table.commands``."""

    command: TableCommand
    v: int = SCHEMA_VERSION


class EventEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A record on ``table.events``."""

    event: Event
    v: int = SCHEMA_VERSION


class ReplyEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A record on ``table.replies``."""

    rejected: CommandRejected
    v: int = SCHEMA_VERSION


class TableHead(msgspec.Struct, frozen=True, kw_only=True):
    """The latest word on a table (compacted topic ``table.heads``): where its current hand's
    log starts, so recovery reads only the tail of active hands."""

    table_id: str
    hand_id: str
    hands_started: int
    events_partition: int
    start_offset: int
    start_command_id: str = ""
    ended: bool = False
    session: StartHand | None = None  # what started the table's current hand
    v: int = SCHEMA_VERSION


class DeadLetter(msgspec.Struct, frozen=True, kw_only=True):
    """A message that could not be read, with why (``table.commands.dlq``)."""

    source_topic: str
    source_partition: int
    source_offset: int
    reason: str
    raw: str
    v: int = SCHEMA_VERSION


_command_decoder = msgspec.json.Decoder(CommandEnvelope)
_event_decoder = msgspec.json.Decoder(EventEnvelope)
_encoder = msgspec.json.Encoder()


def encode(message: msgspec.Struct) -> bytes:
    """JSON bytes of any envelope."""
    return _encoder.encode(message)


def decode_command(raw: bytes) -> TableCommand:
    """A command from ``table.commands``; raises ``msgspec.DecodeError`` (or its subclass
    ``ValidationError``) with a readable reason when the bytes are not a valid command."""
    return decode_current(_command_decoder, raw).command


def decode_event(raw: bytes) -> Event:
    """An event from ``table.events``; raises ``msgspec.DecodeError`` saying why not."""
    return decode_with(_event_decoder, raw).event
