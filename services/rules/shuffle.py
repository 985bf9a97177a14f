"""The auditable shuffle of RULES.md §1.1: a seed, its commitment, the wall and the direction."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from operator import mod

from services.rules.tiles import ALL_TILES

DIRECTIONS = ("left", "opposite", "right")
SEED_BYTES = 32


class ByteStream:
    """``SHA-256(seed ‖ u64be(0)) ‖ SHA-256(seed ‖ u64be(1)) ‖ …`` read 8 bytes at a time.

    A block is 32 bytes, exactly four big-endian words, so the stream is kept as a list of
    words unpacked a block (or a batch of blocks) at a time.
    """

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        self._words: list[int] = []
        self._next = 0  # index of the next unread word in _words

    def _fill(self, blocks: int = 1) -> None:
        """Replace the (fully read) words with those of the next ``blocks`` blocks."""
        seeded = hashlib.sha256(self._seed)  # each block's hash continues from the seed's
        digests = []
        for block in range(self._block, self._block + blocks):
            h = seeded.copy()
            h.update(block.to_bytes(8, "big"))
            digests.append(h.digest())
        self._block += blocks
        self._words = list(struct.unpack(f">{4 * blocks}Q", b"".join(digests)))
        self._next = 0

    def _read8(self) -> int:
        if self._next == len(self._words):
            self._fill()
        word = self._words[self._next]
        self._next += 1
        return word

    def draw(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling."""
        limit = _limit(n)
        x = self._read8()
        while x >= limit:
            x = self._read8()
        return x % n

    def draw_each(self, ns: range) -> list[int]:
        """``[draw(n) for n in ns]``: the shuffle's 107 draws in a row, at C speed.

        Each draw most likely takes one word: for n up to 256 a word is rejected only from
        ``2**64 - 256`` up, odds below 2**-56. So the words for all the draws are hashed in
        one batch and, when none is that high, reduced with ``map``. Otherwise the draws are
        made one by one, from the same words.
        """
        count = len(ns)
        if self._next == len(self._words):
            self._fill(-(-count // 4))
        start = self._next
        words = self._words[start : start + count]
        if (
            count
            and len(words) == count
            and 0 < ns.start <= _SMALL
            and 0 < ns[-1] <= _SMALL  # so every n in ns, a range, is in (0, 256]
            and max(words) < 2**64 - _SMALL
        ):
            self._next = start + count
            return list(map(mod, words, ns))
        return [self.draw(n) for n in ns]


_SMALL = 256
"""For n up to this, ``draw(n)`` rejects no word below ``2**64 - _SMALL``."""


def _limit(n: int) -> int:
    """``draw(n)`` rejects words from here up: the last, incomplete run of ``n`` values."""
    return 2**64 - (2**64 % n)


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
    # Fisher-Yates from the top: position i swaps with a draw in [0, i], i = 107 … 1.
    top = len(tiles) - 1
    for i, j in zip(range(top, 0, -1), stream.draw_each(range(top + 1, 1, -1)), strict=True):
        tiles[i], tiles[j] = tiles[j], tiles[i]
    direction = DIRECTIONS[stream.draw(3)]
    # Seat 0 takes 0-12, seats 1-3 the next thirteen each, then seat 0 position 52.
    dealt = [tuple(tiles[0:13]), tuple(tiles[13:26]), tuple(tiles[26:39]), tuple(tiles[39:52])]
    dealt[0] = (*dealt[0], tiles[52])
    return Deal(hands=tuple(dealt), wall=tuple(tiles[53:]), direction=direction)
