"""RULES.md §1.1: the auditable shuffle."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.rules.shuffle import ByteStream, commitment, shuffle
from services.rules.tiles import ALL_TILES, format_tiles


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = bytes(range(32))
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()


def test_draw_reads_big_endian_words_of_the_hash_stream() -> None:
    seed = b"\x01" * 32
    first = int.from_bytes(hashlib.sha256(seed + (0).to_bytes(8, "big")).digest()[:8], "big")
    assert ByteStream(seed).draw(2**40) == first % 2**40


def test_draw_crosses_into_the_next_hash_block() -> None:
    seed = b"\x02" * 32
    block1 = hashlib.sha256(seed + (1).to_bytes(8, "big")).digest()
    stream = ByteStream(seed)
    for _ in range(4):  # one SHA-256 block holds four 8-byte words
        stream.draw(7)
    assert stream.draw(1000) == int.from_bytes(block1[:8], "big") % 1000


@given(st.binary(min_size=32, max_size=32))
def test_a_deal_uses_every_tile_once(seed: bytes) -> None:
    deal = shuffle(seed)
    assert [len(h) for h in deal.hands] == [14, 13, 13, 13]
    assert len(deal.wall) == 55
    dealt = [t for h in deal.hands for t in h] + list(deal.wall)
    assert Counter(dealt) == Counter(ALL_TILES)
    assert deal.direction in ("left", "opposite", "right")


def test_the_same_seed_deals_the_same_and_another_seed_deals_otherwise() -> None:
    seed = bytes(32)
    # A fresh copy of the seed, so the deal depends on its value, not on the object.
    assert shuffle(seed) == shuffle(bytes(bytearray(seed)))
    assert shuffle(seed) != shuffle(bytes(31) + b"\x01")


def test_shuffle_refuses_a_short_seed() -> None:
    with pytest.raises(ValueError):
        shuffle(b"short")


def test_shuffle_matches_the_independent_generator(shared: Path) -> None:
    """The shared random scenarios name the seed their deal came from."""
    checked = 0
    for path in sorted((shared / "conformance" / "random").glob("public-0*.json")):
        data = json.loads(path.read_text())
        m = re.search(r"shuffle seed ([0-9a-f]{64})", data["description"])
        if not m:
            continue
        deal = shuffle(bytes.fromhex(m.group(1)))
        assert [format_tiles(h) for h in deal.hands] == data["deal"], path.name
        assert format_tiles(deal.wall) == data["wall"], path.name
        assert deal.direction == data["exchange"]["direction"], path.name
        checked += 1
    assert checked >= 100
