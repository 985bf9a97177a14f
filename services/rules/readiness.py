"""How far a hand is from ready (RULES.md §4: complete hands; §6 asks who is ready): shanten.

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

The figure is exact for *full* hands (no tile of the missing suit held), but for the
fifth-copy rule: holding four of a tile it may count a wait on a fifth. The waits help
(``services.rules.waits``) and the computer players (``services.bots.efficiency``, which
adds ukeire and hands with gaps) both read it from here.
"""

from __future__ import annotations

from services.rules.fan import POW5

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


def value_vector(key: int) -> tuple[int, ...]:
    """A suit key's value vector (``V[h * 5 + b]``, see the module docstring)."""
    return _VECTORS[vector_id(key)]
