"""The hand aggregate: ``decide`` a command into events, ``legal_actions``, ``start_hand``.

Data flows one way: command → validate → events → apply. ``handle`` validates fully before it
emits anything, so a rejected command leaves the state untouched; each emitted event is
applied at once, so the automatic follow-ups (draws, windows, settlement) see the state they
follow. ``decide`` is the pure form: it works on a copy.
"""

from __future__ import annotations

from itertools import chain, combinations_with_replacement, repeat
from typing import Any, Literal

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from schemas.codes import RuleCode
from services.rules.analysis import POW5, best_reading
from services.rules.claims import can_rob, claims_on, may_call, seats_after
from services.rules.pause import pause_or_resume, refused_while_paused
from services.rules.settlement import placements, settle_exhaustion
from services.rules.shuffle import Deal, commitment
from services.rules.state import APPLY_OWN, HU, KONG, PUNG, HandState, Window
from services.rules.tiles import INDEX, NAMES, SUITS
from services.rules.timeouts import can_self_draw, default_command, legal_discards

PRESET = "Planet-Blood-Battle-v1"
CONCEALED_KONG_FEE, ADDED_KONG_FEE, EXPOSED_KONG_FEE = 2, 1, 2


def _reject(code: RuleCode, reason: str, **params: str | int) -> cmd.Rejection:
    return cmd.Rejection(code=code, reason=reason, params=params)


class _Log:
    """Emits events: each gets the next seq, is applied to the state, and is collected."""

    __slots__ = ("command_id", "events", "state")

    def __init__(
        self, state: HandState, command_id: str = "", events: list[ev.Event] | None = None
    ) -> None:
        self.state = state
        self.command_id = command_id
        self.events: list[ev.Event] = [] if events is None else events

    def emit(self, event_type: type[Any], /, **fields: Any) -> None:
        s = self.state
        self.push(
            event_type(
                table_id=s.table_id,
                hand_id=s.hand_id,
                seq=s.seq + 1,
                command_id=self.command_id,
                **fields,
            )
        )

    def push(self, event: ev.Event) -> None:
        """Apply and collect an event the caller built with the state's ids, the next seq and
        ``command_id`` (``emit`` does that; the hottest events are built in place instead, which
        saves packing their fields into a dict twice)."""
        s = self.state
        # What ``apply`` does, minus its checks: an event built here always fits the state.
        APPLY_OWN[type(event)](s, event)
        s.seq = event.seq
        self.events.append(event)


# --- starting a hand -----------------------------------------------------------------------


def start_hand(
    table_id: str,
    hand_id: str,
    deal: Deal,
    players: list[str] | None = None,
    seed: bytes | None = None,
    preset: str = PRESET,
    command_id: str = "",
    clock: str | None = None,
    rated: bool = False,
    computer_seats: list[int] | None = None,
    pace: str = "normal",
) -> tuple[HandState, list[ev.Event]]:
    """A new hand's state and its opening events (started, four deals, the sealed wall)."""
    state = HandState(table_id=table_id, hand_id=hand_id)
    log = _Log(state, command_id)
    log.emit(
        ev.HandStarted,
        preset=preset,
        seats=players if players is not None else [f"seat-{i}" for i in range(4)],
        commitment=None if seed is None else commitment(seed),
        clock=clock,
        rated=rated,
        computer_seats=computer_seats or [],
        pace=pace,
    )
    name = NAMES.__getitem__
    for seat, tiles in enumerate(deal.hands):
        log.emit(ev.TilesDealt, seat=seat, tiles=list(map(name, tiles)))
    log.emit(
        ev.WallBuilt,
        tiles=list(map(name, deal.wall)),
        direction=deal.direction,
        seed=None if seed is None else seed.hex(),
    )
    return state, log.events


# --- the public API ------------------------------------------------------------------------


def decide(state: HandState, command: cmd.HandCommand) -> list[ev.Event] | cmd.Rejection:
    """The events a command causes, or why it is refused. Pure: ``state`` is not changed."""
    return handle(state.copy(), command)


