"""Hands played the way the table service plays them, clocks included, for the fuzzers."""

from __future__ import annotations

import random

from schemas import commands as cmd
from schemas import events as ev
from services.rules.clock import check_time, tick
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import eager_choice, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats

START_MS = 1_700_000_000_000


def play_step(rng: random.Random, state: HandState, now: int) -> list[ev.Event]:
    """One legal step at ``now``, as the table service takes it: a random (often eager)
    legal action, or, when that would be too late, the clock's timeout for the seat."""
    seat = rng.choice(pending_seats(state))
    options = legal_actions(state, seat)
    command: cmd.HandCommand = (
        eager_choice(rng, state, options) if rng.random() < 0.5 else rng.choice(options)
    )
    timed_out = None
    if check_time(state, command, now) is not None:  # too late: the clock plays for it
        assert state.clock is not None
        run = state.clock.running[seat]
        command = cmd.Timeout(seat=seat, decision_seq=run.decision_seq)
        assert check_time(state, command, now) is None
        timed_out = seat
    result = handle(state, command)
    assert not isinstance(result, cmd.Rejection), (command, result)
    return result + tick(state, now, timed_out)


def deal(
    rng: random.Random, hand_id: str = "fuzz#1", clock: str | None = None
) -> tuple[HandState, list[ev.Event], int]:
    """A new hand (its clocks started, if timed): state, events, and the time now."""
    seed = random_seed(rng)
    state, events = start_hand("fuzz", hand_id, shuffle(seed), seed=seed, clock=clock)
    return state, events + tick(state, START_MS), START_MS


def play_hand(
    rng: random.Random, clock: str | None = None, hand_id: str = "fuzz#1"
) -> tuple[HandState, list[ev.Event]]:
    """A whole hand to its end, time moving on by random steps (so clocks run out too)."""
    state, events, now = deal(rng, hand_id, clock)
    while state.phase != "ended":
        now += rng.choice((0, 200, 1_500, 4_000, 20_000, 70_000))
        events += play_step(rng, state, now)
    return state, events
