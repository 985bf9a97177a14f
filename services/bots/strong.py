"""The strong bot: the normal bot's efficiency, with the table read and two steps deep, plus
value, danger, push/fold and the end of the wall.

- **Reading the table.** It counts only the tiles it cannot see (discards, declared groups,
  winners' hands), and expects fewer of a suit that opponents play and more of one they have
  declared missing (``available``). This alone is worth about 0.1 point a hand over the
  normal bot's count of tiles outside its own hand.
- **Deeper efficiency.** Among the discards that keep the lowest shanten it weighs how good
  the hand is after each improving tile (two-step ukeire, ``efficiency.two_step``), and it
  claims a pung that keeps the shanten when that is clearly better two steps deep.
- **Fan awareness** (``services.bots.fan``). Value is taken where it costs no speed: a pure
  suit no further away than the plain hand (then it throws the other suit away first), and
  among the efficient discards the one keeping the most fan reachable at no extra distance
  (seven pairs, all pungs and the golden hook, roots). It breaks no triplet it could kong.
- **Self-draw.** Early, with all three opponents still in and five or more winning tiles
  unseen, it passes a win on a discard: a self-draw pays ``value + 1`` three times over.
- **Danger** (``services.bots.danger``). Each discard carries the points it is expected to
  hand to opponents who win on it; among near-equal discards it takes the safer one, and it
  sheds its missing suit most dangerous tile first, while opponents are least likely ready.
  It adds no kong onto a pung with a tile opponents are likely waiting on (robbing).
- **Push or fold.** Far from ready, late, against ready-looking opponents holding valuable
  hands, it folds: the safest tile, shanten as a tie-break. A flower pig pays 8 to every
  clean player at exhaustion, so it never keeps its missing suit to fold.
- **The end of the wall.** A not-ready player pays every ready one at exhaustion (RULES.md
  §6) and gives back its kong income, so in the last draws it puts being ready first.

docs/bots.md has the measurements behind these choices.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas import commands as cmd
from services.bots import efficiency as eff
from services.bots.bot import Choices, discard, hu, kong
from services.bots.botview import BotView
from services.bots.danger import Threat, danger, pressure, shown_clean, threats
from services.bots.fan import free_value, pure_distance, targets
from services.bots.normal import Efficiency, NormalBot, unseen_counts
from services.rules import POW5, connectedness, winning_tiles

SAFETY = 1.5
"""Share of the best discard's two-step score worth giving up per point of danger."""
VALUE_WEIGHT = 0.15
"""How much each fan the hand keeps for free raises a discard's two-step score (share)."""
PUNG_GAIN = 1.2
"""A pung that keeps the shanten must make the two-step score this much better."""
FOLD_SHANTEN = 3
"""Folding is considered only this far from ready (or further)."""
FOLD_PRESSURE = 1.5
"""... and only when ready-looking opponents hold this many expected points."""
FOLD_WALL = 30
"""... and only with at most this many tiles left in the wall."""
LATE_WALL = 8
"""With this few tiles left, being ready comes before safety (no danger weighed)."""
ROB_RISK = 0.3
"""Danger of a tile above which the bot adds no kong with it (it could be robbed)."""
KEPT_SHARE = 0.5
"""Share of an opponent's concealed tiles counted as holding each suit it plays."""
MISSING_SHARE = 0.3
"""... and its missing suit, while it has not shown it is clean."""
SELF_DRAW_WALL = 24
"""Early in the hand (this many tiles left or more) ..."""
SELF_DRAW_OUTS = 5
"""... with this many winning tiles still unseen, it passes a discard win to self-draw."""


