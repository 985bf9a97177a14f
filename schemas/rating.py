"""The record a finished hand leaves for the rating service, on ``rating.results``.

The table service appends one when a rated hand ends. The rating service checks the flags
again (RULES.md §9: four humans, a clock, a rated table; never practice) and ignores anything
else, so a mistaken producer cannot move a rating.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from schemas import SCHEMA_VERSION, decode_current
from schemas.types import Name, PlayerId, RequiredRef, Seat, TimeMs

POINTS_LIMIT = 1_000_000
"""A hand's score is far below this (RULES.md §5: a hand is worth at most 8 a winner, paid
by at most three seats, a few kongs besides); the bound keeps every value within the int32
columns of the rating store."""

Points = Annotated[int, Meta(ge=-POINTS_LIMIT, le=POINTS_LIMIT)]
Seats = Annotated[list[PlayerId], Meta(min_length=4, max_length=4)]
Scores = Annotated[list[Points], Meta(min_length=4, max_length=4)]


class RatedHandResult(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="rated_hand_result"
):
    """A hand's final scores, with what the rating service needs to decide if it is rated.

    ``players`` and ``points`` are in seat order (seat 0 first); ``points`` are the hand's
    final scores (``hand_ended.scores``). ``hand_id`` is unique: a second result with the
    same ``hand_id`` and variant changes nothing.
    """

    table_id: RequiredRef
    hand_id: RequiredRef
    players: Seats
    """Four player ids, each 1-64 characters without control characters."""
    points: Scores
    """Four scores, each within ±``POINTS_LIMIT``."""
    rated: bool
    """The table was created rated (not casual)."""
    clock: Name | None
    """The table's clock preset (RULES.md §8: bullet, blitz, standard, relaxed); null (or
    ``untimed``) for an untimed table, which is casual."""
    computer_seats: Annotated[list[Seat], Meta(max_length=4)] = []
    """Seats played by computer players; any makes the hand casual."""
    practice: bool = False
    variant: Name = "sichuan"
    preset: Name = "Planet-Blood-Battle-v1"
    ended_at_ms: TimeMs = 0
    """When the hand ended (Unix ms), for display only: ordering is the log's."""
    v: int = SCHEMA_VERSION


_decoder = msgspec.json.Decoder(RatedHandResult)
_encoder = msgspec.json.Encoder()


def encode_result(result: RatedHandResult) -> bytes:
    """The JSON bytes of a result, as they go on ``rating.results``."""
    return _encoder.encode(result)


def decode_result(raw: bytes) -> RatedHandResult:
    """A result from ``rating.results``; raises ``msgspec.DecodeError`` (or its subclass
    ``ValidationError``) when the bytes are not one, a field is out of its bounds (see
    ``RatedHandResult``), or they come from a newer schema. The live service and
    ``ratings recompute`` both read results through this function only."""
    return decode_current(_decoder, raw)
