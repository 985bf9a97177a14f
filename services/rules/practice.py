"""Practice (RULES.md §9): pausing a practice hand (the player "can pause the hand and resume
it later").

Only an untimed, unrated hand whose every other seat is a computer may be paused, and only
by its one human: nobody else waits on the pause, and no clock has to stop. While the hand is
paused every command but ``resume`` is refused (``hand_paused``), the computers' and the
clock's included, so nothing moves until the human comes back. Pausing leaves the pending
decision as it is: ``decision_seq`` stays, so the human answers it after ``resume`` as if no
pause had happened (docs/rules-decisions.md).

Pause and resume name the hand (``hand_id``) but no decision: a ``decision_seq`` they carry
is not checked, since a pause races the computers' moves and must not be refused as stale.
"""

from __future__ import annotations

from schemas import commands as cmd
from schemas import events as ev
from services.rules.state import Decided, Fold, HandState, Log
from services.rules.state import reject as _reject


def may_pause(state: HandState, seat: int) -> bool:
    """Whether ``seat`` may pause (and resume) the hand: untimed practice, its one human."""
    others = {s for s in range(4) if s != seat}
    return state.clock is None and not state.rated and set(state.computer_seats) == others


def refused_while_paused(state: HandState) -> cmd.Rejection | None:
    """Why any command but ``resume`` is refused now (the hand is paused), or None."""
    if not state.paused:
        return None
    return _reject("hand_paused", "the hand is paused until its player resumes it")


def pause_or_resume(state: HandState, c: cmd.Pause | cmd.Resume) -> Decided:
    """Decide (and fold) a ``pause`` or ``resume``: its one event, or why it is refused."""
    seat = c.seat
    if not isinstance(seat, int) or not 0 <= seat <= 3:
        return _reject("bad_seat", f"seat must be 0-3, got {seat!r}", seat=str(seat))
    if state.phase == "ended":
        return _reject("hand_over", "the hand has ended")
    if state.phase == "deal":
        return _reject("not_started", "the hand has not been dealt yet")
    if c.hand_id and c.hand_id != state.hand_id:
        return _reject("stale_hand", f"hand {c.hand_id} is not the current hand", hand=c.hand_id)
    if not may_pause(state, seat):
        return _reject(
            "pause_not_allowed",
            "only the player of an untimed practice hand against three computers may pause it",
            seat=seat,
        )
    pausing = isinstance(c, cmd.Pause)
    if pausing and state.paused:
        return _reject("already_paused", "the hand is already paused", seat=seat)
    if not pausing and not state.paused:
        return _reject("not_paused", "the hand is not paused", seat=seat)
    log = Log(state, c.command_id)
    log.emit(ev.HandPaused if pausing else ev.HandResumed, seat=seat)
    return log.events


def _hand_paused(s: HandState, e: ev.HandPaused) -> None:
    s.paused = True


def _hand_resumed(s: HandState, e: ev.HandResumed) -> None:
    s.paused = False  # nothing else changed while paused: the hand goes on where it stopped


FOLDS: dict[type, Fold] = {ev.HandPaused: _hand_paused, ev.HandResumed: _hand_resumed}
