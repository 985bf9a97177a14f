"""``BotView``: one seat's view of a hand in the form bots compute with (tile ints, counts).

It holds exactly what ``schemas.views.SeatView`` shows that seat (RULES.md §10) and nothing
else: the seat's own concealed tiles, drawn tile, exchange choice and received tiles, and the
public facts about everyone. There is no field for another seat's concealed tiles, another
seat's exchange choice or the wall, so a bot *cannot* be handed them.

Two ways make one: ``from_seat_view`` converts a ``SeatView`` (the service path), and
``services.bots.tracker.SeatTracker`` keeps one up to date event by event (self-play, where
rebuilding a full view per decision would cost more than the decision). Tests check that the
two agree at every decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from schemas import commands as cmd
from schemas.views import SeatView
from services.rules import INDEX, NUM_TYPES, SUITS, Meld, suit_keys

MeldInfo = Meld
"""A declared group, the record the rules engine keeps: ``kind`` is pung, concealed, added or
exposed (the last three: kongs), ``tile``, ``from_seat``; ``size`` is 3 for a pung, 4 for a
kong. Every group is public, so the seat sees it as the server does."""


@dataclass(slots=True, frozen=True)
class WinInfo:
    """A win as everyone sees it: who, on what, from whom, its value and the revealed hand."""

    seat: int
    tile: int | None
    from_seat: int | None
    value: int
    hand: tuple[int, ...]


@dataclass(slots=True)
class BotView:
    """What one seat knows about a hand now. Bots read it and never change it."""

    seat: int
    hand_id: str = ""
    phase: str = "deal"
    hand: list[int] = field(default_factory=lambda: [0] * NUM_TYPES)
    """The seat's own concealed tiles as 27 counts."""
    keys: list[int] = field(default_factory=lambda: [0, 0, 0])
    """The same tiles as three per-suit base-5 keys (``services.rules.suit_keys``)."""
    drawn: int | None = None
    """The tile this seat just drew, while it is this seat's turn."""
    exchange_chosen: tuple[int, ...] | None = None
    exchange_received: tuple[int, ...] | None = None
    direction: str | None = None
    missing: list[int | None] = field(default_factory=lambda: [None] * 4)
    """Missing suits: one's own once declared, the others' once all four are revealed."""
    concealed: list[int] = field(default_factory=lambda: [0] * 4)
    melds: list[list[MeldInfo]] = field(default_factory=lambda: [[] for _ in range(4)])
    discards: list[list[int]] = field(default_factory=lambda: [[] for _ in range(4)])
    won: list[bool] = field(default_factory=lambda: [False] * 4)
    wins: list[WinInfo] = field(default_factory=list)
    scores: list[int] = field(default_factory=lambda: [0] * 4)
    wall_left: int = 0
    turn: int | None = None
    window: tuple[str, int, int] | None = None
    """An open window as ``(kind, tile, source)``: kind ``discard`` or ``rob``."""
    legal: Sequence[cmd.HandCommand] = field(default_factory=list)
    """This seat's legal actions now (``SeatView.legal_actions``)."""
    seen: list[int] = field(default_factory=lambda: [0] * NUM_TYPES)
    """Public tiles per type: discards on the table, declared groups, winners' revealed hands
    (a tile won by two players on one discard shows in both hands and counts twice)."""

    def unseen(self, t: int) -> int:
        """Copies of ``t`` this seat cannot see anywhere: in the wall or other hands."""
        n = 4 - self.hand[t] - self.seen[t]
        return n if n > 0 else 0


def _ints(tiles: list[str]) -> list[int]:
    return [INDEX[t] for t in tiles]


def from_seat_view(view: SeatView) -> BotView:
    """The ``BotView`` of a ``SeatView`` (a seat's own view; not a spectator's)."""
    if view.seat is None:
        raise ValueError("a bot plays a seat: a spectator's view has no seat")
    me = view.players[view.seat]
    out = BotView(seat=view.seat, hand_id=view.hand_id, phase=view.phase)
    for t in _ints(me.hand or []):
        out.hand[t] += 1
    out.keys = suit_keys(out.hand)
    out.drawn = None if view.drawn is None else INDEX[view.drawn]
    if view.exchange_chosen is not None:
        out.exchange_chosen = tuple(_ints(view.exchange_chosen))
    if view.exchange_received is not None:
        out.exchange_received = tuple(_ints(view.exchange_received))
    out.direction = view.direction
    for p in view.players:
        out.missing[p.seat] = None if p.missing is None else SUITS.index(p.missing)
        out.concealed[p.seat] = p.concealed_count
        out.melds[p.seat] = [MeldInfo(m.kind, INDEX[m.tile], m.from_seat) for m in p.melds]
        out.discards[p.seat] = _ints(p.discards)
        out.won[p.seat] = p.won
        out.scores[p.seat] = p.score
        for t in out.discards[p.seat]:
            out.seen[t] += 1
        for m in out.melds[p.seat]:
            out.seen[m.tile] += m.size
    for w in view.wins:
        hand = tuple(_ints(w.hand))
        tile = None if w.tile is None else INDEX[w.tile]
        out.wins.append(WinInfo(w.seat, tile, w.from_seat, w.value, hand))
        for t in hand:
            out.seen[t] += 1
    out.wall_left = view.wall_left
    out.turn = view.turn
    if view.window is not None:
        out.window = (view.window.kind, INDEX[view.window.tile], view.window.source)
    out.legal = list(view.legal_actions)
    return out
