"""A player's figures from their hand-history rows: pure, rows in, ``PlayerFigures`` out.

The rows are the projection's (``services.history.fold.HandRow``, one per hand the player
sat in); every fact is read from the events there, once, and only counted here. The store
gives a player's rows (``HistoryStore.figure_rows``), so the live store and a rebuild from
the log give the same figures for the same rows.

Denominators (a rate is 0.0 when its denominator is 0):

- ``win_rate``: hands won / hands.
- ``average_points``: the sum of the player's points / hands.
- ``deal_in_rate``: hands in which the player dealt in at least once (paid for another
  seat's win on their discard or robbed kong) / hands. ``deal_ins`` counts every such win
  (one discard can pay two or three winners).
- ``self_draw_share``: self-drawn wins / wins.
- ``average_fan``: the sum of the fan of the player's wins / wins.
- ``flower_pig_rate`` and ``not_ready_rate``: hands that ended in a wall exhaustion with the
  player a flower pig (resp. clean and not ready, RULES.md §6) / hands. Winners are never
  either; ``exhausted_remaining`` counts the hands the player was still in at an exhaustion.
- ``places``: how many hands the player ended 1st, 2nd, 3rd, 4th (equal points share a
  place, so the counts sum to ``hands``).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from services.history.fold import KINDS, HandRow


class PlayerFigures(msgspec.Struct, frozen=True, kw_only=True):
    """A player's figures over a set of finished hands (see the module note)."""

    hands: int = 0
    rated: int = 0
    casual: int = 0
    """Hands that were not rated (practice, casual and unrated Quick Play)."""
    by_kind: dict[str, int] = {}
    """Hands per kind: practice, casual, rated, quick_play (every kind present, 0 too)."""
    wins: int = 0
    self_drawn: int = 0
    deal_ins: int = 0
    dealt_in_hands: int = 0
    flower_pigs: int = 0
    not_ready: int = 0
    exhausted_remaining: int = 0
    points: int = 0
    """The sum of the player's points."""
    win_rate: float = 0.0
    average_points: float = 0.0
    deal_in_rate: float = 0.0
    self_draw_share: float = 0.0
    average_fan: float = 0.0
    flower_pig_rate: float = 0.0
    not_ready_rate: float = 0.0
    places: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])
    """Hands ended 1st, 2nd, 3rd, 4th."""


def _rate(n: int, of: int) -> float:
    return n / of if of else 0.0


def figures(rows: Iterable[HandRow], kind: str | None = None) -> PlayerFigures:
    """The figures of one player's rows (all kinds, or only ``kind``)."""
    hands = rated = wins = self_drawn = deal_ins = dealt_in_hands = 0
    pigs = not_ready = remaining = points = fan = 0
    by_kind = dict.fromkeys(KINDS, 0)
    places = [0, 0, 0, 0]
    for r in rows:
        if kind is not None and r.kind != kind:
            continue
        hands += 1
        rated += r.rated
        by_kind[r.kind] = by_kind.get(r.kind, 0) + 1
        points += r.score
        if 1 <= r.placement <= 4:
            places[r.placement - 1] += 1
        if r.best_fan is not None:
            wins += 1
            fan += r.best_fan
            self_drawn += r.won == "self_drawn"
        elif r.end == "wall_exhausted":
            remaining += 1
        deal_ins += r.dealt_in
        dealt_in_hands += r.dealt_in > 0
        pigs += r.flower_pig
        not_ready += r.not_ready
    return PlayerFigures(
        hands=hands,
        rated=rated,
        casual=hands - rated,
        by_kind=by_kind,
        wins=wins,
        self_drawn=self_drawn,
        deal_ins=deal_ins,
        dealt_in_hands=dealt_in_hands,
        flower_pigs=pigs,
        not_ready=not_ready,
        exhausted_remaining=remaining,
        points=points,
        win_rate=_rate(wins, hands),
        average_points=_rate(points, hands),
        deal_in_rate=_rate(dealt_in_hands, hands),
        self_draw_share=_rate(self_drawn, wins),
        average_fan=_rate(fan, wins),
        flower_pig_rate=_rate(pigs, hands),
        not_ready_rate=_rate(not_ready, hands),
        places=places,
    )
