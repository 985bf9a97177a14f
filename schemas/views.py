"""What one seat (or a spectator) may see of a hand: RULES.md §10, as a typed snapshot.

Humans and bots receive the same ``SeatView``. Before the hand ends it holds the seat's own
concealed tiles and only public facts about the others; after the end, everything.
"""

from __future__ import annotations

import msgspec

from schemas.commands import Command
from schemas.events import Event
from schemas.types import Direction, Seat, Suit, Tile


class MeldView(msgspec.Struct, frozen=True, kw_only=True):
    """A declared group. Concealed kongs show their tile type too (RULES.md §5.2)."""

    kind: str  # pung, concealed, added or exposed
    tile: Tile
    from_seat: Seat | None = None


class WinView(msgspec.Struct, frozen=True, kw_only=True):
    """A win with its revealed hand."""

    seat: Seat
    tile: Tile | None
    from_seat: Seat | None
    fan: int
    value: int
    patterns: list[str]
    hand: list[Tile]


class WindowView(msgspec.Struct, frozen=True, kw_only=True):
    """An open response or robbing window: the tile, who offered it, who is still deciding."""

    kind: str  # discard or rob
    tile: Tile
    source: Seat
    pending: list[Seat]


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    """The public facts about one seat."""

    seat: Seat
    player: str
    concealed_count: int
    melds: list[MeldView]
    discards: list[Tile]
    missing: Suit | None  # null until all four have declared (one's own: once declared)
    chose_exchange: bool
    declared_missing: bool
    won: bool
    score: int
    hand: list[Tile] | None = None  # concealed tiles: one's own, or everyone's after the end


class ClockView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's clock: the reserve left and, while it decides, the deadline it runs to."""

    seat: Seat
    reserve_ms: int
    deadline_ms: int | None = None  # server epoch ms; null when the seat is not deciding
    base_ms: int | None = None


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's view of a hand (``seat`` null: a spectator's public view)."""

    table_id: str
    hand_id: str
    seq: int
    seat: Seat | None
    phase: str
    players: list[PlayerView]
    wall_left: int
    direction: Direction | None
    pending: list[Seat]
    turn: Seat | None
    window: WindowView | None
    wins: list[WinView]
    drawn: Tile | None = None  # the tile this seat just drew
    exchange_chosen: list[Tile] | None = None
    exchange_received: list[Tile] | None = None
    legal_actions: list[Command] = []
    end: str | None = None
    ready: list[bool | None] | None = None
    commitment: str | None = None
    seed: str | None = None
    wall: list[Tile] | None = None  # the remaining wall, after the end only
    decision_seq: int = 0  # the pending decision, for commands to name (stale otherwise)
    clock: str | None = None  # the clock preset; null: untimed
    clocks: list[ClockView] = []
    grace_ms: int = 0
    paused: bool = False  # an untimed practice hand its human paused: nobody decides


class HiddenEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="hidden"):
    """An event this seat may not see (yet), in its place in the sequence.

    ``event`` is the hidden event's type, ``seat`` whose it was; ``public`` holds the parts
    everyone may see (``count`` of dealt tiles, a draw's ``replacement`` and ``wall_left``).
    """

    table_id: str
    hand_id: str
    seq: int
    event: str
    seat: int | None = None
    public: dict[str, int | bool] = {}


SeenEvent = Event | HiddenEvent
"""An event of a hand as one seat may see it: whole, or hidden in its place."""
