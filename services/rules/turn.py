"""Play (RULES.md §3): a turn — the draw, the discard, kongs, the self-drawn win — and what
follows on its own: the next draw, a kong's replacement, leaving after a win.

The claims on a discard are ``services.rules.claims``'s; answering and resolving a window is
``services.rules.responses``'s. Deciding functions return the events they emit through a
``Log``, or a refusal; the folds say how each of these events changes the state.
"""

from __future__ import annotations

from itertools import chain, repeat

from schemas import commands as cmd
from schemas import events as ev
from services.rules import payments
from services.rules.claims import can_rob, claims_on
from services.rules.fan import POW5, Reading, best_reading, is_complete
from services.rules.placement import end
from services.rules.settlement import exhaust
from services.rules.state import (
    HU,
    Decided,
    Fold,
    HandState,
    Log,
    Meld,
    Window,
    WinRecord,
    not_pending,
)
from services.rules.state import reject as _reject
from services.rules.tiles import INDEX, NAMES, OTHERS, SUITS, seats_after

# --- what a turn allows --------------------------------------------------------------------


def can_self_draw(state: HandState, seat: int) -> bool:
    """Whether a self-drawn win is legal now for the seat whose turn it is."""
    if state.turn != seat or state.turn_kind not in ("first", "draw", "replacement"):
        return False
    keys = state.keys[seat]
    missing = state.missing[seat]
    return is_complete(keys, len(state.melds[seat]), missing)


def legal_discards(state: HandState, seat: int) -> list[int]:
    """Tile types the seat may discard, sorted (the missing-suit rule applied)."""
    counts = state.counts[seat]
    missing = state.missing[seat]
    if state.holds_missing(seat) and missing is not None:
        return [t for t in range(missing * 9, missing * 9 + 9) if counts[t]]
    return [t for t in range(27) if counts[t]]


def kong_tiles(state: HandState, seat: int) -> list[int]:
    """The tiles the seat may kong now (concealed or added), sorted."""
    if state.turn_kind == "pung" or not state.wall_left or state.holds_missing(seat):
        return []
    counts = state.counts[seat]
    tiles = {t for t in range(27) if counts[t] == 4}
    tiles |= {m.tile for m in state.melds[seat] if m.kind == "pung" and counts[m.tile]}
    return sorted(tiles)


def legal_turn(state: HandState, seat: int) -> list[cmd.HandCommand]:
    """Every turn action of the seat whose turn it is."""
    actions: list[cmd.HandCommand] = []
    if can_self_draw(state, seat):
        actions.append(cmd.Hu(seat=seat))
    actions.extend(cmd.Kong(seat=seat, tile=NAMES[t]) for t in kong_tiles(state, seat))
    actions.extend(cmd.Discard(seat=seat, tile=NAMES[t]) for t in legal_discards(state, seat))
    return actions


# --- deciding ------------------------------------------------------------------------------


def _turn_check(s: HandState, seat: int) -> cmd.Rejection | None:
    if s.phase != "play":
        return _reject("opening_not_done", "the exchange and missing suits come first")
    if s.window is not None or s.turn != seat:
        return not_pending(s, seat)
    return None


def _turn_tile(s: HandState, seat: int, text: object) -> int | cmd.Rejection:
    """The tile of a turn action, or why the action is refused before looking further."""
    problem = _turn_check(s, seat)
    if problem:
        return problem
    t = INDEX.get(text) if isinstance(text, str) else None
    if t is None:
        return _reject("bad_tile", f"not a tile: {text!r}", tile=str(text))
    return t


def discard(s: HandState, c: cmd.Discard, timeout: bool) -> Decided:
    """Discard a tile; then a response window if anyone may claim it, else the next draw.

    Discards and the draws after them are two thirds of all events, so this is the engine's
    hottest path: its events are built in place and handed straight to their folds (what
    ``Log.push`` does, without the log), the window with the claims ``claims_on`` found."""
    seat = c.seat
    problem = _turn_check(s, seat)
    if problem:
        return problem
    text = c.tile
    t = INDEX.get(text) if isinstance(text, str) else None
    if t is None:
        return _reject("bad_tile", f"not a tile: {text!r}", tile=str(text))
    if not s.counts[seat][t]:
        return _reject("tile_not_held", f"you do not hold {NAMES[t]}", tile=NAMES[t])
    missing = s.missing[seat]
    if missing is not None and s.keys[seat][missing] and t // 9 != missing:
        return _reject(
            "must_discard_missing",
            f"discard your missing suit {SUITS[missing]} first",
            suit=SUITS[missing],
        )
    command_id = c.command_id
    name = NAMES[t]
    discarded = ev.TileDiscarded(
        table_id=s.table_id,
        hand_id=s.hand_id,
        seq=s.seq + 1,
        command_id=command_id,
        seat=seat,
        tile=name,
        timeout=timeout,
    )
    _tile_discarded(s, discarded)
    s.seq = discarded.seq
    others = OTHERS[seat]
    bits = claims_on(s, others, t)
    if any(bits):
        opened = ev.ResponseWindowOpened(
            table_id=s.table_id,
            hand_id=s.hand_id,
            seq=s.seq + 1,
            command_id=command_id,
            discarder=seat,
            tile=name,
            seats=[x for x, b in zip(others, bits, strict=True) if b],
            claims=[b for b in bits if b],
        )
        _window_opened(s, opened)
        s.seq = opened.seq
        return [discarded, opened]
    drawn = next_draw(s, seat, command_id)
    if drawn is None:  # the wall is empty: settle, the general way
        log = Log(s, command_id, [discarded])
        exhaust(log)
        return log.events
    _tile_drawn(s, drawn)
    s.seq = drawn.seq
    return [discarded, drawn]


