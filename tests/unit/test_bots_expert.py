"""The expert bot and the worlds it plays out: sampled from its own view only, consistent
with everything the seat has seen, deterministic, and always legal (issue 21)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from services.bots import SeatTracker, make_bot
from services.bots.botview import BotView, MeldInfo
from services.bots.danger import shown_clean
from services.bots.expert import ExpertBot, all_options, option_values
from services.bots.ladder import one_vs_three, play_hand
from services.bots.worlds import NoWorld, sample_world, seat_views
from services.rules import (
    NUM_TYPES,
    handle,
    legal_actions,
    pending_seats,
    random_seed,
    shuffle,
    start_hand,
)


def positions(seed_int: int, every: int = 3) -> list[tuple[BotView, list[cmd.HandCommand]]]:
    """Views of seats at their decisions in a hand between normal bots (copies), with the
    engine's legal actions at that moment."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", f"h{seed_int}", shuffle(seed), seed=seed)
    trackers = [SeatTracker(s) for s in range(4)]
    for t in trackers:
        t.observe_all(events)
    bot = make_bot("normal")
    out = []
    n = 0
    while state.phase != "ended":
        seat = pending_seats(state)[0]
        view = trackers[seat].view
        view.legal = legal_actions(state, seat) if state.phase == "play" else []
        if n % every == 0:
            snapshot = BotView(seat=seat)
            for name in BotView.__slots__:
                value = getattr(view, name)
                setattr(snapshot, name, _copy(value))
            out.append((snapshot, list(view.legal)))
        n += 1
        result = handle(state, bot.decide(view))
        assert isinstance(result, list)
        for t in trackers:
            t.observe_all(result)
    return out


def _copy(value: object) -> object:
    """A deep copy of a view's field: the tracker changes its groups in place (a pung
    becoming an added kong), and a snapshot must not follow."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, MeldInfo):
        return MeldInfo(value.kind, value.tile, value.from_seat)
    return value


def _bare(c: cmd.HandCommand) -> tuple[str, int, str]:
    return (type(c).__name__, c.seat, getattr(c, "tile", ""))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_a_sampled_world_agrees_with_the_seats_view(seed_int: int) -> None:
    """Every world keeps the seat's own tiles and every public fact, gives the seat the same
    legal actions, and keeps opponents who have shown they are clean clean."""
    rng = random.Random(seed_int)
    for view, legal in positions(seed_int):
        if view.phase == "exchange":
            continue
        try:
            world, _ = sample_world(view, rng)
        except NoWorld:
            continue
        mine = seat_views(world, view.wins)[view.seat]
        for name in ("hand", "keys", "missing", "discards", "won", "scores"):
            assert getattr(mine, name) == getattr(view, name), name
        for o in range(4):
            assert view.won[o] or mine.concealed[o] == view.concealed[o]
        assert mine.wall_left == view.wall_left or any(view.won)
        assert mine.seen == view.seen or view.window is not None
        for o in range(4):
            m = view.missing[o]
            if o != view.seat and not view.won[o] and m is not None and shown_clean(view, o):
                assert not any(world.counts[o][m * 9 : m * 9 + 9]), f"seat {o} holds its missing"
        if view.phase == "play" and view.turn == view.seat and view.window is None:
            assert sorted(map(_bare, legal_actions(world, view.seat))) == sorted(map(_bare, legal))


def test_a_world_keeps_the_unseen_tiles_exactly() -> None:
    """Mid-hand, the opponents' hands and the wall hold exactly the tiles the seat cannot
    see, one for one."""
    checked = 0
    for view, _ in positions(11, every=1):
        if view.phase != "play" or view.window is not None or any(view.won):
            continue
        world, _ = sample_world(view, random.Random(checked))
        hidden = [0] * NUM_TYPES
        for s in range(4):
            if s != view.seat:
                for t in range(NUM_TYPES):
                    hidden[t] += world.counts[s][t]
        for t in world.wall[world.front : world.back]:
            hidden[t] += 1
        assert hidden == [view.unseen(t) for t in range(NUM_TYPES)]
        checked += 1
    assert checked > 10


def test_option_values_are_the_same_for_the_same_view() -> None:
    view = next(
        v for v, legal in positions(5) if v.phase == "play" and v.turn == v.seat and len(legal) > 3
    )
    first = option_values(view, worlds=4)
    again = option_values(view, worlds=4)
    assert first == again
    assert len(first) == len(all_options(view)) > 1


def test_the_exchange_options_are_every_distinct_triple_of_one_suit() -> None:
    view = next(v for v, _ in positions(3, every=1) if v.phase == "exchange")
    options = all_options(view)
    triples = {tuple(c.tiles) for c in options if isinstance(c, cmd.ChooseExchange)}
    assert len(triples) == len(options)
    assert all(len({t[1] for t in tiles}) == 1 for tiles in triples)


def test_a_complete_hand_is_worth_more_won_than_passed() -> None:
    """Self-drawn win against a discard: a world where the seat declines its win values
    it lower."""
    for seed_int in range(40):
        for view, legal in positions(seed_int, every=1):
            if view.window is None and any(isinstance(c, cmd.Hu) for c in legal) and len(legal) > 1:
                values = dict((_bare(c), v) for c, v in option_values(view, worlds=8))
                won = values[("Hu", view.seat, "")]
                assert won == max(values.values())
                return
    pytest.fail("no self-draw decision found in 40 hands")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_every_expert_command_is_legal_and_every_hand_ends(seed_int: int) -> None:
    """play_hand checks every command against the engine and raises on a refused one."""
    seed = random_seed(random.Random(seed_int))
    expert = ExpertBot(worlds=3)
    result = play_hand(seed, [expert, make_bot("strong"), expert, make_bot("normal")])
    assert sum(result.scores) == 0


def test_a_strength_against_three_copies_of_itself_scores_exactly_zero() -> None:
    """Duplicate one-versus-three: with the same bot in every seat the four hands of a
    deal are the same hand, and the points of a hand sum to zero."""
    result = one_vs_three("normal", "normal", deals=6, seed=3)
    assert result.mean == 0 and result.hands == 24


def test_one_versus_three_tells_a_weak_challenger_from_a_strong_one() -> None:
    result = one_vs_three("easy", "normal", deals=40, seed=1)
    assert result.high < 0
