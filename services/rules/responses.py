"""Play (RULES.md §3): answering a response or robbing window and resolving it, with the
passing restrictions that an answer leaves behind.

Who may claim what is ``services.rules.claims``'s; the window event carries those rights,
so the folds here only read them. Deciding functions return the events they emit through a
``Log``, or a refusal.
"""

from __future__ import annotations

from typing import Literal

from schemas import commands as cmd
from schemas import events as ev
from services.rules import payments
from services.rules.claims import may_call
from services.rules.fan import best_reading
from services.rules.state import HU, KONG, PUNG, Decided, Fold, HandState, Log, Meld, not_pending
from services.rules.state import reject as _reject
from services.rules.tiles import INDEX, NAMES, seats_after
from services.rules.turn import after_wins, complete_added_kong, emit_win, next_turn, replacement

Claim = Literal["hu", "pung", "kong", "pass"]


def legal_responses(state: HandState, seat: int) -> list[cmd.HandCommand]:
    """Every answer ``seat`` may give in the open window: its claims, and pass."""
    assert state.window is not None
    bits = state.window.claims[seat]
    out: list[cmd.HandCommand] = []
    if bits & HU:
        out.append(cmd.Hu(seat=seat))
    if bits & PUNG:
        out.append(cmd.Pung(seat=seat))
    if bits & KONG:
        out.append(cmd.ClaimKong(seat=seat))
    out.append(cmd.Pass(seat=seat))
    return out


# --- deciding ------------------------------------------------------------------------------


def hu(s: HandState, c: cmd.HandCommand, timeout: bool) -> Decided:
    return respond(s, c, "hu", HU, timeout)


def pung(s: HandState, c: cmd.HandCommand, timeout: bool) -> Decided:
    return respond(s, c, "pung", PUNG, timeout)


def claim_kong(s: HandState, c: cmd.HandCommand, timeout: bool) -> Decided:
    return respond(s, c, "kong", KONG, timeout)


def pass_(s: HandState, c: cmd.HandCommand, timeout: bool) -> Decided:
    return respond(s, c, "pass", 0, timeout)


def respond(s: HandState, c: cmd.HandCommand, claim: Claim, bit: int, timeout: bool) -> Decided:
    """One answer in the open window; the last one asked resolves it."""
    seat = c.seat
    if s.phase != "play":
        return _reject("opening_not_done", "the exchange and missing suits come first")
    w = s.window
    if w is None or seat not in w.claims or seat in w.responses:
        if w is None and claim != "hu":
            return _reject("no_window", f"there is no discard to {claim}")
        if w is None or seat in w.responses:
            return not_pending(s, seat)
        return _reject(
            "not_asked",
            f"seat {seat} has no legal claim on {NAMES[w.tile]}",
            seat=seat,
            tile=NAMES[w.tile],
        )
    if claim != "pass" and not w.claims[seat] & bit:
        return _claim_refusal(s, seat, claim, w.tile, w.kind)
    log = Log(s, c.command_id)
    # Built in place (see Log.push): one response per seat asked on most discards.
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


def _resolve(log: Log) -> None:
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
            fee = payments.discard_win(w.source, x, reading.value, robbed)
            emit_win(log, x, w.tile, w.source, reading, fee, False, counts)
        after_wins(log, winners[-1])
        return
    if w.kind == "rob":
        complete_added_kong(log, w.source, w.tile)
        return
    if claimer is None:
        next_turn(log, w.source)
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
    fee = payments.exposed_kong(w.source, x)
    log.emit(
        ev.Konged, seat=x, tile=NAMES[w.tile], kind="exposed", from_seat=w.source, payments=fee
    )
    replacement(log, x)


# --- folding -------------------------------------------------------------------------------


def _answer(s: HandState, seat: int, response: str) -> None:
    """An answer, and the passing restrictions it leaves (§3): a win not taken blocks wins on
    discards, a pung passed blocks pungs of that tile, both until the seat's next draw."""
    w = s.window
    assert w is not None
    w.responses[seat] = response
    bits = w.claims[seat]
    if bits & HU and response != "hu":
        s.hu_blocked[seat] = True
    if bits & PUNG and response == "pass":
        s.pung_blocked[seat] |= 1 << w.tile


def _claim_declared(s: HandState, e: ev.ClaimDeclared) -> None:
    _answer(s, e.seat, e.claim)


def _passed(s: HandState, e: ev.Passed) -> None:
    _answer(s, e.seat, "pass")


def _punged(s: HandState, e: ev.Punged) -> None:
    t = INDEX[e.tile]
    s.remove_tile(e.seat, t, 2)
    s.discards[e.from_seat].pop()
    s.melds[e.seat].append(Meld("pung", t, e.from_seat))
    s.window = None
    s.turn, s.turn_kind, s.drawn = e.seat, "pung", None
    s.decision_seq = e.seq


FOLDS: dict[type, Fold] = {
    ev.ClaimDeclared: _claim_declared,
    ev.Passed: _passed,
    ev.Punged: _punged,
}
