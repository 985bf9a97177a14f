"""Clocks of timed hands (RULES.md §8), driven by an injected time in milliseconds."""

from __future__ import annotations

import random

import msgspec
import pytest

from schemas import commands as cmd
from schemas import events as ev
from services.audit import audit_hand
from services.rules.clock import CLOCK_PRESETS, LAG_GRACE_MS, OPENING_MIN_MS, check_time, tick
from services.rules.hand import handle, legal_actions, replay, start_hand
from services.rules.selfplay import random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.timeouts import default_command
from services.rules.visibility import seat_view

T0 = 1_700_000_000_000
PRESETS = list(CLOCK_PRESETS)


def timed_hand(preset: str = "bullet", seed: int = 1) -> tuple[HandState, list[ev.Event]]:
    """A fresh timed hand whose opening clocks started at ``T0``."""
    raw = random_seed(random.Random(seed))
    state, events = start_hand("t1", "t1#1", shuffle(raw), seed=raw, clock=preset)
    events += tick(state, T0)
    return state, events


def act(
    state: HandState, command: cmd.HandCommand, now: int, log: list[ev.Event]
) -> list[ev.Event]:
    """What the table service does with a command at ``now``: time check, rules, clocks."""
    late = check_time(state, command, now)
    assert late is None, late
    result = handle(state, command)
    assert not isinstance(result, cmd.Rejection), result
    timed_out = command.seat if isinstance(command, cmd.Timeout) else None
    result += tick(state, now, timed_out, command.command_id)
    log.extend(result)
    return result


def started(events: list[ev.Event]) -> ev.ClockStarted:
    found = [e for e in events if isinstance(e, ev.ClockStarted)]
    assert found, "no clock started"
    return found[-1]


def time_out_next(state: HandState, log: list[ev.Event]) -> tuple[int, int, list[ev.Event]]:
    """Let the earliest-running seat time out exactly when it is due."""
    assert state.clock is not None
    seat, run = min(state.clock.running.items(), key=lambda x: (x[1].deadline_ms, x[0]))
    now = run.deadline_ms + state.clock.grace_ms
    timeout = cmd.Timeout(
        seat=seat, command_id=f"to-{run.decision_seq}-{seat}", decision_seq=run.decision_seq
    )
    return seat, now, act(state, timeout, now, log)


def silent_hand(preset: str, seed: int) -> list[ev.Event]:
    """A whole hand in which nobody ever answers: timeouts alone finish it."""
    state, log = timed_hand(preset, seed)
    while state.phase != "ended":
        time_out_next(state, log)
    return log


# --- allowances ----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_every_reserve_is_full_at_the_start_of_a_hand(preset: str) -> None:
    state, _ = timed_hand(preset)
    assert state.clock is not None
    assert state.clock.reserve == [CLOCK_PRESETS[preset][1]] * 4


@pytest.mark.parametrize("preset", PRESETS)
def test_opening_decisions_get_at_least_fifteen_seconds_then_the_reserve(preset: str) -> None:
    _, events = timed_hand(preset)
    clock = started(events)
    base, reserve = CLOCK_PRESETS[preset]
    want_base = max(OPENING_MIN_MS, base)
    assert [d.seat for d in clock.seats] == [0, 1, 2, 3]
    for d in clock.seats:
        assert (d.base_ms, d.reserve_ms) == (want_base, reserve)
        assert d.deadline_ms == T0 + want_base + reserve
    assert clock.grace_ms == LAG_GRACE_MS


def play_to_first_turn(preset: str) -> tuple[HandState, list[ev.Event], int]:
    """Everyone answers the opening decisions at once; the dealer's first turn is offered."""
    state, log = timed_hand(preset)
    now = T0 + 1_000
    while state.phase in ("exchange", "missing"):
        seat = pending_seats(state)[0]
        act(state, legal_actions(state, seat)[0], now, log)
    return state, log, now