def handle(state: HandState, command: cmd.HandCommand) -> list[ev.Event] | cmd.Rejection:
    """Decide and apply in one step (the fast path for the single writer of a hand).

    On a rejection nothing was applied. On success the returned events have been applied;
    they carry the command's ``command_id``.
    """
    handler = _HANDLERS.get(type(command))
    # The usual command passes _common_checks at a glance (a seat number of a seat still in
    # a dealt hand not over and not paused, naming no other hand or decision); anything else
    # is looked at closely.
    seat = command.seat
    phase = state.phase
    if (
        handler is None
        or type(seat) is not int
        or not 0 <= seat <= 3
        or phase == "ended"
        or phase == "deal"
        or state.won[seat]
        or command.hand_id
        or command.decision_seq is not None
        or state.paused
    ):
        if isinstance(command, cmd.Pause | cmd.Resume):
            return pause_or_resume(state, command)
        problem = _common_checks(state, command)
        if problem is not None:
            return problem
        if isinstance(command, cmd.Timeout):
            return _timeout(state, command)
        handler = _HANDLERS[type(command)]
    result: list[ev.Event] | cmd.Rejection = handler(state, command, False)
    return result


def pending_seats(state: HandState) -> list[int]:
    """The seats whose decision the hand waits for."""
    if state.phase == "exchange":
        return [s for s in range(4) if state.exchange[s] is None]
    if state.phase == "missing":
        return [s for s in range(4) if state.missing[s] is None]
    if state.phase != "play":
        return []
    if state.window is not None:
        return state.window.pending
    return [] if state.turn is None else [state.turn]


def legal_actions(state: HandState, seat: int) -> list[cmd.HandCommand]:
    """Every command ``seat`` may send now (timeouts aside), each accepted by ``decide``.

    None while the hand is paused (pause and resume are not decisions: not listed)."""
    if state.paused or seat not in pending_seats(state):
        return []
    if state.phase == "exchange":
        return [
            cmd.ChooseExchange(seat=seat, tiles=[NAMES[t] for t in c])
            for c in _triples(state, seat)
        ]
    if state.phase == "missing":
        return [cmd.DeclareMissing(seat=seat, suit=x) for x in SUITS]
    w = state.window
    if w is not None:
        bits = w.claims[seat]
        out: list[cmd.HandCommand] = []
        if bits & HU:
            out.append(cmd.Hu(seat=seat))
        if bits & PUNG:
            out.append(cmd.Pung(seat=seat))
        if bits & KONG:
            out.append(cmd.ClaimKong(seat=seat))
        out.append(cmd.Pass(seat=seat))
        return out
    actions: list[cmd.HandCommand] = []
    if can_self_draw(state, seat):
        actions.append(cmd.Hu(seat=seat))
    actions.extend(cmd.Kong(seat=seat, tile=NAMES[t]) for t in _kong_tiles(state, seat))
    actions.extend(cmd.Discard(seat=seat, tile=NAMES[t]) for t in legal_discards(state, seat))
    return actions


def _triples(state: HandState, seat: int) -> list[tuple[int, ...]]:
    counts = state.counts[seat]
    out: list[tuple[int, ...]] = []
    for s in range(3):
        held = [t for t in range(s * 9, s * 9 + 9) if counts[t]]
        for combo in combinations_with_replacement(held, 3):
            if all(combo.count(t) <= counts[t] for t in set(combo)):
                out.append(combo)
    return out


def _kong_tiles(state: HandState, seat: int) -> list[int]:
    if state.turn_kind == "pung" or not state.wall_left or state.holds_missing(seat):
        return []
    counts = state.counts[seat]
    tiles = {t for t in range(27) if counts[t] == 4}
    tiles |= {m.tile for m in state.melds[seat] if m.kind == "pung" and counts[m.tile]}
    return sorted(tiles)


# --- validation shared by every command ----------------------------------------------------


