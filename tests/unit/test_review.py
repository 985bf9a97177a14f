"""The review of a hand (``services.analysis.review``): which decisions are reviewed, from
which view, and how losses become marks. The plumbing is checked with a simple evaluator
written here; ``test_review_expert.py`` reviews with the expert itself."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import pytest

from schemas import analysis as an
from schemas import commands as cmd
from schemas import events as ev
from services.analysis.marks import mark
from services.analysis.review import SCREEN_KEEP, HandNotReviewable, option_key, review_hand
from services.bots import BotView, from_seat_view
from services.rules import legal_actions, replay, seat_view
from tests.analysis_hands import play_logged_hand
from tests.service.analysis_support import edge_value

SEED = bytes(range(32))


tile_count = edge_value
"""A made-up valuation (``tests.service.analysis_support.edge_value``)."""


@pytest.fixture(scope="module")
def hand() -> list[ev.Event]:
    return play_logged_hand(SEED, "normal")


def _seat_commands(events: list[ev.Event], seat: int) -> list[tuple[int, int]]:
    """(seq, number of legal options) of every decision event of ``seat``, by brute force:
    the state before each event, asking the engine what the seat could do."""
    out = []
    for i, e in enumerate(events):
        if getattr(e, "seat", getattr(e, "declarer", None)) != seat:
            continue
        state = replay(events[:i])
        options = legal_actions(state, seat)
        if options and _is_decision(e, state.window is None):
            out.append((e.seq, len(options)))
    return out


def _is_decision(e: ev.Event, no_window: bool) -> bool:
    if isinstance(e, ev.Konged):
        return e.kind != "exposed" and no_window
    if isinstance(e, ev.Won):
        return e.self_drawn
    return isinstance(
        e,
        ev.ExchangeChosen
        | ev.MissingSuitDeclared
        | ev.TileDiscarded
        | ev.RobbingWindowOpened
        | ev.ClaimDeclared
        | ev.Passed,
    )


def test_every_decision_with_a_choice_is_reviewed_at_the_seq_of_its_first_event(
    hand: list[ev.Event],
) -> None:
    review = review_hand(hand, [0, 2], evaluate=tile_count)
    for seat in (0, 2):
        expected = [seq for seq, n in _seat_commands(hand, seat) if n > 1]
        assert [d.seq for d in review.decisions if d.seat == seat] == expected
    assert {d.seat for d in review.decisions} == {0, 2}
    assert [s.seat for s in review.seats] == [0, 2]


def test_decisions_with_one_legal_option_are_not_reviewed(hand: list[ev.Event]) -> None:
    review = review_hand(hand, [0, 1, 2, 3], evaluate=tile_count)
    reviewed = {d.seq for d in review.decisions}
    for seat in range(4):
        for seq, n in _seat_commands(hand, seat):
            assert (seq in reviewed) == (n > 1)


def test_the_evaluator_gets_the_seats_own_view_at_the_moment_it_decided(
    hand: list[ev.Event],
) -> None:
    seen: list[BotView] = []

    def recording(
        view: BotView, options: Sequence[cmd.HandCommand]
    ) -> list[tuple[cmd.HandCommand, float]]:
        seen.append(view)
        return tile_count(view, options)

    review = review_hand(hand, [1], evaluate=recording)
    assert len(seen) == len(review.decisions) > 3
    for view, d in zip(seen, review.decisions, strict=True):
        before = replay(hand[: d.seq - 1])
        expected = from_seat_view(seat_view(before, 1))
        expected.legal = legal_actions(before, 1)
        # The seat view lists no opening choices; the review hands the evaluator them too.
        view_fields = {k: getattr(view, k) for k in BotView.__slots__ if k != "legal"}
        assert view_fields == {k: getattr(expected, k) for k in BotView.__slots__ if k != "legal"}
        assert [option_key(c) for c in view.legal] == [
            option_key(c) for c in legal_actions(before, 1)
        ]


def test_loss_is_the_best_value_minus_the_played_ones_and_the_mark_follows(
    hand: list[ev.Event],
) -> None:
    review = review_hand(hand, [0, 1, 2, 3], evaluate=tile_count)
    for d in review.decisions:
        values = {option_key(o.option): o.value for o in d.options}
        assert d.options[0].value == max(values.values())
        assert d.best == d.options[0].option
        assert d.loss == pytest.approx(max(values.values()) - values[option_key(d.played)])
        assert d.mark == mark(d.loss)
    marks = {d.mark for d in review.decisions}
    assert marks >= {"best", "inaccuracy"} and marks & {"mistake", "blunder"}
    assert any(d.loss > 0 for d in review.decisions)


def test_a_seats_summary_counts_its_marks_and_sums_its_losses(hand: list[ev.Event]) -> None:
    review = review_hand(hand, [0, 1, 2, 3], evaluate=tile_count)
    for s in review.seats:
        mine = [d for d in review.decisions if d.seat == s.seat]
        assert s.decisions == len(mine)
        assert s.best + s.inaccuracies + s.mistakes + s.blunders == len(mine)
        assert s.points_lost == pytest.approx(sum(d.loss for d in mine))
        assert s.player_id == f"seat-{s.seat}"
        assert 0 <= s.accuracy <= 100


def test_a_timeout_is_reviewed_and_flagged() -> None:
    events = play_logged_hand(SEED, "normal", timeout_at=20)
    timed_out = next(e for e in events if getattr(e, "timeout", False))
    seat = timed_out.seat  # type: ignore[attr-defined]
    review = review_hand(events, [seat], evaluate=tile_count)
    flagged = [d for d in review.decisions if d.timeout]
    assert [d.seq for d in flagged] == [timed_out.seq]


def test_the_review_round_trips_through_its_topic_encoding(hand: list[ev.Event]) -> None:
    review = review_hand(hand, [3], evaluate=tile_count)
    assert an.decode_review(an.encode(review)) == review
    assert msgspec.json.decode(an.encode(review))["type"] == "hand_review"


def test_a_hand_that_has_not_ended_cannot_be_reviewed(hand: list[ev.Event]) -> None:
    with pytest.raises(HandNotReviewable):
        review_hand(hand[:-1], [0], evaluate=tile_count)
    with pytest.raises(HandNotReviewable):
        review_hand(hand[1:], [0], evaluate=tile_count)


def test_a_screened_decision_values_only_the_leaders_and_the_played_option_in_full(
    hand: list[ev.Event],
) -> None:
    """With a screen, a decision of many options is valued coarsely first; the full valuation
    gets only the best ``SCREEN_KEEP`` of the screen and the option played, and the rest keep
    the screen's values in the options table."""
    calls: list[tuple[str, list[cmd.HandCommand]]] = []

    def coarse(
        view: BotView, options: Sequence[cmd.HandCommand]
    ) -> list[tuple[cmd.HandCommand, float]]:
        return [(c, v - 0.5) for c, v in tile_count(view, options)]

    def screen(
        view: BotView, options: Sequence[cmd.HandCommand]
    ) -> list[tuple[cmd.HandCommand, float]]:
        calls.append(("screen", list(options)))
        return coarse(view, options)

    def evaluate(
        view: BotView, options: Sequence[cmd.HandCommand]
    ) -> list[tuple[cmd.HandCommand, float]]:
        calls.append(("full", list(options)))
        return tile_count(view, options)

    review = review_hand(hand, [0, 1, 2, 3], evaluate=evaluate, screen=screen)
    screened = 0
    for d in review.decisions:
        kind, options = calls.pop(0)
        values = {option_key(o.option): o.value for o in d.options}
        if kind == "full":  # few options: all valued in full
            assert len(options) <= SCREEN_KEEP + 1 and len(options) == len(d.options)
            continue
        screened += 1
        ranked = sorted(coarse(BotView(seat=d.seat), options), key=lambda cv: -cv[1])
        leaders = [option_key(c) for c, _ in ranked[:SCREEN_KEEP]]
        kind, asked = calls.pop(0)
        assert kind == "full"
        assert [option_key(c) for c in asked] == list(
            dict.fromkeys([*leaders, option_key(d.played)])
        )
        for c, v in ranked:
            if option_key(c) not in leaders and option_key(c) != option_key(d.played):
                assert values[option_key(c)] == pytest.approx(v, abs=1e-4)  # the screen's
    assert not calls and screened > 3
