"""End of hand and placement (RULES.md §7): the hand's end, final points and placements."""

from __future__ import annotations

from itertools import repeat
from operator import gt

from schemas import events as ev
from services.rules.state import Fold, HandState, Log


def placements(scores: list[int]) -> list[int]:
    """Placement 1-4 per seat by final points, highest first; equal points share a place."""
    # 1 + how many others scored more: ``other > mine`` counted by map, in C.
    return [1 + sum(map(gt, scores, repeat(mine))) for mine in scores]


def end(log: Log, how: str) -> None:
    """End the hand (three winners, or after the §6 settlement) with its points and places."""
    s = log.state
    log.emit(
        ev.HandEnded, end=how, scores=s.scores[:], placements=placements(s.scores), seed=s.seed
    )


def _hand_ended(s: HandState, e: ev.HandEnded) -> None:
    s.phase = "ended"
    s.end = e.end
    s.window = None
    s.turn = s.turn_kind = s.drawn = None
    s.decision_seq = e.seq


FOLDS: dict[type, Fold] = {ev.HandEnded: _hand_ended}
