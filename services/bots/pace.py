"""Pace: how long a bot seems to think before its command is sent.

A bot's decision is pure and instant; pace is a policy the *runner* applies (sleeping before
it sends the command), so simulations run at full speed and practice tables feel human.
Opening decisions take a little longer, answering a window a little less.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from services.bots.botview import BotView

_KIND_FACTOR = {"opening": 1.5, "turn": 1.0, "window": 0.6}


@dataclass(frozen=True, slots=True)
class Pace:
    """A range of seconds to wait before a turn decision; other decisions scale it."""

    name: str
    low_s: float
    high_s: float

    def delay(self, view: BotView, rng: random.Random) -> float:
        """Seconds to wait before sending the decision for ``view`` (0 for instant)."""
        if self.high_s <= 0:
            return 0.0
        return rng.uniform(self.low_s, self.high_s) * _KIND_FACTOR[decision_kind(view)]


def decision_kind(view: BotView) -> str:
    """``opening`` (exchange, missing suit), ``window`` (a claim) or ``turn``."""
    if view.phase in ("exchange", "missing"):
        return "opening"
    return "window" if view.window is not None else "turn"


PACES: dict[str, Pace] = {
    "instant": Pace("instant", 0.0, 0.0),
    "fast": Pace("fast", 0.3, 0.9),
    "normal": Pace("normal", 0.8, 2.0),
    "slow": Pace("slow", 1.5, 4.0),
}
"""Instant for simulations and the ladder; fast, normal and slow for practice."""


def pace(name: str) -> Pace:
    """The pace of that name."""
    try:
        return PACES[name]
    except KeyError:
        raise ValueError(f"unknown pace {name!r} (choose from {', '.join(PACES)})") from None
