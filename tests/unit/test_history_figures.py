"""The hand-history fold's figure facts on real hands (conformance scenarios played to their
end by the rules engine, and random self-play), and a player's figures from those rows."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import events as ev
from schemas.table import EventEnvelope, encode
from services.history.figures import PlayerFigures, figures
from services.history.fold import KINDS, HandRow, HandsFold, rows_of
from services.rules.hand import handle, legal_actions
from services.rules.scenario import played
from services.rules.selfplay import play_random_hand
from services.rules.state import HandState, pending_seats
from services.runtime.log import Record
from services.runtime.topics import TABLE_EVENTS

SCENARIOS = Path(__file__).parents[1] / "scenarios"
PLAYERS = ["ann", "bob", "cat", "dan"]


def _scenario(name: str) -> dict[str, object]:
    found: dict[str, object] = json.loads(next(SCENARIOS.glob(f"*/{name}.json")).read_text())
    return found


def _to_the_end(state: HandState, events: list[ev.Event], seed: int = 1) -> list[ev.Event]:
    """Play on with random legal actions until the hand ends (the scenarios stop early)."""
    rng = random.Random(seed)
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        result = handle(state, rng.choice(legal_actions(state, seat)))
        assert isinstance(result, list)
        events.extend(result)
    return events


def _rows(events: list[ev.Event]) -> list[HandRow]:
    fold = HandsFold(0)
    for offset, e in enumerate(events):
        fold.fold(Record(TABLE_EVENTS, 0, offset, e.table_id, encode(EventEnvelope(event=e)), 7))
    (hand,) = fold.take_ended()
    return rows_of(hand, None)


def _scenario_rows(name: str) -> tuple[list[HandRow], list[ev.Event]]:
    state, events = played(_scenario(name), players=PLAYERS)
    events = _to_the_end(state, events)
    return _rows(events), events


def test_a_self_drawn_win_is_recorded_with_its_fan_and_no_deal_in() -> None:
    rows, events = _scenario_rows("wins-dealer-first-turn-self-drawn")
    first = next(e for e in events if isinstance(e, ev.Won))
    assert first.seat == 0 and first.self_drawn
    assert rows[0].won == "self_drawn" and rows[0].best_fan == 0
    # Every win of the hand is recorded as its events say, and a self-draw deals nobody in.
    wins = {e.seat: e for e in events if isinstance(e, ev.Won)}
    for row in rows:
        w = wins.get(row.seat)
        assert row.won == (None if w is None else "self_drawn" if w.self_drawn else "discard")
        assert row.best_fan == (None if w is None else w.fan)
    assert sum(r.dealt_in for r in rows) == sum(not w.self_drawn for w in wins.values())


def test_one_discard_that_three_players_win_on_deals_the_discarder_in_three_times() -> None:
    rows, _ = _scenario_rows("wins-three-winners-one-discard")
    assert [r.won for r in rows] == [None, "discard", "discard", "discard"]
    assert [r.best_fan for r in rows] == [None, 0, 2, 2]
    assert [r.dealt_in for r in rows] == [3, 0, 0, 0]
    assert [r.score for r in rows] == [-9, 1, 4, 4]
    assert not any(r.flower_pig or r.not_ready for r in rows)
    assert [r.player for r in rows] == PLAYERS and rows[0].end == "three_winners"


def test_an_exhaustion_records_the_flower_pig_and_the_clean_seats_not_ready() -> None:
    rows, _ = _scenario_rows("flower-pig-replaces-not-ready-penalty")
    assert rows[0].end == "wall_exhausted"
    assert [r.flower_pig for r in rows] == [False, False, False, True]
    assert [r.not_ready for r in rows] == [True, False, True, False]  # seat 1 is ready
    assert [r.won for r in rows] == [None] * 4 and [r.dealt_in for r in rows] == [0] * 4
    assert [r.score for r in rows] == [7, 10, 7, -24]


def test_a_winner_at_an_exhaustion_is_neither_flower_pig_nor_not_ready() -> None:
    rows, events = _scenario_rows("winner-neither-pays-nor-receives-at-exhaustion")
    exhausted = next(e for e in events if isinstance(e, ev.WallExhausted))
    for row in rows:
        if row.won is not None:
            assert not row.flower_pig and not row.not_ready
            assert exhausted.ready[row.seat] is None
        else:
            assert row.flower_pig == (row.seat in exhausted.flower_pigs)
            assert row.not_ready == (
                exhausted.ready[row.seat] is False and row.seat not in exhausted.flower_pigs
            )


def test_figures_of_the_three_scenarios_for_each_player() -> None:
    rows = [
        r
        for name in (
            "wins-three-winners-one-discard",
            "flower-pig-replaces-not-ready-penalty",
        )
        for r in _scenario_rows(name)[0]
    ]
    ann = figures([r for r in rows if r.player == "ann"])
    # ann dealt three winners in, then was clean and not ready at an exhaustion.
    assert ann.hands == 2 and ann.wins == 0 and ann.win_rate == 0.0
    assert ann.deal_ins == 3 and ann.dealt_in_hands == 1 and ann.deal_in_rate == 0.5
    assert ann.not_ready == 1 and ann.not_ready_rate == 0.5 and ann.flower_pig_rate == 0.0
    assert ann.points == -9 + 7 and ann.average_points == -1.0
    assert ann.exhausted_remaining == 1 and ann.places == [0, 1, 0, 1]
    dan = figures([r for r in rows if r.player == "dan"])
    assert dan.wins == 1 and dan.win_rate == 0.5 and dan.average_fan == 2.0
    assert dan.self_draw_share == 0.0 and dan.flower_pigs == 1 and dan.flower_pig_rate == 0.5
    assert dan.casual == 2 and dan.rated == 0 and dan.by_kind["casual"] == 2


def test_figures_of_nothing_are_zeros_not_errors() -> None:
    empty = figures([])
    assert empty == PlayerFigures(by_kind=dict.fromkeys(KINDS, 0))
    assert empty.win_rate == 0.0 and empty.places == [0, 0, 0, 0]


def test_figures_of_one_kind_count_only_that_kind() -> None:
    rows, _ = _scenario_rows("wins-three-winners-one-discard")
    rated = [msgspec_replace(r, kind="rated", rated=True) for r in rows]
    assert figures(rated + rows, "rated").hands == 4
    mine = [r for r in rated + rows if r.player == "bob"]
    both = figures(mine)
    assert both.rated == 1 and both.casual == 1 and both.by_kind["rated"] == 1
    assert figures(mine, "practice").hands == 0


def msgspec_replace(row: HandRow, **changes: object) -> HandRow:
    import msgspec

    return msgspec.structs.replace(row, **changes)


def _random_rows(seed: int) -> list[HandRow]:
    rng = random.Random(seed)
    _, events = play_random_hand(rng, eager=True)
    events = [
        msgspec_replace(e, seats=PLAYERS) if isinstance(e, ev.HandStarted) else e for e in events
    ]
    return _rows(events)


@pytest.mark.parametrize("seed", range(40))
def test_the_folds_facts_agree_with_the_events_of_random_hands(seed: int) -> None:
    rows = _random_rows(seed)
    _, events = play_random_hand(random.Random(seed), eager=True)
    wins = [e for e in events if isinstance(e, ev.Won)]
    assert sum(r.won is not None for r in rows) == len(wins)
    assert sum(r.won == "self_drawn" for r in rows) == sum(w.self_drawn for w in wins)
    assert sum(r.dealt_in for r in rows) == sum(not w.self_drawn for w in wins)
    for w in wins:
        if not w.self_drawn:
            assert w.from_seat is not None and rows[w.from_seat].dealt_in > 0
    exhausted = [e for e in events if isinstance(e, ev.WallExhausted)]
    pigs = {s for e in exhausted for s in e.flower_pigs}
    assert {r.seat for r in rows if r.flower_pig} == pigs
    if not exhausted:
        assert not any(r.not_ready for r in rows)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=0, max_size=6), st.sampled_from(PLAYERS))
def test_figures_are_consistent_for_any_set_of_hands(seeds: list[int], player: str) -> None:
    rows = [r for s in seeds for r in _random_rows(s) if r.player == player]
    f = figures(rows)
    assert f.hands == len(rows) == sum(f.places) == sum(f.by_kind.values())
    assert f.rated + f.casual == f.hands
    for rate in (
        f.win_rate,
        f.deal_in_rate,
        f.self_draw_share,
        f.flower_pig_rate,
        f.not_ready_rate,
    ):
        assert 0.0 <= rate <= 1.0
    assert f.self_drawn <= f.wins <= f.hands
    assert f.flower_pigs + f.not_ready <= f.exhausted_remaining
    assert f.dealt_in_hands <= f.deal_ins
    assert f.flower_pig_rate + f.not_ready_rate + f.win_rate <= 1.0 + 1e-9
    assert 0.0 <= f.average_fan <= 30
