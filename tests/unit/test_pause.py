"""Pausing a practice hand (services.rules.pause, docs/rules-decisions.md): only the human of
an untimed, unrated hand against three computers may pause; while paused nothing but
``resume`` is accepted; resuming continues with the very decision that was pending."""

from __future__ import annotations

import copy
import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from services.rules.hand import handle, legal_actions, replay, start_hand
from services.rules.selfplay import eager_choice, play_random_hand, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.timeouts import default_command
from services.rules.visibility import seat_view

HUMAN = 0


def practice(
    seed_int: int = 1,
    clock: str | None = None,
    rated: bool = False,
    computers: list[int] | None = None,
) -> tuple[HandState, list[ev.Event]]:
    seed = random_seed(random.Random(seed_int))
    return start_hand(
        "t",
        "t#1",
        shuffle(seed),
        seed=seed,
        clock=clock,
        rated=rated,
        computer_seats=[1, 2, 3] if computers is None else computers,
    )


def ok(state: HandState, command: cmd.HandCommand) -> list[ev.Event]:
    result = handle(state, command)
    assert not isinstance(result, cmd.Rejection), result
    return result


def refused(state: HandState, command: cmd.HandCommand) -> cmd.Rejection:
    before = copy.deepcopy(state)
    result = handle(state, command)
    assert isinstance(result, cmd.Rejection), f"{command} was accepted"
    assert state == before, "a refused command changed the state"
    return result


def play_until(state: HandState, events: list[ev.Event], done: object, seed: int = 0) -> None:
    """Play default moves (all seats) until ``done(state)``."""
    rng = random.Random(seed)
    while not done(state):  # type: ignore[operator]
        assert state.phase != "ended", "the hand ended first"
        seat = rng.choice(pending_seats(state))
        events += ok(state, eager_choice(rng, state, legal_actions(state, seat)))


def test_the_human_of_an_untimed_practice_hand_may_pause_it() -> None:
    state, _ = practice()
    (paused,) = ok(state, cmd.Pause(seat=HUMAN, command_id="p1"))
    assert isinstance(paused, ev.HandPaused)
    assert (paused.seat, paused.seq, paused.command_id) == (HUMAN, 7, "p1")
    assert state.paused and seat_view(state, HUMAN).paused and seat_view(state, None).paused


@pytest.mark.parametrize(
    "clock, rated, computers, seat",
    [
        ("blitz", False, [1, 2, 3], 0),  # timed
        (None, True, [1, 2, 3], 0),  # rated
        (None, False, [2, 3], 0),  # another human at the table
        (None, False, [], 0),  # four humans
        (None, False, [1, 2, 3], 1),  # a computer seat asking
        (None, False, [0, 1, 2, 3], 0),  # computers only
    ],
)
def test_pause_is_refused_unless_untimed_practice_and_its_human_asks(
    clock: str | None, rated: bool, computers: list[int], seat: int
) -> None:
    state, _ = practice(clock=clock, rated=rated, computers=computers)
    for command in (cmd.Pause(seat=seat), cmd.Resume(seat=seat)):
        rejection = refused(state, command)
        assert (rejection.code, rejection.params) == ("pause_not_allowed", {"seat": seat})


def test_every_other_command_is_refused_while_paused() -> None:
    state, _ = practice()
    ok(state, cmd.Pause(seat=HUMAN))
    assert pending_seats(state) == [0, 1, 2, 3]  # the exchange still waits for all four
    for seat in range(4):
        assert legal_actions(state, seat) == []
        for command in (
            default_command(state, seat),  # the human's own choice and the computers'
            msgspec.structs.replace(default_command(state, seat), decision_seq=state.decision_seq),
            cmd.Timeout(seat=seat, decision_seq=state.decision_seq),
        ):
            rejection = refused(state, command)
            assert (rejection.code, rejection.params) == ("hand_paused", {})


def test_pausing_twice_or_resuming_a_running_hand_is_refused() -> None:
    state, _ = practice()
    assert refused(state, cmd.Resume(seat=HUMAN)).code == "not_paused"
    ok(state, cmd.Pause(seat=HUMAN))
    assert refused(state, cmd.Pause(seat=HUMAN)).code == "already_paused"


