"""Small builders for tests."""

from __future__ import annotations

from services.rules.tiles import counts_of, parse_tiles


def counts(text: str) -> list[int]:
    """27 counts of tiles written in RULES.md notation."""
    return counts_of(parse_tiles(text))
