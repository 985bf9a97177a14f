"""Fan awareness: which patterns a hand can still reach, how far away they are, what they pay.

A *target* is a way to finish the hand: the plain standard form, seven pairs, all pungs (with
the golden hook once three groups are declared), or a pure suit (standard form in one suit,
the other kept suit thrown away). Each has a distance (tiles still needed) and a value
(``2^fan`` with the hand's roots counted, RULES.md §4).

Self-play settled how much value is worth against speed here: very little. Almost three
players win every hand, the first winner takes about six points more than one who never
wins, so a slower hand loses more than a bigger one gains. The strong bot therefore takes
value only where it is free: a target no further away than the plain hand (``free_value``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.bots import efficiency as eff
from services.rules import POW5, digit, pairs, standard_shanten

FAN_CAP = 3


def value_of(fan: int) -> int:
    """Hand value ``2^min(fan, 3)``."""
    return 1 << min(fan, FAN_CAP)


@dataclass(frozen=True, slots=True)
class Target:
    """One way to finish a hand: how many tiles it still needs and what it would pay."""

    name: str
    needed: int
    value: int


_PURE: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}


def pure_distance(key: int, groups: int) -> tuple[int, tuple[int, ...]]:
    """Tiles a one-suit hand (standard form) needs, and the ranks whose draw shortens that."""
    got = _PURE.get((key, groups))
    if got is None:
        need = eff.tiles_needed([key], groups, False)
        better = tuple(
            r
            for r in range(9)
            if digit(key, r) < 4 and eff.tiles_needed([key + POW5[r]], groups, False) < need
        )
        got = (need, better)
        _PURE[(key, groups)] = got
    return got


def roots_of(hand: Sequence[int], melds: Sequence[tuple[int, int]]) -> int:
    """Tile types of which a hand holds all four, its declared groups included."""
    roots = sum(1 for n in hand if n == 4)
    for t, size in melds:
        if size == 4 or hand[t]:
            roots += 1
    return roots


def all_pungs_distance(hand: Sequence[int], suits: Sequence[int], groups: int) -> int:
    """Tiles needed to finish as all pungs: ``groups`` pungs and a pair from the kept suits."""
    counts = sorted((min(hand[t], 3) for s in suits for t in range(s * 9, s * 9 + 9)), reverse=True)
    counts += [0] * (groups + 1)
    best = 99
    top = counts[: groups + 1]
    for head in range(groups + 1):
        cost = max(0, 2 - top[head]) + sum(3 - c for i, c in enumerate(top) if i != head)
        best = min(best, cost)
    return best


def targets(
    hand: Sequence[int],
    keys: Sequence[int],
    suits: tuple[int, int],
    melds: Sequence[tuple[int, int]],
) -> list[Target]:
    """The targets of a clean hand of ``3·groups + 1`` concealed tiles, ``groups`` being
    ``4 - len(melds)`` (``melds``: declared groups as ``(tile, size)``).

    Values count the roots the hand already has and a pure suit it already is. There is no
    chow in this game, so a hand whose groups are all declared is all pungs with a golden
    hook; all pungs with three declared groups will likely end that way too.
    """
    a, b = suits
    ka, kb = keys[a], keys[b]
    groups = 4 - len(melds)
    roots = roots_of(hand, melds)
    meld_suits = {t // 9 for t, _ in melds}
    held_suits = {s for s, k in ((a, ka), (b, kb)) if k}
    pure = 2 if len(meld_suits | held_suits) == 1 else 0  # already one suit only
    hook = 2 if groups == 0 else 0  # all pungs and golden hook
    out = [Target("standard", standard_shanten(ka, kb, groups) + 1, value_of(roots + pure + hook))]
    if groups == 4:
        held_pairs = pairs(ka) + pairs(kb)
        out.append(Target("seven_pairs", 7 - min(held_pairs, 7), value_of(2 + roots + pure)))
    elif groups:
        fan = 1 + (1 if groups == 1 else 0)  # all pungs, and likely the golden hook
        needed = all_pungs_distance(hand, suits, groups)
        out.append(Target("all_pungs", needed, value_of(fan + roots + pure)))
    if not pure:
        for x, kx in ((a, ka), (b, kb)):
            if not meld_suits - {x}:  # a declared group of another suit rules it out
                need, _ = pure_distance(kx, groups)
                out.append(Target("pure_suit", need, value_of(2 + roots)))
    return out


def free_value(options: Sequence[Target]) -> int:
    """The best value among a hand's ``targets`` no further away than the plain standard form
    (the first): what the hand can pay without costing any speed."""
    plain = options[0].needed
    return max(t.value for t in options if t.needed <= plain)
