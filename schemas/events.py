"""Events of a hand: the facts in its append-only log.

Every event carries ``table_id``, ``hand_id`` and ``seq`` (1, 2, 3, … per hand). Some events are
private to one seat or to the server; ``services.rules.visibility`` decides who may see what
(RULES.md §10). Tiles are written in the RULES.md notation (``5s``).
"""

from __future__ import annotations

import typing
from typing import Annotated, Literal

import msgspec

from schemas.types import Direction, Seat, Suit, Tile

PaymentReason = Literal[
    "discard_win",
    "self_drawn_win",
    "robbed_kong_win",
    "concealed_kong",
    "added_kong",
    "exposed_kong",
    "flower_pig",
    "not_ready",
    "kong_refund",
]


class Payment(msgspec.Struct, frozen=True, kw_only=True):
    """Points moving from ``payer`` to ``payee``; always positive."""

    payer: Seat
    payee: Seat
    amount: int
    reason: PaymentReason


class HandEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Fields every event carries; ``command_id`` names the command that caused it, if any."""

    table_id: str
    hand_id: str
    seq: int
    command_id: str = ""


class HandStarted(HandEvent, frozen=True, tag="hand_started"):
    """A hand begins. ``commitment`` is SHA-256 of the secret seed (RULES.md §1.1)."""

    preset: str
    seats: list[str]
    commitment: str | None = None
    dealer: Seat = 0
    clock: str | None = None  # bullet, blitz, standard or relaxed (RULES.md §8); null: untimed
    rated: bool = False
    computer_seats: list[Seat] = []
    pace: str = "normal"  # how fast the computer seats answer: instant, fast, normal, slow


class TilesDealt(HandEvent, frozen=True, tag="tiles_dealt"):
    """One seat's dealt tiles, in dealt order. Private to that seat."""

    seat: Seat
    tiles: list[Tile]


class WallBuilt(HandEvent, frozen=True, tag="wall_built"):
    """The secret rest of the deal: the live wall (front first), the exchange direction and,
    for shuffled hands, the seed. Server-only until the hand ends."""

    tiles: list[Tile]
    direction: Direction
    seed: str | None = None


class ExchangeChosen(HandEvent, frozen=True, tag="exchange_chosen"):
    """A seat set aside its three tiles to pass. Others learn only that it chose."""

    seat: Seat
    tiles: list[Tile]
    timeout: bool = False


class ExchangeResolved(HandEvent, frozen=True, tag="exchange_resolved"):
    """All four chose: the direction is revealed and ``passed[i]`` goes from seat i onward."""

    direction: Direction
    passed: list[list[Tile]]


class MissingSuitDeclared(HandEvent, frozen=True, tag="missing_suit_declared"):
    """A seat declared its missing suit. Others learn only that it declared."""

    seat: Seat
    suit: Suit
    timeout: bool = False


class MissingSuitsRevealed(HandEvent, frozen=True, tag="missing_suits_revealed"):
    """All four declared; their missing suits, by seat. Play starts with the dealer."""

    suits: list[Suit]


class TileDrawn(HandEvent, frozen=True, tag="tile_drawn"):
    """A seat drew a tile: from the front, or from the back as a kong replacement."""

    seat: Seat
    tile: Tile
    replacement: bool = False
    wall_left: int = 0


class TileDiscarded(HandEvent, frozen=True, tag="tile_discarded"):
    """A seat discarded a tile."""

    seat: Seat
    tile: Tile
    timeout: bool = False


CLAIM_HU, CLAIM_PUNG, CLAIM_KONG = 1, 2, 4
"""The bits of a seat's claim rights in ``ResponseWindowOpened.claims``."""

ClaimRights = Annotated[
    int,
    msgspec.Meta(
        ge=0, le=7, description="a seat's legal claims as bits: hu = 1, pung = 2, kong = 4"
    ),
]


class ResponseWindowOpened(HandEvent, frozen=True, tag="response_window_opened"):
    """The seats that have a legal claim on a discard must each respond.

    ``claims[i]`` is what ``seats[i]`` may claim; a seat sees only its own rights (the others'
    read 0) until the hand is over (RULES.md §10). Logs written before the field existed hold
    an empty list; ``services.rules.hand.apply`` works the rights out for those."""

    discarder: Seat
    tile: Tile
    seats: list[Seat]
    claims: list[ClaimRights] = []


