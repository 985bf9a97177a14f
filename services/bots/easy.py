"""The easy bot: legal and simple.

It passes the first three tiles of its shortest suit, declares the suit it holds fewest of,
wins whenever it can, claims every pung and kong offered, and discards the tile with the
fewest neighbours. No counting, no reading of the table.
"""

from __future__ import annotations

from schemas import commands as cmd
from services.bots.bot import (
    Bot,
    Choices,
    claim_kong,
    discard,
    hu,
    kong,
    passing,
    pung,
    suit_sizes,
    suit_tiles,
)
from services.bots.botview import BotView
from services.rules import connectedness


class EasyBot(Bot):
    """Legal and simple (see the module note)."""

    strength = "easy"

    def exchange(self, view: BotView) -> list[int]:
        sizes = suit_sizes(view.hand)
        suit = min((s for s in range(3) if sizes[s] >= 3), key=lambda s: (sizes[s], s))
        return suit_tiles(view.hand, suit)[:3]

    def missing_suit(self, view: BotView) -> int:
        sizes = suit_sizes(view.hand)
        return min(range(3), key=lambda s: (sizes[s], s))

    def respond(self, view: BotView, options: Choices) -> cmd.HandCommand:
        if options.hu:
            return hu(view)
        if options.claim_kong:
            return claim_kong(view)
        if options.pung:
            return pung(view)
        return passing(view)

    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        if options.hu:
            return hu(view)
        if options.kongs:
            return kong(view, options.kongs[0])
        hand = view.hand
        return discard(view, min(options.discards, key=lambda t: (connectedness(hand, t), -t)))
