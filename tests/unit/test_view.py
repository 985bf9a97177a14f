"""RULES.md §10: a seat's view never depends on what it may not see."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules.fan import suit_keys
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import eager_choice, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.tiles import DIRECTION_STEP, counts_of, tiles_of
from services.rules.visibility import seat_view


def scramble(state: HandState, seat: int | None, rng: random.Random) -> HandState:
    """A copy in which everything ``seat`` may not see is shuffled among the hidden places."""
    s = state.copy()
    others = [x for x in range(4) if x != seat and not s.won[x]]
    keep_choice = set()
    if seat is not None and s.phase not in ("deal", "exchange") and s.direction:
        keep_choice.add((seat - DIRECTION_STEP[s.direction]) % 4)  # what it received
    if seat is not None:
        keep_choice.add(seat)
    choices = [x for x in range(4) if x not in keep_choice and s.exchange[x] is not None]
    pool = [t for x in others for t in tiles_of(s.counts[x])]
    pool += s.wall[s.front : s.back]
    pool += [t for x in choices for t in s.exchange[x] or ()]
    rng.shuffle(pool)
    for x in others:
        n = sum(s.counts[x])
        s.counts[x] = counts_of(pool[:n])
        s.keys[x] = suit_keys(s.counts[x])
        del pool[:n]
    for x in choices:
        s.exchange[x] = tuple(pool[:3])
        del pool[:3]
    s.wall = s.wall[: s.front] + pool + s.wall[s.back :]
    if not all(m is not None for m in s.missing):
        for x in range(4):
            if x != seat and s.missing[x] is not None:
                s.missing[x] = rng.randrange(3)
    if s.direction is not None and s.phase in ("deal", "exchange"):
        s.direction = rng.choice(list(DIRECTION_STEP))
    s.seed = None if s.seed is None else bytes(32).hex()
    return s


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_a_seat_view_never_leaks_hidden_information(seed_int: int) -> None:
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    while state.phase != "ended":
        for viewer in (0, 1, 2, 3, None):
            assert seat_view(scramble(state, viewer, rng), viewer) == seat_view(state, viewer)
        seat = rng.choice(pending_seats(state))
        handle(state, eager_choice(rng, state, legal_actions(state, seat)))


def test_the_scramble_really_changes_hidden_tiles() -> None:
    """Guard for the property above: scrambling must be able to change another seat's hand."""
    rng = random.Random(5)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    assert any(scramble(state, 0, rng).counts[1] != state.counts[1] for _ in range(5))


def test_after_the_end_everything_is_revealed() -> None:
    rng = random.Random(9)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        handle(state, eager_choice(rng, state, legal_actions(state, seat)))
    view = seat_view(state, 2)
    assert view.seed == seed.hex()
    assert all(p.hand is not None for p in view.players)


def test_own_tiles_and_draw_are_visible_to_the_seat_only() -> None:
    rng = random.Random(11)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    mine = seat_view(state, 1)
    assert mine.players[1].hand is not None and len(mine.players[1].hand) == 13
    assert mine.players[0].hand is None and mine.players[0].concealed_count == 14
    assert seat_view(state, None).players[1].hand is None
    assert mine.legal_actions and seat_view(state, None).legal_actions == []
