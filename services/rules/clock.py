"""Clocks of timed hands (RULES.md §8), as pure functions of the hand and a time in ms.

The table service reads the time once per command and passes it in; everything here is
deterministic in it, and every effect is an event (``ClockStarted``, ``ClockStopped``), so
the clocks are rebuilt from the log like the rest of the hand.
"""

from __future__ import annotations

from schemas import commands as cmd
from schemas import events as ev
from services.rules.state import Clock, Fold, HandState, ReplayError, Running, pending_seats
from services.rules.state import reject as _reject

CLOCK_PRESETS: dict[str, tuple[int, int]] = {
    "bullet": (2_000, 5_000),
    "blitz": (3_000, 10_000),
    "standard": (5_000, 20_000),
    "relaxed": (15_000, 60_000),
}
"""Clock presets of RULES.md §8: per-decision base time and per-hand reserve, in ms."""

OPENING_MIN_MS = 15_000
"""Exchange and missing-suit decisions get at least this base time."""

LAG_GRACE_MS = 0
"""How long after a deadline an answer still counts: none (docs/clocks.md, "Lag", says why).
Each hand records the value it ran with, so replays stay exact if the policy changes."""

PRESETS = tuple(CLOCK_PRESETS)


def full_reserve(preset: str) -> int:
    """A seat's reserve at the start of each hand under a clock preset (RULES.md §8)."""
    return CLOCK_PRESETS[preset][1]


def allowance(preset: str, phase: str, in_window: bool) -> tuple[int, bool]:
    """A decision's base time in ms, and whether the reserve may follow it."""
    base, _ = CLOCK_PRESETS[preset]
    if phase in ("exchange", "missing"):
        return max(OPENING_MIN_MS, base), True
    if in_window:
        return base, False  # call decisions never touch the reserve
    return base, True


def tick(
    state: HandState,
    now_ms: int,
    timed_out: int | None = None,
    command_id: str = "",
    grace_ms: int = LAG_GRACE_MS,
) -> list[ev.Event]:
    """The clock events after a command was applied at ``now_ms``: a stop for every decision
    that ended, a start for the decisions just offered. Applied to ``state`` as emitted.

    ``grace_ms`` is the lag allowance the new clocks run with (an audit passes the one the
    log recorded, so hands played under an earlier policy still re-derive exactly)."""
    clock = state.clock
    if clock is None or state.phase == "ended":
        return []
    events: list[ev.Event] = []

    def emit(event: ev.Event) -> None:
        FOLDS[type(event)](state, event)  # built from the state: it fits, no checks needed
        state.seq = event.seq
        events.append(event)

    pending = set(pending_seats(state))
    for seat, run in sorted(clock.running.items()):
        if seat in pending and run.decision_seq == state.decision_seq:
            continue
        used = max(0, now_ms - run.offered_ms)
        over = min(max(0, used - run.base_ms), run.reserve_ms)
        emit(
            ev.ClockStopped(
                table_id=state.table_id,
                hand_id=state.hand_id,
                seq=state.seq + 1,
                command_id=command_id,
                seat=seat,
                decision_seq=run.decision_seq,
                used_ms=used,
                reserve_ms=clock.reserve[seat] - over,
                timeout=seat == timed_out,
            )
        )
    fresh = sorted(s for s in pending if s not in clock.running)
    if fresh:
        base, with_reserve = allowance(clock.preset, state.phase, state.window is not None)
        seats = []
        for seat in fresh:
            reserve = clock.reserve[seat] if with_reserve else 0
            seats.append(
                ev.SeatDeadline(
                    seat=seat, base_ms=base, reserve_ms=reserve, deadline_ms=now_ms + base + reserve
                )
            )
        emit(
            ev.ClockStarted(
                table_id=state.table_id,
                hand_id=state.hand_id,
                seq=state.seq + 1,
                command_id=command_id,
                decision_seq=state.decision_seq,
                at_ms=now_ms,
                seats=seats,
                grace_ms=grace_ms,
            )
        )
    return events


def clocks_started(state: HandState) -> int:
    """When the latest running clock started (0 for an untimed hand or no running clock)."""
    if state.clock is None or not state.clock.running:
        return 0
    return max(r.offered_ms for r in state.clock.running.values())


def check_time(state: HandState, command: cmd.HandCommand, now_ms: int) -> cmd.Rejection | None:
    """Whether a command is on time: a timeout only once the seat's deadline (plus the lag
    allowance) has passed, for the decision it names; an answer only before then."""
    clock = state.clock
    is_timeout = isinstance(command, cmd.Timeout)
    if clock is None:
        if is_timeout:
            return _reject("untimed", "this hand has no clock", seat=command.seat)
        return None
    run = clock.running.get(command.seat)
    if run is None:
        if is_timeout:
            return _reject(
                "no_pending_decision",
                f"seat {command.seat} has no decision pending",
                seat=command.seat,
            )
        return None  # the rules engine says why the seat may not act
    late_after = run.deadline_ms + clock.grace_ms
    if is_timeout:
        if command.decision_seq != run.decision_seq:
            return _reject(
                "stale_decision",
                f"decision {command.decision_seq} is not seat {command.seat}'s pending decision "
                f"{run.decision_seq}",
                decision_seq=-1 if command.decision_seq is None else command.decision_seq,
            )
        if now_ms < late_after:
            return _reject(
                "not_due",
                f"seat {command.seat} still has {late_after - now_ms} ms",
                due_in_ms=late_after - now_ms,
            )
        return None
    if now_ms > late_after:
        return _reject(
            "time_up",
            f"seat {command.seat}'s time ran out {now_ms - late_after} ms ago",
            late_ms=now_ms - late_after,
        )
    return None


# --- folding -------------------------------------------------------------------------------


def _clock_started(s: HandState, e: ev.ClockStarted) -> None:
    clock = _clock_of(s)
    clock.grace_ms = e.grace_ms
    for d in e.seats:
        clock.running[d.seat] = Running(
            e.decision_seq, e.at_ms, d.base_ms, d.reserve_ms, d.deadline_ms
        )


def _clock_stopped(s: HandState, e: ev.ClockStopped) -> None:
    clock = _clock_of(s)
    clock.running.pop(e.seat, None)
    clock.reserve[e.seat] = e.reserve_ms


def _clock_of(s: HandState) -> Clock:
    if s.clock is None:
        raise ReplayError("a clock event in an untimed hand")
    return s.clock


FOLDS: dict[type, Fold] = {ev.ClockStarted: _clock_started, ev.ClockStopped: _clock_stopped}
