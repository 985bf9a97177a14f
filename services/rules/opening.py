"""Opening (RULES.md §2): the deal of §1.1 into the state, exchange three, the missing suit.

The deciding functions (dispatched by ``services.rules.hand``) return the events they emit
through a ``Log``, or a refusal; the folds say how each opening event changes the state.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

from schemas import commands as cmd
from schemas import events as ev
from services.rules.clock import full_reserve
from services.rules.fan import POW5
from services.rules.state import Clock, Decided, Fold, HandState, Log
from services.rules.state import reject as _reject
from services.rules.tiles import DIRECTION_STEP, INDEX, NAMES, SUITS

# --- deciding ------------------------------------------------------------------------------


def choose_exchange(s: HandState, c: cmd.ChooseExchange, timeout: bool) -> Decided:
    """Exchange three: three tiles of one suit, passed once all four have chosen."""
    if s.phase != "exchange":
        return _reject("not_exchange_phase", "the exchange is over")
    if s.exchange[c.seat] is not None:
        return _reject("already_chosen", f"seat {c.seat} already chose its exchange", seat=c.seat)
    tiles = [INDEX.get(x) if isinstance(x, str) else None for x in c.tiles]
    if len(tiles) != 3 or None in tiles:
        return _reject("exchange_needs_three", "choose exactly three valid tiles")
    chosen = sorted(t for t in tiles if t is not None)
    if chosen[0] // 9 != chosen[2] // 9:  # sorted, so the first and last suit say it all
        return _reject("exchange_one_suit", "the three tiles must be of one suit")
    held = s.counts[c.seat]
    for t in set(chosen):
        if chosen.count(t) > held[t]:
            return _reject("tile_not_held", "you do not hold those tiles")
    log = Log(s, c.command_id)
    name = NAMES.__getitem__
    log.emit(ev.ExchangeChosen, seat=c.seat, tiles=list(map(name, chosen)), timeout=timeout)
    if None not in s.exchange:
        passed = [list(map(name, x)) for x in s.exchange if x is not None]
        assert s.direction is not None
        log.emit(ev.ExchangeResolved, direction=s.direction, passed=passed)
    return log.events


def declare_missing(s: HandState, c: cmd.DeclareMissing, timeout: bool) -> Decided:
    """Declare the missing suit; the four are revealed together."""
    if s.phase != "missing":
        return _reject("not_missing_phase", "missing suits are declared after the exchange")
    if s.missing[c.seat] is not None:
        return _reject("already_declared", f"seat {c.seat} already declared", seat=c.seat)
    if c.suit not in ("m", "p", "s"):
        return _reject("bad_suit", f"not a suit: {c.suit!r}", suit=str(c.suit))
    log = Log(s, c.command_id)
    log.emit(ev.MissingSuitDeclared, seat=c.seat, suit=c.suit, timeout=timeout)
    if None not in s.missing:
        log.emit(ev.MissingSuitsRevealed, suits=[SUITS[x] for x in s.missing if x is not None])
    return log.events


def legal_opening(state: HandState, seat: int) -> list[cmd.HandCommand]:
    """Every exchange choice, or every suit to declare, the seat may send now."""
    if state.phase == "exchange":
        return [
            cmd.ChooseExchange(seat=seat, tiles=[NAMES[t] for t in c])
            for c in _triples(state, seat)
        ]
    return [cmd.DeclareMissing(seat=seat, suit=x) for x in SUITS]


def _triples(state: HandState, seat: int) -> list[tuple[int, ...]]:
    counts = state.counts[seat]
    out: list[tuple[int, ...]] = []
    for s in range(3):
        held = [t for t in range(s * 9, s * 9 + 9) if counts[t]]
        for combo in combinations_with_replacement(held, 3):
            if all(combo.count(t) <= counts[t] for t in set(combo)):
                out.append(combo)
    return out


# --- folding -------------------------------------------------------------------------------


def _hand_started(s: HandState, e: ev.HandStarted) -> None:
    s.table_id, s.hand_id = e.table_id, e.hand_id
    s.preset, s.players, s.commitment = e.preset, list(e.seats), e.commitment
    s.phase = "deal"
    s.rated, s.computer_seats = e.rated, list(e.computer_seats)
    s.clock = None if e.clock is None else Clock(e.clock, reserve=[full_reserve(e.clock)] * 4)


def _tiles_dealt(s: HandState, e: ev.TilesDealt) -> None:
    counts, keys = s.counts[e.seat], s.keys[e.seat]
    for name in e.tiles:  # add_tile, written out for the 53 dealt tiles
        t = INDEX[name]
        counts[t] += 1
        keys[t // 9] += POW5[t % 9]


def _wall_built(s: HandState, e: ev.WallBuilt) -> None:
    s.wall = list(map(INDEX.__getitem__, e.tiles))
    s.front, s.back = 0, len(s.wall)
    s.direction, s.seed = e.direction, e.seed
    s.phase = "exchange"
    s.decision_seq = e.seq


def _exchange_chosen(s: HandState, e: ev.ExchangeChosen) -> None:
    chosen = tuple(map(INDEX.__getitem__, e.tiles))
    for t in chosen:
        s.remove_tile(e.seat, t)
    s.exchange[e.seat] = chosen


def _exchange_resolved(s: HandState, e: ev.ExchangeResolved) -> None:
    step = DIRECTION_STEP[e.direction]
    s.direction = e.direction
    for seat, tiles in enumerate(e.passed):
        for name in tiles:
            s.add_tile((seat + step) % 4, INDEX[name])
    s.phase = "missing"
    s.decision_seq = e.seq


def _missing_declared(s: HandState, e: ev.MissingSuitDeclared) -> None:
    s.missing[e.seat] = SUITS.index(e.suit)


def _missing_revealed(s: HandState, e: ev.MissingSuitsRevealed) -> None:
    s.missing = [SUITS.index(x) for x in e.suits]
    s.phase = "play"
    s.turn, s.turn_kind, s.drawn = 0, "first", None
    s.decision_seq = e.seq


FOLDS: dict[type, Fold] = {
    ev.HandStarted: _hand_started,
    ev.TilesDealt: _tiles_dealt,
    ev.WallBuilt: _wall_built,
    ev.ExchangeChosen: _exchange_chosen,
    ev.ExchangeResolved: _exchange_resolved,
    ev.MissingSuitDeclared: _missing_declared,
    ev.MissingSuitsRevealed: _missing_revealed,
}
