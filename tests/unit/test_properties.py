"""Properties over thousands of random legal hands (RULES.md as a whole).

Tiles are conserved, payments sum to zero, replaying the events equals the live state,
every hand ends, and ``legal_actions`` agrees with ``decide``.
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from services.rules.hand import decide, handle, legal_actions, replay, start_hand
from services.rules.selfplay import eager_choice, play_random_hand, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.tiles import ALL_TILES, NAMES

MAX_COMMANDS = 2000  # far above any real hand: 55 draws, each with a window and responses


def tiles_in_play(s: HandState) -> Counter[int]:
    out: Counter[int] = Counter()
    for seat in range(4):
        out.update({t: n for t, n in enumerate(s.counts[seat]) if n})
        out.update(m.tile for m in s.melds[seat] for _ in range(m.size))
        out.update(s.discards[seat])
        if s.phase == "exchange":  # chosen tiles are set aside until all four have chosen
            out.update(s.exchange[seat] or ())
    out.update(s.taken)
    out.update(s.wall[s.front : s.back])
    return out


hands = st.tuples(st.integers(0, 2**32), st.booleans(), st.sampled_from([0.0, 0.0, 0.05, 0.3]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands)
def test_tiles_conserved_payments_zero_sum_and_replay_equals_live(
    case: tuple[int, bool, float],
) -> None:
    seed_int, eager, timeout_rate = case
    rng = random.Random(seed_int)
    state, events = play_random_hand(rng, eager=eager, timeout_rate=timeout_rate)
    assert state.phase == "ended"
    assert tiles_in_play(state) == Counter(ALL_TILES)
    assert sum(state.scores) == 0
    assert all(p.amount > 0 for p in state.payments)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert replay(events) == state


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_every_step_conserves_tiles_and_every_hand_ends(seed_int: int) -> None:
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    for _ in range(MAX_COMMANDS):
        if state.phase == "ended":
            break
        seat = rng.choice(pending_seats(state))
        result = handle(state, eager_choice(rng, state, legal_actions(state, seat)))
        assert not isinstance(result, cmd.Rejection)
        assert tiles_in_play(state) == Counter(ALL_TILES)
        assert sum(state.scores) == 0
    assert state.phase == "ended"


def _random_command(rng: random.Random) -> cmd.HandCommand:
    seat = rng.randrange(4)
    tile = NAMES[rng.randrange(27)]
    return rng.choice(
        [
            cmd.Discard(seat=seat, tile=tile),
            cmd.Kong(seat=seat, tile=tile),
            cmd.Hu(seat=seat),
            cmd.Pung(seat=seat),
            cmd.ClaimKong(seat=seat),
            cmd.Pass(seat=seat),
            cmd.DeclareMissing(seat=seat, suit=rng.choice("mps")),
            cmd.ChooseExchange(
                seat=seat, tiles=[NAMES[rng.randrange(27)] for _ in range(rng.choice((2, 3, 3)))]
            ),
        ]
    )


def _key(c: cmd.HandCommand) -> tuple[object, ...]:
    tiles = getattr(c, "tiles", None)
    return (
        type(c),
        c.seat,
        getattr(c, "tile", None),
        getattr(c, "suit", None),
        tuple(sorted(tiles)) if tiles is not None else None,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_legal_actions_and_decide_agree(seed_int: int) -> None:
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    while state.phase != "ended":
        listed = {seat: legal_actions(state, seat) for seat in range(4)}
        for actions in listed.values():
            for action in actions:
                assert not isinstance(decide(state, action), cmd.Rejection), action
        allowed = {_key(a) for actions in listed.values() for a in actions}
        for _ in range(6):
            attempt = _random_command(rng)
            if _key(attempt) in allowed:
                continue
            before = state.copy()
            result = decide(state, attempt)
            assert isinstance(result, cmd.Rejection), attempt
            assert result.reason and result.code
            assert handle(state, attempt) == result
            assert state == before
        seat = rng.choice(pending_seats(state))
        handle(state, eager_choice(rng, state, listed[seat]))
    for seat in range(4):
        assert legal_actions(state, seat) == []