def test_resume_continues_with_the_decision_that_was_pending() -> None:
    state, events = practice()
    play_until(state, events, lambda s: s.phase == "play" and s.turn == HUMAN)
    pending, decision = pending_seats(state), state.decision_seq
    answer = msgspec.structs.replace(
        legal_actions(state, HUMAN)[-1], hand_id="t#1", decision_seq=decision
    )
    ok(state, cmd.Pause(seat=HUMAN, hand_id="t#1", decision_seq=decision - 3))
    assert refused(state, answer).code == "hand_paused"
    (resumed,) = ok(state, cmd.Resume(seat=HUMAN, hand_id="t#1"))
    assert isinstance(resumed, ev.HandResumed) and resumed.seat == HUMAN
    assert (pending_seats(state), state.decision_seq, state.paused) == (pending, decision, False)
    # The answer named before the pause still answers the same decision.
    assert isinstance(ok(state, answer)[0], ev.TileDiscarded)


def test_pause_names_the_hand_but_no_decision() -> None:
    state, _ = practice()
    assert refused(state, cmd.Pause(seat=HUMAN, hand_id="t#0")).code == "stale_hand"
    ok(state, cmd.Pause(seat=HUMAN, decision_seq=1))  # an old decision_seq is not stale here


def paused_and_resumed_at(state: HandState, events: list[ev.Event]) -> None:
    before = copy.deepcopy(state)
    events += ok(state, cmd.Pause(seat=HUMAN))
    events += ok(state, cmd.Resume(seat=HUMAN))
    # Nothing but the seq moved: the same decisions are pending.
    assert replace_seq(state, before.seq) == before


def replace_seq(state: HandState, seq: int) -> HandState:
    out = state.copy()
    out.seq = seq
    return out


@pytest.mark.parametrize(
    "where",
    [
        "exchange",
        "missing",
        "the human's turn",
        "a computer's turn",
        "a window",
        "after the human won",
    ],
)
def test_pause_and_resume_are_allowed_in_every_phase_before_the_end(where: str) -> None:
    reached = {
        "exchange": lambda s: True,
        "missing": lambda s: s.phase == "missing",
        "the human's turn": lambda s: s.phase == "play" and s.turn == HUMAN,
        "a computer's turn": lambda s: s.phase == "play" and s.turn not in (None, HUMAN),
        "a window": lambda s: s.window is not None,
        "after the human won": lambda s: s.won[HUMAN],
    }[where]
    for seed in range(200):
        state, events = practice(seed)
        try:
            play_until(state, events, reached, seed)
        except AssertionError:
            continue  # this hand never got there
        paused_and_resumed_at(state, events)
        assert replay(events) == state
        return
    raise AssertionError(f"no hand reached {where}")


def test_pause_after_the_hand_ended_is_refused() -> None:
    state, events = practice()
    play_until(state, events, lambda s: s.phase == "ended")
    assert refused(state, cmd.Pause(seat=HUMAN)).code == "hand_over"
    assert refused(state, cmd.Resume(seat=HUMAN)).code == "hand_over"


def test_replay_rebuilds_the_paused_flag() -> None:
    state, events = practice()
    play_until(state, events, lambda s: s.phase == "play")
    events += ok(state, cmd.Pause(seat=HUMAN))
    assert replay(events) == state and replay(events).paused
    events += ok(state, cmd.Resume(seat=HUMAN))
    assert replay(events) == state and not replay(events).paused


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([0.02, 0.2]))
def test_a_hand_with_pauses_plays_as_the_same_hand_without_them(
    seed_int: int, pause_rate: float
) -> None:
    seed = random_seed(random.Random(seed_int))
    plain, plain_events = play_random_hand(random.Random(seed_int), seed=seed, eager=True)
    # The same choices, with pauses between them (drawn from another generator).
    choices, pauses = random.Random(seed_int), random.Random(~seed_int)
    state, events = start_hand("table", "hand", shuffle(seed), seed=seed, computer_seats=[1, 2, 3])
    while state.phase != "ended":
        if pauses.random() < pause_rate:
            events += ok(state, cmd.Pause(seat=HUMAN))
            assert replay(events) == state
            events += ok(state, cmd.Resume(seat=HUMAN))
        seat = choices.choice(pending_seats(state))
        events += ok(state, eager_choice(choices, state, legal_actions(state, seat)))
    assert replay(events) == state
    kept = [e for e in events if not isinstance(e, ev.HandPaused | ev.HandResumed)]
    assert [msgspec.structs.replace(e, seq=0) for e in kept[1:]] == [
        msgspec.structs.replace(e, seq=0) for e in plain_events[1:]
    ]
    assert state.scores == plain.scores
