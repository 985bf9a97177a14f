"""Tile efficiency: ukeire (tiles that bring a hand closer) and the ranking of discards.

Shanten (tiles away from ready) is the rules engine's (``services.rules.readiness``: value
vectors per suit key, their (max, +) products cached); this module builds on it.

The fast form is exact for *full* hands (no tile of the missing suit held), but for the
fifth-copy rule: holding four of a tile it may count a wait on a fifth (which no ukeire
brings). Hands with gaps (missing-suit tiles still to shed, or a suit being considered for the
missing one) go through ``tiles_needed``, built on the per-suit ``splits`` (melds, taatsu,
head), which also counts blocks that must be built from nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.rules import (
    POW5,
    Split,
    digit,
    pairs,
    shanten,
    splits,
    standard_shanten,
    value_vector,
    vector_id,
)

# --- hands with gaps --------------------------------------------------------------------


def _count(key: int) -> int:
    n = 0
    while key:
        n += key % 5
        key //= 5
    return n


def tiles_needed(keys: Sequence[int], groups: int, seven: bool) -> int:
    """The fewest tiles to add to these suits for a complete hand (``shanten + 1``).

    Unlike ``shanten`` this holds for hands with gaps: a block that has no spare tile to grow
    from costs one tile more. ``seven`` allows seven pairs (no declared groups).
    """
    n = sum(_count(k) for k in keys)
    combos: list[Split] = [(0, 0, 0)]
    for k in keys:
        combos = [
            (m + m2, t + t2, h + h2)
            for m, t, h in combos
            for m2, t2, h2 in splits(k)
            if h + h2 <= 1 and m + m2 <= groups
        ]
    best = 99
    for m, t, h in combos:
        used = min(t, groups - m)
        missing_blocks = groups - m - used + (1 - h)
        spare = n - 3 * m - 2 * used - 2 * h
        cost = 2 * (groups - m - used) + used + (1 - h) + max(0, missing_blocks - spare)
        best = min(best, cost)
    if seven and groups == 4:
        p = sum(pairs(k) for k in keys)
        singles = sum(1 for k in keys for r in range(9) if digit(k, r) % 2)
        need = 7 - min(p, 7)
        best = min(best, min(singles, need) + 2 * max(0, need - singles))
    return best


# --- whole hands in play ----------------------------------------------------------------

_IMPROVERS: dict[int, tuple[int, ...]] = {}


def improving_ranks(key_a: int, key_b: int, groups: int) -> tuple[int, ...]:
    """Ranks of suit ``a`` whose draw lowers the standard shanten of the full hand (a, b)."""
    vb = vector_id(key_b)
    cache_key = ((key_a << 16) | vb) << 3 | groups
    got = _IMPROVERS.get(cache_key)
    if got is None:
        now = standard_shanten(key_a, key_b, groups)
        got = tuple(
            r
            for r in range(9)
            if digit(key_a, r) < 4 and standard_shanten(key_a + POW5[r], key_b, groups) < now
        )
        _IMPROVERS[cache_key] = got
    return got


_ODD: dict[int, tuple[int, ...]] = {}


def odd_ranks(key: int) -> tuple[int, ...]:
    """Ranks held once or three times: the tiles that would add a pair for seven pairs."""
    got = _ODD.get(key)
    if got is None:
        got = tuple(r for r in range(9) if digit(key, r) % 2)
        _ODD[key] = got
    return got


def ukeire(
    key_a: int, key_b: int, suit_a: int, suit_b: int, groups: int, unseen: Sequence[float]
) -> float:
    """Tiles to come that lower the shanten of a full hand held in suits ``suit_a``/``suit_b``.

    ``unseen[t]`` is how many copies of ``t`` the bot counts on (see ``normal.Efficiency``).
    """
    s_std = standard_shanten(key_a, key_b, groups)
    s7 = 6 - pairs(key_a) - pairs(key_b) if groups == 4 else 99
    total = 0.0
    base_a, base_b = suit_a * 9, suit_b * 9
    ranks_a: tuple[int, ...] = ()
    ranks_b: tuple[int, ...] = ()
    if s_std <= s7:
        ranks_a = improving_ranks(key_a, key_b, groups)
        ranks_b = improving_ranks(key_b, key_a, groups)
        for r in ranks_a:
            total += unseen[base_a + r]
        for r in ranks_b:
            total += unseen[base_b + r]
    if s7 <= s_std:  # seven pairs: a tile that pairs a single (or a third copy) helps
        for r in odd_ranks(key_a):
            if r not in ranks_a:
                total += unseen[base_a + r]
        for r in odd_ranks(key_b):
            if r not in ranks_b:
                total += unseen[base_b + r]
    return total


def standard_ukeire(
    key_a: int, key_b: int, suit_a: int, suit_b: int, groups: int, unseen: Sequence[float]
) -> float:
    """Tiles to come that lower the *standard-form* shanten (seven pairs left aside)."""
    total = 0.0
    for r in improving_ranks(key_a, key_b, groups):
        total += unseen[suit_a * 9 + r]
    for r in improving_ranks(key_b, key_a, groups):
        total += unseen[suit_b * 9 + r]
    return total


def rank_discards(
    key_a: int,
    key_b: int,
    suit_a: int,
    suit_b: int,
    groups: int,
    tiles: Sequence[int],
    unseen: Sequence[float],
) -> list[tuple[int, float, int]]:
    """``(shanten, ukeire, tile)`` for each of ``tiles`` whose discard leaves the lowest
    shanten, from a full hand of ``3·groups + 2`` tiles held in the two suits."""
    best = 99
    scored: list[tuple[int, int, int, int]] = []
    for t in tiles:
        p = POW5[t % 9]
        if t // 9 == suit_a:
            ka, kb = key_a - p, key_b
        else:
            ka, kb = key_a, key_b - p
        s = shanten(ka, kb, groups)
        if s <= best:
            best = s
            scored.append((s, t, ka, kb))
    return [
        (s, ukeire(ka, kb, suit_a, suit_b, groups, unseen), t)
        for s, t, ka, kb in scored
        if s == best
    ]


def suit_quality(key: int) -> int:
    """How much one suit offers on its own: its best ``2·melds + taatsu + head`` (≤ 4 blocks)."""
    vec = value_vector(key)
    return max(vec[4], vec[9])


def best_after_draw(
    key_a: int,
    key_b: int,
    suit_a: int,
    suit_b: int,
    groups: int,
    target: int,
    unseen: Sequence[float],
) -> float:
    """The best ukeire reachable by one discard from a full hand of ``3·groups + 2`` tiles
    that reaches shanten ``target``, or -1 when no discard does."""
    best = -1.0
    for suit, key in ((suit_a, key_a), (suit_b, key_b)):
        for r in range(9):
            if digit(key, r):
                if suit == suit_a:
                    ka, kb = key_a - POW5[r], key_b
                else:
                    ka, kb = key_a, key_b - POW5[r]
                if shanten(ka, kb, groups) <= target:
                    u = ukeire(ka, kb, suit_a, suit_b, groups, unseen)
                    if u > best:
                        best = u
    return best


def two_step(
    key_a: int, key_b: int, suit_a: int, suit_b: int, groups: int, unseen: Sequence[float]
) -> float:
    """Ukeire two steps deep for a hand of ``3·groups + 1`` tiles: over every unseen tile
    that lowers the shanten, its copies times the best ukeire one discard then keeps.

    Ready hands (nothing deeper to look at) score their winning tiles, scaled to compare
    with the deeper sums.
    """
    s = shanten(key_a, key_b, groups)
    if s <= 0:
        return 100 * ukeire(key_a, key_b, suit_a, suit_b, groups, unseen)
    total = 0.0
    for suit, key in ((suit_a, key_a), (suit_b, key_b)):
        for r in range(9):
            t = suit * 9 + r
            if not unseen[t] or digit(key, r) == 4:
                continue
            if suit == suit_a:
                ka, kb = key_a + POW5[r], key_b
            else:
                ka, kb = key_a, key_b + POW5[r]
            # A full hand's shanten is the best its discards reach (a complete one reads -1
            # where they reach 0, both within the target ≥ 0): one lookup tells a draw that
            # cannot lower the shanten, which most draws are, without trying its discards.
            if shanten(ka, kb, groups) > s - 1:
                continue
            u = best_after_draw(ka, kb, suit_a, suit_b, groups, s - 1, unseen)
            if u >= 0:
                total += unseen[t] * u
    return total
