"""Replays (services/gateway/history.py): one step per game action, the clocks at each step as
the live table showed them, and a seat's replay showing that seat's view and nothing more."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from schemas.views import HiddenEvent
from services.gateway.history import STEP_EVENTS, replay_frames, settlement_events
from services.rules.clock import tick
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import play_random_hand, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats

T0 = 1_700_000_000_000
BOOKKEEPING = (
    ev.HandStarted,
    ev.TilesDealt,
    ev.ExchangeChosen,
    ev.MissingSuitDeclared,
    ev.ResponseWindowOpened,
    ev.ClaimDeclared,
    ev.Passed,
    ev.WallExhausted,
    ev.SettlementItem,
    ev.ClockStarted,
    ev.ClockStopped,
    ev.HandPaused,
    ev.HandResumed,
)


def test_every_event_type_is_either_a_step_or_bookkeeping() -> None:
    assert set(STEP_EVENTS) | set(BOOKKEEPING) == set(ev.EVENT_TYPES)
    assert not set(STEP_EVENTS) & set(BOOKKEEPING)


Reading = tuple[int, int | None, int]
"""A seat's clock as the table shows it: seat, time left to its deadline (None: not
deciding), reserve left."""


def live_readings(state: HandState, now: int) -> list[Reading]:
    """What the live clocks read at ``now`` (js/board.js ``clockText`` splits the time left
    into base and reserve; the time left and the reserve are what it reads)."""
    assert state.clock is not None
    return [
        (s, None if (run := state.clock.running.get(s)) is None else run.deadline_ms - now, r)
        for s, r in enumerate(state.clock.reserve)
    ]


def timed_bot_hand(seed: int, preset: str = "blitz") -> tuple[list[ev.Event], dict[int, object]]:
    """A timed hand played by random legal choices at random moments, as the table service
    plays it (rules, then clocks), with what the clocks read when each event happened
    (by seq; None for the last command's, which records no clock)."""
    rng = random.Random(seed)
    raw = random_seed(rng)
    state, log = start_hand("t", "t#1", shuffle(raw), seed=raw, clock=preset)
    shown: dict[int, object] = {e.seq: live_readings(state, T0) for e in log}
    log += tick(state, T0)
    now = T0
    while state.phase != "ended":
        now += rng.randint(50, 600)  # within every allowance: several seats may be deciding
        seat = rng.choice(pending_seats(state))
        before = live_readings(state, now)
        result = handle(state, rng.choice(legal_actions(state, seat)))
        assert not isinstance(result, cmd.Rejection), result
        clocks = tick(state, now)
        for e in result:
            shown[e.seq] = (now, before) if clocks else None
        log += result + clocks
    return log, shown


def test_a_bot_played_hand_has_one_step_per_game_action() -> None:
    for seed in range(12):
        _, events = play_random_hand(random.Random(seed), eager=True)
        steps = replay_frames(events)
        actions = [e for e in events if isinstance(e, STEP_EVENTS)]
        assert len(steps) == len(actions)
        assert [s.seq for s in steps] == [e.seq for e in actions]
        assert isinstance(steps[0].event, ev.WallBuilt)  # the deal
        assert isinstance(steps[-1].event, ev.HandEnded)
        # A discard's step shows the window it opened.
        for i, s in enumerate(steps):
            nxt = events[s.seq] if s.seq < len(events) else None
            if isinstance(nxt, ev.ResponseWindowOpened):
                assert s.view.window is not None and s.view.window.tile == nxt.tile, i
        # Every concealed hand is open at every step.
        assert all(p.hand is not None for s in steps for p in s.view.players)


def test_the_clocks_at_each_step_read_what_the_live_clocks_showed() -> None:
    for seed in range(6):
        events, shown = timed_bot_hand(seed)
        steps = replay_frames(events)
        assert len(steps) == sum(isinstance(e, STEP_EVENTS) for e in events)
        compared = running = closed_calls = 0
        for s in steps:
            live = shown[s.seq]
            if live is None:
                continue  # the hand's last command: no clock recorded its time
            if isinstance(live, list):
                at, readings = T0, live  # the deal, before the first clock started
            else:
                at, readings = live  # type: ignore[misc]
            assert s.at_ms == at
            replayed = [
                (c.seat, None if c.deadline_ms is None else c.deadline_ms - s.at_ms, c.reserve_ms)
                for c in s.view.clocks
            ]
            assert replayed == readings, s.seq
            for c in s.view.clocks:
                if c.deadline_ms is not None:
                    # Offered before the step, with the whole reserve or (a call) none of it.
                    assert c.usable_reserve_ms in (0, c.reserve_ms)
                    assert c.deadline_ms - (c.base_ms or 0) - c.usable_reserve_ms <= s.at_ms
                    closed_calls += c.usable_reserve_ms == 0 and s.view.window is None
            compared += 1
            running += sum(r[1] is not None and r[1] > 0 for r in replayed)
        assert compared > len(steps) - 5 and running > len(steps) // 2
        # A draw after everyone passed: the last call's clock still runs, its window closed;
        # the clock says it has no reserve to use (js/board.js reads usable_reserve_ms).
        assert closed_calls > 0


def test_an_untimed_replay_has_no_clocks_and_no_moments() -> None:
    _, events = play_random_hand(random.Random(1))
    steps = replay_frames(events)
    assert all(s.at_ms is None and s.view.clocks == [] for s in steps)


def test_the_settlement_events_are_the_payments_and_the_end() -> None:
    _, events = play_random_hand(random.Random(2), eager=True)
    kinds = {type(e) for e in settlement_events(events)}
    assert ev.HandStarted in kinds and ev.HandEnded in kinds
    assert not kinds & {ev.TileDrawn, ev.TileDiscarded, ev.TilesDealt, ev.WallBuilt}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(0, 3), st.booleans())
def test_a_seats_replay_never_shows_what_that_seat_could_not_see(
    seed: int, seat: int, eager: bool
) -> None:
    _, events = play_random_hand(random.Random(seed), eager=eager, timeout_rate=0.05)
    steps = replay_frames(events, seat)
    assert len(steps) == sum(isinstance(e, STEP_EVENTS) for e in events)
    for s in steps[:-1]:  # the last step is the end: then everything is public (§10)
        v = s.view
        assert v.seat == seat and v.phase != "ended"
        assert v.wall is None and v.seed is None
        for p in v.players:
            if p.seat != seat and not p.won:
                assert p.hand is None, (s.seq, p.seat)
        if v.drawn is not None:
            assert v.turn == seat
        e = s.event
        if isinstance(e, ev.TileDrawn | ev.TilesDealt):
            assert e.seat == seat
        if isinstance(e, ev.WallBuilt):
            raise AssertionError("the wall is the server's until the end")
        if isinstance(e, ev.ExchangeResolved):
            assert sum(bool(x) for x in e.passed) <= 2  # what it gave and what it got
        if isinstance(e, HiddenEvent):
            assert e.event in ("tile_drawn", "wall_built")
    assert steps[-1].view.phase == "ended"
    assert all(p.hand is not None for p in steps[-1].view.players)