@pytest.mark.parametrize("preset", PRESETS)
def test_turn_decisions_get_the_base_time_then_the_reserve(preset: str) -> None:
    state, log, now = play_to_first_turn(preset)
    clock = started(log)
    base, reserve = CLOCK_PRESETS[preset]
    assert clock.decision_seq == state.decision_seq
    (d,) = clock.seats
    assert (d.seat, d.base_ms, d.reserve_ms, d.deadline_ms) == (
        state.turn,
        base,
        reserve,
        now + base + reserve,
    )


def find_window(preset: str, seed_range: int = 200) -> tuple[HandState, list[ev.Event]]:
    """A timed hand played by timeouts until a response window opens."""
    for seed in range(seed_range):
        state, log = timed_hand(preset, seed)
        while state.phase != "ended":
            time_out_next(state, log)
            if state.window is not None:
                return state, log
    raise AssertionError("no window opened")


@pytest.mark.parametrize("preset", PRESETS)
def test_call_decisions_get_the_base_time_only(preset: str) -> None:
    state, log = find_window(preset)
    clock = started(log)
    assert state.window is not None
    assert sorted(d.seat for d in clock.seats) == sorted(state.window.pending)
    for d in clock.seats:
        assert d.base_ms == CLOCK_PRESETS[preset][0]
        assert d.reserve_ms == 0
        assert d.deadline_ms == clock.at_ms + d.base_ms


def test_only_time_past_the_base_is_taken_from_the_reserve() -> None:
    state, log = timed_hand("blitz")
    base = OPENING_MIN_MS
    choice = legal_actions(state, 2)[0]
    events = act(state, choice, T0 + base + 2_500, log)
    stop = next(e for e in events if isinstance(e, ev.ClockStopped))
    assert (stop.seat, stop.used_ms, stop.reserve_ms, stop.timeout) == (
        2,
        base + 2_500,
        7_500,
        False,
    )
    assert state.clock is not None and state.clock.reserve[2] == 7_500


def test_an_answer_within_the_base_time_keeps_the_whole_reserve() -> None:
    state, log = timed_hand("standard")
    events = act(state, legal_actions(state, 1)[0], T0 + 3_000, log)
    stop = next(e for e in events if isinstance(e, ev.ClockStopped))
    assert (stop.used_ms, stop.reserve_ms) == (3_000, 20_000)


def test_an_answer_inside_the_lag_allowance_empties_the_reserve_but_never_below_zero() -> None:
    state, log = timed_hand("bullet")
    assert state.clock is not None
    deadline = state.clock.running[0].deadline_ms
    events = act(state, legal_actions(state, 0)[0], deadline + LAG_GRACE_MS, log)
    stop = next(e for e in events if isinstance(e, ev.ClockStopped))
    assert stop.reserve_ms == 0


def test_the_clock_keeps_running_for_a_seat_that_never_answers() -> None:
    state, log = timed_hand("bullet")
    for seat in (0, 1, 2):
        act(state, legal_actions(state, seat)[0], T0 + 500, log)
    assert state.clock is not None
    assert list(state.clock.running) == [3]
    assert state.clock.running[3].deadline_ms == T0 + OPENING_MIN_MS + 5_000


# --- when timeouts count --------------------------------------------------------------------


def test_a_timeout_before_the_deadline_and_lag_allowance_is_not_due() -> None:
    state, _ = timed_hand("bullet")
    assert state.clock is not None
    run = state.clock.running[1]
    early = cmd.Timeout(seat=1, decision_seq=run.decision_seq)
    rejection = check_time(state, early, run.deadline_ms + LAG_GRACE_MS - 1)
    assert rejection is not None and rejection.code == "not_due"
    assert rejection.params["due_in_ms"] == 1
    assert check_time(state, early, run.deadline_ms + LAG_GRACE_MS) is None


def test_a_timeout_for_a_decision_that_already_passed_is_stale() -> None:
    state, _log = play_to_first_turn("bullet")[:2]
    assert state.clock is not None and state.turn is not None
    old = cmd.Timeout(seat=state.turn, decision_seq=state.decision_seq - 1)
    rejection = check_time(state, old, T0 + 10**9)
    assert rejection is not None and rejection.code == "stale_decision"


