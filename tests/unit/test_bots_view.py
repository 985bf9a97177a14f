"""Bots see only their own seat (RULES.md §9, §10): by type, and by property over many hands."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import random
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import events as ev
from schemas.views import SeatView
from services.bots import STRENGTHS, SeatTracker
from services.bots.bot import Bot
from services.bots.botview import BotView, from_seat_view
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from services.rules.tiles import NAMES, SUITS
from services.rules.visibility import seat_view
from tests.helpers import quick_bot

LINEUPS = st.lists(st.sampled_from(sorted(STRENGTHS)), min_size=4, max_size=4)

# Everything a BotView holds. A new field must be added here on purpose, after checking
# that RULES.md §10 lets the seat see it.
ALLOWED_FIELDS = {
    "seat",
    "hand_id",
    "phase",
    "hand",  # the seat's own concealed tiles
    "keys",  # the same, as suit keys
    "drawn",  # the seat's own drawn tile
    "exchange_chosen",  # the seat's own exchange choice
    "exchange_received",  # the three tiles the seat received
    "direction",
    "missing",  # own once declared, others once revealed
    "concealed",  # counts only
    "melds",
    "discards",
    "won",
    "wins",
    "scores",
    "wall_left",  # a count, never the tiles
    "turn",
    "window",
    "legal",  # the seat's own legal actions
    "seen",
}


def _play(seed_int: int, lineup: list[str]) -> tuple[list[ev.Event], list[tuple[int, Any]]]:
    """A whole hand between bots; its events and, per decision, the seat and its command."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", "h", shuffle(seed), seed=seed)
    bots = [quick_bot(name) for name in lineup]
    trackers = [SeatTracker(s) for s in range(4)]
    for tracker in trackers:
        tracker.observe_all(events)
    decisions = []
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        view = trackers[seat].view
        view.legal = legal_actions(state, seat)
        command = bots[seat].decide(view)
        decisions.append((seat, command))
        result = handle(state, command)
        assert isinstance(result, list), result
        events.extend(result)
        for tracker in trackers:
            tracker.observe_all(result)
    return events, decisions


def scramble(event: ev.Event, seat: int, rng: random.Random) -> ev.Event:
    """The event with everything ``seat`` may not see replaced at random."""

    def tiles(n: int) -> list[str]:
        return [NAMES[rng.randrange(27)] for _ in range(n)]

    replace = msgspec.structs.replace
    if isinstance(event, ev.TilesDealt | ev.ExchangeChosen | ev.TileDrawn) and event.seat != seat:
        if isinstance(event, ev.TileDrawn):
            return replace(event, tile=tiles(1)[0])
        return replace(event, tiles=tiles(len(event.tiles)))
    if isinstance(event, ev.WallBuilt):
        return replace(
            event,
            tiles=tiles(len(event.tiles)),
            direction=rng.choice(["left", "opposite", "right"]),
            seed=bytes(rng.randrange(256) for _ in range(32)).hex(),
        )
    if isinstance(event, ev.ExchangeResolved):
        step = {"right": 1, "opposite": 2, "left": 3}[event.direction]
        giver = (seat - step) % 4
        passed = [p if i in (giver, seat) else tiles(3) for i, p in enumerate(event.passed)]
        return replace(event, passed=passed)
    if isinstance(event, ev.MissingSuitDeclared) and event.seat != seat:
        return replace(event, suit=rng.choice(SUITS))
    return event


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), LINEUPS)
def test_a_bots_input_never_depends_on_what_its_seat_may_not_see(
    seed_int: int, lineup: list[str]
) -> None:
    """Other seats' concealed tiles and draws, their exchange choices and declarations, and
    the wall: scrambling all of them leaves every seat's view unchanged, event by event."""
    events, _ = _play(seed_int, lineup)
    rng = random.Random(seed_int)
    for seat in range(4):
        honest, scrambled = SeatTracker(seat), SeatTracker(seat)
        for event in events:
            honest.observe(event)
            scrambled.observe(scramble(event, seat, rng))
            assert honest.view == scrambled.view


def test_the_scramble_really_changes_what_is_hidden() -> None:
    """Guard for the property above: the scrambled events differ where they may."""
    events, _ = _play(3, ["normal"] * 4)
    rng = random.Random(3)
    changed = [type(e) for e in events if scramble(e, 0, rng) != e]
    assert ev.TilesDealt in changed and ev.WallBuilt in changed and ev.TileDrawn in changed
    assert ev.ExchangeChosen in changed and ev.MissingSuitDeclared in changed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), LINEUPS)
def test_the_tracked_view_equals_the_engines_seat_view_at_every_decision(
    seed_int: int, lineup: list[str]
) -> None:
    """The incremental view holds exactly what ``seat_view`` shows the seat, always."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", "h", shuffle(seed), seed=seed)
    bots = [quick_bot(name) for name in lineup]
    trackers = [SeatTracker(s) for s in range(4)]
    for tracker in trackers:
        tracker.observe_all(events)
    while state.phase != "ended":
        for s, tracker in enumerate(trackers):
            tracker.view.legal = legal_actions(state, s)
            assert tracker.view == from_seat_view(seat_view(state, s))
            assert tracker.view.hand == state.counts[s]
        seat = rng.choice(pending_seats(state))
        result = handle(state, bots[seat].decide(trackers[seat].view))
        assert isinstance(result, list), result
        for tracker in trackers:
            tracker.observe_all(result)


def test_a_bot_view_has_no_place_for_hidden_information() -> None:
    fields = {f.name for f in dataclasses.fields(BotView)}
    assert fields == ALLOWED_FIELDS


def test_the_bot_api_takes_views_only() -> None:
    """By construction: the signatures name the view types, never the hand state."""
    decide = inspect.signature(Bot.decide, eval_str=True)
    act = inspect.signature(Bot.act, eval_str=True)
    assert [p.annotation for p in decide.parameters.values()][1:] == [BotView]
    assert [p.annotation for p in act.parameters.values()][1:] == [SeatView]


def test_a_spectators_view_cannot_drive_a_bot() -> None:
    seed = random_seed(random.Random(1))
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    try:
        from_seat_view(seat_view(state, None))
    except ValueError:
        return
    raise AssertionError("a spectator's view must be refused")


class FutureEvent(ev.HandEvent, frozen=True, tag="future_event"):
    """An event type the bots were not written for (a clock's, say)."""

    seat: int


def test_unknown_events_are_ignored() -> None:
    """Events added later must not break a bot's view."""
    events, _ = _play(5, ["easy"] * 4)
    tracker = SeatTracker(1)
    tracker.observe_all(events[:10])
    before = copy.deepcopy(tracker.view)
    tracker.observe(FutureEvent(table_id="t", hand_id="h", seq=11, seat=1))
    assert tracker.view == before