def kong(s: HandState, c: cmd.Kong, timeout: bool) -> Decided:
    """A concealed kong, or an added kong (which first opens a robbing window)."""
    t = _turn_tile(s, c.seat, c.tile)
    if isinstance(t, cmd.Rejection):
        return t
    if s.turn_kind == "pung":
        return _reject("discard_only", "after a pung your turn is one discard")
    if s.holds_missing(c.seat):
        return _reject("holding_missing", "no kong while you hold your missing suit")
    if not s.wall_left:
        return _reject("wall_empty", "no kong without a replacement tile: the wall is empty")
    held = s.counts[c.seat][t]
    log = Log(s, c.command_id)
    if held == 4:
        fees = payments.concealed_kong(s, c.seat)
        log.emit(ev.Konged, seat=c.seat, tile=NAMES[t], kind="concealed", payments=fees)
        replacement(log, c.seat)
        return log.events
    if held and any(m.kind == "pung" and m.tile == t for m in s.melds[c.seat]):
        robbers = [x for x in seats_after(c.seat) if can_rob(s, x, t)]
        if robbers:
            log.emit(ev.RobbingWindowOpened, declarer=c.seat, tile=NAMES[t], seats=robbers)
        else:
            complete_added_kong(log, c.seat, t)
        return log.events
    return _reject(
        "no_kong",
        f"a kong of {NAMES[t]} needs four in hand or your pung and one more",
        tile=NAMES[t],
    )


def self_drawn_hu(s: HandState, c: cmd.Hu, timeout: bool) -> Decided:
    """A self-drawn win on the seat's own turn."""
    problem = _turn_check(s, c.seat)
    if problem:
        return problem
    if s.turn_kind not in ("first", "draw", "replacement"):
        return _reject("discard_only", "after a pung your turn is one discard")
    if s.holds_missing(c.seat):
        return _reject("holding_missing", "no win while you hold your missing suit")
    if not can_self_draw(s, c.seat):
        return _reject("not_complete", "your hand is not complete")
    seat = c.seat
    situational = []
    if s.turn_kind == "replacement":
        situational.append("kong_replacement")
    if s.turn_kind != "first" and not s.wall_left:
        situational.append("last_tile")
    reading = best_reading(s.counts[seat], s.meld_shapes(seat), situational)
    fees = payments.self_drawn_win(s, seat, reading.value)
    log = Log(s, c.command_id)
    emit_win(log, seat, s.drawn, None, reading, fees, timeout, hand_counts=s.counts[seat])
    after_wins(log, seat)
    return log.events


# --- what follows on its own ---------------------------------------------------------------


def emit_win(
    log: Log,
    seat: int,
    tile: int | None,
    source: int | None,
    reading: Reading,
    paid: list[ev.Payment],
    timeout: bool,
    hand_counts: list[int],
) -> None:
    """A win: the winner reveals the hand (``hand_counts``, winning tile included) and leaves."""
    log.emit(
        ev.Won,
        seat=seat,
        tile=None if tile is None else NAMES[tile],
        from_seat=source,
        self_drawn=source is None,
        fan=reading.fan,
        value=reading.value,
        patterns=list(reading.patterns),
        hand=list(chain.from_iterable(map(repeat, NAMES, hand_counts))),  # in tile order
        payments=paid,
        timeout=timeout,
    )


def after_wins(log: Log, last_winner: int) -> None:
    """The hand ends with the third winner; else play goes on after the last winner."""
    if log.state.winners() >= 3:
        end(log, "three_winners")
    else:
        next_turn(log, last_winner)


def complete_added_kong(log: Log, seat: int, t: int) -> None:
    """Nobody robbed the added kong: it is paid and its declarer draws a replacement."""
    fees = payments.added_kong(log.state, seat)
    log.emit(ev.Konged, seat=seat, tile=NAMES[t], kind="added", payments=fees)
    replacement(log, seat)


