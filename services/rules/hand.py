"""The hand: ``start_hand``, ``decide``/``handle`` a command into events, ``apply`` an event,
``replay`` a log, ``legal_actions``. Thin dispatchers over the section modules.

Data flows one way: command → validate → events → fold. ``handle`` validates fully before it
emits anything, so a rejected command leaves the state untouched; each emitted event is
folded at once, so the automatic follow-ups (draws, windows, settlement) see the state they
follow. ``decide`` is the pure form: it works on a copy. ``apply`` only folds what an event
says; each section module (opening, turn, responses, settlement, placement, clock, practice)
keeps the folds of its own events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from services.rules import (
    clock,
    opening,
    placement,
    practice,
    responses,
    settlement,
    timeouts,
    turn,
)
from services.rules.claims import claims_on
from services.rules.shuffle import Deal, commitment
from services.rules.state import Decided, Fold, HandState, Log, ReplayError, pending_seats
from services.rules.state import reject as _reject
from services.rules.tiles import INDEX, NAMES

PRESET = "Planet-Blood-Battle-v1"

FOLDS: dict[type[Any], Fold] = {
    **opening.FOLDS,
    **turn.FOLDS,
    **responses.FOLDS,
    **settlement.FOLDS,
    **placement.FOLDS,
    **clock.FOLDS,
    **practice.FOLDS,
}
"""The fold of every event type, each from the section module that owns the event."""
Log.folds = FOLDS


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
    log = Log(state, command_id)
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


# --- deciding ------------------------------------------------------------------------------


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
            return practice.pause_or_resume(state, command)
        problem = _common_checks(state, command)
        if problem is not None:
            return problem
        if isinstance(command, cmd.Timeout):
            return _timeout(state, command)
        handler = _HANDLERS[type(command)]
    result: Decided = handler(state, command, False)
    return result


def _hu(s: HandState, c: cmd.Hu, timeout: bool) -> Decided:
    """``hu`` answers an open window, or else is a self-drawn win."""
    if s.phase == "play" and s.window is not None:
        return responses.hu(s, c, timeout)
    return turn.self_drawn_hu(s, c, timeout)


def _timeout(s: HandState, c: cmd.Timeout) -> Decided:
    """The server plays the seat's default (RULES.md §8) for its pending decision."""
    if c.seat not in pending_seats(s):
        return _reject("no_pending_decision", f"seat {c.seat} has no decision pending", seat=c.seat)
    default = msgspec.structs.replace(timeouts.default_command(s, c.seat), command_id=c.command_id)
    result: Decided = _HANDLERS[type(default)](s, default, True)
    return result


_HANDLERS: dict[type[Any], Any] = {
    cmd.ChooseExchange: opening.choose_exchange,
    cmd.DeclareMissing: opening.declare_missing,
    cmd.Discard: turn.discard,
    cmd.Kong: turn.kong,
    cmd.Hu: _hu,
    cmd.Pung: responses.pung,
    cmd.ClaimKong: responses.claim_kong,
    cmd.Pass: responses.pass_,
}


def _common_checks(state: HandState, c: cmd.HandCommand) -> cmd.Rejection | None:
    """What every command is checked for: a known command, a seat in a dealt hand not over,
    this hand and this decision, the hand not paused."""
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
    return practice.refused_while_paused(state)


def legal_actions(state: HandState, seat: int) -> list[cmd.HandCommand]:
    """Every command ``seat`` may send now (timeouts aside), each accepted by ``decide``.

    None while the hand is paused (pause and resume are not decisions: not listed)."""
    if state.paused or seat not in pending_seats(state):
        return []
    if state.phase in ("exchange", "missing"):
        return opening.legal_opening(state, seat)
    if state.window is not None:
        return responses.legal_responses(state, seat)
    return turn.legal_turn(state, seat)


# --- folding -------------------------------------------------------------------------------


def apply(state: HandState, event: ev.Event) -> HandState:
    """Fold one event into the state (in place) and return the state."""
    if event.seq != state.seq + 1:
        raise ReplayError(f"event seq {event.seq} does not follow {state.seq}")
    if state.seq and (event.table_id, event.hand_id) != (state.table_id, state.hand_id):
        raise ReplayError(f"event of {event.table_id}/{event.hand_id} in another hand's log")
    if type(event) is ev.ResponseWindowOpened and not event.claims:
        event = upcast_window(state, event)
    FOLDS[type(event)](state, event)
    state.seq = event.seq
    return state


def upcast_window(state: HandState, event: ev.ResponseWindowOpened) -> ev.ResponseWindowOpened:
    """A window event from a log written before it carried the claim rights, with them.

    The rights are what ``decide`` would have put there: the state before the window is the
    state the discard left. Only old logs reach this; the engine always fills them in."""
    rights = claims_on(state, event.seats, INDEX[event.tile])
    return msgspec.structs.replace(event, claims=rights)


def replay(events: Iterable[ev.Event]) -> HandState:
    """Rebuild a hand's state from its events."""
    state = HandState()
    for e in events:
        apply(state, e)
    return state