def _common_checks(state: HandState, c: cmd.HandCommand) -> cmd.Rejection | None:
    if type(c) not in _HANDLERS and not isinstance(c, cmd.Timeout):
        return _reject("unknown_command", f"unknown command {type(c).__name__}")
    seat = c.seat
    if not isinstance(seat, int) or not 0 <= seat <= 3:
        return _reject("bad_seat", f"seat must be 0-3, got {seat!r}", seat=str(seat))
    phase = state.phase
    if phase == "ended":
        return _reject("hand_over", "the hand has ended")
    if phase == "deal":
        return _reject("not_started", "the hand has not been dealt yet")
    if state.won[seat]:
        return _reject("already_won", f"seat {seat} has won and left the hand", seat=seat)
    if c.hand_id and c.hand_id != state.hand_id:
        return _reject("stale_hand", f"hand {c.hand_id} is not the current hand", hand=c.hand_id)
    if c.decision_seq is not None and c.decision_seq != state.decision_seq:
        return _reject(
            "stale_decision",
            f"decision {c.decision_seq} has passed; the pending decision is {state.decision_seq}",
            decision_seq=c.decision_seq,
        )
    return refused_while_paused(state)


def _tile_arg(text: object) -> int | None:
    return INDEX.get(text) if isinstance(text, str) else None


def _not_pending(state: HandState, seat: int) -> cmd.Rejection:
    waiting = pending_seats(state)
    if state.window is not None:
        if seat in state.window.responses:
            return _reject("already_responded", f"seat {seat} already responded", seat=seat)
        return _reject(
            "awaiting_responses",
            f"waiting for seats {waiting} to respond to {NAMES[state.window.tile]}",
            seat=seat,
        )
    return _reject(
        "not_your_turn", f"it is seat {waiting[0] if waiting else '-'}'s decision", seat=seat
    )


# --- opening -------------------------------------------------------------------------------


def _choose_exchange(s: HandState, c: cmd.ChooseExchange, timeout: bool) -> Any:
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
    log = _Log(s, c.command_id)
    name = NAMES.__getitem__
    log.emit(ev.ExchangeChosen, seat=c.seat, tiles=list(map(name, chosen)), timeout=timeout)
    if None not in s.exchange:
        passed = [list(map(name, x)) for x in s.exchange if x is not None]
        assert s.direction is not None
        log.emit(ev.ExchangeResolved, direction=s.direction, passed=passed)
    return log.events


def _declare_missing(s: HandState, c: cmd.DeclareMissing, timeout: bool) -> Any:
    if s.phase != "missing":
        return _reject("not_missing_phase", "missing suits are declared after the exchange")
    if s.missing[c.seat] is not None:
        return _reject("already_declared", f"seat {c.seat} already declared", seat=c.seat)
    if c.suit not in ("m", "p", "s"):
        return _reject("bad_suit", f"not a suit: {c.suit!r}", suit=str(c.suit))
    log = _Log(s, c.command_id)
    log.emit(ev.MissingSuitDeclared, seat=c.seat, suit=c.suit, timeout=timeout)
    if None not in s.missing:
        log.emit(ev.MissingSuitsRevealed, suits=[SUITS[x] for x in s.missing if x is not None])
    return log.events


# --- turn actions --------------------------------------------------------------------------


def _turn_check(s: HandState, seat: int) -> cmd.Rejection | None:
    if s.phase != "play":
        return _reject("opening_not_done", "the exchange and missing suits come first")
    if s.window is not None or s.turn != seat:
        return _not_pending(s, seat)
    return None


def _turn_tile(s: HandState, seat: int, text: str) -> int | cmd.Rejection:
    """The tile of a turn action, or why the action is refused before looking further."""
    problem = _turn_check(s, seat)
    if problem:
        return problem
    t = _tile_arg(text)
    if t is None:
        return _reject("bad_tile", f"not a tile: {text!r}", tile=str(text))
    return t