def replacement(log: Log, seat: int) -> None:
    """A kong's replacement tile, from the back of the wall."""
    s = log.state
    log.emit(
        ev.TileDrawn,
        seat=seat,
        tile=NAMES[s.wall[s.back - 1]],
        replacement=True,
        wall_left=s.wall_left - 1,
    )


def next_turn(log: Log, after: int) -> None:
    """The next active seat after ``after`` draws from the front, or the wall is exhausted."""
    drawn = next_draw(log.state, after, log.command_id)
    if drawn is None:
        exhaust(log)
    else:
        log.push(drawn)


def next_draw(s: HandState, after: int, command_id: str) -> ev.TileDrawn | None:
    """The draw of the next active seat after ``after``; None when the wall is empty."""
    front, back = s.front, s.back
    if front == back:
        return None
    return ev.TileDrawn(
        table_id=s.table_id,
        hand_id=s.hand_id,
        seq=s.seq + 1,
        command_id=command_id,
        seat=s.next_active(after),
        tile=NAMES[s.wall[front]],
        wall_left=back - front - 1,
    )


# --- folding -------------------------------------------------------------------------------


def _tile_drawn(s: HandState, e: ev.TileDrawn) -> None:
    t = INDEX[e.tile]
    seat = e.seat
    if e.replacement:
        s.back -= 1
        s.turn_kind = "replacement"
    else:
        s.front += 1
        s.turn_kind = "draw"
    s.counts[seat][t] += 1  # add_tile, written out: draws are a third of all events
    s.keys[seat][t // 9] += POW5[t % 9]
    s.turn, s.drawn = seat, t
    s.hu_blocked[seat] = False  # "until their next draw" (§3, passing restrictions)
    s.pung_blocked[seat] = 0
    s.window = None
    s.decision_seq = e.seq


def _tile_discarded(s: HandState, e: ev.TileDiscarded) -> None:
    t = INDEX[e.tile]
    seat = e.seat
    counts = s.counts[seat]
    if not counts[t]:
        s.remove_tile(seat, t)  # raises: the seat does not hold the tile
    counts[t] -= 1  # remove_tile, written out: discards are a third of all events
    s.keys[seat][t // 9] -= POW5[t % 9]
    s.discards[seat].append(t)
    s.discard_after_draw = s.turn_kind in ("draw", "replacement")
    s.turn = s.turn_kind = s.drawn = None
    s.decision_seq = e.seq


def _window_opened(s: HandState, e: ev.ResponseWindowOpened) -> None:
    claims = dict(zip(e.seats, e.claims, strict=True))
    s.window = Window("discard", INDEX[e.tile], e.discarder, claims)
    s.decision_seq = e.seq


def _robbing_opened(s: HandState, e: ev.RobbingWindowOpened) -> None:
    s.window = Window("rob", INDEX[e.tile], e.declarer, {x: HU for x in e.seats})
    s.turn = s.turn_kind = None
    s.decision_seq = e.seq


def _konged(s: HandState, e: ev.Konged) -> None:
    t = INDEX[e.tile]
    if e.kind == "concealed":
        s.remove_tile(e.seat, t, 4)
        s.melds[e.seat].append(Meld("concealed", t))
    elif e.kind == "added":
        s.remove_tile(e.seat, t, 1)
        for m in s.melds[e.seat]:
            if m.kind == "pung" and m.tile == t:
                m.kind = "added"
    else:
        s.remove_tile(e.seat, t, 3)
        s.discards[e.from_seat if e.from_seat is not None else -1].pop()
        s.melds[e.seat].append(Meld("exposed", t, e.from_seat))
    for p in e.payments:
        s.pay(p)
        s.kong_income.append(p)
    s.window = None
    s.turn, s.turn_kind, s.drawn = e.seat, "kong", None


def _won(s: HandState, e: ev.Won) -> None:
    w = s.window
    shared = w is not None and w.taken
    if w is not None and not w.taken:
        # The discard (or the robbed kong tile) goes to the winners once, however many win.
        if w.kind == "discard":
            s.discards[w.source].pop()
        else:
            s.remove_tile(w.source, w.tile)
        s.taken.append(w.tile)
        w.taken = True
    s.won[e.seat] = True
    for p in e.payments:
        s.pay(p)
    tile = None if e.tile is None else INDEX[e.tile]
    hand = tuple(map(INDEX.__getitem__, e.hand))
    s.wins.append(
        WinRecord(e.seat, tile, e.from_seat, e.fan, e.value, tuple(e.patterns), hand, shared)
    )
    if s.turn == e.seat:
        s.turn = s.turn_kind = s.drawn = None


FOLDS: dict[type, Fold] = {
    ev.TileDrawn: _tile_drawn,
    ev.TileDiscarded: _tile_discarded,
    ev.ResponseWindowOpened: _window_opened,
    ev.RobbingWindowOpened: _robbing_opened,
    ev.Konged: _konged,
    ev.Won: _won,
}