class RobbingWindowOpened(HandEvent, frozen=True, tag="robbing_window_opened"):
    """An added kong was declared; the seats that could win on its tile may rob it."""

    declarer: Seat
    tile: Tile
    seats: list[Seat]


class ClaimDeclared(HandEvent, frozen=True, tag="claim_declared"):
    """A seat claimed the tile in an open window; it takes effect when the window resolves."""

    seat: Seat
    claim: Literal["hu", "pung", "kong"]
    timeout: bool = False


class Passed(HandEvent, frozen=True, tag="passed"):
    """A seat passed in an open window (the passing restrictions of RULES.md §3 apply)."""

    seat: Seat
    timeout: bool = False


class Punged(HandEvent, frozen=True, tag="punged"):
    """A seat punged a discard; its turn is one discard."""

    seat: Seat
    from_seat: Seat
    tile: Tile


class Konged(HandEvent, frozen=True, tag="konged"):
    """A kong completed, with its payments (RULES.md §5.2). A replacement draw follows."""

    seat: Seat
    tile: Tile
    kind: Literal["concealed", "added", "exposed"]
    from_seat: Seat | None = None
    payments: list[Payment] = []


class Won(HandEvent, frozen=True, tag="won"):
    """A seat won and leaves the hand.

    ``hand`` is its revealed concealed tiles, winning tile included.
    """

    seat: Seat
    tile: Tile | None
    from_seat: Seat | None
    self_drawn: bool
    fan: int
    value: int
    patterns: list[str]
    hand: list[Tile]
    payments: list[Payment]
    timeout: bool = False


class WallExhausted(HandEvent, frozen=True, tag="wall_exhausted"):
    """The wall ran out with fewer than three winners; the settlement of RULES.md §6 follows.

    ``ready`` is null for winners and false for flower pigs; ``base_values`` is each ready
    player's highest base hand value.
    """

    ready: list[bool | None]
    flower_pigs: list[Seat]
    base_values: list[int | None]


class SettlementItem(HandEvent, frozen=True, tag="settlement_item"):
    """One payment of the exhaustion settlement."""

    payment: Payment


class HandEnded(HandEvent, frozen=True, tag="hand_ended"):
    """The hand is over. The seed is revealed so anyone can audit the shuffle."""

    end: Literal["three_winners", "wall_exhausted"]
    scores: list[int]
    placements: list[int]
    seed: str | None = None


class SeatDeadline(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's allowance for the decision just offered: base time, the reserve it may use
    (0 for call decisions), and the deadline they add up to (server epoch milliseconds)."""

    seat: Seat
    base_ms: int
    reserve_ms: int
    deadline_ms: int


class ClockStarted(HandEvent, frozen=True, tag="clock_started"):
    """Timed hands: decisions were just offered (``decision_seq``) and their clocks run.

    The table service accepts a seat's answer until ``deadline_ms + grace_ms`` (the lag
    allowance); the clock service sends the timeout then.
    """

    decision_seq: int
    at_ms: int
    seats: list[SeatDeadline]
    grace_ms: int = 0


class ClockStopped(HandEvent, frozen=True, tag="clock_stopped"):
    """Timed hands: a seat's decision ended. It used ``used_ms``; ``reserve_ms`` is left."""

    seat: Seat
    decision_seq: int
    used_ms: int
    reserve_ms: int
    timeout: bool = False


class HandPaused(HandEvent, frozen=True, tag="hand_paused"):
    """The human of an untimed practice hand paused it: until ``hand_resumed`` no seat
    decides, and every command but ``resume`` is refused. The pending decision stays
    pending (``decision_seq`` does not move)."""

    seat: Seat


class HandResumed(HandEvent, frozen=True, tag="hand_resumed"):
    """The paused hand continues where it stopped: the same decisions are pending."""

    seat: Seat


Event = (
    HandStarted
    | TilesDealt
    | WallBuilt
    | ExchangeChosen
    | ExchangeResolved
    | MissingSuitDeclared
    | MissingSuitsRevealed
    | TileDrawn
    | TileDiscarded
    | ResponseWindowOpened
    | RobbingWindowOpened
    | ClaimDeclared
    | Passed
    | Punged
    | Konged
    | Won
    | WallExhausted
    | SettlementItem
    | HandEnded
    | ClockStarted
    | ClockStopped
    | HandPaused
    | HandResumed
)

EVENT_TYPES: tuple[type[HandEvent], ...] = typing.get_args(Event)
"""Every event type, in the order of ``Event`` (the one list of them)."""
