"""Tiles, seats, wall (RULES.md §1): tiles and their notation, turn order, exchange directions.

A tile type is an int 0..26: ``suit * 9 + rank - 1`` with suits m=0, p=1, s=2. That order is
the canonical order, so sorting ints sorts tiles. A hand is kept as 27 counts.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "mps"
SUIT_NAMES = {"m": "characters", "p": "circles", "s": "bamboo"}
NUM_TYPES = 27
COPIES = 4
ALL_TILES: tuple[int, ...] = tuple(t for t in range(NUM_TYPES) for _ in range(COPIES))


class TileError(ValueError):
    """A tile or suit written wrongly."""


def tile(text: str) -> int:
    """Parse one tile such as ``5s``."""
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in SUITS:
        raise TileError(f"not a tile: {text!r} (expected 1m..9m, 1p..9p or 1s..9s)")
    return SUITS.index(text[1]) * 9 + int(text[0]) - 1


def name(t: int) -> str:
    """The notation of a tile type, e.g. ``5s``."""
    return f"{t % 9 + 1}{SUITS[t // 9]}"


def suit(text: str) -> int:
    """Parse a suit letter ``m``, ``p`` or ``s``."""
    if len(text) != 1 or text not in SUITS:
        raise TileError(f"not a suit: {text!r} (expected m, p or s)")
    return SUITS.index(text)


def parse_tiles(text: str) -> list[int]:
    """Parse space-separated tiles, keeping their order."""
    return [tile(part) for part in text.split()]


def format_tiles(tiles: Iterable[int]) -> str:
    """Write tiles space-separated, in the order given."""
    return " ".join(name(t) for t in tiles)


def counts_of(tiles: Iterable[int]) -> list[int]:
    """27 counts of a collection of tiles."""
    counts = [0] * NUM_TYPES
    for t in tiles:
        counts[t] += 1
    return counts


def tiles_of(counts: list[int]) -> list[int]:
    """The sorted tiles a count vector holds."""
    return [t for t in range(NUM_TYPES) for _ in range(counts[t])]


NAMES: tuple[str, ...] = tuple(name(t) for t in range(NUM_TYPES))
"""``NAMES[t]`` is the notation of tile type ``t``; a fast path for hot code."""
INDEX: dict[str, int] = {n: t for t, n in enumerate(NAMES)}
"""``INDEX["5s"]`` is the tile type of a notation; a fast path for already-validated text."""


# --- seats ---------------------------------------------------------------------------------

SEATS = 4


def seats_after(seat: int) -> tuple[int, int, int]:
    """The other seats in turn order counting from ``seat`` (``0→1→2→3→0``)."""
    return ((seat + 1) % 4, (seat + 2) % 4, (seat + 3) % 4)


OTHERS: tuple[tuple[int, int, int], ...] = tuple(seats_after(seat) for seat in range(SEATS))
"""``OTHERS[seat]`` is ``seats_after(seat)``, looked up on every discard."""

DIRECTION_STEP = {"right": 1, "opposite": 2, "left": 3}
"""Exchange directions as seat arithmetic: a seat passes to ``(seat + step) % 4``."""
