"""Computer reviews of finished hands: requests on ``analysis.requests``, results on
``analysis.results`` (issue 21).

A review looks at every decision a reviewed seat made, from that seat's view at that moment
only (RULES.md §10: no hindsight of hidden tiles), and values each legal option by the expert
computer's estimate of the seat's expected final points. A decision's ``loss`` is the value of
the best option minus the value of the option played; its ``mark`` follows from the loss
(``services.analysis.marks``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from schemas import SCHEMA_VERSION, decode_current
from schemas.commands import Command
from schemas.types import Count, PlayerId, Ref, RequiredRef, Seat, TimeMs

Mark = Literal["best", "inaccuracy", "mistake", "blunder"]
"""How much a decision gave up: best (nothing worth naming), inaccuracy, mistake, blunder."""

DecisionKind = Literal["exchange", "missing", "turn", "claim"]
"""The exchange (RULES.md §2), the missing suit (§3), one's turn (win, kong or discard) and a
response or robbing window (win, pung, kong or pass)."""

Points = Annotated[float, Meta(ge=-1_000_000, le=1_000_000)]
Seats = Annotated[list[Seat], Meta(max_length=4)]


class OptionValue(msgspec.Struct, frozen=True, kw_only=True):
    """One legal option at a decision and its value: the seat's expected final points."""

    option: Command
    value: Points
    screened: bool = False
    """Valued only by the review's coarse first pass (a quarter of the worlds), being clearly
    behind there; it is never the best, and its value is rougher than the others'."""


class ReviewedDecision(msgspec.Struct, frozen=True, kw_only=True):
    """One decision of a reviewed seat.

    ``seq`` is the seq of the first event the played command produced in the hand's log, so
    the replay can put the mark on the step that shows it. ``options`` are sorted best first.
    """

    seat: Seat
    seq: Count
    kind: DecisionKind
    played: Command
    best: Command
    """The expert's choice (the best-valued option)."""
    loss: Points
    """Expected points the played option gave up against the best (≥ 0)."""
    mark: Mark
    options: Annotated[list[OptionValue], Meta(max_length=400)]
    timeout: bool = False
    """The clock played it (the seat's time ran out: RULES.md §8's default action)."""


class SeatReview(msgspec.Struct, frozen=True, kw_only=True):
    """One reviewed seat's summary: its decisions, their marks and an accuracy figure."""

    seat: Seat
    player_id: PlayerId
    decisions: Count
    """Decisions with more than one option (forced ones are not reviewed)."""
    best: Count = 0
    inaccuracies: Count = 0
    mistakes: Count = 0
    blunders: Count = 0
    accuracy: Annotated[float, Meta(ge=0, le=100)]
    """0-100: the share of decisions marked best, weighted down by the points given up
    (``services.analysis.marks.accuracy``)."""
    points_lost: Points = 0.0
    """The sum of the decisions' losses."""


class HandReview(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="hand_review"):
    """The review of one finished hand, for the seats it covers. Keyed by ``hand_id`` on
    ``analysis.results`` (compacted: a later review of the same hand replaces it)."""

    hand_id: RequiredRef
    table_id: RequiredRef
    request_id: Ref = ""
    """The request this answers ("" for a hand reviewed because it finished)."""
    seats: Annotated[list[SeatReview], Meta(max_length=4)]
    decisions: Annotated[list[ReviewedDecision], Meta(max_length=1000)]
    engine: Annotated[str, Meta(max_length=64)] = "expert"
    """Which evaluator valued the options, and how (e.g. ``expert/64-worlds``)."""
    reviewed_at_ms: TimeMs = 0
    v: int = SCHEMA_VERSION


class ReviewRequest(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="review_request"
):
    """Review a finished hand, for the given seats (empty: every human seat). Keyed by
    ``hand_id`` on ``analysis.requests``. ``requested_by`` is the player who asked (empty: the
    analysis service itself, for a hand that finished)."""

    request_id: RequiredRef
    hand_id: RequiredRef
    table_id: RequiredRef
    seats: Seats = []
    requested_by: Annotated[str, Meta(max_length=64)] = ""
    requested_at_ms: TimeMs = 0
    start_offset: Annotated[int, Meta(ge=-1)] = -1
    """Where the hand's log starts in its ``table.events`` partition, when the sender knows
    (-1: not known; the analysis service then reads the partition from its start)."""
    v: int = SCHEMA_VERSION


_review_decoder = msgspec.json.Decoder(HandReview)
_request_decoder = msgspec.json.Decoder(ReviewRequest)
_encoder = msgspec.json.Encoder()


def encode(record: HandReview | ReviewRequest) -> bytes:
    """The JSON bytes of a review or a request, as they go on their topic."""
    return _encoder.encode(record)


def decode_review(raw: bytes) -> HandReview:
    """A review from ``analysis.results``; raises ``msgspec.DecodeError`` when it is not one."""
    return decode_current(_review_decoder, raw)


def decode_request(raw: bytes) -> ReviewRequest:
    """A request from ``analysis.requests``; raises ``msgspec.DecodeError`` when it is not one."""
    return decode_current(_request_decoder, raw)
