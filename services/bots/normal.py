"""The normal bot: tile efficiency, from its own hand alone.

It passes the three least useful tiles of its weakest suit, declares missing the suit whose
loss costs the fewest tiles, sheds its missing suit first (the loosest tile first), and
otherwise discards the tile that leaves the lowest shanten with the most tiles to come that
improve it (ukeire). It wins whenever it can, claims a pung only when that lowers its
shanten, and declares a kong when that keeps its shanten.

It does not read the table: "tiles to come" are the copies outside its own hand and groups,
as a textbook efficiency table counts them. Reading discards, declared groups and missing
suits is the strong bot's (``services.bots.strong``).
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas import commands as cmd
from services.bots import efficiency as eff
from services.bots.bot import (
    Bot,
    Choices,
    claim_kong,
    discard,
    hu,
    kong,
    passing,
    pung,
    suit_sizes,
)
from services.bots.botview import BotView
from services.rules import POW5, connectedness, digit, shanten, suit_keys


def needed_without(keys: list[int], suit: int) -> int:
    """Tiles the hand needs if ``suit`` is dropped (declared missing)."""
    rest = [keys[s] for s in range(3) if s != suit]
    return eff.tiles_needed(rest, 4, True)


def weakest_three(hand: list[int], suit: int) -> list[int]:
    """Three tiles of ``suit`` whose loss hurts that suit least (edge tiles on ties)."""
    key = suit_keys(hand)[suit]
    out: list[int] = []
    for _ in range(3):
        ranks = [r for r in range(9) if digit(key, r)]
        r = max(ranks, key=lambda r: (eff.suit_quality(key - POW5[r]), abs(r - 4), -r))
        key -= POW5[r]
        out.append(suit * 9 + r)
    return sorted(out)


KEPT: tuple[tuple[int, int], ...] = ((1, 2), (0, 2), (0, 1))
"""``KEPT[missing]``: the two suits a hand plays with."""


def own_remaining(view: BotView) -> list[int]:
    """Copies of each tile type outside the seat's own hand and groups: what a player who
    does not read the table counts as still to come."""
    out = [4 - n for n in view.hand]
    for m in view.melds[view.seat]:
        out[m.tile] -= m.size
    return out


def unseen_counts(view: BotView) -> list[int]:
    """Copies of each tile type the seat cannot see anywhere (the table read)."""
    return [
        n if n > 0 else 0 for n in (4 - h - s for h, s in zip(view.hand, view.seen, strict=True))
    ]


class Efficiency:
    """A clean hand in play, seen through its two kept suits (for the efficiency bots).

    ``remaining[t]`` is how many tiles of type ``t`` the bot counts on still drawing: the
    normal bot counts what is not in its own hand, the strong bot reads the table.
    """

    __slots__ = ("a", "b", "groups", "ka", "kb", "remaining", "view")

    def __init__(self, view: BotView, remaining: Sequence[float]) -> None:
        missing = view.missing[view.seat]
        assert missing is not None
        self.view = view
        self.remaining = remaining
        self.a, self.b = KEPT[missing]
        self.ka, self.kb = view.keys[self.a], view.keys[self.b]
        self.groups = 4 - len(view.melds[view.seat])

    def without(self, t: int, n: int = 1) -> tuple[int, int]:
        """The two keys with ``n`` copies of ``t`` removed."""
        if t // 9 == self.a:
            return self.ka - n * POW5[t % 9], self.kb
        return self.ka, self.kb - n * POW5[t % 9]

    def shanten(self, keys: tuple[int, int] | None = None, groups: int | None = None) -> int:
        """Shanten of the hand (or of other keys), needing ``groups`` (default: the hand's)."""
        ka, kb = keys if keys is not None else (self.ka, self.kb)
        return shanten(ka, kb, self.groups if groups is None else groups)

    def discards(self, tiles: list[int], groups: int | None = None) -> list[tuple[int, float, int]]:
        """``(shanten, ukeire, tile)`` for each discard that leaves the lowest shanten."""
        g = self.groups if groups is None else groups
        return eff.rank_discards(self.ka, self.kb, self.a, self.b, g, tiles, self.remaining)


def shed_missing(view: BotView, tiles: list[int]) -> int:
    """Which missing-suit tile to shed: the loosest (it helps the hand least if kept)."""
    return min(tiles, key=lambda t: (connectedness(view.hand, t), -t))


class NormalBot(Bot):
    """Tile efficiency (see the module note)."""

    strength = "normal"

    def remaining(self, view: BotView) -> Sequence[float]:
        """What it counts on still drawing: every copy outside its own hand and groups."""
        return own_remaining(view)

    def exchange(self, view: BotView) -> list[int]:
        keys = view.keys
        sizes = suit_sizes(view.hand)
        suit = min(
            (s for s in range(3) if sizes[s] >= 3),
            key=lambda s: (needed_without(keys, s), sizes[s], s),
        )
        return weakest_three(view.hand, suit)

    def missing_suit(self, view: BotView) -> int:
        keys = view.keys
        sizes = suit_sizes(view.hand)
        return min(range(3), key=lambda s: (needed_without(keys, s), sizes[s], s))

    def respond(self, view: BotView, options: Choices) -> cmd.HandCommand:
        if options.hu:
            return hu(view) if self.takes_win(view) else passing(view)
        if view.window is None or view.window[0] != "discard":
            return passing(view)
        t = view.window[1]
        hand = Efficiency(view, self.remaining(view))
        now = hand.shanten()
        if options.claim_kong and hand.shanten(hand.without(t, 3), hand.groups - 1) <= now:
            return claim_kong(view)
        if options.pung and self.pung_helps(view, hand, t, now):
            return pung(view)
        return passing(view)

    def takes_win(self, view: BotView) -> bool:
        """Whether to win on the open window's tile: always."""
        return True

    def pung_helps(self, view: BotView, hand: Efficiency, t: int, now: int) -> bool:
        """Pung the window's discard ``t`` only when that lowers the shanten ``now``."""
        return self.pung_shanten(hand, t) < now

    @staticmethod
    def pung_shanten(hand: Efficiency, t: int) -> int:
        """The shanten after punging ``t`` and making the best discard."""
        ka, kb = hand.without(t, 2)
        g = hand.groups - 1
        best = 99
        for s in (hand.a, hand.b):
            key = ka if s == hand.a else kb
            for r in range(9):
                if digit(key, r):
                    keys = (ka - POW5[r], kb) if s == hand.a else (ka, kb - POW5[r])
                    best = min(best, shanten(*keys, g))
        return best

    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        if options.hu:
            return hu(view)
        missing = view.missing[view.seat]
        if missing is not None and view.keys[missing]:
            return discard(view, shed_missing(view, options.discards))
        hand = Efficiency(view, self.remaining(view))
        ranked = hand.discards(options.discards)
        best_s = ranked[0][0]
        for t in options.kongs:
            after = (
                hand.shanten(hand.without(t, 4), hand.groups - 1)
                if view.hand[t] == 4
                else hand.shanten(hand.without(t))
            )
            if after <= best_s:
                return kong(view, t)
        _, _, tile = max(ranked, key=lambda x: (x[1], -connectedness(view.hand, x[2]), x[2]))
        return discard(view, tile)
