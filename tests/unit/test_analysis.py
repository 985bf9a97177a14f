"""RULES.md §4 and §6: complete hands, waits, readiness and fan, checked against a slow
brute-force reading of the rules written independently here."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from services.rules.fan import (
    best_reading,
    complete_from_counts,
    is_complete,
    ready_value,
    suit_keys,
    winning_tiles,
)
from services.rules.tiles import tile
from tests.helpers import counts


def _groups_and_pair(c: tuple[int, ...], need_pair: bool) -> bool:
    """Brute force: can these counts be split into groups (and one pair if needed)?"""

    @cache
    def go(cs: tuple[int, ...], pair: bool) -> bool:
        i = next((k for k, n in enumerate(cs) if n), None)
        if i is None:
            return not pair
        out = list(cs)
        if pair and out[i] >= 2:
            out[i] -= 2
            if go(tuple(out), False):
                return True
            out[i] += 2
        if out[i] >= 3:
            out[i] -= 3
            if go(tuple(out), pair):
                return True
            out[i] += 3
        if i % 9 <= 6 and out[i + 1] and out[i + 2]:
            out[i] -= 1
            out[i + 1] -= 1
            out[i + 2] -= 1
            if go(tuple(out), pair):
                return True
        return False

    return go(c, need_pair)


def _brute_complete(c: list[int], declared: int) -> bool:
    if _groups_and_pair(tuple(c), True):
        return True
    return declared == 0 and sum(c) == 14 and all(n % 2 == 0 for n in c)


hands14 = st.lists(st.integers(0, 26), min_size=14, max_size=14).filter(
    lambda ts: all(ts.count(t) <= 4 for t in set(ts))
)
one_suit_hands = st.lists(st.integers(0, 8), min_size=14, max_size=14).filter(
    lambda ts: all(ts.count(t) <= 4 for t in set(ts))
)


def _counts(ts: list[int]) -> list[int]:
    out = [0] * 27
    for t in ts:
        out[t] += 1
    return out


@settings(max_examples=3000)
@given(st.one_of(hands14, one_suit_hands))
def test_complete_check_agrees_with_brute_force(ts: list[int]) -> None:
    c = _counts(ts)
    assert complete_from_counts(c) == _brute_complete(c, 0)


def test_four_groups_and_a_pair_is_complete() -> None:
    assert complete_from_counts(counts("1m 2m 3m 4m 5m 6m 7m 8m 9m 5p 5p 5p 6p 6p"))


def test_sequences_do_not_wrap_from_nine_to_one() -> None:
    assert not complete_from_counts(counts("8m 9m 1m 3m 4m 5m 5p 5p 5p 7p 8p 9p 6s 6s"))


def test_seven_pairs_counts_a_quad_as_two_pairs() -> None:
    assert complete_from_counts(counts("1m 1m 1m 1m 3m 3m 5p 5p 7p 7p 9s 9s 2s 2s"))


def test_seven_pairs_needs_no_declared_groups() -> None:
    c = counts("3m 3m 5p 5p 7p 7p 9s 9s 2s 2s 4s")
    c[tile("4s")] += 1
    assert not is_complete(suit_keys(c), 1, None)


def test_undeclared_four_of_a_kind_is_not_a_group() -> None:
    # 1111m + 234m 567m 89m? — the quad cannot stand as one group of four.
    assert not complete_from_counts(counts("1m 1m 1m 1m 2m 3m 4m 5m 6m 7m 5p 5p 8s 8s"))


def test_a_hand_holding_its_missing_suit_is_not_complete() -> None:
    c = counts("1m 2m 3m 4m 5m 6m 7m 8m 9m 5p 5p 5p 6p 6p")
    assert not is_complete(suit_keys(c), 0, 1)
    assert is_complete(suit_keys(c), 0, 2)


def test_waits_of_a_two_sided_wait() -> None:
    c = counts("1m 2m 2m 2m 2m 3m 4m 5m 6m 5s 5s 6s 7s")
    assert winning_tiles(suit_keys(c), 0, 1) == [tile("5s"), tile("8s")]


def test_waits_skip_the_missing_suit() -> None:
    c = counts("1m 2m 2m 2m 2m 3m 4m 5m 6m 5s 5s 6s 7s")
    assert winning_tiles(suit_keys(c), 0, 2) == []


def test_fifth_copy_rule_a_wait_on_ones_own_fourth_copy_is_not_ready() -> None:
    # The only wait is 9s, and the player's pung and concealed tile already hold all four.
    c = counts("1m 2m 3m 4m 5m 6m 7m 8m 9m 9s")
    assert ready_value(c, [(tile("9s"), 3)], 1) is None


def test_fifth_copy_rule_copies_visible_elsewhere_still_count() -> None:
    # Same wait, but the player holds only one 9s: ready even if the rest lie in discards.
    c = counts("1m 2m 3m 4m 5m 6m 7m 8m 9m 9s")
    assert ready_value(c, [(tile("5s"), 3)], 1) == 1


def test_ready_value_takes_the_best_wait() -> None:
    # 5s5s 7s8s waits on 6s or 9s; with 9p9p9p the hand is worth 1 either way.
    c = counts("1s 1s 1s 2s 3s 4s 5s 5s 7s 8s 9p 9p 9p")
    assert ready_value(c, [], 0) == 1
    # All bamboo: 6s gives pure suit (4); 9s gives pure suit + a root of 9s (8).
    c = counts("1s 1s 1s 2s 3s 4s 5s 5s 7s 8s 9s 9s 9s")
    assert ready_value(c, [], 0) == 8


def test_a_flower_pig_is_never_ready() -> None:
    c = counts("1m 2m 3m 4m 5m 6m 7m 8m 9m 9s")
    assert ready_value(c, [(tile("5p"), 3)], 0) is None


def test_fan_pure_suit_and_root_stack() -> None:
    r = best_reading(counts("1s 1s 1s 1s 2s 3s 4s 5s 5s 5s 6s 7s 8s 9s"), [])
    assert r.patterns == ("pure_suit", "root")
    assert (r.fan, r.value) == (3, 8)


def test_fan_seven_pairs_beats_the_standard_reading() -> None:
    r = best_reading(counts("1m 1m 2m 2m 3m 3m 4m 4m 5m 5m 6m 6m 7m 7m"), [])
    assert r.patterns == ("pure_suit", "seven_pairs")
    assert r.fan == 4 and r.value == 8


def test_fan_all_pungs_reading_is_preferred_over_sequences() -> None:
    # 111 222 333m can be read as three sequences or three pungs.
    r = best_reading(counts("1m 1m 1m 2m 2m 2m 3m 3m 3m 5p 5p 5p 7p 7p"), [])
    assert "all_pungs" in r.patterns


def test_golden_hook_counts_with_all_pungs() -> None:
    melds = [(tile("1m"), 3), (tile("5m"), 4), (tile("7p"), 3), (tile("9p"), 3)]
    r = best_reading(counts("3p 3p"), melds)
    assert r.patterns == ("all_pungs", "golden_hook", "root")


def test_root_from_a_pung_and_a_concealed_fourth() -> None:
    r = best_reading(counts("5m 6m 7m 1p 2p 3p 2s 3s 4s 8s 8s"), [(tile("5m"), 3)])
    assert r.patterns == ("root",)


def test_situational_patterns_are_added_and_capped_value() -> None:
    r = best_reading(
        counts("1s 1s 1s 1s 2s 3s 4s 5s 5s 5s 6s 7s 8s 9s"), [], ["kong_replacement", "last_tile"]
    )
    assert r.fan == 5 and r.value == 8


@settings(max_examples=500)
@given(hands14)
def test_waits_are_the_tiles_that_complete(ts: list[int]) -> None:
    c = _counts(ts[:13])
    waits = winning_tiles(suit_keys(c), 0, None)
    for t in range(27):
        if c[t] == 4:
            continue
        c[t] += 1
        assert (t in waits) == _brute_complete(c, 0)
        c[t] -= 1