def available(view: BotView) -> list[float]:
    """Copies of each tile type the seat can expect to draw: the unseen ones, less those
    likely kept in the hands of opponents who play that suit.

    An opponent that has shown it is clean holds nothing of its missing suit, so the unseen
    tiles of a suit that others have declared missing are mostly in the wall.
    """
    wall = max(view.wall_left, 1)
    held = [0.0, 0.0, 0.0]  # opponents' concealed tiles that may hold each suit
    for o in range(4):
        if o == view.seat or view.won[o]:
            continue
        clean = shown_clean(view, o)
        for s in range(3):
            if s != view.missing[o]:
                held[s] += view.concealed[o] * KEPT_SHARE
            elif not clean:
                held[s] += view.concealed[o] * MISSING_SHARE
    return [u * wall / (wall + held[t // 9]) for t, u in enumerate(unseen_counts(view))]


class StrongBot(NormalBot):
    """Efficiency two steps deep, value, danger and push/fold (see the module note)."""

    strength = "strong"

    def remaining(self, view: BotView) -> Sequence[float]:
        """What it counts on drawing: the unseen tiles, weighed by where they probably are."""
        return available(view)

    # --- one's turn ----------------------------------------------------------------------

    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        if options.hu:
            return hu(view)
        foes = threats(view)
        missing = view.missing[view.seat]
        if missing is not None and view.keys[missing]:
            return discard(view, self.shed_missing(view, foes, options.discards))
        hand = Efficiency(view, self.remaining(view))
        ranked = hand.discards(options.discards)
        best_s = ranked[0][0]
        for t in options.kongs:
            if self.kong_keeps(view, hand, foes, t, best_s):
                return kong(view, t)
        if (
            best_s >= FOLD_SHANTEN
            and view.wall_left <= FOLD_WALL
            and pressure(foes) >= FOLD_PRESSURE
        ):
            return discard(view, self.fold(view, hand, foes, options.discards))
        pure = self.free_pure_suit(view, hand, best_s)
        if pure is not None:
            return discard(view, pure)
        return discard(view, self.efficient(view, hand, foes, ranked))

    @staticmethod
    def shed_missing(view: BotView, foes: list[Threat], tiles: list[int]) -> int:
        """The missing-suit tile to shed: the most dangerous now, as danger only grows."""
        return max(tiles, key=lambda t: (danger(view, foes, t), view.seen[t], t))

    @staticmethod
    def kong_keeps(
        view: BotView, hand: Efficiency, foes: list[Threat], t: int, best_s: int
    ) -> bool:
        """Whether a kong of ``t`` keeps the shanten (and, if added, is unlikely robbed)."""
        if view.hand[t] == 4:
            return hand.shanten(hand.without(t, 4), hand.groups - 1) <= best_s
        if danger(view, foes, t) > ROB_RISK:
            return False
        return hand.shanten(hand.without(t)) <= best_s

    @staticmethod
    def efficient(
        view: BotView,
        hand: Efficiency,
        foes: list[Threat],
        ranked: list[tuple[int, float, int]],
    ) -> int:
        """Among the lowest-shanten discards: best two-step score, raised by the value the
        hand keeps for free and lowered by danger; roots kept on ties."""
        if len(ranked) == 1:
            return ranked[0][2]
        late = view.wall_left <= LATE_WALL
        melds = [(m.tile, m.size) for m in view.melds[view.seat]]
        suits = (hand.a, hand.b)
        scored: list[tuple[float, int, int]] = []
        for _, _, t in ranked:
            ka, kb = hand.without(t)
            deep = eff.two_step(ka, kb, hand.a, hand.b, hand.groups, hand.remaining)
            after = list(view.hand)
            after[t] -= 1
            keys = list(view.keys)
            keys[hand.a], keys[hand.b] = ka, kb
            value = free_value(targets(after, keys, suits, melds))
            scored.append((deep, value.bit_length() - 1, t))
        top = max(d for d, _, _ in scored) or 1.0

        def key(item: tuple[float, int, int]) -> tuple[float, int, int, int]:
            deep, fan, t = item
            risk = 0.0 if late else SAFETY * danger(view, foes, t)
            keeps_root = -1 if view.hand[t] >= 3 else 0
            score = deep / top * (1.0 + VALUE_WEIGHT * fan) - risk
            return (score, keeps_root, -connectedness(view.hand, t), t)

        return max(scored, key=key)[2]

    @staticmethod
    def free_pure_suit(view: BotView, hand: Efficiency, best_s: int) -> int | None:
        """A discard towards a pure suit when that suit is no further away than the plain
        hand: then the pure suit's fourfold value costs nothing. None otherwise."""
        melds = view.melds[view.seat]
        for x, kx, other in ((hand.a, hand.ka, hand.kb), (hand.b, hand.kb, hand.ka)):
            if not other or any(m.tile // 9 != x for m in melds):
                continue
            need, _ = pure_distance(kx, hand.groups)
            if need - 1 <= best_s:
                y = hand.b if x == hand.a else hand.a
                tiles = [t for t in range(y * 9, y * 9 + 9) if view.hand[t]]
                return min(tiles, key=lambda t: (connectedness(view.hand, t), t))
        return None

    @staticmethod
    def fold(view: BotView, hand: Efficiency, foes: list[Threat], tiles: list[int]) -> int:
        """The safest discard; among equally safe ones the one hurting the hand least."""
        return min(
            tiles,
            key=lambda t: (round(danger(view, foes, t), 3), hand.shanten(hand.without(t)), t),
        )

    # --- windows -------------------------------------------------------------------------

    def takes_win(self, view: BotView) -> bool:
        """Whether to win on the open window's tile: not while it hunts a self-draw."""
        return not self.hunts_self_draw(view)

    @staticmethod
    def hunts_self_draw(view: BotView) -> bool:
        """Pass a win on a discard to wait for a self-draw: early, with all three opponents
        still paying and many winning tiles unseen, a self-draw pays ``value + 1`` three
        times over instead of ``value`` once (the passing restriction lasts one draw)."""
        if view.window is None or view.window[0] != "discard":
            return False
        if view.wall_left < SELF_DRAW_WALL or sum(view.won):
            return False
        missing = view.missing[view.seat]
        waits = winning_tiles(view.keys, len(view.melds[view.seat]), missing)
        return sum(view.unseen(t) for t in waits) - 1 >= SELF_DRAW_OUTS

    def pung_helps(self, view: BotView, hand: Efficiency, t: int, now: int) -> bool:
        """Pung when it lowers the shanten, or keeps it and is clearly better two steps deep."""
        ka, kb = hand.without(t, 2)
        g = hand.groups - 1
        held = [x for x in range(27) if view.hand[x] - (2 if x == t else 0) > 0]
        ranked = eff.rank_discards(ka, kb, hand.a, hand.b, g, held, hand.remaining)
        after = ranked[0][0]
        if after != now:
            return after < now
        before = eff.two_step(hand.ka, hand.kb, hand.a, hand.b, hand.groups, hand.remaining)
        for _, _, x in ranked:
            p = POW5[x % 9]
            keys = (ka - p, kb) if x // 9 == hand.a else (ka, kb - p)
            if eff.two_step(*keys, hand.a, hand.b, g, hand.remaining) >= PUNG_GAIN * before:
                return True
        return False
