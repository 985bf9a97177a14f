"""Tile efficiency: shanten (tiles away from ready) and ukeire (tiles that bring a hand closer).

A suit's nine counts are one base-5 key, as in ``services.rules.fan``. Each key gets a
small *value vector*: ``V[h][b]`` is the best ``2·melds + taatsu + h`` using at most ``b``
blocks (melds and *taatsu*: a pair, two neighbours or a gapped pair) with ``h`` pair heads.
It comes from the vectors of smaller keys, by trying each use of the suit's lowest tile.
The standard shanten of a hand needing ``g`` more groups is then ``2g − max_h Vab[h][g]``,
where ``Vab`` is the (max, +) product of its two suits' vectors: the textbook
``8 − 2·melds − taatsu − head`` with its cap of four blocks.

Distinct value vectors are few (hundreds, against hundreds of thousands of keys), so each gets
a small id and the product of two ids is cached: after warm-up a hand's shanten is a handful
of dict lookups. Everything is filled lazily and kept for the life of the process.

The fast form is exact for *full* hands (no tile of the missing suit held), but for the
fifth-copy rule: holding four of a tile it may count a wait on a fifth (which no ukeire
brings). Hands with gaps (missing-suit tiles still to shed, or a suit being considered for the
missing one) go through ``tiles_needed``, built on the per-suit ``splits`` (melds, taatsu,
head), which also counts blocks that must be built from nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.rules import POW5

NEG = -99
"""An impossible entry of a value vector (e.g. a pair head in a suit without a pair)."""
CAP = 4
"""A hand never uses more than four blocks."""

Split = tuple[int, int, int]
"""One useful split of a suit: ``(melds, taatsu, heads)``."""

_SPLITS: dict[int, tuple[Split, ...]] = {0: ((0, 0, 0),)}
_VECTOR_IDS: dict[tuple[int, ...], int] = {}
_VECTORS: list[tuple[int, ...]] = []
_KEY_VID: dict[int, int] = {}
_PRODUCT: dict[int, tuple[int, ...]] = {}
_PAIRS: dict[int, int] = {}


def digit(key: int, rank: int) -> int:
    """How many tiles of ``rank`` (0..8) a suit key holds."""
    return (key // POW5[rank]) % 5


def lowest_tile(key: int) -> tuple[int, int, int, int]:
    """A non-empty suit's lowest held rank and how many it holds of that rank and the next
    two (0 past the nine): the tile every split starts from, and its sequence neighbours."""
    r = 0
    while digit(key, r) == 0:
        r += 1
    return r, digit(key, r), digit(key, r + 1) if r < 8 else 0, digit(key, r + 2) if r < 7 else 0


def _pareto(splits: list[Split]) -> tuple[Split, ...]:
    """Keep the splits not beaten by another with as many melds and blocks and the same head."""
    best: list[Split] = []
    for m, t, h in sorted(set(splits), key=lambda s: (-s[0], -s[1])):
        if not any(bm >= m and bm + bt >= m + t and bh == h for bm, bt, bh in best):
            best.append((m, t, h))
    return tuple(best)


def splits(key: int) -> tuple[Split, ...]:
    """The useful splits of one suit, taatsu capped so that melds + taatsu ≤ 4."""
    got = _SPLITS.get(key)
    if got is not None:
        return got
    r, c, c1, c2 = lowest_tile(key)
    p, p1, p2 = POW5[r], POW5[r + 1] if r < 8 else 0, POW5[r + 2] if r < 7 else 0
    # (rest of the key, melds, taatsu, heads) for each way of using the lowest tile
    moves = [(key - p, 0, 0, 0)]  # the tile stays alone
    if c >= 3:
        moves.append((key - 3 * p, 1, 0, 0))
    if c1 and c2:
        moves.append((key - p - p1 - p2, 1, 0, 0))
    if c >= 2:
        moves.append((key - 2 * p, 0, 0, 1))
        moves.append((key - 2 * p, 0, 1, 0))
    if c1:
        moves.append((key - p - p1, 0, 1, 0))
    if c2:
        moves.append((key - p - p2, 0, 1, 0))
    out: list[Split] = []
    for rest, dm, dt, dh in moves:
        for m, t, h in splits(rest):
            if h + dh <= 1:
                m2 = m + dm
                out.append((m2, min(t + dt, CAP - m2) if m2 <= CAP else 0, h + dh))
    result = _pareto(out)
    _SPLITS[key] = result
    return result


def _vector(key: int) -> tuple[int, ...]:
    """``V[h * 5 + b]``: the best ``2·melds + taatsu + h`` with at most ``b`` blocks.

    The lowest tile of the suit is alone, or starts a pung, a sequence, the pair head, or a
    taatsu; the best over those uses of it, each added to the rest's vector, is the answer.
    """
    if key == 0:
        return _EMPTY
    r, c, c1, c2 = lowest_tile(key)
    p = POW5[r]
    v = list(_VECTORS[vector_id(key - p)])  # the tile stays alone
    block_moves: list[tuple[int, int]] = []  # (rest of the key, value of the block)
    if c >= 3:
        block_moves.append((key - 3 * p, 2))
    if c1 and c2:
        block_moves.append((key - p - POW5[r + 1] - POW5[r + 2], 2))
    if c >= 2:
        block_moves.append((key - 2 * p, 1))
        rest = _VECTORS[vector_id(key - 2 * p)]
        for b in range(5):  # the pair head: one per hand, worth 1, not a block
            if rest[b] > NEG and rest[b] + 1 > v[5 + b]:
                v[5 + b] = rest[b] + 1
    if c1:
        block_moves.append((key - p - POW5[r + 1], 1))
    if c2:
        block_moves.append((key - p - POW5[r + 2], 1))
    for rest_key, value in block_moves:
        rest = _VECTORS[vector_id(rest_key)]
        for i in (1, 2, 3, 4, 6, 7, 8, 9):  # b >= 1, both heads
            x = rest[i - 1]
            if x > NEG and x + value > v[i]:
                v[i] = x + value
    return tuple(v)


_EMPTY = (0, 0, 0, 0, 0, NEG, NEG, NEG, NEG, NEG)


def vector_id(key: int) -> int:
    """The id of a suit key's value vector (interned: many keys share one)."""
    vid = _KEY_VID.get(key)
    if vid is None:
        vec = _EMPTY if key == 0 else _vector(key)
        vid = _VECTOR_IDS.get(vec)
        if vid is None:
            vid = len(_VECTORS)
            _VECTORS.append(vec)
            _VECTOR_IDS[vec] = vid
        _KEY_VID[key] = vid
    return vid


