"""The auditable shuffle of RULES.md §1.1: a seed, its commitment, the wall and the direction."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from services.rules.tiles import ALL_TILES

DIRECTIONS = ("left", "opposite", "right")
SEED_BYTES = 32


class ByteStream:
    """``SHA-256(seed ‖ u64be(0)) ‖ SHA-256(seed ‖ u64be(1)) ‖ …`` read 8 bytes at a time."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        self._buffer = b""

    def _read8(self) -> int:
        while len(self._buffer) < 8:
            self._buffer += hashlib.sha256(self._seed + self._block.to_bytes(8, "big")).digest()
            self._block += 1
        chunk, self._buffer = self._buffer[:8], self._buffer[8:]
        return int.from_bytes(chunk, "big")

    def draw(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling."""
        limit = 2**64 - (2**64 % n)
        x = self._read8()
        while x >= limit:
            x = self._read8()
        return x % n


@dataclass(frozen=True, slots=True)
class Deal:
    """The outcome of a shuffle: four dealt hands, the live wall and the exchange direction."""

    hands: tuple[tuple[int, ...], ...]
    wall: tuple[int, ...]
    direction: str


def commitment(seed: bytes) -> str:
    """The public SHA-256 commitment of a hand's seed, as hex."""
    return hashlib.sha256(seed).hexdigest()


def shuffle(seed: bytes) -> Deal:
    """Derive the deal of a 32-byte seed exactly as RULES.md §1.1 says."""
    if len(seed) != SEED_BYTES:
        raise ValueError(f"a seed is {SEED_BYTES} bytes, got {len(seed)}")
    stream = ByteStream(seed)
    tiles = list(ALL_TILES)
    for i in range(len(tiles) - 1, 0, -1):
        j = stream.draw(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    direction = DIRECTIONS[stream.draw(3)]
    # Seat 0 takes 0-12, seats 1-3 the next thirteen each, then seat 0 position 52.
    dealt = [tuple(tiles[0:13]), tuple(tiles[13:26]), tuple(tiles[26:39]), tuple(tiles[39:52])]
    dealt[0] = (*dealt[0], tiles[52])
    return Deal(hands=tuple(dealt), wall=tuple(tiles[53:]), direction=direction)
