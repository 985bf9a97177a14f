"""The hand aggregate's API: decide is pure, rejections carry reasons and change nothing,
automatic follow-ups, timeouts and the end of the hand."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schemas import commands as cmd
from schemas import events as ev
from services.rules.hand import decide, handle, legal_actions
from services.rules.scenario import parse_action, prepare, run
from services.rules.state import HandState, pending_seats

# The dealer (missing p) must discard 9p first; seat 1 wins on it (pure circles).
PURE_WIN: dict[str, Any] = {
    "id": "pure-win",
    "deal": [
        "1m 1m 2m 3m 4m 6m 7m 8m 9m 9p 1s 1s 4s 5s",
        "1p 2p 3p 4p 5p 6p 7p 8p 5p 5p 1s 2s 3s",
        "5m 5m 6m 3s 3s 4s 6s 7s 8s 9s 1p 1p 2p",
        "2m 2m 3m 7s 7s 8s 9s 9s 6p 6p 2p 3p 4p",
    ],
    "wall": "3p 9m 4s 7p",
    "exchange": {
        "direction": "opposite",
        "tiles": ["1s 1s 4s", "1s 2s 3s", "5m 5m 6m", "2p 3p 4p"],
    },
    "missing": ["p", "m", "m", "p"],
}

# The dealer holds four 5s and can kong at once; the replacement (back of the wall) is 6s.
KONG_FIRST: dict[str, Any] = {
    "id": "kong-first",
    "deal": [
        "5s 5s 5s 5s 1s 1s 1s 2s 3s 4s 6s 1m 2m 3m",
        "1p 1p 2p 3p 4p 5p 6p 7m 8m 9m 4m 4m 9p",
        "6m 6m 6m 7p 7p 8p 8p 2s 2s 3s 3p 3p 9m",
        "7s 8s 9s 1p 2m 2m 5m 5m 6p 6p 9p 9p 8m",
    ],
    "wall": "2p 4m 7m 6s",
    "exchange": {
        "direction": "right",
        "tiles": ["1m 2m 3m", "4p 5p 6p", "2s 2s 3s", "7s 8s 9s"],
    },
    "missing": ["m", "s", "s", "p"],
}


def at(scenario: dict[str, Any], *actions: str) -> HandState:
    state = prepare(scenario)
    for a in actions:
        result = handle(state, parse_action(a))
        assert not isinstance(result, cmd.Rejection), result
    return state


def rejected(state: HandState, action: str) -> cmd.Rejection:
    before = copy.deepcopy(state)
    result = handle(state, parse_action(action))
    assert isinstance(result, cmd.Rejection), f"{action} was accepted"
    assert state == before, "a rejected command changed the state"
    return result


def test_decide_does_not_change_the_state() -> None:
    state = at(PURE_WIN)
    before = copy.deepcopy(state)
    events = decide(state, cmd.Discard(seat=0, tile="9p"))
    assert isinstance(events, list) and events
    assert state == before


def test_decide_and_handle_produce_the_same_events() -> None:
    state = at(PURE_WIN)
    assert decide(state, cmd.Discard(seat=0, tile="9p")) == handle(
        state, cmd.Discard(seat=0, tile="9p")
    )


def test_the_dealer_acts_first_without_drawing() -> None:
    state = at(PURE_WIN)
    assert pending_seats(state) == [0]
    assert state.turn_kind == "first" and state.wall_left == 4


def test_a_discard_only_one_can_win_on_opens_a_window_for_that_seat() -> None:
    events = handle(at(PURE_WIN), cmd.Discard(seat=0, tile="9p"))
    assert isinstance(events, list)
    assert [type(e) for e in events] == [ev.TileDiscarded, ev.ResponseWindowOpened]
    window = events[1]
    assert isinstance(window, ev.ResponseWindowOpened) and window.seats == [1]


def test_when_everyone_asked_passes_the_next_seat_draws() -> None:
    state = at(PURE_WIN, "0 discard 9p")
    events = handle(state, cmd.Pass(seat=1))
    assert isinstance(events, list)
    passed, draw = events
    assert isinstance(passed, ev.Passed)
    assert isinstance(draw, ev.TileDrawn) and (draw.seat, draw.tile) == (1, "3p")


def test_a_discard_nobody_can_claim_goes_straight_to_the_next_draw() -> None:
    state = at(PURE_WIN, "0 discard 9p", "1 pass")
    events = handle(state, cmd.Discard(seat=1, tile="8p"))
    assert isinstance(events, list)
    assert [type(e) for e in events] == [ev.TileDiscarded, ev.TileDrawn]
    assert events[1].seat == 2  # type: ignore[union-attr]


def test_sequence_numbers_continue_the_log() -> None:
    state = at(PURE_WIN)
    seq = state.seq
    events = handle(state, cmd.Discard(seat=0, tile="9p"))
    assert isinstance(events, list)
    assert [e.seq for e in events] == list(range(seq + 1, seq + 1 + len(events)))


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ("1 discard 1p", "not_your_turn"),
        ("0 discard 1m", "must_discard_missing"),
        ("0 discard 5p", "tile_not_held"),
        ("0 hu", "holding_missing"),
        ("0 kong 1m", "holding_missing"),
        ("0 pung", "no_window"),
        ("2 pass", "no_window"),
    ],
)
def test_illegal_turn_actions_are_rejected_with_a_reason(action: str, code: str) -> None:
    r = rejected(at(PURE_WIN), action)
    assert r.code == code and r.reason


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ("2 hu", "not_asked"),
        ("0 pung", "not_asked"),
        ("1 pung", "no_pung"),
        ("1 kong", "no_kong"),
        ("1 discard 1p", "awaiting_responses"),
        ("3 discard 2m", "awaiting_responses"),
    ],
)
def test_illegal_responses_are_rejected_with_a_reason(action: str, code: str) -> None:
    r = rejected(at(PURE_WIN, "0 discard 9p"), action)
    assert r.code == code and r.reason


def test_responding_twice_is_rejected() -> None:
    import random

    from services.rules.hand import start_hand
    from services.rules.selfplay import eager_choice, random_seed
    from services.rules.shuffle import shuffle

    rng = random.Random(7)
    for _ in range(200):
        seed = random_seed(rng)
        state, _ = start_hand("t", "h", shuffle(seed))
        while state.phase != "ended":
            w = state.window
            if w is not None and len(w.pending) >= 2:
                first = w.pending[0]
                handle(state, cmd.Pass(seat=first))
                assert rejected(state, f"{first} pass").code == "already_responded"
                return
            seat = rng.choice(pending_seats(state))
            handle(state, eager_choice(rng, state, legal_actions(state, seat)))
    pytest.fail("no window with two seats asked in 200 hands")


def test_a_winner_may_not_act_again() -> None:
    state = at(PURE_WIN, "0 discard 9p", "1 hu")
    assert rejected(state, "1 discard 1p").code == "already_won"


def test_every_action_after_the_end_is_rejected() -> None:
    state = at(PURE_WIN)
    while state.phase != "ended":
        seat = pending_seats(state)[0]
        handle(state, cmd.Timeout(seat=seat))
    for action in ("0 discard 1m", "1 hu", "2 pass", "3 timeout"):
        assert rejected(state, action).code == "hand_over"
    assert all(legal_actions(state, s) == [] for s in range(4))


def test_concealed_kong_pays_and_draws_the_replacement_from_the_back() -> None:
    state = at(KONG_FIRST)
    events = handle(state, cmd.Kong(seat=0, tile="5s"))
    assert isinstance(events, list)
    kong, draw = events
    assert isinstance(kong, ev.Konged) and kong.kind == "concealed"
    assert [(p.payer, p.amount) for p in kong.payments] == [(1, 2), (2, 2), (3, 2)]
    assert isinstance(draw, ev.TileDrawn) and draw.replacement and draw.tile == "6s"
    assert state.wall_left == 3


def test_kong_replacement_win_matches_the_worked_example() -> None:
    out = run({**KONG_FIRST, "actions": ["0 kong 5s", "0 hu"]})
    assert out["scores"] == [33, -11, -11, -11]
    assert out["wins"][0]["patterns"] == ["kong_replacement", "pure_suit", "root"]


def test_a_timeout_plays_the_default_and_marks_it() -> None:
    state = at(PURE_WIN)
    events = handle(state, cmd.Timeout(seat=0, decision_seq=state.decision_seq))
    assert isinstance(events, list)
    first = events[0]
    assert isinstance(first, ev.TileDiscarded) and first.timeout and first.tile == "9p"


def test_a_stale_timeout_is_rejected() -> None:
    state = at(PURE_WIN)
    old = state.decision_seq
    handle(state, cmd.Discard(seat=0, tile="9p"))
    r = handle(state, cmd.Timeout(seat=1, decision_seq=old))
    assert isinstance(r, cmd.Rejection) and r.code == "stale_decision"


def test_a_timeout_for_a_seat_without_a_decision_is_rejected() -> None:
    assert rejected(at(PURE_WIN), "2 timeout").code == "no_pending_decision"


def test_bad_seats_and_tiles_are_rejected() -> None:
    state = at(PURE_WIN)
    before = copy.deepcopy(state)
    r = handle(state, cmd.Discard(seat=9, tile="9p"))
    assert isinstance(r, cmd.Rejection) and r.code == "bad_seat"
    r = handle(state, cmd.Discard(seat=0, tile="zz"))
    assert isinstance(r, cmd.Rejection) and r.code == "bad_tile"
    assert state == before


def test_exchange_choices_must_be_three_held_tiles_of_one_suit() -> None:
    from services.rules.hand import start_hand
    from services.rules.scenario import _deal

    state, _ = start_hand("t", "h", _deal(PURE_WIN))
    before = copy.deepcopy(state)
    for tiles, code in [
        (["1m", "1m"], "exchange_needs_three"),
        (["1m", "1m", "4s"], "exchange_one_suit"),
        (["5m", "5m", "5m"], "tile_not_held"),
    ]:
        r = handle(state, cmd.ChooseExchange(seat=0, tiles=tiles))
        assert isinstance(r, cmd.Rejection) and r.code == code
    assert rejected_command(state, cmd.DeclareMissing(seat=0, suit="m")) == "not_missing_phase"
    assert rejected_command(state, cmd.Discard(seat=0, tile="1m")) == "opening_not_done"
    assert state == before


def rejected_command(state: HandState, c: cmd.HandCommand) -> str:
    r = handle(state, c)
    assert isinstance(r, cmd.Rejection)
    return r.code


def test_the_exchange_stays_hidden_until_all_four_chose() -> None:
    from services.rules.hand import start_hand
    from services.rules.scenario import _deal

    state, _ = start_hand("t", "h", _deal(PURE_WIN))
    for seat, tiles in enumerate(["1s 1s 4s", "1s 2s 3s", "5m 5m 6m"]):
        events = handle(state, cmd.ChooseExchange(seat=seat, tiles=tiles.split()))
        assert isinstance(events, list) and len(events) == 1
    assert rejected_command(state, cmd.ChooseExchange(seat=0, tiles=["1m", "1m", "2m"])) == (
        "already_chosen"
    )
    events = handle(state, cmd.ChooseExchange(seat=3, tiles=["2p", "3p", "4p"]))
    assert isinstance(events, list)
    resolved = events[-1]
    assert isinstance(resolved, ev.ExchangeResolved) and resolved.direction == "opposite"


def test_a_command_for_another_hand_or_an_old_decision_is_stale() -> None:
    state = at(PURE_WIN)
    r = handle(state, cmd.Discard(seat=0, tile="9p", hand_id="another"))
    assert isinstance(r, cmd.Rejection) and r.code == "stale_hand"
    r = handle(state, cmd.Discard(seat=0, tile="9p", decision_seq=state.decision_seq - 1))
    assert isinstance(r, cmd.Rejection) and r.code == "stale_decision"
    events = handle(
        state, cmd.Discard(seat=0, tile="9p", decision_seq=state.decision_seq, command_id="c1")
    )
    assert isinstance(events, list) and all(e.command_id == "c1" for e in events)
