"""``SeatTracker``: one seat's ``BotView``, kept up to date event by event.

Self-play feeds a tracker every event of the hand, and the tracker keeps only what RULES.md
§10 lets its seat see: another seat's dealt tiles become a tile count, its draws a count, its
exchange choice and declaration the fact that it chose; the wall becomes the number of tiles
left. It reads those hidden fields only to discard them. Events it does not know (clocks,
say) are ignored. The tests check that the result equals ``from_seat_view(seat_view(...))``
at every decision, and that scrambling what the seat may not see changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from schemas import events as ev
from services.bots.botview import BotView, MeldInfo, WinInfo
from services.rules import DIRECTION_STEP, INDEX, POW5, SUITS


class SeatTracker:
    """Folds a hand's events into the ``BotView`` of one seat (see the module note)."""

    __slots__ = ("seat", "view")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.view = BotView(seat=seat)

    def observe(self, event: ev.HandEvent) -> None:
        """Take one event of the hand into account; unknown event types are ignored."""
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self.view, event)

    def observe_all(self, events: Iterable[ev.HandEvent]) -> None:
        """``observe`` each event in order."""
        view = self.view
        for event in events:
            handler = _HANDLERS.get(type(event))
            if handler is not None:
                handler(view, event)


def _take(v: BotView, t: int, n: int) -> None:
    """``n`` more (or fewer) of tile ``t`` in the seat's own hand, keys kept in step."""
    v.hand[t] += n
    v.keys[t // 9] += n * POW5[t % 9]


def _hand_started(v: BotView, e: ev.HandStarted) -> None:
    fresh = BotView(seat=v.seat, hand_id=e.hand_id)
    for name in BotView.__slots__:
        setattr(v, name, getattr(fresh, name))


def _tiles_dealt(v: BotView, e: ev.TilesDealt) -> None:
    v.concealed[e.seat] += len(e.tiles)
    if e.seat == v.seat:
        for name in e.tiles:
            _take(v, INDEX[name], 1)


def _wall_built(v: BotView, e: ev.WallBuilt) -> None:
    v.wall_left = len(e.tiles)  # only how many: the tiles, direction and seed stay hidden
    v.phase = "exchange"


def _exchange_chosen(v: BotView, e: ev.ExchangeChosen) -> None:
    v.concealed[e.seat] -= 3
    if e.seat == v.seat:
        chosen = tuple(sorted(INDEX[n] for n in e.tiles))
        for t in chosen:
            _take(v, t, -1)
        v.exchange_chosen = chosen


def _exchange_resolved(v: BotView, e: ev.ExchangeResolved) -> None:
    v.direction = e.direction
    for s in range(4):
        v.concealed[s] += 3
    giver = (v.seat - DIRECTION_STEP[e.direction]) % 4
    received = tuple(INDEX[n] for n in e.passed[giver])
    for t in received:
        _take(v, t, 1)
    v.exchange_received = received
    v.phase = "missing"


def _missing_declared(v: BotView, e: ev.MissingSuitDeclared) -> None:
    if e.seat == v.seat:
        v.missing[e.seat] = SUITS.index(e.suit)


def _missing_revealed(v: BotView, e: ev.MissingSuitsRevealed) -> None:
    v.missing = [SUITS.index(x) for x in e.suits]
    v.phase = "play"
    v.turn = 0


def _tile_drawn(v: BotView, e: ev.TileDrawn) -> None:
    v.wall_left -= 1
    v.concealed[e.seat] += 1
    v.turn = e.seat
    v.window = None
    if e.seat == v.seat:
        t = INDEX[e.tile]
        _take(v, t, 1)
        v.drawn = t
    else:
        v.drawn = None


def _tile_discarded(v: BotView, e: ev.TileDiscarded) -> None:
    t = INDEX[e.tile]
    v.concealed[e.seat] -= 1
    v.discards[e.seat].append(t)
    v.seen[t] += 1
    if e.seat == v.seat:
        _take(v, t, -1)
    v.turn = v.drawn = None


def _window_opened(v: BotView, e: ev.ResponseWindowOpened) -> None:
    v.window = ("discard", INDEX[e.tile], e.discarder)


def _robbing_opened(v: BotView, e: ev.RobbingWindowOpened) -> None:
    v.window = ("rob", INDEX[e.tile], e.declarer)
    v.turn = v.drawn = None


def _punged(v: BotView, e: ev.Punged) -> None:
    t = INDEX[e.tile]
    v.concealed[e.seat] -= 2
    v.discards[e.from_seat].pop()
    v.melds[e.seat].append(MeldInfo("pung", t, e.from_seat))
    v.seen[t] += 2  # the discard was already seen; two more come out of the claimer's hand
    if e.seat == v.seat:
        _take(v, t, -2)
    v.window = None
    v.turn, v.drawn = e.seat, None


_KONG_FROM_HAND = {"concealed": 4, "added": 1, "exposed": 3}


def _konged(v: BotView, e: ev.Konged) -> None:
    t = INDEX[e.tile]
    n = _KONG_FROM_HAND[e.kind]
    v.concealed[e.seat] -= n
    v.seen[t] += n  # an exposed kong's fourth tile was already seen as a discard
    if e.kind == "concealed":
        v.melds[e.seat].append(MeldInfo("concealed", t))
    elif e.kind == "added":
        for m in v.melds[e.seat]:
            if m.kind == "pung" and m.tile == t:
                m.kind = "added"
    else:
        v.discards[e.from_seat if e.from_seat is not None else -1].pop()
        v.melds[e.seat].append(MeldInfo("exposed", t, e.from_seat))
    if e.seat == v.seat:
        _take(v, t, -n)
    for p in e.payments:
        v.scores[p.payer] -= p.amount
        v.scores[p.payee] += p.amount
    v.window = None
    v.turn, v.drawn = e.seat, None


def _won(v: BotView, e: ev.Won) -> None:
    w = v.window
    if w is not None and e.from_seat is not None:
        # The discard (or robbed kong tile) leaves the table once, however many win on it:
        # the window is closed here, so a second winner on the same tile takes nothing more.
        kind, t, source = w
        if kind == "discard":
            v.discards[source].pop()
            v.seen[t] -= 1
        else:
            v.concealed[source] -= 1
            if source == v.seat:
                _take(v, t, -1)
        v.window = None
    hand = tuple(INDEX[n] for n in e.hand)
    for t in hand:
        v.seen[t] += 1
    tile = None if e.tile is None else INDEX[e.tile]
    v.wins.append(WinInfo(e.seat, tile, e.from_seat, e.value, hand))
    v.won[e.seat] = True
    for p in e.payments:
        v.scores[p.payer] -= p.amount
        v.scores[p.payee] += p.amount
    if v.turn == e.seat:
        v.turn = v.drawn = None


def _wall_exhausted(v: BotView, e: ev.WallExhausted) -> None:
    v.window = None
    v.turn = v.drawn = None


def _settlement_item(v: BotView, e: ev.SettlementItem) -> None:
    p = e.payment
    v.scores[p.payer] -= p.amount
    v.scores[p.payee] += p.amount


def _hand_ended(v: BotView, e: ev.HandEnded) -> None:
    v.phase = "ended"
    v.window = None
    v.turn = v.drawn = None


_HANDLERS: dict[type[Any], Callable[[BotView, Any], None]] = {
    ev.HandStarted: _hand_started,
    ev.TilesDealt: _tiles_dealt,
    ev.WallBuilt: _wall_built,
    ev.ExchangeChosen: _exchange_chosen,
    ev.ExchangeResolved: _exchange_resolved,
    ev.MissingSuitDeclared: _missing_declared,
    ev.MissingSuitsRevealed: _missing_revealed,
    ev.TileDrawn: _tile_drawn,
    ev.TileDiscarded: _tile_discarded,
    ev.ResponseWindowOpened: _window_opened,
    ev.RobbingWindowOpened: _robbing_opened,
    ev.Punged: _punged,
    ev.Konged: _konged,
    ev.Won: _won,
    ev.WallExhausted: _wall_exhausted,
    ev.SettlementItem: _settlement_item,
    ev.HandEnded: _hand_ended,
}
