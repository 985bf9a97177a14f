"""Reviews by the expert itself (issue 21's checks): a hand the expert played throughout
marks nothing as a mistake, and a ready hand broken for nothing is a blunder. Skipped until
``services/bots/expert.py`` is there."""

from __future__ import annotations

import msgspec
import pytest

from schemas import commands as cmd
from services.analysis.review import expert_evaluate, review_hand
from services.rules import INDEX, NAMES, HandState, shanten, suit_keys
from tests.analysis_hands import play_logged_hand

expert = pytest.importorskip("services.bots.expert")

WORLDS = 8
SEED = bytes(range(32))


def _bots() -> list[object]:
    return [expert.ExpertBot(worlds=WORLDS) for _ in range(4)]


def _shanten_after(state: HandState, seat: int, tile: int) -> int:
    """How far from ready the seat's hand is after discarding ``tile`` (its two suits)."""
    counts = list(state.counts[seat])
    counts[tile] -= 1
    keys = suit_keys(counts)
    missing = state.missing[seat]
    if missing is not None and keys[missing]:
        return 99
    a, b = [s for s in range(3) if s != missing][:2]
    return shanten(keys[a], keys[b], 4 - len(state.melds[seat]))


def test_a_hand_the_expert_played_throughout_has_no_mistake_or_blunder() -> None:
    events = play_logged_hand(SEED, _bots())  # type: ignore[arg-type]
    review = review_hand(events, [0, 1, 2, 3], evaluate=expert_evaluate(WORLDS))
    assert review.decisions
    assert not [d for d in review.decisions if d.mark in ("mistake", "blunder")]


def test_breaking_a_ready_hand_for_nothing_is_a_blunder_at_that_decision() -> None:
    changed: dict[str, int] = {}

    def break_ready(n: int, state: HandState, command: cmd.HandCommand) -> cmd.HandCommand | None:
        if changed or not isinstance(command, cmd.Discard) or state.window is not None:
            return None
        seat = command.seat
        if _shanten_after(state, seat, INDEX[command.tile]) != 0:
            return None
        for t in range(27):
            if state.counts[seat][t] and _shanten_after(state, seat, t) == 1:
                changed.update(seat=seat, n=n)
                return msgspec.structs.replace(command, tile=NAMES[t])
        return None

    events = play_logged_hand(SEED, _bots(), change=break_ready)  # type: ignore[arg-type]
    assert changed, "no ready hand to break in this deal"
    seat = changed["seat"]
    review = review_hand(events, [seat], evaluate=expert_evaluate(WORLDS))
    broken = [d for d in review.decisions if d.mark == "blunder"]
    assert broken and broken[0].kind == "turn"
    assert isinstance(broken[0].played, cmd.Discard)
    assert _is_first_changed(review.decisions, broken[0].seq)


def _is_first_changed(decisions: list[object], seq: int) -> bool:
    return any(getattr(d, "seq", None) == seq for d in decisions)
