"""Shanten and ukeire from the per-suit tables, checked against brute force.

The brute force here is written independently of ``services.bots.efficiency``: it lists every
complete target (groups and a pair, per suit) and counts the tiles a hand lacks for the
nearest one. Shanten is that count minus one.
"""

from __future__ import annotations

import itertools
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.bots import efficiency as eff
from services.rules import POW5, shanten, standard_shanten

_BLOCKS = [("pung", r) for r in range(9)] + [("run", r) for r in range(7)]


@cache
def _targets(groups: int) -> dict[tuple[int, int], tuple[tuple[int, ...], ...]]:
    """Per suit: (groups, pair) -> every count vector of that many groups (and a pair)."""
    out: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    for n in range(groups + 1):
        for combo in itertools.combinations_with_replacement(_BLOCKS, n):
            base = [0] * 9
            for kind, r in combo:
                for d in (0,) * 3 if kind == "pung" else (0, 1, 2):
                    base[r + d] += 1
            if max(base) > 4:
                continue
            out.setdefault((n, 0), []).append(tuple(base))
            for r in range(9):
                if base[r] <= 2:
                    with_pair = list(base)
                    with_pair[r] += 2
                    out.setdefault((n, 1), []).append(tuple(with_pair))
    return {k: tuple(v) for k, v in out.items()}


def brute_needed(suits: list[list[int]], groups: int, seven: bool) -> int:
    """The fewest tiles to add for a complete hand, by trying every target."""
    per_suit = []
    for counts in suits:
        best: dict[tuple[int, int], int] = {}
        for key, targets in _targets(groups).items():
            best[key] = min(
                sum(max(0, t - c) for t, c in zip(tg, counts, strict=True)) for tg in targets
            )
        per_suit.append(best)
    result = 99
    for choice in itertools.product(*(d.items() for d in per_suit)):
        if sum(k[0] for k, _ in choice) == groups and sum(k[1] for k, _ in choice) == 1:
            result = min(result, sum(v for _, v in choice))
    if seven and groups == 4:
        flat = [c for counts in suits for c in counts]
        cost = {0: 0}  # pairs made -> tiles added; a quad is two pairs
        for c in flat:
            step = dict(cost)
            for made, added in cost.items():
                for pairs, need in ((1, max(0, 2 - c)), (2, max(0, 4 - c))):
                    if made + pairs <= 7:
                        step[made + pairs] = min(step.get(made + pairs, 99), added + need)
            cost = step
        result = min(result, cost.get(7, 99))
    return result


def key(counts: list[int]) -> int:
    return sum(c * p for c, p in zip(counts, POW5, strict=True))


def hands(min_gap: int, max_gap: int) -> st.SearchStrategy[tuple[list[int], list[int], int]]:
    """Two suits' counts of a hand needing ``groups`` groups, short of ``gap`` tiles."""

    @st.composite
    def build(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
        groups = draw(st.sampled_from([1, 2, 2, 3]))
        size = max(0, 3 * groups + 1 - draw(st.integers(min_gap, max_gap)))
        types = draw(st.lists(st.integers(0, 17), min_size=size, max_size=size))
        counts = [0] * 18
        for t in types:
            if counts[t] < 4:
                counts[t] += 1
        return counts[:9], counts[9:], groups

    return build()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(0, 0))
def test_shanten_of_full_hands_matches_brute_force(case: tuple[list[int], list[int], int]) -> None:
    a, b, groups = case
    if sum(a) + sum(b) != 3 * groups + 1:
        return  # a fifth copy was dropped: not a full hand
    fast = shanten(key(a), key(b), groups) + 1
    slow = brute_needed([a, b], groups, groups == 4)
    # The tables do not know the fifth-copy rule: holding four of a tile they may count a
    # wait on a fifth. Never further than the truth, and exact without a quad in hand.
    assert fast <= slow
    if 4 not in a + b:
        assert fast == slow


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(1, 5))
def test_tiles_needed_of_hands_with_gaps_matches_brute_force(
    case: tuple[list[int], list[int], int],
) -> None:
    a, b, groups = case
    fast = eff.tiles_needed([key(a), key(b)], groups, False)
    slow = brute_needed([a, b], groups, False)
    assert fast <= slow  # the fifth-copy rule again (see above)
    if 4 not in a + b:
        assert fast == slow


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(0, 0))
def test_ukeire_counts_exactly_the_tiles_that_lower_the_shanten(
    case: tuple[list[int], list[int], int],
) -> None:
    a, b, groups = case
    if sum(a) + sum(b) != 3 * groups + 1 or 4 in a + b or groups > 2:
        return  # full hands without a quad (see above), small enough for the brute force
    remaining = [1.0] * 18 + [0.0] * 9  # suits 0 and 1, one copy each still to come
    now = brute_needed([a, b], groups, False)
    expected = 0
    for t in range(18):
        counts = a + b
        if counts[t] < 4:
            counts[t] += 1  # a tile helps if the hand now lacks fewer tiles
            expected += brute_needed([counts[:9], counts[9:]], groups, False) < now
    assert eff.standard_ukeire(key(a), key(b), 0, 1, groups, remaining) == expected


def test_a_complete_hand_has_shanten_minus_one() -> None:
    run, pung, pair = key([1, 1, 1, 0, 0, 0, 0, 0, 0]), key([0, 0, 0, 0, 3, 0, 0, 0, 0]), 0
    assert shanten(run + pung, key([2, 0, 0, 0, 0, 0, 0, 0, 0]) + pair, 2) == -1


def test_seven_pairs_count_when_no_group_is_declared() -> None:
    six_pairs = key([2, 2, 0, 2, 0, 2, 0, 0, 1])  # 2 2 . 2 . 2 . . 1 -> plus three more pairs
    other = key([0, 2, 0, 0, 0, 0, 2, 0, 0])
    assert shanten(six_pairs, other, 4) == 0  # ready on the single
    assert standard_shanten(six_pairs, other, 4) > 0


def test_a_wait_on_a_fifth_copy_brings_no_tiles() -> None:
    """Four 1s wait on a fifth (shanten 0 by the tables), but no copy is left to come."""
    quad = key([4, 0, 0, 0, 0, 0, 0, 0, 0])
    assert shanten(quad, 0, 1) == 0
    remaining = [4.0 - (t == 0) * 4 for t in range(27)]
    assert eff.ukeire(quad, 0, 0, 1, 1, remaining) == 0
