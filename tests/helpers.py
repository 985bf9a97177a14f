"""Small builders for tests."""

from __future__ import annotations

from services.bots import Bot, make_bot
from services.bots.expert import ExpertBot
from services.rules.tiles import counts_of, parse_tiles


def counts(text: str) -> list[int]:
    """27 counts of tiles written in RULES.md notation."""
    return counts_of(parse_tiles(text))


def quick_bot(strength: str) -> Bot:
    """A bot of the strength, the expert with few worlds: property tests play hundreds of
    hands, and the expert's worlds change how well it plays, not what it may do."""
    return ExpertBot(worlds=2) if strength == "expert" else make_bot(strength)
