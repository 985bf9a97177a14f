"""No view and no event a seat (or spectator) receives ever holds what RULES.md §10 hides.

Hands are played with eager random players (many wins, kongs and robbing windows); at every
point of every hand, for every seat and for a spectator, the filtered event log and the
seat view are checked against the rules' list of private and hidden facts.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from schemas import events as ev
from schemas.views import HiddenEvent
from services.rules.hand import replay
from services.rules.selfplay import play_random_hand
from services.rules.visibility import seat_view, seen_events, window_resolved

SEATS: tuple[int | None, ...] = (None, 0, 1, 2, 3)
STEP = {"right": 1, "opposite": 2, "left": 3}


def _check_events(events: list[ev.Event], seat: int | None) -> None:
    seen = seen_events(events, seat)
    assert [e.seq for e in seen] == [e.seq for e in events]  # no gap, nothing reordered
    over = isinstance(events[-1], ev.HandEnded)
    for i, (e, s) in enumerate(zip(events, seen, strict=True)):
        if over:
            assert s == e
            continue
        own = getattr(e, "seat", None) == seat and seat is not None
        if isinstance(e, ev.WallBuilt):
            assert isinstance(s, HiddenEvent) and s.public == {"count": len(e.tiles)}
        elif isinstance(e, ev.TilesDealt | ev.ExchangeChosen | ev.MissingSuitDeclared):
            assert (s == e) if own else isinstance(s, HiddenEvent)
        elif isinstance(e, ev.TileDrawn):
            if own:
                assert s == e
            else:
                assert isinstance(s, HiddenEvent)
                assert "tile" not in msgspec.to_builtins(s)["public"]
        elif isinstance(e, ev.ExchangeResolved):
            assert isinstance(s, ev.ExchangeResolved)
            for giver, tiles in enumerate(s.passed):
                entitled = seat is not None and seat in (giver, (giver + STEP[e.direction]) % 4)
                assert tiles == (e.passed[giver] if entitled else [])
        elif isinstance(e, ev.ResponseWindowOpened):
            # The seats asked are public; what each may claim is its own.
            assert isinstance(s, ev.ResponseWindowOpened) and s.seats == e.seats
            for asked, rights, shown in zip(e.seats, e.claims, s.claims, strict=True):
                assert shown == (rights if asked == seat else 0)
        elif isinstance(e, ev.ClaimDeclared | ev.Passed):
            if own or window_resolved(events, i):
                assert s == e
            else:
                assert isinstance(s, HiddenEvent)
        else:
            assert s == e


def _check_view(events: list[ev.Event], seat: int | None) -> None:
    state = replay(events)
    view = seat_view(state, seat)
    if state.phase == "ended":
        return
    assert view.wall is None and view.seed is None
    for p in view.players:
        if p.seat != seat and not p.won:
            assert p.hand is None
    if seat is None:
        assert view.legal_actions == [] and view.drawn is None
        assert view.exchange_chosen is None and view.exchange_received is None


@pytest.mark.parametrize("hand", range(6))
def test_no_seat_ever_sees_what_is_hidden_from_it(hand: int) -> None:
    rng = random.Random(hand)
    _, events = play_random_hand(rng, eager=hand % 2 == 0)
    for end in range(1, len(events) + 1, 3):
        prefix = events[:end]
        for seat in SEATS:
            _check_events(prefix, seat)
            _check_view(prefix, seat)
    for seat in SEATS:  # the end reveals everything
        assert seen_events(events, seat) == events


def test_a_pause_in_an_open_window_keeps_the_computers_answers_hidden() -> None:
    """A pause is not the window resolving: the answers given so far stay hidden."""
    for hand in range(200):
        _, events = play_random_hand(random.Random(hand), eager=True, pause_rate=0.3)
        for k, e in enumerate(events):
            answered = isinstance(events[k - 1], ev.ClaimDeclared | ev.Passed)
            if isinstance(e, ev.HandPaused) and answered and events[k - 1].seat != 0:
                seen = seen_events(events[: k + 1], 0)
                assert isinstance(seen[k - 1], HiddenEvent)
                seen = seen_events(events[: k + 2], 0)  # and the resume after it
                assert isinstance(events[k + 1], ev.HandResumed)
                assert isinstance(seen[k - 1], HiddenEvent)
                return
    raise AssertionError("no hand paused right after a computer's answer")