def _discard(s: HandState, c: cmd.Discard, timeout: bool) -> Any:
    seat = c.seat
    # _turn_tile written out: discards are most decisions.
    if s.phase != "play" or s.window is not None or s.turn != seat:
        return _turn_check(s, seat)  # a rejection in each of these cases
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
    # Discards and the draws after them are two thirds of all events, so this is the
    # engine's hottest path: the discard is built in place and folded into the state right
    # here (what _Log.push and state._tile_discarded do), and so are the window when some
    # seat may claim the tile, or else the next draw (what _next_turn does). Folding them
    # here skips re-reading what the events say; tests/unit/test_engine_fast_paths.py
    # replays every step to hold these folds to state.apply.
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
    # Folding it, as state._tile_discarded does (the tile is known to be held).
    s.counts[seat][t] -= 1
    s.keys[seat][t // 9] -= POW5[t % 9]
    s.discards[seat].append(t)
    s.discard_after_draw = s.turn_kind in ("draw", "replacement")
    s.turn = s.turn_kind = s.drawn = None
    s.seq = s.decision_seq = discarded.seq
    others = _OTHERS[seat]
    bits = claims_on(s, others, t)
    if any(bits):
        claims = {x: b for x, b in zip(others, bits, strict=True) if b}
        opened = ev.ResponseWindowOpened(
            table_id=s.table_id,
            hand_id=s.hand_id,
            seq=s.seq + 1,
            command_id=command_id,
            discarder=seat,
            tile=name,
            seats=list(claims),
        )
        # What folding it does (state._window_opened), with the claims just found rather
        # than found again.
        s.window = Window("discard", t, seat, claims)
        s.seq = s.decision_seq = opened.seq
        return [discarded, opened]
    front, back = s.front, s.back
    if front == back:  # the wall is empty: settle, the general way
        log = _Log(s, command_id, [discarded])
        _next_turn(log, seat)
        return log.events
    x = others[0]
    if s.won[x]:  # next_active, the likely case first
        x = others[1] if not s.won[others[1]] else s.next_active(seat)
    d = s.wall[front]
    drawn = ev.TileDrawn(
        table_id=s.table_id,
        hand_id=s.hand_id,
        seq=s.seq + 1,
        command_id=command_id,
        seat=x,
        tile=NAMES[d],
        wall_left=back - front - 1,
    )
    # Folding it, as state._tile_drawn does for a draw from the front.
    s.front = front + 1
    s.counts[x][d] += 1
    s.keys[x][d // 9] += POW5[d % 9]
    s.turn, s.turn_kind, s.drawn = x, "draw", d
    s.hu_blocked[x] = False
    s.pung_blocked[x] = 0
    s.window = None
    s.seq = s.decision_seq = drawn.seq
    return [discarded, drawn]


_OTHERS = tuple(seats_after(seat) for seat in range(4))
"""``seats_after`` of each seat, looked up on every discard."""


def _kong(s: HandState, c: cmd.Kong, timeout: bool) -> Any:
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
    log = _Log(s, c.command_id)
    if held == 4:
        fees = _fees_from_others(s, c.seat, CONCEALED_KONG_FEE, "concealed_kong")
        log.emit(ev.Konged, seat=c.seat, tile=NAMES[t], kind="concealed", payments=fees)
        _replacement(log, c.seat)
        return log.events
    if held and any(m.kind == "pung" and m.tile == t for m in s.melds[c.seat]):
        robbers = [x for x in seats_after(c.seat) if can_rob(s, x, t)]
        if robbers:
            log.emit(ev.RobbingWindowOpened, declarer=c.seat, tile=NAMES[t], seats=robbers)
        else:
            _complete_added_kong(log, c.seat, t)
        return log.events
    return _reject(
        "no_kong",
        f"a kong of {NAMES[t]} needs four in hand or your pung and one more",
        tile=NAMES[t],
    )


def _hu(s: HandState, c: cmd.Hu, timeout: bool) -> Any:
    if s.phase == "play" and s.window is not None:
        return _respond(s, c, "hu", HU, timeout)
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
    fees = _fees_from_others(s, seat, reading.value + 1, "self_drawn_win")
    log = _Log(s, c.command_id)
    _emit_win(log, seat, s.drawn, None, reading, fees, timeout, hand_counts=s.counts[seat])
    _after_wins(log, seat)
    return log.events


# --- responses -----------------------------------------------------------------------------

_Claim = Literal["hu", "pung", "kong", "pass"]


def _respond(s: HandState, c: cmd.HandCommand, claim: _Claim, bit: int, timeout: bool) -> Any:
    seat = c.seat
    if s.phase != "play":
        return _reject("opening_not_done", "the exchange and missing suits come first")
    w = s.window
    if w is None or seat not in w.claims or seat in w.responses:
        if w is None and claim != "hu":
            return _reject("no_window", f"there is no discard to {claim}")
        if w is None or seat in w.responses:
            return _not_pending(s, seat)
        return _reject(
            "not_asked",
            f"seat {seat} has no legal claim on {NAMES[w.tile]}",
            seat=seat,
            tile=NAMES[w.tile],
        )
    if claim != "pass" and not w.claims[seat] & bit:
        return _claim_refusal(s, seat, claim, w.tile, w.kind)
    log = _Log(s, c.command_id)
    # Built in place (see _Log.push): one response per seat asked on most discards.
    if claim == "pass":
        response: ev.Event = ev.Passed(
            table_id=s.table_id,
            hand_id=s.hand_id,
            seq=s.seq + 1,
            command_id=log.command_id,
            seat=seat,
            timeout=timeout,
        )
    else:
        response = ev.ClaimDeclared(
            table_id=s.table_id,
            hand_id=s.hand_id,
            seq=s.seq + 1,
            command_id=log.command_id,
            seat=seat,
            claim=claim,
            timeout=timeout,
        )
    log.push(response)
    if len(w.responses) == len(w.claims):  # not w.pending: every seat asked has answered
        _resolve(log)
    return log.events


def _claim_refusal(s: HandState, seat: int, claim: str, t: int, kind: str) -> cmd.Rejection:
    name = NAMES[t]
    if kind == "rob" and claim != "hu":
        return _reject("rob_only_hu", "a robbing window allows only hu or pass")
    if not may_call(s, seat, t):
        return _reject("holding_missing", "no call while you hold your missing suit", tile=name)
    if claim == "hu":
        if s.hu_blocked[seat]:
            return _reject("win_blocked", "you passed a win: no win on a discard until you draw")
        return _reject("not_complete", f"{name} does not complete your hand", tile=name)
    if not s.wall_left:
        return _reject("last_discard", "the discard after the last wall tile may only be won on")
    if claim == "pung" and s.counts[seat][t] >= 2:
        return _reject(
            "pung_blocked", f"you passed a pung of {name}: not until you draw", tile=name
        )
    if claim == "pung":
        return _reject("no_pung", f"a pung of {name} needs 2 in your hand", tile=name)
    return _reject("no_kong", f"a kong of {name} needs 3 in your hand", tile=name)


def _pung(s: HandState, c: cmd.Pung, timeout: bool) -> Any:
    return _respond(s, c, "pung", PUNG, timeout)


def _claim_kong(s: HandState, c: cmd.ClaimKong, timeout: bool) -> Any:
    return _respond(s, c, "kong", KONG, timeout)


def _pass(s: HandState, c: cmd.Pass, timeout: bool) -> Any:
    return _respond(s, c, "pass", 0, timeout)


def _resolve(log: _Log) -> None:
    """Every asked seat has answered: wins first, else the one pung/kong, else play on."""
    s = log.state
    w = s.window
    assert w is not None
    # The asked seats in turn order from the discarder: every winner, and the first to pung
    # or kong. (Only asked seats have responses.)
    winners = []
    claimer = None
    for x in seats_after(w.source):
        response = w.responses.get(x)
        if response == "hu":
            winners.append(x)
        elif claimer is None and (response == "pung" or response == "kong"):
            claimer = x
    if winners:
        robbed = w.kind == "rob"
        situational = ["robbing_kong"] if robbed else []
        if not robbed and not s.wall_left and s.discard_after_draw:
            situational.append("last_tile")
        for x in winners:
            counts = s.counts[x][:]
            counts[w.tile] += 1
            reading = best_reading(counts, s.meld_shapes(x), situational)
            reason: ev.PaymentReason = "robbed_kong_win" if robbed else "discard_win"
            fee = [ev.Payment(payer=w.source, payee=x, amount=reading.value, reason=reason)]
            _emit_win(log, x, w.tile, w.source, reading, fee, False, counts)
        _after_wins(log, winners[-1])
        return
    if w.kind == "rob":
        _complete_added_kong(log, w.source, w.tile)
        return
    if claimer is None:
        _next_turn(log, w.source)
        return
    x = claimer
    if w.responses[x] == "pung":
        log.push(
            ev.Punged(
                table_id=s.table_id,
                hand_id=s.hand_id,
                seq=s.seq + 1,
                command_id=log.command_id,
                seat=x,
                from_seat=w.source,
                tile=NAMES[w.tile],
            )
        )
        return
    fee = [ev.Payment(payer=w.source, payee=x, amount=EXPOSED_KONG_FEE, reason="exposed_kong")]
    log.emit(
        ev.Konged, seat=x, tile=NAMES[w.tile], kind="exposed", from_seat=w.source, payments=fee
    )
    _replacement(log, x)


# --- automatic follow-ups ------------------------------------------------------------------


def _fees_from_others(
    s: HandState, seat: int, amount: int, reason: ev.PaymentReason
) -> list[ev.Payment]:
    return [
        ev.Payment(payer=x, payee=seat, amount=amount, reason=reason)
        for x in seats_after(seat)
        if not s.won[x]
    ]


def _emit_win(
    log: _Log,
    seat: int,
    tile: int | None,
    source: int | None,
    reading: Any,
    payments: list[ev.Payment],
    timeout: bool,
    hand_counts: list[int],
) -> None:
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
        payments=payments,
        timeout=timeout,
    )


def _complete_added_kong(log: _Log, seat: int, t: int) -> None:
    fees = _fees_from_others(log.state, seat, ADDED_KONG_FEE, "added_kong")
    log.emit(ev.Konged, seat=seat, tile=NAMES[t], kind="added", payments=fees)
    _replacement(log, seat)


def _replacement(log: _Log, seat: int) -> None:
    s = log.state
    log.emit(
        ev.TileDrawn,
        seat=seat,
        tile=NAMES[s.wall[s.back - 1]],
        replacement=True,
        wall_left=s.wall_left - 1,
    )


def _after_wins(log: _Log, last_winner: int) -> None:
    if log.state.winners() >= 3:
        _end(log, "three_winners")
    else:
        _next_turn(log, last_winner)


def _next_turn(log: _Log, after: int) -> None:
    s = log.state
    front, back = s.front, s.back
    if front == back:
        _exhaust(log)
        return
    log.push(
        ev.TileDrawn(
            table_id=s.table_id,
            hand_id=s.hand_id,
            seq=s.seq + 1,
            command_id=log.command_id,
            seat=s.next_active(after),
            tile=NAMES[s.wall[front]],
            wall_left=back - front - 1,
        )
    )


def _exhaust(log: _Log) -> None:
    result = settle_exhaustion(log.state)
    log.emit(
        ev.WallExhausted,
        ready=result.ready,
        flower_pigs=result.flower_pigs,
        base_values=result.base_values,
    )
    for p in result.payments:
        log.emit(ev.SettlementItem, payment=p)
    _end(log, "wall_exhausted")


def _end(log: _Log, how: str) -> None:
    s = log.state
    log.emit(
        ev.HandEnded, end=how, scores=s.scores[:], placements=placements(s.scores), seed=s.seed
    )


# --- timeouts ------------------------------------------------------------------------------


def _timeout(s: HandState, c: cmd.Timeout) -> list[ev.Event] | cmd.Rejection:
    if c.seat not in pending_seats(s):
        return _reject("no_pending_decision", f"seat {c.seat} has no decision pending", seat=c.seat)
    default = msgspec.structs.replace(default_command(s, c.seat), command_id=c.command_id)
    result: list[ev.Event] | cmd.Rejection = _HANDLERS[type(default)](s, default, True)
    return result


_HANDLERS: dict[type[Any], Any] = {
    cmd.ChooseExchange: _choose_exchange,
    cmd.DeclareMissing: _declare_missing,
    cmd.Discard: _discard,
    cmd.Kong: _kong,
    cmd.Hu: _hu,
    cmd.Pung: _pung,
    cmd.ClaimKong: _claim_kong,
    cmd.Pass: _pass,
}