def test_a_timeout_for_a_seat_with_nothing_to_decide_is_refused() -> None:
    state, _log, _ = play_to_first_turn("bullet")
    idle = next(s for s in range(4) if s != state.turn)
    rejection = check_time(
        state, cmd.Timeout(seat=idle, decision_seq=state.decision_seq), T0 + 10**9
    )
    assert rejection is not None and rejection.code == "no_pending_decision"


def test_an_answer_after_the_deadline_and_lag_allowance_is_too_late() -> None:
    state, _ = timed_hand("bullet")
    assert state.clock is not None
    run = state.clock.running[0]
    answer = legal_actions(state, 0)[0]
    rejection = check_time(state, answer, run.deadline_ms + LAG_GRACE_MS + 1)
    assert rejection is not None and rejection.code == "time_up"


def test_an_untimed_hand_refuses_timeouts_from_the_clock() -> None:
    raw = random_seed(random.Random(3))
    state, _ = start_hand("t1", "t1#1", shuffle(raw), seed=raw)
    assert tick(state, T0) == []
    rejection = check_time(state, cmd.Timeout(seat=0, decision_seq=state.decision_seq), T0)
    assert rejection is not None and rejection.code == "untimed"


# --- what a timeout does ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_a_silent_bullet_hand_is_finished_by_the_section_8_defaults_alone(seed: int) -> None:
    state, log = timed_hand("bullet", seed)
    kinds: set[str] = set()
    while state.phase != "ended":
        assert state.clock is not None
        seat = min(state.clock.running, key=lambda s: (state.clock.running[s].deadline_ms, s))  # type: ignore[union-attr]
        expected = default_command(state, seat)
        made = handle(state.copy(), expected)
        assert not isinstance(made, cmd.Rejection)
        _, _, events = time_out_next(state, log)
        rules = [e for e in events if not isinstance(e, (ev.ClockStarted, ev.ClockStopped))]
        assert [_unmarked(e) for e in rules] == [_unmarked(e) for e in made]
        kinds.add(type(expected).__name__)
    assert {"ChooseExchange", "DeclareMissing", "Discard"} <= kinds


def _unmarked(e: ev.Event) -> ev.Event:
    """An event without its timeout mark and command id, for comparing with a played one."""
    fields = {"command_id": ""}
    if hasattr(e, "timeout"):
        fields["timeout"] = False  # type: ignore[assignment]
    return msgspec.structs.replace(e, **fields)


def test_every_decision_a_timeout_plays_is_marked_as_a_timeout() -> None:
    log = silent_hand("bullet", 4)
    marked = [e for e in log if getattr(e, "timeout", False) and not isinstance(e, ev.ClockStopped)]
    stops = [e for e in log if isinstance(e, ev.ClockStopped) and e.timeout]
    ended_by = log[-1].command_id  # the hand ended: no clock is stopped after that
    assert marked and {e.command_id for e in marked} - {ended_by} == {e.command_id for e in stops}


def test_silent_hands_reach_window_and_self_draw_defaults_too() -> None:
    seen: set[str] = set()
    for seed in [*range(10), 132]:  # 132: a silent seat's drawn tile completes its hand
        for e in silent_hand("bullet", seed):
            if isinstance(e, ev.Passed) and e.timeout:
                seen.add("pass")
            if isinstance(e, ev.ClaimDeclared) and e.timeout:
                seen.add("hu")
            if isinstance(e, ev.Won) and e.timeout and e.from_seat is None:
                seen.add("self_drawn")
    assert {"pass", "hu", "self_drawn"} <= seen


def test_a_timed_out_seat_used_its_base_its_reserve_and_the_lag_allowance() -> None:
    state, log = timed_hand("blitz")
    seat, _now, events = time_out_next(state, log)
    stop = next(e for e in events if isinstance(e, ev.ClockStopped) and e.seat == seat)
    assert stop.timeout and stop.reserve_ms == 0
    assert stop.used_ms == OPENING_MIN_MS + 10_000 + LAG_GRACE_MS