def _product(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The (max, +) product of two value vectors: one head in all, blocks added."""
    v = [NEG] * 10
    for ha, hb in ((0, 0), (1, 0), (0, 1)):
        h = ha + hb
        for ba in range(5):
            x = a[ha * 5 + ba]
            if x <= NEG:
                continue
            for bb in range(5 - ba):
                y = b[hb * 5 + bb]
                if y > NEG and x + y > v[h * 5 + ba + bb]:
                    v[h * 5 + ba + bb] = x + y
    for h in (0, 1):
        for n in range(1, 5):
            v[h * 5 + n] = max(v[h * 5 + n], v[h * 5 + n - 1])
    return tuple(v)


def _shanten_row(v: tuple[int, ...]) -> tuple[int, ...]:
    """Standard shanten for g = 0..4 groups still needed, from a whole hand's vector."""
    return tuple(2 * g - max(v[g], v[5 + g]) for g in range(5))


def standard_shanten(key_a: int, key_b: int, groups: int) -> int:
    """Standard-form shanten of a full hand held in two suits, needing ``groups`` more groups.

    ``-1`` is complete, ``0`` ready. Exact for full hands (see the module note).
    """
    va = _KEY_VID.get(key_a)
    if va is None:
        va = vector_id(key_a)
    vb = _KEY_VID.get(key_b)
    if vb is None:
        vb = vector_id(key_b)
    pair = (va << 16) | vb
    row = _PRODUCT.get(pair)
    if row is None:
        row = _shanten_row(_product(_VECTORS[va], _VECTORS[vb]))
        _PRODUCT[pair] = row
    return row[groups]


def pairs(key: int) -> int:
    """Pairs in a suit for seven pairs: four of a kind counts as two."""
    n = _PAIRS.get(key)
    if n is None:
        n = sum(digit(key, r) // 2 for r in range(9))
        _PAIRS[key] = n
    return n


def shanten(key_a: int, key_b: int, groups: int) -> int:
    """Shanten of a full hand in two suits: the standard form, or seven pairs when undeclared."""
    s = standard_shanten(key_a, key_b, groups)
    if groups == 4:
        s7 = 6 - pairs(key_a) - pairs(key_b)
        if s7 < s:
            return s7
    return s


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
    vb = _KEY_VID.get(key_b)
    if vb is None:
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
    vec = _VECTORS[vector_id(key)]
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
    """Ukeire two steps deep for a full hand of ``3·groups + 1`` tiles: over every unseen
    tile that lowers the shanten, its copies times the best ukeire one discard then keeps.

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
            u = best_after_draw(ka, kb, suit_a, suit_b, groups, s - 1, unseen)
            if u >= 0:
                total += unseen[t] * u
    return total
