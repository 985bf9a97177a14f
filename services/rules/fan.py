"""Complete hands and fan (RULES.md §4): complete-hand checks, waits, fan and hand value, and
the ready value of §6 that is built on them.

Each suit's nine counts are packed into one base-5 *key* (``sum(count[r] * 5**r)``). Lookup
tables built once at import say, per key, whether the suit splits into groups (with at most
one pair), into pungs only, or into pairs only. A complete-hand check is then three set
lookups; a wait check adds one tile to one key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul

POW5: tuple[int, ...] = tuple(5**r for r in range(9))

_SEQUENCES = tuple(POW5[r] + POW5[r + 1] + POW5[r + 2] for r in range(7))
_PUNGS = tuple(3 * POW5[r] for r in range(9))
_PAIRS = tuple(2 * POW5[r] for r in range(9))


def _add_fits(key: int, add: int) -> bool:
    """Whether ``key + add`` keeps every count at most 4 (``add`` has digits 0..3)."""
    k, a = key, add
    while a:
        if k % 5 + a % 5 > 4:
            return False
        k //= 5
        a //= 5
    return True


def _closure(bases: set[int], groups: tuple[int, ...], rounds: int) -> set[int]:
    keys = set(bases)
    frontier = set(bases)
    for _ in range(rounds):
        frontier = {k + g for k in frontier for g in groups if _add_fits(k, g)}
        keys |= frontier
    return keys


def _build_tables() -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    with_pair = {0} | set(_PAIRS)
    groups = _SEQUENCES + _PUNGS
    # At most four groups per suit: a hand has four groups in all.
    standard = _closure(with_pair, groups, 4)
    pungs_only = _closure(with_pair, _PUNGS, 4)
    pairs = _closure({0}, _PAIRS, 7)
    return frozenset(standard), frozenset(pungs_only), frozenset(pairs)


# Keys that split into groups plus at most one pair; into pungs plus at most one pair; into pairs.
STANDARD_KEYS, PUNG_KEYS, PAIR_KEYS = _build_tables()


def suit_keys(counts: Sequence[int]) -> list[int]:
    """The three suit keys of 27 counts."""
    # Each key is the dot product of the suit's nine counts with POW5, done in C by map.
    return [
        sum(map(mul, counts[0:9], POW5)),
        sum(map(mul, counts[9:18], POW5)),
        sum(map(mul, counts[18:27], POW5)),
    ]


def is_standard(k0: int, k1: int, k2: int) -> bool:
    """Whether the concealed part splits into groups and exactly one pair.

    The caller guarantees a tile count of ``3n + 2``; then no suit can hold a count of
    ``3n + 1`` and stay in ``STANDARD_KEYS``, so exactly one suit carries the pair.
    """
    return k0 in STANDARD_KEYS and k1 in STANDARD_KEYS and k2 in STANDARD_KEYS


def is_seven_pairs(k0: int, k1: int, k2: int) -> bool:
    """Whether fourteen concealed tiles form seven pairs (a quad is two pairs)."""
    return k0 in PAIR_KEYS and k1 in PAIR_KEYS and k2 in PAIR_KEYS


def is_complete(keys: Sequence[int], declared: int, missing: int | None) -> bool:
    """Whether concealed tiles (as suit keys, winning tile included) plus ``declared`` groups win.

    The concealed part must hold ``14 - 3 * declared`` tiles; that is the caller's invariant.
    """
    k0, k1, k2 = keys
    if missing is not None and keys[missing]:
        return False
    # is_standard, else (with no declared group) is_seven_pairs: written out, as every
    # claim, self-draw and wait check comes here.
    return (k0 in STANDARD_KEYS and k1 in STANDARD_KEYS and k2 in STANDARD_KEYS) or (
        declared == 0 and k0 in PAIR_KEYS and k1 in PAIR_KEYS and k2 in PAIR_KEYS
    )


def _as_bytes(key: int) -> bytes:
    return bytes((key // POW5[r]) % 5 for r in range(9))


# The same tables keyed by a suit's nine counts as bytes, for callers holding plain counts.
_STANDARD_BYTES = frozenset(_as_bytes(k) for k in STANDARD_KEYS)
_PAIR_BYTES = frozenset(_as_bytes(k) for k in PAIR_KEYS)


def complete_from_counts(counts: Sequence[int], declared: int = 0) -> bool:
    """Complete-hand check from 27 counts (no missing suit), for callers without suit keys."""
    b = bytes(counts)
    s0, s1, s2 = b[0:9], b[9:18], b[18:27]
    if s0 in _STANDARD_BYTES and s1 in _STANDARD_BYTES and s2 in _STANDARD_BYTES:
        return True
    return declared == 0 and s0 in _PAIR_BYTES and s1 in _PAIR_BYTES and s2 in _PAIR_BYTES


def winning_tiles(keys: Sequence[int], declared: int, missing: int | None) -> list[int]:
    """Every tile type that would complete ``3n + 1`` concealed tiles (no fifth-copy rule)."""
    if missing is not None and keys[missing]:
        return []  # no tile of another suit empties the missing suit
    out = []
    work = list(keys)
    for s in range(3):
        if s == missing:
            continue
        # A tile of suit s leaves the other two keys as they are: unless both are in
        # STANDARD_KEYS (or, with no declared group, both in PAIR_KEYS), no tile of s completes.
        a, b = work[s - 1], work[s - 2]
        if not (
            (a in STANDARD_KEYS and b in STANDARD_KEYS)
            or (declared == 0 and a in PAIR_KEYS and b in PAIR_KEYS)
        ):
            continue
        before = work[s]
        for r in range(9):
            if (before // POW5[r]) % 5 == 4:
                continue
            work[s] = before + POW5[r]
            if is_complete(work, declared, missing):
                out.append(s * 9 + r)
        work[s] = before
    return out


# --- fan -------------------------------------------------------------------------------

FAN = {
    "all_pungs": 1,
    "pure_suit": 2,
    "seven_pairs": 2,
    "root": 1,
    "golden_hook": 1,
    "kong_replacement": 1,
    "robbing_kong": 1,
    "last_tile": 1,
}
FAN_CAP = 3


@dataclass(frozen=True, slots=True)
class Reading:
    """The best reading of a complete hand: uncapped fan, hand value and sorted patterns."""

    fan: int
    value: int
    patterns: tuple[str, ...]


def hand_value(fan: int) -> int:
    """``2 ** min(fan, 3)``."""
    return 1 << min(fan, FAN_CAP)


def best_reading(
    counts: Sequence[int],
    melds: Sequence[tuple[int, int]],
    situational: Sequence[str] = (),
) -> Reading:
    """Fan of a complete hand over every reading of it (RULES.md §4).

    ``counts`` are the concealed tiles with the winning tile; ``melds`` are the declared groups
    as ``(tile, size)`` with size 3 (pung) or 4 (kong). The hand must be complete.
    """
    k0, k1, k2 = suit_keys(counts)
    totals = list(counts)
    for t, size in melds:
        totals[t] += size
    common: list[str] = []
    common.extend(["root"] * totals[:27].count(4))
    suits_used = any(totals[0:9]) + any(totals[9:18]) + any(totals[18:27])
    if suits_used == 1:
        common.append("pure_suit")
    common.extend(situational)

    readings: list[list[str]] = []
    if is_standard(k0, k1, k2):
        standard = list(common)
        if k0 in PUNG_KEYS and k1 in PUNG_KEYS and k2 in PUNG_KEYS:
            standard.append("all_pungs")
        if len(melds) == 4:
            standard.append("golden_hook")
        readings.append(standard)
    if not melds and is_seven_pairs(k0, k1, k2):
        readings.append([*common, "seven_pairs"])
    if not readings:
        raise ValueError("best_reading needs a complete hand")
    best = readings[0] if len(readings) == 1 else max(readings, key=_fan_of)
    fan = _fan_of(best)
    return Reading(fan=fan, value=hand_value(fan), patterns=tuple(sorted(best)))


def _fan_of(patterns: list[str]) -> int:
    return sum(map(FAN.__getitem__, patterns))


def base_value(counts: Sequence[int], melds: Sequence[tuple[int, int]]) -> int:
    """A complete hand's base value for the exhaustion settlement: no situational fan."""
    return best_reading(counts, melds).value


def ready_value(
    counts: Sequence[int], melds: Sequence[tuple[int, int]], missing: int
) -> int | None:
    """The highest base value over a clean hand's waits, or None if it is not ready (§6).

    A wait on a tile of which the player's own concealed tiles and declared groups already
    hold all four copies does not count; copies visible elsewhere do not matter.
    """
    keys = suit_keys(counts)
    if keys[missing]:
        return None
    totals = list(counts)
    for t, size in melds:
        totals[t] += size
    best: int | None = None
    work = list(counts)
    for t in winning_tiles(keys, len(melds), missing):
        if totals[t] >= 4:
            continue
        work[t] += 1
        value = base_value(work, melds)
        work[t] -= 1
        if best is None or value > best:
            best = value
    return best
