"""Every bot command is legal, no bot stalls a hand, and bots keep the rules that bind them:
the missing-suit rule and the passing restrictions (RULES.md §3)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from services.bots import STRENGTHS, SeatTracker, make_bot
from services.bots.ladder import MAX_DECISIONS, play_hand
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from services.rules.tiles import INDEX
from tests.helpers import quick_bot

LINEUPS = st.lists(st.sampled_from(sorted(STRENGTHS)), min_size=4, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), LINEUPS, st.sampled_from([0.0, 0.0, 0.1]))
def test_every_bot_command_is_legal_and_every_hand_ends(
    seed_int: int, lineup: list[str], timeout_rate: float
) -> None:
    """Any strengths in any seats, with clock timeouts now and then acting for a seat: each
    command a bot sends is among its legal actions and the engine accepts it."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", "h", shuffle(seed), seed=seed)
    bots = [quick_bot(name) for name in lineup]
    trackers = [SeatTracker(s) for s in range(4)]
    for tracker in trackers:
        tracker.observe_all(events)
    for _ in range(MAX_DECISIONS):
        if state.phase == "ended":
            break
        seat = rng.choice(pending_seats(state))
        legal = legal_actions(state, seat)
        command: cmd.HandCommand
        if rng.random() < timeout_rate:
            command = cmd.Timeout(seat=seat)
        else:
            trackers[seat].view.legal = legal
            command = bots[seat].decide(trackers[seat].view)
            assert command in legal, f"{lineup[seat]} sent {command}, not legal"
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        for tracker in trackers:
            tracker.observe_all(result)
    assert state.phase == "ended"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), LINEUPS)
def test_bots_shed_their_missing_suit_first(seed_int: int, lineup: list[str]) -> None:
    """While a bot holds its missing suit, it discards that suit and claims nothing."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", "h", shuffle(seed), seed=seed)
    bots = [quick_bot(name) for name in lineup]
    trackers = [SeatTracker(s) for s in range(4)]
    for tracker in trackers:
        tracker.observe_all(events)
    while state.phase != "ended":
        seat = pending_seats(state)[0]
        view = trackers[seat].view
        view.legal = legal_actions(state, seat) if state.phase == "play" else []
        command = bots[seat].decide(view)
        missing = view.missing[seat]
        if state.phase == "play" and missing is not None and view.keys[missing]:
            if isinstance(command, cmd.Discard):
                assert INDEX[command.tile] // 9 == missing
            else:
                assert isinstance(command, cmd.Pass), command
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        for tracker in trackers:
            tracker.observe_all(result)


def test_a_bot_that_passed_a_win_does_not_claim_one_until_it_draws() -> None:
    """The passing restriction: the engine offers no win then, and the bot asks for none."""
    hunted = 0
    for n in range(40):
        seed = random_seed(random.Random(n))
        state, events = start_hand("t", "h", shuffle(seed), seed=seed)
        bots = [make_bot("strong")] * 4  # the strong bot passes cheap wins early
        trackers = [SeatTracker(s) for s in range(4)]
        for tracker in trackers:
            tracker.observe_all(events)
        blocked = [False] * 4
        while state.phase != "ended":
            seat = pending_seats(state)[0]
            view = trackers[seat].view
            view.legal = legal_actions(state, seat) if state.phase == "play" else []
            command = bots[seat].decide(view)
            if view.window is not None and blocked[seat]:
                assert not isinstance(command, cmd.Hu)
            offered = view.window is not None and cmd.Hu(seat=seat) in view.legal
            if offered and isinstance(command, cmd.Pass):
                blocked[seat] = True
                hunted += 1
            result = handle(state, command)
            assert not isinstance(result, cmd.Rejection), result
            for event in result:
                if isinstance(event, ev.TileDrawn):
                    blocked[event.seat] = False
            for tracker in trackers:
                tracker.observe_all(result)
    assert hunted, "the strong bot never passed a win: the test saw no restriction"


def test_a_duplicate_deal_replays_the_same_hand() -> None:
    """Bots are pure: the same deal and seating always plays out the same way."""
    seed = random_seed(random.Random(8))
    bots = [make_bot(s) for s in ("easy", "normal", "strong", "normal")]
    first = play_hand(seed, bots)
    assert play_hand(seed, bots) == first
    assert sum(first.scores) == 0