# --- the log -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_the_clocks_replay_from_the_log(seed: int) -> None:
    state, log = timed_hand("blitz", seed)
    for _ in range(30):
        if state.phase == "ended":
            break
        time_out_next(state, log)
        rebuilt = replay(log)
        assert rebuilt.clock == state.clock


def test_seat_views_show_every_clock() -> None:
    state, _ = timed_hand("relaxed")
    view = seat_view(state, 2)
    assert view.clock == "relaxed" and view.grace_ms == LAG_GRACE_MS
    assert [c.reserve_ms for c in view.clocks] == [60_000] * 4
    assert all(c.deadline_ms == T0 + 75_000 for c in view.clocks)


@pytest.mark.parametrize("seed", range(6))
def test_a_silent_timed_hand_passes_the_audit(seed: int) -> None:
    result = audit_hand(silent_hand("bullet", seed))
    assert result.ok, result.problems


def test_the_audit_catches_a_timeout_that_came_too_early() -> None:
    log = silent_hand("bullet", 0)
    # The last timeout, and the clocks it started, moved 200 ms earlier: consistent times
    # (every reserve is long gone), but the seat had not run out of time.
    i = max(i for i, e in enumerate(log) if isinstance(e, ev.ClockStopped) and e.timeout)
    stop = log[i]
    assert isinstance(stop, ev.ClockStopped) and stop.reserve_ms == 0
    for j, e in enumerate(log):
        if e.command_id != stop.command_id:
            continue
        if isinstance(e, ev.ClockStopped):
            log[j] = msgspec.structs.replace(e, used_ms=e.used_ms - 200)
        elif isinstance(e, ev.ClockStarted):
            seats = [msgspec.structs.replace(d, deadline_ms=d.deadline_ms - 200) for d in e.seats]
            log[j] = msgspec.structs.replace(e, at_ms=e.at_ms - 200, seats=seats)
    result = audit_hand(log)
    assert not result.ok
    assert any("before its" in p for p in result.problems), result.problems


def test_the_audit_catches_a_missing_clock_event() -> None:
    log = silent_hand("bullet", 1)
    i = next(i for i, e in enumerate(log) if isinstance(e, ev.ClockStarted) and i > 10)
    forged = log[:i] + [msgspec.structs.replace(e, seq=e.seq - 1) for e in log[i + 1 :]]
    result = audit_hand(forged)
    # Not just "not ok" (a crashing audit is not ok too): it names the missing event.
    assert not result.ok
    assert any(
        p.startswith(f"seq {log[i].seq}:") and "gives clock_started" in p for p in result.problems
    ), result.problems


def test_a_hand_recorded_with_a_lag_allowance_is_judged_by_it() -> None:
    state, _ = timed_hand("bullet")
    assert state.clock is not None
    state.clock.grace_ms = 150  # as a hand logged under another lag policy carries it
    run = state.clock.running[0]
    timeout = cmd.Timeout(seat=0, decision_seq=run.decision_seq)
    answer = legal_actions(state, 0)[0]
    assert check_time(state, timeout, run.deadline_ms + 149) is not None
    assert check_time(state, answer, run.deadline_ms + 150) is None
    late = check_time(state, answer, run.deadline_ms + 151)
    assert late is not None and late.code == "time_up"


def test_a_hand_logged_under_another_lag_allowance_still_audits() -> None:
    raw = random_seed(random.Random(8))
    state, log = start_hand("t1", "t1#1", shuffle(raw), seed=raw, clock="bullet")
    log += tick(state, T0, grace_ms=150)
    while state.phase != "ended":
        assert state.clock is not None
        seat, run = min(state.clock.running.items(), key=lambda x: (x[1].deadline_ms, x[0]))
        now = run.deadline_ms + state.clock.grace_ms
        timeout = cmd.Timeout(seat=seat, decision_seq=run.decision_seq)
        result = handle(state, timeout)
        assert not isinstance(result, cmd.Rejection)
        log += result + tick(state, now, seat, grace_ms=150)
    assert all(e.grace_ms == 150 for e in log if isinstance(e, ev.ClockStarted))
    assert audit_hand(log).ok
