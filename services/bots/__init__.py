"""Computer players: three strengths that see only their own seat's view.

``make_bot("easy" | "normal" | "strong")`` gives a ``Bot``; ``bot.act(seat_view)`` (or
``bot.decide(bot_view)``) returns an ordinary command. See docs/bots.md.
"""

from __future__ import annotations

from services.bots.bot import Bot
from services.bots.botview import BotView, from_seat_view
from services.bots.easy import EasyBot
from services.bots.expert import ExpertBot
from services.bots.normal import NormalBot
from services.bots.strong import StrongBot
from services.bots.tracker import SeatTracker

STRENGTHS: dict[str, type[Bot]] = {
    "easy": EasyBot,
    "normal": NormalBot,
    "strong": StrongBot,
    "expert": ExpertBot,
}


def make_bot(strength: str) -> Bot:
    """A bot of the named strength."""
    try:
        return STRENGTHS[strength]()
    except KeyError:
        raise ValueError(
            f"unknown bot strength {strength!r} (choose from {', '.join(STRENGTHS)})"
        ) from None


def parse_strengths(text: str) -> list[str]:
    """``"normal"`` → four normal seats; ``"easy,normal,strong,normal"`` → one per seat."""
    names = [part.strip() for part in text.split(",")]
    if len(names) == 1:
        names *= 4
    if len(names) != 4:
        raise ValueError(f"give one strength or four, comma-separated; got {text!r}")
    for n in names:
        if n not in STRENGTHS:
            raise ValueError(f"unknown bot strength {n!r} (choose from {', '.join(STRENGTHS)})")
    return names


__all__ = [
    "STRENGTHS",
    "Bot",
    "BotView",
    "SeatTracker",
    "from_seat_view",
    "make_bot",
    "parse_strengths",
]
