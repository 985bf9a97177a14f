"""Shanten and ukeire from the per-suit tables, checked against brute force.

The brute force here is written independently of ``services.bots.efficiency``: it lists every
complete target (groups and a pair, per suit) and counts the tiles a hand lacks for the
nearest one. Shanten is that count minus one.
"""

from __future__ import annotations

import itertools
from functools import cache

import pytest
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


def every_draw_two_step(
    key_a: int, key_b: int, suit_a: int, suit_b: int, groups: int, unseen: list[float]
) -> float:
    """``eff.two_step`` as it was: every draw of both suits tried, each with all its discards
    (the tiles that cannot lower the shanten add nothing, found the long way)."""
    s = shanten(key_a, key_b, groups)
    if s <= 0:
        return 100 * eff.ukeire(key_a, key_b, suit_a, suit_b, groups, unseen)
    total = 0.0
    for suit, k in ((suit_a, key_a), (suit_b, key_b)):
        for r in range(9):
            t = suit * 9 + r
            if not unseen[t] or eff.digit(k, r) == 4:
                continue
            ka, kb = (key_a + POW5[r], key_b) if suit == suit_a else (key_a, key_b + POW5[r])
            u = eff.best_after_draw(ka, kb, suit_a, suit_b, groups, s - 1, unseen)
            if u >= 0:
                total += unseen[t] * u
    return total


@st.composite
def full_hands(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    """A full hand (``3·groups + 1`` tiles in two suits), four groups (seven pairs) too."""
    groups = draw(st.integers(1, 4))
    counts = [0] * 18
    while sum(counts) < 3 * groups + 1:
        t = draw(st.integers(0, 17))
        counts[t] += counts[t] < 4
    return counts[:9], counts[9:], groups


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(full_hands(), st.lists(st.integers(0, 4), min_size=18, max_size=18))
def test_two_step_skips_only_draws_that_cannot_lower_the_shanten(
    case: tuple[list[int], list[int], int], left: list[int]
) -> None:
    a, b, groups = case
    unseen = [float(n) for n in left] + [0.0] * 9
    ka, kb = key(a), key(b)
    assert eff.two_step(ka, kb, 0, 1, groups, unseen) == every_draw_two_step(
        ka, kb, 0, 1, groups, unseen
    )


def test_the_strong_computer_plays_the_same_hands_as_with_every_draw_tried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same decisions on a fixed set of deals: twenty hands of four strong computers
    give the same logs with the old two-step count as with the new."""
    from services.bots.strong import StrongBot
    from tests.analysis_hands import play_logged_hand

    deals = [bytes([n, 21]) * 16 for n in range(20)]
    now = [play_logged_hand(d, [StrongBot() for _ in range(4)]) for d in deals]
    monkeypatch.setattr(eff, "two_step", every_draw_two_step)
    before = [play_logged_hand(d, [StrongBot() for _ in range(4)]) for d in deals]
    assert now == before
    assert sum(len(e) for e in now) > 20 * 60  # whole hands, not a few moves
