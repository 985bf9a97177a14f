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
    shared: bool = False  # won on the same tile as the win before it (one discard, several wins)


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
    usable_reserve_ms: int | None = None  # of the reserve, what this decision may use (0: a call)


class WaitView(msgspec.Struct, frozen=True, kw_only=True):
    """One tile a ready hand waits on (the waits help, RULES.md §4 and §10).

    ``unseen``: copies the seat cannot see (4 minus its own hand, every declared group, every
    river and every revealed winning hand). ``fan``, ``value`` and ``patterns``: the hand
    won on this tile, without situational fan (kong replacement, robbing a kong, last tile).
    ``discard``: points from the discarder on a discard win; ``self_drawn``: points in all on
    a self-drawn win (value + 1 from each of ``payers`` active opponents, §5.1).
    """

    tile: Tile
    unseen: int
    fan: int
    value: int
    patterns: list[str] = []
    discard: int = 0
    self_drawn: int = 0


class DiscardHint(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate discard: what the hand waits on after it, or how far it is from ready."""

    tile: Tile
    shanten: int  # 0: ready (then ``waits`` lists the waits); n: n tile changes from ready
    waits: list[WaitView] = []


class WaitsHelp(msgspec.Struct, frozen=True, kw_only=True):
    """The waits help (听牌提示) of one seat, from that seat's own view only.

    With 13 tiles (hand and groups): ``shanten`` (0: ready) and the ``waits``. With 14 on the
    seat's turn: ``discards``, one hint per legal discard. ``payers``: the active opponents.
    """

    shanten: int | None = None
    waits: list[WaitView] = []
    discards: list[DiscardHint] = []
    payers: int = 0


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
    waits: WaitsHelp | None = None  # the waits help: the seat's own view only, else null


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
